//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

def Attn_SdpaOp : Attn_Op<"sdpa", [
    Pure, AttrSizedOperandSegments, Attn_AttentionOpInterface,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                              ["reifyResultShapes"]>]> {
  let summary = "scaled dot-product attention";
  let description = [{
    Computes, for every batch `b`, query head `h` and query row `i`:

    ```
    out[b,h,i,:] = softmax_j(scale * Q[b,h,i,:] . K[b,h',j,:] + mask) . V[b,h',j,:]
    ```

    with `h' = h / (Hq / Hkv)` (grouped-query attention), scores accumulated
    in f32 whatever the element type, and the result rounded once.

    - `query`: `[B, Hq, Lq, D]`, `key`: `[B, Hkv, Lk, D]`,
      `value`: `[B, Hkv, Lk, Dv]`, all f32, f16 or bf16 (the same type).
    - `mask` (optional), rank 4, each dim equal to the matching dim of
      `[B, Hq, Lq, Lk]` or 1 (broadcast): `i1` (true = may attend) or float
      (the query's type or f32; added to the scaled score).
    - `scale` (optional): defaults to `1/sqrt(D)`.
    - `causal` (optional): `#attn.causal<top_left>` (key `j` visible to query
      `i` iff `j <= i`) or `#attn.causal<bottom_right>` (iff
      `j <= i + Lk - Lq`).
    - `window` (optional): `array<i64: left, right>`, a sliding window: key
      `j` visible to query `i` iff `d - left <= j <= d + right`, with `d`
      the diagonal of the causal alignment (`d = i` top_left,
      `d = i + Lk - Lq` bottom_right; bottom_right without `causal`, as in
      FlashAttention). `-1` leaves that side unbounded. Composes with
      `causal` (both rules apply).
    - `key_lengths` (optional operand, i32 `[B]`): keys `j >= key_lengths[b]`
      (clamped to `[0, Lk]`) are invisible to batch `b`, and bottom_right
      alignment (causal or window) uses that length for `Lk`.
    - `alibi_slopes` (optional operand, f32 `[Hq]` or `[B, Hq]`): ALiBi,
      `s <- s - slope[b, h] * |i + Lk - Lq - j|` (FlashAttention's
      convention; `Lk` is the batch's key length with `key_lengths`), after
      the softcap, before the mask.
    - `softcap` (optional, f32 > 0): `s <- softcap * tanh(s / softcap)` on
      the scaled score, before the mask (Gemma 2, Grok).
    - Results: `out` `[B, Hq, Lq, Dv]` of the query's element type and, if
      asked for, `lse` `[B, Hq, Lq]` f32, the natural-log log-sum-exp of the
      visible scaled scores (`-inf` for a row with nothing visible, whose
      `out` is 0).

    `B`, `Lq` and `Lk` may be dynamic; heads and head dims must be static. A
    dynamic mask dim broadcasts when it is 1 at run time.

    Example:

    ```mlir
    %o, %lse = attn.sdpa %q, %k, %v mask(%m)
        {scale = 0.125 : f32, causal = #attn.causal<bottom_right>}
        : tensor<2x8x128x64xf32>, tensor<2x2x256x64xf32>,
          tensor<2x2x256x64xf32>, tensor<1x1x128x256xi1>
        -> tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$key_lengths,
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
    $query `,` $key `,` $value (`mask` `(` $mask^ `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    attr-dict `:`
    type($query) `,` type($key) `,` type($value) (`,` type($mask)^)?
    `->` type($out) (`,` type($lse)^)?
  }];

  let hasVerifier = 1;
  let hasCanonicalizer = 1;

  // Operand types, dims, scale, causal: AttentionOpInterface's.
  let extraClassDeclaration = [{
    RankedTensorType getOutType() { return getOut().getType(); }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
