//===- Sizes.h - proving that two dynamic sizes are the same value --------===//
//
// Part of the attn project.
//
// torch-mlir computes dynamic sizes with i64 arithmetic on index_casts of
// tensor.dim (with selects on `size < 0`, always false for a size) and passes
// them through tensor.empty, reshapes and destination operands. A Size is the
// canonical form of such a value: a constant, dim `dim` of the tensor `base`
// where the walk could not look further (a function argument, say), or a
// scalar the walk could not look into.
// Two values with the same canonical form are equal at run time, assuming a
// 64-bit index type (index_cast between index and i64 then keeps the value).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_SIZES_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_SIZES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::attn::raise {

/// A canonical size: `constant` when `base` is null; dim `dim` of the tensor
/// `base` (never negative); or, with dim == -1, the index/i64 value `base`
/// itself (an argument, say: equal only to itself).
struct Size {
  Value base;
  int64_t dim = 0;
  int64_t constant = 0;

  bool isConstant(int64_t c) const { return !base && constant == c; }
  bool isTensorDim() const { return base && dim >= 0; }
  bool operator==(const Size &o) const {
    return base == o.base && (base ? dim == o.dim : constant == o.constant);
  }
  /// The size as an index value at `b`'s insertion point.
  Value materialize(OpBuilder &b, Location loc) const;
};

/// The canonical form of an index or i64 value, if the walk knows it.
std::optional<Size> sizeOf(Value v);
/// The canonical form of dim `dim` of the ranked tensor `tensor`.
std::optional<Size> dimOf(Value tensor, int64_t dim);
/// Whether the i1 value `cond` is a known constant (through sizeOf).
std::optional<bool> knownCondition(Value cond);

/// Rewrites each tensor.reshape under `root` whose shape operand is a
/// tensor.from_elements of values provably equal to the source's sizes, up to
/// inserted or removed unit dims and static dims split or merged, into a
/// tensor.expand_shape or tensor.collapse_shape (the same row-major
/// reinterpretation). The others are left as they are.
void normalizeReshapes(Operation *root);

} // namespace mlir::attn::raise

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_SIZES_H
