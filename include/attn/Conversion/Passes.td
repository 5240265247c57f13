//===- Passes.td - the naive (oracle) lowerings ------------*- tablegen -*-===//
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

def ConvertAttnGradToLinalg : Pass<"convert-attn-grad-to-linalg"> {
  let summary = "Lower attn.sdpa_grad to linalg on tensors, materializing "
                "the probabilities (the reference backward)";
  let description = [{
    Rewrites every `attn.sdpa_grad` into `linalg.generic` ops on tensors that
    compute the gradient as the formula reads, with `[B, Hq, Lq, Lk]` f32
    tables for the scores, the probabilities and their gradient:

    1. `S = Q . K^T`, `P = exp(scale * S + mask - lse)` where visible (the i1
       mask, the causal rule, a score above `-inf`, a row whose `lse` is above
       `-inf`), 0 elsewhere,
    2. `Di = rowsum(dO o O)`, `dP = dO . V^T`, `dS = P o (dP - Di)`,
    3. `dQ = scale * dS . K`, `dK = scale * dS^T . Q`, `dV = P^T . dO`; with
       grouped-query attention the query heads of a group are reduced
       together with the rows (indexing map `hk * G + g`, no copy),
    4. each gradient rounded once to the element type.

    It is the oracle that the fused backward (attn-tile-sdpa-grad) is checked
    against.

    Before:

    ```mlir
    %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do
        : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>,
          tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4x8xf32>
        -> tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>
    ```

    After (abridged):

    ```mlir
    %s = linalg.generic {...} ins(%q, %k) outs(%zero) {...}
    %p = linalg.generic {...} ins(%s, %lse) outs(%empty) {... math.exp ...}
    %di = linalg.generic {...} ins(%do, %o) outs(%zero_rows) {...}
    ...
    %dk = linalg.generic {...} ins(%ds, %q) outs(%zero_k) {...}
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
