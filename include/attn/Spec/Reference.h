//===- Reference.h - The f64 sdpa oracle ------------------------*- C++ -*-===//
//
// An independent reference for attn.sdpa (docs/op.md, "Semantics,
// exactly"), written as plain loops in double precision so that it shares no
// code and no tiling with either lowering, and the error measures used to
// hold both lowerings to the numerics contract (docs/numerics.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REFERENCE_H
#define ATTN_EXECUTION_REFERENCE_H

#include "attn/Spec/HostTensor.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::attn::exec {

enum class Causal { None, TopLeft, BottomRight };
enum class MaskKind { None, Bool, Float };

/// The sizes and options of one sdpa.
/// No tensor of a problem (nor of an --sdpa spec) may hold more elements.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

struct SdpaProblem {
  int64_t b = 1, hq = 1, hkv = 1, lq = 1, lk = 1, d = 1, dv = 1;
  /// Multiplies Q.K^T; the caller picks it (1/sqrt(d) is the op's default).
  double scale = 0;
  Causal causal = Causal::None;
  /// (left, right): key j visible to query i iff d - left <= j <= d + right,
  /// d = i for top_left causal, else i + lk - lq; -1 is unbounded.
  std::optional<std::pair<int64_t, int64_t>> window;
  /// s <- softcap * tanh(s / softcap) on the scaled score, before the mask.
  std::optional<double> softcap;
  /// Whether the op takes per-sequence key lengths (an i32 [b] argument
  /// after the mask): batch b sees keys j < keyLengthValues[b] (clamped to
  /// [0, lk]), and its bottom-right diagonal sits at that length. The values
  /// come with the inputs (Checks.cpp fills them in before the reference
  /// runs); an empty list means lk for every batch.
  bool keyLengths = false;
  std::vector<int64_t> keyLengthValues;
  /// ALiBi slopes (an f32 argument after the key lengths): none, [hq] or
  /// [b, hq]; s <- s - slope * |i + lk_b - lq - j| after the softcap, lk_b
  /// the batch's key length. Values filled in like keyLengthValues.
  enum class Alibi { None, Heads, BatchHeads } alibi = Alibi::None;
  std::vector<double> alibiSlopeValues;
  MaskKind mask = MaskKind::None;
  /// Rank 4; each dim equals the matching one of [b, hq, lq, lk], or 1.
  /// Ignored when mask is MaskKind::None.
  std::vector<int64_t> maskShape;
  bool lse = false;
  /// attn.sdpa_varlen (ReferenceVarlen.h): b packed sequences with these
  /// cumulative offsets (b + 1 each; the values come with the inputs, like
  /// keyLengthValues); lq and lk are then the longest sequence's lengths.
  bool varlen = false;
  std::vector<int64_t> cuSeqlensQ, cuSeqlensK;
  /// attn.sdpa_paged (ReferencePaged.h): the problem is its dense view (lk =
  /// maxPages * pageSize, keyLengths with the kv_lens), the caches hold
  /// numPages pages of pageSize keys (NHD, or HND with hndLayout); the page
  /// table [b, maxPages] comes with the inputs, like keyLengthValues.
  bool paged = false, hndLayout = false;
  int64_t pageSize = 0, numPages = 0, maxPages = 0;
  std::vector<int64_t> pageTableValues;

  /// 2 * b * hq * (d + dv) * P, with P the exact number of (i, j) pairs the
  /// causal and window rules admit (lq * lk without either).
  int64_t flops() const;
  /// Success if the problem is well formed, else an error saying what is
  /// wrong.
  llvm::Error validate() const;
};

/// Success if `q`, `k`, `v` and `mask` have the shapes and element types that
/// `p` calls for (q [b,hq,lq,d], k [b,hkv,lk,d], v [b,hkv,lk,dv] of float
/// types; mask of p.maskShape, Bool for MaskKind::Bool and floating point for
/// MaskKind::Float), else an error saying what is wrong. Includes
/// p.validate().
llvm::Error validateOperands(const SdpaProblem &p, const HostTensor &q,
                             const HostTensor &k, const HostTensor &v,
                             const HostTensor *mask);

/// Computes out [b,hq,lq,dv] and, if `lse` is non-null, lse [b,hq,lq] (natural
/// log; -inf for a row with nothing visible) in double precision. Inputs may be
/// of any float type. Keys that are not visible are skipped, so a NaN stored in
/// their value rows does not reach `out`. If validateOperands() reports a
/// problem, `out` and `*lse` are resized as usual and filled with NaN, so that
/// any comparison against them fails instead of the process crashing.
/// With rowStride > 1 only the query rows i with i % rowStride == 0 are
/// computed (the others are NaN): a sampled check of a problem too large to
/// compute whole in plain loops. With hiddenValuesTimesZero, hidden keys of
/// a row that sees something add 0 * V[j] (so a NaN stored in a hidden value
/// row reaches the output, as docs/op.md rule 7 allows and PyTorch's math path
/// does).
///
/// With scoreNoiseSeed, every finite scaled score s_ij (docs/op.md,
/// step 1: after the scale, before the float mask) becomes
///   s_ij + 2^-24 * sqrt(d) * |scale| * ||q_i o k_j||_2 * xi_ij,
/// the rounding that an f32 computation of the score may make (o is the
/// elementwise product; q_i and k_j as stored), with xi_ij a standard normal
/// that depends only on (seed, b, h, i, j): the same for a row whatever
/// rowStride, loop order or thread computes it. This is the perturbed
/// reference behind docs/numerics.md's `sens`.
/// The argument index of the key lengths and of the ALiBi slopes: query,
/// key, value, the mask if any, the key lengths if any, then the slopes.
size_t keyLengthsArgIndex(const SdpaProblem &p);
size_t alibiArgIndex(const SdpaProblem &p);

/// Refuses in one line a finite ALiBi slope of magnitude above
/// kMaxLog2EFactor (FLT_MAX / log2(e)): the lowerings multiply each slope by
/// log2(e) into an f32, which would be inf (and inf * 0 NaN) where the f64
/// reference is finite. Non-finite slopes stay the caller's (they are
/// non-finite inputs, whose NaN the checks expect).
llvm::Error checkAlibiSlopes(const HostTensor &slopes);

/// Sets p.keyLengthValues and p.alibiSlopeValues from those arguments of
/// `inputs` when p has them.
void setKeyLengthValues(SdpaProblem &p, const std::vector<HostTensor> &inputs);

void referenceSdpa(const SdpaProblem &p, const HostTensor &q,
                   const HostTensor &k, const HostTensor &v,
                   const HostTensor *mask, std::vector<double> &out,
                   std::vector<double> *lse, int64_t rowStride = 1,
                   bool hiddenValuesTimesZero = false,
                   std::optional<uint64_t> scoreNoiseSeed = std::nullopt);

/// How far the reference moves when its scores are perturbed by the
/// rounding of an f32 computation (docs/numerics.md's `sens`): the largest
/// rel_l2 and max_abs of the perturbed out and lse against the unperturbed
/// ones over the trials.
struct Sensitivity {
  double outRelL2 = 0, outMaxAbs = 0, lseRelL2 = 0, lseMaxAbs = 0;
};

/// Recomputes the reference `trials` times with referenceSdpa()'s score noise,
/// each time with a noise seed derived from `seed` and the trial's index, and
/// compares the perturbed out (and lse, when `refLse` is given) with
/// `refOut` (and `*refLse`), the unperturbed referenceSdpa() results for the
/// same arguments and rowStride. rel_l2 = ||pert - ref||_2 / ||ref||_2 (the
/// plain norm when ||ref||_2 is 0) and max_abs = max |pert - ref| over the
/// elements where both are finite: NaN rows (not sampled, or NaN inputs)
/// and the -inf lse of an empty row are skipped, and nothing non-finite can
/// make the measures infinite. Each measure is the largest over the trials;
/// a reference of the wrong size makes its measures NaN (which
/// judgeNumerics() reads as not measured).
Sensitivity measureSensitivity(const SdpaProblem &p, const HostTensor &q,
                               const HostTensor &k, const HostTensor &v,
                               const HostTensor *mask,
                               const std::vector<double> &refOut,
                               const std::vector<double> *refLse,
                               int64_t rowStride = 1, uint64_t seed = 0,
                               int trials = 3);

struct ErrorStats {
  /// max |got - ref| over the compared elements.
  double maxAbs = 0;
  /// ||got - ref||_2 / ||ref||_2, or ||got - ref||_2 when ||ref||_2 == 0.
  double relL2 = 0;
  /// max |ref| over the finite reference elements.
  double refMaxAbs = 0;
  /// `got` holds a NaN where the reference does not.
  bool hasNaN = false;
  /// Number of elements compared (both-NaN elements are skipped).
  int64_t count = 0;
};

/// Compares `got` (any float type) element-wise to `ref`. A NaN in `got` where
/// `ref` is not NaN sets hasNaN and makes maxAbs and relL2 +inf; an element
/// where both are NaN is skipped; a NaN only in `ref` makes maxAbs and relL2
/// +inf. Equal infinities (-inf == -inf in an lse) count as error 0 and are
/// left out of ||ref||. A size mismatch gives count 0 and +inf errors.
ErrorStats compareToReference(const HostTensor &got,
                              const std::vector<double> &ref);
/// The same, with the reference given as a tensor (shapes must match).
ErrorStats compareTensors(const HostTensor &got, const HostTensor &ref);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_REFERENCE_H
