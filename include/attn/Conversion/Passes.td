//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Lower attn.sdpa to linalg on tensors, materializing the "
                "score table (the reference lowering)";
  let description = [{
    Rewrites every `attn.sdpa` into `linalg.generic` ops on tensors that
    compute the formula as it reads, with the whole `[B, Hq, Lq, Lk]` f32
    score table materialized:

    1. `S = scale * Q . K^T` (f32 accumulation; query head `h` reads key head
       `h floordiv (Hq/Hkv)` through the indexing map, no copy of K),
    2. the float mask added, the i1 mask and the causal rule (from
       `linalg.index`) applied as a select to `-inf`,
    3. the row max `m`, `E = exp(S - m)` (0 where `S` is `-inf`, so a row with
       nothing visible gives 0, not NaN), the row sum `l`,
    4. `O = E . V`, `out = l == 0 ? 0 : O / l` rounded once to the element
       type, and `lse = m + log(l)` (`-inf` for an empty row).

    It is the oracle that the fused lowering is checked against: obviously
    correct, O(L^2) memory, slow.

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>,
        tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
    ```

    After (abridged):

    ```mlir
    %s = linalg.generic {indexing_maps = [..Q.., ..K.., ..S..],
         iterator_types = ["parallel", "parallel", "parallel", "parallel",
                           "reduction"]} ins(%q, %k) outs(%zero) {...}
    %max = linalg.generic {...} ins(%s) outs(%neg_inf) {... arith.maximumf ...}
    ...
    %o = linalg.generic {...} ins(%pv, %sum) outs(%empty) {... arith.divf ...}
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
