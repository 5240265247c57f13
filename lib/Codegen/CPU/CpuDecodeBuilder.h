//===- CpuDecodeBuilder.h - the decode kernel's builder ---------*- C++ -*-===//
//
// Part of the attn project.
//
// The builder of the decode kernel (CpuDecodeKernel.h): its state, its
// constants and its steps. CpuDecodeKernel.cpp builds the blocks, the loop
// and the reads; CpuDecodeScores.cpp the dot products and their folds into
// scores; CpuDecodeValues.cpp P.V on the bf16 dot products. Private to the
// CPU code generation library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CODEGEN_CPU_CPUDECODEBUILDER_H
#define ATTN_LIB_CODEGEN_CPU_CPUDECODEBUILDER_H

#include "CpuDecodeKernel.h"
#include "CpuKernels.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/bit.h"

#include <algorithm>

namespace mlir::attn::detail {

/// Accumulators of P.V kept in registers at once (rows x value vectors):
/// half the vector registers, which the kernel's width stands for (16
/// lanes: AVX-512's 32 zmm; 8 lanes: AVX2's 16 ymm), leaving the other
/// half to the probabilities, the V rows and the next block's dot products.
/// On a Zen 3 (AVX2), hq=32 hkv=8 Lk=32k d=128, 16 accumulators of 8 lanes
/// -> 8: 1569 -> 1258 stack references in the f32 library, 1733 -> 1317 in
/// the bf16 one; the time did not change beyond the noise (f32 is
/// memory-bound; journal/round-08.md).
inline int64_t maxAccumulators(int64_t width) { return width >= 16 ? 16 : 8; }

/// Of a block's `groups` P.V loops (groups of value columns), how many also
/// take the next block's dot products, each a share of the `keyChunks` K
/// chunks; the others only prefetch. Every group read-modify-writes the
/// dot-product buffer once per key and row for its share, and on 8 lanes
/// (AVX2) the loops are bound by the FP load/store pipes, not the FMAs
/// (llvm-mca znver3: 21 memory operations for 16 FMAs per key): half the
/// groups (at least one), each with a larger share. On a Zen 3, 1 thread,
/// CPU time per call against all groups (bench/ab.py, best of 50
/// calls), hq=32 hkv=8 Lk=32k d=128: f32 0.894 of the time, bf16 0.939;
/// hq=8 hkv=8: 0.852 and 0.909; a quarter of the groups: f32 1.031
/// (journal/round-10.md). On 16 lanes the same where each group
/// then takes at most 4 chunks, else all of them: on a Zen 4 (8 rows in
/// cache spent their time on the buffer's loads and stores and on query
/// chunks spilled to the stack), 1 thread, paired against all groups,
/// Lk=32k d=128: hq=8 hkv=1 f32 0.959, bf16 0.813, f16 0.896; hq=12 hkv=2
/// f32 0.874, bf16 0.793; hq=32 hkv=8 bf16 0.926-0.933; but with 8 chunks
/// each, hq=8 hkv=2 d=256 f32 1.194 and hq=32 hkv=8 d=128 f32 1.006
/// (journal/round-23.md). With 8 rows on 16 lanes and K
/// read as it is (f32, or bf16 on vdpbf16ps), one group takes every chunk:
/// each share's sums of the 8 rows are folded into one vector per key (7
/// folds, DecodeScores.cpp) and added to the buffer, so a share costs more
/// than the spills of a larger one. Zen 4, 1 thread, paired against half
/// the groups: hq=8 hkv=1 bf16 Lk=4096 d=128 0.934, d=256 0.718, Lk=32k
/// 0.974, hq=64 hkv=8 Lk=8192 0.948; f32 Lk=4096 d=128 0.968-0.988, d=256
/// 0.950, Lk=32k 0.948; widened K lost (f16 1.022-1.060 but once 0.925,
/// bf16 on the avx512 kernels 1.032), as did 4 rows of f32 d=256 (1.145;
/// journal/round-29.md). Since the rows-first folds (one
/// fold and one store per key and share) one group also takes up to 8
/// chunks of f32 K (D <= 128) at 3 and 4 rows: Zen 4, 1 thread, Lk=32k d=128,
/// paired against two groups (4 copies of the inputs, each call after a 256 MiB
/// read): hq=32 hkv=8 0.942-0.956 (4 KiB pages 0.930-0.963), in cache (Lk=1024)
/// 0.904, two threads 0.993 (wall); hq=24 hkv=8 0.881-0.883; d=96 1.00; not
/// at 5-7 rows (1.18-1.24), f32 d=256 (1.25), bf16 d=256 (1.21) nor f16
/// (1.00; journal/round-31.md).
inline int64_t dotGroupsFor(int64_t groups, int64_t width, int64_t keyChunks,
                            int64_t rows, bool keysWidened, bool keyDots) {
  if (width == 16 && rows == 8 && !keysWidened)
    return 1;
  if (width == 16 && rows <= 4 && !keysWidened && !keyDots && keyChunks <= 8)
    return 1;
  int64_t half = std::max<int64_t>(1, groups / 2);
  if (width == 8 || keyChunks <= 4 * half)
    return half;
  return groups;
}

/// Bytes per cache line, and how far ahead of the block being computed the
/// V stream is prefetched (every line of the rows, with decode-prefetch-
/// locality): the whole blocks of W keys that cover kPrefetchAheadBytes of
/// V rows (at least one); the K stream one block further, as a block's P.V
/// loops read the next block's K rows. One 8 KiB block of f32 d=128 rows at
/// 16 lanes: on a Zen 5 (48 KiB L1D, 1 MiB L2 per core), hq=32 hkv=8 Lk=32k
/// d=128, 1 thread, into L1, before the next block's dot products moved
/// into the P.V loops (K and V the same distance ahead): f32 8 KiB ahead
/// (one block) 11.9-12.0 ms, 4 KiB 13.2-13.4, 32 KiB 13.4-13.7; bf16 4 KiB
/// (one block) 5.2-5.5 ms, 8 KiB 5.7, 32 KiB 6.1-6.3; after it, f32 with K 2
/// blocks ahead 10.9-11.4 ms, 1 block 14.0, 3 blocks 11.4-11.6, V 2 blocks
/// 11.1-11.3 (journal/round-06.md). 8 KiB for 16-bit rows too,
/// into L2: on a Zen 4 (32 KiB L1D), same shape, paired CPU time against
/// one block (4 KiB), bf16 0.910x, two threads 0.935x (wall), hq=8 hkv=1
/// 0.990x; f32 d=64 (4 KiB blocks) 0.963x; f32 d=128 16 KiB ahead 0.985x,
/// 32 KiB 0.988x (journal/round-22.md).
constexpr int64_t kCacheLineBytes = 64;
constexpr int64_t kPrefetchAheadBytes = 8192;

/// Where decode-phased takes a block in two phases (phasedBlocks): f32 K
/// and V, at least kPhasedMinRows query rows, rows * D at least
/// kPhasedMinWork (64 or more FMAs of Q.K per key on 8 lanes), and above
/// kPhasedMaxRowsAnyD rows (one key per iteration of the scores loop) D at
/// least kPhasedMinWideD. Then the overlapped blocks' P.V loops, which also
/// carry the next block's dot products, are bound by the FP load/store pipes
/// (journal/round-10.md), and reading each block's K in its score
/// loop and its V in its P.V loops, each stream prefetched from its own
/// loop, takes less time. On a Zen 3 (AVX2), paired CPU time against the
/// overlapped blocks, one thread unless said (bench/ab.py, 30-40
/// pairs; outputs bit for bit the same: the same FMAs in the same order):
/// - taken: hq=32 hkv=8 Lk=32k d=128 (4 rows) 0.85x, two threads 0.86x
///   (wall), b=4 Lk=8k 0.85x, Lk=1024 (in cache) 0.96x; hq=32 hkv=4 (8
///   rows) 0.80-0.90x; hq=64 hkv=8 d=64 (8 rows) 0.91-0.92x; hq=64 hkv=4
///   d=128 (16 rows) 0.94x, hq=128 hkv=8 0.91x;
/// - left out: 4 rows d=64 1.00-1.05x, 2 rows d=128 0.99x, 1 row
///   1.23-1.37x, 16 rows d=64 (hq=16 hkv=4 Lq=4) 1.03x; bf16 K and V
///   (widened in registers: compute-bound on that host) 1.12x;
/// - taken, unclear: 4 rows d=256 0.98x.
/// K prefetched at the distances of the overlapped blocks (V one block
/// ahead, K two): 2 and 2 blocks gave 0.83x, 1 and 1 0.85x, 2 and 3 0.88x,
/// within the noise of each other (journal/round-16.md).
constexpr int64_t kPhasedMinRows = 4;
constexpr int64_t kPhasedMinWork = 512;
constexpr int64_t kPhasedMaxRowsAnyD = 8;
constexpr int64_t kPhasedMinWideD = 128;

/// How far (log2 units) a block's max may pass a row's running max before
/// the running max moves (CpuDecodeBuilder::maxUpdate): probabilities reach up
/// to 2^8 (f32 holds them and their sums as exactly as below 1, and the
/// result is normalized by the sum at the end), and most blocks keep every
/// row's max, so they skip the rescale of the sums and accumulators (a
/// multiply per accumulator vector and an exp2 per row) and the block's
/// softmax waits for no exp2 of the old max. On a Zen 3 (AVX2), paired CPU
/// time against the max moved every block, 1 thread unless said (20
/// pairs): hq=32 hkv=8 Lk=32k d=128 bf16 0.897 (0.894-0.904), two threads
/// (wall) 0.935, f32 0.991 (0.978-1.000); hq=8 hkv=1 f32 0.947, bf16 0.999;
/// hq=8 hkv=8 d=32 0.877 (journal/round-19.md). The slack
/// of the AMX prefill (kAmxMaxSlack), and FlashAttention-4's.
constexpr float kDecodeMaxSlack = 8.0f;

/// The running state of the kernel, per row: the reference max (in every
/// lane: a score seen so far, at most kDecodeMaxSlack below the row's true
/// max, the probabilities' and the lse's reference), the lane-wise partial
/// sums of the probabilities, and the Dv / W accumulator vectors (empty
/// where CpuDecodeBuilder::accBuffer holds them).
struct DecodeState {
  SmallVector<Value> m, l, acc;
  SmallVector<Value> asValues() const {
    SmallVector<Value> all(m);
    llvm::append_range(all, l);
    llvm::append_range(all, acc);
    return all;
  }
  static DecodeState from(ValueRange v, int64_t rows) {
    DecodeState s;
    s.m.assign(v.begin(), v.begin() + rows);
    s.l.assign(v.begin() + rows, v.begin() + 2 * rows);
    s.acc.assign(v.begin() + 2 * rows, v.end());
    return s;
  }
};

class CpuDecodeBuilder {
public:
  CpuDecodeBuilder(OpBuilder &b, const DecodeGroup &decode,
                   const DecodeOptions &options)
      : b(b), loc(decode.loc), decode(decode), options(options),
        kernel(b, decode.loc, options.width), width(options.width),
        rows(decode.rows), dChunks(decode.d / width),
        vChunks(decode.dv / width) {
    keysPaired = isPairable(decode.key, decode.d);
    valuesPaired = isPairable(decode.value, decode.dv);
    auto isBf16 = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getElementType().isBF16();
    };
    auto isF32 = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getElementType().isF32();
    };
    keyDots =
        options.bf16Dot && width == 16 && keysPaired && isBf16(decode.query);
    valueDots = options.bf16ValueDot && width == 16 && valuesPaired;
    phased = options.phased && rows >= kPhasedMinRows &&
             rows * decode.d >= kPhasedMinWork &&
             (rows <= kPhasedMaxRowsAnyD || decode.d >= kPhasedMinWideD) &&
             isF32(decode.key) && isF32(decode.value);
    bool oneGroupF32 = isF32(decode.key) && isF32(decode.value) &&
                       vChunks <= valueGroupChunks();
    prefetches = options.prefetch == DecodePrefetch::All ||
                 (options.prefetch == DecodePrefetch::Auto && !oneGroupF32);
  }

  DecodeResult build(Value begin, Value end);

private:
  /// How many blocks ahead V is prefetched: those that cover
  /// kPrefetchAheadBytes of V rows, at least one.
  int64_t prefetchBlocks() const {
    auto type = cast<RankedTensorType>(decode.value.getType());
    int64_t blockBytes = width * decode.dv * type.getElementTypeBitWidth() / 8;
    return std::max<int64_t>(1,
                             llvm::divideCeil(kPrefetchAheadBytes, blockBytes));
  }
  /// K and V as read-only buffers (for the prefetches), and the key whose
  /// rows a block prefetches first (clamped below the end); null when the
  /// kernel does not prefetch.
  Value keyBuffer, valueBuffer, prefetchBase, keyPrefetchBase;
  /// Prefetches the cache lines of row `row` of `buf` ([B, H, L, D] at
  /// (batch, kvHead)) that start in columns [c0 * W, c1 * W): counted from
  /// column 0 in lines of 64 bytes, so that the column groups of a row
  /// prefetch each of its lines once between them.
  void prefetchRow(Value buf, Value row, int64_t c0, int64_t c1);
  /// decode-page-touch: with 16-bit K and V, one element of V loaded
  /// options.pageTouch bytes past prefetchBase's row and one of K past
  /// keyPrefetchBase's (rows clamped to `last`), kept by an empty asm.
  void touchPagesAhead(Value last);
  /// The indices of K's or V's (tensor or buffer) row `row` at head `head`,
  /// column `col`: (batch, head, row, col), or in a paged cache the row's
  /// page (from the page table, clamped into the cache) and slot.
  SmallVector<Value> kvAt(Value head, Value row, Value col);
  /// With a paged cache: its page size and last page index (build).
  Value pageSize, lastPage;
  /// Row `row`, columns [c * W, (c + 1) * W) of the [B, H, L, D] tensor
  /// `src` at (batch, head), as f32.
  Value readRow(Value src, Value head, Value row, int64_t c, bool paired);
  /// The block max of the scores `s` in every lane (a butterfly).
  Value laneMax(Value s);
  /// The state after a block whose rows' maxima are `blockMax`: where a
  /// row's max passes its running max by more than kDecodeMaxSlack, that
  /// row's max moves and, in one scf.if for the block, every row's sum and
  /// accumulators are rescaled (by exactly 1 where the max stays); else the
  /// state as it was.
  DecodeState maxUpdate(const DecodeState &state, ArrayRef<Value> blockMax);
  /// The scaled query rows, [rows][dChunks].
  void readQueries();
  /// The dot products of keys keyIndex(j0) ... keyIndex(j0 + n - 1) with
  /// every query row, [key][row], W partial sums each: the keys' rows read
  /// first, then the products chunk by chunk (each chunk of a query row
  /// used by the n keys in turn), so that LLVM keeps few query vectors
  /// live beside the n * rows sums.
  SmallVector<SmallVector<Value>>
  keyGroupDots(function_ref<Value(int64_t)> keyIndex, int64_t j0, int64_t n);
  /// Chunks [c0, c1) of K row `row` (prefetched ahead by the P.V loop):
  /// W-column chunks widened to f32, or with keyDots 2W-column bf16 chunks.
  SmallVector<Value> readKeyChunks(Value row, int64_t c0, int64_t c1);
  /// Value chunks per P.V loop (a group of value columns): the
  /// accumulators that fit the registers (maxAccumulators) over the rows,
  /// an even number with valuesPaired.
  int64_t valueGroupChunks() const {
    int64_t group = std::max<int64_t>(1, maxAccumulators(width) / rows);
    return valuesPaired ? std::max<int64_t>(2, group / 2 * 2) : group;
  }
  /// Chunks of a K row (and of a query row in `queries`).
  int64_t keyChunks() const { return keyDots ? dChunks / 2 : dChunks; }
  /// `dot` with chunk c of row r's query times the K chunk `k` added: a
  /// vdpbf16ps with keyDots (from zero if `dot` is null), else an FMA (a
  /// product if `dot` is null).
  Value dotStep(Value dot, int64_t r, int64_t c, Value k);
  /// The same with the query chunk `q` given.
  Value dotWith(Value dot, Value q, Value k);
  /// 16-bit K widened to f32 in registers (not taken by the bf16 dot
  /// products).
  bool keysWidened() const {
    return !keyDots &&
           cast<ShapedType>(decode.key.getType()).getElementTypeBitWidth() ==
               16;
  }
  /// Keys whose dot products keyGroupDots builds together: a power of 2
  /// with rows * keys partial sums at most maxAccumulators(width).
  int64_t keysPerGroup() const {
    return static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(
        std::clamp<int64_t>(maxAccumulators(width) / rows, 1, width))));
  }
  /// Whether the block's scores are folded rows first
  /// (foldScoresRowsFirst) rather than per row.
  bool foldRowsFirst() const;
  /// Whether the P.V loops that take the next block's dot products fold
  /// each key's rows (foldKeyRows) before storing them: one vector per key
  /// in NextDots' tile ([W, 1, W]) rather than one per key and row.
  bool tileFoldsRows() const;
  /// The scores folded from the rows' partial sums, times the score scale
  /// where the dot products are vdpbf16ps (keyDots).
  SmallVector<Value> scaledScores(SmallVector<Value> scores);
  /// From maxAccumulators(width) on (half the vector registers or more; the
  /// scores' live vectors beside them spill otherwise: bf16 hq=32 hkv=8
  /// d=128, 32 accumulators, 499 -> 221 stack references; one thread,
  /// Lk=32k: 6.9-7.6 -> 5.7-6.0 ms) they live in a [rows, Dv] f32 buffer
  /// made by initialState, read and written once per block and group,
  /// instead of rows * Dv / W loop-carried vectors that LLVM would keep in
  /// registers through the scores and spill around them. Null otherwise.
  Value accBuffer;
  /// A static f32 scratch buffer of `shape`, allocated where the builder
  /// is (the query block's body: one per thread once
  /// attn-hoist-thread-scratch has run) and freed by buffer deallocation
  /// like the tiles. The kernel's scratch is buffers, not tensors carried
  /// by the loops: bufferization analyses every read of a tensor against
  /// every write to it, which made grouped decode on 8 lanes take minutes
  /// to lower (journal/round-07.md).
  Value scratch(ArrayRef<int64_t> shape, Type elementType = {});
  /// Accumulator vector (r, c) of `state`, and its update in `state`.
  Value accVector(const DecodeState &state, int64_t r, int64_t c);
  void setAccVector(DecodeState &state, int64_t r, int64_t c, Value v);
  /// A block's probabilities, [rows, W] f32 (made by build); with
  /// valueDots instead rounded to bf16, two keys' in each i32 of a
  /// [rows, W / 2] buffer.
  Value probTile;
  /// valueDots' P.V step for keys j and j + 1 (V rows row0 and row1) on
  /// the accumulators `out` of value chunks [c0, c1) ([rows][c1 - c0]): per
  /// 2W columns the two rows interleaved by words within each 128-bit lane
  /// (a vpunpcklwd and a vpunpckhwd), one vdpbf16ps per row and half.
  void pairedValueStep(SmallVector<Value> &out, Value j, Value row0, Value row1,
                       int64_t c0, int64_t c1);
  /// The columns, in V's order, of a pair of accumulators (2p, 2p + 1) as
  /// the indices of a shuffle of the two: where valueDots, the lanes of
  /// pairedValueStep's interleave; else the even and the odd columns.
  SmallVector<int64_t> accPairColumns() const;
  /// The next block's dot products, taken by a block's P.V loops: the
  /// block's first key, and a [W, rows, W] f32 buffer of the partial sums
  /// (key, row, lane), updated; [W, 1, W] with tileFoldsRows.
  struct NextDots {
    Value first, tile;
  };
  /// A P.V loop's share of the next block's dot products for its key j:
  /// chunks [d0, d1) of K row nextDots.first + j with every query row, the
  /// first share stored to the tile, the later ones added to it.
  void takeNextDots(const NextDots &nextDots, Value j, int64_t d0, int64_t d1);
  /// Whether a P.V iteration's two keys (valueDots) take their share of the
  /// next block's dot products together (takeNextDotPair): keyDots, 8 rows
  /// of W = 16, rows folded in the tile.
  bool pairedNextDots() const {
    return keyDots && valueDots && tileFoldsRows() && 2 * rows == width;
  }
  /// takeNextDots for keys j and j + 1 at once: per K chunk the two rows'
  /// low halves side by side and their high halves side by side (one
  /// shuffle each), against each query chunk's low (high) half repeated
  /// (halfQueries), so each row's vdpbf16ps sums key j in lanes [0, W/2)
  /// and key j + 1 in [W/2, W): one accumulator per row for both keys, and
  /// the 8 rows' 16 sums folded into one vector of scores (7 folds for the
  /// pair instead of 7 per key), stored at tile row j.
  void takeNextDotPair(const NextDots &nextDots, Value j, int64_t d0,
                       int64_t d1);
  /// A share's sums folded into one vector, stored at tile row j (or, for
  /// a later share, `addToTile`, added to what the row holds).
  void storeFoldedShare(const NextDots &nextDots, Value j, bool addToTile,
                        Value folded);
  /// One block of W keys from j0; `tailLen` (the valid keys) and `lastKey`
  /// are set for the last, partial block. With `given`, the block's scores
  /// are those; with `nextDots`, its P.V loops also take the next block's
  /// dot products.
  DecodeState block(Value j0, Value tailLen, Value lastKey,
                    const DecodeState &state, ArrayRef<Value> given = {},
                    NextDots *nextDots = nullptr);
  /// The scores of the W keys keyIndex(0) ... keyIndex(W - 1), one vector
  /// per row (key j in lane j), scaled.
  SmallVector<Value> scoresOf(function_ref<Value(int64_t)> keyIndex);
  /// A block's scores from its dot products in `tile` (NextDots).
  SmallVector<Value> scoresFromTile(Value tile);
  /// The scores from each key's row dot products: folded, scaled.
  SmallVector<Value>
  foldedScores(function_ref<SmallVector<Value>(int64_t)> rowDots);
  DecodeState initialState();
  /// The full blocks, each block's P.V loops also taking the next block's
  /// dot products (the first block's before the loop). Against a block's
  /// dot products before its softmax, hq=32 hkv=8 Lk=32k d=128: f32 1
  /// thread 12.26-13.47 -> 10.53-12.49 ms (6 rounds), 2 threads 8.21-8.37
  /// -> 7.42-7.78; bf16 the same within the noise (medians 5.27 and 5.12 ms
  /// over 12 rounds); in cache 3-6% slower (journal/round-06.md).
  DecodeState interleavedBlocks(Value begin, Value end, Value numFull,
                                const DecodeState &init);
  /// The first key of full block `iv` from `begin` (keys to `end`; `w`:
  /// the index constant W), and the prefetch bases for it: V
  /// prefetchBlocks() blocks ahead, K one block further, both clamped to the
  /// last full block (left null without `prefetches`).
  Value startFullBlock(Value begin, Value end, Value iv, Value w);
  /// The full blocks, each in two phases (decode-phased, where `phased`
  /// says): its scores first, by phasedScores, then its softmax and P.V
  /// loops, which prefetch V but not K.
  DecodeState phasedBlocks(Value begin, Value end, Value numFull,
                           const DecodeState &init);
  /// The scores of the full block from j0: a loop over its keys,
  /// keysPerGroup() at a time (their dot products by keyGroupDots, stored
  /// to `tile`, [W, rows, W] f32 like NextDots' tile), that also prefetches
  /// as many K rows from keyPrefetchBase on; then the tile folded.
  SmallVector<Value> phasedScores(Value j0, Value tile);
  /// The blocks in two phases (see kPhasedMinWork), and their tile.
  bool phased = false;
  /// Whether the blocks prefetch their K and V rows ahead (decode-prefetch;
  /// see kPrefetchAheadBytes). Under auto, not where K and V are f32 and
  /// the P.V takes one group of accumulators (at 16 lanes D = 64 up to 4
  /// rows, 128 up to 2, 256 one): each block's loop reads every line of its
  /// K and V rows once, in order, and without the prefetches the hardware's
  /// keep up with it. On a Zen 4 (avx512-bf16 kernels), one thread, Lk=32k
  /// (d=256: 16k), hkv=8, paired CPU time against the prefetches (inputs
  /// in 4 copies, each call after a 256 MiB read): d=64 1 / 2 / 4 rows
  /// 0.88-0.93 / 0.76-0.83 / 0.73-0.79, d=128 1 / 2 rows 0.81-0.85 /
  /// 0.76-0.82, d=256 one row 0.86-0.91 (2 of about 45 processes above 1:
  /// 1.14, 1.36); two threads (wall) 0.92-1.01. Where P.V
  /// takes several groups (each reads its share of every V row's lines in
  /// its own pass over the block) the prefetches pay: without them 4 rows
  /// of d=128 took 1.7x the time. 16-bit K and V keep them: bf16 0.90-1.17,
  /// f16 0.98-1.29 by the shape (journal/round-31.md).
  bool prefetches = true;
  Value phasedTile;
  DecodeResult finish(const DecodeState &state);

  /// arith.minsi and arith.maxsi of two indices.
  Value minIndex(Value x, Value y) {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value maxIndex(Value x, Value y) {
    return arith::MaxSIOp::create(b, loc, x, y);
  }

  OpBuilder &b;
  Location loc;
  const DecodeGroup &decode;
  const DecodeOptions &options;
  KernelBuilder kernel;
  int64_t width, rows, dChunks, vChunks;
  SmallVector<Value> queries;
  /// With pairedNextDots: each query chunk's low and high W bf16 values,
  /// each repeated in both halves, [rows][keyChunks][2].
  SmallVector<Value> halfQueries;
  /// bf16 K (V) read in the pair layout (readRow), and the query rows
  /// (the accumulators) in the same order.
  bool keysPaired = false, valuesPaired = false;
  /// Q.K on the bf16 dot products (decode-bf16-dot): `queries` holds each
  /// row's bf16 values as given, dChunks / 2 vectors of 2W, and the scores
  /// are scaled after the dot products.
  bool keyDots = false;
  /// P.V on the bf16 dot products (decode-bf16-value-dot; bf16 V in the
  /// pair layout): the accumulators' lanes in accPairColumns' order.
  bool valueDots = false;
  /// Columns [2pW, 2(p + 1)W) of row `row` of `src` at (batch, head), as
  /// they are (2W elements of its type).
  Value readPairChunk(Value src, Value head, Value row, int64_t p);

  bool isPairable(Value src, int64_t cols) const {
    return cast<RankedTensorType>(src.getType()).getElementType().isBF16() &&
           cols % (2 * width) == 0;
  }
};

} // namespace mlir::attn::detail

#endif // ATTN_LIB_CODEGEN_CPU_CPUDECODEBUILDER_H
