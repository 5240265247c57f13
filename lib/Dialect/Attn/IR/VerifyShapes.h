//===- VerifyShapes.h - checks the attn ops' verifiers share ----*- C++ -*-===//
//
// Part of the attn project.
//
// attn.sdpa, attn.sdpa_grad and attn.sdpa_varlen check the same things in
// the same words: dims that must agree, grouped-query heads, the mask's
// broadcast dims and the score attributes (window, softcap, scale). One
// definition of each, here (private to the dialect's IR library).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_IR_VERIFYSHAPES_H
#define ATTN_LIB_DIALECT_ATTN_IR_VERIFYSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/APFloat.h"

#include <optional>

namespace mlir::attn::verify {

/// A tensor of the op by the name its diagnostics use (null: absent).
struct NamedType {
  StringRef name;
  RankedTensorType type;
};

/// "dim `lhsDim` of `lhs` equals dim `rhsDim` of `rhs`" (indices into the
/// NamedType array).
struct DimRule {
  unsigned lhs, lhsDim, rhs, rhsDim;
};

/// Fails on the first rule whose two dims are both static and differ:
/// "expected <lhs> dim <i> (<a>) to equal <rhs> dim <j> (<b>)".
LogicalResult dimRules(Operation *op, ArrayRef<NamedType> all,
                       ArrayRef<DimRule> rules);

/// Query heads must be a positive multiple of key/value heads.
LogicalResult heads(Operation *op, int64_t hq, int64_t hkv);

/// A rank-4 mask of i1, f32 or `elt` whose every dim is 1, dynamic, or the
/// matching dim of `full` = [B, Hq, Lq, Lk].
LogicalResult mask(Operation *op, RankedTensorType mask, Type elt,
                   ArrayRef<int64_t> full);

/// window: two values, each -1 or non-negative; softcap finite and positive;
/// scale finite and non-zero (each when present).
LogicalResult scoreAttributes(Operation *op,
                              std::optional<ArrayRef<int64_t>> window,
                              Attribute softcapAttr, Attribute scaleAttr);

} // namespace mlir::attn::verify

#endif // ATTN_LIB_DIALECT_ATTN_IR_VERIFYSHAPES_H
