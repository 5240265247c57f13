//===- SplitKeys.cpp - split-K (flash-decoding) for the tiling ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "SplitKeys.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

AffineMap dimsMap(MLIRContext *context, unsigned numDims,
                  ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(numDims, 0, exprs, context);
}

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> attrs;
  for (int64_t v : values)
    attrs.push_back(b.getIndexAttr(v));
  return attrs;
}

/// exp(x - y), or 0 where x is -inf (a chunk that saw no key).
Value weightOf(OpBuilder &b, Location loc, Value x, Value y) {
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x,
                                      createF32Constant(b, loc, kMinusInf));
  Value w = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x, y));
  return arith::SelectOp::create(b, loc, empty, createF32Constant(b, loc, 0.0f),
                                 w);
}

} // namespace

void mlir::attn::detail::planKeySplits(TiledSdpa &sdpa, int64_t requested) {
  sdpa.kvSplits = 1;
  sdpa.splitKeys = 0;
  RankedTensorType qType = sdpa.op.getQueryType(), kType = sdpa.op.getKeyType();
  if (requested == 1 || qType.isDynamicDim(0) || qType.isDynamicDim(2) ||
      kType.isDynamicDim(2))
    return;
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
  int64_t lq = qType.getDimSize(2), lk = kType.getDimSize(2);
  if (batch == 0 || lq == 0 || lk <= sdpa.bk)
    return;
  // One query block per (batch, head or group): the forall's last dim is
  // then free for the chunks.
  if (!sdpa.groupedRows && lq > sdpa.bq)
    return;
  std::optional<int64_t> items =
      llvm::checkedMul(batch, sdpa.groupedRows ? heads / sdpa.group : heads);
  if (!items)
    return;
  int64_t splits = requested;
  if (splits <= 0) {
    if (*items >= kSplitWorkItems)
      return;
    splits = std::min<int64_t>(llvm::divideCeil(kSplitWorkItems, *items),
                               lk / kSplitMinKeys);
  }
  if (splits <= 1)
    return;
  int64_t chunk = static_cast<int64_t>(
                      llvm::divideCeil(llvm::divideCeil(lk, splits), sdpa.bk)) *
                  sdpa.bk;
  int64_t used = static_cast<int64_t>(llvm::divideCeil(lk, chunk));
  if (used <= 1)
    return;
  sdpa.kvSplits = used;
  sdpa.splitKeys = chunk;
}

scf::ForallOp
mlir::attn::detail::createSplitQueryBlockLoop(OpBuilder &b,
                                              const TiledSdpa &sdpa) {
  Location loc = sdpa.loc;
  RankedTensorType qType = sdpa.op.getQueryType();
  int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
  int64_t lq = qType.getDimSize(2);
  Type f32 = b.getF32Type();
  SmallVector<Value> outs = {
      tensor::EmptyOp::create(
          b, loc, ArrayRef<int64_t>{sdpa.kvSplits, batch, heads, lq, sdpa.dv},
          f32),
      tensor::EmptyOp::create(
          b, loc, ArrayRef<int64_t>{sdpa.kvSplits, batch, heads, lq}, f32)};
  SmallVector<OpFoldResult> ubs = indexAttrs(
      b, {batch, sdpa.groupedRows ? heads / sdpa.group : heads, sdpa.kvSplits});
  return scf::ForallOp::create(b, loc, ubs, outs, /*mapping=*/std::nullopt);
}

void mlir::attn::detail::writeSplitResults(OpBuilder &b, const TiledSdpa &sdpa,
                                           const QueryBlock &qb,
                                           scf::ForallOp forall,
                                           const SoftmaxState &state,
                                           Value split) {
  Location loc = sdpa.loc;
  Type f32 = b.getF32Type();
  TiledSdpa partial = sdpa;
  partial.elt = f32;
  OpFoldResult rows = getAsOpFoldResult(qb.qLen);
  Value dest = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{rows, b.getIndexAttr(sdpa.dv)}, f32);
  Value out = emitOutputRows(b, partial, state, rows, dest);
  Value lseTile = emitLseTile(b, partial, state);
  Value lse = tensor::ExtractSliceOp::create(
      b, loc, lseTile, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{rows}, ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  SmallVector<Value> results = {out, lse};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(1), rows,
                                     b.getIndexAttr(sdpa.dv)};
  if (sdpa.groupedRows) {
    // Rows [group * Lq] of the group's heads as [group, Lq].
    sizes[2] = b.getIndexAttr(sdpa.group);
    sizes[3] = b.getIndexAttr(sdpa.staticLq);
    for (Value &result : results) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<int64_t> shape = {sdpa.group, sdpa.staticLq};
      llvm::append_range(shape, type.getShape().drop_front());
      SmallVector<ReassociationIndices> reassociation = {{0, 1}};
      for (int64_t dim = 2, e = shape.size(); dim < e; ++dim)
        reassociation.push_back({dim});
      result = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, f32), result, reassociation);
    }
  }
  SmallVector<OpFoldResult> offsets = {split, qb.batch, qb.head,
                                       getAsOpFoldResult(qb.qStart),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> strides(5, b.getIndexAttr(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [result, shared] : llvm::zip(results, forall.getRegionIterArgs())) {
    unsigned rank = cast<RankedTensorType>(shared.getType()).getRank();
    tensor::ParallelInsertSliceOp::create(
        b, loc, result, shared,
        ArrayRef<OpFoldResult>(offsets).take_front(rank),
        ArrayRef<OpFoldResult>(sizes).take_front(rank),
        ArrayRef<OpFoldResult>(strides).take_front(rank));
  }
}

SmallVector<Value> mlir::attn::detail::mergeSplits(OpBuilder &b,
                                                   const TiledSdpa &sdpa,
                                                   ValueRange partials) {
  Location loc = sdpa.loc;
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  RankedTensorType qType = sdpa.op.getQueryType();
  SmallVector<int64_t> rowShape = {qType.getDimSize(0), qType.getDimSize(1),
                                   qType.getDimSize(2)};
  SmallVector<int64_t> outShape = rowShape;
  outShape.push_back(sdpa.dv);
  Value outParts = partials[0], lseParts = partials[1];

  // The largest chunk lse of each row (dims b, h, q, s).
  Value maxInit =
      createFilledF32Tensor(b, loc, indexAttrs(b, rowShape), kMinusInf);
  Value rowMax = linalg::GenericOp::create(
                     b, loc, maxInit.getType(), lseParts, maxInit,
                     ArrayRef<AffineMap>{dimsMap(context, 4, {3, 0, 1, 2}),
                                         dimsMap(context, 4, {0, 1, 2})},
                     getIteratorTypes(3, 1),
                     [](OpBuilder &nb, Location nloc, ValueRange args) {
                       linalg::YieldOp::create(
                           nb, nloc,
                           arith::MaximumFOp::create(nb, nloc, args[0], args[1])
                               .getResult());
                     })
                     .getResult(0);
  // lse = max + log(sum_s exp(lse_s - max)); -inf where every chunk is.
  Value sumInit = createFilledF32Tensor(b, loc, indexAttrs(b, rowShape), 0.0f);
  Value sum =
      linalg::GenericOp::create(
          b, loc, sumInit.getType(), ValueRange{lseParts, rowMax}, sumInit,
          ArrayRef<AffineMap>{dimsMap(context, 4, {3, 0, 1, 2}),
                              dimsMap(context, 4, {0, 1, 2}),
                              dimsMap(context, 4, {0, 1, 2})},
          getIteratorTypes(3, 1),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            Value w = weightOf(nb, nloc, args[0], args[1]);
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, args[2], w).getResult());
          })
          .getResult(0);
  auto id3 = AffineMap::getMultiDimIdentityMap(3, context);
  Value lseInit = tensor::EmptyOp::create(b, loc, rowShape, f32);
  Value lse =
      linalg::GenericOp::create(
          b, loc, lseInit.getType(), ValueRange{rowMax, sum}, lseInit,
          ArrayRef<AffineMap>{id3, id3, id3}, getIteratorTypes(3, 0),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            Value empty = arith::CmpFOp::create(
                nb, nloc, arith::CmpFPredicate::OEQ, args[0],
                createF32Constant(nb, nloc, kMinusInf));
            Value total = arith::AddFOp::create(
                nb, nloc, args[0], math::LogOp::create(nb, nloc, args[1]));
            linalg::YieldOp::create(
                nb, nloc,
                arith::SelectOp::create(nb, nloc, empty, args[0], total)
                    .getResult());
          })
          .getResult(0);
  // out = sum_s exp(lse_s - lse) * out_s (dims b, h, q, e, s).
  Value outInit = createFilledF32Tensor(b, loc, indexAttrs(b, outShape), 0.0f);
  Value out =
      linalg::GenericOp::create(
          b, loc, outInit.getType(), ValueRange{outParts, lseParts, lse},
          outInit,
          ArrayRef<AffineMap>{dimsMap(context, 5, {4, 0, 1, 2, 3}),
                              dimsMap(context, 5, {4, 0, 1, 2}),
                              dimsMap(context, 5, {0, 1, 2}),
                              dimsMap(context, 5, {0, 1, 2, 3})},
          getIteratorTypes(4, 1),
          [](OpBuilder &nb, Location nloc, ValueRange args) {
            Value w = weightOf(nb, nloc, args[1], args[2]);
            // A chunk with weight 0 adds nothing, even a NaN row.
            Value term = arith::SelectOp::create(
                nb, nloc,
                arith::CmpFOp::create(nb, nloc, arith::CmpFPredicate::OEQ, w,
                                      createF32Constant(nb, nloc, 0.0f)),
                createF32Constant(nb, nloc, 0.0f),
                arith::MulFOp::create(nb, nloc, w, args[0]));
            linalg::YieldOp::create(
                nb, nloc,
                arith::AddFOp::create(nb, nloc, args[3], term).getResult());
          })
          .getResult(0);
  if (sdpa.elt != f32) {
    auto id4 = AffineMap::getMultiDimIdentityMap(4, context);
    Value init = tensor::EmptyOp::create(b, loc, outShape, sdpa.elt);
    Type elt = sdpa.elt;
    out =
        linalg::GenericOp::create(
            b, loc, init.getType(), out, init, ArrayRef<AffineMap>{id4, id4},
            getIteratorTypes(4, 0),
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              linalg::YieldOp::create(
                  nb, nloc,
                  arith::TruncFOp::create(nb, nloc, elt, args[0]).getResult());
            })
            .getResult(0);
  }
  SmallVector<Value> results = {out};
  if (sdpa.op.getLse())
    results.push_back(lse);
  return results;
}
