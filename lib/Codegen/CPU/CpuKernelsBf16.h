//===- CpuKernelsBf16.h - bf16 dot-product kernels for the tile ops -*- C++
//-*-===//
//
// Part of the attn project.
//
// The scores and P.V kernels on AVX512-BF16's vdpbf16ps
// (x86vector.avx512.dot): each instruction multiplies 16 pairs of bf16
// values by 16 pairs and adds both products of a pair into one f32 lane, so
// both operands must hold the reduction dim in adjacent pairs. Private to
// the attn transforms library; CpuMicrokernels.cpp decides when to use them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSBF16_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSBF16_H

#include "CpuKernels.h"

namespace mlir::attn::detail {

/// dst[t, 2 * i + k] = bf16(src[2 * t + k, i] * scale) for k in {0, 1}:
/// the rows of the f32 tile `src` [R, N] (R even, N a multiple of the
/// vector width) as pairs of adjacent rows interleaved along N, rounded to
/// bf16 (to nearest even). dst is [R / 2, 2 * N] bf16. With 16 lanes (the
/// AVX512-BF16 path) both rows are rounded by one vcvtne2ps2bf16 and
/// interleaved by one word shuffle.
void emitPackRowPairsF32(KernelBuilder &kernel, Value src, Value dst,
                         std::optional<float> scale);

/// Two f32 vectors of W lanes as 2W bf16 values, lane i of each side by
/// side: [bf16(x0[0]), bf16(x1[0]), bf16(x0[1]), ...] (one vcvtne2ps2bf16
/// and one word shuffle at W = 16).
/// With `elt` f16, the same in f16 (the AMX-FP16 tiles' pairs).
Value emitPairF32(KernelBuilder &kernel, Value x0, Value x1, Type elt = {});

/// x (f32, W lanes) as two bf16 vectors, hi = bf16(x) and lo = bf16(x -
/// hi): their sum is x to 2^-17 relative (exactly, for an x that an f16
/// holds).
std::pair<Value, Value> emitSplitF32(KernelBuilder &kernel, Value x);

/// emitPackRowPairsF32 into two buffers of the same layout: the pairs of
/// the hi parts and of the lo parts (emitSplitF32) of src * scale.
void emitPackRowPairsF32Split(KernelBuilder &kernel, Value src, Value dstHi,
                              Value dstLo, std::optional<float> scale);

/// The same for a bf16 tile (V [bk, dv]): no rounding.
void emitPackRowPairsBf16(KernelBuilder &kernel, Value src, Value dst);

/// out[c, i] (+)= outScale * sum_t dot(aPairs[t, 2i..2i+1], bPair(c, t)):
/// the register-blocked kernel of emitContraction on vdpbf16ps. aPairs
/// [T, 2 * bq] bf16 holds the reduction dim in pairs along the rows;
/// `bPair(c, t)` gives the indices into `bMat` (bf16) of the two adjacent
/// elements that pair with aPairs[t]. The extras are those of
/// emitContraction; `outScale`, if not 1, multiplies the sums before they
/// are stored (and before the row max is taken). With extras.hiddenAbove or
/// hiddenBelow (a block on the causal diagonal or a window's lower edge):
/// where `reducesKeyPairs` (P.V: aPairs holds key pairs), each register
/// block reduces from the pair of the first key to the pair of the last key
/// its rows see (edgeReductionRange); otherwise (scores: out's c are keys)
/// the register blocks whose keys are all hidden from all their rows are
/// left out, as in emitContraction.
void emitBf16Contraction(
    KernelBuilder &kernel, const RegisterBlocking &blocking, Value aPairs,
    Value bMat, function_ref<SmallVector<Value>(Value c, Value t)> bPair,
    Value out, const ContractionExtras &extras, float outScale,
    bool reducesKeyPairs = false);

/// A [rows, cols] bf16 scratch buffer of the query block around `op`, of
/// its own (a packed query lives through the key loop): CpuScratch.h's,
/// tagged "bf16-pairs".
/// With `elt` (f16), a buffer of that type instead.
Value bf16Scratch(Operation *op, int64_t rows, int64_t cols, Type elt = {});

/// Whether the `scores` tile op `op` can read its query tile packed into
/// bf16 dim pairs: bf16 keys (or with `f16Pairs` f16 ones, packed in f16),
/// an even d, a score scale, inside a query block (scf.forall) whose query
/// tile is complete before the key loop.
bool scoresTakePackedQuery(linalg::GenericOp op, bool f16Pairs = false);

/// The query tile of `op` (scoresTakePackedQuery must hold) packed into
/// pairs of adjacent dims [d / 2, 2 * bq] (emitPackRowPairsF32, with the
/// score scale divided back out: the bf16 query that was given), built in
/// front of the key loop, once per query block; in f16 where the keys are
/// f16 (AMX-FP16). With `split` (f16 queries for split-f16 keys), the pairs
/// of its hi parts and of its lo parts (emitPackRowPairsF32Split), second.
std::pair<Value, Value>
emitQueryPairs(KernelBuilder &kernel, linalg::GenericOp op, bool split = false);

/// The `scores` tile op `op` (St [bk, bq] += K [bk, d] . Qt [d, bq]) on
/// vdpbf16ps, for bf16 keys and an even d: the query tile is packed into
/// row pairs once per query block (in front of the key loop, with the
/// score scale divided back out so the packed query is the bf16 query that
/// was given), K is read in place (its rows hold d in pairs), and the sums
/// are multiplied by the score scale as they are stored; with `unscaled`,
/// they are stored unscaled, for a softmax that applies the scale itself
/// (ContractionExtras' rowMaxScale, emitProbabilities' scoreScale). Returns
/// false, building nothing, if the op does not qualify.
bool emitScoresBf16(KernelBuilder &kernel, const RegisterBlocking &blocking,
                    linalg::GenericOp op, const ContractionExtras &extras,
                    bool unscaled = false);

/// Replaces the `pair_values` tile op `op` (V [bk, dv] bf16 into Vp [bk /
/// 2, 2 dv], static contiguous buffers) by emitPackRowPairsBf16 at `width`
/// lanes, where dv is whole vectors and bk even; returns false, changing
/// nothing, otherwise.
bool rewritePairValues(linalg::GenericOp op, int64_t width);

/// Whether the `pv` tile op `op` reads V packed into key pairs, Vp [bk / 2,
/// 2 dv] at (j floordiv 2, 2e + j mod 2) (attn-tile-online-softmax's
/// pair-values), rather than V [bk, dv].
bool readsPairedValues(linalg::GenericOp op);

/// Whether emitPVBf16 takes the `pv` tile op `op`: bf16 values (V [bk, dv]
/// or Vp [bk / 2, 2 dv]), f32 probabilities, an even bk, dv a multiple of
/// the vector width, inside a query block (scf.forall).
bool bf16DotTakesPV(const KernelBuilder &kernel, linalg::GenericOp op);

/// The `pv` tile op (acct [dv, bq] += V [bk, dv] . Pt [bk, bq]) on
/// vdpbf16ps (bf16DotTakesPV must hold, else it returns false, building
/// nothing): Pt is rounded to bf16 and packed into key pairs, V packed into
/// key pairs (unless it comes packed: readsPairedValues), both into buffers
/// of the query block. With `pPairs` ([bk / 2, 2 * bq] bf16), P is read
/// from there, packed already (by emitProbabilities), and Pt is not read.
bool emitPVBf16(KernelBuilder &kernel, const RegisterBlocking &blocking,
                linalg::GenericOp op, const ContractionExtras &extras,
                Value pPairs = {});

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELSBF16_H
