//===- ScoreModifiers.cpp - attention variants shared by lowerings --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

std::optional<VisibleBand> mlir::attn::getVisibleBand(SdpaOp op) {
  VisibleBand band;
  std::optional<CausalKind> causal = op.getCausalKind();
  // A window without causal is aligned bottom_right (FlashAttention's
  // window_size); with causal both rules share its diagonal.
  band.alignment = causal.value_or(CausalKind::BottomRight);
  if (causal)
    band.right = 0;
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow();
      window && window->size() == 2) {
    if ((*window)[0] >= 0)
      band.left = std::min((*window)[0], kMaxBandWidth);
    if ((*window)[1] >= 0)
      band.right = std::min(band.right.value_or(kMaxBandWidth),
                            std::min((*window)[1], kMaxBandWidth));
  }
  if (!band.left && !band.right)
    return std::nullopt;
  return band;
}

Value mlir::attn::buildDiagonalShift(OpBuilder &b, Location loc,
                                     const VisibleBand &band, Value lq,
                                     Value lk) {
  // Folded where both sizes are static, so that passes see the shift as a
  // constant (the tiling's diagonal blocks).
  if (band.alignment == CausalKind::BottomRight)
    return b.createOrFold<arith::SubIOp>(loc, lk, lq);
  return arith::ConstantIndexOp::create(b, loc, 0);
}

/// `c` as an index constant of `like`'s type (a vector splat for a vector).
static Value indexLike(OpBuilder &b, Location loc, Value like, int64_t c) {
  Type type = like.getType();
  if (auto vec = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vec, b.getIndexAttr(c)));
  return arith::ConstantIndexOp::create(b, loc, c);
}

Value mlir::attn::buildBandPredicate(OpBuilder &b, Location loc,
                                     const VisibleBand &band, Value diag,
                                     Value key) {
  Value visible;
  auto both = [&](Value cond) {
    visible = visible ? arith::AndIOp::create(b, loc, visible, cond).getResult()
                      : cond;
  };
  if (band.left) {
    Value low = arith::SubIOp::create(b, loc, diag,
                                      indexLike(b, loc, diag, *band.left));
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key, low));
  }
  if (band.right) {
    Value high = *band.right == 0
                     ? diag
                     : arith::AddIOp::create(
                           b, loc, diag, indexLike(b, loc, diag, *band.right))
                           .getResult();
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key, high));
  }
  return visible;
}

Value mlir::attn::buildSoftcap(OpBuilder &b, Location loc, Value s, float cap) {
  Value capValue = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(cap));
  Value inv = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / cap));
  Value t = math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, s, inv));
  return arith::MulFOp::create(b, loc, t, capValue);
}

Value mlir::attn::buildKeyLength(OpBuilder &b, Location loc, Value keyLengths,
                                 Value batch, Value lk) {
  Value length = tensor::ExtractOp::create(b, loc, keyLengths, batch);
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, zero), lk);
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
