//===- TileUserMask.cpp - the user-mask tile op ---------------------------===//
//
// Part of the attn project.
//
// The tile op that applies the op's mask (i1: keep or -inf; float: added,
// times log2 e) to the [bk, bq] score tile of one query block (one head per
// block). The mask block the tile needs is a view of the mask,
// [1, 1, rows, keys]: rows and keys are the block's (clamped to the mask's
// dims, so a dim of size 1, static or at run time, is a view of one
// element) and the body reads it at (min(i, rows - 1), min(j, keys - 1)).
// Nothing is materialized. The op is tagged `user_mask`, so a target can
// swap in a kernel that reads the view directly (CpuUserMask.cpp).
//
//===----------------------------------------------------------------------===//

#include "TileOps.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Offset and size of the view along mask dim `dim` for the block's
/// indices [start, start + len): a static [0, 1) for a broadcast dim, else
/// start clamped to the dim's last index and len clamped to what is left.
std::pair<OpFoldResult, OpFoldResult> maskRange(OpBuilder &b, Location loc,
                                                Value mask, int64_t dim,
                                                Value start, Value len) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  if (maskType.getDimSize(dim) == 1)
    return {b.getIndexAttr(0), b.getIndexAttr(1)};
  Value size = getValueOrCreateConstantIndexOp(
      b, loc, tensor::getMixedSize(b, loc, mask, dim));
  Value last = arith::SubIOp::create(b, loc, size, indexConstant(b, loc, 1));
  Value offset = minIndex(b, loc, start, last);
  Value left = arith::SubIOp::create(b, loc, size, offset);
  return {offset, minIndex(b, loc, len, left)};
}

/// The last index of the view along `dim` (size - 1, built once, outside
/// the tile op's body), or null where the view's dim is a static 1.
Value viewLastIndex(OpBuilder &b, Location loc, Value view, int64_t dim) {
  auto type = cast<RankedTensorType>(view.getType());
  if (type.getDimSize(dim) == 1)
    return {};
  Value size = tensor::DimOp::create(b, loc, view, dim);
  return arith::SubIOp::create(b, loc, size, indexConstant(b, loc, 1));
}

/// min(idx, last), or `zero` where the view's dim is a static 1 (`last`
/// null).
Value clampToView(OpBuilder &b, Location loc, Value idx, Value last,
                  Value zero) {
  return last ? minIndex(b, loc, idx, last) : zero;
}

} // namespace

Value mlir::attn::detail::applyUserMaskBlock(OpBuilder &b,
                                             const TiledSdpa &sdpa,
                                             const QueryBlock &qb, Value kStart,
                                             Value scores) {
  Value mask = sdpa.op.getMask();
  Location loc = sdpa.loc;
  auto maskType = cast<RankedTensorType>(mask.getType());
  bool isBool = maskType.getElementType().isInteger(1);
  SmallVector<Value> maskLast = getDynamicMaskLastIndices(b, loc, mask);
  Value bIdx = clampMaskIndex(b, loc, maskType, maskLast, 0, qb.batch);
  Value hIdx = clampMaskIndex(b, loc, maskType, maskLast, 1, qb.head);
  auto [rowOffset, rows] = maskRange(b, loc, mask, 2, qb.qStart, qb.qLen);
  auto [keyOffset, keys] =
      maskRange(b, loc, mask, 3, kStart, indexConstant(b, loc, sdpa.bk));
  SmallVector<OpFoldResult> offsets = {bIdx, hIdx, rowOffset, keyOffset};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     keys};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  Value view =
      tensor::ExtractSliceOp::create(b, loc, mask, offsets, sizes, strides);

  Value rowLast = viewLastIndex(b, loc, view, 2);
  Value keyLast = viewLastIndex(b, loc, view, 3);
  Value zero = indexConstant(b, loc, 0);
  auto id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, loc, scores.getType(), ValueRange{}, scores, ArrayRef<AffineMap>{id2},
      getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value j = linalg::IndexOp::create(nb, nloc, 0);
        Value i = linalg::IndexOp::create(nb, nloc, 1);
        Value maskValue = tensor::ExtractOp::create(
            nb, nloc, view,
            ValueRange{zero, zero, clampToView(nb, nloc, i, rowLast, zero),
                       clampToView(nb, nloc, j, keyLast, zero)});
        linalg::YieldOp::create(
            nb, nloc, combineMaskElement(nb, nloc, args[0], maskValue, isBool));
      });
  setTileRole(generic, TileRole::UserMask);
  return generic.getResult(0);
}
