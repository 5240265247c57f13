//===- GpuScoreModifiers.cpp - attention variants in the GPU kernels ------===//
//
// Part of the attn project.
//
// The attention variants of attn.sdpa as both GPU kernels (the f32 FMA
// kernel and the tensor-core kernel) apply them, with the semantics of the
// naive lowering and of the CPU tiling:
//  - the causal/window band and per-sequence key lengths decide which keys a
//    block of query rows visits at all (keyTiles, keySpan) and which of
//    those need element masks: the band's edges from Geometry.h, clamped as
//    these kernels' loops need;
//  - softcap and ALiBi change every score, in the kernels' base-2 units
//    (scores are log2(e) times the natural ones: so are the cap and the
//    slope, and the formulas keep their form).
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

static Value idx(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// clamp(x, lo, hi) on signed indices.
static Value clampIndex(OpBuilder &b, Location loc, Value x, Value lo,
                        Value hi) {
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, x, lo),
                                hi);
}

GpuSequence gpu_kernels::locateSequence(OpBuilder &b, const GpuSdpa &sdpa,
                                        Value batch, Value head) {
  Location loc = sdpa.loc;
  GpuSequence seq;
  seq.keyLen = sdpa.lk;
  if (sdpa.keyLengths) {
    Value length = memref::LoadOp::create(b, loc, sdpa.keyLengths, batch);
    seq.keyLen = buildClampedKeyLength(b, loc, length, sdpa.lk);
  }
  // Bottom-right diagonals (causal, or a window without causal) sit at the
  // sequence's own last key; ALiBi's distance uses the same diagonal.
  Value bottomRight = arith::SubIOp::create(b, loc, seq.keyLen, sdpa.lq);
  if (sdpa.band)
    seq.diagShift = sdpa.band->isBottomRight() ? bottomRight : idx(b, loc, 0);
  if (sdpa.alibiSlopes) {
    auto type = cast<MemRefType>(sdpa.alibiSlopes.getType());
    SmallVector<Value, 2> indices;
    if (type.getRank() == 2)
      indices.push_back(batch);
    indices.push_back(head);
    Value slope = memref::LoadOp::create(b, loc, sdpa.alibiSlopes, indices);
    seq.alibiSlope = arith::MulFOp::create(
        b, loc, slope, createF32Constant(b, loc, float(kLog2E)));
    seq.alibiShift = bottomRight;
  }
  return seq;
}

KeySpan gpu_kernels::keySpan(OpBuilder &b, const GpuSdpa &sdpa,
                             const GpuSequence &seq, Value firstRow,
                             Value lastRow) {
  Location loc = sdpa.loc;
  Value zero = idx(b, loc, 0);
  KeySpan span{zero, seq.keyLen};
  if (!sdpa.band)
    return span;
  // Keys <= lastRow + shift + right and >= firstRow + shift - left.
  if (sdpa.band->right) {
    Value end = buildVisibleKeyEnd(
        b, loc, *sdpa.band, buildDiagonal(b, loc, lastRow, seq.diagShift));
    span.end = clampIndex(b, loc, end, zero, seq.keyLen);
  }
  if (sdpa.band->left) {
    Value begin = buildFirstVisibleKey(
        b, loc, *sdpa.band, buildDiagonal(b, loc, firstRow, seq.diagShift));
    span.begin = clampIndex(b, loc, begin, zero, span.end);
  }
  return span;
}

KeyTiles gpu_kernels::keyTiles(OpBuilder &b, const GpuSdpa &sdpa,
                               const GpuSequence &seq, Value firstRow,
                               Value lastRow, int64_t blockKV) {
  Location loc = sdpa.loc;
  Value bk = idx(b, loc, blockKV);
  KeySpan span = keySpan(b, sdpa, seq, firstRow, lastRow);
  KeyTiles tiles;
  tiles.first = arith::DivUIOp::create(b, loc, span.begin, bk);
  tiles.end = arith::CeilDivUIOp::create(b, loc, span.end, bk);
  // A tile that every row sees whole: inside [0, keyLen), at or above the
  // last row's lower band edge and at or below the first row's upper edge.
  Value fullTiles = arith::DivUIOp::create(b, loc, seq.keyLen, bk);
  tiles.unmaskedBegin = tiles.first;
  tiles.unmaskedEnd = fullTiles;
  if (!sdpa.band)
    return tiles;
  if (sdpa.band->left) {
    Value n = buildFirstUnmaskedBlock(
        b, loc, *sdpa.band, buildDiagonal(b, loc, lastRow, seq.diagShift), bk);
    tiles.unmaskedBegin = arith::MaxSIOp::create(b, loc, n, tiles.first);
  }
  if (sdpa.band->right) {
    Value n = buildUnmaskedBlockEnd(
        b, loc, *sdpa.band, buildDiagonal(b, loc, firstRow, seq.diagShift), bk);
    tiles.unmaskedEnd = arith::MinSIOp::create(b, loc, n, fullTiles);
  }
  return tiles;
}

Value gpu_kernels::keyVisible(OpBuilder &b, const GpuSdpa &sdpa,
                              const GpuSequence &seq, Value row, Value key) {
  Location loc = sdpa.loc;
  Value visible =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key, seq.keyLen);
  if (!sdpa.band)
    return visible;
  Value diag = buildDiagonal(b, loc, row, seq.diagShift);
  return arith::AndIOp::create(
      b, loc, visible, buildBandPredicate(b, loc, *sdpa.band, diag, key));
}

Value gpu_kernels::maskScore(OpBuilder &b, const GpuSdpa &sdpa,
                             const GpuSequence &seq, Value batch, Value head,
                             Value s, Value row, Value maskRow, Value key,
                             Value lastKey) {
  Location loc = sdpa.loc;
  Value visible = keyVisible(b, sdpa, seq, row, key);
  if (sdpa.mask) {
    Value m = readMask(b, sdpa, batch, head, maskRow,
                       arith::MinUIOp::create(b, loc, key, lastKey));
    if (sdpa.boolMask)
      visible = arith::AndIOp::create(b, loc, visible, m);
    else
      s = arith::AddFOp::create(b, loc, s, m);
  }
  return arith::SelectOp::create(b, loc, visible, s,
                                 createF32Constant(b, loc, kNegInf));
}

/// tanh(x) = sign(x) t(|x|), as the CPU kernels build it (CpuScoreModifiers):
///   t(a) = a + a^3 P(a^2), P the Taylor series of (tanh(a) - a) / a^3 to
///          its a^15 term, for a < 0.55 (truncation error < 2.3e-8);
///   t(a) = (1 - e) / (1 + e), e = exp2(-2 a log2(e)), for a >= 0.55, where
///          1 - e >= 0.66 does not cancel.
/// On the GPU exp2 is ex2.approx.f32 (relative error about 2^-22) and the
/// division a reciprocal (rcp.approx.ftz.f32, 1 ulp; 1 + e is in [1, 2]),
/// so t has an absolute error of a few 1e-7: the score moves by a few 1e-7
/// times the cap, below SPEC's f32 and f16 budgets, where tanh.approx.f32
/// (relative error 2^-10.99) would move a score of magnitude s by up to
/// 5e-4 s, about the f16 output rounding itself. NaN propagates (second
/// branch); +-inf gives +-1.
static Value fastTanh(OpBuilder &b, Location loc, Value x) {
  auto c = [&](double v) { return createF32Constant(b, loc, float(v)); };
  Value a = math::AbsFOp::create(b, loc, x);
  Value a2 = arith::MulFOp::create(b, loc, a, a);
  ArrayRef<double> coeffs(kTanhTaylorCoefficients);
  Value p = c(coeffs[0]);
  for (double coeff : coeffs.drop_front())
    p = math::FmaOp::create(b, loc, p, a2, c(coeff));
  Value a3 = arith::MulFOp::create(b, loc, a2, a);
  Value small = math::FmaOp::create(b, loc, a3, p, a);
  Value e = math::Exp2Op::create(
      b, loc, arith::MulFOp::create(b, loc, a, c(-2.0 * kLog2E)));
  Value one = c(1.0);
  Value inv = NVVM::RcpApproxFtzF32Op::create(
      b, loc, b.getF32Type(), arith::AddFOp::create(b, loc, one, e));
  Value large =
      arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, one, e), inv);
  Value isSmall =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a, c(0.55));
  Value t = arith::SelectOp::create(b, loc, isSmall, small, large);
  return math::CopySignOp::create(b, loc, t, x);
}

Value gpu_kernels::indexToF32(OpBuilder &b, Location loc, Value index) {
  // |i + keyLen - Lq - j| < 2^31 (a sequence is far shorter): i32, then f32
  // (exact to 2^24, as the CPU path's buildAlibi).
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF32Type(), asInt);
}

Value gpu_kernels::modifyScore(OpBuilder &b, const GpuSdpa &sdpa,
                               const GpuSequence &seq, Value s,
                               Value diagMinusKey) {
  Location loc = sdpa.loc;
  if (sdpa.softcap) {
    Value t =
        fastTanh(b, loc,
                 arith::MulFOp::create(
                     b, loc, s, createF32Constant(b, loc, 1 / *sdpa.softcap)));
    s = arith::MulFOp::create(b, loc, t,
                              createF32Constant(b, loc, *sdpa.softcap));
  }
  if (seq.alibiSlope) {
    Value distance = math::AbsFOp::create(b, loc, diagMinusKey);
    s = math::FmaOp::create(
        b, loc, arith::NegFOp::create(b, loc, seq.alibiSlope), distance, s);
  }
  return s;
}
