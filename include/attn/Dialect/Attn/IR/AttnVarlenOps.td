//===- AttnVarlenOps.td - attn.sdpa_varlen -----------------*- tablegen -*-===//
//
// Part of the attn project.
//
// attn.sdpa_varlen: FlashAttention's varlen API (packed sequences of
// different lengths, no padding), and its backward attn.sdpa_varlen_grad,
// in their own file like AttnGradOps.td.
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

def Attn_SdpaVarlenGradOp : Op<Attn_Dialect, "sdpa_varlen_grad", [Pure]> {
  let summary = "gradient of attention over packed sequences";
  let description = [{
    The backward of `attn.sdpa_varlen`, as `attn.sdpa_grad` is the backward
    of `attn.sdpa`: sequence `b`'s gradient rows are exactly
    `attn.sdpa_grad` of that sequence's rows alone (its own `Lq_b`, `Lk_b`
    and lse), packed like the forward's operands. Rows of no sequence (past
    the last offset) get zero gradients, as do the rows of a sequence
    without keys.

    - `query` `[total_q, Hq, D]`, `key` `[total_k, Hkv, D]`, `value`
      `[total_k, Hkv, Dv]`, `out` and `d_out` `[total_q, Hq, Dv]`, one
      element type (f32, f16 or bf16); `lse` `[Hq, total_q]` f32, the
      forward's (ask `attn.sdpa_varlen` for it).
    - `cu_seqlens_q`, `cu_seqlens_k`: i32 `[B + 1]`, as for
      `attn.sdpa_varlen`.
    - attributes `scale` and `causal` as for `attn.sdpa_grad` (no window,
      softcap or ALiBi: the backward kernels do not take them).
    - results `d_query`, `d_key`, `d_value`: the shapes and element type of
      `query`, `key` and `value`.

    ```mlir
    %dq, %dk, %dv = attn.sdpa_varlen_grad %q, %k, %v, %o, %lse, %do,
        %cuq, %cuk {causal = #attn.causal<bottom_right>}
        : tensor<?x8x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>,
          tensor<?x8x64xf32>, tensor<8x?xf32>, tensor<?x8x64xf32>,
          tensor<4xi32>, tensor<4xi32>
        -> tensor<?x8x64xf32>, tensor<?x2x64xf32>, tensor<?x2x64xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$out,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$d_out,
    AnyRankedTensor:$cu_seqlens_q,
    AnyRankedTensor:$cu_seqlens_k,
    OptionalAttr<F32Attr>:$scale,
    OptionalAttr<Attn_CausalAttr>:$causal
  );
  let results = (outs
    AnyRankedTensor:$d_query,
    AnyRankedTensor:$d_key,
    AnyRankedTensor:$d_value
  );

  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $lse `,` $d_out `,`
    $cu_seqlens_q `,` $cu_seqlens_k attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($out) `,`
    type($lse) `,` type($d_out) `,` type($cu_seqlens_q) `,`
    type($cu_seqlens_k) `->` type($d_query) `,` type($d_key) `,`
    type($d_value)
  }];

  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNVARLENOPS_TD
