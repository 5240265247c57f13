//===- ScoreModifiers.h - attention variants for the lowerings --*- C++ -*-===//
//
// Part of the attn project.
//
// The attention variants of attn.sdpa as both lowerings read them. Those
// that change which keys a query sees (causal, sliding window): one band of
// visible keys around the diagonal, and the predicate that tests a key
// against it; the naive lowering applies the predicate to every score, the
// fused one also uses the band to skip key blocks that no row of a query
// block sees. Those that change a score's value (softcap): one scalar
// builder, applied to each score.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_SCOREMODIFIERS_H
#define ATTN_DIALECT_ATTN_UTILS_SCOREMODIFIERS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// The keys that the causal and window rules let a query row see: key j is
/// visible to the row whose diagonal is `diag` iff
/// diag - left <= j <= diag + right. A side without a bound is nullopt.
/// The diagonal is diag = i (top_left) or i + Lk - Lq (bottom_right).
struct VisibleBand {
  std::optional<int64_t> left, right;
  CausalKind alignment = CausalKind::TopLeft;
};

/// Bounds at or above this are clamped to it, so that index arithmetic on
/// them (i + Lk - Lq - left) cannot overflow.
inline constexpr int64_t kMaxBandWidth = int64_t(1) << 62;

/// The band of `op`: `causal` (right bound 0) and `window` combined, aligned
/// as `causal` says or bottom_right for a window without `causal`. nullopt
/// when neither bounds anything.
std::optional<VisibleBand> getVisibleBand(SdpaOp op);

/// The diagonal's offset from the query index: Lk - Lq for bottom_right, 0
/// for top_left (index values).
Value buildDiagonalShift(OpBuilder &b, Location loc, const VisibleBand &band,
                         Value lq, Value lk);

/// i1: whether `key` lies in the band of the row whose diagonal is `diag`
/// (index values; scalars or vectors of index alike).
Value buildBandPredicate(OpBuilder &b, Location loc, const VisibleBand &band,
                         Value diag, Value key);

/// key_lengths[batch] as an index clamped to [0, lk]: the keys batch `batch`
/// sees (the rest are invisible).
Value buildKeyLength(OpBuilder &b, Location loc, Value keyLengths, Value batch,
                     Value lk);

/// The ALiBi slope (f32) of (batch, head): slopes[head] or
/// slopes[batch, head].
Value buildAlibiSlope(OpBuilder &b, Location loc, Value slopes, Value batch,
                      Value head);

/// s - slope * |diag - key| for the f32 score `s`, with `diag` = i + Lk - Lq
/// (index values, scalars; FlashAttention's ALiBi).
Value buildAlibi(OpBuilder &b, Location loc, Value s, Value slope, Value diag,
                 Value key);

/// cap * tanh(s / cap) for the f32 score `s` (math.tanh: a target expands
/// it as it sees fit).
Value buildSoftcap(OpBuilder &b, Location loc, Value s, float cap);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_SCOREMODIFIERS_H
