//===- TileTransposedValues.cpp - V transposed once per call --------------===//
//
// Part of the attn project.
//
// attn-tile-online-softmax's transpose-values: the [Dv, bk] tiles that P.V
// reads as Vt [e, j] (the AMX kernels' A operand, rows along the keys) come
// from one transposed copy of V made before the query blocks, instead of a
// transpose in every query block (Lq / bq times per key block).
//
//===----------------------------------------------------------------------===//

#include "TileOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Rows and columns of the tiles the AMX kernels take.
constexpr int64_t kTileRows = 16;

/// t[e, j] = v[j, e]: the `transpose_values` tile op, [bk, dv] -> [dv, bk].
Value transposeTile(OpBuilder &b, const TiledSdpa &sdpa, Value v) {
  MLIRContext *context = b.getContext();
  Type elt = cast<RankedTensorType>(v.getType()).getElementType();
  Value init = tensor::EmptyOp::create(
      b, sdpa.loc, ArrayRef<int64_t>{sdpa.dv, sdpa.bk}, elt);
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, init.getType(), v, init,
      ArrayRef<AffineMap>{
          AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, context),
          AffineMap::getMultiDimIdentityMap(2, context)},
      getIteratorTypes(2, 0),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, args[0]);
      });
  setTileRole(generic, TileRole::TransposeValues);
  return generic.getResult(0);
}

/// The window [1, 1, dv, bk] of valuesT at (batch, head, 0, kStart).
SmallVector<SmallVector<OpFoldResult>> windowAt(OpBuilder &b,
                                                const TiledSdpa &sdpa,
                                                Value batch, Value head,
                                                Value kStart) {
  return {{batch, head, b.getIndexAttr(0), kStart},
          {b.getIndexAttr(1), b.getIndexAttr(1), b.getIndexAttr(sdpa.dv),
           b.getIndexAttr(sdpa.bk)},
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1))};
}

/// One scf.forall over (batch, key/value head, block) for blocks
/// [0, numBlocks) starting at key firstKey + block * bk, whose tile
/// `tileAt(kStart)` ([bk, dv]) is transposed into `dest`.
Value transposeBlocks(
    OpBuilder &b, const TiledSdpa &sdpa, Value dest, Value firstKey,
    Value numBlocks,
    function_ref<Value(OpBuilder &, Value, Value, Value)> tileAt) {
  Location loc = sdpa.loc;
  int64_t kvHeads = sdpa.op.getKeyType().getDimSize(1);
  auto forall = scf::ForallOp::create(
      b, loc,
      ArrayRef<OpFoldResult>{sdpa.batchSize, b.getIndexAttr(kvHeads),
                             numBlocks},
      ValueRange{dest}, /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getTerminator());
  ValueRange ivs = forall.getInductionVars();
  Value kStart = arith::AddIOp::create(
      b, loc, firstKey,
      arith::MulIOp::create(b, loc, ivs[2], indexConstant(b, loc, sdpa.bk)));
  Value tile = transposeTile(b, sdpa, tileAt(b, ivs[0], ivs[1], kStart));
  auto window = windowAt(b, sdpa, ivs[0], ivs[1], kStart);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, tile,
                                        forall.getRegionIterArgs()[0],
                                        window[0], window[1], window[2]);
  return forall.getResult(0);
}

} // namespace

bool mlir::attn::detail::takesTransposedValues(const TiledSdpa &sdpa) {
  return sdpa.op.getValueType().getElementType().isBF16() &&
         !ShapedType::isDynamic(sdpa.dv) && sdpa.dv % kTileRows == 0 &&
         sdpa.bk % kTileRows == 0 && sdpa.decodeWidth == 0;
}

Value mlir::attn::detail::emitTransposedValues(OpBuilder &b,
                                               const TiledSdpa &sdpa) {
  Location loc = sdpa.loc;
  Value values = sdpa.op.getValue();
  Value bk = indexConstant(b, loc, sdpa.bk);
  Value fullBlocks = arith::DivUIOp::create(b, loc, sdpa.lk, bk);
  Value fullKeys = arith::MulIOp::create(b, loc, fullBlocks, bk);
  Value tailLen = arith::SubIOp::create(b, loc, sdpa.lk, fullKeys);
  // 1 if Lk is not a multiple of bk, else 0: the tail forall's trip count.
  Value tailBlocks = arith::CeilDivUIOp::create(b, loc, tailLen, bk);
  Value paddedKeys = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, fullBlocks, tailBlocks), bk);
  auto valueType = sdpa.op.getValueType();
  SmallVector<OpFoldResult> shape = {sdpa.batchSize,
                                     b.getIndexAttr(valueType.getDimSize(1)),
                                     b.getIndexAttr(sdpa.dv), paddedKeys};
  Value dest =
      tensor::EmptyOp::create(b, loc, shape, valueType.getElementType());
  dest = transposeBlocks(
      b, sdpa, dest, indexConstant(b, loc, 0), fullBlocks,
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return sliceRows(nb, loc, values, batch, head, kStart,
                         nb.getIndexAttr(sdpa.bk));
      });
  return transposeBlocks(
      b, sdpa, dest, fullKeys, tailBlocks,
      [&](OpBuilder &nb, Value batch, Value head, Value kStart) {
        return paddedRows(nb, loc, values, batch, head, kStart, tailLen,
                          sdpa.bk);
      });
}

Value mlir::attn::detail::transposedValueTile(OpBuilder &b,
                                              const TiledSdpa &sdpa,
                                              const QueryBlock &qb,
                                              Value kStart) {
  auto window = windowAt(b, sdpa, qb.batch, qb.kvHead, kStart);
  auto type = RankedTensorType::get(
      {sdpa.dv, sdpa.bk},
      cast<RankedTensorType>(sdpa.valuesT.getType()).getElementType());
  return tensor::ExtractSliceOp::create(b, sdpa.loc, type, sdpa.valuesT,
                                        window[0], window[1], window[2]);
}
