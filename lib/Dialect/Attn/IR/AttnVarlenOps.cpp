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
  if (failed(verify::denseTensors(*this)))
    return failure();
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
  if (failed(verify::ranksAndElementTypes(*this, all, {3, 3, 3, 1, 1, 3, 2})))
    return failure();

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
