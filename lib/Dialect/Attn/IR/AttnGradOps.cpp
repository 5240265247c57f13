//===- AttnGradOps.cpp - attn dialect gradient operations -----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnGradOps.h"

#include "VerifyShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnGradOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

using verify::DimRule;
using verify::NamedType;

LogicalResult SdpaGradOp::verify() {
  if (failed(verify::denseTensors(*this)))
    return failure();
  // The forward's window and softcap are not attributes of the backward:
  // kept in the attribute dictionary they would be silently ignored.
  for (StringRef name : {"window", "softcap"})
    if ((*this)->hasAttr(name))
      return emitOpError() << "expected no '" << name
                           << "' attribute: the backward implements no " << name
                           << " (attn.sdpa's)";
  // Indices into `all` below, used by the dim rules.
  enum { Q, K, V, O, Lse, DO, DQ, DK, DV };
  NamedType all[] = {
      {"query", getQueryType()},
      {"key", getKeyType()},
      {"value", getValueType()},
      {"out", getOut().getType()},
      {"lse", getLse().getType()},
      {"d_out", getDOut().getType()},
      {"result d_query", getDQuery().getType()},
      {"result d_key", getDKey().getType()},
      {"result d_value", getDValue().getType()},
  };
  for (const NamedType &n : all) {
    int64_t rank = n.name == "lse" ? 3 : 4;
    if (n.type.getRank() != rank)
      return emitOpError() << "expected " << n.name << " to have rank " << rank
                           << ", but got rank " << n.type.getRank();
  }

  Type elt = all[Q].type.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
    return emitOpError() << "expected query element type to be f32, f16 or "
                            "bf16, but got "
                         << elt;
  for (const NamedType &n : all) {
    if (n.name == "lse") {
      if (!n.type.getElementType().isF32())
        return emitOpError() << "expected lse element type to be f32, but got "
                             << n.type.getElementType();
      continue;
    }
    if (n.type.getElementType() != elt)
      return emitOpError() << "expected " << n.name << " element type ("
                           << n.type.getElementType()
                           << ") to equal query element type (" << elt << ")";
  }

  // Heads and head dims drive the GQA mapping, the default scale and the
  // tile shapes, as for attn.sdpa.
  if (failed(verify::staticHeadDims(*this, {all[Q], all[K], all[V]}, 1, 3)))
    return failure();

  const DimRule rules[] = {
      // key [B, Hkv, Lk, D], value [B, Hkv, Lk, Dv].
      {K, 0, Q, 0},
      {K, 3, Q, 3},
      {V, 0, Q, 0},
      {V, 1, K, 1},
      {V, 2, K, 2},
      // out and d_out [B, Hq, Lq, Dv]; lse [B, Hq, Lq].
      {O, 0, Q, 0},
      {O, 1, Q, 1},
      {O, 2, Q, 2},
      {O, 3, V, 3},
      {Lse, 0, Q, 0},
      {Lse, 1, Q, 1},
      {Lse, 2, Q, 2},
      {DO, 0, O, 0},
      {DO, 1, O, 1},
      {DO, 2, O, 2},
      {DO, 3, O, 3},
      // Each gradient has the shape of what it differentiates.
      {DQ, 0, Q, 0},
      {DQ, 1, Q, 1},
      {DQ, 2, Q, 2},
      {DQ, 3, Q, 3},
      {DK, 0, K, 0},
      {DK, 1, K, 1},
      {DK, 2, K, 2},
      {DK, 3, K, 3},
      {DV, 0, V, 0},
      {DV, 1, V, 1},
      {DV, 2, V, 2},
      {DV, 3, V, 3},
  };
  if (failed(verify::dimRules(*this, all, rules)))
    return failure();

  int64_t hq = all[Q].type.getDimSize(1), hkv = all[K].type.getDimSize(1);
  if (failed(verify::heads(*this, hq, hkv)) ||
      failed(verify::positiveHeadDims(*this, all[Q].type, all[V].type, 3)))
    return failure();

  if (Value mask = getMask())
    if (failed(verify::mask(*this, cast<RankedTensorType>(mask.getType()), elt,
                            {all[Q].type.getDimSize(0), hq,
                             all[Q].type.getDimSize(2),
                             all[K].type.getDimSize(2)})))
      return failure();

  return verify::scoreAttributes(*this, std::nullopt, nullptr, getScaleAttr());
}
