//===- ScoreModifiers.h - attention variants for the lowerings --*- C++ -*-===//
//
// Part of the attn project.
//
// The attention variants of attn.sdpa that change a score's value, as both
// lowerings build them: softcap and ALiBi, one scalar builder each, applied
// to each score. Those that change which keys a query sees (causal, sliding
// window, key lengths) are the attention geometry (Geometry.h).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_SCOREMODIFIERS_H
#define ATTN_DIALECT_ATTN_UTILS_SCOREMODIFIERS_H

#include "mlir/IR/Builders.h"

namespace mlir::attn {

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
