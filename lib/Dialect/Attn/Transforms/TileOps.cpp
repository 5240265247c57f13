//===- TileOps.cpp - online-softmax tile op builders ----------------------===//
//
// Part of the attn project.
//
// Every tile is static and f32, with query rows along its contiguous
// (last) dim: scores [bk, bq], accumulator [dv, bq], row statistics [bq].
// Per-row statistics (max, sum, rescale) are then elementwise across keys,
// and a target vectorizes along the rows. Each tile op and each fill that
// starts one of its buffers is tagged with its TileRole, so that a target
// pass (attn-cpu-microkernels) can swap in a kernel for it.
//
//===----------------------------------------------------------------------===//

#include "TileOps.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// The (head, query index) of row `r` of the block.
std::pair<Value, Value> rowToQuery(OpBuilder &b, Location loc,
                                   const TiledSdpa &sdpa, const QueryBlock &qb,
                                   Value r) {
  if (!sdpa.groupedRows)
    return {qb.head, arith::AddIOp::create(b, loc, qb.qStart, r)};
  Value lq = arith::ConstantIndexOp::create(b, loc, sdpa.staticLq);
  Value g = arith::DivUIOp::create(b, loc, r, lq);
  // Padding rows past the group read the group's last head.
  g = arith::MinUIOp::create(
      b, loc, g, arith::ConstantIndexOp::create(b, loc, sdpa.group - 1));
  return {arith::AddIOp::create(b, loc, qb.head, g),
          arith::RemUIOp::create(b, loc, r, lq)};
}

AffineMap mapOf(MLIRContext *context, unsigned numDims,
                ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(numDims, 0, exprs, context);
}

} // namespace

/// A static f32 tile filled with `value`, tagged with its `role` like the
/// tile ops (and so never merged with an equal fill elsewhere): a kernel
/// that consumes it may fold it away.
Value mlir::attn::detail::filledTile(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> shape, float value,
                                     TileRole role) {
  Value filled = createFilledF32Tensor(
      b, loc, getAsIndexOpFoldResult(b.getContext(), shape), value);
  setTileRole(filled.getDefiningOp(), role);
  return filled;
}

/// A rank-reducing view [len, width] of rows [start, start + len) of the
/// [B, H, L, width] tensor `source` at (bIdx, hIdx).
Value mlir::attn::detail::sliceRows(OpBuilder &b, Location loc, Value source,
                                    Value bIdx, Value hIdx, Value start,
                                    OpFoldResult len) {
  auto type = cast<RankedTensorType>(source.getType());
  int64_t width = type.getDimSize(3);
  std::optional<int64_t> staticLen = getConstantIntValue(len);
  auto resultType = RankedTensorType::get(
      {staticLen ? *staticLen : ShapedType::kDynamic, width},
      type.getElementType());
  SmallVector<OpFoldResult> offsets = {bIdx, hIdx, start, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), len,
                                     b.getIndexAttr(width)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, resultType, source, offsets,
                                        sizes, strides);
}

/// Rows [start, start + len) of K or V at (bIdx, hIdx), zero-padded to
/// `rows`.
Value mlir::attn::detail::paddedRows(OpBuilder &b, Location loc, Value source,
                                     Value bIdx, Value hIdx, Value start,
                                     Value len, int64_t rows) {
  Value slice = sliceRows(b, loc, source, bIdx, hIdx, start, len);
  auto sliceType = cast<RankedTensorType>(slice.getType());
  auto paddedType = RankedTensorType::get({rows, sliceType.getDimSize(1)},
                                          sliceType.getElementType());
  Value high = arith::SubIOp::create(b, loc, indexConstant(b, loc, rows), len);
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(sliceType.getElementType()));
  return tensor::PadOp::create(
      b, loc, paddedType, slice,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{high, b.getIndexAttr(0)}, zero);
}

/// The query block, transposed, as a [d, bq] f32 tile multiplied by
/// scale * log2(e); rows past the end of the sequence are zero. Query rows
/// run along the tile's contiguous dim, as in every tile below: per-row
/// statistics (max, sum, rescale) are then elementwise across keys.
Value mlir::attn::detail::emitScaledQueryTile(OpBuilder &b,
                                              const TiledSdpa &sdpa,
                                              const QueryBlock &qb) {
  Location loc = sdpa.loc;
  MLIRContext *context = b.getContext();
  Value slice;
  if (sdpa.groupedRows) {
    // [group, Lq, D] of the group's heads, as [group * Lq, D].
    auto qType = sdpa.op.getQueryType();
    auto groupType = RankedTensorType::get({sdpa.group, sdpa.staticLq, sdpa.d},
                                           qType.getElementType());
    Value groupRows = tensor::ExtractSliceOp::create(
        b, loc, groupType, sdpa.op.getQuery(),
        ArrayRef<OpFoldResult>{qb.batch, qb.head, b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(sdpa.group),
                               b.getIndexAttr(sdpa.staticLq),
                               b.getIndexAttr(sdpa.d)},
        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    slice = tensor::CollapseShapeOp::create(
        b, loc, groupRows, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  } else {
    slice = sliceRows(b, loc, sdpa.op.getQuery(), qb.batch, qb.head, qb.qStart,
                      getAsOpFoldResult(qb.qLen));
  }
  // A full block writes every row of the tile: no zeros to start from.
  Value init =
      getConstantIntValue(qb.qLen) == sdpa.bq
          ? tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{sdpa.d, sdpa.bq},
                                    b.getF32Type())
                .getResult()
          : filledTile(b, loc, {sdpa.d, sdpa.bq}, 0.0f, TileRole::InitQuery);
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(sdpa.d),
                                     getAsOpFoldResult(qb.qLen)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  Value dest =
      tensor::ExtractSliceOp::create(b, loc, init, offsets, sizes, strides);
  auto id2 = AffineMap::getMultiDimIdentityMap(2, context);
  float scale = sdpa.qScale;
  auto scaleOp = linalg::GenericOp::create(
      b, loc, dest.getType(), slice, dest,
      ArrayRef<AffineMap>{mapOf(context, 2, {1, 0}), id2},
      getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value x = convertScalarToDtype(nb, nloc, args[0], nb.getF32Type(),
                                       /*isUnsignedCast=*/false);
        linalg::YieldOp::create(
            nb, nloc,
            arith::MulFOp::create(nb, nloc, x,
                                  createF32Constant(nb, nloc, scale))
                .getResult());
      });
  setTileRole(scaleOp, TileRole::ScaleQuery);
  return tensor::InsertSliceOp::create(b, loc, scaleOp.getResult(0), init,
                                       offsets, sizes, strides);
}

namespace {

/// out[c, i] += sum_t A[t, i] * B(c, t), where B is read through `bMap`
/// ((c, i, t) -> its indices) and extended to f32: the shape of both
/// products, which a target may swap for one kernel.
Value emitTileContraction(OpBuilder &b, const TiledSdpa &sdpa, Value a,
                          Value bTile, Value bLo, AffineMap bMap, Value out,
                          TileRole role) {
  MLIRContext *context = b.getContext();
  SmallVector<Value> ins = {a, bTile};
  SmallVector<AffineMap> maps = {mapOf(context, 3, {2, 1}), bMap};
  if (bLo) {
    ins.push_back(bLo);
    maps.push_back(bMap);
  }
  maps.push_back(mapOf(context, 3, {0, 1}));
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, out.getType(), ins, out, maps, getIteratorTypes(2, 1),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        if (!bLo)
          return buildMultiplyAccumulateBody(nb, nloc, args);
        // split-f16: b = hi + lo, exact in f32.
        Type f32 = nb.getF32Type();
        Value bValue = arith::AddFOp::create(
            nb, nloc, arith::ExtFOp::create(nb, nloc, f32, args[1]),
            arith::ExtFOp::create(nb, nloc, f32, args[2]));
        Value prod = arith::MulFOp::create(
            nb, nloc,
            convertScalarToDtype(nb, nloc, args[0], f32,
                                 /*isUnsignedCast=*/false),
            bValue);
        linalg::YieldOp::create(
            nb, nloc,
            arith::AddFOp::create(nb, nloc, args[3], prod).getResult());
      });
  setTileRole(generic, role);
  return generic.getResult(0);
}

} // namespace

/// St[j, i] = sum_d K[j, d] * Qt[d, i]: the [bk, bq] f32 score tile.
Value mlir::attn::detail::emitScoreTile(OpBuilder &b, const TiledSdpa &sdpa,
                                        Value qTile, Value kTile, Value kLo) {
  Value init =
      filledTile(b, sdpa.loc, {sdpa.bk, sdpa.bq}, 0.0f, TileRole::InitScores);
  Value scores = emitTileContraction(b, sdpa, qTile, kTile, kLo,
                                     mapOf(b.getContext(), 3, {0, 2}), init,
                                     TileRole::Scores);
  // The factor the query tile carries (scale * log2 e): a kernel that needs
  // the query as it was given (bf16 dot products) divides it back out.
  scores.getDefiningOp()->setAttr(kScoreScaleAttrName,
                                  b.getF32FloatAttr(sdpa.qScale));
  return scores;
}

Value mlir::attn::detail::combineMaskElement(OpBuilder &b, Location loc,
                                             Value score, Value maskValue,
                                             bool isBool) {
  if (isBool)
    return arith::SelectOp::create(b, loc, maskValue, score,
                                   createF32Constant(b, loc, kNegInf));
  Value add = arith::MulFOp::create(
      b, loc,
      convertScalarToDtype(b, loc, maskValue, b.getF32Type(),
                           /*isUnsignedCast=*/false),
      createF32Constant(b, loc, static_cast<float>(kLog2E)));
  return arith::AddFOp::create(b, loc, score, add);
}

/// Applies the user's mask to the score tile. With grouped rows (several
/// heads in a block), mask elements are read with
/// indices clamped into the tensor, so padded rows and keys (whose scores
/// are discarded or masked anyway) never read out of bounds.
Value mlir::attn::detail::applyUserMask(OpBuilder &b, const TiledSdpa &sdpa,
                                        const QueryBlock &qb, Value kStart,
                                        Value scores) {
  // Blocks of one head: the tagged tile op a target can vectorize.
  if (!sdpa.groupedRows)
    return applyUserMaskBlock(b, sdpa, qb, kStart, scores);
  Value mask = sdpa.op.getMask();
  Location loc = sdpa.loc;
  MLIRContext *context = b.getContext();
  auto maskType = cast<RankedTensorType>(mask.getType());
  bool isBool = maskType.getElementType().isInteger(1);
  Value one = indexConstant(b, loc, 1);
  Value lastQ = arith::SubIOp::create(b, loc, sdpa.lq, one);
  Value lastK = arith::SubIOp::create(b, loc, sdpa.lk, one);
  SmallVector<Value> maskLast = getDynamicMaskLastIndices(b, loc, mask);
  auto bcast = [&](OpBuilder &nb, Location nloc, int64_t dim,
                   Value idx) -> Value {
    return clampMaskIndex(nb, nloc, maskType, maskLast, dim, idx);
  };
  auto id2 = AffineMap::getMultiDimIdentityMap(2, context);
  return linalg::GenericOp::create(
             b, loc, scores.getType(), ValueRange{}, scores,
             ArrayRef<AffineMap>{id2}, getIteratorTypes(2, 0),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value j = linalg::IndexOp::create(nb, nloc, 0);
               Value i = linalg::IndexOp::create(nb, nloc, 1);
               auto [head, query] = rowToQuery(nb, nloc, sdpa, qb, i);
               Value qi = minIndex(nb, nloc, query, lastQ);
               Value kj = minIndex(
                   nb, nloc, arith::AddIOp::create(nb, nloc, kStart, j), lastK);
               Value maskValue = tensor::ExtractOp::create(
                   nb, nloc, mask,
                   ValueRange{bcast(nb, nloc, 0, qb.batch),
                              bcast(nb, nloc, 1, head), bcast(nb, nloc, 2, qi),
                              bcast(nb, nloc, 3, kj)});
               linalg::YieldOp::create(
                   nb, nloc,
                   combineMaskElement(nb, nloc, args[0], maskValue, isBool));
             })
      .getResult(0);
}

/// Hides the scores that the causal and window band hides (key kStart + j is
/// visible to query qStart + i iff it lies in the band around the diagonal
/// qStart + i + shift) and, for a padded tail block, the keys j >= validKeys.
Value mlir::attn::detail::applyElementMask(OpBuilder &b, const TiledSdpa &sdpa,
                                           const QueryBlock &qb, Value kStart,
                                           Value validKeys, bool banded,
                                           Value scores) {
  Location loc = sdpa.loc;
  auto id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, scores.getType(), ValueRange{}, scores, ArrayRef<AffineMap>{id2},
      getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value j = linalg::IndexOp::create(nb, nloc, 0);
        Value i = linalg::IndexOp::create(nb, nloc, 1);
        Value visible;
        if (banded) {
          Value key = arith::AddIOp::create(nb, nloc, kStart, j);
          Value query = rowToQuery(nb, nloc, sdpa, qb, i).second;
          Value diag = buildDiagonal(nb, nloc, query, qb.diagShift);
          visible = buildBandPredicate(nb, nloc, *sdpa.band, diag, key);
        }
        if (validKeys) {
          Value inRange = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::slt, j, validKeys);
          visible = visible ? arith::AndIOp::create(nb, nloc, visible, inRange)
                                  .getResult()
                            : inRange;
        }
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, visible, args[0],
                                    createF32Constant(nb, nloc, kNegInf))
                .getResult());
      });
  setTileRole(generic, TileRole::ElementMask);
  return generic.getResult(0);
}

namespace {

/// acc[i] = combine(acc[i], tile[j, i]) over the keys j of a [bk, bq] tile.
template <typename CombineOp>
Value reduceOverKeys(OpBuilder &b, const TiledSdpa &sdpa, Value tile, Value acc,
                     TileRole role) {
  MLIRContext *context = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, acc.getType(), tile, acc,
      ArrayRef<AffineMap>{mapOf(context, 2, {0, 1}), mapOf(context, 2, {1})},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction,
                                    utils::IteratorType::parallel},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(
            nb, nloc,
            CombineOp::create(nb, nloc, args[1], args[0]).getResult());
      });
  setTileRole(generic, role);
  return generic.getResult(0);
}

} // namespace

/// The row max of a score tile: r[i] = max_j St[j, i].
Value mlir::attn::detail::computeRowMax(OpBuilder &b, const TiledSdpa &sdpa,
                                        Value scores, Value init) {
  return reduceOverKeys<arith::MaximumFOp>(b, sdpa, scores, init,
                                           TileRole::RowMax);
}

/// m_new[i] = max(m[i], r[i]) and alpha[i] = exp2(m[i] - m_new[i]), how much
/// the old sum and accumulator shrink; a row that had seen nothing (m =
/// -inf) has l = acc = 0 and gets alpha = 0. m is updated in place, so the
/// loop-carried buffer stays the same.
std::pair<Value, Value> mlir::attn::detail::updateRowMax(OpBuilder &b,
                                                         const TiledSdpa &sdpa,
                                                         Value rowMax,
                                                         Value m) {
  MLIRContext *context = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, context);
  Value alphaInit = tensor::EmptyOp::create(
      b, sdpa.loc, ArrayRef<int64_t>{sdpa.bq}, b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, TypeRange{m.getType(), alphaInit.getType()}, rowMax,
      ValueRange{m, alphaInit}, ArrayRef<AffineMap>{id1, id1, id1},
      getIteratorTypes(1, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value mOld = args[1];
        Value mNew = arith::MaximumFOp::create(nb, nloc, mOld, args[0]);
        Value empty =
            arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ, mOld,
                                  createF32Constant(nb, nloc, kNegInf));
        Value a = math::Exp2Op::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, mOld, mNew));
        Value alpha = arith::SelectOp::create(
            nb, nloc, empty, createF32Constant(nb, nloc, 0.0f), a);
        linalg::YieldOp::create(nb, nloc, ValueRange{mNew, alpha});
      });
  setTileRole(generic, TileRole::MaxUpdate);
  return {generic.getResult(0), generic.getResult(1)};
}

/// Pt[j, i] = exp2(St[j, i] - m_new[i]), 0 where St is -inf (so a row that has
/// seen nothing yet stays at 0 instead of exp2(-inf - -inf) = NaN).
Value mlir::attn::detail::computeProbabilities(OpBuilder &b,
                                               const TiledSdpa &sdpa,
                                               Value scores, Value mNew) {
  MLIRContext *context = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, scores.getType(), mNew, scores,
      ArrayRef<AffineMap>{mapOf(context, 2, {1}), mapOf(context, 2, {0, 1})},
      getIteratorTypes(2, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value s = args[1];
        Value hidden =
            arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ, s,
                                  createF32Constant(nb, nloc, kNegInf));
        Value p = math::Exp2Op::create(
            nb, nloc, arith::SubFOp::create(nb, nloc, s, args[0]));
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, hidden,
                                    createF32Constant(nb, nloc, 0.0f), p)
                .getResult());
      });
  setTileRole(generic, TileRole::Probs);
  return generic.getResult(0);
}

/// x[..., i] *= alpha[i] for the row sum [bq] or the accumulator [dv, bq].
Value mlir::attn::detail::rescaleRows(OpBuilder &b, const TiledSdpa &sdpa,
                                      Value x, Value alpha) {
  MLIRContext *context = b.getContext();
  unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, x.getType(), alpha, x,
      ArrayRef<AffineMap>{mapOf(context, rank, {rank - 1}),
                          AffineMap::getMultiDimIdentityMap(rank, context)},
      getIteratorTypes(rank, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(
            nb, nloc,
            arith::MulFOp::create(nb, nloc, args[1], args[0]).getResult());
      });
  setTileRole(generic, TileRole::Rescale);
  return generic.getResult(0);
}

/// l[i] += sum_j Pt[j, i].
Value mlir::attn::detail::accumulateRowSum(OpBuilder &b, const TiledSdpa &sdpa,
                                           Value p, Value l) {
  return reduceOverKeys<arith::AddFOp>(b, sdpa, p, l, TileRole::RowSum);
}

/// acct[e, i] += sum_j V[j, e] * Pt[j, i].
Value mlir::attn::detail::accumulateValues(OpBuilder &b, const TiledSdpa &sdpa,
                                           Value p, Value vTile, Value vLo,
                                           Value acc) {
  MLIRContext *context = b.getContext();
  AffineMap vMap = mapOf(context, 3,
                         sdpa.valuesT ? SmallVector<unsigned>{0, 2}
                                      : SmallVector<unsigned>{2, 0});
  if (sdpa.valuesPaired)
    vMap = pairedValuesMap(context);
  return emitTileContraction(b, sdpa, p, vTile, vLo, vMap, acc, TileRole::PV);
}

/// out[i, e] = l[i] == 0 ? 0 : acct[e, i] * (1 / l[i]) for the block's
/// `rows` valid rows, rounded once to the element type and written into
/// `dest` ([rows, dv]; for plain rows a slice of the result, so nothing is
/// copied).
Value mlir::attn::detail::emitOutputRows(OpBuilder &b, const TiledSdpa &sdpa,
                                         const SoftmaxState &state,
                                         OpFoldResult rows, Value dest) {
  Location loc = sdpa.loc;
  MLIRContext *context = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, context);
  // One reciprocal per row.
  Value invInit = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{sdpa.bq},
                                          b.getF32Type());
  Value inv = linalg::GenericOp::create(
                  b, loc, invInit.getType(), state.l, invInit,
                  ArrayRef<AffineMap>{id1, id1}, getIteratorTypes(1, 0),
                  [](OpBuilder &nb, Location nloc, ValueRange args) {
                    Value zero = createF32Constant(nb, nloc, 0.0f);
                    Value empty = arith::CmpFOp::create(
                        nb, nloc, arith::CmpFPredicate::OEQ, args[0], zero);
                    Value recip = arith::DivFOp::create(
                        nb, nloc, createF32Constant(nb, nloc, 1.0f), args[0]);
                    linalg::YieldOp::create(
                        nb, nloc,
                        arith::SelectOp::create(nb, nloc, empty, zero, recip)
                            .getResult());
                  })
                  .getResult(0);
  OpFoldResult zeroIdx = b.getIndexAttr(0), oneIdx = b.getIndexAttr(1);
  Value accRows = tensor::ExtractSliceOp::create(
      b, loc, state.acc, ArrayRef<OpFoldResult>{zeroIdx, zeroIdx},
      ArrayRef<OpFoldResult>{b.getIndexAttr(sdpa.dv), rows},
      ArrayRef<OpFoldResult>{oneIdx, oneIdx});
  Value invRows = tensor::ExtractSliceOp::create(
      b, loc, inv, ArrayRef<OpFoldResult>{zeroIdx},
      ArrayRef<OpFoldResult>{rows}, ArrayRef<OpFoldResult>{oneIdx});
  Type elt = sdpa.elt;
  auto outputOp = linalg::GenericOp::create(
      b, loc, dest.getType(), ValueRange{accRows, invRows}, dest,
      ArrayRef<AffineMap>{mapOf(context, 2, {1, 0}), mapOf(context, 2, {0}),
                          mapOf(context, 2, {0, 1})},
      getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        // inv is 0 exactly for a row with nothing visible: its output
        // is 0 even if a hidden value row held NaN (docs/op.md rule 6).
        Value zero = createF32Constant(nb, nloc, 0.0f);
        Value empty = arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ,
                                            args[1], zero);
        Value out = arith::SelectOp::create(
            nb, nloc, empty, zero,
            arith::MulFOp::create(nb, nloc, args[0], args[1]));
        if (elt != out.getType())
          out = arith::TruncFOp::create(nb, nloc, elt, out);
        linalg::YieldOp::create(nb, nloc, out);
      });
  setTileRole(outputOp, TileRole::Output);
  return outputOp.getResult(0);
}

/// lse = ln(2) * (m + log2(l)) (natural log), -inf where l == 0.
Value mlir::attn::detail::emitLseTile(OpBuilder &b, const TiledSdpa &sdpa,
                                      const SoftmaxState &state) {
  MLIRContext *context = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, context);
  Value init = tensor::EmptyOp::create(b, sdpa.loc, ArrayRef<int64_t>{sdpa.bq},
                                       b.getF32Type());
  return linalg::GenericOp::create(
             b, sdpa.loc, init.getType(), ValueRange{state.m, state.l}, init,
             ArrayRef<AffineMap>{id1, id1, id1}, getIteratorTypes(1, 0),
             [](OpBuilder &nb, Location nloc, ValueRange args) {
               Value empty = arith::CmpFOp::create(
                   nb, nloc, arith::CmpFPredicate::OEQ, args[1],
                   createF32Constant(nb, nloc, 0.0f));
               Value log2Sum = arith::AddFOp::create(
                   nb, nloc, args[0], math::Log2Op::create(nb, nloc, args[1]));
               Value lse = arith::MulFOp::create(
                   nb, nloc, log2Sum,
                   createF32Constant(nb, nloc, static_cast<float>(kLn2)));
               linalg::YieldOp::create(
                   nb, nloc,
                   arith::SelectOp::create(nb, nloc, empty,
                                           createF32Constant(nb, nloc, kNegInf),
                                           lse)
                       .getResult());
             })
      .getResult(0);
}
