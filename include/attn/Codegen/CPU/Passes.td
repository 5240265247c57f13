//===- Passes.td - CPU code generation ---------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_PASSES_TD
#define ATTN_CODEGEN_CPU_PASSES_TD

include "attn/Tuning/Tuning.td"
include "mlir/Pass/PassBase.td"

def AttnCpuPlanTiling : Pass<"attn-cpu-plan-tiling"> {
  let summary = "Plan each attn.sdpa's tiling for the CPU kernels (block "
                "sizes by shape, the K/V layouts they read) as attn.tiling";
  let description = [{
    Runs before `attn-tile-online-softmax` and sets, on every `attn.sdpa`
    where the CPU kernels want something other than the tiling's own
    options, the discardable attribute `attn.tiling` that the tiling reads
    (docs/passes.md, attn-tile-online-softmax): `block_q` and `block_kv`
    for ops of narrow heads (`narrow-block-q`, `narrow-lowp-max-d`,
    `wide-block-kv`), and the K/V layouts the kernels chosen read
    (`transpose-values` and `split-f16` or `f16-tiles` for the AMX kernels,
    `pair-values` for bf16 dot products). The tiling decides where a layout
    applies (it knows the blocks and decode groups); this pass says which
    the kernels take. `attn-lower-cpu` sets the options from its kernels.

    Before and after (`narrow-block-q=128 transpose-values=true`, an op of
    D = 64):

    ```mlir
    %o = attn.sdpa %q, %k, %v
        : tensor<1x8x4096x64xbf16>, ... -> tensor<1x8x4096x64xbf16>
    %o = attn.sdpa %q, %k, %v {attn.tiling = {block_q = 128 : i64,
                                              transpose_values}}
        : tensor<1x8x4096x64xbf16>, ... -> tensor<1x8x4096x64xbf16>
    ```
  }];
  let options = [
    // Tuning.td's knobs, one a line.
    CpuNarrowBlockQ,
    CpuNarrowLowpMaxD,
    CpuWideBlockKV,
    CpuTransposeValues,
    CpuPairValues,
    CpuF16Tiles,
    CpuSplitF16,
  ];
}

def AttnCpuDecode : Pass<"attn-cpu-decode"> {
  let summary = "Replace each attn.decode_keys with the CPU decode kernel "
                "(vectors along D, K and V streamed once)";
  let description = [{
    Builds the decode kernel in place of every `attn.decode_keys` that
    `attn-tile-online-softmax` left where a query block is a decode group
    (its `decode-rows`), on tensors, inside the tiling's `scf.forall`. A
    decode group has few query rows (Lq = 1, or Lq times the group size
    with grouped-query attention): the tile ops, whose vectors run along
    the rows, would leave most lanes idle. The kernel runs its vectors
    along D instead and reads each K and V row once: per block of W keys (W
    = `decode-width`) the W x rows dot products (each K row loaded once for
    every row, summed across lanes by shuffles into one vector of scores
    per row), the online softmax along the keys (the running max moved
    lazily, by a slack of 8), and P.V with each V row loaded once into the
    rows x Dv / W accumulators (in a buffer from 16 of them on). A block's
    P.V loops also take the next block's dot products (or, with
    `decode-phased`, where it pays, a block takes its scores first), and
    prefetch the K and V rows ahead (`decode-prefetch`,
    `decode-prefetch-locality`, `decode-page-touch`). bf16/f16 K and V are
    widened in registers, or taken by AVX512-BF16's dot products
    (`decode-bf16-dot`, `decode-bf16-value-dot`). The op's results (m, l
    [rows], acc [Dv, rows]) become the kernel's.

    Before (grouped-query attention, 4 query heads of a key/value head,
    Lq = 1):

    ```mlir
    %m, %l, %acc = attn.decode_keys %q, %k, %v
        at (%b, %h, %hkv, %c0) keys (%begin to %end)
        {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 0.255 : f32}
        : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>,
          tensor<1x2x100x32xbf16>
        -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
    ```

    After (abridged):

    ```mlir
    %kb = bufferization.to_buffer %k read_only : ...
    %first = scf.if %any -> (vector<16xf32>, ...) { ... }  // block 0's scores
    %s:11 = scf.for %i = %c0 to %nfull step %c1 iter_args(...) {
      memref.prefetch %vb[...], read, locality<2>, data
      ...                                  // softmax of the block's scores
      scf.for %j = %c0 to %c16 step %c1 iter_args(...) {
        vector.fma ...                     // P.V, and the next block's Q.K
      }
    }
    scf.if %tail { ... }                   // the last keys, masked lanes
    %m = tensor.from_elements ... : tensor<4xf32>
    %acc = linalg.transpose ins(%rows : tensor<4x32xf32>) ...
    ```

    D and Dv of every op must be multiples of `decode-width` (the tiling's
    `decode-dim-multiple`); an op whose are not is an error.
  }];
  let options = [
    // Tuning.td's knobs, one a line.
    CpuDecodeWidth,
    CpuDecodeBf16Dot,
    CpuDecodeBf16ValueDot,
    CpuDecodePrefetchLocality,
    CpuDecodePageTouch,
    CpuDecodePhased,
    CpuDecodePrefetch,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def AttnCpuMicrokernels : Pass<"attn-cpu-microkernels", "func::FuncOp"> {
  let summary = "Replace the online-softmax tile ops with register-blocked "
                "vector microkernels for the CPU";
  let description = [{
    Runs after bufferization. Every `linalg.generic` that
    `attn-tile-online-softmax` tagged with an `attn.tile = #attn.tile<role>`
    attribute, whose tiles
    have static shapes and whose query-row dim is a multiple of the vector
    width, is replaced by scf loops over `vector<Wxf32>` values that compute
    what the generic computes (the pair `scores`/`probs` with `bf16-dot`
    together, below):

    - `scores` (`St[j, i] += sum_d K[j, d] * Qt[d, i]`) and `pv`
      (`acct[e, i] += sum_j V[j, e] * Pt[j, i]`): a register block of
      `reg-block` keys (or value columns) times `row-vectors` row vectors is
      kept in `vector<Wxf32>` loop-carried values across the whole reduction;
      each
      step loads the row vectors once and broadcasts one K (or V) element per
      key, feeding `vector.fma`. Nothing is stored until the reduction ends.
    - `row_max`, `row_sum`, `max_update`, `rescale`: elementwise across
      keys, one vector of rows at a time (no horizontal reductions: rows run
      along the vector). The scores kernel takes the `row_max` that follows
      it, `probs` the `row_sum` that follows it and `pv` the `rescale` of
      the accumulator before it; the `init_scores` zero fill is folded into
      the scores kernel.
    - `probs`: `exp2` by a degree-6 polynomial on the fraction and an
      exponent built in the integer unit (with `avx512-exp`: the fraction by
      vreduceps and the exponent applied by vscalefps), never one libm call
      per element;
      hidden scores (`-inf`) give exactly 0 and NaN stays NaN.
    - `element_mask` (causal diagonal, window edges, padded tail):
      vectorized op by op along the rows.
    - `scores` and `pv` tagged `attn.hidden_above` or `attn.hidden_below`
      (a block on the causal diagonal or a window's lower edge): register
      blocks of one row vector and 16 keys or value columns on 16 lanes;
      the score blocks whose keys are all hidden from all their rows are
      skipped (left for the element mask to replace), and each P.V block
      reduces over the keys its rows see only.
    - `softcap`: vectorized op by op, with `math.tanh` built from arithmetic
      and the polynomial `exp2` (no libm call; max relative error 1.6e-7).
    - `alibi`: vectorized op by op along the rows.
    - `user_mask`: the op's mask, read from its view without a copy: one
      scalar per key where the mask broadcasts along the queries (key
      padding), one vector per row vector where it broadcasts along the
      keys, and a full mask as W x W blocks (plain loads; masked ones only
      for the view's partial last W keys; i1 loaded as bytes) transposed in
      registers by vector.shuffle.
      The `row_max` that follows it is folded in.
    - `scale_query` (`Qt[d, i] = Q[i, d] * scale * log2 e`) and `output`
      (`O[i, e] = acct[e, i] / l[i]`, rounded to the element type), once
      per query block: each W x W block is W vector loads along the
      source's contiguous dim, the op's body on vectors, a transpose in
      registers by vector.shuffle and W vector stores. Their row count may
      be dynamic (a short last query block): whole groups of W rows take
      the vector path, the last rows keep an untagged copy of the op on
      views of them. Left alone if D (Dv) is not a static multiple of W.
      With `bf16-round-in-integers` (the default; `attn-lower-cpu` turns
      it off on the `avx512-bf16` and `amx` kernels, which round with
      vcvtneps2bf16), a bf16 `output` is transposed as f32 and takes its
      body after the transpose, on rows with their 1/l broadcast, so that
      its `arith.truncf` rounds whole f32 rows (expanded later by
      `attn-expand-bf16-truncf`): LLVM made a transpose of bf16 vectors
      scalar moves, on AVX2 and AVX-512 alike (with the rounding fix,
      BERT-base bf16 on a Zen 3, one thread: 0.93x the time).
    - Software prefetch into L2 (`llvm.intr.prefetch`, locality 2), spread
      over each kernel's own work: the `scores` and `pv` kernels (f32, on
      widened f16/bf16 tiles, and on `bf16-dot`) prefetch the bytes after
      their K (V) tile view, as many as it holds, one cache line per
      reduction step (the next key block; after a head's last, the next
      head's first); where the query block's query and output views have
      static shapes (every block full: a static Lq that the block's rows
      divide, as in short sequences), `scores`
      also prefetches the query rows after its block's and `pv` the output
      rows after its block's (for write), one line per reduction step of
      each register block; with `prefetch-spread=N` the f32 products
      instead run N reduction steps per iteration and prefetch in the first
      of them only (N cut to the largest power of two that divides the
      reduction and leaves enough steps to reach every line: register block
      b, counted over its key or value-column block and its row group,
      takes lines b * T / N onwards; a reduction that ends at a dynamic
      key, P.V on the causal diagonal, finishes its last steps one per
      iteration without prefetching, where that end need not be a multiple
      of N; the diagonal's skipped and shortened register blocks leave some
      of the next tile's lines unprefetched); `scale_query` and `output`
      prefetch the same rows of the next query block (for write, for the
      output). Short
      sequences (L = 128) start every query block on operands that no cache
      holds yet.

    With `bf16-dot`, where nothing between the `scores` op and the
    `probs` op reads the scaled scores (the row max fused into the scores
    kernel), the scores kernel leaves the score tile unscaled and marks the
    `probs` op (`attn.probs_score_scale`) so that its kernel applies the
    scale (exp2(fma(s, scale, -m))); the row max is of the scaled scores.
    The two kernels are built in the same run of the pass, and the `probs`
    op is only marked when its kernel takes it. Where the `pv` op that reads
    the probabilities runs on the dot products (bf16 values, or AMX tiles
    with `amx`), the `probs` kernel writes P rounded to bf16 straight into
    that op's buffer of key pairs (two keys at a time) rather than storing
    it in f32 for the `pv` kernel to pack.

    Tile ops it cannot handle (a full mask whose keys are not contiguous or
    a tile whose keys are not a multiple of the width, grouped decode rows'
    mask, a row dim that is not a multiple of the width) are left alone and
    lower as loops.

    Before:

    ```mlir
    linalg.generic {..., iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%qt, %k : memref<64x32xf32>, memref<64x64xf32, strided<[64, 1], offset: ?>>)
        outs(%st : memref<64x32xf32>) attrs = {attn.tile = #attn.tile<scores>} {...}
    ```

    After (abridged):

    ```mlir
    scf.for %j0 = %c0 to %c64 step %c8 {
      scf.for %i0 = %c0 to %c32 step %c32 {
        %a00 = vector.load %st[%j0, %i0] : memref<64x32xf32>, vector<16xf32>
        ...
        %r:16 = scf.for %d = %c0 to %c64 step %c1 iter_args(%x00 = %a00, ...) {
          %q0 = vector.load %qt[%d, %i0] : memref<64x32xf32>, vector<16xf32>
          %k0 = memref.load %k[%j0, %d] ...
          %b0 = vector.broadcast %k0 : f32 to vector<16xf32>
          %y00 = vector.fma %b0, %q0, %x00 : vector<16xf32>
          ...
        }
        vector.store %r#0, %st[%j0, %i0] ...
      }
    }
    ```
  }];
  let options = [
    // Tuning.td's knobs, one a line.
    CpuVectorWidth,
    CpuRegBlock,
    CpuRowVectors,
    CpuBf16Dot,
    CpuAmx,
    CpuAmxFp16,
    CpuAvx512Exp,
    CpuBlendStores,
    CpuPrefetchSpread,
    CpuBf16RoundInIntegers,
    CpuTargetFeatures,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
    "::mlir::amx::AMXDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def AttnCpuSdpaGrad : Pass<"attn-cpu-sdpa-grad"> {
  let summary = "Lower attn.sdpa_grad to fused FlashAttention-2 backward "
                "loops of vector code for the CPU";
  let description = [{
    Rewrites every `attn.sdpa_grad` (on tensors, before bufferization) into
    `bufferization.to_buffer` of its operands, `memref.alloc` of its results
    and three `scf.parallel` loops (OpenMP threads after
    `convert-scf-to-openmp`):

    1. over (batch, query head): `Di = rowsum(dO o O)` once per row, and an
       f32 dQ accumulator cleared;
    2. over (batch, key/value head), FlashAttention-2's backward: key blocks
       of `block-kv` outside; for each, the query heads of the group and the
       query blocks of `block-q` rows inside (with a causal rule, the blocks
       of rows that see no key of the block are skipped). Per tile, in f32
       tiles on the thread's stack: `St = K . Q^T`, `dPt = V . dO^T`,
       `P = exp2(log2e * (scale * S + mask - lse))` (0 where hidden; the
       polynomial exp2 of the forward) and `dS = P o (dP - Di)`; then
       `dV += P^T . dO`, `dK += dS^T . Q` (accumulated over the group and the
       query blocks, written once per key block) and `dQ += dS . K` into the
       f32 accumulator. Every product is the register-blocked vector
       contraction of `attn-cpu-microkernels`. P is never stored beyond one
       tile: memory is O(L).
    3. over (batch, query head): `d_query = scale * acc`, rounded once.

    dQ has no race: a query head belongs to one key/value head, so its rows
    are only touched by the thread that owns that (batch, key/value head).
    Of FlashAttention-2's two options this avoids both costs: per-thread
    partial dQ (one dQ-sized f32 buffer per thread, summed after) and a
    second pass over the query blocks (Q.K^T and dO.V^T recomputed once more:
    7 products instead of 5). The price is parallelism: at most B * Hkv
    threads (B = 1, Hkv = 1, as in multi-query decoding, runs on one).
    Tails (Lq, Lk not multiples of the blocks; D, Dv not multiples of the
    width) are zero-padded tiles and masked probabilities; Lq, Lk and B may
    be dynamic; f16 and bf16 are widened to f32 as the tiles are filled.

    Before:

    ```mlir
    %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do ...
    ```

    After (abridged):

    ```mlir
    scf.parallel (%b, %h) = ... {  // Di, clear dQ acc
    scf.parallel (%b, %hk) = ... {
      scf.for %k0 = %c0 to %lk step %c64 {
        scf.for %g = ... { scf.for %q0 = %start to %lq step %c64 {
          ... vector.fma ... // St, dPt
          ... exp2 polynomial, select ... // P, dS
          ... vector.fma ... // dV, dK, dQ
        } }
        ... dk, dv rows of the block ...
    } }
    scf.parallel (%b, %h) = ... { // d_query
    ```
  }];
  let options = [
    // Tuning.td's knobs, one a line.
    GradBlockQ,
    GradBlockKV,
    CpuVectorWidth,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnHoistThreadScratch
    : Pass<"attn-hoist-thread-scratch", "func::FuncOp"> {
  let summary = "Allocate the CPU kernels' scratch buffers and tiles once "
                "per thread";
  let description = [{
    `attn-cpu-microkernels` allocates its own buffers (f16/bf16 K and V
    tiles widened to f32, one per shape shared by K and V; the packed
    operands of the bf16 dot products) at the start of the query-block
    `scf.forall` body and frees them at its end, tagged `attn.scratch`;
    bufferization leaves the tiles of the online softmax (the transposed
    query, the scores, the accumulator, the row max and sum) allocated and
    freed in the same body. The contents of a buffer with a static shape
    and one unconditional `memref.dealloc` in the same block never outlive
    the query block, so this pass, run after `convert-scf-to-openmp`, moves
    each such `memref.alloc` (tagged or not) from the `omp.loop_nest` body
    to the start of the enclosing `omp.parallel` region (run once per
    thread) and its free to the region's end: one buffer per thread and
    call instead of one per query block (b=32 hq=12 L=128 d=64: six fewer
    malloc/free pairs per query block, about 2% less CPU time). A loop left
    serial (`scf.parallel`, no OpenMP) gets one buffer in front of it.
    Allocations with dynamic sizes, freed elsewhere (or conditionally) or
    outside a parallel loop's body are left alone.

    ```mlir
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (...) {
          %w = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<64x64xf32>
          ...
          memref.dealloc %w : memref<64x64xf32>
          omp.yield
        }
      }
      omp.terminator
    }
    ```

    becomes

    ```mlir
    omp.parallel {
      %w = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<64x64xf32>
      omp.wsloop { omp.loop_nest (...) { ... omp.yield } }
      memref.dealloc %w : memref<64x64xf32>
      omp.terminator
    }
    ```
  }];
}

def AttnOmpSchedule : Pass<"attn-omp-schedule", "func::FuncOp"> {
  let summary = "Set the schedule of the query-block OpenMP loops";
  let description = [{
    `convert-scf-to-openmp` leaves `omp.wsloop` without a schedule clause,
    which the translation to LLVM IR lowers as `static`: each thread gets
    one equal, contiguous share of the iterations up front. On a machine
    that other work shares, a thread that loses its core for a while holds
    up the whole call, since the other threads, done with their shares,
    wait at the loop's end. This pass, run after `convert-scf-to-openmp`,
    sets `schedule(kind[, chunk])` on every `omp.wsloop` of the function
    that has none (a schedule already there is left alone): in
    `attn-lower-cpu`, the query blocks' loop, the split-K decode's and the
    backward's. `guided` (the `attn-lower-cpu` default) hands out chunks
    that start at the remaining iterations over the threads and shrink as
    the loop ends, so a thread that falls behind takes fewer; `dynamic`
    hands them out one chunk (default 1) at a time; `static` spells out the
    translation's default.

    Measured on a 2-core Zen 3, 2 threads (journal/round-11.md; paired medians
    of guided over static): with a busy loop on one core 0.72-0.84x the time on
    four shapes (short sequences, L=2048 with and without causal, decode);
    without it 0.87-1.00x on a noisy machine, 0.99-1.01x in a quiet minute;
    `dynamic` cost 4% on the short sequences.

    ```mlir
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) { ... }
    }
    ```

    becomes, with `kind=guided`,

    ```mlir
    omp.wsloop schedule(guided) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) { ... }
    }
    ```
  }];
  let options = [
    // Tuning.td's knobs, one a line.
    CpuOmpSchedule,
    CpuOmpChunk,
  ];
  let dependentDialects = ["omp::OpenMPDialect", "arith::ArithDialect"];
}

def AttnExpandBf16Truncf : Pass<"attn-expand-bf16-truncf"> {
  let summary = "Round vector f32 to bf16 in integer ops, the NaN select "
                "on f32 lanes";
  let description = [{
    Rewrites `arith.truncf` from `vector<N x f32>` to `vector<N x bf16>`
    (no rounding mode: to nearest even) into integer ops: NaN lanes
    replaced by 0x7FC00000 on the f32 lanes (`arith.cmpf uno` and
    `arith.select`), then `(bits + 0x7FFF + ((bits >> 16) & 1)) >> 16`,
    `arith.trunci` to i16 and a bitcast: bit for bit what arith-expand's
    bf16 expansion gives (NaN to 0x7FC0). That expansion selects the NaN
    case on the i16 lanes after the narrowing, which LLVM's x86 code
    generation scalarizes (a compare and a cmov per element); the CPU
    pipelines run this pass right before it, where they round in integer
    code (no AVX512-BF16). Scalars and other types are left to
    arith-expand.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnEmulateAmx : Pass<"attn-emulate-amx", "ModuleOp"> {
  let summary = "The amx dialect's tile ops as vector code, to check the amx "
                "kernels on a CPU without AMX";
  let description = [{
    Rewrites every `amx.tile_zero`, `amx.tile_load`, `amx.tile_store` and
    `amx.tile_mulf` into vector code that computes what the instructions
    compute, so that the `amx` kernels (attn-cpu-microkernels' `amx`, the
    pipelines' `kernels=amx`) run, and are checked, on any CPU with the
    rest of their instructions (AVX-512 with AVX512-BF16 here):

    - a tile of `R x C` elements becomes a `vector<R x C>` value;
    - `tile_zero` a zero vector; `tile_load` and `tile_store` one
      `vector.load` / `vector.store` per row, row `r` at the second
      innermost index plus `r` (or, with an explicit stride, the innermost
      index plus `r * stride`), as `tileloadd` / `tilestored` read and
      write them;
    - `tile_mulf` (`tdpbf16ps`, or `tdpfp16ps` for f16 tiles) a call of a
      private function, one per tile shape, that computes
      `acc[m, n] += a[m, 2k] * b[k, 2n] + a[m, 2k + 1] * b[k, 2n + 1]`
      for `k` in order, the even product then the odd, each added by
      `vector.fma` as the Intrinsics Guide's pseudocode orders them (a
      product of two bf16 or two f16 is exact in f32 but at the ends of
      bf16's range, so each step rounds once, to nearest even, as the
      instruction does). Unlike the instruction it does not flush denormal
      inputs and results to zero. The functions are internal to the
      module (`llvm.linkage`), named `__attn_emulated_tile_mulf_<shape>`
      (renamed if the module has the name).

    Tiles are not carried through loops or blocks by the kernels, so the
    rewrite is local: a tile that is a block argument or the result of an
    op outside the amx dialect (a loop carrying it), and `amx.tile_muli`
    (int8), are refused with an error. Slow (1,664 vector ops,
    512 of them FMAs, per 16 x 16 x 32 tile product): for tests, never for
    speed. attn-lower-cpu runs it with `emulate-amx`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::vector::VectorDialect"
  ];
}

#endif // ATTN_CODEGEN_CPU_PASSES_TD
