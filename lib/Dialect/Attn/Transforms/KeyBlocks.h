//===- KeyBlocks.h - the key blocks a query block visits --------*- C++ -*-===//
//
// Part of the attn project.
//
// The geometry of one query block's key loops in attn-tile-online-softmax:
// which key blocks it visits (a causal or window band skips the blocks that
// every row must ignore, so the cost grows with the band's width, not with
// Lk), which of them need the band's element mask, the chunk of them that a
// split-K work item takes, and the pairs that a loop's blocks hide where the
// band's geometry is static (the tags the kernels skip work by). The band's
// edges are Geometry.h's; the clamping into blocks and chunks is this
// tiling's. Private to the attn transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKS_H

#include "TileOps.h"

#include <optional>

namespace mlir::attn::detail {

/// The key blocks (of bk keys) that a query block visits, as block indices:
/// [first, unmaskedBegin) cross the lower edge of the window band,
/// [unmaskedBegin, unmaskedEnd) are visible to every row of the block (no
/// element mask), [unmaskedEnd, fullEnd) cross the upper edge (the causal
/// diagonal or the window's right side), and the keys [fullEnd * bk, keyEnd)
/// form one partial tail block. keyBegin is the first key the block can see
/// (the band's lower edge, or with split-K the chunk's start; 0 otherwise),
/// which the decode kernel starts from exactly.
struct KeyBlocks {
  Value blockSize; // bk, as an index value
  Value first, unmaskedBegin, unmaskedEnd, fullEnd;
  Value keyBegin, keyEnd;
};

/// The key blocks that `qb` visits. With a causal or window band, blocks
/// that every row of the query block must ignore are never visited: the
/// cost grows with the band's width, not with Lk.
KeyBlocks computeKeyBlocks(OpBuilder &b, const TiledSdpa &sdpa,
                           const QueryBlock &qb);

/// The key blocks of `keys` inside chunk `split` of sdpa.splitKeys keys
/// (split-K): every bound clamped into the chunk, so that a chunk that the
/// causal structure hides entirely visits nothing.
KeyBlocks restrictToChunk(OpBuilder &b, const TiledSdpa &sdpa, Value split,
                          KeyBlocks keys);

/// Where every block of the loop over the band's upper edge starts exactly
/// at its query block's first diagonal key, the tag of its products: h = 0,
/// key j of such a block hidden from its row i wherever j > i + h; nullopt
/// where that is not known statically. It holds for a causal band (right
/// edge 0) whose diagonal is block-aligned: key blocks as long as query
/// blocks, plain query rows and a static diagonal shift that is a
/// non-negative multiple of the block, so that the query block [q0, q0 +
/// bq) has its diagonal at keys [q0 + shift, q0 + shift + bq), the one block
/// that loop visits (a query block cut short by Lq, or keys cut short by
/// Lk, leaves that loop empty and goes to the tail block instead).
std::optional<HiddenPairs> diagonalHiddenAbove(const TiledSdpa &sdpa,
                                               const QueryBlock &qb);

/// The same for the loop over the blocks on a window's lower edge: with a
/// left bound that is a non-zero multiple of the block (and a block-aligned
/// diagonal), row q0 + i of the query block [q0, q0 + bq) sees the keys from
/// q0 + shift - left + i on, so that loop visits the one block [q0 + shift
/// - left, + bk) (when it visits any: clamped at key 0 it is empty), whose
/// key j is hidden from its row i wherever j < i (h = 0), and none of whose
/// keys lies past the diagonal (left >= bk).
std::optional<HiddenPairs> lowerEdgeHiddenBelow(const TiledSdpa &sdpa,
                                                const QueryBlock &qb);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_KEYBLOCKS_H
