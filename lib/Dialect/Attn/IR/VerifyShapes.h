//===- VerifyShapes.h - checks the attn ops' verifiers share ----*- C++ -*-===//
//
// Part of the attn project.
//
// attn.sdpa, attn.sdpa_grad and attn.sdpa_varlen check the same things in
// the same words: dims that must agree, static and positive head dims,
// grouped-query heads, the mask's broadcast dims, the ALiBi slopes and the
// score attributes (window, softcap, scale). One definition of each, here
// (private to the dialect's IR library).
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

/// The ranks and element types of an op whose tensors are, in order:
/// query, key, value (f32, f16 or bf16, all one type), two i32 index
/// tensors, out (the query's type) and lse (f32, null when absent); `ranks`
/// gives each one's rank. "expected <name> to have rank <r>, but got rank
/// <n>", "expected <name> element type (<t>) to equal query element type
/// (<q>)", "expected <name> element type to be i32, but got <t>".
/// Every operand and result of `op` a tensor without an encoding: the ops
/// read and write their tensors as dense row-major arrays, and a sparse (or
/// any other) encoding would be taken for one. "expected operand <i> to be a
/// dense tensor (no encoding), but got <type>".
LogicalResult denseTensors(Operation *op);

LogicalResult ranksAndElementTypes(Operation *op, ArrayRef<NamedType> all,
                                   ArrayRef<int64_t> ranks);

/// Fails on the first rule whose two dims are both static and differ:
/// "expected <lhs> dim <i> (<a>) to equal <rhs> dim <j> (<b>)".
LogicalResult dimRules(Operation *op, ArrayRef<NamedType> all,
                       ArrayRef<DimRule> rules);

/// Dims `headsDim` (heads) and `headDimDim` (head dim) of each of `tensors`
/// (query, key, value) must be static: "expected <name> dim <d> (heads) to be
/// static", "... (head dim) ...".
LogicalResult staticHeadDims(Operation *op, ArrayRef<NamedType> tensors,
                             unsigned headsDim, unsigned headDimDim);

/// Dim `dim` (the head dim) of query `q` and value `v` must be positive.
LogicalResult positiveHeadDims(Operation *op, RankedTensorType q,
                               RankedTensorType v, unsigned dim);

/// ALiBi slopes: an f32 tensor [Hq] or [B, Hq] whose last dim is `hq` (query
/// dim 1) and whose dim 0 (rank 2) is `batch`, each when both are static;
/// `batchName` says what `batch` is, up to its value ("query dim 0 (").
LogicalResult alibiSlopes(Operation *op, RankedTensorType slopes, int64_t hq,
                          int64_t batch, StringRef batchName);

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
