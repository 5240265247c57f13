//===- Geometry.h - the keys each query row sees ----------------*- C++ -*-===//
//
// Part of the attn project.
//
// The attention geometry of attn.sdpa, attn.sdpa_grad and attn.sdpa_varlen
// (AttentionOpInterface), written once for every lowering. The causal and
// window rules leave each query row one band of visible keys around its
// diagonal: the row itself (top_left) or the row shifted by keyLen - Lq
// (bottom_right, keyLen the batch's key length). Keys at or past keyLen are
// never visible.
//
// The naive lowerings (convert-attn-to-linalg, convert-attn-grad-to-linalg)
// test every score against the band. The CPU tiling (KeyBlocks), the GPU
// kernels (GpuScoreModifiers) and the CPU backward (CpuSdpaGrad) also skip
// what no row sees and leave the element mask off the key blocks that every
// row sees whole; they build their ranges from the edges below and clamp
// them as their loops need.
//
// VisibleBand's members state the rules on integers, the build* functions
// build the same formulas on index values; the unit tests hold each to the
// other.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_GEOMETRY_H
#define ATTN_DIALECT_ATTN_UTILS_GEOMETRY_H

#include "attn/Dialect/Attn/IR/AttnInterfaces.h"

#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// Bounds at or above this are clamped to it, so that index arithmetic on
/// them (i + Lk - Lq - left) cannot overflow.
inline constexpr int64_t kMaxBandWidth = int64_t(1) << 62;

/// The keys that the causal and window rules let a query row see: key j is
/// visible to the row whose diagonal is `diag` iff
/// diag - left <= j <= diag + right. A side without a bound is nullopt.
/// The diagonal is diag = i (top_left) or i + keyLen - Lq (bottom_right).
struct VisibleBand {
  std::optional<int64_t> left, right;
  CausalKind alignment = CausalKind::TopLeft;

  bool isBottomRight() const { return alignment == CausalKind::BottomRight; }

  /// The diagonal's offset from the query row: keyLen - lq (bottom_right)
  /// or 0 (top_left).
  int64_t getDiagonalShift(int64_t lq, int64_t keyLen) const {
    return isBottomRight() ? keyLen - lq : 0;
  }
  /// The first key the row whose diagonal is `diag` sees, diag - left
  /// (negative where the band reaches past key 0); nullopt without a left
  /// bound.
  std::optional<int64_t> getFirstKey(int64_t diag) const {
    if (!left)
      return std::nullopt;
    return diag - *left;
  }
  /// One past the last key that row sees, diag + right + 1; nullopt
  /// without a right bound.
  std::optional<int64_t> getKeyEnd(int64_t diag) const {
    if (!right)
      return std::nullopt;
    return diag + *right + 1;
  }
  /// The first query row that sees `key`, key - diagShift - right; nullopt
  /// without a right bound (every row up to the left edge does).
  std::optional<int64_t> getFirstRow(int64_t diagShift, int64_t key) const {
    if (!right)
      return std::nullopt;
    return key - diagShift - *right;
  }
  /// Whether the band admits `key` to the row whose diagonal is `diag`.
  bool admits(int64_t diag, int64_t key) const {
    std::optional<int64_t> first = getFirstKey(diag), end = getKeyEnd(diag);
    return (!first || key >= *first) && (!end || key < *end);
  }
};

/// The band of `op`: `causal` (right bound 0) and `window` combined, aligned
/// as `causal` says or bottom_right for a window without `causal`. nullopt
/// when neither bounds anything.
std::optional<VisibleBand> getVisibleBand(AttentionOpInterface op);

/// A key length `length` clamped to [0, lk]: the keys a batch sees.
int64_t clampKeyLength(int64_t length, int64_t lk);

//===----------------------------------------------------------------------===//
// The same on index values. Each function creates its ops in the order
// written, so that callers that create theirs around it keep one IR.
//===----------------------------------------------------------------------===//

/// The diagonal's offset from the query row: keyLen - lq for bottom_right
/// (folded where both are constants, so that passes see a static shift as
/// one), a constant 0 for top_left.
Value buildDiagonalShift(OpBuilder &b, Location loc, const VisibleBand &band,
                         Value lq, Value keyLen);

/// The diagonal of query row `row`: row + diagShift, or `row` itself for a
/// null diagShift (a caller that has no shift to add).
Value buildDiagonal(OpBuilder &b, Location loc, Value row, Value diagShift);

/// i1: whether `key` lies in the band of the row whose diagonal is `diag`
/// (index values; scalars or vectors of index alike).
Value buildBandPredicate(OpBuilder &b, Location loc, const VisibleBand &band,
                         Value diag, Value key);

/// diag - left: the first key the row whose diagonal is `diag` sees (not
/// clamped to key 0); null without a left bound.
Value buildFirstVisibleKey(OpBuilder &b, Location loc, const VisibleBand &band,
                           Value diag);

/// diag + right + 1: one past the last key that row sees (not clamped to
/// the key length); null without a right bound.
Value buildVisibleKeyEnd(OpBuilder &b, Location loc, const VisibleBand &band,
                         Value diag);

/// key - diagShift - right: the first query row that sees `key` (not
/// clamped to [0, Lq]); null without a right bound. Rows and keys may count
/// from any common origin (a block's first row and key).
Value buildFirstVisibleRow(OpBuilder &b, Location loc, const VisibleBand &band,
                           Value diagShift, Value key);

/// Key blocks of `blockSize` keys (index values) against the band of the
/// rows whose diagonals run from firstDiag to lastDiag: blocks from
/// ceil((lastDiag - left) / blockSize) on lie at or above the lower edge of
/// every such row (null without a left bound) ...
Value buildFirstUnmaskedBlock(OpBuilder &b, Location loc,
                              const VisibleBand &band, Value lastDiag,
                              Value blockSize);

/// ... and blocks before floor((firstDiag + right + 1) / blockSize) at or
/// below the upper edge of every such row (null without a right bound).
/// Between the two, every row sees every key: no element mask.
Value buildUnmaskedBlockEnd(OpBuilder &b, Location loc, const VisibleBand &band,
                            Value firstDiag, Value blockSize);

/// An i32 key length `length` (a scalar) clamped to [0, lk], as an index.
Value buildClampedKeyLength(OpBuilder &b, Location loc, Value length, Value lk);

/// key_lengths[batch] (a tensor of i32) clamped to [0, lk]: the keys batch
/// `batch` sees (the rest are invisible).
Value buildKeyLength(OpBuilder &b, Location loc, Value keyLengths, Value batch,
                     Value lk);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_GEOMETRY_H
