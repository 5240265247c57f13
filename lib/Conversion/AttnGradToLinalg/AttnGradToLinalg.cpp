//===- AttnGradToLinalg.cpp - attn.sdpa_grad to linalg (naive) ------------===//
//
// Part of the attn project.
//
// The reference lowering of the backward pass: the probabilities P are
// recomputed from Q, K and the forward's lse as a materialized
// [B, Hq, Lq, Lk] table, and every product of the gradient formula is its
// own linalg.generic. Obviously right, O(L^2) memory: the oracle that the
// fused backward is checked against.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnGradToLinalg.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"
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
#define GEN_PASS_DEF_CONVERTATTNGRADTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The sizes of the problem as index values or attributes.
struct GradDims {
  OpFoldResult batch, hq, hkv, lq, lk, d, dv;
};

/// [B, Hq, X, Y] viewed as [B, Hkv, G, X, Y] (query head h = hk * G + g),
/// without a copy: the group's heads become a dim of their own, which the
/// dK and dV contractions reduce.
static Value expandHeads(OpBuilder &b, Location loc, Value t, int64_t hkv,
                         int64_t group) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0), hkv, group,
                                type.getDimSize(2), type.getDimSize(3)};
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, t, 0),
                                     b.getIndexAttr(hkv), b.getIndexAttr(group),
                                     tensor::getMixedSize(b, loc, t, 2),
                                     tensor::getMixedSize(b, loc, t, 3)};
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}, {4}};
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), t, groups,
      sizes);
}

/// The key/value head that query head `h` reads: h floordiv G.
static AffineExpr kvHead(AffineExpr h, int64_t group) {
  return group == 1 ? h : h.floorDiv(group);
}

/// A linalg.generic contraction accumulating in f32 into a zero tensor of
/// `shape`: out[outMap] += f32(a[aMap]) * f32(b[bMap]).
static Value contract(OpBuilder &b, Location loc, Value lhs, Value rhs,
                      ArrayRef<OpFoldResult> shape, ArrayRef<AffineMap> maps,
                      unsigned numParallel, unsigned numReduction) {
  Value init = createFilledF32Tensor(b, loc, shape, 0.0f);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{lhs, rhs}, init, maps,
      getIteratorTypes(numParallel, numReduction), buildMultiplyAccumulateBody);
  return generic.getResult(0);
}

/// S[b,h,i,j] = sum_d Q[b,h,i,d] * K[b,h/G,j,d], in f32.
static Value computeScores(OpBuilder &b, Location loc, SdpaGradOp op,
                           const GradDims &dims) {
  MLIRContext *context = b.getContext();
  AffineExpr bb, h, i, j, d;
  bindDims(context, bb, h, i, j, d);
  int64_t group = op.getGroupSize();
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {bb, h, i, d}, context),
      AffineMap::get(5, 0, {bb, kvHead(h, group), j, d}, context),
      AffineMap::get(5, 0, {bb, h, i, j}, context)};
  return contract(b, loc, op.getQuery(), op.getKey(),
                  {dims.batch, dims.hq, dims.lq, dims.lk}, maps, 4, 1);
}

/// P[b,h,i,j] = exp(scale * S + mask - lse[b,h,i]) where key j is visible
/// to query i (the i1 mask, the causal rule, a finite score) and the row
/// sees something (lse > -inf); 0 elsewhere.
static Value recomputeProbs(OpBuilder &b, Location loc, SdpaGradOp op,
                            Value scores, const GradDims &dims) {
  MLIRContext *context = b.getContext();
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  AffineMap rowMap = id4.getMajorSubMap(3);
  SmallVector<Value> inputs = {scores, op.getLse()};
  SmallVector<AffineMap> maps = {id4, rowMap};
  // The mask is read as attn.sdpa's naive lowering reads it: static size-1
  // dims through the indexing map, dynamic dims clamped in the body.
  Value mask = op.getMask();
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

  // The causal rule (sdpa_grad has no window) as the forward's band; a
  // top-left diagonal is the row itself.
  std::optional<VisibleBand> band = getVisibleBand(op);
  Value diagShift;
  if (band && band->isBottomRight()) {
    Value lq = getValueOrCreateConstantIndexOp(b, loc, dims.lq);
    Value lk = getValueOrCreateConstantIndexOp(b, loc, dims.lk);
    diagShift = buildDiagonalShift(b, loc, *band, lq, lk);
  }
  float scale = op.getEffectiveScale();
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
        Value lse = args[1];
        Value m = mask && !maskInBody ? args[2] : Value();
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
        // Visible: a score above -inf in a row that sees something, ...
        // (Each operand its own statement: the IR's order must not depend
        // on the compiler's order of evaluating arguments.)
        Value finite = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::UNE, s, negInf);
        Value rowSees = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::UNE, lse, negInf);
        Value visible = arith::AndIOp::create(nb, nloc, finite, rowSees);
        // ... that the i1 mask ...
        if (mask && boolMask)
          visible = arith::AndIOp::create(nb, nloc, visible, m);
        // ... and the causal rule admit.
        if (band) {
          Value i = linalg::IndexOp::create(nb, nloc, 2);
          Value j = linalg::IndexOp::create(nb, nloc, 3);
          Value diag = buildDiagonal(nb, nloc, i, diagShift);
          visible = arith::AndIOp::create(
              nb, nloc, visible, buildBandPredicate(nb, nloc, *band, diag, j));
        }
        Value p = math::ExpOp::create(nb, nloc,
                                      arith::SubFOp::create(nb, nloc, s, lse));
        Value zero = createF32Constant(nb, nloc, 0);
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, visible, p, zero).getResult());
      });
  return generic.getResult(0);
}

/// Di[b,h,i] = sum_e dO[b,h,i,e] * O[b,h,i,e], in f32.
static Value computeRowDots(OpBuilder &b, Location loc, SdpaGradOp op,
                            const GradDims &dims) {
  MLIRContext *context = b.getContext();
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  SmallVector<AffineMap> maps = {id4, id4, id4.getMajorSubMap(3)};
  return contract(b, loc, op.getDOut(), op.getOut(),
                  {dims.batch, dims.hq, dims.lq}, maps, 3, 1);
}

/// dS[b,h,i,j] = P * (dP - Di), with dP[b,h,i,j] = sum_e dO[b,h,i,e] *
/// V[b,h/G,j,e].
static Value computeScoreGrad(OpBuilder &b, Location loc, SdpaGradOp op,
                              Value probs, Value rowDots,
                              const GradDims &dims) {
  MLIRContext *context = b.getContext();
  AffineExpr bb, h, i, j, e;
  bindDims(context, bb, h, i, j, e);
  int64_t group = op.getGroupSize();
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {bb, h, i, e}, context),
      AffineMap::get(5, 0, {bb, kvHead(h, group), j, e}, context),
      AffineMap::get(5, 0, {bb, h, i, j}, context)};
  Value dProbs = contract(b, loc, op.getDOut(), op.getValue(),
                          {dims.batch, dims.hq, dims.lq, dims.lk}, maps, 4, 1);
  auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{dims.batch, dims.hq, dims.lq, dims.lk},
      b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{probs, dProbs, rowDots}, init,
      ArrayRef<AffineMap>{id4, id4, id4.getMajorSubMap(3), id4},
      getIteratorTypes(4, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value diff = arith::SubFOp::create(nb, nloc, args[1], args[2]);
        linalg::YieldOp::create(
            nb, nloc,
            arith::MulFOp::create(nb, nloc, args[0], diff).getResult());
      });
  return generic.getResult(0);
}

/// scale * acc rounded once to `elementType`, elementwise.
static Value scaleAndRound(OpBuilder &b, Location loc, Value acc, float scale,
                           Type elementType) {
  auto type = cast<RankedTensorType>(acc.getType());
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, acc);
  Value init = tensor::EmptyOp::create(b, loc, shape, elementType);
  auto id = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), acc, init, ArrayRef<AffineMap>{id, id},
      getIteratorTypes(type.getRank(), 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = args[0];
        if (scale != 1.0f)
          r = arith::MulFOp::create(nb, nloc, r,
                                    createF32Constant(nb, nloc, scale));
        if (r.getType() != elementType)
          r = arith::TruncFOp::create(nb, nloc, elementType, r);
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

/// The f32 tables [B, Hq, Lq, Lk] must be addressable.
static LogicalResult checkTableSize(SdpaGradOp op) {
  return checkF32TableSize(
      op, "probability table",
      {op.getQueryType().getDimSize(0), op.getQueryType().getDimSize(1),
       op.getQueryType().getDimSize(2), op.getKeyType().getDimSize(2)});
}

struct SdpaGradToLinalg : public OpRewritePattern<SdpaGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaGradOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(checkTableSize(op)))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    GradDims dims;
    dims.batch = tensor::getMixedSize(rewriter, loc, op.getQuery(), 0);
    dims.hq = tensor::getMixedSize(rewriter, loc, op.getQuery(), 1);
    dims.lq = tensor::getMixedSize(rewriter, loc, op.getQuery(), 2);
    dims.d = tensor::getMixedSize(rewriter, loc, op.getQuery(), 3);
    dims.hkv = tensor::getMixedSize(rewriter, loc, op.getKey(), 1);
    dims.lk = tensor::getMixedSize(rewriter, loc, op.getKey(), 2);
    dims.dv = tensor::getMixedSize(rewriter, loc, op.getValue(), 3);
    int64_t group = op.getGroupSize();
    float scale = op.getEffectiveScale();
    Type elt = op.getQueryType().getElementType();

    Value scores = computeScores(rewriter, loc, op, dims);
    Value probs = recomputeProbs(rewriter, loc, op, scores, dims);
    Value rowDots = computeRowDots(rewriter, loc, op, dims);
    Value dScores = computeScoreGrad(rewriter, loc, op, probs, rowDots, dims);

    // dQ[b,h,i,d] = scale * sum_j dS[b,h,i,j] * K[b,h/G,j,d].
    AffineExpr bb, h, i, d, j;
    bindDims(context, bb, h, i, d, j);
    Value dQuery =
        contract(rewriter, loc, dScores, op.getKey(),
                 {dims.batch, dims.hq, dims.lq, dims.d},
                 {AffineMap::get(5, 0, {bb, h, i, j}, context),
                  AffineMap::get(5, 0, {bb, kvHead(h, group), j, d}, context),
                  AffineMap::get(5, 0, {bb, h, i, d}, context)},
                 4, 1);

    // dK[b,hk,j,d] = scale * sum_{g,i} dS[b,hk,g,i,j] * Q[b,hk,g,i,d] and
    // dV[b,hk,j,e] = sum_{g,i} P[b,hk,g,i,j] * dO[b,hk,g,i,e], on views
    // with the query heads split into (hk, g): the query heads of a group
    // are reduced with the rows.
    int64_t hkv = op.getKeyType().getDimSize(1);
    AffineExpr hk, jj, c, g, ii;
    bindDims(context, bb, hk, jj, c, g, ii);
    SmallVector<AffineMap> kvMaps = {
        AffineMap::get(6, 0, {bb, hk, g, ii, jj}, context),
        AffineMap::get(6, 0, {bb, hk, g, ii, c}, context),
        AffineMap::get(6, 0, {bb, hk, jj, c}, context)};
    auto split = [&](Value t) {
      return expandHeads(rewriter, loc, t, hkv, group);
    };
    Value dKey =
        contract(rewriter, loc, split(dScores), split(op.getQuery()),
                 {dims.batch, dims.hkv, dims.lk, dims.d}, kvMaps, 4, 2);
    Value dValue =
        contract(rewriter, loc, split(probs), split(op.getDOut()),
                 {dims.batch, dims.hkv, dims.lk, dims.dv}, kvMaps, 4, 2);

    SmallVector<Value> results = {
        scaleAndRound(rewriter, loc, dQuery, scale, elt),
        scaleAndRound(rewriter, loc, dKey, scale, elt),
        scaleAndRound(rewriter, loc, dValue, 1.0f, elt)};
    replaceOpWithCastValues(rewriter, op, results);
    return success();
  }
};

struct ConvertAttnGradToLinalgPass
    : public attn::impl::ConvertAttnGradToLinalgBase<
          ConvertAttnGradToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttnGradToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](SdpaGradOp op) {
      op.emitOpError("could not be lowered to linalg");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnGradToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<SdpaGradToLinalg>(patterns.getContext());
}
