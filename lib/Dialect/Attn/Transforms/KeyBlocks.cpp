//===- KeyBlocks.cpp - the key blocks a query block visits ----------------===//
//
// Part of the attn project.
//
// See KeyBlocks.h.
//
//===----------------------------------------------------------------------===//

#include "KeyBlocks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// Key blocks as long as query blocks, plain query rows and a static
/// diagonal shift that is a non-negative multiple of the block: the query
/// block [q0, q0 + bq) then has its diagonal at keys [q0 + shift, q0 +
/// shift + bq), a key block.
bool blockAlignedDiagonal(const TiledSdpa &sdpa, const QueryBlock &qb) {
  if (sdpa.bq != sdpa.bk || sdpa.groupedRows)
    return false;
  // Lk - Lq (bottom_right, a constant where both are static: see
  // buildDiagonalShift) or 0 (top_left).
  std::optional<int64_t> shift = getConstantIntValue(qb.diagShift);
  return shift && *shift >= 0 && *shift % sdpa.bk == 0;
}

} // namespace

KeyBlocks mlir::attn::detail::computeKeyBlocks(OpBuilder &b,
                                               const TiledSdpa &sdpa,
                                               const QueryBlock &qb) {
  Location loc = sdpa.loc;
  KeyBlocks keys;
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  keys.first = zero;
  keys.keyBegin = zero;
  keys.blockSize = indexConstant(b, loc, sdpa.bk);
  // The keys this block can see at all: [first * bk or more, keyEnd).
  keys.keyEnd = qb.keyLen;
  const std::optional<VisibleBand> &band = sdpa.band;
  Value firstDiag, lastDiag;
  if (band) {
    firstDiag = buildDiagonal(b, loc, qb.qFirst, qb.diagShift);
    lastDiag = arith::SubIOp::create(
        b, loc, buildDiagonal(b, loc, qb.qEnd, qb.diagShift), one);
  }
  if (band && band->right) {
    // keys <= lastDiag + right.
    Value end = buildVisibleKeyEnd(b, loc, *band, lastDiag);
    keys.keyEnd = minIndex(b, loc, maxIndex(b, loc, end, zero), qb.keyLen);
  }
  keys.fullEnd = arith::DivUIOp::create(b, loc, keys.keyEnd, keys.blockSize);
  if (band && band->left) {
    // keys >= firstDiag - left.
    Value begin =
        maxIndex(b, loc, buildFirstVisibleKey(b, loc, *band, firstDiag), zero);
    keys.keyBegin = begin;
    keys.first =
        minIndex(b, loc, arith::DivUIOp::create(b, loc, begin, keys.blockSize),
                 keys.fullEnd);
  }
  // Blocks that every row sees whole need no element mask: keys >= lastDiag
  // - left (the last row's lower edge) and keys <= firstDiag + right (the
  // first row's upper edge).
  keys.unmaskedBegin = keys.first;
  if (band && band->left) {
    Value n = buildFirstUnmaskedBlock(b, loc, *band, lastDiag, keys.blockSize);
    keys.unmaskedBegin =
        minIndex(b, loc, maxIndex(b, loc, n, keys.first), keys.fullEnd);
  }
  keys.unmaskedEnd = keys.fullEnd;
  if (band && band->right) {
    Value n = buildUnmaskedBlockEnd(b, loc, *band, firstDiag, keys.blockSize);
    keys.unmaskedEnd =
        minIndex(b, loc, maxIndex(b, loc, n, keys.unmaskedBegin), keys.fullEnd);
  }
  return keys;
}

KeyBlocks mlir::attn::detail::restrictToChunk(OpBuilder &b,
                                              const TiledSdpa &sdpa,
                                              Value split, KeyBlocks keys) {
  Location loc = sdpa.loc;
  Value chunkStart = arith::MulIOp::create(
      b, loc, split, indexConstant(b, loc, sdpa.splitKeys));
  Value chunkEnd =
      minIndex(b, loc,
               arith::AddIOp::create(b, loc, chunkStart,
                                     indexConstant(b, loc, sdpa.splitKeys)),
               sdpa.lk);
  keys.keyEnd =
      maxIndex(b, loc, minIndex(b, loc, keys.keyEnd, chunkEnd), chunkStart);
  keys.keyBegin = maxIndex(b, loc, keys.keyBegin, chunkStart);
  keys.fullEnd = arith::DivUIOp::create(b, loc, keys.keyEnd, keys.blockSize);
  // The window's first block and the unmasked range, clamped into the
  // chunk too, so that first <= unmaskedBegin <= unmaskedEnd <= fullEnd.
  keys.first = minIndex(
      b, loc,
      maxIndex(b, loc, keys.first,
               arith::DivUIOp::create(b, loc, chunkStart, keys.blockSize)),
      keys.fullEnd);
  keys.unmaskedBegin = minIndex(
      b, loc, maxIndex(b, loc, keys.unmaskedBegin, keys.first), keys.fullEnd);
  keys.unmaskedEnd =
      minIndex(b, loc, maxIndex(b, loc, keys.unmaskedEnd, keys.unmaskedBegin),
               keys.fullEnd);
  return keys;
}

std::optional<HiddenPairs>
mlir::attn::detail::diagonalHiddenAbove(const TiledSdpa &sdpa,
                                        const QueryBlock &qb) {
  if (!sdpa.band || !sdpa.band->right || *sdpa.band->right != 0 ||
      !blockAlignedDiagonal(sdpa, qb))
    return std::nullopt;
  return HiddenPairs{kHiddenAboveAttrName, 0};
}

std::optional<HiddenPairs>
mlir::attn::detail::lowerEdgeHiddenBelow(const TiledSdpa &sdpa,
                                         const QueryBlock &qb) {
  if (!sdpa.band || !sdpa.band->left || *sdpa.band->left < sdpa.bk ||
      *sdpa.band->left % sdpa.bk != 0 || !blockAlignedDiagonal(sdpa, qb))
    return std::nullopt;
  return HiddenPairs{kHiddenBelowAttrName, 0};
}
