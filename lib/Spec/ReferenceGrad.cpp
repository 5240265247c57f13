//===- ReferenceGrad.cpp - The f64 oracle of attn.sdpa_grad ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/ReferenceGrad.h"

#include "ReferenceShared.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::attn::exec;

static const double kInf = std::numeric_limits<double>::infinity();
static const double kNaN = std::numeric_limits<double>::quiet_NaN();

using ref::causalAdmits;
using ref::scoreNoise;
using ref::toDoubles;

/// The backward's own noise streams (the lse, Di, dP), apart from the
/// scores' and the biases' for the same seed.
static double backwardNoise(uint64_t seed, int stream, int64_t b, int64_t h,
                            int64_t i, int64_t j) {
  return ref::scoreNoise(ref::trialSeed(seed, (1 << 30) + 1 + stream), b, h, i,
                         j);
}

void mlir::attn::exec::referenceSdpaGrad(
    const SdpaProblem &p, const HostTensor &q, const HostTensor &k,
    const HostTensor &v, const HostTensor *mask, const HostTensor &dOut,
    GradReference &ref, std::optional<uint64_t> noiseSeed,
    const HostTensor *givenOut) {
  auto &[dq, dk, dv] = ref.grads;
  dq.assign(static_cast<size_t>(q.numel()), 0.0);
  dk.assign(static_cast<size_t>(k.numel()), 0.0);
  dv.assign(static_cast<size_t>(v.numel()), 0.0);
  bool dOutOk = dOut.shape == std::vector<int64_t>{p.b, p.hq, p.lq, p.dv};
  if (givenOut &&
      givenOut->shape != std::vector<int64_t>{p.b, p.hq, p.lq, p.dv})
    dOutOk = false;
  if (llvm::Error err = validateOperands(p, q, k, v, mask)) {
    llvm::consumeError(std::move(err));
    dOutOk = false;
  }
  if (!dOutOk) {
    for (std::vector<double> *g : {&dq, &dk, &dv})
      std::fill(g->begin(), g->end(), kNaN);
    return;
  }

  std::vector<double> qd = toDoubles(q), kd = toDoubles(k), vd = toDoubles(v);
  std::vector<double> dod = toDoubles(dOut), md;
  if (p.mask != MaskKind::None)
    md = toDoubles(*mask);
  const int64_t group = p.hq / p.hkv;
  const double noiseScale = std::ldexp(1.0, -24) *
                            std::sqrt(static_cast<double>(p.d)) *
                            std::fabs(p.scale);
  const double dvNoiseScale =
      std::ldexp(1.0, -24) * std::sqrt(static_cast<double>(p.dv));
  std::vector<double> scores(p.lk), probs(p.lk), out(p.dv), scoreNorm(p.lk);
  std::vector<char> visible(p.lk);

  for (int64_t b = 0; b < p.b; ++b)
    for (int64_t h = 0; h < p.hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < p.lq; ++i) {
        const int64_t row = (b * p.hq + h) * p.lq + i;
        const double *qRow = &qd[row * p.d];
        const double *doRow = &dod[row * p.dv];
        // The forward, as referenceSdpa computes it.
        double rowMax = -kInf;
        bool anyVisible = false, sawNaN = false;
        for (int64_t j = 0; j < p.lk; ++j) {
          const double *kRow = &kd[((b * p.hkv + hk) * p.lk + j) * p.d];
          double dot = 0, normSq = 0;
          for (int64_t x = 0; x < p.d; ++x) {
            dot += qRow[x] * kRow[x];
            normSq += qRow[x] * kRow[x] * qRow[x] * kRow[x];
          }
          double s = p.scale * dot;
          scoreNorm[j] = std::sqrt(normSq);
          if (noiseSeed && std::isfinite(s))
            s += noiseScale * std::sqrt(normSq) *
                 scoreNoise(*noiseSeed, b, h, i, j);
          bool allowed = causalAdmits(p.causal, i, j, p.lq, p.lk);
          if (p.mask != MaskKind::None) {
            const std::vector<int64_t> &ms = p.maskShape;
            int64_t mIndex =
                (((ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : h)) * ms[2] +
                 (ms[2] == 1 ? 0 : i)) *
                    ms[3] +
                (ms[3] == 1 ? 0 : j);
            if (p.mask == MaskKind::Float) {
              s += md[mIndex];
              if (noiseSeed && std::isfinite(s))
                s += ref::biasNoise(*noiseSeed, md[mIndex], b, h, i, j);
            } else if (md[mIndex] == 0) {
              allowed = false;
            }
          }
          scores[j] = s;
          visible[j] = allowed && s != -kInf;
          if (!visible[j])
            continue;
          anyVisible = true;
          if (std::isnan(s))
            sawNaN = true;
          else
            rowMax = std::max(rowMax, s);
        }
        if (!anyVisible)
          continue; // No gradient flows through an empty row.
        if (sawNaN)
          rowMax = kNaN;
        double sum = 0;
        for (int64_t j = 0; j < p.lk; ++j) {
          probs[j] = visible[j] ? std::exp(scores[j] - rowMax) : 0.0;
          sum += probs[j];
        }
        // With noise, the rounding of the lse that an f32 backward takes from
        // its forward and recomputes P from: every P of the row scaled by
        // exp(2^-24 |lse| xi), |lse| the natural-log sum's magnitude.
        double lseScale = 1;
        if (noiseSeed && std::isfinite(rowMax)) {
          double lse = rowMax + std::log(sum);
          lseScale = std::exp(std::ldexp(std::fabs(lse), -24) *
                              backwardNoise(*noiseSeed, 0, b, h, i, 0));
        }
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t j = 0; j < p.lk; ++j) {
          probs[j] /= sum;
          if (!visible[j])
            continue;
          const double *vRow = &vd[((b * p.hkv + hk) * p.lk + j) * p.dv];
          for (int64_t x = 0; x < p.dv; ++x)
            out[x] += probs[j] * vRow[x];
        }
        // The backward. With noise, also the rounding of its two products
        // over Dv, Di = dO.out and dP_j = dO.V[j], modelled as the scores'
        // (2^-24 sqrt(Dv) |dO o x|_2 xi): dS_j = P_j (dP_j - Di) loses it to
        // cancellation where they nearly agree (a softmax almost one-hot).
        double di = 0, diSq = 0;
        for (int64_t x = 0; x < p.dv; ++x) {
          double term =
              doRow[x] *
              (givenOut ? givenOut->getAsDouble(row * p.dv + x) : out[x]);
          di += term;
          diSq += term * term;
        }
        if (noiseSeed && std::isfinite(di))
          di += dvNoiseScale * std::sqrt(diSq) *
                backwardNoise(*noiseSeed, 1, b, h, i, 0);
        for (int64_t j = 0; j < p.lk; ++j) {
          if (!visible[j])
            continue;
          const int64_t kvRow = (b * p.hkv + hk) * p.lk + j;
          const double *vRow = &vd[kvRow * p.dv];
          const double *kRow = &kd[kvRow * p.d];
          double pj = probs[j] * lseScale;
          // With noise, the backward recomputes each score with its own
          // rounding, apart from the forward's that made the lse: where the
          // row is one-hot, that moves P_max (and d_value) far more than the
          // lse's rounding does.
          if (noiseSeed && std::isfinite(scores[j]))
            pj *= std::exp(noiseScale * scoreNorm[j] *
                           backwardNoise(*noiseSeed, 3, b, h, i, j));
          double dP = 0, dPSq = 0;
          for (int64_t x = 0; x < p.dv; ++x) {
            dP += doRow[x] * vRow[x];
            dPSq += doRow[x] * vRow[x] * doRow[x] * vRow[x];
            dv[kvRow * p.dv + x] += pj * doRow[x];
          }
          if (noiseSeed && std::isfinite(dP))
            dP += dvNoiseScale * std::sqrt(dPSq) *
                  backwardNoise(*noiseSeed, 2, b, h, i, j);
          double dS = p.scale * pj * (dP - di);
          for (int64_t x = 0; x < p.d; ++x) {
            dq[row * p.d + x] += dS * kRow[x];
            dk[kvRow * p.d + x] += dS * qRow[x];
          }
        }
      }
    }
}

/// Raises sens to each gradient's ref::deviation of `a` from `ref`.
static void foldDistance(GradSensitivity &sens, const GradReference &a,
                         const GradReference &ref) {
  for (size_t g = 0; g < 3; ++g) {
    ref::Deviation d = ref::deviation(a.grads[g], ref.grads[g]);
    if (std::isnan(d.relL2)) {
      sens.relL2[g] = sens.maxAbs[g] = kNaN;
      continue;
    }
    sens.relL2[g] = std::max(sens.relL2[g], d.relL2);
    sens.maxAbs[g] = std::max(sens.maxAbs[g], d.maxAbs);
  }
}

GradSensitivity mlir::attn::exec::measureGradSensitivity(
    const SdpaProblem &p, const HostTensor &q, const HostTensor &k,
    const HostTensor &v, const HostTensor *mask, const HostTensor &dOut,
    const GradReference &ref, uint64_t seed, int trials) {
  GradSensitivity sens;
  for (int t = 0; t < trials; ++t) {
    GradReference perturbed;
    referenceSdpaGrad(p, q, k, v, mask, dOut, perturbed,
                      ref::trialSeed(seed, t));
    foldDistance(sens, perturbed, ref);
  }
  return sens;
}

GradSensitivity mlir::attn::exec::measureOutRoundingSensitivity(
    const SdpaProblem &p, const HostTensor &q, const HostTensor &k,
    const HostTensor &v, const HostTensor *mask, const HostTensor &dOut,
    DType outType, const GradReference &ref) {
  std::vector<double> exact;
  referenceSdpa(p, q, k, v, mask, exact, nullptr);
  HostTensor rounded = HostTensor::zeros(outType, {p.b, p.hq, p.lq, p.dv});
  for (size_t i = 0; i < exact.size(); ++i)
    rounded.setFromDouble(static_cast<int64_t>(i), exact[i]);
  GradSensitivity sens;
  GradReference moved;
  referenceSdpaGrad(p, q, k, v, mask, dOut, moved, std::nullopt, &rounded);
  foldDistance(sens, moved, ref);
  return sens;
}
