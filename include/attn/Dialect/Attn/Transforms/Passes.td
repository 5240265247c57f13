//===- Passes.td - attn dialect transforms -----------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnTileOnlineSoftmax : Pass<"attn-tile-online-softmax"> {
  let summary = "Tile attn.sdpa into FlashAttention-style online-softmax "
                "loops (the score table is never stored)";
  let description = [{
    Rewrites every `attn.sdpa` (on tensors) into a parallel `scf.forall` over
    `(batch, query head, query block)` and, inside it, sequential loops over
    key/value blocks that carry the running row max `m`, the running row sum
    `l` and the `[block-q, Dv]` f32 accumulator (the online softmax
    recurrence). Only `[block-q, block-kv]` score tiles exist at any time.

    Inside each query block:

    - the query tile is read once, extended to f32 and multiplied by
      `scale * log2(e)`, so that the loop uses `exp2` and never multiplies a
      score by the scale;
    - the key/value range is computed per block: with causal structure, a
      sliding `window` or `key_lengths`, blocks that every row of the query
      block must ignore are never visited (blocks on an edge of the window
      band get the element mask too);
    - a `softcap` is a tile op of its own (`softcap`) right after the
      scores, ALiBi (`alibi`) one right after that;
    - the visited blocks come in three loops: blocks fully visible (no
      element mask), blocks on the causal diagonal (element mask from the
      indices), and one tail block shorter than `block-kv` (zero-padded,
      padded keys masked); key/value tiles of the first two are views, not
      copies; a query head reads its key/value head `h / (Hq/Hkv)` in place;
    - where block-q equals block-kv, the rows are plain (no grouped heads)
      and the diagonal's shift is a static non-negative multiple of the
      block, the `scores` and `pv` tile ops of the block on the causal
      diagonal carry `attn.hidden_above = 0` (key `j` of the tile hidden
      from row `i` wherever `j > i`) and, with a window whose left bound is
      a non-zero multiple of the block, those of the block on its lower
      edge `attn.hidden_below = 0` (hidden wherever `j < i`): a target may
      leave those pairs out (attn-cpu-microkernels does);
    - a float mask is added (times `log2(e)`), an i1 mask selects `-inf`;
      broadcast mask dims read index 0;
    - after the loops the accumulator is divided by `l` once; rows with
      nothing visible (`l == 0`) give 0 and `lse = -inf`.

    Where Lq is static and a multiple of the block's rows, every block's
    length is the constant: its query and output slices are static and the
    query tile is not zero-filled first (`init_query` only where a block
    may be short: a dynamic Lq, or one that the block does not divide).

    Tile ops are `linalg.generic`s on static `[block-q, block-kv]`,
    `[block-q, D]` and `[block-q, Dv]` tiles, so the same tiling serves every
    target: the CPU pipeline vectorizes and parallelizes it, a GPU pipeline
    maps the `scf.forall` to blocks. Each tile op, and each `linalg.fill`
    that starts one of its buffers, carries its role as the discardable
    attribute `attn.tile = #attn.tile<role>` (`scores`, `element_mask`,
    `row_max`, `max_update`, `rescale`, `probs`, `row_sum`, `pv`,
    `softcap`, `alibi`, `user_mask`; once per query block `scale_query`
    (the query tile's transpose and scale) and `output` (the normalize and
    transpose into the result); fills
    `init_query`, `init_scores`, `init_row_max`, `init_max`, `init_sum`,
    `init_acc`; with `transpose-values`, `transpose_values` once per key
    block and call; with `pair-values`, `pair_values` likewise), so that a
    target pass can swap in its own kernel for it.

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
    ```

    After (abridged):

    ```mlir
    %r = scf.forall (%b, %h, %qb) in (1, 8, 64) shared_outs(%o = %empty) {
      %qt = linalg.generic ... // Q tile * scale * log2(e), f32
      %n = ...                 // key blocks this query block can see
      %s:3 = scf.for %kb = %c0 to %nfull step %c1
          iter_args(%m = %ninf, %l = %zero, %acc = %zeros) {
        %s = linalg.generic ... // Q tile . K tile^T
        ...                     // online softmax update, P . V tile
      }
      ...                       // diagonal blocks, tail block, normalize
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %tile into %o[%b, %h, %q0, 0] ...
      }
    }
    ```
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per block (a tile of the scf.forall)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "Keys per block of the sequential online-softmax loop">,
    Option<"rowMultiple", "row-multiple", "int64_t", /*default=*/"1",
           "Round a short static query block up to a multiple of this "
           "(padding rows are computed and dropped)">,
    Option<"kvSplits", "kv-splits", "int64_t", /*default=*/"0",
           "Split-K: cut the keys into this many chunks, one forall "
           "iteration each, merged by their lse (static B and Lk, one query "
           "block per head or group); 0: auto (when there are fewer than 16 "
           "query blocks and at least 2048 keys), 1: never">,
    Option<"decodeRows", "decode-rows", "int64_t", /*default=*/"0",
           "Decode kernel: a block of at most this many query rows (Lq, or "
           "Lq times the group size with grouped-query attention) streams K "
           "and V once with vectors along D instead of the tile ops "
           "(the README's pass table lists the cases it takes); 0: never">,
    Option<"decodeWidth", "decode-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector of the decode kernel (a power of 2)">,
    Option<"decodeBf16Dot", "decode-bf16-dot", "bool", /*default=*/"false",
           "Decode kernel with bf16 Q and K (D a multiple of 2 x "
           "decode-width, decode-width 16): the dot products Q.K on "
           "AVX512-BF16's vdpbf16ps (x86vector.avx512.dot) on the bf16 "
           "values as given, the score scale applied to the sums; needs a "
           "CPU with avx512_bf16">,
    Option<"decodeBf16ValueDot", "decode-bf16-value-dot", "bool",
           /*default=*/"false",
           "Decode kernel with bf16 V (Dv a multiple of 2 x decode-width, "
           "decode-width 16): P.V on vdpbf16ps, the V rows of two keys "
           "interleaved in registers and each row's two probabilities "
           "rounded to bf16 (as the prefill's bf16 dot products and "
           "FlashAttention round P; the sums of P stay f32); needs a CPU "
           "with avx512_bf16">,
    Option<"narrowBlockQ", "narrow-block-q", "int64_t", /*default=*/"0",
           "Query rows per block, in place of block-q, for an op whose D and "
           "Dv are at most 64 (narrow-lowp-max-d with bf16 or f16 values), that has "
           "no causal or window band (larger "
           "blocks would compute more of what the band skips) and not both "
           "a user mask and grouped-query heads (more grouped rows, whose "
           "mask tile the CPU kernels do not take); 0: block-q everywhere">,
    Option<"narrowLowpMaxD", "narrow-lowp-max-d", "int64_t",
           /*default=*/"64",
           "The largest D and Dv of an op with bf16 or f16 values that "
           "narrow-block-q applies to (64 for f32): on the AMX kernels the "
           "larger blocks pay at D = 128 and 256 too">,
    Option<"wideBlockKV", "wide-block-kv", "int64_t", /*default=*/"0",
           "Keys per block, in place of block-kv, for an op with bf16 "
           "values and D or Dv above 64 that takes narrow-block-q: on the "
           "AMX kernels a P.V tile product then runs twice the keys "
           "between loading and storing its accumulator tiles; 0: "
           "block-kv everywhere">,
    Option<"transposeValues", "transpose-values", "bool", /*default=*/"false",
           "For bf16 values with Dv and the key blocks multiples of 16 (not "
           "the decode kernel): V is transposed once per call, before the "
           "query blocks, into a [B, Hkv, Dv, Lk rounded up to block-kv] "
           "copy (zero past Lk; one `transpose_values` tile op per key "
           "block, in an scf.forall of its own), and `pv` reads its [Dv, "
           "block-kv] tiles from there: what the AMX kernels' P.V needs as "
           "its A operand, made once rather than in every query block">,
    Option<"pairValues", "pair-values", "bool", /*default=*/"false",
           "For bf16 values with Dv a multiple of 16 and even key blocks "
           "(not the decode kernel, nor with transpose-values): V is packed "
           "once per call, before the query blocks, into key pairs, a [B, "
           "Hkv, Lk rounded up to block-kv / 2, 2 Dv] copy with Vp[t, 2e + "
           "p] = V[2t + p, e] (zero past Lk; one `pair_values` tile op per "
           "key block, in an scf.forall of its own), and `pv` reads its "
           "[block-kv / 2, 2 Dv] tiles from there: what bf16 dot products "
           "(vdpbf16ps) take as the broadcast operand of P.V, made once "
           "rather than in every query block; only where that pays: static "
           "shapes, no grouped rows, at least 4 query blocks reading each V "
           "tile, a copy of at most 2 MiB per such block and 32 MiB in "
           "all">,
    Option<"f16Tiles", "f16-tiles", "bool", /*default=*/"false",
           "The target's tile products take f16 as it is (AMX-FP16): "
           "transpose-values transposes f16 values too (not split)">,
    Option<"splitF16", "split-f16", "bool", /*default=*/"false",
           "For f16 K and V with D, Dv and the key blocks multiples of 16 "
           "(not the decode kernel): each made once per call, before the "
           "query blocks, into two bf16 parts, hi = bf16(x) and lo = "
           "bf16(x - hi), whose sum is x exactly (`bf16_keys` tile ops for "
           "K into [B, Hkv, Lk rounded up, 2 D]; V with transpose-values "
           "into [B, Hkv, Dv, 2 Lk rounded up], its `transpose_values` ops "
           "giving both parts); `scores` and `pv` read both parts (three "
           "inputs, K or V = hi + lo): for bf16 tile products (the AMX "
           "kernels) that give f16 inputs f32-accurate products">,
    Option<"decodePrefetchLocality", "decode-prefetch-locality", "int64_t",
           /*default=*/"2",
           "Decode kernel: the locality of its software prefetches of the K "
           "and V rows ahead (llvm.prefetch's: 3 into L1, prefetcht0 on "
           "x86; 2 into L2, prefetcht1; 1 prefetcht2; 0 non-temporal, "
           "prefetchnta)">,
    Option<"decodePageTouch", "decode-page-touch", "int64_t",
           /*default=*/"8192",
           "Decode kernel with 16-bit K and V: each block of keys also loads "
           "one element of K and one of V this many bytes past the rows its "
           "prefetches reach (clamped to the last block; 0: none), so that "
           "on 4 KiB pages the translation of the page the prefetches reach "
           "next is walked by a load, not by a prefetch that stalls the "
           "core while it walks">,
    Option<"decodePhased", "decode-phased", "bool", /*default=*/"false",
           "Decode kernel with f32 K and V, at least 4 query rows, rows "
           "times D at least 512 and, above 8 rows, D at least 128: each "
           "block of keys in two phases, its "
           "scores first (a loop over its keys that also prefetches the K "
           "rows two blocks ahead), then its softmax and P.V loops (which "
           "prefetch only V), instead of P.V loops that also take the next "
           "block's dot products">,
    Option<"decodePrefetch", "decode-prefetch", "std::string",
           /*default=*/"\"auto\"",
           "Decode kernel: which kernels prefetch their K and V rows ahead "
           "(at decode-prefetch-locality): all, none, or auto (default): "
           "all but those with f32 K and V whose P.V takes one group of "
           "accumulators (query rows times Dv at most 16 vectors at 16 "
           "lanes, 8 at 8), which read each K and V row whole, once, in "
           "order, and leave the streams to the hardware prefetchers">,
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
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
    Option<"regBlock", "reg-block", "int64_t", /*default=*/"6",
           "Keys (scores) or value columns (pv) per register block (scaled "
           "up when a tile has fewer row vectors, up to 24 accumulators; "
           "products on a band's edge take one row vector and 16 on 16 "
           "lanes)">,
    Option<"rowVectors", "row-vectors", "int64_t", /*default=*/"4",
           "Row vectors per register block (fewer if the tile has fewer)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "bf16 scores and P.V on AVX512-BF16 dot products "
           "(x86vector.avx512.dot, vdpbf16ps; P rounded to bf16; V packed "
           "into key pairs per key block, or read from pair-values' copy, "
           "whose `pair_values` tile ops this pass vectorizes); needs "
           "vector-width=16 and a CPU with avx512_bf16">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "bf16 scores and P.V on AMX tiles (amx.tile_mulf, tdpbf16ps) "
           "where the tiles are multiples of 16 (D, Dv, the key and query "
           "blocks): the query tile packed into dim pairs once per query "
           "block, K read in place, V transposed and P rounded to bf16 and "
           "packed into key pairs per key block; needs a CPU with amx_tile "
           "and amx_bf16 and the OS's permission for the AMX state "
           "(attn's runtimes ask for it); ops it does not take keep "
           "bf16-dot's kernels or the widening ones">,
    Option<"amxFp16", "amx-fp16", "bool", /*default=*/"false",
           "With amx: f16 scores and P.V on AMX-FP16 tiles (tdpfp16ps) as "
           "they are, the query packed and P rounded to f16 (a CPU with "
           "amx_fp16); without it f16 goes through split-f16's bf16 parts "
           "or the widening kernels">,
    Option<"avx512Exp", "avx512-exp", "bool", /*default=*/"false",
           "exp2 as x - floor(x) by vreduceps, a polynomial and "
           "2^floor(x) by vscalefps (x86vector.avx512.mask.scalef) instead "
           "of a clamp, a rounding and exponent bits built in the integer "
           "unit; needs vector-width=16 and a CPU with avx512f and avx512dq">,
    Option<"blendStores", "blend-stores", "bool", /*default=*/"false",
           "store the tiles that a mask or a max selects lanes of "
           "(user_mask, element_mask and the elementwise tile ops, "
           "max_update, the scores kernel's row max) through an empty "
           "inline asm, so that LLVM keeps a blend and a plain store "
           "instead of forming a masked store (AVX2's vmaskmovps, "
           "microcoded and many times slower on AMD Zen cores); x86 only, "
           "and the target needs vector registers of vector-width f32 "
           "(AVX at 8, AVX-512 at 16), else LLVM fails to compile the asm">,
    Option<"prefetchSpread", "prefetch-spread", "int64_t", /*default=*/"1",
           "Most reduction steps per prefetch in the f32 scores and P.V "
           "kernels (a power of two; 1: one line per step, the clamped "
           "last line repeated once the tile is covered): each kernel takes "
           "the largest power of two up to this that divides its reduction "
           "and whose groups, all taken, still reach every line of the next "
           "tile, and prefetches one line per stream in the first step of "
           "each group (a causal diagonal block, which skips work, leaves "
           "some lines out)">,
    Option<"bf16RoundInIntegers", "bf16-round-in-integers", "bool",
           /*default=*/"true",
           "bf16 is rounded in integer code later (attn-expand-bf16-truncf, "
           "arith-expand): the output kernel transposes f32 and applies its "
           "body (the truncf) after; false: the body first, the truncf for "
           "the target to lower (AVX512-BF16's vcvtneps2bf16; attn-lower-cpu "
           "sets false exactly where it skips the integer rounding)">,
    Option<"targetFeatures", "target-features", "std::string",
           /*default=*/"\"\"",
           "LLVM target features to compile the function with, set as its "
           "`target_features` (comma-separated, e.g. -avx512f for the AVX2 "
           "kernels); empty: the target machine's">,
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

def AttnGpuDeviceBuffers : Pass<"attn-gpu-device-buffers", "func::FuncOp"> {
  let summary = "Put a bufferized host function's buffers in GPU device "
                "memory, its copies in kernels";
  let description = [{
    For a GPU pipeline, after bufferization and before the loops are mapped
    to the GPU: the function's arguments are device pointers given by the
    caller, and every buffer it allocates (the naive score table, row
    statistics, results) must be device memory too, since only kernels
    touch them. Outside `gpu.launch` bodies:

    - a buffer the function allocates, fills and then only copies into one
      of its arguments that nothing else touches (a result under a
      destination-passing entry, which convert-attn-to-gpu allocates) is
      replaced by that argument: no allocation, no copy;
    - `memref.alloc` becomes `gpu.alloc` and `memref.dealloc` becomes
      `gpu.dealloc` (`gpu-async-region` and `gpu-to-llvm` turn them into
      `mgpuMemAlloc`/`mgpuMemFree` on the launch stream);
    - `memref.copy` becomes `linalg.copy`, so that it is lowered to a kernel
      with the other linalg ops;
    - a load or store the host would make itself (`memref.load`,
      `memref.store`, vector transfers) is an error: the host cannot read
      device memory.

    Before:

    ```mlir
    %s = memref.alloc(%b, %lq, %lk) {alignment = 64 : i64} : memref<?x8x?x?xf32>
    memref.copy %a, %o : memref<?x8x?x64xf32> to memref<?x8x?x64xf32>
    memref.dealloc %s : memref<?x8x?x?xf32>
    ```

    After:

    ```mlir
    %s = gpu.alloc (%b, %lq, %lk) : memref<?x8x?x?xf32>
    linalg.copy ins(%a : memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>)
    gpu.dealloc %s : memref<?x8x?x?xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
  ];
}

def AttnGpuRebuildCapturedMemrefs
    : Pass<"attn-gpu-rebuild-captured-memrefs", "func::FuncOp"> {
  let summary = "Pass the memrefs a gpu.launch captures as a base buffer "
                "and index values, so kernels take one bare pointer each";
  let description = [{
    Kernels take one bare pointer per memref argument
    (`use-bare-pointers-for-kernels`), which holds only for memrefs of static
    shape, strides and offset. Every other memref a `gpu.launch` body uses
    from above is taken apart before the launch
    (`memref.extract_strided_metadata`: a 0-d base buffer, the offset, sizes
    and strides) and rebuilt at the start of the body
    (`memref.reinterpret_cast`, then `memref.cast` back to its type), so that
    kernel outlining passes the base buffer (static: a bare pointer) and the
    index values (scalars). Unlike `gpu-decompose-memrefs`, which rewrites
    only loads, stores and subviews, every use is served: `nvgpu` copies,
    `memref.dim`, vector transfers.

    Before:

    ```mlir
    gpu.launch ... {
      %t = nvgpu.device_async_copy %k[%i, %j], %smem[%j], 8
          : memref<?x64xf16> to memref<64xf16, 3>
    }
    ```

    After:

    ```mlir
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %k
    gpu.launch ... {
      %r = memref.reinterpret_cast %base to offset: [%offset],
          sizes: [%sizes#0, 64], strides: [64, 1]
          : memref<f16> to memref<?x64xf16, strided<[64, 1], offset: ?>>
      %k2 = memref.cast %r : ... to memref<?x64xf16>
      %t = nvgpu.device_async_copy %k2[%i, %j], %smem[%j], 8 ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AttnRaiseSdpa : Pass<"attn-raise-sdpa", "func::FuncOp"> {
  let summary = "Raise attention written out in upstream ops to attn.sdpa";
  let description = [{
    Finds scaled dot-product attention that a producer wrote out in linalg,
    tensor and arith ops and replaces it with one `attn.sdpa`, folding into
    the op what it can: the scale (also split as sqrt(scale) on Q and K), an
    added float mask, an i1 mask as a select of 0/-inf, causal `linalg.index`
    comparisons (`j - i <= 0` top-left, `j - i <= Lk - Lq` bottom-right),
    grouped-query broadcasts of K/V (read in place), the empty-row guard, and
    `extf`/`truncf` around an f32 computation on f16/bf16 operands. It also
    raises the generic form of torch-mlir's `tm_tensor.attention` with the
    collapse/expand around it (parse it with `--allow-unregistered-dialect`).

    Matching starts at each P.V `linalg.batch_matmul` and follows elements
    backwards through the producers, checking each generic's body and
    indexing maps (softmax over the key axis, max/sum reductions with their
    initial values, the mask, the Q.K^T `batch_matmul`). It does not fire
    when an intermediate (the scores, the softmax, ...) has a user outside
    the attention, or when the computation differs in a way that changes
    results. `-debug-only=attn-raise-sdpa` says why a candidate was left.

    Before (torch-mlir's decomposition, abridged):

    ```mlir
    %s = linalg.batch_matmul ins(%q3, %kt3 ...)    // Q.K^T on [B*H, L, S]
    %m = linalg.generic ... maximumf ...          // row max
    %e = linalg.generic ... math.exp ...          // exp(s - m)
    %l = linalg.generic ... addf ...              // row sum
    %p = linalg.generic ... divf ...              // e / l
    %o = linalg.batch_matmul ins(%p3, %v3 ...)    // P.V
    %r = tensor.expand_shape %o [[0, 1], [2], [3]] ...
    ```

    After:

    ```mlir
    %r = attn.sdpa %q, %k, %v {scale = 1.000000e+00 : f32}
        : tensor<1x2x16x32xf32>, ... -> tensor<1x2x16x32xf32>
    ```
  }];
  let dependentDialects = ["mlir::attn::AttnDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::cf::ControlFlowDialect",
                           "mlir::tensor::TensorDialect"];
  let options = [
    Option<"decomposed", "decomposed", "bool", /*default=*/"true",
           "Raise attention written out in linalg ops (torch-mlir's "
           "decomposition)">,
    Option<"tmTensor", "tm-tensor", "bool", /*default=*/"true",
           "Raise the generic form of tm_tensor.attention">,
    Option<"requireEmptyRowGuard", "require-empty-row-guard", "bool",
           /*default=*/"false",
           "Leave a masked softmax without the empty-row guard unraised (in "
           "the original a fully masked row is NaN, attn.sdpa gives 0)">,
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
    Option<"blockQ", "block-q", "int64_t", /*default=*/"64",
           "Query rows per tile (a multiple of vector-width)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"128",
           "Keys per key block (128: the dK/dV tiles of a block amortize "
           "more query tiles than with 64; measured faster at d=64 and 128)">,
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"16",
           "f32 lanes per vector (16 for AVX-512, 8 for AVX2)">,
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

    Measured on a 2-core Zen 3, 2 threads (docs/benchmarks.md, round
    eleven; paired medians of guided over static): with a busy loop on one
    core 0.72-0.84x the time on four shapes (short sequences, L=2048 with
    and without causal, decode); without it 0.87-1.00x on a noisy machine,
    0.99-1.01x in a quiet minute; `dynamic` cost 4% on the short sequences.

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
    Option<"kind", "kind", "std::string", /*default=*/"\"guided\"",
           "static, dynamic or guided">,
    Option<"chunk", "chunk", "int64_t", /*default=*/"0",
           "Iterations per chunk (the minimum for guided); 0: the "
           "runtime's default">,
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

def AttnRejectSdpaGrad : Pass<"attn-reject-sdpa-grad"> {
  let summary = "Fail on attn.sdpa_grad, for pipelines that cannot lower it";
  let description = [{
    Emits an error on the first `attn.sdpa_grad` and fails: the GPU
    pipelines run it first, because the backward pass has no GPU lowering
    yet (it runs on `attn-lower-cpu` and `attn-lower-naive-cpu`). Without it
    the op would reach bufferization and fail there with a message that does
    not say why.
  }];
}

def AttnExpandVarlen : Pass<"attn-expand-varlen"> {
  let summary = "Rewrite attn.sdpa_varlen into one attn.sdpa per sequence";
  let description = [{
    Replaces each `attn.sdpa_varlen` by an `scf.for` over its `B` sequences
    (sequential: each inner `attn.sdpa` keeps its own parallel loops). For
    sequence `b` it slices the packed rows `[cu_seqlens_q[b],
    cu_seqlens_q[b+1])` of the query and `[cu_seqlens_k[b],
    cu_seqlens_k[b+1])` of the key and value (dynamic sizes), transposes
    them to `[1, H, L_b, D]`, runs one `attn.sdpa` with dynamic `Lq`, `Lk`
    and the op's attributes, and transposes the result back into the packed
    `out` (and its lse into `[Hq, total_q]`) with `tensor.insert_slice`.
    The transposes copy the sequence's own rows only: `O(total)` extra
    traffic, no padding computed. Both CPU pipelines run it first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnRejectSdpaVarlen : Pass<"attn-reject-sdpa-varlen"> {
  let summary = "Fail on attn.sdpa_varlen, for pipelines that cannot lower it";
  let description = [{
    Emits an error on the first `attn.sdpa_varlen` and fails: the GPU
    pipelines run it first, because packed variable-length attention is
    lowered only by the CPU pipelines (`attn-expand-varlen`).
  }];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
