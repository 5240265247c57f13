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
    - the key/value range is computed per block: with causal structure,
      blocks that every row of the query block must ignore are never
      visited;
    - the visited blocks come in three loops: blocks fully visible (no
      element mask), blocks on the causal diagonal (element mask from the
      indices), and one tail block shorter than `block-kv` (zero-padded,
      padded keys masked); key/value tiles of the first two are views, not
      copies; a query head reads its key/value head `h / (Hq/Hkv)` in place;
    - a float mask is added (times `log2(e)`), an i1 mask selects `-inf`;
      broadcast mask dims read index 0;
    - after the loops the accumulator is divided by `l` once; rows with
      nothing visible (`l == 0`) give 0 and `lse = -inf`.

    Tile ops are `linalg.generic`s on static `[block-q, block-kv]`,
    `[block-q, D]` and `[block-q, Dv]` tiles, so the same tiling serves every
    target: the CPU pipeline vectorizes and parallelizes it, a GPU pipeline
    maps the `scf.forall` to blocks.

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
    Option<"blockQ", "block-q", "int64_t", /*default=*/"32",
           "Query rows per block (a tile of the scf.forall)">,
    Option<"blockKV", "block-kv", "int64_t", /*default=*/"64",
           "Keys per block of the sequential online-softmax loop">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
