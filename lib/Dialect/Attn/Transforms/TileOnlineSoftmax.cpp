//===- TileOnlineSoftmax.cpp - attn.sdpa to online-softmax tile loops -----===//
//
// Part of the attn project.
//
// Tiles attn.sdpa into a parallel loop over (batch, head, query block) and,
// inside it, sequential loops over key/value blocks that carry the running
// max, the running sum and the accumulator. Scores live in log2 units (the
// query tile is pre-multiplied by scale * log2(e)) so the loop uses exp2.
// This file builds the loops; the tile ops inside them come from TileOps.h,
// the key blocks each query block visits from KeyBlocks.h. A query block
// that is one decode group gets an attn.decode_keys in place of the key
// loops, for a target to build its decode kernel at (attn-cpu-decode).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "KeyBlocks.h"
#include "SplitKeys.h"
#include "TileOps.h"
#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/IR/AttnTileOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTILEONLINESOFTMAX
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Dim `dim` of the tensor `t` as an index value (a constant when static).
Value dimIndex(OpBuilder &b, Location loc, Value t, int64_t dim) {
  return getValueOrCreateConstantIndexOp(b, loc,
                                         tensor::getMixedSize(b, loc, t, dim));
}

/// One step of the online softmax over the key block starting at kStart.
/// `validKeys` is set for a padded tail block; `banded` asks for the
/// causal / window band's element mask.
/// `hidden` (a block on the causal diagonal or on a window's lower edge,
/// whose geometry is static): tags the scores and P.V tile ops with it.
SoftmaxState emitKvBlock(OpBuilder &b, const TiledSdpa &sdpa,
                         const QueryBlock &qb, Value qTile, Value kStart,
                         const KvTiles &tiles, Value validKeys, bool banded,
                         const SoftmaxState &state,
                         std::optional<HiddenPairs> hidden = std::nullopt) {
  // The two products of such a block carry its hidden pairs.
  auto tagHidden = [&](Value product) {
    if (hidden)
      product.getDefiningOp()->setAttr(hidden->attrName,
                                       b.getI64IntegerAttr(hidden->offset));
  };
  // The ops come in the order a target can fuse neighbours in: the row max
  // right after the scores (its init before them), the row sum right after
  // the probabilities, the rescale of the accumulator right before P.V.
  Value rowMaxInit =
      filledTile(b, sdpa.loc, {sdpa.bq}, kNegInf, TileRole::InitRowMax);
  Value s = emitScoreTile(b, sdpa, qTile, tiles.k, tiles.kLo);
  tagHidden(s);
  if (sdpa.softcap)
    s = applySoftcap(b, sdpa, s);
  if (qb.alibiSlope)
    s = applyAlibi(b, sdpa, qb, kStart, s);
  if (sdpa.op.getMask())
    s = applyUserMask(b, sdpa, qb, kStart, s);
  if (banded || validKeys)
    s = applyElementMask(b, sdpa, qb, kStart, validKeys, banded, s);
  auto [mNew, alpha] =
      updateRowMax(b, sdpa, computeRowMax(b, sdpa, s, rowMaxInit), state.m);
  Value lScaled = rescaleRows(b, sdpa, state.l, alpha);
  Value p = computeProbabilities(b, sdpa, s, mNew);
  Value l = accumulateRowSum(b, sdpa, p, lScaled);
  Value acc = accumulateValues(b, sdpa, p, tiles.v, tiles.vLo,
                               rescaleRows(b, sdpa, state.acc, alpha));
  tagHidden(acc);
  return {mNew, l, acc};
}

/// A loop over the full key blocks [lb, ub) (block indices); tiles are views.
SoftmaxState emitKvLoop(OpBuilder &b, const TiledSdpa &sdpa,
                        const QueryBlock &qb, Value qTile, Value lb, Value ub,
                        bool banded, const SoftmaxState &init,
                        std::optional<HiddenPairs> hidden = std::nullopt) {
  Location loc = sdpa.loc;
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, indexConstant(b, loc, 1), init.asValues(),
      [&](OpBuilder &nb, Location nloc, Value kvBlock, ValueRange iterArgs) {
        Value kStart = arith::MulIOp::create(nb, nloc, kvBlock,
                                             indexConstant(nb, nloc, sdpa.bk));
        SoftmaxState next =
            emitKvBlock(nb, sdpa, qb, qTile, kStart,
                        kvTilesAt(nb, sdpa, qb, kStart, /*tailLen=*/Value()),
                        /*validKeys=*/Value(), banded,
                        SoftmaxState::from(iterArgs), hidden);
        scf::YieldOp::create(nb, nloc, next.asValues());
      });
  return SoftmaxState::from(loop.getResults());
}

/// The last, partial key block [kStart, kStart + len), zero-padded to bk,
/// run only if len > 0.
SoftmaxState emitKvTail(OpBuilder &b, const TiledSdpa &sdpa,
                        const QueryBlock &qb, Value qTile, Value kStart,
                        Value len, const SoftmaxState &state) {
  Location loc = sdpa.loc;
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, len,
                                    indexConstant(b, loc, 0));
  SmallVector<Value> values = state.asValues();
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(values).getTypes(), any,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // The prepared copies are zero past Lk already.
    SoftmaxState next = emitKvBlock(b, sdpa, qb, qTile, kStart,
                                    kvTilesAt(b, sdpa, qb, kStart, len), len,
                                    sdpa.band.has_value(), state);
    scf::YieldOp::create(b, loc, next.asValues());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, values);
  }
  return SoftmaxState::from(ifOp.getResults());
}

/// The query block at the forall's induction variables `ivs`: (batch, head,
/// query block), or (batch, key/value head, 0) with grouped rows, where the
/// block holds the rows of every query head of the group.
QueryBlock locateQueryBlock(OpBuilder &b, const TiledSdpa &sdpa,
                            ValueRange ivs) {
  Location loc = sdpa.loc;
  QueryBlock qb;
  qb.batch = ivs[0];
  if (sdpa.groupedRows) {
    // The block starts at the group's first query head.
    qb.kvHead = ivs[1];
    qb.head = arith::MulIOp::create(b, loc, qb.kvHead,
                                    indexConstant(b, loc, sdpa.group));
    qb.qStart = indexConstant(b, loc, 0);
    qb.qLen = indexConstant(b, loc, sdpa.group * sdpa.staticLq);
    qb.qFirst = qb.qStart;
    qb.qEnd = sdpa.lq;
    return qb;
  }
  qb.head = ivs[1];
  qb.kvHead = sdpa.group == 1
                  ? qb.head
                  : arith::DivUIOp::create(b, loc, qb.head,
                                           indexConstant(b, loc, sdpa.group))
                        .getResult();
  qb.qStart =
      arith::MulIOp::create(b, loc, ivs[2], indexConstant(b, loc, sdpa.bq));
  // Where every block is full (a static Lq that bq divides), the block's
  // length is the constant bq: its query and output views are static, so
  // the products can prefetch the next block's rows (NextBlockRows) and the
  // query tile needs no zero rows.
  std::optional<int64_t> lq = getConstantIntValue(sdpa.lq);
  qb.qLen = lq && *lq % sdpa.bq == 0
                ? indexConstant(b, loc, sdpa.bq)
                : minIndex(b, loc, indexConstant(b, loc, sdpa.bq),
                           arith::SubIOp::create(b, loc, sdpa.lq, qb.qStart));
  qb.qFirst = qb.qStart;
  qb.qEnd = arith::AddIOp::create(b, loc, qb.qStart, qb.qLen);
  return qb;
}

/// The keys of the block's batch: Lk, or with per-sequence key lengths the
/// batch's own (clamped to [0, Lk]), which also places the bottom-right
/// diagonal. Keys past it are never visited.
void locateKeys(OpBuilder &b, const TiledSdpa &sdpa, QueryBlock &qb) {
  Location loc = sdpa.loc;
  qb.keyLen = sdpa.lk;
  qb.diagShift = sdpa.diagShift;
  if (Value keyLengths = sdpa.op.getKeyLengths()) {
    qb.keyLen = buildKeyLength(b, loc, keyLengths, qb.batch, sdpa.lk);
    if (sdpa.band && sdpa.band->isBottomRight())
      qb.diagShift = buildDiagonalShift(b, loc, *sdpa.band, sdpa.lq, qb.keyLen);
  }
  // ALiBi, read once per block: its slope in log2 units and its offset.
  if (Value slopes = sdpa.op.getAlibiSlopes()) {
    Value slope = buildAlibiSlope(b, loc, slopes, qb.batch, qb.head);
    qb.alibiSlope = arith::MulFOp::create(
        b, loc, slope,
        arith::ConstantOp::create(
            b, loc, b.getF32FloatAttr(static_cast<float>(kLog2E))));
    qb.alibiShift = arith::SubIOp::create(b, loc, qb.keyLen, sdpa.lq);
  }
}

/// m = -inf, l = 0, acc = 0. Tagged fills are never merged with each other,
/// so none of these buffers is a copy of another.
SoftmaxState initSoftmaxState(OpBuilder &b, const TiledSdpa &sdpa) {
  Location loc = sdpa.loc;
  return {filledTile(b, loc, {sdpa.bq}, kNegInf, TileRole::InitMax),
          filledTile(b, loc, {sdpa.bq}, 0.0f, TileRole::InitSum),
          filledTile(b, loc, {sdpa.dv, sdpa.bq}, 0.0f, TileRole::InitAcc)};
}

/// The online softmax over every key block the query block sees: the
/// blocks on the band's lower edge, the unmasked blocks, the blocks on its
/// upper edge (the causal diagonal), then the tail.
SoftmaxState attendToKeyBlocks(OpBuilder &b, const TiledSdpa &sdpa,
                               const QueryBlock &qb, Value qTile,
                               const KeyBlocks &keys, SoftmaxState state) {
  Location loc = sdpa.loc;
  if (sdpa.band && sdpa.band->left)
    state = emitKvLoop(b, sdpa, qb, qTile, keys.first, keys.unmaskedBegin,
                       /*banded=*/true, state, lowerEdgeHiddenBelow(sdpa, qb));
  state = emitKvLoop(b, sdpa, qb, qTile, keys.unmaskedBegin, keys.unmaskedEnd,
                     /*banded=*/false, state);
  if (sdpa.band && sdpa.band->right)
    state = emitKvLoop(b, sdpa, qb, qTile, keys.unmaskedEnd, keys.fullEnd,
                       /*banded=*/true, state, diagonalHiddenAbove(sdpa, qb));
  Value tailStart = arith::MulIOp::create(b, loc, keys.fullEnd, keys.blockSize);
  Value tailLen = arith::SubIOp::create(b, loc, keys.keyEnd, tailStart);
  return emitKvTail(b, sdpa, qb, qTile, tailStart, tailLen, state);
}

/// Rows [group * Lq, ...] of a grouped block as [group, Lq, ...]: the query
/// rows of each head of the group.
Value splitRowsByHead(OpBuilder &b, const TiledSdpa &sdpa, Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  SmallVector<int64_t> shape = {sdpa.group, sdpa.staticLq};
  llvm::append_range(shape, type.getShape().drop_front());
  SmallVector<ReassociationIndices> reassociation = {{0, 1}};
  for (int64_t dim = 2, e = shape.size(); dim < e; ++dim)
    reassociation.push_back({dim});
  return tensor::ExpandShapeOp::create(
      b, sdpa.loc, RankedTensorType::get(shape, type.getElementType()), rows,
      reassociation);
}

/// Normalizes the block's valid rows and writes them (and their lse) into
/// the forall's shared outputs. Every block writes the window [1, heads,
/// rows, ...] at (batch, head, qStart): one head and qLen rows, or with
/// grouped rows the group's heads and all Lq rows of each.
void writeBlockResults(OpBuilder &b, const TiledSdpa &sdpa,
                       const QueryBlock &qb, scf::ForallOp forall,
                       const SoftmaxState &state) {
  Location loc = sdpa.loc;
  ValueRange shared = forall.getRegionIterArgs();
  OpFoldResult rows = getAsOpFoldResult(qb.qLen);
  SmallVector<OpFoldResult> offsets = {
      qb.batch, qb.head, getAsOpFoldResult(qb.qStart), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(sdpa.dv)};
  if (sdpa.groupedRows) {
    sizes[1] = b.getIndexAttr(sdpa.group);
    sizes[2] = b.getIndexAttr(sdpa.staticLq);
  }
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));

  // Plain rows are one slice of the output and are normalized straight
  // into it; grouped rows span several heads, so they go through a tile.
  Value dest =
      sdpa.groupedRows
          ? tensor::EmptyOp::create(
                b, loc, ArrayRef<int64_t>{sdpa.group * sdpa.staticLq, sdpa.dv},
                sdpa.elt)
                .getResult()
          : sliceRows(b, loc, shared[0], qb.batch, qb.head, qb.qStart, rows);
  SmallVector<Value> results = {emitOutputRows(b, sdpa, state, rows, dest)};
  if (sdpa.op.getLse()) {
    Value lseTile = emitLseTile(b, sdpa, state);
    results.push_back(tensor::ExtractSliceOp::create(
        b, loc, lseTile, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{rows},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
  }
  if (sdpa.groupedRows)
    for (Value &result : results)
      result = splitRowsByHead(b, sdpa, result);

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [result, out] : llvm::zip(results, shared)) {
    // The lse drops the trailing Dv dim of the window.
    unsigned rank = cast<RankedTensorType>(out.getType()).getRank();
    tensor::ParallelInsertSliceOp::create(
        b, loc, result, out, ArrayRef<OpFoldResult>(offsets).take_front(rank),
        ArrayRef<OpFoldResult>(sizes).take_front(rank),
        ArrayRef<OpFoldResult>(strides).take_front(rank));
  }
}

/// Whether `op`'s query blocks hold grouped rows (TiledSdpa::groupedRows)
/// under block-q `blockQ`: a static Lq with group * Lq rows fitting a block,
/// and no ALiBi (its slope is per head: a grouped block would need one per
/// row).
static bool takesGroupedRows(SdpaOp op, int64_t blockQ) {
  RankedTensorType qType = op.getQueryType();
  int64_t group = op.getGroupSize();
  std::optional<int64_t> groupRows =
      qType.isDynamicDim(2) ? std::nullopt
                            : llvm::checkedMul(group, qType.getDimSize(2));
  return group > 1 && groupRows && qType.getDimSize(2) > 0 &&
         !op.getAlibiSlopes() && *groupRows <= blockQ;
}

/// The rows of the decode group that `op`'s query blocks are (with grouped
/// rows where `groupedRows`), or 0 if the op goes to the tile ops: a static
/// Lq whose block (Lq, or group * Lq with grouped rows) has at most
/// `maxRows` rows and at most block-q, D and Dv multiples of `dimMultiple`,
/// no user mask, no softcap, no ALiBi, and a causal or window band only
/// with Lq = 1 (where the band is one key range for every row). Where 0,
/// `why` (if given) says why.
static int64_t decodeRowsFor(SdpaOp op, bool groupedRows, int64_t maxRows,
                             int64_t dimMultiple, int64_t blockQ,
                             std::string *why = nullptr) {
  auto refuse = [&](const Twine &reason) -> int64_t {
    if (why)
      *why = reason.str();
    return 0;
  };
  if (maxRows <= 0 || dimMultiple <= 0)
    return refuse("decode groups are off (decode-rows 0)");
  RankedTensorType qType = op.getQueryType();
  if (qType.isDynamicDim(2) || qType.getDimSize(2) <= 0)
    return refuse("the query length is dynamic or 0");
  int64_t lq = qType.getDimSize(2);
  // Without grouped rows every query head is a block of its own (MHA, or a
  // group too large for one block).
  int64_t rows = groupedRows ? op.getGroupSize() * lq : lq;
  if (rows > maxRows || rows > blockQ)
    return refuse(Twine(rows) + " query rows per block exceed decode-rows (" +
                  Twine(maxRows) + ") or block-q (" + Twine(blockQ) + ")");
  if (op.getMask() || op.getSoftcap() || op.getAlibiSlopes())
    return refuse("a mask, softcap or ALiBi");
  if (getVisibleBand(op) && lq != 1)
    return refuse("a causal or window band with more than one query row");
  int64_t d = qType.getDimSize(3), dv = op.getValueType().getDimSize(3);
  if (d <= 0 || d % dimMultiple != 0 || dv % dimMultiple != 0)
    return refuse("D (" + Twine(d) + ") and Dv (" + Twine(dv) +
                  ") not multiples of " + Twine(dimMultiple));
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()}) {
    auto elt = dyn_cast<FloatType>(
        cast<RankedTensorType>(v.getType()).getElementType());
    if (!elt || elt.getWidth() > 32)
      return refuse("an element type wider than 32 bits");
  }
  return rows;
}

/// The online softmax of a decode group over the keys [begin, end) (the
/// KeyBlocks' range: from the band's first key, exact with Lq = 1, or the
/// chunk's first with split-K, to the key end clamped into the chunk): one
/// attn.decode_keys, whose results are the state the key loops would leave.
SoftmaxState emitDecodeGroup(OpBuilder &b, const TiledSdpa &sdpa,
                             const QueryBlock &qb, Value begin, Value end) {
  auto rowType = RankedTensorType::get({sdpa.bq}, b.getF32Type());
  auto accType = RankedTensorType::get({sdpa.dv, sdpa.bq}, b.getF32Type());
  auto group = DecodeKeysOp::create(
      b, sdpa.loc, rowType, rowType, accType, sdpa.op.getQuery(),
      sdpa.op.getKey(), sdpa.op.getValue(), qb.batch, qb.head, qb.kvHead,
      qb.qStart, begin, end, b.getI64IntegerAttr(sdpa.bq),
      sdpa.groupedRows ? b.getI64IntegerAttr(sdpa.staticLq) : IntegerAttr(),
      b.getF32FloatAttr(sdpa.qScale));
  return SoftmaxState::from(group.getResults());
}

/// The body of the scf.forall for one query block (with split-K, for one
/// chunk of the keys: the forall's last dim).
void emitQueryBlock(OpBuilder &b, const TiledSdpa &sdpa, scf::ForallOp forall) {
  SmallVector<Value> ivs(forall.getInductionVars());
  Value split;
  if (sdpa.kvSplits > 1) {
    split = ivs[2];
    ivs[2] = indexConstant(b, sdpa.loc, 0);
  }
  QueryBlock qb = locateQueryBlock(b, sdpa, ivs);
  locateKeys(b, sdpa, qb);
  Value qTile = sdpa.decode ? Value() : emitScaledQueryTile(b, sdpa, qb);
  KeyBlocks keys = computeKeyBlocks(b, sdpa, qb);
  if (split)
    keys = restrictToChunk(b, sdpa, split, keys);
  SoftmaxState state =
      sdpa.decode ? emitDecodeGroup(b, sdpa, qb, keys.keyBegin, keys.keyEnd)
                  : attendToKeyBlocks(b, sdpa, qb, qTile, keys,
                                      initSoftmaxState(b, sdpa));
  if (split)
    writeSplitResults(b, sdpa, qb, forall, state, split);
  else
    writeBlockResults(b, sdpa, qb, forall, state);
}

/// How one op is tiled: its block sizes and the K/V layouts asked for.
struct OpTiling {
  int64_t blockQ, blockKV;
  bool transposeValues = false, pairValues = false, splitF16 = false,
       f16Tiles = false;
};

/// The tiling of `op`: the pass's block sizes, or those of the target's
/// plan (`attn.tiling`), and the K/V layouts the plan asks for.
static OpTiling tilingOf(SdpaOp op,
                         const AttnTileOnlineSoftmaxOptions &options) {
  TilingPlan plan = getTilingPlan(op);
  OpTiling tiling{plan.blockQ.value_or(options.blockQ),
                  plan.blockKV.value_or(options.blockKV)};
  tiling.transposeValues = plan.transposeValues;
  tiling.pairValues = plan.pairValues;
  tiling.splitF16 = plan.splitF16;
  tiling.f16Tiles = plan.f16Tiles;
  return tiling;
}

/// Tiles are allocated whole, whatever the sequence lengths: the largest
/// (block-q rows by block-kv keys, D or Dv columns) must stay addressable.
/// Checked before any IR is built, so that huge block sizes with dynamic dims
/// are a diagnostic rather than a wrapped allocation size.
static LogicalResult checkTileSizes(SdpaOp op, const OpTiling &tiling) {
  constexpr int64_t kMaxTileElements = int64_t(1) << 32;
  int64_t d = op.getQueryType().getDimSize(3);
  int64_t dv = op.getValueType().getDimSize(3);
  int64_t widest = std::max({tiling.blockKV, d, dv});
  std::optional<int64_t> elements = llvm::checkedMul(tiling.blockQ, widest);
  if (!elements || *elements > kMaxTileElements)
    return op.emitOpError("expected a tile of block-q (")
           << tiling.blockQ << ") rows by max(block-kv, D, Dv) (" << widest
           << ") columns to hold at most 2^32 elements";
  return success();
}

/// The tile sizes and the index values of `op`'s tiling.
TiledSdpa planTiling(OpBuilder &b, SdpaOp op, const OpTiling &tiling,
                     const AttnTileOnlineSoftmaxOptions &options) {
  Location loc = op.getLoc();
  RankedTensorType qType = op.getQueryType(), kType = op.getKeyType();
  TiledSdpa sdpa{op, loc};
  sdpa.d = qType.getDimSize(3);
  sdpa.dv = op.getValueType().getDimSize(3);
  sdpa.group = op.getGroupSize();
  sdpa.elt = qType.getElementType();
  sdpa.band = getVisibleBand(op);
  if (std::optional<APFloat> cap = op.getSoftcap())
    sdpa.softcap = static_cast<float>(cap->convertToDouble() * kLog2E);
  sdpa.qScale =
      static_cast<float>(static_cast<double>(op.getEffectiveScale()) * kLog2E);
  // Blocks never exceed a static sequence length (rounded up to
  // row-multiple): a decode step with Lq = 1 gets 1-row query tiles, or
  // row-multiple rows of which the first is real.
  // Static sizes may be anything up to 2^63 - 1: every product is checked
  // (an overflow here would silently tile a huge op into one small block).
  sdpa.bq = tiling.blockQ;
  if (takesGroupedRows(op, tiling.blockQ)) {
    sdpa.groupedRows = true;
    sdpa.staticLq = qType.getDimSize(2);
  }
  if (!qType.isDynamicDim(2)) {
    // Blocks of more rows than the sequence has are cut down to it (rounded
    // up to row-multiple); larger sequences keep block-q.
    int64_t rows = std::max<int64_t>(1, qType.getDimSize(2));
    if (sdpa.groupedRows)
      rows = sdpa.group * sdpa.staticLq;
    if (rows < sdpa.bq)
      if (std::optional<int64_t> rounded = llvm::checkedMul(
              static_cast<int64_t>(llvm::divideCeil(rows, options.rowMultiple)),
              options.rowMultiple))
        sdpa.bq = std::min(sdpa.bq, *rounded);
  }
  if (int64_t rows = decodeRowsFor(op, sdpa.groupedRows, options.decodeRows,
                                   options.decodeDimMultiple, tiling.blockQ)) {
    sdpa.decode = true;
    sdpa.bq = rows;
  }
  sdpa.bk =
      kType.isDynamicDim(2)
          ? tiling.blockKV
          : std::min(tiling.blockKV, std::max<int64_t>(1, kType.getDimSize(2)));
  sdpa.batchSize = dimIndex(b, loc, op.getQuery(), 0);
  sdpa.lq = dimIndex(b, loc, op.getQuery(), 2);
  sdpa.lk = dimIndex(b, loc, op.getKey(), 2);
  sdpa.diagShift =
      sdpa.band ? buildDiagonalShift(b, loc, *sdpa.band, sdpa.lq, sdpa.lk)
                : indexConstant(b, loc, 0);
  planKeySplits(sdpa, options.kvSplits);
  sdpa.f16Tiles = tiling.f16Tiles;
  sdpa.splitF16 = tiling.splitF16 && !tiling.f16Tiles && takesSplitF16(sdpa);
  sdpa.transposeValues = tiling.transposeValues && takesTransposedValues(sdpa);
  sdpa.pairValues = tiling.pairValues && takesPairedValues(sdpa);
  return sdpa;
}

/// The scf.forall over (batch, head, query block), or (batch, key/value
/// head) with grouped rows, whose shared outputs are the results: every
/// element is written by exactly one query block.
scf::ForallOp createQueryBlockLoop(OpBuilder &b, const TiledSdpa &sdpa) {
  Location loc = sdpa.loc;
  int64_t numHeads = sdpa.op.getQueryType().getDimSize(1);
  SmallVector<Value> outs;
  SmallVector<OpFoldResult> outShape = {
      getAsOpFoldResult(sdpa.batchSize), b.getIndexAttr(numHeads),
      getAsOpFoldResult(sdpa.lq), b.getIndexAttr(sdpa.dv)};
  outs.push_back(tensor::EmptyOp::create(b, loc, outShape, sdpa.elt));
  if (sdpa.op.getLse())
    outs.push_back(tensor::EmptyOp::create(
        b, loc, ArrayRef<OpFoldResult>(outShape).take_front(3),
        b.getF32Type()));

  Value numQBlocks = arith::CeilDivUIOp::create(b, loc, sdpa.lq,
                                                indexConstant(b, loc, sdpa.bq));
  SmallVector<OpFoldResult> ubs = {sdpa.batchSize, b.getIndexAttr(numHeads),
                                   numQBlocks};
  if (sdpa.groupedRows)
    ubs = {sdpa.batchSize, b.getIndexAttr(numHeads / sdpa.group),
           b.getIndexAttr(1)};
  return scf::ForallOp::create(b, loc, ubs, outs, /*mapping=*/std::nullopt);
}

struct TileSdpa : public OpRewritePattern<SdpaOp> {
  TileSdpa(MLIRContext *context, AttnTileOnlineSoftmaxOptions options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    if (options.blockQ <= 0 || options.blockKV <= 0 ||
        options.rowMultiple <= 0 || options.decodeDimMultiple <= 0)
      return rewriter.notifyMatchFailure(op, "block sizes must be positive");
    OpTiling tiling = tilingOf(op, options);
    if (failed(checkTileSizes(op, tiling)))
      return failure();
    TiledSdpa sdpa = planTiling(rewriter, op, tiling, options);
    if (sdpa.splitF16)
      sdpa.keysSplit = emitSplitKeys(rewriter, sdpa);
    if (sdpa.transposeValues)
      sdpa.valuesT = emitTransposedValues(rewriter, sdpa);
    if (sdpa.pairValues)
      sdpa.valuesPaired = emitPairedValues(rewriter, sdpa);
    scf::ForallOp forall = sdpa.kvSplits > 1
                               ? createSplitQueryBlockLoop(rewriter, sdpa)
                               : createQueryBlockLoop(rewriter, sdpa);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(forall.getTerminator());
      emitQueryBlock(rewriter, sdpa, forall);
    }
    SmallVector<Value> results(forall.getResults());
    if (sdpa.kvSplits > 1)
      results = mergeSplits(rewriter, sdpa, results);
    replaceOpWithCastValues(rewriter, op, results);
    return success();
  }

  AttnTileOnlineSoftmaxOptions options;
};

struct AttnTileOnlineSoftmaxPass
    : public attn::impl::AttnTileOnlineSoftmaxBase<AttnTileOnlineSoftmaxPass> {
  using AttnTileOnlineSoftmaxBase::AttnTileOnlineSoftmaxBase;

  void runOnOperation() override {
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            getOperation()->getLoc(), getArgument(),
            {{blockQ.ArgStr, blockQ, bounds::kCpuBlockQ},
             {blockKV.ArgStr, blockKV, bounds::kCpuBlockKV},
             {rowMultiple.ArgStr, rowMultiple, bounds::kCpuRowMultiple},
             {kvSplits.ArgStr, kvSplits, bounds::kCpuKvSplits},
             {decodeRows.ArgStr, decodeRows, bounds::kCpuDecodeRows},
             {decodeDimMultiple.ArgStr, decodeDimMultiple,
              bounds::kCpuDecodeDimMultiple}})))
      return signalPassFailure();
    AttnTileOnlineSoftmaxOptions options{
        blockQ, blockKV, rowMultiple, kvSplits, decodeRows, decodeDimMultiple};
    // Keys and values that are views of paged caches (attn-view-paged) are
    // read by the decode kernel only, in place: an op whose query blocks
    // are not decode groups is refused, with the reason.
    WalkResult paged = getOperation()->walk([&](SdpaOp op) {
      if (!op.getKey().getDefiningOp<PagedViewOp>() &&
          !op.getValue().getDefiningOp<PagedViewOp>())
        return WalkResult::advance();
      std::string why = whyNotDecodeGroups(op, options);
      if (why.empty())
        return WalkResult::advance();
      op.emitOpError() << "reads a paged cache (attn.sdpa_paged), which the "
                          "fused CPU lowering reads through the decode kernel "
                          "only, and its query blocks are not decode groups: "
                       << why << " (attn-lower-naive-cpu lowers it)";
      return WalkResult::interrupt();
    });
    if (paged.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileOnlineSoftmaxPatterns(patterns, options);
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
    RewritePatternSet &patterns, const AttnTileOnlineSoftmaxOptions &options) {
  patterns.add<TileSdpa>(patterns.getContext(), options);
}

std::string
mlir::attn::whyNotDecodeGroups(SdpaOp op,
                               const AttnTileOnlineSoftmaxOptions &options) {
  OpTiling tiling = tilingOf(op, options);
  std::string why;
  decodeRowsFor(op, takesGroupedRows(op, tiling.blockQ), options.decodeRows,
                options.decodeDimMultiple, tiling.blockQ, &why);
  return why;
}
