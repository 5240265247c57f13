//===- Utils.h - helpers shared by the attn lowerings -----------*- C++ -*-===//
//
// Part of the attn project.
//
// What the naive lowering (convert-attn-to-linalg) and the fused one
// (attn-tile-online-softmax) build the same way: mask reads, f32 fills,
// iterator lists, the results' types and the diagnostic for an op left
// behind. Sizes and f32 extension come from upstream
// (tensor::getMixedSize, convertScalarToDtype).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_UTILS_H
#define ATTN_DIALECT_ATTN_UTILS_UTILS_H

#include "attn/Tuning/Tuning.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <utility>

namespace mlir::attn {

/// A hidden score.
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Coefficients of a^15, a^13, ..., a^3 in tanh's Taylor series, highest
/// first (Horner order): the small-argument branch of the softcap's tanh in
/// the CPU and GPU kernels (CpuScoreModifiers, GpuScoreModifiers).
inline constexpr double kTanhTaylorCoefficients[] = {-929569.0 / 638512875.0,
                                                     21844.0 / 6081075.0,
                                                     -1382.0 / 155925.0,
                                                     62.0 / 2835.0,
                                                     -17.0 / 315.0,
                                                     2.0 / 15.0,
                                                     -1.0 / 3.0};

/// `numParallel` parallel iterators followed by `numReduction` reductions.
SmallVector<utils::IteratorType> getIteratorTypes(unsigned numParallel,
                                                  unsigned numReduction);

/// An f32 constant.
Value createF32Constant(OpBuilder &b, Location loc, float value);

/// An f32 tensor of `shape` filled with `value` (tensor.empty + linalg.fill).
Value createFilledF32Tensor(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> shape, float value);

/// The body of a linalg.generic that multiplies and accumulates in f32:
/// yields args[2] + f32(args[0]) * f32(args[1]) (f16/bf16 inputs are
/// extended; f32 ones are used as they are). Both products of both lowerings
/// (Q.K^T and P.V) have this body.
void buildMultiplyAccumulateBody(OpBuilder &b, Location loc, ValueRange args);

/// The last index (size - 1) of every dynamic dim of the rank-4 `mask`, null
/// for its static dims: a dynamic mask dim may be 1 at run time, where it
/// broadcasts. Build once, outside the loop that reads the mask.
SmallVector<Value> getDynamicMaskLastIndices(OpBuilder &b, Location loc,
                                             Value mask);

/// The index at which the mask is read along `dim` for the score at
/// `index`: 0 for a static size-1 (broadcast) dim, min(index, last) for a
/// dynamic dim (which is 0 where it is 1 at run time), `index` otherwise.
Value clampMaskIndex(OpBuilder &b, Location loc, RankedTensorType maskType,
                     ArrayRef<Value> dynamicLastIndices, int64_t dim,
                     Value index);

/// Replaces `op` with `values`, each cast (tensor.cast) to the type of the
/// op's result where it differs: the values were built from the operands'
/// shapes, and the op's result types may be more or less static than that.
void replaceOpWithCastValues(RewriterBase &rewriter, Operation *op,
                             ValueRange values);

/// An integer option of a pass, its value and the bounds Tuning.td states
/// for its knob (tuning::bounds::k<Record>).
struct BoundedOption {
  StringRef name;
  int64_t value;
  const tuning::IntBounds &bounds;
};

/// Fails with one diagnostic at `loc` (no op attached: it is the options
/// that are wrong, not the IR), "<passName>: <name> (<value>) must be ...",
/// for the first of `options` outside its bounds.
LogicalResult verifyOptionBounds(Location loc, StringRef passName,
                                 ArrayRef<BoundedOption> options);

/// Emits `message` on the first attn.sdpa left under `root` and fails if
/// there is one: a lowering that leaves one behind must say which.
LogicalResult reportSdpaLeft(Operation *root, StringRef message);

/// The naive lowerings' f32 tables [B, Hq, Lq, Lk] must be addressable:
/// with static dims whose product overflows, an allocation size would wrap.
/// Succeeds when the static dims of `dims` (dynamic ones ignored) times 4
/// bytes fit in 2^63; else emits "expected the f32 <what> [B, Hq, Lq, Lk]
/// to fit in 2^63 bytes" on `op`.
LogicalResult checkF32TableSize(Operation *op, StringRef what,
                                ArrayRef<int64_t> dims);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_UTILS_H
