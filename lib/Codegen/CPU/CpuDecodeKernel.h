//===- CpuDecodeKernel.h - the memory-bound decode kernel -------*- C++ -*-===//
//
// Part of the attn project.
//
// A query block of few rows (a decode step: Lq = 1, or Lq times the group
// size with grouped-query attention) gains nothing from the tile ops, whose
// vectors run along the query rows: most lanes would idle. The decode kernel
// runs its vectors along D instead and streams K and V once: per block of W
// keys (W = the vector width) it takes the W x rows dot products (each K row
// loaded once and used by every row of the block, a group of keys at a time,
// summed across lanes by a shuffle tree that leaves the W scores of a row in
// one vector), the online softmax along the keys (one vector per row), and
// P.V with each V row loaded once into rows x Dv/W accumulators (16 or more
// of them kept in a tensor, a buffer once bufferized, rather than in
// vectors). The blocks overlap: the P.V loops of a block also take the dot
// products of the next block (key j with value row j; their partial sums in
// a small tensor, folded after the loops), so that the K and V streams are
// read side by side through the block rather than in turns, and they
// prefetch the V rows of the next block and the K rows of the one after
// (memref.prefetch on read-only to_buffer views of K and V). With
// decode-phased, where K and V are f32, the block has at least 4 rows and
// each key enough Q.K work (CpuDecodeBuilder.h: kPhasedMinWork and the bounds
// beside it), a block runs in two phases instead: its
// dot products by a loop over its keys that prefetches the K rows ahead,
// then its softmax and P.V loops, which prefetch V. bf16/f16 K and
// V are read as they are and widened in registers, or, with bf16 K and V
// where decode-bf16-dot and decode-bf16-value-dot say, taken by the bf16
// dot products as they are (P then rounded to bf16). The loops are built on
// tensors (vector transfer ops), inside attn-tile-online-softmax's scf.forall,
// so split-K and the writing of results are the tiling's own. Private to the
// attn transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_DECODEKERNEL_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_DECODEKERNEL_H

#include "TileOps.h"

namespace mlir::attn::detail {

/// The rows of the decode kernel's query block for `sdpa` (planned with
/// its groupedRows), or 0 if the op goes to the tile ops: the kernel takes
/// a static Lq whose block (Lq, or group * Lq with grouped rows) has at most
/// `maxRows` rows, D and Dv multiples of `width` (a power of 2), no user
/// mask, no softcap, no ALiBi, and a causal or window band only with
/// Lq = 1 (where the band is one key range for every row).
int64_t decodeRowsFor(const TiledSdpa &sdpa, int64_t maxRows, int64_t width,
                      int64_t blockQ);

/// The online softmax of the query block by the decode kernel over the keys
/// [begin, end) (the tiling's KeyBlocks: from the band's first key, exact
/// with Lq = 1, or the chunk's first with split-K, to the key end clamped
/// into the chunk), as the tiling's state (m, l [rows], acc [Dv, rows]).
SoftmaxState emitDecodeKeys(OpBuilder &b, const TiledSdpa &sdpa,
                            const QueryBlock &qb, Value begin, Value end);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_DECODEKERNEL_H
