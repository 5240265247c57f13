//===- TileOnlineSoftmax.cpp - attn.sdpa to online-softmax tile loops -----===//
//
// Part of the attn project.
//
// Tiles attn.sdpa into a parallel loop over (batch, head, query block) and,
// inside it, sequential loops over key/value blocks that carry the running
// max, the running sum and the accumulator. Scores live in log2 units (the
// query tile is pre-multiplied by scale * log2(e)) so the loop uses exp2.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEONLINESOFTMAX
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr double kLog2E = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

/// What every tile helper needs to know about the op being tiled.
struct TileContext {
  mutable SdpaOp op; // op accessors are not const
  Location loc;
  int64_t bq, bk, d, dv, group;
  Type elt;
  std::optional<CausalKind> causal;
  Value batch, lq, lk; // index values (constants when static)
  Value diagShift;     // Lk - Lq for bottom_right, 0 for top_left
  float qScale;        // scale * log2(e), applied to the query tile
  /// Grouped rows: one block holds every query row of the Hq/Hkv heads that
  /// share a key/value head (row r is head hkv * group + r / lq, query
  /// r % lq), so K and V are read once per group. Used when Lq is static and
  /// group * Lq fits a block: decoding with grouped-query attention.
  bool groupedRows = false;
  int64_t staticLq = 0;
};

/// The indices that identify one query block inside the scf.forall. Rows
/// [0, qLen) of the block are real; qFirst/qEnd bound the query indices
/// they hold (for the causal key range).
struct QueryBlock {
  Value b, h, hkv, qStart, qLen;
  Value qFirst, qEnd;
};

/// The (head, query index) of row `r` of the block.
std::pair<Value, Value> rowToQuery(OpBuilder &b, Location loc,
                                   const TileContext &ctx, const QueryBlock &qb,
                                   Value r) {
  if (!ctx.groupedRows)
    return {qb.h, arith::AddIOp::create(b, loc, qb.qStart, r)};
  Value lq = arith::ConstantIndexOp::create(b, loc, ctx.staticLq);
  Value g = arith::DivUIOp::create(b, loc, r, lq);
  // Padding rows past the group read the group's last head.
  g = arith::MinUIOp::create(
      b, loc, g, arith::ConstantIndexOp::create(b, loc, ctx.group - 1));
  return {arith::AddIOp::create(b, loc, qb.h, g),
          arith::RemUIOp::create(b, loc, r, lq)};
}

/// The running state of the online softmax: row max m, row sum l (both
/// [bq], log2 units) and the accumulator, transposed: [dv, bq].
struct SoftmaxState {
  Value m, l, acc;
  SmallVector<Value> asValues() const { return {m, l, acc}; }
  static SoftmaxState from(ValueRange v) { return {v[0], v[1], v[2]}; }
};

Value cstIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// `v` (f32, f16 or bf16) extended to f32.
Value extendToF32(OpBuilder &b, Location loc, Value v) {
  return convertScalarToDtype(b, loc, v, b.getF32Type(),
                              /*isUnsignedCast=*/false);
}

/// Dim `dim` of the tensor `t` as an index value (a constant when static).
Value dimIndex(OpBuilder &b, Location loc, Value t, int64_t dim) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSize(b, loc, t, dim));
}

Value minIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}

Value maxIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}

/// A static f32 tile filled with `value`, tagged with its `role` like the
/// tile ops (and so never merged with an equal fill elsewhere): a kernel
/// that consumes it may fold it away.
Value filledTile(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 float value, TileRole role) {
  Value filled = createFilledF32Tensor(
      b, loc, getAsIndexOpFoldResult(b.getContext(), shape), value);
  setTileRole(filled.getDefiningOp(), role);
  return filled;
}

AffineMap mapOf(MLIRContext *ctx, unsigned numDims, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

/// A rank-reducing view [len, width] of rows [start, start + len) of the
/// [B, H, L, width] tensor `source` at (b, h).
Value sliceRows(OpBuilder &b, Location loc, Value source, Value bIdx,
                Value hIdx, Value start, OpFoldResult len) {
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

/// Rows [start, start + len) of K or V at (b, h), zero-padded to `rows`.
Value paddedRows(OpBuilder &b, Location loc, Value source, Value bIdx,
                 Value hIdx, Value start, Value len, int64_t rows) {
  Value slice = sliceRows(b, loc, source, bIdx, hIdx, start, len);
  auto sliceType = cast<RankedTensorType>(slice.getType());
  auto paddedType = RankedTensorType::get({rows, sliceType.getDimSize(1)},
                                          sliceType.getElementType());
  Value high = arith::SubIOp::create(b, loc, cstIndex(b, loc, rows), len);
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
Value emitScaledQueryTile(OpBuilder &b, const TileContext &ctx,
                          const QueryBlock &qb) {
  Location loc = ctx.loc;
  MLIRContext *mctx = b.getContext();
  Value slice;
  if (ctx.groupedRows) {
    // [group, Lq, D] of the group's heads, as [group * Lq, D].
    auto qType = ctx.op.getQueryType();
    auto groupType = RankedTensorType::get({ctx.group, ctx.staticLq, ctx.d},
                                           qType.getElementType());
    Value group = tensor::ExtractSliceOp::create(
        b, loc, groupType, ctx.op.getQuery(),
        ArrayRef<OpFoldResult>{qb.b, qb.h, b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(ctx.group),
                               b.getIndexAttr(ctx.staticLq),
                               b.getIndexAttr(ctx.d)},
        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    slice = tensor::CollapseShapeOp::create(
        b, loc, group, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  } else {
    slice =
        sliceRows(b, loc, ctx.op.getQuery(), qb.b, qb.h, qb.qStart, qb.qLen);
  }
  Value zero = filledTile(b, loc, {ctx.d, ctx.bq}, 0.0f, TileRole::InitQuery);
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(ctx.d), qb.qLen};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  Value dest =
      tensor::ExtractSliceOp::create(b, loc, zero, offsets, sizes, strides);
  auto id2 = AffineMap::getMultiDimIdentityMap(2, mctx);
  float scale = ctx.qScale;
  Value scaled = linalg::GenericOp::create(
                     b, loc, dest.getType(), slice, dest,
                     ArrayRef<AffineMap>{mapOf(mctx, 2, {1, 0}), id2},
                     getIteratorTypes(2, 0),
                     [&](OpBuilder &nb, Location nloc, ValueRange args) {
                       Value x = extendToF32(nb, nloc, args[0]);
                       linalg::YieldOp::create(
                           nb, nloc,
                           arith::MulFOp::create(
                               nb, nloc, x, createF32Constant(nb, nloc, scale))
                               .getResult());
                     })
                     .getResult(0);
  return tensor::InsertSliceOp::create(b, loc, scaled, zero, offsets, sizes,
                                       strides);
}

/// out[c, i] += sum_t A[t, i] * B(c, t), where B is read through `bMap`
/// ((c, i, t) -> its indices) and extended to f32: the shape of both
/// products, which a target may swap for one kernel.
Value emitTileContraction(OpBuilder &b, const TileContext &ctx, Value a,
                          Value bTile, AffineMap bMap, Value out,
                          TileRole role) {
  MLIRContext *mctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, out.getType(), ValueRange{a, bTile}, out,
      ArrayRef<AffineMap>{mapOf(mctx, 3, {2, 1}), bMap, mapOf(mctx, 3, {0, 1})},
      getIteratorTypes(2, 1),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        Value prod = arith::MulFOp::create(nb, nloc, args[0],
                                           extendToF32(nb, nloc, args[1]));
        linalg::YieldOp::create(
            nb, nloc,
            arith::AddFOp::create(nb, nloc, args[2], prod).getResult());
      });
  setTileRole(generic, role);
  return generic.getResult(0);
}

/// St[j, i] = sum_d K[j, d] * Qt[d, i]: the [bk, bq] f32 score tile.
Value emitScoreTile(OpBuilder &b, const TileContext &ctx, Value qTile,
                    Value kTile) {
  Value init =
      filledTile(b, ctx.loc, {ctx.bk, ctx.bq}, 0.0f, TileRole::InitScores);
  return emitTileContraction(b, ctx, qTile, kTile,
                             mapOf(b.getContext(), 3, {0, 2}), init,
                             TileRole::Scores);
}

/// Applies the user's mask to the score tile. Mask elements are read with
/// indices clamped into the tensor, so padded rows and keys (whose scores
/// are discarded or masked anyway) never read out of bounds.
Value applyUserMask(OpBuilder &b, const TileContext &ctx, const QueryBlock &qb,
                    Value kStart, Value scores) {
  Value mask = ctx.op.getMask();
  Location loc = ctx.loc;
  MLIRContext *mctx = b.getContext();
  auto maskType = cast<RankedTensorType>(mask.getType());
  bool isBool = maskType.getElementType().isInteger(1);
  Value one = cstIndex(b, loc, 1);
  Value lastQ = arith::SubIOp::create(b, loc, ctx.lq, one);
  Value lastK = arith::SubIOp::create(b, loc, ctx.lk, one);
  SmallVector<Value> maskLast = getDynamicMaskLastIndices(b, loc, mask);
  auto bcast = [&](OpBuilder &nb, Location nloc, int64_t dim,
                   Value idx) -> Value {
    return clampMaskIndex(nb, nloc, maskType, maskLast, dim, idx);
  };
  auto id2 = AffineMap::getMultiDimIdentityMap(2, mctx);
  return linalg::GenericOp::create(
             b, loc, scores.getType(), ValueRange{}, scores,
             ArrayRef<AffineMap>{id2}, getIteratorTypes(2, 0),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value j = linalg::IndexOp::create(nb, nloc, 0);
               Value i = linalg::IndexOp::create(nb, nloc, 1);
               auto [head, query] = rowToQuery(nb, nloc, ctx, qb, i);
               Value qi = minIndex(nb, nloc, query, lastQ);
               Value kj = minIndex(
                   nb, nloc, arith::AddIOp::create(nb, nloc, kStart, j), lastK);
               Value m = tensor::ExtractOp::create(
                   nb, nloc, mask,
                   ValueRange{bcast(nb, nloc, 0, qb.b),
                              bcast(nb, nloc, 1, head), bcast(nb, nloc, 2, qi),
                              bcast(nb, nloc, 3, kj)});
               Value s = args[0];
               if (isBool) {
                 s = arith::SelectOp::create(
                     nb, nloc, m, s, createF32Constant(nb, nloc, kNegInf));
               } else {
                 Value add = arith::MulFOp::create(
                     nb, nloc, extendToF32(nb, nloc, m),
                     createF32Constant(nb, nloc, static_cast<float>(kLog2E)));
                 s = arith::AddFOp::create(nb, nloc, s, add);
               }
               linalg::YieldOp::create(nb, nloc, s);
             })
      .getResult(0);
}

/// Hides the scores that causality hides (key kStart + j is visible to
/// query qStart + i iff kStart + j <= qStart + i + shift) and, for a padded
/// tail block, the keys j >= validKeys.
Value applyElementMask(OpBuilder &b, const TileContext &ctx,
                       const QueryBlock &qb, Value kStart, Value validKeys,
                       bool causal, Value scores) {
  Location loc = ctx.loc;
  auto id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, scores.getType(), ValueRange{}, scores, ArrayRef<AffineMap>{id2},
      getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value j = linalg::IndexOp::create(nb, nloc, 0);
        Value i = linalg::IndexOp::create(nb, nloc, 1);
        Value visible;
        if (causal) {
          Value key = arith::AddIOp::create(nb, nloc, kStart, j);
          Value query = rowToQuery(nb, nloc, ctx, qb, i).second;
          Value diag = arith::AddIOp::create(nb, nloc, query, ctx.diagShift);
          visible = arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::sle,
                                          key, diag);
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

/// acc[i] = combine(acc[i], tile[j, i]) over the keys j of a [bk, bq] tile.
template <typename CombineOp>
Value reduceOverKeys(OpBuilder &b, const TileContext &ctx, Value tile,
                     Value acc, TileRole role) {
  MLIRContext *mctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, acc.getType(), tile, acc,
      ArrayRef<AffineMap>{mapOf(mctx, 2, {0, 1}), mapOf(mctx, 2, {1})},
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

/// The row max of a score tile: r[i] = max_j St[j, i].
Value computeRowMax(OpBuilder &b, const TileContext &ctx, Value scores,
                    Value init) {
  return reduceOverKeys<arith::MaximumFOp>(b, ctx, scores, init,
                                           TileRole::RowMax);
}

/// m_new[i] = max(m[i], r[i]) and alpha[i] = exp2(m[i] - m_new[i]), how much
/// the old sum and accumulator shrink; a row that had seen nothing (m =
/// -inf) has l = acc = 0 and gets alpha = 0. m is updated in place, so the
/// loop-carried buffer stays the same.
std::pair<Value, Value> updateRowMax(OpBuilder &b, const TileContext &ctx,
                                     Value rowMax, Value m) {
  MLIRContext *mctx = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, mctx);
  Value alphaInit = tensor::EmptyOp::create(
      b, ctx.loc, ArrayRef<int64_t>{ctx.bq}, b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{m.getType(), alphaInit.getType()}, rowMax,
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
Value computeProbabilities(OpBuilder &b, const TileContext &ctx, Value scores,
                           Value mNew) {
  MLIRContext *mctx = b.getContext();
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, scores.getType(), mNew, scores,
      ArrayRef<AffineMap>{mapOf(mctx, 2, {1}), mapOf(mctx, 2, {0, 1})},
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
Value rescaleRows(OpBuilder &b, const TileContext &ctx, Value x, Value alpha) {
  MLIRContext *mctx = b.getContext();
  unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, x.getType(), alpha, x,
      ArrayRef<AffineMap>{mapOf(mctx, rank, {rank - 1}),
                          AffineMap::getMultiDimIdentityMap(rank, mctx)},
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
Value accumulateRowSum(OpBuilder &b, const TileContext &ctx, Value p, Value l) {
  return reduceOverKeys<arith::AddFOp>(b, ctx, p, l, TileRole::RowSum);
}

/// acct[e, i] += sum_j V[j, e] * Pt[j, i].
Value accumulateValues(OpBuilder &b, const TileContext &ctx, Value p,
                       Value vTile, Value acc) {
  return emitTileContraction(b, ctx, p, vTile, mapOf(b.getContext(), 3, {2, 0}),
                             acc, TileRole::PV);
}

/// One step of the online softmax over the key block starting at kStart.
/// `validKeys` is set for a padded tail block; `causal` asks for the
/// diagonal's element mask.
SoftmaxState emitKvBlock(OpBuilder &b, const TileContext &ctx,
                         const QueryBlock &qb, Value qTile, Value kStart,
                         Value kTile, Value vTile, Value validKeys, bool causal,
                         const SoftmaxState &state) {
  // The ops come in the order a target can fuse neighbours in: the row max
  // right after the scores (its init before them), the row sum right after
  // the probabilities, the rescale of the accumulator right before P.V.
  Value rowMaxInit =
      filledTile(b, ctx.loc, {ctx.bq}, kNegInf, TileRole::InitRowMax);
  Value s = emitScoreTile(b, ctx, qTile, kTile);
  if (ctx.op.getMask())
    s = applyUserMask(b, ctx, qb, kStart, s);
  if (causal || validKeys)
    s = applyElementMask(b, ctx, qb, kStart, validKeys, causal, s);
  auto [mNew, alpha] =
      updateRowMax(b, ctx, computeRowMax(b, ctx, s, rowMaxInit), state.m);
  Value lScaled = rescaleRows(b, ctx, state.l, alpha);
  Value p = computeProbabilities(b, ctx, s, mNew);
  Value l = accumulateRowSum(b, ctx, p, lScaled);
  Value acc =
      accumulateValues(b, ctx, p, vTile, rescaleRows(b, ctx, state.acc, alpha));
  return {mNew, l, acc};
}

/// A loop over the full key blocks [lb, ub) (block indices); tiles are views.
SoftmaxState emitKvLoop(OpBuilder &b, const TileContext &ctx,
                        const QueryBlock &qb, Value qTile, Value lb, Value ub,
                        bool causal, const SoftmaxState &init) {
  Location loc = ctx.loc;
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, cstIndex(b, loc, 1), init.asValues(),
      [&](OpBuilder &nb, Location nloc, Value kb, ValueRange iterArgs) {
        Value kStart =
            arith::MulIOp::create(nb, nloc, kb, cstIndex(nb, nloc, ctx.bk));
        OpFoldResult len = nb.getIndexAttr(ctx.bk);
        Value kTile =
            sliceRows(nb, nloc, ctx.op.getKey(), qb.b, qb.hkv, kStart, len);
        Value vTile =
            sliceRows(nb, nloc, ctx.op.getValue(), qb.b, qb.hkv, kStart, len);
        SoftmaxState next = emitKvBlock(
            nb, ctx, qb, qTile, kStart, kTile, vTile,
            /*validKeys=*/Value(), causal, SoftmaxState::from(iterArgs));
        scf::YieldOp::create(nb, nloc, next.asValues());
      });
  return SoftmaxState::from(loop.getResults());
}

/// The last, partial key block [kStart, kStart + len), zero-padded to bk,
/// run only if len > 0.
SoftmaxState emitKvTail(OpBuilder &b, const TileContext &ctx,
                        const QueryBlock &qb, Value qTile, Value kStart,
                        Value len, const SoftmaxState &state) {
  Location loc = ctx.loc;
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, len,
                                    cstIndex(b, loc, 0));
  SmallVector<Value> values = state.asValues();
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(values).getTypes(), any,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value kTile =
        paddedRows(b, loc, ctx.op.getKey(), qb.b, qb.hkv, kStart, len, ctx.bk);
    Value vTile = paddedRows(b, loc, ctx.op.getValue(), qb.b, qb.hkv, kStart,
                             len, ctx.bk);
    SoftmaxState next = emitKvBlock(b, ctx, qb, qTile, kStart, kTile, vTile,
                                    len, ctx.causal.has_value(), state);
    scf::YieldOp::create(b, loc, next.asValues());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, values);
  }
  return SoftmaxState::from(ifOp.getResults());
}

/// out[i, e] = l[i] == 0 ? 0 : acct[e, i] * (1 / l[i]) for the block's
/// `rows` valid rows, rounded once to the element type and written into
/// `dest` ([rows, dv], a slice of the result, so nothing is copied).
Value emitOutputRows(OpBuilder &b, const TileContext &ctx,
                     const SoftmaxState &state, OpFoldResult rows, Value dest) {
  Location loc = ctx.loc;
  MLIRContext *mctx = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, mctx);
  // One reciprocal per row.
  Value invInit = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{ctx.bq},
                                          b.getF32Type());
  Value inv =
      linalg::GenericOp::create(
          b, loc, invInit.getType(), state.l, invInit,
          ArrayRef<AffineMap>{id1, id1}, getIteratorTypes(1, 0),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            Value zero = createF32Constant(nb, nloc, 0.0f);
            Value empty = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ, args[0], zero);
            Value r = arith::DivFOp::create(
                nb, nloc, createF32Constant(nb, nloc, 1.0f), args[0]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(nb, nloc, empty, zero, r).getResult());
          })
          .getResult(0);
  OpFoldResult zeroIdx = b.getIndexAttr(0), oneIdx = b.getIndexAttr(1);
  Value accRows = tensor::ExtractSliceOp::create(
      b, loc, state.acc, ArrayRef<OpFoldResult>{zeroIdx, zeroIdx},
      ArrayRef<OpFoldResult>{b.getIndexAttr(ctx.dv), rows},
      ArrayRef<OpFoldResult>{oneIdx, oneIdx});
  Value invRows = tensor::ExtractSliceOp::create(
      b, loc, inv, ArrayRef<OpFoldResult>{zeroIdx},
      ArrayRef<OpFoldResult>{rows}, ArrayRef<OpFoldResult>{oneIdx});
  Type elt = ctx.elt;
  return linalg::GenericOp::create(
             b, loc, dest.getType(), ValueRange{accRows, invRows}, dest,
             ArrayRef<AffineMap>{mapOf(mctx, 2, {1, 0}), mapOf(mctx, 2, {0}),
                                 mapOf(mctx, 2, {0, 1})},
             getIteratorTypes(2, 0),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               // inv is 0 exactly for a row with nothing visible: its output
               // is 0 even if a hidden value row held NaN (SPEC 1.7).
               Value zero = createF32Constant(nb, nloc, 0.0f);
               Value empty = arith::CmpFOp::create(
                   nb, nloc, arith::CmpFPredicate::OEQ, args[1], zero);
               Value r = arith::SelectOp::create(
                   nb, nloc, empty, zero,
                   arith::MulFOp::create(nb, nloc, args[0], args[1]));
               if (elt != r.getType())
                 r = arith::TruncFOp::create(nb, nloc, elt, r);
               linalg::YieldOp::create(nb, nloc, r);
             })
      .getResult(0);
}

/// lse = ln(2) * (m + log2(l)) (natural log), -inf where l == 0.
Value emitLseTile(OpBuilder &b, const TileContext &ctx,
                  const SoftmaxState &state) {
  MLIRContext *mctx = b.getContext();
  auto id1 = AffineMap::getMultiDimIdentityMap(1, mctx);
  Value init = tensor::EmptyOp::create(b, ctx.loc, ArrayRef<int64_t>{ctx.bq},
                                       b.getF32Type());
  return linalg::GenericOp::create(
             b, ctx.loc, init.getType(), ValueRange{state.m, state.l}, init,
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

/// The body of the scf.forall for one (b, h, query block): returns the
/// output tile (and the lse tile) restricted to the block's valid rows.
void emitQueryBlock(OpBuilder &b, const TileContext &ctx, scf::ForallOp forall,
                    ValueRange ivs) {
  Location loc = ctx.loc;
  QueryBlock qb;
  qb.b = ivs[0];
  if (ctx.groupedRows) {
    // ivs[1] is the key/value head; the block starts at its first head.
    qb.hkv = ivs[1];
    qb.h = arith::MulIOp::create(b, loc, qb.hkv, cstIndex(b, loc, ctx.group));
    qb.qStart = cstIndex(b, loc, 0);
    qb.qLen = cstIndex(b, loc, ctx.group * ctx.staticLq);
    qb.qFirst = qb.qStart;
    qb.qEnd = ctx.lq;
  } else {
    qb.h = ivs[1];
    qb.hkv =
        ctx.group == 1
            ? qb.h
            : arith::DivUIOp::create(b, loc, qb.h, cstIndex(b, loc, ctx.group))
                  .getResult();
    qb.qStart = arith::MulIOp::create(b, loc, ivs[2], cstIndex(b, loc, ctx.bq));
    qb.qLen = minIndex(b, loc, cstIndex(b, loc, ctx.bq),
                       arith::SubIOp::create(b, loc, ctx.lq, qb.qStart));
    qb.qFirst = qb.qStart;
    qb.qEnd = arith::AddIOp::create(b, loc, qb.qStart, qb.qLen);
  }

  Value qTile = emitScaledQueryTile(b, ctx, qb);

  // The keys this block can see at all: [0, kvEnd).
  Value zero = cstIndex(b, loc, 0);
  Value bk = cstIndex(b, loc, ctx.bk);
  Value kvEnd = ctx.lk;
  if (ctx.causal) {
    Value lastDiag = arith::AddIOp::create(b, loc, qb.qEnd, ctx.diagShift);
    kvEnd = minIndex(b, loc, maxIndex(b, loc, lastDiag, zero), ctx.lk);
  }
  Value fullBlocks = arith::DivUIOp::create(b, loc, kvEnd, bk);
  // Blocks that the block's first row already sees whole need no element
  // mask: keys < qFirst + shift + 1.
  Value freeBlocks = fullBlocks;
  if (ctx.causal) {
    Value firstEnd = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, qb.qFirst, ctx.diagShift),
        cstIndex(b, loc, 1));
    Value n = arith::FloorDivSIOp::create(b, loc, firstEnd, bk);
    freeBlocks = minIndex(b, loc, maxIndex(b, loc, n, zero), fullBlocks);
  }

  // Tagged fills are never merged with each other, so none of these buffers
  // is a copy of another.
  SoftmaxState state{
      filledTile(b, loc, {ctx.bq}, kNegInf, TileRole::InitMax),
      filledTile(b, loc, {ctx.bq}, 0.0f, TileRole::InitSum),
      filledTile(b, loc, {ctx.dv, ctx.bq}, 0.0f, TileRole::InitAcc)};
  state =
      emitKvLoop(b, ctx, qb, qTile, zero, freeBlocks, /*causal=*/false, state);
  if (ctx.causal)
    state = emitKvLoop(b, ctx, qb, qTile, freeBlocks, fullBlocks,
                       /*causal=*/true, state);
  Value tailStart = arith::MulIOp::create(b, loc, fullBlocks, bk);
  Value tailLen = arith::SubIOp::create(b, loc, kvEnd, tailStart);
  state = emitKvTail(b, ctx, qb, qTile, tailStart, tailLen, state);

  // Write the block's valid rows into the shared outputs: the output rows
  // straight into their slice of the result.
  ValueRange shared = forall.getRegionIterArgs();
  SmallVector<OpFoldResult> one(4, b.getIndexAttr(1));
  OpFoldResult rows = getAsOpFoldResult(qb.qLen);
  Value dest;
  if (ctx.groupedRows) {
    dest = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{ctx.group * ctx.staticLq, ctx.dv}, ctx.elt);
  } else {
    dest = sliceRows(b, loc, shared[0], qb.b, qb.h, qb.qStart, rows);
  }
  Value outRows = emitOutputRows(b, ctx, state, rows, dest);
  Value lseRows;
  if (ctx.op.getLse()) {
    Value lseTile = emitLseTile(b, ctx, state);
    lseRows = tensor::ExtractSliceOp::create(
        b, loc, lseTile, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rows},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  if (ctx.groupedRows) {
    // Rows back to [group, Lq, ...] of the group's heads.
    int64_t g = ctx.group, lq = ctx.staticLq;
    Value outGroup = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({g, lq, ctx.dv}, ctx.elt), outRows,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    Value lseGroup;
    if (lseRows)
      lseGroup = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({g, lq}, b.getF32Type()), lseRows,
          ArrayRef<ReassociationIndices>{{0, 1}});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        b, loc, outGroup, shared[0],
        ArrayRef<OpFoldResult>{qb.b, qb.h, b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(g),
                               b.getIndexAttr(lq), b.getIndexAttr(ctx.dv)},
        one);
    if (lseGroup)
      tensor::ParallelInsertSliceOp::create(
          b, loc, lseGroup, shared[1],
          ArrayRef<OpFoldResult>{qb.b, qb.h, b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(g),
                                 b.getIndexAttr(lq)},
          ArrayRef<OpFoldResult>(one).take_front(3));
    return;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, outRows, shared[0],
      ArrayRef<OpFoldResult>{qb.b, qb.h, qb.qStart, b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), qb.qLen,
                             b.getIndexAttr(ctx.dv)},
      one);
  if (lseRows)
    tensor::ParallelInsertSliceOp::create(
        b, loc, lseRows, shared[1],
        ArrayRef<OpFoldResult>{qb.b, qb.h, qb.qStart},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1), qb.qLen},
        ArrayRef<OpFoldResult>(one).take_front(3));
}

struct TileSdpa : public OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *ctx, OnlineSoftmaxTiling tiling)
      : OpRewritePattern(ctx), tiling(tiling) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (tiling.blockQ <= 0 || tiling.blockKV <= 0 || tiling.rowMultiple <= 0)
      return rewriter.notifyMatchFailure(op, "block sizes must be positive");
    Location loc = op.getLoc();
    RankedTensorType qType = op.getQueryType(), kType = op.getKeyType();

    TileContext ctx{op, loc};
    ctx.d = qType.getDimSize(3);
    ctx.dv = op.getValueType().getDimSize(3);
    ctx.group = op.getGroupSize();
    ctx.elt = qType.getElementType();
    ctx.causal = op.getCausalKind();
    ctx.qScale = static_cast<float>(
        static_cast<double>(op.getEffectiveScale()) * kLog2E);
    // Blocks never exceed a static sequence length (rounded up to
    // row-multiple): a decode step with Lq = 1 gets 1-row query tiles, or
    // row-multiple rows of which the first is real.
    ctx.bq = tiling.blockQ;
    if (ctx.group > 1 && !qType.isDynamicDim(2) && qType.getDimSize(2) > 0 &&
        ctx.group * qType.getDimSize(2) <= tiling.blockQ) {
      ctx.groupedRows = true;
      ctx.staticLq = qType.getDimSize(2);
    }
    if (!qType.isDynamicDim(2)) {
      int64_t rows = std::max<int64_t>(1, qType.getDimSize(2));
      if (ctx.groupedRows)
        rows *= ctx.group;
      rows = llvm::divideCeil(rows, tiling.rowMultiple) * tiling.rowMultiple;
      ctx.bq = std::min(ctx.bq, rows);
    }
    ctx.bk = kType.isDynamicDim(2)
                 ? tiling.blockKV
                 : std::min(tiling.blockKV,
                            std::max<int64_t>(1, kType.getDimSize(2)));
    ctx.batch = dimIndex(rewriter, loc, op.getQuery(), 0);
    ctx.lq = dimIndex(rewriter, loc, op.getQuery(), 2);
    ctx.lk = dimIndex(rewriter, loc, op.getKey(), 2);
    if (ctx.causal == CausalKind::BottomRight)
      ctx.diagShift = arith::SubIOp::create(rewriter, loc, ctx.lk, ctx.lq);
    else
      ctx.diagShift = cstIndex(rewriter, loc, 0);

    // Shared outputs: every element is written by exactly one query block.
    SmallVector<Value> outs;
    SmallVector<OpFoldResult> outShape = {
        getAsOpFoldResult(ctx.batch),
        rewriter.getIndexAttr(qType.getDimSize(1)), getAsOpFoldResult(ctx.lq),
        rewriter.getIndexAttr(ctx.dv)};
    outs.push_back(tensor::EmptyOp::create(rewriter, loc, outShape, ctx.elt));
    if (op.getLse())
      outs.push_back(tensor::EmptyOp::create(
          rewriter, loc, ArrayRef<OpFoldResult>(outShape).take_front(3),
          rewriter.getF32Type()));

    Value numQBlocks = arith::CeilDivUIOp::create(
        rewriter, loc, ctx.lq, cstIndex(rewriter, loc, ctx.bq));
    SmallVector<OpFoldResult> ubs = {
        ctx.batch, rewriter.getIndexAttr(qType.getDimSize(1)), numQBlocks};
    if (ctx.groupedRows)
      ubs = {ctx.batch, rewriter.getIndexAttr(qType.getDimSize(1) / ctx.group),
             rewriter.getIndexAttr(1)};
    auto forall = scf::ForallOp::create(rewriter, loc, ubs, outs,
                                        /*mapping=*/std::nullopt);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getTerminator());
      emitQueryBlock(rewriter, ctx, forall, forall.getInductionVars());
    }
    replaceOpWithCastValues(rewriter, op, forall.getResults());
    return success();
  }

  OnlineSoftmaxTiling tiling;
};

struct AttnTileOnlineSoftmaxPass
    : public attn::impl::AttnTileOnlineSoftmaxBase<AttnTileOnlineSoftmaxPass> {
  using AttnTileOnlineSoftmaxBase::AttnTileOnlineSoftmaxBase;

  void runOnOperation() override {
    if (blockQ <= 0 || blockKV <= 0 || rowMultiple <= 0) {
      mlir::emitError(getOperation()->getLoc())
          << "attn-tile-online-softmax: block-q ("
          << static_cast<int64_t>(blockQ) << "), block-kv ("
          << static_cast<int64_t>(blockKV) << ") and row-multiple ("
          << static_cast<int64_t>(rowMultiple) << ") must be positive";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateTileOnlineSoftmaxPatterns(patterns, {blockQ, blockKV, rowMultiple});
    // Only the sdpa ops are rewritten; leave the rest of the IR as it is.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](SdpaOp op) { ops.push_back(op); });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return signalPassFailure();
    if (failed(reportSdpaLeft(getOperation(),
                              "could not be tiled into online-softmax loops")))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateTileOnlineSoftmaxPatterns(
    RewritePatternSet &patterns, const OnlineSoftmaxTiling &tiling) {
  patterns.add<TileSdpa>(patterns.getContext(), tiling);
}
