//===- TileScoreModifiers.cpp - tile ops of the attention variants --------===//
//
// Part of the attn project.
//
// The tile ops that attn-tile-online-softmax adds for the attention variants
// that change a score's value. Each is a tagged, all-parallel linalg.generic
// on the [bk, bq] score tile, so that a target can swap in a kernel for it.
//
//===----------------------------------------------------------------------===//

#include "TileOps.h"

#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// St = c * tanh(St / c) with c the softcap in log2 units: the scores are
/// log2(e) times the natural ones, and so is the cap, so the formula keeps
/// its form.
Value mlir::attn::detail::applySoftcap(OpBuilder &b, const TiledSdpa &sdpa,
                                       Value scores) {
  auto id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  float cap = *sdpa.softcap;
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, scores.getType(), ValueRange{}, scores,
      ArrayRef<AffineMap>{id2}, getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, buildSoftcap(nb, nloc, args[0], cap));
      });
  setTileRole(generic, TileRole::Softcap);
  return generic.getResult(0);
}

/// ALiBi on the score tile, in log2 units (the slope is log2(e) times the
/// op's). Every row of a block has one head (the tiling does not group rows
/// under ALiBi), so the body is index arithmetic and a captured slope: a
/// target vectorizes it like the element mask.
Value mlir::attn::detail::applyAlibi(OpBuilder &b, const TiledSdpa &sdpa,
                                     const QueryBlock &qb, Value kStart,
                                     Value scores) {
  auto id2 = AffineMap::getMultiDimIdentityMap(2, b.getContext());
  auto generic = linalg::GenericOp::create(
      b, sdpa.loc, scores.getType(), ValueRange{}, scores,
      ArrayRef<AffineMap>{id2}, getIteratorTypes(2, 0),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value j = linalg::IndexOp::create(nb, nloc, 0);
        Value i = linalg::IndexOp::create(nb, nloc, 1);
        Value query = arith::AddIOp::create(nb, nloc, qb.qStart, i);
        Value diag = arith::AddIOp::create(nb, nloc, query, qb.alibiShift);
        Value key = arith::AddIOp::create(nb, nloc, kStart, j);
        linalg::YieldOp::create(
            nb, nloc, buildAlibi(nb, nloc, args[0], qb.alibiSlope, diag, key));
      });
  setTileRole(generic, TileRole::Alibi);
  return generic.getResult(0);
}
