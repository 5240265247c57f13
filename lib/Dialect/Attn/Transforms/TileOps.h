//===- TileOps.h - online-softmax tile op builders --------------*- C++ -*-===//
//
// Part of the attn project.
//
// The linalg ops that attn-tile-online-softmax puts inside its loops, one
// builder per step of the online softmax (scores, masks, row max, update of
// the running max, probabilities, rescale, row sum, P.V, output rows, lse),
// and the data they share. Private to the attn transforms library; the loop
// structure is in TileOnlineSoftmax.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEOPS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEOPS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"
#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <optional>
#include <utility>

namespace mlir::attn::detail {

/// Which of the two a block's products are tagged with, and its h.
struct HiddenPairs {
  llvm::StringLiteral attrName;
  int64_t offset;
};

/// What every tile builder needs to know about the op being tiled.
struct TiledSdpa {
  mutable SdpaOp op; // op accessors are not const
  Location loc;
  int64_t bq, bk, d, dv, group;
  Type elt;
  std::optional<VisibleBand> band; // the causal and window rules
  Value batchSize, lq, lk;         // index values (constants when static)
  Value diagShift; // Lk - Lq for bottom_right, 0 for top_left (see QueryBlock)
  float qScale;    // scale * log2(e), applied to the query tile
  std::optional<float> softcap; // the op's softcap * log2(e) (log2 units)
  /// Grouped rows: one block holds every query row of the Hq/Hkv heads that
  /// share a key/value head (row r is head hkv * group + r / lq, query
  /// r % lq), so K and V are read once per group. Used when Lq is static and
  /// group * Lq fits a block: decoding with grouped-query attention.
  bool groupedRows = false;
  int64_t staticLq = 0;
  /// Split-K (SplitKeys.h): the keys are cut into kvSplits chunks of
  /// splitKeys keys (a multiple of bk), one forall iteration each.
  int64_t kvSplits = 1, splitKeys = 0;
  /// The query block is one decode group: a single attn.decode_keys over its
  /// keys (a target's decode kernel) instead of the tile ops.
  bool decode = false;
  /// transpose-values: V transposed once per call into valuesT [B, Hkv, Dv,
  /// Lk rounded up to bk] (TileKvOperands.cpp); P.V reads its tiles.
  bool transposeValues = false;
  Value valuesT;
  /// pair-values: V packed once per call into key pairs, valuesPaired [B,
  /// Hkv, Lk rounded up to bk / 2, 2 * Dv] with Vp[t, 2e + p] = V[2t + p,
  /// e] (TileKvOperands.cpp); P.V reads its [bk / 2, 2 * Dv] tiles.
  bool pairValues = false;
  Value valuesPaired;
  /// split-f16: f16 K and V as bf16 hi + lo (TileKvOperands.cpp): K split
  /// once per call into keysSplit [B, Hkv, Lk rounded up to bk, 2 * D] (hi
  /// in columns [0, D), lo in [D, 2 D)), V into valuesT [B, Hkv, Dv, 2 * Lk
  /// rounded up] (each key block's hi columns, then its lo columns).
  bool splitF16 = false;
  Value keysSplit;
  /// f16-tiles: the target's tile products take f16 (V transposed as f16).
  bool f16Tiles = false;
};

/// The K and V tiles of one key block as the tile ops read them: K [bk, D]
/// and V [bk, Dv] (views, or zero-padded copies for the tail), or the tiles
/// of the copies made once per call: V transposed, [Dv, bk]; with split-f16
/// also the lo parts kLo and vLo (k and v are then the hi parts).
struct KvTiles {
  Value k, kLo, v, vLo;
};

/// The indices that identify one query block inside the scf.forall. Rows
/// [0, qLen) of the block are real; qFirst/qEnd bound the query indices
/// they hold (for the causal key range).
struct QueryBlock {
  Value batch, head, kvHead, qStart, qLen;
  Value qFirst, qEnd;
  /// The keys the block's batch has (Lk, or its key length clamped to
  /// [0, Lk]) and the diagonal's shift for it (Lk - Lq with that Lk for
  /// bottom_right, else 0).
  Value keyLen, diagShift;
  /// With ALiBi: the block's slope times log2(e) (f32; one head per block)
  /// and keyLen - Lq, ALiBi's diagonal offset whatever the causal alignment.
  Value alibiSlope, alibiShift;
};

/// The running state of the online softmax: row max m, row sum l (both
/// [bq], log2 units) and the accumulator, transposed: [dv, bq]. Where the
/// max is kept lazily (the AMX prefill, the decode kernel) m is a reference
/// that may lag the true row max by up to the slack (8): l is relative to
/// it and the lse, m + log2 l, is exact either way.
struct SoftmaxState {
  Value m, l, acc;
  SmallVector<Value> asValues() const { return {m, l, acc}; }
  static SoftmaxState from(ValueRange v) { return {v[0], v[1], v[2]}; }
};

inline Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

inline Value minIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}

inline Value maxIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}

/// A static f32 tile filled with `value`, tagged with its `role`.
/// One score combined with one element of the user's mask, in the tiling's
/// base-2 units: an i1 mask keeps the score where true and makes it -inf
/// elsewhere; a float mask adds its value times log2(e).
Value combineMaskElement(OpBuilder &b, Location loc, Value score,
                         Value maskValue, bool isBool);

Value filledTile(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 float value, TileRole role);

/// A rank-reducing view [len, width] of rows [start, start + len) of the
/// [B, H, L, width] tensor `source` at (bIdx, hIdx).
Value sliceRows(OpBuilder &b, Location loc, Value source, Value bIdx,
                Value hIdx, Value start, OpFoldResult len);

/// Rows [start, start + len) of K or V at (bIdx, hIdx), zero-padded to
/// `rows`.
Value paddedRows(OpBuilder &b, Location loc, Value source, Value bIdx,
                 Value hIdx, Value start, Value len, int64_t rows);

/// The query block as a [d, bq] f32 tile times scale * log2(e).
Value emitScaledQueryTile(OpBuilder &b, const TiledSdpa &sdpa,
                          const QueryBlock &qb);

/// St[j, i] = sum_d K[j, d] * Qt[d, i]: the [bk, bq] f32 score tile; with
/// `kLo`, K[j, d] = kTile[j, d] + kLo[j, d] (split-f16).
Value emitScoreTile(OpBuilder &b, const TiledSdpa &sdpa, Value qTile,
                    Value kTile, Value kLo = {});

/// St = c * tanh(St / c), c = sdpa.softcap (log2 units): the softcap tile op
/// (TileScoreModifiers.cpp).
Value applySoftcap(OpBuilder &b, const TiledSdpa &sdpa, Value scores);

/// St[j, i] -= slope * |qStart + i + shift - (kStart + j)|: the ALiBi tile op
/// (TileScoreModifiers.cpp), slope and shift from `qb`.
Value applyAlibi(OpBuilder &b, const TiledSdpa &sdpa, const QueryBlock &qb,
                 Value kStart, Value scores);

/// The user's mask applied to the score tile of keys from kStart.
Value applyUserMask(OpBuilder &b, const TiledSdpa &sdpa, const QueryBlock &qb,
                    Value kStart, Value scores);

/// applyUserMask for a block of one head: the `user_mask` tile op, reading a
/// view of the block's part of the mask (TileUserMask.cpp).
Value applyUserMaskBlock(OpBuilder &b, const TiledSdpa &sdpa,
                         const QueryBlock &qb, Value kStart, Value scores);

/// -inf where the causal and window band hides a score (if `banded`) and
/// for keys j >= validKeys (if set).
Value applyElementMask(OpBuilder &b, const TiledSdpa &sdpa,
                       const QueryBlock &qb, Value kStart, Value validKeys,
                       bool banded, Value scores);

/// r[i] = max(init[i], max_j St[j, i]).
Value computeRowMax(OpBuilder &b, const TiledSdpa &sdpa, Value scores,
                    Value init);

/// (m_new, alpha): the running max updated with the block's row max, and
/// how much the old sum and accumulator shrink.
std::pair<Value, Value> updateRowMax(OpBuilder &b, const TiledSdpa &sdpa,
                                     Value rowMax, Value m);

/// Pt[j, i] = exp2(St[j, i] - m_new[i]), 0 where St is -inf.
Value computeProbabilities(OpBuilder &b, const TiledSdpa &sdpa, Value scores,
                           Value mNew);

/// x[..., i] *= alpha[i] for the row sum [bq] or the accumulator [dv, bq].
Value rescaleRows(OpBuilder &b, const TiledSdpa &sdpa, Value x, Value alpha);

/// l[i] += sum_j Pt[j, i].
Value accumulateRowSum(OpBuilder &b, const TiledSdpa &sdpa, Value p, Value l);

/// acct[e, i] += sum_j V[j, e] * Pt[j, i]; with sdpa.valuesT, vTile is the
/// [dv, bk] tile of the transposed values: acct[e, i] += sum_j Vt[e, j] *
/// Pt[j, i]; with sdpa.valuesPaired the [bk / 2, 2 dv] tile of the values
/// in key pairs: acct[e, i] += sum_j Vp[j floordiv 2, 2e + j mod 2] *
/// Pt[j, i]; with `vLo`, the value is vTile + vLo (split-f16).
Value accumulateValues(OpBuilder &b, const TiledSdpa &sdpa, Value p,
                       Value vTile, Value vLo, Value acc);

/// Whether transpose-values applies to `sdpa`: bf16 values (or f16 ones
/// with split-f16), Dv and bk multiples of 16, not the decode kernel.
bool takesTransposedValues(const TiledSdpa &sdpa);

/// Whether pair-values applies to `sdpa`: bf16 values, Dv a multiple of 16,
/// bk even, not the decode kernel, nor transpose-values.
bool takesPairedValues(const TiledSdpa &sdpa);

/// Whether split-f16 applies: f16 K and V, D, Dv and bk multiples of 16, not
/// the decode kernel.
bool takesSplitF16(const TiledSdpa &sdpa);

/// K split into bf16 hi and lo, once per call (sdpa.keysSplit's layout): a
/// `bf16_keys` tile op per key block.
Value emitSplitKeys(OpBuilder &b, const TiledSdpa &sdpa);

/// The K and V tiles of the key block from kStart: full (`tailLen` null) or
/// the partial last one of tailLen keys.
KvTiles kvTilesAt(OpBuilder &b, const TiledSdpa &sdpa, const QueryBlock &qb,
                  Value kStart, Value tailLen);

/// V transposed into a [B, Hkv, Dv, ceil(Lk / bk) * bk] tensor (with
/// split-f16 bf16, twice the columns: sdpa.valuesT's layout), zero past Lk:
/// an scf.forall over (batch, key/value head, full key block) of
/// `transpose_values` tile ops, then one over (batch, key/value head) for
/// the partial last block, if any.
Value emitTransposedValues(OpBuilder &b, const TiledSdpa &sdpa);

/// V in key pairs, [B, Hkv, ceil(Lk / bk) * bk / 2, 2 * Dv] (sdpa.
/// valuesPaired's layout), zero past Lk: `pair_values` tile ops in foralls
/// as emitTransposedValues's.
Value emitPairedValues(OpBuilder &b, const TiledSdpa &sdpa);

/// The normalized output of the block's `rows` valid rows, [rows, dv] in
/// the element type, written into `dest`.
Value emitOutputRows(OpBuilder &b, const TiledSdpa &sdpa,
                     const SoftmaxState &state, OpFoldResult rows, Value dest);

/// lse = ln(2) * (m + log2(l)), -inf where l == 0: a [bq] f32 tile.
Value emitLseTile(OpBuilder &b, const TiledSdpa &sdpa,
                  const SoftmaxState &state);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_TILEOPS_H
