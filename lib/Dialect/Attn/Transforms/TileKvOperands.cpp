//===- TileKvOperands.cpp - the K and V tiles of the key loops ------------===//
//
// Part of the attn project.
//
// What attn-tile-online-softmax's key loops read for each key block: views
// of K and V (zero-padded copies for the partial last block), or tiles of
// copies made once per call, before the query blocks, in a shape a target's
// tile products want:
//   transpose-values: V as Vt [B, Hkv, Dv, Lk rounded up to bk] (the AMX
//     kernels' P.V A operand, rows along the keys), instead of a transpose
//     in every query block (Lq / bq times per key block);
//   pair-values: V as Vp [B, Hkv, Lk rounded up to bk / 2, 2 Dv], each
//     pair of keys interleaved along Dv (Vp[t, 2e + p] = V[2t + p, e]: the
//     pair a bf16 dot product takes as one 32-bit word), instead of a pack
//     in every query block;
//   split-f16: f16 K and V as two bf16 tensors each, hi = bf16(x) and lo =
//     bf16(x - hi), whose sum is x exactly (an f16 significand has 11 bits,
//     a bf16 one 8, and bf16 has f32's exponent range): bf16 tile products
//     of hi and lo parts then give f16 inputs f32-accurate products.
//
//===----------------------------------------------------------------------===//

#include "TileOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Rows and columns of the tiles the AMX kernels take.
constexpr int64_t kTileRows = 16;

/// pair-values: when V is packed once per call (takesPairedValues). One
/// thread, bf16 d=64 (128-row query blocks), paired CPU time against the
/// pack in every query block, on a Zen 4 (32 MiB L3): hq=8 Lq=Lk=4096
/// (32 readers, 4 MiB) 0.989x, b=4 (16 MiB) 0.990x, Lq=1024 (8 readers,
/// 1 MiB) 0.983x, b=8 hq=12 Lq=2048 (16 readers, 24 MiB) 0.985x; but b=16
/// hq=12 Lq=1024 (8 readers, 24 MiB) 1.008x, b=32 (48 MiB: a fresh mmap
/// and its page faults every call) 1.035x, b=32 hq=12 Lq=512 (4 readers,
/// 24 MiB) 1.016x, b=64 Lq=256 (2 readers) 1.031x, BERT-base (1 reader)
/// 1.030x (journal/round-27.md).
constexpr int64_t kPairedValuesMinReaders = 4;
constexpr int64_t kPairedValuesBytesPerReader = int64_t(2) << 20;
constexpr int64_t kPairedValuesMaxBytes = int64_t(32) << 20;

/// A window [1, 1, rows, cols] of a [B, H, R, C] tensor at (batch, head,
/// row, col): offsets, sizes and strides.
struct Window {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

Window windowAt(OpBuilder &b, Value batch, Value head, OpFoldResult row,
                OpFoldResult col, int64_t rows, int64_t cols) {
  return {{batch, head, row, col},
          {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(rows),
           b.getIndexAttr(cols)},
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1))};
}

Value extractWindow(OpBuilder &b, Location loc, Value source, const Window &w) {
  auto type = cast<RankedTensorType>(source.getType());
  auto tileType = RankedTensorType::get(
      {*getConstantIntValue(w.sizes[2]), *getConstantIntValue(w.sizes[3])},
      type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, tileType, source, w.offsets,
                                        w.sizes, w.strides);
}

/// The tile op `role` on the [bk, width] tile `v`, written into `init`
/// (the window of the destination it goes to, not a tensor.empty, so that
/// bufferization writes it in place): v's transpose ([width, bk]) if
/// `transpose`, else v itself; with `split` (f16 `v`) both bf16 parts side
/// by side along the columns, hi then lo (init [rows, 2 * cols], written as
/// [rows, 2, cols]: one output, one window).
Value prepareTile(OpBuilder &b, Location loc, Value v, Value init,
                  bool transpose, bool split, TileRole role) {
  MLIRContext *context = b.getContext();
  auto initType = cast<RankedTensorType>(init.getType());
  Value out = init;
  if (split) {
    int64_t rows = initType.getDimSize(0), cols = initType.getDimSize(1) / 2;
    out = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({rows, 2, cols}, initType.getElementType()), init,
        ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  }
  // Dims (r, c), or (r, part, c) with split: v is read at (r, c), or at (c,
  // r) transposed.
  unsigned rank = split ? 3 : 2;
  unsigned col = rank - 1;
  AffineMap in = AffineMap::get(
      rank, 0,
      transpose ? ArrayRef<AffineExpr>{getAffineDimExpr(col, context),
                                       getAffineDimExpr(0, context)}
                : ArrayRef<AffineExpr>{getAffineDimExpr(0, context),
                                       getAffineDimExpr(col, context)},
      context);
  auto generic = linalg::GenericOp::create(
      b, loc, out.getType(), v, out,
      ArrayRef<AffineMap>{in, AffineMap::getMultiDimIdentityMap(rank, context)},
      getIteratorTypes(rank, 0),
      [split](OpBuilder &nb, Location nloc, ValueRange args) {
        if (!split) {
          linalg::YieldOp::create(nb, nloc, args[0]);
          return;
        }
        Type f32 = nb.getF32Type(), bf16 = nb.getBF16Type();
        Value x = arith::ExtFOp::create(nb, nloc, f32, args[0]);
        Value hi = arith::TruncFOp::create(nb, nloc, bf16, x);
        Value rest = arith::SubFOp::create(
            nb, nloc, x, arith::ExtFOp::create(nb, nloc, f32, hi));
        Value lo = arith::TruncFOp::create(nb, nloc, bf16, rest);
        Value isLo =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::ne,
                                  linalg::IndexOp::create(nb, nloc, 1),
                                  arith::ConstantIndexOp::create(nb, nloc, 0));
        linalg::YieldOp::create(
            nb, nloc,
            arith::SelectOp::create(nb, nloc, isLo, lo, hi).getResult());
      });
  setTileRole(generic, role);
  Value result = generic.getResult(0);
  if (split)
    result = tensor::CollapseShapeOp::create(
        b, loc, initType, result, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  return result;
}

/// The `pair_values` tile op on the [bk, dv] V tile `v`, written into
/// `init` ([bk / 2, 2 dv], a window of the destination): init[t, c] =
/// v[2t + c mod 2, c floordiv 2].
Value preparePairTile(OpBuilder &b, Location loc, Value v, Value init) {
  MLIRContext *context = b.getContext();
  AffineExpr t = getAffineDimExpr(0, context), c = getAffineDimExpr(1, context);
  AffineMap in = AffineMap::get(2, 0, {t * 2 + c % 2, c.floorDiv(2)}, context);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), v, init,
      ArrayRef<AffineMap>{in, AffineMap::getMultiDimIdentityMap(2, context)},
      getIteratorTypes(2, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, args[0]);
      });
  setTileRole(generic, TileRole::PairValues);
  return generic.getResult(0);
}

/// One scf.forall over (batch, key/value head, block) for blocks
/// [0, numBlocks) from key firstKey + block * bk: `tileAt` gives a block's
/// [bk, width] tile of K or V, `windowAt` the window of `dest` its prepared
/// tile goes to, `prepare` the tile (written into that window).
Value forEachKeyBlock(
    OpBuilder &b, const TiledSdpa &sdpa, Value dest, Value firstKey,
    Value numBlocks,
    function_ref<Value(OpBuilder &, Value, Value, Value)> tileAt,
    function_ref<Value(OpBuilder &, Value, Value)> prepare,
    function_ref<Window(OpBuilder &, Value, Value, Value)> windowAtBlock) {
  Location loc = sdpa.loc;
  int64_t kvHeads = sdpa.op.getKeyType().getDimSize(1);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{sdpa.batchSize, b.getIndexAttr(kvHeads),
                             numBlocks},
      ValueRange{dest}, /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  SmallVector<Value> ivs(forall.getInductionVars());
  Value kStart = arith::AddIOp::create(
      b, loc, firstKey,
      arith::MulIOp::create(b, loc, ivs[2], indexConstant(b, loc, sdpa.bk)));
  Window w = windowAtBlock(b, ivs[0], ivs[1], kStart);
  // The source tile, then the window (one statement each: the IR's order
  // must not depend on the compiler's order of evaluating arguments).
  Value source = tileAt(b, ivs[0], ivs[1], kStart);
  Value window = extractWindow(b, loc, forall.getRegionIterArgs()[0], w);
  Value tile = prepare(b, source, window);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, tile,
                                        forall.getRegionIterArgs()[0],
                                        w.offsets, w.sizes, w.strides);
  return forall.getResult(0);
}

/// `source` (K or V) prepared block by block into a new tensor of `shape`:
/// a forall over the full blocks (views), one over the partial last block
/// (0 or 1 of them; zero-padded).
Value prepareAllBlocks(
    OpBuilder &b, const TiledSdpa &sdpa, Value source,
    ArrayRef<OpFoldResult> shape, Type elt,
    function_ref<Value(OpBuilder &, Value, Value)> prepare,
    function_ref<Window(OpBuilder &, Value, Value, Value)> windowAtBlock) {
  Location loc = sdpa.loc;
  Value bk = indexConstant(b, loc, sdpa.bk);
  Value fullBlocks = arith::DivUIOp::create(b, loc, sdpa.lk, bk);
  Value fullKeys = arith::MulIOp::create(b, loc, fullBlocks, bk);
  Value tailLen = arith::SubIOp::create(b, loc, sdpa.lk, fullKeys);
  // 1 if Lk is not a multiple of bk, else 0: the tail forall's trip count.
  Value tailBlocks = arith::CeilDivUIOp::create(b, loc, tailLen, bk);
  Value dest = tensor::EmptyOp::create(b, loc, shape, elt);
  dest = forEachKeyBlock(
      b, sdpa, dest, indexConstant(b, loc, 0), fullBlocks,
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return sliceRows(nb, loc, source, batch, head, kStart,
                         nb.getIndexAttr(sdpa.bk));
      },
      prepare, windowAtBlock);
  return forEachKeyBlock(
      b, sdpa, dest, fullKeys, tailBlocks,
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return paddedRows(nb, loc, source, batch, head, kStart, tailLen,
                          sdpa.bk);
      },
      prepare, windowAtBlock);
}

/// ceil(Lk / bk) * bk.
Value paddedKeys(OpBuilder &b, const TiledSdpa &sdpa) {
  Value bk = indexConstant(b, sdpa.loc, sdpa.bk);
  return arith::MulIOp::create(
      b, sdpa.loc, arith::CeilDivUIOp::create(b, sdpa.loc, sdpa.lk, bk), bk);
}

/// The V tiles of a key block: one window of valuesT, or with split-f16 the
/// hi and the lo window.
SmallVector<Window> valueWindows(OpBuilder &b, const TiledSdpa &sdpa,
                                 Value batch, Value head, Value kStart) {
  if (!sdpa.splitF16)
    return {
        windowAt(b, batch, head, b.getIndexAttr(0), kStart, sdpa.dv, sdpa.bk)};
  Value hiCol =
      arith::MulIOp::create(b, sdpa.loc, kStart, indexConstant(b, sdpa.loc, 2));
  Value loCol = arith::AddIOp::create(b, sdpa.loc, hiCol,
                                      indexConstant(b, sdpa.loc, sdpa.bk));
  return {windowAt(b, batch, head, b.getIndexAttr(0), hiCol, sdpa.dv, sdpa.bk),
          windowAt(b, batch, head, b.getIndexAttr(0), loCol, sdpa.dv, sdpa.bk)};
}

/// Where a key block's prepared V goes: [Dv, bk] at column kStart, or with
/// split-f16 [Dv, 2 bk] (hi, then lo) at column 2 kStart.
Window valueWriteWindow(OpBuilder &b, const TiledSdpa &sdpa, Value batch,
                        Value head, Value kStart) {
  if (!sdpa.splitF16)
    return windowAt(b, batch, head, b.getIndexAttr(0), kStart, sdpa.dv,
                    sdpa.bk);
  Value col =
      arith::MulIOp::create(b, sdpa.loc, kStart, indexConstant(b, sdpa.loc, 2));
  return windowAt(b, batch, head, b.getIndexAttr(0), col, sdpa.dv, 2 * sdpa.bk);
}

/// A key block's window of valuesPaired: [bk / 2, 2 Dv] at row kStart / 2
/// (kStart is a multiple of bk, which is even).
Window pairedValueWindow(OpBuilder &b, const TiledSdpa &sdpa, Value batch,
                         Value head, Value kStart) {
  Value row = arith::DivUIOp::create(b, sdpa.loc, kStart,
                                     indexConstant(b, sdpa.loc, 2));
  return windowAt(b, batch, head, row, b.getIndexAttr(0), sdpa.bk / 2,
                  2 * sdpa.dv);
}

/// The hi and lo K tiles of a key block: [bk, D] at columns 0 and D.
SmallVector<Window> keyWindows(OpBuilder &b, const TiledSdpa &sdpa, Value batch,
                               Value head, Value kStart) {
  return {windowAt(b, batch, head, kStart, b.getIndexAttr(0), sdpa.bk, sdpa.d),
          windowAt(b, batch, head, kStart, b.getIndexAttr(sdpa.d), sdpa.bk,
                   sdpa.d)};
}

bool multipleOfTile(int64_t size) {
  return !ShapedType::isDynamic(size) && size > 0 && size % kTileRows == 0;
}

} // namespace

bool mlir::attn::detail::takesTransposedValues(const TiledSdpa &sdpa) {
  Type elt = sdpa.op.getValueType().getElementType();
  return (elt.isBF16() || (elt.isF16() && (sdpa.splitF16 || sdpa.f16Tiles))) &&
         multipleOfTile(sdpa.dv) && multipleOfTile(sdpa.bk) && !sdpa.decode;
}

bool mlir::attn::detail::takesPairedValues(const TiledSdpa &sdpa) {
  RankedTensorType q = sdpa.op.getQueryType(), v = sdpa.op.getValueType();
  // Grouped rows: one block holds all the rows that read a V tile.
  if (!v.getElementType().isBF16() || !multipleOfTile(sdpa.dv) ||
      sdpa.bk % 2 != 0 || sdpa.decode || sdpa.transposeValues ||
      sdpa.groupedRows || !q.hasStaticShape() || !v.hasStaticShape())
    return false;
  // Each V tile is read by group * ceil(Lq / bq) query blocks; the copy
  // costs a write and a read of V's bytes per call, which pays where
  // enough query blocks read each tile and the copy stays small for them
  // (kPairedValuesBytesPerReader, kPairedValuesMaxBytes). Static sizes may
  // be anything up to 2^63 - 1: a product that overflows is too large.
  int64_t readers =
      llvm::checkedMul(sdpa.group, static_cast<int64_t>(llvm::divideCeil(
                                       q.getDimSize(2), sdpa.bq)))
          .value_or(std::numeric_limits<int64_t>::max());
  std::optional<int64_t> bytes =
      llvm::checkedMul(v.getDimSize(0), v.getDimSize(1));
  for (int64_t factor :
       {static_cast<int64_t>(llvm::divideCeil(v.getDimSize(2), sdpa.bk)),
        sdpa.bk, sdpa.dv, int64_t(2)})
    if (bytes)
      bytes = llvm::checkedMul(*bytes, factor);
  return readers >= kPairedValuesMinReaders && bytes &&
         *bytes <= kPairedValuesMaxBytes &&
         static_cast<int64_t>(
             llvm::divideCeil(*bytes, kPairedValuesBytesPerReader)) <= readers;
}

bool mlir::attn::detail::takesSplitF16(const TiledSdpa &sdpa) {
  return sdpa.op.getKeyType().getElementType().isF16() &&
         multipleOfTile(sdpa.d) && multipleOfTile(sdpa.dv) &&
         multipleOfTile(sdpa.bk) && !sdpa.decode;
}

Value mlir::attn::detail::emitTransposedValues(OpBuilder &b,
                                               const TiledSdpa &sdpa) {
  auto valueType = sdpa.op.getValueType();
  bool split = sdpa.splitF16;
  // Split: each key block's hi columns, then its lo columns.
  Value keys = paddedKeys(b, sdpa);
  if (split)
    keys =
        arith::MulIOp::create(b, sdpa.loc, keys, indexConstant(b, sdpa.loc, 2));
  SmallVector<OpFoldResult> shape = {sdpa.batchSize,
                                     b.getIndexAttr(valueType.getDimSize(1)),
                                     b.getIndexAttr(sdpa.dv), keys};
  return prepareAllBlocks(
      b, sdpa, sdpa.op.getValue(), shape,
      split ? b.getBF16Type() : valueType.getElementType(),
      [&](OpBuilder &nb, Value v, Value init) {
        return prepareTile(nb, sdpa.loc, v, init, /*transpose=*/true, split,
                           TileRole::TransposeValues);
      },
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return valueWriteWindow(nb, sdpa, batch, head, kStart);
      });
}

Value mlir::attn::detail::emitPairedValues(OpBuilder &b,
                                           const TiledSdpa &sdpa) {
  Location loc = sdpa.loc;
  SmallVector<OpFoldResult> shape = {
      sdpa.batchSize, b.getIndexAttr(sdpa.op.getValueType().getDimSize(1)),
      arith::DivUIOp::create(b, loc, paddedKeys(b, sdpa),
                             indexConstant(b, loc, 2))
          .getResult(),
      b.getIndexAttr(2 * sdpa.dv)};
  return prepareAllBlocks(
      b, sdpa, sdpa.op.getValue(), shape, b.getBF16Type(),
      [&](OpBuilder &nb, Value v, Value init) {
        return preparePairTile(nb, loc, v, init);
      },
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return pairedValueWindow(nb, sdpa, batch, head, kStart);
      });
}

Value mlir::attn::detail::emitSplitKeys(OpBuilder &b, const TiledSdpa &sdpa) {
  SmallVector<OpFoldResult> shape = {
      sdpa.batchSize, b.getIndexAttr(sdpa.op.getKeyType().getDimSize(1)),
      paddedKeys(b, sdpa), b.getIndexAttr(2 * sdpa.d)};
  return prepareAllBlocks(
      b, sdpa, sdpa.op.getKey(), shape, b.getBF16Type(),
      [&](OpBuilder &nb, Value k, Value init) {
        return prepareTile(nb, sdpa.loc, k, init, /*transpose=*/false,
                           /*split=*/true, TileRole::Bf16Keys);
      },
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return windowAt(nb, batch, head, kStart, nb.getIndexAttr(0), sdpa.bk,
                        2 * sdpa.d);
      });
}

KvTiles mlir::attn::detail::kvTilesAt(OpBuilder &b, const TiledSdpa &sdpa,
                                      const QueryBlock &qb, Value kStart,
                                      Value tailLen) {
  Location loc = sdpa.loc;
  KvTiles tiles;
  if (sdpa.keysSplit) {
    // Zero past Lk already.
    SmallVector<Window> w = keyWindows(b, sdpa, qb.batch, qb.kvHead, kStart);
    tiles.k = extractWindow(b, loc, sdpa.keysSplit, w[0]);
    tiles.kLo = extractWindow(b, loc, sdpa.keysSplit, w[1]);
  } else if (tailLen) {
    tiles.k = paddedRows(b, loc, sdpa.op.getKey(), qb.batch, qb.kvHead, kStart,
                         tailLen, sdpa.bk);
  } else {
    tiles.k = sliceRows(b, loc, sdpa.op.getKey(), qb.batch, qb.kvHead, kStart,
                        b.getIndexAttr(sdpa.bk));
  }
  if (sdpa.valuesT) {
    SmallVector<Window> w = valueWindows(b, sdpa, qb.batch, qb.kvHead, kStart);
    tiles.v = extractWindow(b, loc, sdpa.valuesT, w[0]);
    if (w.size() > 1)
      tiles.vLo = extractWindow(b, loc, sdpa.valuesT, w[1]);
  } else if (sdpa.valuesPaired) {
    // Zero past Lk already.
    tiles.v =
        extractWindow(b, loc, sdpa.valuesPaired,
                      pairedValueWindow(b, sdpa, qb.batch, qb.kvHead, kStart));
  } else if (tailLen) {
    tiles.v = paddedRows(b, loc, sdpa.op.getValue(), qb.batch, qb.kvHead,
                         kStart, tailLen, sdpa.bk);
  } else {
    tiles.v = sliceRows(b, loc, sdpa.op.getValue(), qb.batch, qb.kvHead, kStart,
                        b.getIndexAttr(sdpa.bk));
  }
  return tiles;
}
