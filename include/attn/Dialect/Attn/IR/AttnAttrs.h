//===- AttnAttrs.h - attn dialect attributes --------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir {
class Operation;
namespace attn {

/// Tags `op` as the tile op (or buffer fill) with `role` in the
/// online-softmax loops: the discardable attribute `attn.tile`.
void setTileRole(Operation *op, TileRole role);

/// The role `op` was tagged with by setTileRole, if any.
std::optional<TileRole> getTileRole(Operation *op);

/// A target's plan for the tiling of one attn.sdpa: the discardable
/// attribute `attn.tiling`, a dictionary of `block_q` and `block_kv` (i64,
/// positive; absent: the tiling pass's own) and the unit entries
/// `transpose_values`, `pair_values`, `split_f16` and `f16_tiles` (the K/V
/// layouts the target's kernels read; docs/passes.md).
struct TilingPlan {
  std::optional<int64_t> blockQ, blockKV;
  bool transposeValues = false, pairValues = false, splitF16 = false,
       f16Tiles = false;

  /// Whether the plan asks for nothing (no attribute is set for it).
  bool empty() const;
};

/// Sets `op`'s `attn.tiling` to `plan` (removes it for an empty plan).
void setTilingPlan(Operation *op, const TilingPlan &plan);

/// The plan `op` carries (an empty one without `attn.tiling`). The
/// attribute is verified with the op (AttnDialect::verifyOperationAttribute).
TilingPlan getTilingPlan(Operation *op);

/// Checks that `attr` is a valid `attn.tiling` value, reporting on `op`.
LogicalResult verifyTilingPlan(Operation *op, Attribute attr);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
