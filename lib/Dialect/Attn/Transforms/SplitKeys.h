//===- SplitKeys.h - split-K (flash-decoding) for the tiling ----*- C++ -*-===//
//
// Part of the attn project.
//
// When there are few query blocks (a decode step: B * Hkv groups of rows)
// the keys are split into chunks and each (query block, chunk) pair is one
// iteration of the scf.forall, so that every thread streams its own part of
// K and V. Each writes its normalized partial output and lse (f32); after
// the forall the partials are merged by their lse:
//   lse = log sum_s exp(lse_s),  out = sum_s exp(lse_s - lse) * out_s.
// Private to the attn transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_SPLITKEYS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_SPLITKEYS_H

#include "TileOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn::detail {

/// Work items (query blocks) below which auto split-K splits the keys, and
/// the fewest keys a chunk gets.
constexpr int64_t kSplitWorkItems = 16;
constexpr int64_t kSplitMinKeys = 1024;

/// The number of key chunks for `sdpa` (planned but for this): 1 (no
/// split) unless B and Lk are static and every (batch, head or group) has a
/// single query block; then `requested` if > 0, else (auto, requested == 0)
/// enough chunks of at least kSplitMinKeys keys for kSplitWorkItems items.
/// Sets sdpa.kvSplits and sdpa.splitKeys (keys per chunk, a multiple of bk).
void planKeySplits(TiledSdpa &sdpa, int64_t requested);

/// The scf.forall over (batch, head or group, chunk) whose shared outputs
/// are the partial results: out [S, B, Hq, Lq, Dv] and lse [S, B, Hq, Lq],
/// both f32.
scf::ForallOp createSplitQueryBlockLoop(OpBuilder &b, const TiledSdpa &sdpa);

/// Writes the block's normalized rows and lse into chunk `split` of the
/// partial outputs.
void writeSplitResults(OpBuilder &b, const TiledSdpa &sdpa,
                       const QueryBlock &qb, scf::ForallOp forall,
                       const SoftmaxState &state, Value split);

/// The op's results (out in its element type, and lse if it has one) from
/// the forall's partial results.
SmallVector<Value> mergeSplits(OpBuilder &b, const TiledSdpa &sdpa,
                               ValueRange partials);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_SPLITKEYS_H
