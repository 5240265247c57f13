//===- Reference.cpp - The f64 sdpa oracle ----------------------*- C++ -*-===//
//
// Deliberately the most literal reading of the semantics: per (b, h, i) row,
// compute every score, decide visibility, then a two-pass softmax (max, then
// sum) in double. Nothing here is tiled or fused, so a bug in the online
// softmax of the fused lowering cannot be mirrored here.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Reference.h"
#include "attn/Spec/ReferenceVarlen.h"

#include "ReferenceShared.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/SdpaSpec.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlir::attn::exec {

static const double kInf = std::numeric_limits<double>::infinity();
static const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// sum_{i=0}^{lq-1} clamp(i + c, 0, lk): the number of admitted (i, j) pairs
/// when row i sees keys j < i + c. Closed form, so that it is exact and O(1)
/// even for long sequences.
static int64_t sumClampedDiagonal(int64_t lq, int64_t lk, int64_t c) {
  // Rows [0, first) see nothing, rows [first, full) see i + c keys, rows
  // [full, lq) see all lk keys.
  int64_t first = std::min(std::max<int64_t>(0, -c), lq);
  int64_t full = std::min(std::max<int64_t>(0, lk - c), lq);
  int64_t n = full - first;
  int64_t partial = n * (first + c) + n * (n - 1) / 2;
  return partial + (lq - full) * lk;
}

/// The keys batch b sees: its key length clamped to [0, lk], or lk.
static int64_t keyLengthOf(const SdpaProblem &p, int64_t b) {
  if (!p.keyLengths || static_cast<size_t>(b) >= p.keyLengthValues.size())
    return p.lk;
  return std::min(std::max<int64_t>(0, p.keyLengthValues[b]), p.lk);
}

/// The diagonal of row i that the window is aligned to, for a batch with
/// `lk` keys: i for top_left causal, i + lk - lq otherwise (bottom_right,
/// FlashAttention's default).
static int64_t windowDiagonal(const SdpaProblem &p, int64_t i, int64_t lk) {
  return p.causal == Causal::TopLeft ? i : i + lk - p.lq;
}

/// Whether the window lets query row i see key j (written as differences,
/// which cannot overflow for any window size).
static bool windowAdmits(const SdpaProblem &p, int64_t i, int64_t j,
                         int64_t lk) {
  if (!p.window)
    return true;
  int64_t diag = windowDiagonal(p, i, lk);
  auto [left, right] = *p.window;
  return (left < 0 || diag - j <= left) && (right < 0 || j - diag <= right);
}

/// The admitted pairs of one batch with `lk` keys (its key length, or Lk)
/// under the op's window and causal alignment, if any. Every bound is on j - i:
/// the window's sides around the diagonal, the causal diagonal, so row i sees
/// keys j in [i + tLo, i + tHi) clamped to [0, lk), and the count is
/// sumClampedDiagonal(tHi) - sumClampedDiagonal(tLo) (O(1): lq may be ~2^40).
static int64_t bandPairs(const SdpaProblem &p, int64_t lk) {
  // Offsets are clamped to [-lq, lk], where clamp(i + c, 0, lk) no longer
  // changes for any row, so no sum below overflows whatever the window.
  auto clampOffset = [&](int64_t c) {
    return std::min(std::max(c, -p.lq), lk);
  };
  const int64_t big = int64_t(1) << 62;
  auto [left, right] = p.window.value_or(std::pair<int64_t, int64_t>{-1, -1});
  int64_t diag = windowDiagonal(p, 0, lk);
  int64_t tLo = left < 0 ? -p.lq : clampOffset(diag - std::min(left, big));
  int64_t tHi = right < 0 ? lk : clampOffset(diag + std::min(right, big) + 1);
  if (p.causal != Causal::None)
    tHi = std::min(tHi, clampOffset(diag + 1));
  if (tHi <= tLo)
    return 0;
  return sumClampedDiagonal(p.lq, lk, tHi) - sumClampedDiagonal(p.lq, lk, tLo);
}

size_t keyLengthsArgIndex(const SdpaProblem &p) {
  if (p.varlen) // query, key, value, cu_seqlens_q, cu_seqlens_k.
    return 5;
  if (p.paged) // query, key_cache, value_cache, page_table.
    return 4;
  return p.mask != MaskKind::None ? 4 : 3;
}

size_t alibiArgIndex(const SdpaProblem &p) {
  return keyLengthsArgIndex(p) + (p.keyLengths ? 1 : 0);
}

void setKeyLengthValues(SdpaProblem &p, const std::vector<HostTensor> &inputs) {
  p.keyLengthValues.clear();
  p.alibiSlopeValues.clear();
  size_t index = keyLengthsArgIndex(p);
  if (p.keyLengths && inputs.size() > index)
    for (int64_t i = 0, n = inputs[index].numel(); i < n; ++i)
      p.keyLengthValues.push_back(
          static_cast<int64_t>(inputs[index].getAsDouble(i)));
  index = alibiArgIndex(p);
  if (p.alibi != SdpaProblem::Alibi::None && inputs.size() > index)
    for (int64_t i = 0, n = inputs[index].numel(); i < n; ++i)
      p.alibiSlopeValues.push_back(inputs[index].getAsDouble(i));
}

llvm::Error checkAlibiSlopes(const HostTensor &slopes) {
  for (int64_t i = 0, n = slopes.numel(); i < n; ++i) {
    double slope = slopes.getAsDouble(i);
    if (std::isfinite(slope) && std::fabs(slope) > kMaxLog2EFactor)
      return makeError("alibi_slopes[" + std::to_string(i) +
                       "] = " + formatDoubleRoundTrip(slope) +
                       ": expected a magnitude of at most " +
                       formatDoubleRoundTrip(kMaxLog2EFactor) +
                       " (FLT_MAX / log2(e), the f32 factor slope * log2(e) "
                       "must be finite)");
  }
  return llvm::Error::success();
}

/// The ALiBi slope of (b, h), 0 without ALiBi (or without its values).
static double alibiSlopeOf(const SdpaProblem &p, int64_t b, int64_t h) {
  size_t index = static_cast<size_t>(
      p.alibi == SdpaProblem::Alibi::Heads ? h : b * p.hq + h);
  if (p.alibi == SdpaProblem::Alibi::None || index >= p.alibiSlopeValues.size())
    return 0;
  return p.alibiSlopeValues[index];
}

int64_t SdpaProblem::flops() const {
  if (varlen)
    return varlenFlops(*this);
  if (keyLengths) {
    // Batches past the given lengths (none when only sizes are known) see
    // all lk keys: one count for them all, since b may be ~2^40.
    int64_t given = std::min<int64_t>(b, keyLengthValues.size());
    int64_t pairs = (b - given) * bandPairs(*this, lk);
    for (int64_t batch = 0; batch < given; ++batch)
      pairs += bandPairs(*this, keyLengthOf(*this, batch));
    return 2 * hq * (d + dv) * pairs;
  }
  return 2 * b * hq * (d + dv) * bandPairs(*this, lk);
}

llvm::Error SdpaProblem::validate() const {
  const std::pair<const char *, int64_t> dims[] = {
      {"b", b},   {"hq", hq}, {"hkv", hkv}, {"lq", lq},
      {"lk", lk}, {"d", d},   {"dv", dv}};
  for (const auto &[name, value] : dims)
    if (value <= 0)
      return makeError(std::string("expected ") + name +
                       " to be positive, got " + std::to_string(value));
  if (hq % hkv != 0)
    return makeError("expected hq (" + std::to_string(hq) +
                     ") to be a multiple of hkv (" + std::to_string(hkv) + ")");
  // The same size limits as SdpaSpec::validate: every tensor at most 2^40
  // elements, the FLOP count within int64 (it bounds every product above).
  std::string sizes = "b=" + std::to_string(b) + ",hq=" + std::to_string(hq) +
                      ",hkv=" + std::to_string(hkv) +
                      ",lq=" + std::to_string(lq) +
                      ",lk=" + std::to_string(lk) + ",d=" + std::to_string(d) +
                      ",dv=" + std::to_string(dv);
  const std::pair<const char *, std::vector<int64_t>> tensors[] = {
      {"query", {b, hq, lq, d}},
      {"key", {b, hkv, lk, d}},
      {"value", {b, hkv, lk, dv}},
      {"out", {b, hq, lq, dv}},
      {"mask", mask == MaskKind::None ? std::vector<int64_t>{} : maskShape}};
  for (const auto &[name, shape] : tensors) {
    std::optional<int64_t> n = 1;
    for (int64_t dim : shape)
      n = n ? llvm::checkedMul(*n, dim) : std::nullopt;
    if (!n || *n > kMaxTensorElements)
      return makeError(sizes + ": the " + name +
                       " tensor would have more than 2^40 elements");
  }
  std::optional<int64_t> f = int64_t(2);
  for (int64_t x : {b, hq, d + dv, lq, lk})
    f = f ? llvm::checkedMul(*f, x) : std::nullopt;
  if (!f)
    return makeError(sizes +
                     ": the FLOP count 2*b*hq*(d+dv)*lq*lk overflows int64");
  if (window && (window->first < -1 || window->second < -1))
    return makeError("expected window sides to be -1 (unbounded) or "
                     "non-negative, got " +
                     std::to_string(window->first) + ":" +
                     std::to_string(window->second));
  if (softcap && !(std::isfinite(*softcap) && *softcap > 0))
    return makeError("expected softcap to be finite and positive, got " +
                     std::to_string(*softcap));
  if (mask == MaskKind::None)
    return llvm::Error::success();
  if (maskShape.size() != 4)
    return makeError("expected a rank-4 mask shape, got rank " +
                     std::to_string(maskShape.size()));
  const int64_t full[4] = {b, hq, lq, lk};
  const char *names[4] = {"b", "hq", "lq", "lk"};
  for (int i = 0; i < 4; ++i)
    if (maskShape[i] != full[i] && maskShape[i] != 1)
      return makeError("expected mask dim " + std::to_string(i) + " (" +
                       std::to_string(maskShape[i]) + ") to be 1 or equal " +
                       names[i] + " (" + std::to_string(full[i]) + ")");
  return llvm::Error::success();
}

static bool isFloatType(DType dtype) {
  return dtype != DType::Bool && dtype != DType::I32;
}

static llvm::Error checkShape(const char *name, const HostTensor &t,
                              const std::vector<int64_t> &expected) {
  if (t.shape != expected) {
    HostTensor want;
    want.shape = expected;
    return makeError(std::string("expected ") + name + " of shape " +
                     want.shapeString() + ", got " + t.shapeString());
  }
  if (t.data.size() != t.byteSize())
    return makeError(std::string(name) + " holds " +
                     std::to_string(t.data.size()) + " bytes, expected " +
                     std::to_string(t.byteSize()));
  return llvm::Error::success();
}

llvm::Error validateOperands(const SdpaProblem &p, const HostTensor &q,
                             const HostTensor &k, const HostTensor &v,
                             const HostTensor *mask) {
  if (llvm::Error err = p.validate())
    return err;
  if (llvm::Error err = checkShape("query", q, {p.b, p.hq, p.lq, p.d}))
    return err;
  if (llvm::Error err = checkShape("key", k, {p.b, p.hkv, p.lk, p.d}))
    return err;
  if (llvm::Error err = checkShape("value", v, {p.b, p.hkv, p.lk, p.dv}))
    return err;
  if (!isFloatType(q.dtype) || !isFloatType(k.dtype) || !isFloatType(v.dtype))
    return makeError("expected floating-point query, key and value");
  if (p.mask == MaskKind::None)
    return llvm::Error::success();
  if (!mask)
    return makeError("the problem has a mask but no mask tensor was given");
  if (llvm::Error err = checkShape("mask", *mask, p.maskShape))
    return err;
  if (p.mask == MaskKind::Bool && mask->dtype != DType::Bool)
    return makeError(std::string("expected an i1 mask, got ") +
                     dtypeName(mask->dtype));
  if (p.mask == MaskKind::Float && !isFloatType(mask->dtype))
    return makeError("expected a floating-point mask, got i1");
  return llvm::Error::success();
}

using ref::causalAdmits;
using ref::scoreNoise;
using ref::toDoubles;

void referenceSdpa(const SdpaProblem &p, const HostTensor &q,
                   const HostTensor &k, const HostTensor &v,
                   const HostTensor *mask, std::vector<double> &out,
                   std::vector<double> *lse, int64_t rowStride,
                   bool hiddenValuesTimesZero,
                   std::optional<uint64_t> scoreNoiseSeed) {
  auto nonNeg = [](int64_t x) {
    return static_cast<size_t>(std::max<int64_t>(x, 0));
  };
  size_t rows = nonNeg(p.b) * nonNeg(p.hq) * nonNeg(p.lq);
  out.assign(rows * nonNeg(p.dv), 0.0);
  if (lse)
    lse->assign(rows, -kInf);
  if (llvm::Error err = validateOperands(p, q, k, v, mask)) {
    llvm::consumeError(std::move(err));
    std::fill(out.begin(), out.end(), kNaN);
    if (lse)
      std::fill(lse->begin(), lse->end(), kNaN);
    return;
  }

  std::vector<double> qd = toDoubles(q), kd = toDoubles(k), vd = toDoubles(v);
  std::vector<double> md;
  if (p.mask != MaskKind::None)
    md = toDoubles(*mask);
  const int64_t group = p.hq / p.hkv;
  std::vector<double> scores(static_cast<size_t>(p.lk));
  std::vector<char> visible(static_cast<size_t>(p.lk));
  std::vector<double> acc(static_cast<size_t>(p.dv));
  // 2^-24 * sqrt(d) * |scale|: the score noise per unit of ||q_i o k_j||.
  const double noiseScale = std::ldexp(1.0, -24) *
                            std::sqrt(static_cast<double>(p.d)) *
                            std::fabs(p.scale);

  for (int64_t b = 0; b < p.b; ++b) {
    const int64_t keyLen = keyLengthOf(p, b);
    for (int64_t h = 0; h < p.hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < p.lq; ++i) {
        if (rowStride > 1 && i % rowStride != 0) {
          // Not sampled: NaN, so that nobody mistakes it for a result.
          const size_t row = static_cast<size_t>((b * p.hq + h) * p.lq + i);
          std::fill_n(out.begin() + row * p.dv, p.dv, kNaN);
          if (lse)
            (*lse)[row] = kNaN;
          continue;
        }
        const double *qRow = &qd[((b * p.hq + h) * p.lq + i) * p.d];
        bool anyVisible = false, sawNaN = false;
        double rowMax = -kInf;
        for (int64_t j = 0; j < p.lk; ++j) {
          const double *kRow = &kd[((b * p.hkv + hk) * p.lk + j) * p.d];
          double dot = 0;
          for (int64_t x = 0; x < p.d; ++x)
            dot += qRow[x] * kRow[x];
          double s = p.scale * dot;
          if (scoreNoiseSeed && std::isfinite(s)) {
            double normSq = 0;
            for (int64_t x = 0; x < p.d; ++x) {
              double prod = qRow[x] * kRow[x];
              normSq += prod * prod;
            }
            s += noiseScale * std::sqrt(normSq) *
                 scoreNoise(*scoreNoiseSeed, b, h, i, j);
          }
          if (p.softcap)
            s = *p.softcap * std::tanh(s / *p.softcap);
          // What is added to the score, in magnitude (ref::biasNoise).
          double bias = 0;
          if (p.alibi != SdpaProblem::Alibi::None) {
            double a = alibiSlopeOf(p, b, h) *
                       static_cast<double>(std::llabs(i + keyLen - p.lq - j));
            s -= a;
            bias += std::fabs(a);
          }
          bool allowed = j < keyLen &&
                         causalAdmits(p.causal, i, j, p.lq, keyLen) &&
                         windowAdmits(p, i, j, keyLen);
          if (p.mask != MaskKind::None) {
            const std::vector<int64_t> &ms = p.maskShape;
            int64_t mIndex =
                (((ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : h)) * ms[2] +
                 (ms[2] == 1 ? 0 : i)) *
                    ms[3] +
                (ms[3] == 1 ? 0 : j);
            double m = md[mIndex];
            if (p.mask == MaskKind::Float) {
              s += m;
              bias += std::fabs(m);
            } else if (m == 0) {
              allowed = false;
            }
          }
          if (scoreNoiseSeed && std::isfinite(s))
            s += ref::biasNoise(*scoreNoiseSeed, bias, b, h, i, j);
          scores[j] = s;
          visible[j] = allowed && s != -kInf;
          if (!visible[j])
            continue;
          anyVisible = true;
          // std::max would drop a NaN depending on argument order; the NaN
          // must reach the whole row instead.
          if (std::isnan(s))
            sawNaN = true;
          else
            rowMax = std::max(rowMax, s);
        }
        const size_t row = static_cast<size_t>((b * p.hq + h) * p.lq + i);
        if (!anyVisible)
          continue; // out stays 0 and lse -inf.
        if (sawNaN)
          rowMax = kNaN;

        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < p.lk; ++j) {
          if (!visible[j]) {
            if (hiddenValuesTimesZero) {
              const double *vRow = &vd[((b * p.hkv + hk) * p.lk + j) * p.dv];
              for (int64_t x = 0; x < p.dv; ++x)
                acc[x] += 0.0 * vRow[x];
            }
            continue;
          }
          double e = std::exp(scores[j] - rowMax);
          sum += e;
          const double *vRow = &vd[((b * p.hkv + hk) * p.lk + j) * p.dv];
          for (int64_t x = 0; x < p.dv; ++x)
            acc[x] += e * vRow[x];
        }
        for (int64_t x = 0; x < p.dv; ++x)
          out[row * p.dv + x] = acc[x] / sum;
        if (lse)
          (*lse)[row] = rowMax + std::log(sum);
      }
    }
  }
}

Sensitivity measureSensitivity(const SdpaProblem &p, const HostTensor &q,
                               const HostTensor &k, const HostTensor &v,
                               const HostTensor *mask,
                               const std::vector<double> &refOut,
                               const std::vector<double> *refLse,
                               int64_t rowStride, uint64_t seed, int trials) {
  Sensitivity sens;
  // A NaN measure (a reference of the wrong size) stays NaN.
  auto keepLargest = [](double &into, double x) {
    if (std::isnan(into))
      return;
    if (std::isnan(x) || x > into)
      into = x;
  };
  for (int t = 0; t < trials; ++t) {
    uint64_t trialSeed = ref::trialSeed(seed, t);
    std::vector<double> out, lse;
    referenceSdpa(p, q, k, v, mask, out, refLse ? &lse : nullptr, rowStride,
                  /*hiddenValuesTimesZero=*/false, trialSeed);
    ref::Deviation o = ref::deviation(out, refOut);
    keepLargest(sens.outRelL2, o.relL2);
    keepLargest(sens.outMaxAbs, o.maxAbs);
    if (refLse) {
      ref::Deviation l = ref::deviation(lse, *refLse);
      keepLargest(sens.lseRelL2, l.relL2);
      keepLargest(sens.lseMaxAbs, l.maxAbs);
    }
  }
  return sens;
}

namespace {
/// Accumulates the error measures one element at a time.
struct ErrorAccumulator {
  ErrorStats stats;
  long double diffSq = 0, refSq = 0;
  bool infinite = false;

  void add(double got, double ref) {
    bool gotNaN = std::isnan(got), refNaN = std::isnan(ref);
    if (gotNaN && refNaN)
      return;
    ++stats.count;
    if (gotNaN) {
      stats.hasNaN = true;
      infinite = true;
      return;
    }
    if (refNaN) {
      infinite = true;
      return;
    }
    if (std::isinf(ref) || std::isinf(got)) {
      // Equal infinities (an lse of -inf for an empty row) are exact.
      if (got != ref)
        infinite = true;
      return;
    }
    double diff = std::fabs(got - ref);
    stats.maxAbs = std::max(stats.maxAbs, diff);
    stats.refMaxAbs = std::max(stats.refMaxAbs, std::fabs(ref));
    diffSq += static_cast<long double>(diff) * diff;
    refSq += static_cast<long double>(ref) * ref;
  }

  ErrorStats finish() {
    if (infinite) {
      stats.maxAbs = kInf;
      stats.relL2 = kInf;
      return stats;
    }
    long double diffNorm = std::sqrt(diffSq), refNorm = std::sqrt(refSq);
    stats.relL2 =
        static_cast<double>(refNorm == 0 ? diffNorm : diffNorm / refNorm);
    return stats;
  }
};
} // namespace

static ErrorStats sizeMismatch() {
  ErrorStats stats;
  stats.maxAbs = kInf;
  stats.relL2 = kInf;
  return stats;
}

ErrorStats compareToReference(const HostTensor &got,
                              const std::vector<double> &ref) {
  if (got.dtype == DType::Bool || got.data.size() != got.byteSize() ||
      static_cast<size_t>(got.numel()) != ref.size())
    return sizeMismatch();
  ErrorAccumulator acc;
  for (size_t i = 0; i < ref.size(); ++i)
    acc.add(got.getAsDouble(static_cast<int64_t>(i)), ref[i]);
  return acc.finish();
}

ErrorStats compareTensors(const HostTensor &got, const HostTensor &ref) {
  if (got.shape != ref.shape || ref.data.size() != ref.byteSize())
    return sizeMismatch();
  return compareToReference(got, toDoubles(ref));
}

} // namespace mlir::attn::exec
