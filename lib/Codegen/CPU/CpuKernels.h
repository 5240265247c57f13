//===- CpuKernels.h - vector kernels for the CPU tile ops -------*- C++ -*-===//
//
// Part of the attn project.
//
// The vector code that attn-cpu-microkernels puts in place of the tile ops
// of attn-tile-online-softmax (on memrefs, after bufferization): the
// register-blocked contraction of both products, the key reductions, the
// update of the running max, the probabilities with a polynomial exp2, the
// rescale and the element mask. Query rows run along the vectors. Private
// to the attn transforms library; which op gets which kernel is decided in
// CpuMicrokernels.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELS_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELS_H

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/Utils/IrBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn::detail {

/// Builds the vector code of one tile op in front of it.
class KernelBuilder : public IrBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, int64_t width)
      : IrBuilder(b, loc), width(width),
        vecType(VectorType::get({width}, b.getF32Type())) {}

  using IrBuilder::add;
  /// x + c, or x itself for c = 0.
  Value add(Value x, int64_t c) {
    return c == 0 ? x : arith::AddIOp::create(b, loc, x, idx(c)).getResult();
  }
  Value splat(float v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(v)));
  }
  Value load(Value mem, ValueRange indices) {
    return vector::LoadOp::create(b, loc, vecType, mem, indices);
  }
  void store(Value v, Value mem, ValueRange indices) {
    vector::StoreOp::create(b, loc, v, mem, indices);
  }
  /// store() of a value that may be a select of what was loaded from the
  /// same place (a mask that keeps some lanes). With `blendStores`, through
  /// an empty inline asm that hides where the value came from: LLVM's DAG
  /// combiner turns such a store into a masked store (AVX2's vmaskmovps),
  /// which AMD Zen cores run microcoded, many times slower than the blend
  /// and plain store this keeps. The asm costs no instruction; it needs a
  /// vector register of the kernel's width (AVX2 or AVX-512).
  void storeBlended(Value v, Value mem, ValueRange indices);
  /// The [sizes] window of `mem` at `offsets` (unit strides): a kernel
  /// indexes it with constants, which the backend folds into address
  /// displacements instead of keeping one index register per accumulator.
  Value window(Value mem, ArrayRef<Value> offsets, ArrayRef<int64_t> sizes) {
    SmallVector<OpFoldResult> offs(offsets.begin(), offsets.end());
    SmallVector<OpFoldResult> szs, strides;
    for (int64_t size : sizes) {
      szs.push_back(b.getIndexAttr(size));
      strides.push_back(b.getIndexAttr(1));
    }
    return memref::SubViewOp::create(b, loc, mem, offs, szs, strides);
  }
  /// bf16 is rounded in integer code (attn-cpu-microkernels'
  /// bf16-round-in-integers: kernels without AVX512-BF16's vcvtneps2bf16):
  /// the output kernel then transposes f32 and rounds after.
  bool bf16RoundInIntegers = false;

  /// One element of `mem` (any float type), as f32, in every lane.
  Value broadcast(Value mem, ValueRange indices) {
    Value x = memref::LoadOp::create(b, loc, mem, indices);
    if (!x.getType().isF32())
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return vector::BroadcastOp::create(b, loc, vecType, x);
  }

  /// Two bf16 held in one 32-bit word (`word`, i32; the first in its low
  /// half) in every lane, as 2W bf16: the operand by which a vdpbf16ps
  /// multiplies each pair of the other (x86vector.avx512.dot).
  Value splatPair(Value word) {
    Value words = vector::BroadcastOp::create(
        b, loc, VectorType::get({width}, b.getI32Type()), word);
    return vector::BitCastOp::create(
        b, loc, VectorType::get({2 * width}, b.getBF16Type()), words);
  }

  /// max(x, y) as a compare and a select, which x86 turns into one vmaxps.
  /// It may drop a NaN; that is harmless here because a NaN score also
  /// reaches exp2(s - m), the row sum and the output by itself.
  Value max(Value x, Value y) {
    Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::SelectOp::create(b, loc, gt, x, y);
  }

  /// An scf.for from lb to ub carrying `inits`: body(iv, carried) builds
  /// the iteration (with this builder) and returns the values it yields.
  /// Returns the loop's results.
  SmallVector<Value>
  loopCarrying(int64_t lb, int64_t ub, int64_t step, ValueRange inits,
               function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return loopCarrying(idx(lb), idx(ub), step, inits, body);
  }
  /// The same with index values as bounds.
  SmallVector<Value>
  loopCarrying(Value lb, Value ub, int64_t step, ValueRange inits,
               function_ref<SmallVector<Value>(Value, ValueRange)> body);

  /// for (iv = lb; iv < ub; iv += step) body(iv), as scf.for.
  void loop(int64_t lb, int64_t ub, int64_t step,
            function_ref<void(Value)> body) {
    if (lb >= ub)
      return;
    loopCarrying(lb, ub, step, {}, [&](Value iv, ValueRange) {
      body(iv);
      return SmallVector<Value>();
    });
  }

  /// combine(init, element(0), ..., element(numElements - 1)), with
  /// `chains` partial results carried through the loop so the combines do
  /// not wait on each other (`identity` starts all but the first), combined
  /// pairwise at the end.
  Value reduceChained(int64_t numElements, Value init, Value identity,
                      function_ref<Value(Value)> element,
                      function_ref<Value(Value, Value)> combine,
                      int64_t chains = 4);

  /// Covers [0, total) with blocks of `block` (a loop) and one last block of
  /// total % block, each handed to body(start, count) with a static count.
  void blocked(int64_t total, int64_t block,
               function_ref<void(Value, int64_t)> body) {
    int64_t full = total / block * block;
    loop(0, full, block, [&](Value start) { body(start, block); });
    if (full < total)
      body(idx(full), total - full);
  }

  /// 2^x for x < 127.5 (or NaN): x = n + f with n = round(x), f in
  /// [-1/2, 1/2] (x > 0 where a running max is kept lazily: up to the slack,
  /// 8, of kAmxMaxSlack and kDecodeMaxSlack);
  /// 2^f by a degree-6 minimax polynomial (relative error < 3e-9 before
  /// rounding), 2^n applied by adding n << 23 to its bits. x is clamped at
  /// -127, where f = 0 gives p = 1 and a result of exactly 0 (so -inf gives
  /// 0), and f > 0 a value below 2^-126. A NaN passes the clamp (a compare
  /// is false for it) and the polynomial, and stays NaN whatever is added to
  /// its exponent bits. `forBf16`: a degree-4 polynomial instead (relative
  /// error < 3e-6), for values that weigh bf16 values (rounded to bf16 or
  /// ending in a bf16 result).
  /// With `scalefExp` (W = 16 on an AVX-512 CPU with AVX512DQ): exp2ByScalef
  /// instead.
  Value exp2(Value x, bool forBf16 = false);

  /// Whether a block whose max is `blockMax` moves the running max `m`
  /// where the max is kept lazily (kAmxMaxSlack, kDecodeMaxSlack): it
  /// passes m by more than `slack` (log2 units), or is NaN (UGT). False for
  /// -inf over -inf.
  Value maxMoves(Value m, Value blockMax, float slack);
  /// exp2(mOld - mNew), the factor a row's sums and accumulators take where
  /// its max moves from mOld to mNew (exactly 1 where it stays), and 0 while
  /// mOld is -inf (no key seen: nothing to keep, and no NaN from -inf minus
  /// -inf).
  Value rescaleFactor(Value mOld, Value mNew);
  /// 2^x as three steps on AVX-512: f = x - floor(x) by vreduceps, 2^f by
  /// the same fits moved to [0, 1], times 2^floor(x) by vscalefps (which
  /// floors x itself): 8 instructions per vector for degree 6 where exp2's
  /// integer form takes 13. No clamp: -inf gives exactly 0, +inf +inf and
  /// NaN NaN; below -149 the result rounds to 0, between -149 and -126 it
  /// is the subnormal 2^x.
  Value exp2ByScalef(Value x, bool forBf16);
  /// poly (highest degree first) at f, by Horner's rule on vector.fma.
  Value horner(ArrayRef<double> poly, Value f);

  int64_t width;
  VectorType vecType;
  /// exp2 by vscalefps (attn-cpu-microkernels' avx512-exp).
  bool scalefExp = false;
  /// storeBlended keeps plain stores (attn-cpu-microkernels' blend-stores).
  bool blendStores = false;
};

inline MemRefType memrefOf(Value v) {
  return dyn_cast<MemRefType>(v.getType());
}

/// True if `type`'s innermost dim has stride 1 (or it has no dims): vector
/// loads along it are plain loads.
inline bool hasContiguousInnerDim(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         (strides.empty() || strides.back() == 1);
}

struct RegisterBlocking {
  int64_t width;    // f32 lanes per vector
  int64_t rowVecs;  // row vectors per block
  int64_t regBlock; // keys / value columns per block
};

/// What the two products add to the shared contraction kernel.
struct ContractionExtras {
  /// `out` is known to hold zeros: accumulators start at 0, not loaded.
  bool fromZero = false;
  /// If set, out[c, i] is first multiplied by rowScale[i] as it is loaded.
  Value rowScale;
  /// With rowMax: the row max is of rowMaxScale * out (out holds unscaled
  /// scores; rowMaxScale > 0, applied once per row vector and block).
  float rowMaxScale = 1.0f;
  /// If set, rowMax[i] = max(rowMax[i], out[c, i]) over all c, from the
  /// accumulators while they are in registers.
  Value rowMax;
  /// If set (a view that contiguousRowStride accepts: the K or V tile), the
  /// bytes right after it, as many as it holds, are prefetched into L2, one
  /// cache line per reduction step (CpuPrefetch.cpp).
  Value prefetchAfter;
  /// If set (a view that contiguousRowStride accepts: this query block's
  /// query rows, or its output rows), the next query block's rows right
  /// after it are prefetched too (for write if `nextRowsForWrite`), one line
  /// per reduction step of each register block, so that they are in L2 when
  /// the next block starts, without a burst of prefetches in one place.
  Value nextRows;
  bool nextRowsForWrite = false;
  /// At most this many reduction steps per prefetch (a power of two):
  /// attn-cpu-microkernels' `prefetch-spread`, for the f32 products only.
  /// Each prefetch costs an address, a clamp and a load slot in the
  /// reduction loop; with one per step, most repeat the clamped last line.
  int64_t prefetchSpread = 1;
  /// If set (h: the tile op's kHiddenAboveAttrName, a block on the causal
  /// diagonal), key j is hidden from row i wherever j > i + h: the f32 and
  /// bf16 kernels leave out the register blocks of scores whose keys are all
  /// hidden from all their rows (St [keys, rows]: left as they are, for the
  /// element mask after them to replace), and end P.V's reduction over keys
  /// at the last key a row of the register block sees.
  std::optional<int64_t> hiddenAbove;
  /// If set (h: kHiddenBelowAttrName, a block on a window's lower edge), key
  /// j is hidden from row i wherever j < i - h: as with hiddenAbove, the
  /// score blocks hidden from all their rows are left out, and P.V starts
  /// at the first key a row of the register block sees.
  std::optional<int64_t> hiddenBelow;
};

/// The row stride of a 2-D view whose rows follow each other without a gap
/// (stride [D, 1], D static), or nullopt.
std::optional<int64_t> contiguousRowStride(Value view);

/// The address (an index: bytes) of the element right after the last row of
/// a view that contiguousRowStride accepts.
Value addressAfterView(KernelBuilder &kernel, Value view);

/// A prefetch of the cache line at `address` (an index: bytes) into L2.
void prefetchAt(KernelBuilder &kernel, Value address, bool forWrite);

/// One register block of out [C, BQ]: c = c0 + cOffsets[c] (count of
/// them), rows i0 + rowOffsets[r] (rowVecs vectors). The offsets are
/// constants: a kernel indexes windows of its tiles at (c0, i0) with them,
/// so that the backend folds them into address displacements.
struct RegisterBlock {
  Value c0, i0;
  SmallVector<Value> rows;       // i0 + r * width
  SmallVector<Value> cOffsets;   // c
  SmallVector<Value> rowOffsets; // r * width
};

/// The prefetches of a contraction with out [C, BQ] and `numT` reduction
/// steps (ContractionExtras::prefetchAfter and nextRows), built once before
/// its register blocks. With a `spread` of 1 (one prefetch per step): per
/// register block, `firstLines` (outside the reduction loop) gives each
/// stream's first line: of the K/V tile after this one, register block *
/// numT; of the next query block's rows, (register block * row groups + row
/// group) * numT; `emit` then issues, at step t, line first + t of each
/// stream, clamped to its last. With a larger spread (a power of two that
/// divides numT, chosen from ContractionExtras::prefetchSpread so that the
/// register blocks' steps still reach every line), only every spread-th
/// step prefetches: register block b (counted over both the c blocks and
/// the row groups) starts at line b * numT / spread, and `emit` at step t
/// (a multiple of the spread) issues line first + t / spread
/// (CpuPrefetch.cpp).
class ContractionPrefetch {
public:
  ContractionPrefetch(KernelBuilder &kernel, const RegisterBlocking &blocking,
                      Value out, int64_t numT, const ContractionExtras &extras);
  SmallVector<Value> firstLines(const RegisterBlock &block);
  void emit(ArrayRef<Value> firstLines, Value t);
  /// Reduction steps per prefetch of each stream (1 without streams).
  int64_t spread() const { return every; }

private:
  struct Stream {
    Value after;
    int64_t lines;
    bool forWrite, perRowGroup;
  };
  void addStream(Value view, bool forWrite, bool perRowGroup);

  KernelBuilder &kernel;
  const RegisterBlocking &blocking;
  int64_t numT, rowGroups;
  int64_t every = 1;
  SmallVector<Stream, 2> streams;
};

/// On a block of a band's edge (ContractionExtras::hiddenAbove: the causal
/// diagonal; hiddenBelow: a window's lower edge), whether a register block
/// of scores (St [keys, rows]) of `rowStep` rows holds a key that one of
/// its rows sees (an i1): its first key c0 <= its last row i0 + rowStep - 1
/// + h, and its last key c0 + count - 1 >= its first row i0 - h. Where it
/// does not, every key is hidden from every row.
Value edgeScoresNeeded(KernelBuilder &kernel, const RegisterBlock &block,
                       int64_t rowStep, const ContractionExtras &extras);

/// On a block of a band's edge, the steps [start, end) of a P.V register
/// block's reduction over `numT` steps of `keysPerStep` keys (rows
/// [i0, i0 + rowStep)): from the step of the first key its first row sees
/// (i0 - h, hiddenBelow; else 0), rounded down to a multiple of `align`, to
/// the step past the last key its last row sees (i0 + rowStep - 1 + h,
/// hiddenAbove, rounded up to a whole step; else numT), at most numT. The
/// keys left out have probability 0.
std::pair<Value, Value>
edgeReductionRange(KernelBuilder &kernel, const RegisterBlock &block,
                   int64_t rowStep, const ContractionExtras &extras,
                   int64_t numT, int64_t keysPerStep, int64_t align = 1);

/// The register blocks of out [C, BQ] that both contractions (f32 and
/// bf16 dot products) run: for each block of regBlock c's times rowVecs row
/// vectors, the accumulators (c-major: [c * rowVecs + r]) are loaded from
/// the block's window of out (or zeros with fromZero, times
/// rowScale[rows[r]] when set), handed to `body`, and what it returns is
/// stored back and, with rowMax set, folded into the row max while in
/// registers.
/// With `needed`, a block runs (loads, body, stores) only where needed(block)
/// (an i1) is true.
void emitRegisterBlocks(
    KernelBuilder &kernel, const RegisterBlocking &blocking, Value out,
    const ContractionExtras &extras,
    function_ref<SmallVector<Value>(const RegisterBlock &block,
                                    SmallVector<Value> acc)>
        body,
    function_ref<Value(const RegisterBlock &block)> needed = nullptr);

/// out[c, i] += sum_t B(c, t) * A[t, i], the register-blocked kernel of both
/// products: A [T, BQ] is read as row vectors, B one element at a time (as
/// B[c, t], or as B[t, c] if `bIsTC`), broadcast. A block of regBlock c's
/// times rowVecs row vectors of accumulators is carried in registers through
/// the whole reduction over t and stored once.
///   scores: St[j, i] += sum_d K[j, d] * Qt[d, i]  (out St, A Qt, B K)
///   pv:     acct[e, i] += sum_j V[j, e] * Pt[j, i] (out acct, A Pt, B V^T)
void emitContraction(KernelBuilder &kernel, const RegisterBlocking &blocking,
                     Value a, Value bMat, bool bIsTC, Value out,
                     const ContractionExtras &extras);

/// rowStat[i] = combine(rowStat[i], St[j, i]) over all keys j: the row max
/// or the row sum.
void emitKeyReduction(KernelBuilder &kernel, Value st, Value rowStat,
                      bool isMax);

/// m_new[i] = max(m[i], blockMax[i]); alpha[i] = m[i] == -inf ? 0 :
/// exp2(m[i] - m_new[i]). Operands: ins(blockMax), outs(m, alpha). With
/// `slack` > 0 (log2 units), m[i] stays where blockMax[i] <= m[i] + slack
/// (alpha[i] = 1): the probabilities exp2(s - m) then reach up to 2^slack,
/// the same softmax once divided by the row sum that they make, and a
/// rescale that skips factors of 1 mostly has nothing to do.
void emitRowMaxUpdate(KernelBuilder &kernel, Value blockMax, Value m,
                      Value alpha, float slack = 0.0f);

/// St[j, i] = St[j, i] == -inf ? 0 : exp2(St[j, i] - m[i]). With `rowSum`,
/// also rowSum[i] += sum_j St[j, i] on the new values, four partial sums per
/// row vector (two on 8 lanes with the degree-6 exp2, where four spill).
/// `forBf16`: the probabilities weigh bf16 values (V), so
/// exp2's degree-4 polynomial is used; its error is far below bf16's rounding.
/// With `scoreScale` (not 1), St holds unscaled scores: exp2(St[j, i] *
/// scoreScale - m[i]), one FMA. With `pairs` ([bk / 2, 2 * bq] bf16; bk
/// even), the probabilities are not stored into St but rounded to bf16 into
/// key pairs (emitPackRowPairsF32's layout), for the P.V that reads them
/// there; with `pairsLo` too, `pairs` gets the pairs of their bf16 hi
/// parts and `pairsLo` those of the lo parts (emitSplitF32).
void emitProbabilities(KernelBuilder &kernel, Value m, Value st, Value rowSum,
                       bool forBf16 = false, float scoreScale = 1.0f,
                       Value pairs = {}, Value pairsLo = {});

/// x[..., i] *= alpha[i] for x of rank 1 or 2.
void emitRescale(KernelBuilder &kernel, Value alpha, Value x);

/// The ops of a linalg body on W-lane vectors, given `map` from its block
/// arguments (and any op results already computed, e.g. linalg.index) to
/// vectors or scalars: an op with a vector operand is rebuilt on vectors
/// (scalar operands broadcast), one on scalars only is cloned. Returns the
/// yielded value as a vector.
Value emitBodyOnVectors(KernelBuilder &kernel, Block &body, IRMapping &map);

/// Vectorizes a 2-D all-parallel tile op with only an output operand (the
/// element mask) along its contiguous dim, op by op: linalg.index 1 becomes
/// i0 + [0, 1, ..., W-1], an op with a vector operand gets its scalar
/// operands broadcast and vector result types. Only ops that are
/// elementwise-mappable (arith, math) can be vectorized this way; returns
/// false, building nothing, if the body holds anything else.
bool emitElementwise(KernelBuilder &kernel, linalg::GenericOp op);

/// tanh(x) of an f32 vector from arithmetic and exp2 (no libm call): the
/// softcap's (CpuScoreModifiers.cpp).
Value emitTanh(KernelBuilder &kernel, Value x);

/// The softcap tile op, St = c * tanh(St / c), vectorized like the element
/// mask with math.tanh replaced by emitTanh. False, building nothing, if
/// emitElementwise does not take the op.
bool emitSoftcap(KernelBuilder &kernel, linalg::GenericOp op);

/// The user-mask tile op (CpuUserMask.cpp) as vector code along the rows:
/// a mask broadcast along the queries read one scalar per key, one
/// broadcast along the keys one vector per row vector, a full mask as W x W
/// blocks transposed in registers. With `rowMax` set (the row max tile op
/// that follows, [bq]), also rowMax[i] = max(rowMax[i], St[j, i]) over all
/// keys on the masked scores. False, building nothing, if the op's mask view
/// does not allow it (a full mask whose keys are not contiguous, or a tile
/// whose keys are not a multiple of the width).
bool emitUserMask(KernelBuilder &kernel, linalg::GenericOp op, Value rowMax);

/// W vectors of W lanes (of any element type) transposed in registers:
/// out[x][t] = rows[t][x]. Stage k swaps the off-diagonal k x k blocks of
/// every 2k x 2k block, two vector.shuffles per pair of rows (log2(W)
/// stages, W log2(W) shuffles). W is kernel.width.
SmallVector<Value> transposeSquare(KernelBuilder &kernel, ArrayRef<Value> rows);

/// The query tile's transpose and scale (`scale_query`: Qt[d, i] = Q[i, d] *
/// c) and the output's normalize and transpose (`output`: O[i, e] =
/// f(acct[e, i], inv[i])) as W x W blocks transposed in registers: whole
/// groups of W rows go through vectors, the last rows (fewer than W) stay a
/// copy of the op on their views. False, building nothing, if the op's
/// operands do not allow it (a non-contiguous or non-static column dim, one
/// that is not a multiple of W, a body that reads the output).
bool emitRowTranspose(KernelBuilder &kernel, linalg::GenericOp op,
                      TileRole role);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUKERNELS_H
