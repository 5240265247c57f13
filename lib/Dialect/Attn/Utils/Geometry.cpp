//===- Geometry.cpp - the keys each query row sees ------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/Geometry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

std::optional<VisibleBand> mlir::attn::getVisibleBand(AttentionOpInterface op) {
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

int64_t mlir::attn::clampKeyLength(int64_t length, int64_t lk) {
  return std::min(std::max<int64_t>(length, 0), lk);
}

Value mlir::attn::buildDiagonalShift(OpBuilder &b, Location loc,
                                     const VisibleBand &band, Value lq,
                                     Value keyLen) {
  // Folded where both sizes are static, so that passes see the shift as a
  // constant (the tiling's diagonal blocks).
  if (band.isBottomRight())
    return b.createOrFold<arith::SubIOp>(loc, keyLen, lq);
  return arith::ConstantIndexOp::create(b, loc, 0);
}

Value mlir::attn::buildDiagonal(OpBuilder &b, Location loc, Value row,
                                Value diagShift) {
  if (!diagShift)
    return row;
  return arith::AddIOp::create(b, loc, row, diagShift);
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

Value mlir::attn::buildFirstVisibleKey(OpBuilder &b, Location loc,
                                       const VisibleBand &band, Value diag) {
  if (!band.left)
    return Value();
  Value left = arith::ConstantIndexOp::create(b, loc, *band.left);
  return arith::SubIOp::create(b, loc, diag, left);
}

Value mlir::attn::buildVisibleKeyEnd(OpBuilder &b, Location loc,
                                     const VisibleBand &band, Value diag) {
  if (!band.right)
    return Value();
  Value rightPlusOne = arith::ConstantIndexOp::create(b, loc, *band.right + 1);
  return arith::AddIOp::create(b, loc, diag, rightPlusOne);
}

Value mlir::attn::buildFirstVisibleRow(OpBuilder &b, Location loc,
                                       const VisibleBand &band, Value diagShift,
                                       Value key) {
  if (!band.right)
    return Value();
  Value row = arith::SubIOp::create(b, loc, key, diagShift);
  if (*band.right == 0)
    return row;
  Value right = arith::ConstantIndexOp::create(b, loc, *band.right);
  return arith::SubIOp::create(b, loc, row, right);
}

Value mlir::attn::buildFirstUnmaskedBlock(OpBuilder &b, Location loc,
                                          const VisibleBand &band,
                                          Value lastDiag, Value blockSize) {
  Value low = buildFirstVisibleKey(b, loc, band, lastDiag);
  if (!low)
    return Value();
  return arith::CeilDivSIOp::create(b, loc, low, blockSize);
}

Value mlir::attn::buildUnmaskedBlockEnd(OpBuilder &b, Location loc,
                                        const VisibleBand &band,
                                        Value firstDiag, Value blockSize) {
  Value high = buildVisibleKeyEnd(b, loc, band, firstDiag);
  if (!high)
    return Value();
  return arith::FloorDivSIOp::create(b, loc, high, blockSize);
}

Value mlir::attn::buildClampedKeyLength(OpBuilder &b, Location loc,
                                        Value length, Value lk) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, index, zero), lk);
}

Value mlir::attn::buildKeyLength(OpBuilder &b, Location loc, Value keyLengths,
                                 Value batch, Value lk) {
  Value length = tensor::ExtractOp::create(b, loc, keyLengths, batch);
  return buildClampedKeyLength(b, loc, length, lk);
}
