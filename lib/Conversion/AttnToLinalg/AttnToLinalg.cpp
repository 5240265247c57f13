//===- AttnToLinalg.cpp - attn.sdpa to linalg on tensors (naive) ----------===//
//
// Part of the attn project.
//
// The reference lowering: every step of the formula is its own linalg.generic
// over the materialized [B, Hq, Lq, Lk] score table. It favours being
// obviously right over being fast; the fused lowering is checked against it.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToLinalg.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"
#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Sizes shared by the helpers: dims of [B, Hq, Lq, Lk] and Dv as index
/// values or attributes, ready for tensor.empty.
struct SdpaDims {
  OpFoldResult batch, hq, lq, lk, dv;
};

/// The key/value head that query head `h` reads: h floordiv (Hq/Hkv).
static AffineExpr kvHead(AffineExpr h, int64_t group) {
  return group == 1 ? h : h.floorDiv(group);
}

/// S[b,h,i,j] = sum_d Q[b,h,i,d] * K[b,h/g,j,d], in f32.
static Value computeScores(OpBuilder &b, Location loc, SdpaOp op,
                           const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  AffineExpr bb, h, i, j, d;
  bindDims(context, bb, h, i, j, d);
  int64_t group = op.getGroupSize();
  auto qMap = AffineMap::get(5, 0, {bb, h, i, d}, context);
  auto kMap = AffineMap::get(5, 0, {bb, kvHead(h, group), j, d}, context);
  auto sMap = AffineMap::get(5, 0, {bb, h, i, j}, context);
  Value init = createFilledF32Tensor(
      b, loc, {dims.batch, dims.hq, dims.lq, dims.lk}, 0.0f);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{op.getQuery(), op.getKey()}, init,
      ArrayRef<AffineMap>{qMap, kMap, sMap}, getIteratorTypes(4, 1),
      buildMultiplyAccumulateBody);
  return generic.getResult(0);
}

/// Applies scale, the softcap, the mask, the causal and window rules and the
/// key lengths to the scores; hidden entries become -inf.
static Value applyScaleMaskAndCausal(OpBuilder &b, Location loc, SdpaOp op,
                                     Value scores, const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  SmallVector<Value> inputs = {scores};
  SmallVector<AffineMap> maps = {id4};
  Value mask = op.getMask();
  // A broadcast (static size-1) mask dim always reads index 0, through the
  // indexing map. A dynamic mask dim may turn out to be 1 at run time: then
  // the mask is read in the body at min(index, size - 1), which is index 0
  // for a size-1 dim and the index itself for a full one.
  auto maskType = mask ? cast<RankedTensorType>(mask.getType()) : nullptr;
  bool maskInBody = maskType && !maskType.hasStaticShape();
  SmallVector<Value> maskLast;
  if (maskInBody)
    maskLast = getDynamicMaskLastIndices(b, loc, mask);
  if (mask && !maskInBody) {
    SmallVector<AffineExpr> exprs;
    for (int64_t k = 0; k < 4; ++k)
      exprs.push_back(maskType.getDimSize(k) == 1
                          ? getAffineConstantExpr(0, context)
                          : getAffineDimExpr(k, context));
    inputs.push_back(mask);
    maps.push_back(AffineMap::get(4, 0, exprs, context));
  }
  maps.push_back(id4);

  // The causal and window rules: a band around the diagonal, which the
  // bottom-right alignment shifts by Lk - Lq.
  std::optional<VisibleBand> band = getVisibleBand(op);
  Value lqValue = getValueOrCreateConstantIndexOp(b, loc, dims.lq);
  Value lkValue = getValueOrCreateConstantIndexOp(b, loc, dims.lk);
  Value diagShift;
  if (band)
    diagShift = buildDiagonalShift(b, loc, *band, lqValue, lkValue);
  // Per-sequence key lengths: keys past the batch's length are hidden, and
  // the bottom-right diagonal sits at that length instead of Lk.
  Value keyLengths = op.getKeyLengths();
  Value slopes = op.getAlibiSlopes();
  float scale = op.getEffectiveScale();
  std::optional<float> softcap;
  if (std::optional<APFloat> cap = op.getSoftcap())
    softcap = cap->convertToFloat();
  bool boolMask = op.hasBoolMask();
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{dims.batch, dims.hq, dims.lq, dims.lk},
      b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, getIteratorTypes(4, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value negInf = createF32Constant(nb, nloc, kNegInf);
        Value s = arith::MulFOp::create(nb, nloc, args[0],
                                        createF32Constant(nb, nloc, scale));
        if (softcap)
          s = buildSoftcap(nb, nloc, s, *softcap);
        // ALiBi: s - slope * |i + Lk - Lq - j|, Lk the batch's key length.
        if (slopes) {
          Value bIdx = linalg::IndexOp::create(nb, nloc, 0);
          Value slope = buildAlibiSlope(nb, nloc, slopes, bIdx,
                                        linalg::IndexOp::create(nb, nloc, 1));
          Value len = keyLengths
                          ? buildKeyLength(nb, nloc, keyLengths, bIdx, lkValue)
                          : lkValue;
          Value diag = arith::AddIOp::create(
              nb, nloc, linalg::IndexOp::create(nb, nloc, 2),
              arith::SubIOp::create(nb, nloc, len, lqValue));
          s = buildAlibi(nb, nloc, s, slope, diag,
                         linalg::IndexOp::create(nb, nloc, 3));
        }
        Value m = mask && !maskInBody ? args[1] : Value();
        if (maskInBody) {
          SmallVector<Value> idx;
          for (int64_t k = 0; k < 4; ++k)
            idx.push_back(clampMaskIndex(nb, nloc, maskType, maskLast, k,
                                         linalg::IndexOp::create(nb, nloc, k)));
          m = tensor::ExtractOp::create(nb, nloc, mask, idx);
        }
        if (mask && !boolMask)
          s = arith::AddFOp::create(
              nb, nloc, s,
              convertScalarToDtype(nb, nloc, m, nb.getF32Type(),
                                   /*isUnsignedCast=*/false));
        if (mask && boolMask)
          s = arith::SelectOp::create(nb, nloc, m, s, negInf);
        Value length;
        if (keyLengths)
          length =
              buildKeyLength(nb, nloc, keyLengths,
                             linalg::IndexOp::create(nb, nloc, 0), lkValue);
        if (band) {
          Value i = linalg::IndexOp::create(nb, nloc, 2);
          Value j = linalg::IndexOp::create(nb, nloc, 3);
          Value shift = diagShift;
          if (length && band->isBottomRight())
            shift = buildDiagonalShift(nb, nloc, *band, lqValue, length);
          Value diag = buildDiagonal(nb, nloc, i, shift);
          Value visible = buildBandPredicate(nb, nloc, *band, diag, j);
          s = arith::SelectOp::create(nb, nloc, visible, s, negInf);
        }
        if (length) {
          Value inRange = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt,
              linalg::IndexOp::create(nb, nloc, 3), length);
          s = arith::SelectOp::create(nb, nloc, inRange, s, negInf);
        }
        linalg::YieldOp::create(nb, nloc, s);
      });
  return generic.getResult(0);
}

/// Reduces the last dim of a [B,Hq,Lq,Lk] tensor into [B,Hq,Lq] with `init`
/// and the combiner `combine(acc, x)`.
static Value
reduceRows(OpBuilder &b, Location loc, Value input, const SdpaDims &dims,
           float init,
           function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *context = b.getContext();
  Value acc =
      createFilledF32Tensor(b, loc, {dims.batch, dims.hq, dims.lq}, init);
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  AffineMap rowMap = id4.getMajorSubMap(3);
  auto generic = linalg::GenericOp::create(
      b, loc, acc.getType(), input, acc, ArrayRef<AffineMap>{id4, rowMap},
      getIteratorTypes(3, 1),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args[1], args[0]));
      });
  return generic.getResult(0);
}

/// E = exp(S - m) with E = 0 where S is -inf (hidden), so that a row whose
/// max is -inf yields zeros instead of exp(-inf - -inf) = NaN.
static Value computeExpScores(OpBuilder &b, Location loc, Value scores,
                              Value rowMax, const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  AffineMap rowMap = id4.getMajorSubMap(3);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{dims.batch, dims.hq, dims.lq, dims.lk},
      b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{scores, rowMax}, init,
      ArrayRef<AffineMap>{id4, rowMap, id4}, getIteratorTypes(4, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value negInf = createF32Constant(nb, nloc, kNegInf);
        Value zero = createF32Constant(nb, nloc, 0);
        Value hidden = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OEQ, args[0], negInf);
        Value diff = arith::SubFOp::create(nb, nloc, args[0], args[1]);
        Value e = math::ExpOp::create(nb, nloc, diff);
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, hidden, zero, e).getResult());
      });
  return generic.getResult(0);
}

/// O[b,h,i,e] = sum_j E[b,h,i,j] * V[b,h/g,j,e], in f32.
static Value computeWeightedValues(OpBuilder &b, Location loc, SdpaOp op,
                                   Value expScores, const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  AffineExpr bb, h, i, e, j;
  bindDims(context, bb, h, i, e, j);
  int64_t group = op.getGroupSize();
  auto pMap = AffineMap::get(5, 0, {bb, h, i, j}, context);
  auto vMap = AffineMap::get(5, 0, {bb, kvHead(h, group), j, e}, context);
  auto oMap = AffineMap::get(5, 0, {bb, h, i, e}, context);
  Value init = createFilledF32Tensor(
      b, loc, {dims.batch, dims.hq, dims.lq, dims.dv}, 0.0f);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{expScores, op.getValue()}, init,
      ArrayRef<AffineMap>{pMap, vMap, oMap}, getIteratorTypes(4, 1),
      buildMultiplyAccumulateBody);
  return generic.getResult(0);
}

/// out = l == 0 ? 0 : O / l, rounded once to the result element type.
static Value normalizeOutput(OpBuilder &b, Location loc, SdpaOp op,
                             Value weighted, Value rowSum,
                             const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  AffineMap rowMap = id4.getMajorSubMap(3);
  Type outElt = op.getOutType().getElementType();
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{dims.batch, dims.hq, dims.lq, dims.dv},
      outElt);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{weighted, rowSum}, init,
      ArrayRef<AffineMap>{id4, rowMap, id4}, getIteratorTypes(4, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value zero = createF32Constant(nb, nloc, 0);
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[1], zero);
        Value div = arith::DivFOp::create(nb, nloc, args[0], args[1]);
        Value r = arith::SelectOp::create(nb, nloc, empty, zero, div);
        if (outElt != r.getType())
          r = arith::TruncFOp::create(nb, nloc, outElt, r);
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// lse = l == 0 ? -inf : m + log(l).
static Value computeLogSumExp(OpBuilder &b, Location loc, Value rowMax,
                              Value rowSum, const SdpaDims &dims) {
  MLIRContext *context = b.getContext();
  auto id3 = AffineMap::getMultiDimIdentityMap(3, context);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{dims.batch, dims.hq, dims.lq},
      b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{rowMax, rowSum}, init,
      ArrayRef<AffineMap>{id3, id3, id3}, getIteratorTypes(3, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value zero = createF32Constant(nb, nloc, 0);
        Value negInf = createF32Constant(nb, nloc, kNegInf);
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[1], zero);
        Value lse = arith::AddFOp::create(
            nb, nloc, args[0], math::LogOp::create(nb, nloc, args[1]));
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, empty, negInf, lse).getResult());
      });
  return generic.getResult(0);
}

/// The f32 score table [B, Hq, Lq, Lk] must be addressable.
static LogicalResult checkScoreTableSize(SdpaOp op) {
  return checkF32TableSize(
      op, "score table",
      {op.getQueryType().getDimSize(0), op.getQueryType().getDimSize(1),
       op.getQueryType().getDimSize(2), op.getKeyType().getDimSize(2)});
}

struct SdpaToLinalg : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkScoreTableSize(op)))
      return failure();
    Location loc = op.getLoc();
    SdpaDims dims;
    dims.batch = tensor::getMixedSize(rewriter, loc, op.getQuery(), 0);
    dims.hq = tensor::getMixedSize(rewriter, loc, op.getQuery(), 1);
    dims.lq = tensor::getMixedSize(rewriter, loc, op.getQuery(), 2);
    dims.lk = tensor::getMixedSize(rewriter, loc, op.getKey(), 2);
    dims.dv = tensor::getMixedSize(rewriter, loc, op.getValue(), 3);

    Value raw = computeScores(rewriter, loc, op, dims);
    Value scores = applyScaleMaskAndCausal(rewriter, loc, op, raw, dims);
    Value rowMax =
        reduceRows(rewriter, loc, scores, dims, kNegInf,
                   [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
                     return arith::MaximumFOp::create(b, l, acc, x);
                   });
    Value expScores = computeExpScores(rewriter, loc, scores, rowMax, dims);
    Value rowSum =
        reduceRows(rewriter, loc, expScores, dims, 0.0f,
                   [](OpBuilder &b, Location l, Value acc, Value x) -> Value {
                     return arith::AddFOp::create(b, l, acc, x);
                   });
    Value weighted = computeWeightedValues(rewriter, loc, op, expScores, dims);
    SmallVector<Value> results = {
        normalizeOutput(rewriter, loc, op, weighted, rowSum, dims)};
    if (op.getLse())
      results.push_back(computeLogSumExp(rewriter, loc, rowMax, rowSum, dims));
    replaceOpWithCastValues(rewriter, op, results);
    return success();
  }
};

struct ConvertAttnToLinalgPass
    : public attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Every op must have been lowered: anything left is a bug or an input
    // this lowering cannot express, and the user must hear which.
    if (failed(
            reportSdpaLeft(getOperation(), "could not be lowered to linalg")))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SdpaToLinalg>(patterns.getContext());
}
