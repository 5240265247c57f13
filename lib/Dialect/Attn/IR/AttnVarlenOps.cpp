//===- AttnVarlenOps.cpp - attn.sdpa_varlen -------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"

#include "VerifyShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnVarlenOps.cpp.inc"

using verify::DimRule;
using verify::NamedType;

LogicalResult SdpaVarlenOp::verify() {
  enum { Q, K, V, CuQ, CuK, O, Lse };
  auto lseType =
      getLse() ? cast<RankedTensorType>(getLse().getType()) : nullptr;
  NamedType all[] = {
      {"query", getQuery().getType()},
      {"key", getKey().getType()},
      {"value", getValue().getType()},
      {"cu_seqlens_q", getCuSeqlensQ().getType()},
      {"cu_seqlens_k", getCuSeqlensK().getType()},
      {"out", cast<RankedTensorType>(getOut().getType())},
      {"lse", lseType},
  };
  const int64_t ranks[] = {3, 3, 3, 1, 1, 3, 2};
  for (unsigned t = Q; t <= Lse; ++t) {
    if (!all[t].type)
      continue;
    if (all[t].type.getRank() != ranks[t])
      return emitOpError() << "expected " << all[t].name << " to have rank "
                           << ranks[t] << ", but got rank "
                           << all[t].type.getRank();
  }

  Type elt = all[Q].type.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
    return emitOpError() << "expected query element type to be f32, f16 or "
                            "bf16, but got "
                         << elt;
  for (unsigned t : {K, V, O})
    if (all[t].type.getElementType() != elt)
      return emitOpError() << "expected " << all[t].name << " element type ("
                           << all[t].type.getElementType()
                           << ") to equal query element type (" << elt << ")";
  for (unsigned t : {CuQ, CuK})
    if (!all[t].type.getElementType().isInteger(32))
      return emitOpError() << "expected " << all[t].name
                           << " element type to be i32, but got "
                           << all[t].type.getElementType();
  if (lseType && !lseType.getElementType().isF32())
    return emitOpError() << "expected lse element type to be f32, but got "
                         << lseType.getElementType();

  // Heads and head dims drive the GQA mapping, the default scale and the
  // inner attn.sdpa's types.
  if (failed(verify::staticHeadDims(*this, {all[Q], all[K], all[V]}, 1, 2)))
    return failure();

  SmallVector<DimRule> rules = {
      // key [total_k, Hkv, D], value [total_k, Hkv, Dv].
      {K, 2, Q, 2},
      {V, 0, K, 0},
      {V, 1, K, 1},
      // out [total_q, Hq, Dv]; cu_seqlens both [B + 1].
      {O, 0, Q, 0},
      {O, 1, Q, 1},
      {O, 2, V, 2},
      {CuK, 0, CuQ, 0},
  };
  if (lseType) {
    // lse [Hq, total_q].
    rules.push_back({Lse, 0, Q, 1});
    rules.push_back({Lse, 1, Q, 0});
  }
  if (failed(verify::dimRules(*this, all, rules)))
    return failure();
  if (all[CuQ].type.getDimSize(0) == 0)
    return emitOpError() << "expected cu_seqlens_q to hold B + 1 >= 1 "
                            "offsets, but got 0";

  int64_t hq = all[Q].type.getDimSize(1), hkv = all[K].type.getDimSize(1);
  if (failed(verify::heads(*this, hq, hkv)) ||
      failed(verify::positiveHeadDims(*this, all[Q].type, all[V].type, 2)))
    return failure();

  // ALiBi slopes [Hq] or [B, Hq], B = the offsets' count - 1.
  if (Value slopes = getAlibiSlopes()) {
    int64_t offsets = all[CuQ].type.getDimSize(0);
    int64_t sequences =
        ShapedType::isDynamic(offsets) ? ShapedType::kDynamic : offsets - 1;
    if (failed(verify::alibiSlopes(
            *this, cast<RankedTensorType>(slopes.getType()), hq, sequences,
            "the number of sequences (cu_seqlens_q dim 0 - 1 = ")))
      return failure();
  }

  // The attributes mean what they mean on attn.sdpa, per sequence.
  return verify::scoreAttributes(*this, getWindow(), getSoftcapAttr(),
                                 getScaleAttr());
}
