//===- ReferenceVarlen.cpp - The f64 oracle of attn.sdpa_varlen -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/ReferenceVarlen.h"
#include "attn/Spec/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace mlir::attn::exec {

int64_t varlenSequences(const SdpaProblem &p) {
  return p.cuSeqlensQ.empty() ? 0
                              : static_cast<int64_t>(p.cuSeqlensQ.size()) - 1;
}

/// p as one sequence's attn.sdpa, before its lengths: B = 1, no offsets and
/// no key lengths (the slopes are p's).
static SdpaProblem sequenceOf(const SdpaProblem &p) {
  SdpaProblem s = p;
  s.varlen = false;
  s.cuSeqlensQ.clear();
  s.cuSeqlensK.clear();
  s.b = 1;
  s.keyLengths = false;
  s.keyLengthValues.clear();
  return s;
}

/// Sequence `seq`'s lengths, from p's offsets, into s.
static void setLengths(SdpaProblem &s, const SdpaProblem &p, int64_t seq) {
  s.lq = p.cuSeqlensQ[seq + 1] - p.cuSeqlensQ[seq];
  s.lk = p.cuSeqlensK[seq + 1] - p.cuSeqlensK[seq];
}

SdpaProblem varlenSequence(const SdpaProblem &p, int64_t seq) {
  SdpaProblem s = sequenceOf(p);
  setLengths(s, p, seq);
  if (p.alibi == SdpaProblem::Alibi::BatchHeads) {
    s.alibi = SdpaProblem::Alibi::Heads;
    s.alibiSlopeValues.clear();
    for (int64_t h = 0; h < p.hq; ++h) {
      size_t index = static_cast<size_t>(seq * p.hq + h);
      s.alibiSlopeValues.push_back(
          index < p.alibiSlopeValues.size() ? p.alibiSlopeValues[index] : 0);
    }
  }
  return s;
}

int64_t varlenFlops(const SdpaProblem &p) {
  // Each sequence's lengths on one copy of the problem, not through
  // varlenSequence(): that builds hq ALiBi slopes per sequence, and a spec at
  // the size limits may say hq ~ 2^32 (the parser fuzzer ran out of memory
  // on one: fuzz/regressions/parsers-huge-varlen-alibi-heads). The count
  // does not depend on the slopes.
  SdpaProblem s = sequenceOf(p);
  int64_t flops = 0;
  for (int64_t seq = 0, n = varlenSequences(p); seq < n; ++seq) {
    setLengths(s, p, seq);
    if (s.lq > 0 && s.lk > 0)
      flops += s.flops();
  }
  return flops;
}

void fillVarlenOffsets(const SdpaProblem &p, std::vector<HostTensor> &inputs) {
  for (int t = 0; t < 2; ++t) {
    const std::vector<int64_t> &cu = t == 0 ? p.cuSeqlensQ : p.cuSeqlensK;
    HostTensor &tensor = inputs[3 + t];
    for (int64_t i = 0, n = std::min<int64_t>(tensor.numel(), cu.size()); i < n;
         ++i)
      tensor.setFromDouble(i, static_cast<double>(cu[i]));
  }
}

llvm::Expected<std::vector<int64_t>>
checkVarlenOffsets(llvm::StringRef name, const HostTensor &tensor,
                   int64_t rows) {
  std::vector<int64_t> cu;
  for (int64_t i = 0, n = tensor.numel(); i < n; ++i) {
    // i32 values: exact as doubles.
    int64_t v = static_cast<int64_t>(tensor.getAsDouble(i));
    int64_t previous = i == 0 ? 0 : cu.back();
    if ((i == 0 && v != 0) || v < previous || v > rows)
      return makeError(name.str() + "[" + std::to_string(i) +
                       "] = " + std::to_string(v) +
                       ": expected offsets from 0, non-decreasing, at most "
                       "the " +
                       std::to_string(rows) + " packed rows");
    cu.push_back(v);
  }
  return cu;
}

void fillEvenVarlenOffsets(HostTensor &cu, int64_t rows) {
  int64_t n = cu.numel();
  int64_t sequences = std::max<int64_t>(n - 1, 1);
  for (int64_t i = 0; i < n; ++i)
    cu.setFromDouble(i, static_cast<double>(rows / sequences * i +
                                            std::min(i, rows % sequences)));
}

llvm::Error setVarlenValues(SdpaProblem &p,
                            const std::vector<HostTensor> &inputs) {
  const char *names[2] = {"cu_seqlens_q", "cu_seqlens_k"};
  for (int t = 0; t < 2; ++t) {
    llvm::Expected<std::vector<int64_t>> cu = checkVarlenOffsets(
        names[t], inputs[3 + t], inputs[t == 0 ? 0 : 1].shape[0]);
    if (!cu)
      return cu.takeError();
    (t == 0 ? p.cuSeqlensQ : p.cuSeqlensK) = std::move(*cu);
  }
  setKeyLengthValues(p, inputs);
  return llvm::Error::success();
}

namespace {
/// One sequence's rows of a packed [total, h, d] tensor as [1, h, len, d].
HostTensor unpack(const HostTensor &packed, int64_t start, int64_t len) {
  int64_t h = packed.shape[1], d = packed.shape[2];
  HostTensor t = HostTensor::zeros(packed.dtype, {1, h, len, d});
  for (int64_t head = 0; head < h; ++head)
    for (int64_t i = 0; i < len; ++i)
      for (int64_t e = 0; e < d; ++e)
        t.setFromDouble((head * len + i) * d + e,
                        packed.getAsDouble(((start + i) * h + head) * d + e));
  return t;
}

/// Sequence `seq`'s query, key and value, copied out of the packed inputs.
struct Sequence {
  SdpaProblem problem;
  int64_t q0 = 0;
  HostTensor q, k, v;
};

Sequence sequenceOf(const SdpaProblem &p, const std::vector<HostTensor> &in,
                    int64_t seq) {
  Sequence s;
  s.problem = varlenSequence(p, seq);
  s.q0 = p.cuSeqlensQ[seq];
  int64_t k0 = p.cuSeqlensK[seq];
  s.q = unpack(in[0], s.q0, s.problem.lq);
  s.k = unpack(in[1], k0, s.problem.lk);
  s.v = unpack(in[2], k0, s.problem.lk);
  return s;
}
} // namespace

/// Calls `outAt(packed, own)` for every element of sequence `s`'s out rows,
/// with its index in the packed out [total_q, hq, dv] and in the sequence's
/// own [1, hq, lq, dv]; `lseAt` likewise for lse ([hq, total_q], [1, hq, lq]).
template <typename OutFn, typename LseFn>
static void forEachSequenceResult(const SdpaProblem &p, const Sequence &s,
                                  int64_t totalQ, OutFn outAt, LseFn lseAt) {
  int64_t hq = p.hq, dv = p.dv, lq = s.problem.lq;
  for (int64_t h = 0; h < hq; ++h)
    for (int64_t i = 0; i < lq; ++i) {
      for (int64_t e = 0; e < dv; ++e)
        outAt(((s.q0 + i) * hq + h) * dv + e, (h * lq + i) * dv + e);
      lseAt(h * totalQ + s.q0 + i, h * lq + i);
    }
}

void referenceVarlen(const SdpaProblem &p,
                     const std::vector<HostTensor> &inputs,
                     std::vector<double> &out, std::vector<double> *lse,
                     bool hiddenValuesTimesZero) {
  int64_t totalQ = inputs[0].shape[0];
  // Rows of no sequence and sequences without keys: out 0, lse -inf.
  out.assign(static_cast<size_t>(totalQ * p.hq * p.dv), 0.0);
  if (lse)
    lse->assign(static_cast<size_t>(p.hq * totalQ),
                -std::numeric_limits<double>::infinity());
  for (int64_t seq = 0, n = varlenSequences(p); seq < n; ++seq) {
    Sequence s = sequenceOf(p, inputs, seq);
    if (s.problem.lq == 0 || s.problem.lk == 0)
      continue;
    std::vector<double> o, l;
    referenceSdpa(s.problem, s.q, s.k, s.v, nullptr, o, lse ? &l : nullptr, 1,
                  hiddenValuesTimesZero);
    forEachSequenceResult(
        p, s, totalQ,
        [&](int64_t packed, int64_t own) { out[packed] = o[own]; },
        [&](int64_t packed, int64_t own) {
          if (lse)
            (*lse)[packed] = l[own];
        });
  }
}

/// ||x||_2 over the finite elements.
static double finiteNorm(const std::vector<double> &x) {
  double sum = 0;
  for (double v : x)
    if (std::isfinite(v))
      sum += v * v;
  return std::sqrt(sum);
}

/// A sequence's rel_l2 as the norm of its change (rel_l2 is the plain norm
/// of the change where the reference's norm is 0), and the changes' squared
/// sum over the sequences back as a rel_l2 of the packed result: the
/// sensitivities of the sequences combined as one tensor's.
static double changeNorm(double rel, double norm) {
  return rel * (norm > 0 ? norm : 1.0);
}
static double combinedRelL2(double change2, double norm) {
  return norm > 0 ? std::sqrt(change2) / norm : std::sqrt(change2);
}

Sensitivity measureVarlenSensitivity(const SdpaProblem &p,
                                     const std::vector<HostTensor> &inputs,
                                     const std::vector<double> &refOut,
                                     const std::vector<double> *refLse,
                                     uint64_t seed, int trials) {
  Sensitivity total;
  double outDelta2 = 0, lseDelta2 = 0;
  int64_t totalQ = inputs[0].shape[0];
  // A reference of the wrong size: not measured (as measureSensitivity()).
  if (refOut.size() != static_cast<size_t>(totalQ * p.hq * p.dv) ||
      (refLse && refLse->size() != static_cast<size_t>(p.hq * totalQ))) {
    double nan = std::numeric_limits<double>::quiet_NaN();
    total.outRelL2 = total.outMaxAbs = total.lseRelL2 = total.lseMaxAbs = nan;
    return total;
  }
  for (int64_t seq = 0, n = varlenSequences(p); seq < n; ++seq) {
    Sequence s = sequenceOf(p, inputs, seq);
    if (s.problem.lq == 0 || s.problem.lk == 0)
      continue; // Nothing to perturb: out 0 and lse -inf exactly.
    // The sequence's reference, read back from the packed one the caller
    // computed (referenceVarlen()) rather than computed again.
    std::vector<double> o(static_cast<size_t>(p.hq * s.problem.lq * p.dv)), l;
    if (refLse)
      l.resize(static_cast<size_t>(p.hq * s.problem.lq));
    forEachSequenceResult(
        p, s, totalQ,
        [&](int64_t packed, int64_t own) { o[own] = refOut[packed]; },
        [&](int64_t packed, int64_t own) {
          if (refLse)
            l[own] = (*refLse)[packed];
        });
    Sensitivity one = measureSensitivity(
        s.problem, s.q, s.k, s.v, nullptr, o, refLse ? &l : nullptr, 1,
        seed * 1000003 + static_cast<uint64_t>(seq), trials);
    double dOut = changeNorm(one.outRelL2, finiteNorm(o));
    outDelta2 += dOut * dOut;
    total.outMaxAbs = std::max(total.outMaxAbs, one.outMaxAbs);
    if (refLse) {
      double dLse = changeNorm(one.lseRelL2, finiteNorm(l));
      lseDelta2 += dLse * dLse;
      total.lseMaxAbs = std::max(total.lseMaxAbs, one.lseMaxAbs);
    }
  }
  total.outRelL2 = combinedRelL2(outDelta2, finiteNorm(refOut));
  if (refLse)
    total.lseRelL2 = combinedRelL2(lseDelta2, finiteNorm(*refLse));
  return total;
}

/// Adds sequence rows [start, start + len) of `own` ([1, h, len, d], as
/// referenceSdpaGrad() gives a gradient) into the packed [total, h, d].
static void packRows(const std::vector<double> &own,
                     std::vector<double> &packed, int64_t start, int64_t len,
                     int64_t h, int64_t d) {
  for (int64_t head = 0; head < h; ++head)
    for (int64_t i = 0; i < len; ++i)
      for (int64_t e = 0; e < d; ++e)
        packed[static_cast<size_t>(((start + i) * h + head) * d + e)] =
            own[static_cast<size_t>((head * len + i) * d + e)];
}

void referenceVarlenGrad(const SdpaProblem &p,
                         const std::vector<HostTensor> &inputs,
                         const HostTensor &dOut, GradReference &ref,
                         GradSensitivity *sens, std::optional<DType> roundedOut,
                         uint64_t seed) {
  int64_t totalQ = inputs[0].shape[0], totalK = inputs[1].shape[0];
  ref.grads[0].assign(static_cast<size_t>(totalQ * p.hq * p.d), 0.0);
  ref.grads[1].assign(static_cast<size_t>(totalK * p.hkv * p.d), 0.0);
  ref.grads[2].assign(static_cast<size_t>(totalK * p.hkv * p.dv), 0.0);
  std::array<double, 3> change2{};
  if (sens)
    *sens = GradSensitivity{};
  for (int64_t seq = 0, n = varlenSequences(p); seq < n; ++seq) {
    Sequence s = sequenceOf(p, inputs, seq);
    int64_t lq = s.problem.lq, lk = s.problem.lk, k0 = p.cuSeqlensK[seq];
    if (lq == 0 || lk == 0)
      continue; // No visible pair: zero gradients exactly.
    HostTensor dO = unpack(dOut, s.q0, lq);
    GradReference one;
    referenceSdpaGrad(s.problem, s.q, s.k, s.v, nullptr, dO, one);
    packRows(one.grads[0], ref.grads[0], s.q0, lq, p.hq, p.d);
    packRows(one.grads[1], ref.grads[1], k0, lk, p.hkv, p.d);
    packRows(one.grads[2], ref.grads[2], k0, lk, p.hkv, p.dv);
    if (!sens)
      continue;
    GradSensitivity g =
        roundedOut
            ? measureOutRoundingSensitivity(s.problem, s.q, s.k, s.v, nullptr,
                                            dO, *roundedOut, one)
            : measureGradSensitivity(s.problem, s.q, s.k, s.v, nullptr, dO, one,
                                     seed * 1000003 +
                                         static_cast<uint64_t>(seq));
    for (int i = 0; i < 3; ++i) {
      double c = changeNorm(g.relL2[i], finiteNorm(one.grads[i]));
      change2[i] += c * c;
      sens->maxAbs[i] = std::max(sens->maxAbs[i], g.maxAbs[i]);
    }
  }
  if (sens)
    for (int i = 0; i < 3; ++i)
      sens->relL2[i] = combinedRelL2(change2[i], finiteNorm(ref.grads[i]));
}

} // namespace mlir::attn::exec
