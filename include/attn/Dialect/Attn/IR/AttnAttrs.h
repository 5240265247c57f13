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

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
