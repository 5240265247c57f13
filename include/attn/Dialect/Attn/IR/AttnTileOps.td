//===- AttnTileOps.td - ops the tiling leaves to a target --*- tablegen -*-===//
//
// Part of the attn project.
//
// attn.decode_keys: what attn-tile-online-softmax puts where a query block
// is one decode group, for a target to replace with its decode kernel (as
// IREE's tiling leaves a ukernel op for a target to lower). In its own file
// like AttnGradOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_DecodeKeysOp : Op<Attn_Dialect, "decode_keys", [Pure]> {
  let summary = "online softmax of a decode group of query rows over a range "
                "of keys";
  let description = [{
    The online softmax of a few query rows (a decode group) over the keys
    `[key_begin, key_end)`: the state the tiling's key loops would carry out
    of them, computed in one piece so that a target can put a kernel of its
    own in its place (`attn-cpu-decode`: vectors along D, K and V streamed
    once). `attn-tile-online-softmax` makes one where a query block is a
    decode group (its `decode-rows`), inside its `scf.forall`; the forall's
    writes of the results, split-K's merge and the normalization stay the
    tiling's.

    - `query` `[B, Hq, Lq, D]`, `key` `[B, Hkv, Lk, D]`, `value`
      `[B, Hkv, Lk, Dv]` (f32, f16 or bf16; the operands of the `attn.sdpa`
      being tiled); `D` and `Dv` static and positive.
    - `batch`, `head`, `kv_head`, `q_start`: where the group is. Row `r`
      (of `rows`) is query `q_start + r` of query head `head`; with
      `rows_per_head` (the group spans the query heads that share a
      key/value head, with grouped-query attention) it is query
      `r mod rows_per_head` of head `head + r floordiv rows_per_head`
      (`rows_per_head` is then `Lq`, and `q_start` 0). Every row reads K
      and V at `(batch, kv_head)`.
    - `key_begin`, `key_end`: the keys the rows see (the same for every
      row: the tiling makes this op only where the causal or window band is
      one key range for the whole group); `key_end <= key_begin` is no key.
    - `score_scale`: the factor of the dot products, in base-2 units (the
      op's scale times `log2(e)`): score `s = score_scale * q . k`.
    - Results, in base-2 units: `m` `[rows]`, a reference max of each row
      (a score seen, at most a few units below the row's true max; `-inf`
      without keys), `l` `[rows]`, the sum of `exp2(s - m)` over the keys,
      and `acc` `[Dv, rows]`, the sum of `exp2(s - m) * v`: the tiling's
      running state after its last key block (lse = `m + log2(l)`).

    Example (4 query heads of one key/value head, Lq = 1):

    ```mlir
    %m, %l, %acc = attn.decode_keys %q, %k, %v
        at (%b, %h, %hkv, %c0) keys (%begin to %end)
        {rows = 4 : i64, rows_per_head = 1 : i64, score_scale = 0.255 : f32}
        : tensor<1x8x1x32xbf16>, tensor<1x2x100x32xbf16>,
          tensor<1x2x100x32xbf16>
        -> tensor<4xf32>, tensor<4xf32>, tensor<32x4xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Index:$batch,
    Index:$head,
    Index:$kv_head,
    Index:$q_start,
    Index:$key_begin,
    Index:$key_end,
    ConfinedAttr<I64Attr, [IntPositive]>:$rows,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$rows_per_head,
    F32Attr:$score_scale
  );
  let results = (outs
    RankedTensorOf<[F32]>:$m,
    RankedTensorOf<[F32]>:$l,
    RankedTensorOf<[F32]>:$acc
  );

  let assemblyFormat = [{
    $query `,` $key `,` $value
    `at` ` ` `(` $batch `,` $head `,` $kv_head `,` $q_start `)`
    `keys` ` ` `(` $key_begin `to` $key_end `)`
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    `->` type($m) `,` type($l) `,` type($acc)
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    RankedTensorType getQueryType() { return getQuery().getType(); }
    RankedTensorType getKeyType() { return getKey().getType(); }
    RankedTensorType getValueType() { return getValue().getType(); }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD
