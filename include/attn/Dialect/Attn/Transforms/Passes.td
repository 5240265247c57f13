//===- Passes.td - target-neutral attn transforms ----------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "attn/Tuning/Tuning.td"
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
    `init_acc`; with a plan's `transpose_values`, a `transpose_values` op
    once per key block and call; with `pair_values`, `pair_values`
    likewise; with `split_f16`, `bf16_keys`), so that a target pass can swap
    in its own kernel for it.

    A target plans an op's tiling before this pass with the discardable
    attribute `attn.tiling` on the `attn.sdpa` (for the CPU,
    `attn-cpu-plan-tiling`): a dictionary whose `block_q` and `block_kv`
    replace the pass's block sizes for that op, and whose unit entries ask
    for the K/V layouts its kernels read (`transpose_values`: V as
    [Dv, keys], once per call; `pair_values`: V in key pairs; `split_f16`:
    f16 K and V as bf16 hi + lo parts; `f16_tiles`: the target's tile
    products take f16 as it is, so that f16 V is transposed too, not
    split). Each layout is made only where the op's shapes allow it (the
    layouts' conditions below); without the attribute an op is tiled with
    the pass's options and no layout:

    ```mlir
    %o = attn.sdpa %q, %k, %v {attn.tiling = {block_q = 128 : i64,
                                              transpose_values}}
        : tensor<1x8x4096x64xbf16>, ... -> tensor<1x8x4096x64xbf16>
    ```

    The layouts' conditions: `transpose_values` for bf16 values (or f16
    with `f16_tiles` or `split_f16`) with Dv and the key blocks multiples
    of 16, not in a decode group (V transposed once per call, before the
    query blocks, into a [B, Hkv, Dv, Lk rounded up to block-kv] copy, zero
    past Lk, one `transpose_values` tile op per key block in an scf.forall
    of its own; `pv` reads its [Dv, block-kv] tile); `pair_values` for bf16
    values with Dv a multiple of 16 and even key blocks, not in a decode
    group nor where V is transposed, and only where that pays (static
    shapes, no grouped rows, at least 4 query blocks reading each V tile, a
    copy of at most 2 MiB per such block and 32 MiB in all): V packed into
    a [B, Hkv, Lk rounded up to block-kv / 2, 2 Dv] copy with
    Vp[t, 2e + p] = V[2t + p, e], one `pair_values` tile op per key block;
    `split_f16` for f16 K and V with D, Dv and the key blocks multiples of
    16, not in a decode group nor with `f16_tiles`: K into [B, Hkv, Lk
    rounded up, 2 D] (`bf16_keys` tile ops), V with the transpose (one
    `transpose_values` op giving both parts); `scores` and `pv` then read
    both parts (K or V = hi + lo).

    Decode groups (`decode-rows`): where a query block has few rows (a
    decode step: Lq, or Lq times the group size with grouped-query
    attention, at most `decode-rows`) and the op allows it, the block's key
    loops are one `attn.decode_keys` over the keys it sees, for a target to
    replace with a kernel that runs its vectors along D
    (`attn-cpu-decode`); the writes of its results (and split-K's merge)
    stay the tiling's:

    ```mlir
    %m, %l, %acc = attn.decode_keys %q, %k, %v
        at (%b, %h, %hkv, %c0) keys (%begin to %end)
        {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 0.255 : f32}
        : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>,
          tensor<1x2x100x32xbf16>
        -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
    ```

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
    // Tuning.td's knobs, one a line.
    CpuBlockQ,
    CpuBlockKV,
    CpuRowMultiple,
    CpuKvSplits,
    CpuDecodeRows,
    CpuDecodeDimMultiple,
  ];
  let dependentDialects = [
    "::mlir::attn::AttnDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnExpandVarlen : Pass<"attn-expand-varlen"> {
  let summary = "Rewrite attn.sdpa_varlen (attn.sdpa_varlen_grad) into one "
                "attn.sdpa (attn.sdpa_grad) per sequence";
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

    `attn.sdpa_varlen_grad` likewise becomes one `attn.sdpa_grad` per
    sequence: the sequence's query, key, value, out and d_out rows sliced
    and transposed the same way, its lse columns `[Hq, Lq_b]` of
    `[Hq, total_q]`, and its three gradients written back into zero-filled
    packed results (rows of no sequence, and keys of a sequence without
    queries, keep zero gradients).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnGatherPaged : Pass<"attn-gather-paged"> {
  let summary = "Rewrite attn.sdpa_paged into a page gather and one attn.sdpa";
  let description = [{
    The oracle's form of attention over a paged cache: copies every
    sequence's pages into dense `[B, Hkv, max_pages * page_size, D]` keys and
    values (`linalg.generic`: key `t` of sequence `b` is slot
    `t % page_size` of page `page_table[b, t / page_size]`), then runs one
    `attn.sdpa` with `key_lengths = kv_lens` (keys at or past a sequence's
    length are invisible; bottom_right alignment at its own length) and the
    op's attributes and slopes. The gather reads a page only for keys below
    the sequence's length and when its index is in `[0, num_pages)`; other
    keys read as 0, so no index in the page table makes it read outside the
    caches. `attn-lower-naive-cpu` runs it; the copy is what a fused lowering
    must avoid: `attn-lower-cpu` reads the caches in place instead
    (`attn-view-paged`).

    Before:

    ```mlir
    %o = attn.sdpa_paged %q, %kc, %vc, %table, %lens
        : tensor<2x8x1x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32>,
          tensor<2x4xi32>, tensor<2xi32> -> tensor<2x8x1x64xf32>
    ```

    After:

    ```mlir
    %k = linalg.generic ... outs(%e : tensor<2x2x64x64xf32>) {
      // page = page_table[b, t / 16]; read key_cache[page, t % 16, h, d]
      // under scf.if (t < kv_lens[b] and 0 <= page < num_pages), else 0
    }
    %v = linalg.generic ...
    %o = attn.sdpa %q, %k, %v key_lengths(%lens : tensor<2xi32>) ...
    ```
  }];
  let dependentDialects = [
    "::mlir::attn::AttnDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnRaiseSdpa : Pass<"attn-raise-sdpa", "func::FuncOp"> {
  let summary = "Raise attention written out in upstream ops to attn.sdpa";
  let description = [{
    Finds scaled dot-product attention that a producer wrote out in linalg,
    tensor and arith ops and replaces it with one `attn.sdpa`, folding into
    the op what it can: the scale (also split as sqrt(scale) on Q and K), an
    added float mask, an i1 mask as a select of 0/-inf, causal `linalg.index`
    comparisons (`j - i <= 0` top-left, `j - i <= Lk - Lq` bottom-right,
    other bounds on `j - i` as a `window`), a softcap `c * tanh(s / c)` on
    the scaled scores, an ALiBi bias `-slope[h] * |j - i|`, grouped-query
    broadcasts of K/V (read in place), the empty-row guard, and
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

def AttnRejectSdpaGrad : Pass<"attn-reject-sdpa-grad"> {
  let summary = "Fail on attn.sdpa_grad, for pipelines that cannot lower it";
  let description = [{
    Emits an error on the first `attn.sdpa_grad` and fails: the naive GPU
    pipeline (`attn-lower-naive-gpu`) runs it first, because it has no
    lowering of the backward pass (`attn-lower-gpu` lowers it through
    `convert-attn-to-gpu`, the CPU pipelines through their own). Without it
    the op would reach bufferization and fail there with a message that does
    not say why.
  }];
}

def AttnRejectSdpaVarlen : Pass<"attn-reject-sdpa-varlen"> {
  let summary = "Fail on attn.sdpa_varlen, for pipelines that cannot lower it";
  let description = [{
    Emits an error on the first `attn.sdpa_varlen` or
    `attn.sdpa_varlen_grad` and fails: the GPU pipelines run it first, because packed variable-length attention is
    lowered only by the CPU pipelines (`attn-expand-varlen`).
  }];
}

def AttnRejectSdpaPaged : Pass<"attn-reject-sdpa-paged"> {
  let summary = "Fail on attn.sdpa_paged, for pipelines that cannot lower it";
  let description = [{
    Emits an error on the first `attn.sdpa_paged` and fails: both GPU
    pipelines run it first, because attention over a paged cache has no GPU
    lowering yet; `attn-lower-cpu` lowers it in place (`attn-view-paged`,
    the decode kernel) and `attn-lower-naive-cpu` by a gather
    (`attn-gather-paged`).
  }];
}

def AttnViewPaged : Pass<"attn-view-paged"> {
  let summary = "Rewrite attn.sdpa_paged into attn.sdpa over views of its "
                "caches";
  let description = [{
    The fused CPU lowering's form of attention over a paged cache: one
    `attn.sdpa` with `key_lengths = kv_lens` whose keys and values are
    `attn.paged_view`s of the caches (nothing is copied), with the op's
    attributes and slopes. `attn-tile-online-softmax` takes such an op only
    where its query blocks are decode groups (it refuses the others, with
    the reason), and `attn-cpu-decode` reads the caches in place through the
    views: the page of each key it reads resolved from the page table.

    Before:

    ```mlir
    %o = attn.sdpa_paged %q, %kc, %vc, %table, %lens
        : tensor<2x8x1x64xf32>, tensor<?x16x2x64xf32>, tensor<?x16x2x64xf32>,
          tensor<2x4xi32>, tensor<2xi32> -> tensor<2x8x1x64xf32>
    ```

    After:

    ```mlir
    %k = attn.paged_view %kc, %table
        : tensor<?x16x2x64xf32>, tensor<2x4xi32> -> tensor<2x2x64x64xf32>
    %v = attn.paged_view %vc, %table
        : tensor<?x16x2x64xf32>, tensor<2x4xi32> -> tensor<2x2x64x64xf32>
    %o = attn.sdpa %q, %k, %v key_lengths(%lens : tensor<2xi32>)
        : tensor<2x8x1x64xf32>, tensor<2x2x64x64xf32>, tensor<2x2x64x64xf32>
        -> tensor<2x8x1x64xf32>
    ```
  }];
  let dependentDialects = ["mlir::attn::AttnDialect"];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
