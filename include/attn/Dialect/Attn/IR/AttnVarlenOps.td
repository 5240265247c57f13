//===- AttnVarlenOps.td - attn.sdpa_varlen -----------------*- tablegen -*-===//
//
// Part of the attn project.
//
// attn.sdpa_varlen: FlashAttention's varlen API (packed sequences of
// different lengths, no padding), in its own file like AttnGradOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNVARLENOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNVARLENOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_SdpaVarlenOp : Op<Attn_Dialect, "sdpa_varlen",
                           [Pure, Attn_AttentionOpInterface]> {
  let summary = "attention over packed sequences of different lengths";
  let description = [{
    FlashAttention's varlen form: `B` sequences packed along the rows, with
    no padding. Sequence `b` owns query rows `[cu_seqlens_q[b],
    cu_seqlens_q[b+1])` and key/value rows `[cu_seqlens_k[b],
    cu_seqlens_k[b+1])`; its output rows are exactly `attn.sdpa` of those
    rows alone (with its own `Lq_b`, `Lk_b`: causal and window alignments
    use them). Rows of one sequence never see another's.

    - `query` `[total_q, Hq, D]`, `key` `[total_k, Hkv, D]`, `value`
      `[total_k, Hkv, Dv]`, one element type (f32, f16 or bf16); heads and
      head dims static, `Hq % Hkv == 0`.
    - `cu_seqlens_q`, `cu_seqlens_k`: i32 `[B + 1]`, non-decreasing, from 0;
      the last entries are `total_q` and `total_k` (not checked at run
      time: offsets outside the packed tensors are undefined behaviour, as
      in FlashAttention).
    - result `out` `[total_q, Hq, Dv]`; optional `lse` `[Hq, total_q]` f32
      (FlashAttention's varlen layout).
    - attributes `scale`, `causal`, `window`, `softcap` as for `attn.sdpa`,
      applied per sequence.
    - `alibi_slopes` (optional operand, f32 `[Hq]` or `[B, Hq]`): ALiBi as
      for `attn.sdpa`, per sequence: `s <- s - slope * |i + Lk_b - Lq_b - j|`
      with the sequence's own lengths and (for `[B, Hq]`) its own row.
    - No mask and no key lengths: a packed mask would be `O(total_q *
      total_k)` (or need a layout of its own) and `cu_seqlens_k` already
      gives every sequence its own key count.

    ```mlir
    %o, %lse = attn.sdpa_varlen %q, %k, %v, %cuq, %cuk
        {causal = #attn.causal<bottom_right>}
        : tensor<?x8x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>,
          tensor<4xi32>, tensor<4xi32>
        -> tensor<?x8x64xf32>, tensor<8x?xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$cu_seqlens_q,
    AnyRankedTensor:$cu_seqlens_k,
    Optional<AnyRankedTensor>:$alibi_slopes,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_CausalAttr>:$causal,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap
  );
  let results = (outs
    AnyRankedTensor:$out,
    Optional<AnyRankedTensor>:$lse
  );

  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $cu_seqlens_q `,` $cu_seqlens_k
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($cu_seqlens_q) `,`
    type($cu_seqlens_k) `->` type($out) (`,` type($lse)^)?
  }];

  let hasVerifier = 1;

  // Operand types, dims, scale, causal, window: AttentionOpInterface's.
  let extraClassDeclaration = [{
    /// The packed rows (AttentionOpInterface's sequence dim): [total, H, D].
    unsigned getSequenceDim() { return 0; }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNVARLENOPS_TD
