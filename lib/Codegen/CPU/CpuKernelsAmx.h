//===- CpuKernelsAmx.h - the bf16 and f16 products on AMX tiles -*- C++ -*-===//
//
// Part of the attn project.
//
// The scores and P.V tile ops of bf16 inputs on Intel AMX (amx.tile_mulf,
// tdpbf16ps): C [16, 16] f32 += A [16, 32] bf16 . B, where B holds the
// reduction dim in adjacent pairs (16 rows of 16 pairs). Both products have
// that form with the tiling's transposed layouts:
//   scores: St [bk, bq] += K [bk, d] . Qt     (A: K as it is, B: the query
//           tile packed into dim pairs once per query block)
//   pv:     acct [dv, bq] += Vt [dv, bk] . Pt (A: V transposed, B: P
//           rounded to bf16 and packed into key pairs)
// Private to the attn transforms library; CpuMicrokernels.cpp decides when
// to use them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSAMX_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSAMX_H

#include "CpuKernels.h"

namespace mlir::attn::detail {

/// dst [C, R] = src [R, C]^T for bf16 tiles (R, C multiples of the vector
/// width): W x W blocks transposed in registers. The `transpose_values`
/// tile op's kernel, and P.V's where V is not transposed already.
void emitTransposeBf16(KernelBuilder &kernel, Value src, Value dst);

/// dst [R', 2, C'] = the hi (dst[:, 0, :]) and lo (dst[:, 1, :]) parts of
/// the f16 tile src [R, C] (each element x as bf16(x) and bf16(x -
/// bf16(x)), which sum to x exactly), transposed (R' = C, C' = R) if
/// `transpose`; R and C multiples of the vector width (16).
void emitSplitF16(KernelBuilder &kernel, Value src, Value dst, bool transpose);

/// Whether the `pv` tile op `op` reads the transposed values Vt [dv, bk]
/// (attn-tile-online-softmax's transpose-values) rather than V [bk, dv].
bool readsTransposedValues(linalg::GenericOp op);

/// Whether the `scores` or `pv` tile op `op` reads split-f16's hi and lo
/// parts (three inputs: K or V = input 1 + input 2).
bool isSplitF16(linalg::GenericOp op);

/// The bf16 key pairs of P (emitProbabilities' `pairs`), and with
/// split-f16 those of P's lo parts.
struct ProbPairs {
  Value hi, lo;
};

/// Whether the AMX kernels take the `scores` tile op `op`: bf16 keys, D a
/// multiple of 16, 16-row blocks of keys and queries, a score scale, inside
/// a query block (scf.forall) whose query tile is complete before the key
/// loop.
/// With `fp16` (AMX-FP16), f16 keys too, on f16 tiles.
bool amxTakesScores(linalg::GenericOp op, bool fp16);

/// Whether they take the `pv` tile op `op`: bf16 values, f32 probabilities,
/// keys a multiple of 16, Dv and the query rows multiples of 16.
/// With `fp16` (AMX-FP16), f16 values too (P rounded to f16).
bool amxTakesPV(linalg::GenericOp op, bool fp16);

/// St (+)= K . Qt on AMX tiles (amxTakesScores must hold; from zero with
/// `fromZero`, else onto what St holds), stored unscaled
/// when `unscaled` (for a softmax that applies the score scale itself),
/// else times the score scale. With `rowMax` ([bq] f32), also rowMax[i] =
/// max(rowMax[i], max_j scale * St[j, i]).
void emitScoresAmx(KernelBuilder &kernel, linalg::GenericOp op, Value rowMax,
                   bool unscaled, bool fromZero);

/// acct (*= rowScale, if set) += Vt . Pt on AMX tiles (amxTakesPV must
/// hold): V transposed and P packed into key pairs in buffers of the query
/// block; with `probPairs`, P is read from there, packed already (by
/// emitProbabilities). The rescale is skipped when every factor is 1 (the
/// running max did not move: the common case once a row has seen its
/// largest scores), exactly what multiplying by 1 would give.
void emitPVAmx(KernelBuilder &kernel, linalg::GenericOp op, Value rowScale,
               ProbPairs probPairs);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSAMX_H
