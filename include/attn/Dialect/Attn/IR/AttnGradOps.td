//===- AttnGradOps.td - attn dialect gradient operations ---*- tablegen -*-===//
//
// Part of the attn project.
//
// The backward pass of attn.sdpa, in its own file so that the forward op's
// definition (AttnOps.td) and this one change independently.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNGRADOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNGRADOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_SdpaGradOp : Op<Attn_Dialect, "sdpa_grad",
                         [Pure, Attn_AttentionOpInterface]> {
  let summary = "gradient of scaled dot-product attention";
  let description = [{
    Given the operands of an `attn.sdpa` (`query`, `key`, `value`, the
    optional `mask` and the same `scale` / `causal` attributes), its results
    `out` and `lse` (the forward must be asked for its lse: that is what
    links the two ops), and the gradient `d_out` of a loss with respect to
    `out`, computes the gradients of that loss with respect to the query, key
    and value:

    ```
    P  = exp(scale * Q.K^T + mask - lse)     (0 where not visible)
    dV = P^T . dO
    dP = dO . V^T
    dS = P o (dP - rowsum(dO o O))
    dQ = scale * dS . K
    dK = scale * dS^T . Q
    ```

    per batch and query head, accumulated in f32 whatever the element type
    and rounded once. With grouped-query attention, `d_key` and `d_value` of
    a key/value head are the sums over the query heads of its group. A row
    with nothing visible (`lse = -inf`) contributes nothing: its `d_query`
    row is 0. The mask gets no gradient.

    - `query` `[B, Hq, Lq, D]`, `key` `[B, Hkv, Lk, D]`, `value`
      `[B, Hkv, Lk, Dv]`, `out` and `d_out` `[B, Hq, Lq, Dv]`, all of one
      element type (f32, f16 or bf16); `lse` `[B, Hq, Lq]` f32.
    - `mask`: as for `attn.sdpa` (i1 or additive float, broadcast dims of 1).
    - Results `d_query`, `d_key`, `d_value` have the shapes and element type
      of `query`, `key` and `value`.

    Example:

    ```mlir
    %o, %lse = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
        : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>,
          tensor<1x2x128x64xf32>
        -> tensor<1x8x128x64xf32>, tensor<1x8x128xf32>
    %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do
        {causal = #attn.causal<top_left>}
        : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>,
          tensor<1x2x128x64xf32>, tensor<1x8x128x64xf32>,
          tensor<1x8x128xf32>, tensor<1x8x128x64xf32>
        -> tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32>,
           tensor<1x2x128x64xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$out,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$d_out,
    Optional<AnyRankedTensor>:$mask,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_CausalAttr>:$causal
  );
  let results = (outs
    AnyRankedTensor:$d_query,
    AnyRankedTensor:$d_key,
    AnyRankedTensor:$d_value
  );

  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $lse `,` $d_out
    (`mask` `(` $mask^ `)`)? attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($out) `,`
    type($lse) `,` type($d_out) (`,` type($mask)^)?
    `->` type($d_query) `,` type($d_key) `,` type($d_value)
  }];

  // Operand types, dims, scale, causal: AttentionOpInterface's (no window).
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNGRADOPS_TD
