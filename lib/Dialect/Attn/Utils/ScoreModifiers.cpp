//===- ScoreModifiers.cpp - attention variants shared by lowerings --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::buildSoftcap(OpBuilder &b, Location loc, Value s, float cap) {
  Value capValue = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(cap));
  Value inv = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / cap));
  Value t = math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, s, inv));
  return arith::MulFOp::create(b, loc, t, capValue);
}

Value mlir::attn::buildAlibiSlope(OpBuilder &b, Location loc, Value slopes,
                                  Value batch, Value head) {
  if (cast<RankedTensorType>(slopes.getType()).getRank() == 1)
    return tensor::ExtractOp::create(b, loc, slopes, head);
  return tensor::ExtractOp::create(b, loc, slopes, ValueRange{batch, head});
}

Value mlir::attn::buildAlibi(OpBuilder &b, Location loc, Value s, Value slope,
                             Value diag, Value key) {
  // |diag - key| < 2^31 (a tensor has at most 2^40 elements, a sequence far
  // fewer than 2^31): i32 and then f32, which holds it exactly to 2^24.
  Value distance = arith::SubIOp::create(b, loc, diag, key);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI32Type(), distance);
  Value asFloat = arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
  Value bias = arith::MulFOp::create(b, loc, slope,
                                     math::AbsFOp::create(b, loc, asFloat));
  return arith::SubFOp::create(b, loc, s, bias);
}
