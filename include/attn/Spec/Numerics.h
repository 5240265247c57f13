//===- Numerics.h - The numerics contract as pure functions -----*- C++ -*-===//
//
// docs/numerics.md's pass/fail rules for a result compared with an oracle,
// and the comparison of a result with a reference that holds only a sample
// of the query rows. Pure functions of the error measures, so that every
// bound can be unit-tested at its edges and every tool applies the same one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_NUMERICS_H
#define ATTN_EXECUTION_NUMERICS_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// The outcome of one numerics check.
struct Verdict {
  bool pass = false;
  /// The bound that was applied, for people, e.g. "rel_l2 <= 1e-5, max_abs <=
  /// 0.0001" or "rel_l2 <= 1e-5 + 4*sens 2.1e-07, max_abs <= 0.0001 + 4*sens
  /// 3e-07".
  std::string rule;
};

/// docs/numerics.md. `lowPrecisionOut`: the result is `out` of an f16/bf16
/// problem (`dtype` F16 or BF16), so the f16/bf16 row of the table applies:
/// pass iff no NaN, rel_l2 <= 2e-3 (F16) or 1.6e-2 (BF16) and, when
/// `naiveRelL2` (the naive lowering's rel_l2 against the same oracle) is
/// given, rel_l2 <= 2 * naiveRelL2 + 1e-6. Otherwise (f32 results, and lse
/// whatever the dtype) the f32 row applies: pass iff no NaN, rel_l2 <= 1e-5 +
/// 4 * sensRel and max_abs <= 1e-4 * max(1, refMaxAbs) + 4 * sensAbs, with
/// the input's sensitivity (measureSensitivity()) or zero when not measured;
/// a negative or non-finite sens counts as zero. `sensOutRel` (f16/bf16
/// gradients only: measureOutRoundingSensitivity()) widens the fixed f16/bf16
/// bound to bound + sensOutRel.
Verdict judgeNumerics(const ErrorStats &s, DType dtype, bool lowPrecisionOut,
                      std::optional<double> naiveRelL2, double sensRel,
                      double sensAbs, double sensOutRel = 0);

/// Compares rows i % rowStride == 0 of a [B, H, Lq, (Dv)] result with a
/// reference that holds only those (others NaN), as referenceSdpa() computes
/// it with the same rowStride. rowStride <= 1 compares everything
/// (compareToReference()). A result that is not rank 3 or 4, or a reference
/// of another size, gives count 0 and +inf errors.
ErrorStats compareSampled(const HostTensor &got, const std::vector<double> &ref,
                          int64_t rowStride);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_NUMERICS_H
