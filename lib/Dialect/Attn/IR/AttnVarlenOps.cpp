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

/// What attn.sdpa_varlen and attn.sdpa_varlen_grad check alike, on `all`
/// whose first seven are query, key, value, cu_seqlens_q, cu_seqlens_k,
/// out and lse (null: absent), each with its rank already checked: static
/// heads and head dims (they drive the GQA mapping, the default scale and
/// the inner ops' types), the packed dims that must agree (with `more`
/// rules of the op's own), B + 1 >= 1 offsets, the GQA ratio and positive
/// head dims.
static LogicalResult verifyPacked(Operation *op, ArrayRef<NamedType> all,
                                  ArrayRef<DimRule> more) {
  enum { Q, K, V, CuQ, CuK, O, Lse };
  if (failed(verify::staticHeadDims(op, {all[Q], all[K], all[V]}, 1, 2)))
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
  if (all[Lse].type) {
    // lse [Hq, total_q].
    rules.push_back({Lse, 0, Q, 1});
    rules.push_back({Lse, 1, Q, 0});
  }
  rules.append(more.begin(), more.end());
  if (failed(verify::dimRules(op, all, rules)))
    return failure();
  if (all[CuQ].type.getDimSize(0) == 0)
    return op->emitOpError() << "expected cu_seqlens_q to hold B + 1 >= 1 "
                                "offsets, but got 0";
  return failure(
      failed(verify::heads(op, all[Q].type.getDimSize(1),
                           all[K].type.getDimSize(1))) ||
      failed(verify::positiveHeadDims(op, all[Q].type, all[V].type, 2)));
}

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

  if (failed(verifyPacked(*this, all, {})))
    return failure();
  int64_t hq = all[Q].type.getDimSize(1);

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

LogicalResult SdpaVarlenGradOp::verify() {
  // The first seven in the order verify::ranksAndElementTypes takes them.
  enum { Q, K, V, CuQ, CuK, O, Lse, DO, DQ, DK, DV };
  NamedType all[] = {
      {"query", getQuery().getType()},
      {"key", getKey().getType()},
      {"value", getValue().getType()},
      {"cu_seqlens_q", getCuSeqlensQ().getType()},
      {"cu_seqlens_k", getCuSeqlensK().getType()},
      {"out", getOut().getType()},
      {"lse", getLse().getType()},
      {"d_out", getDOut().getType()},
      {"result d_query", cast<RankedTensorType>(getDQuery().getType())},
      {"result d_key", cast<RankedTensorType>(getDKey().getType())},
      {"result d_value", cast<RankedTensorType>(getDValue().getType())},
  };
  if (failed(verify::ranksAndElementTypes(*this, ArrayRef(all).take_front(7),
                                          {3, 3, 3, 1, 1, 3, 2})))
    return failure();
  Type elt = all[Q].type.getElementType();
  for (unsigned t : {DO, DQ, DK, DV}) {
    if (all[t].type.getRank() != 3)
      return emitOpError() << "expected " << all[t].name
                           << " to have rank 3, but got rank "
                           << all[t].type.getRank();
    if (all[t].type.getElementType() != elt)
      return emitOpError() << "expected " << all[t].name << " element type ("
                           << all[t].type.getElementType()
                           << ") to equal query element type (" << elt << ")";
  }

  SmallVector<DimRule> rules = {
      // d_out [total_q, Hq, Dv], as out.
      {DO, 0, O, 0},
      {DO, 1, O, 1},
      {DO, 2, O, 2},
  };
  // Each gradient has the shape of what it differentiates.
  for (auto [grad, of] : {std::pair{DQ, Q}, {DK, K}, {DV, V}})
    for (unsigned d = 0; d < 3; ++d)
      rules.push_back(
          {static_cast<unsigned>(grad), d, static_cast<unsigned>(of), d});
  if (failed(verifyPacked(*this, all, rules)))
    return failure();
  return verify::scoreAttributes(*this, std::nullopt, nullptr, getScaleAttr());
}
