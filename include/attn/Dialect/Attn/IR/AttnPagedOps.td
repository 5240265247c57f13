//===- AttnPagedOps.td - attn.sdpa_paged -------------------*- tablegen -*-===//
//
// Part of the attn project.
//
// attn.sdpa_paged: attention over a paged key/value cache (vLLM's block
// tables, FlashInfer's page tables), in its own file like AttnVarlenOps.td;
// attn.paged_view, the dense view of a cache that the fused CPU lowering
// reads in place.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "attn/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_SdpaPagedOp : Op<Attn_Dialect, "sdpa_paged",
                          [Pure, Attn_AttentionOpInterface]> {
  let summary = "attention over a paged key/value cache";
  let description = [{
    Serving's form: the keys and values of `B` sequences live in fixed-size
    pages of one cache, and a page table says which pages each sequence
    owns, in order. Sequence `b`'s key `t` (`0 <= t < kv_lens[b]`) is row
    `t % page_size` of page `page_table[b, t / page_size]`; its output rows
    are exactly `attn.sdpa` of its queries over those `kv_lens[b]` keys
    (bottom_right alignments at its own length: decode, speculative
    verification and chunked prefill, `Lq >= 1`).

    - `query` `[B, Hq, Lq, D]`, one element type with the caches (f32, f16
      or bf16).
    - `key_cache` `[num_pages, page_size, Hkv, D]` and `value_cache`
      `[num_pages, page_size, Hkv, Dv]` (`layout = #attn.kv_layout<nhd>`,
      the default) or `[num_pages, Hkv, page_size, D]`
      (`#attn.kv_layout<hnd>`); heads and head dims static,
      `Hq % Hkv == 0`.
    - `page_table` i32 `[B, max_pages]`, `kv_lens` i32 `[B]`. Lengths are
      clamped to `[0, max_pages * page_size]`; a page index outside
      `[0, num_pages)` is never read (its keys read as 0: undefined
      results, no out-of-bounds access).
    - result `out` `[B, Hq, Lq, Dv]`; optional `lse` `[B, Hq, Lq]` f32.
    - attributes `scale`, `causal`, `window`, `softcap` and the optional
      `alibi_slopes` operand (f32 `[Hq]` or `[B, Hq]`) as for `attn.sdpa`
      with `key_lengths = kv_lens`.

    ```mlir
    %o = attn.sdpa_paged %q, %kc, %vc, %table, %lens
        {causal = #attn.causal<bottom_right>}
        : tensor<4x32x1x128xbf16>, tensor<?x16x8x128xbf16>,
          tensor<?x16x8x128xbf16>, tensor<4x64xi32>, tensor<4xi32>
        -> tensor<4x32x1x128xbf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key_cache,
    AnyRankedTensor:$value_cache,
    AnyRankedTensor:$page_table,
    AnyRankedTensor:$kv_lens,
    Optional<AnyRankedTensor>:$alibi_slopes,
    OptionalAttr<Attn_KvLayoutAttr>:$layout,
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
    $query `,` $key_cache `,` $value_cache `,` $page_table `,` $kv_lens
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    attr-dict `:`
    type($query) `,` type($key_cache) `,` type($value_cache) `,`
    type($page_table) `,` type($kv_lens) `->` type($out) (`,` type($lse)^)?
  }];

  let hasVerifier = 1;

  // Operand types, dims, scale, causal, window: AttentionOpInterface's.
  let extraClassDeclaration = [{
    /// AttentionOpInterface's key and value: the caches.
    ::mlir::TypedValue<::mlir::RankedTensorType> getKey() {
      return getKeyCache();
    }
    ::mlir::TypedValue<::mlir::RankedTensorType> getValue() {
      return getValueCache();
    }
    /// The caches' layout (absent: NHD).
    ::mlir::attn::KvLayout getKvLayout() {
      if (::mlir::attn::KvLayoutAttr attr = getLayoutAttr())
        return attr.getValue();
      return ::mlir::attn::KvLayout::NHD;
    }
    /// The caches' heads dim (AttentionOpInterface's) and token dim.
    unsigned getKeyValueHeadsDim() {
      return getKvLayout() == ::mlir::attn::KvLayout::NHD ? 2 : 1;
    }
    unsigned getPageSlotDim() {
      return getKvLayout() == ::mlir::attn::KvLayout::NHD ? 1 : 2;
    }
  }];
}

def Attn_PagedViewOp : Op<Attn_Dialect, "paged_view", [Pure]> {
  let summary = "a paged cache seen as dense keys (or values) per sequence";
  let description = [{
    The keys (or values) of `B` sequences held in the pages of one cache,
    seen as the dense `[B, Hkv, max_pages * page_size, D]` tensor that
    `attn.sdpa` takes: element `(b, h, t, d)` is row `t mod page_size` of
    page `page_table[b, t floordiv page_size]` at head `h` (the cache's
    layout, NHD by default, as for `attn.sdpa_paged`). Nothing copies it:
    `attn-view-paged` makes one for each cache of an `attn.sdpa_paged` in
    the fused CPU pipeline, and the decode kernel (`attn-cpu-decode`) reads
    the cache in place through it, resolving the page of each key it reads
    (a page index outside `[0, num_pages)` is clamped into the cache: such
    keys have undefined values, never an out-of-bounds read). A view that a
    pass other than the decode kernel would read is an error
    (`attn-tile-online-softmax` refuses such ops).

    ```mlir
    %k = attn.paged_view %kc, %table
        : tensor<?x16x8x128xbf16>, tensor<4x64xi32> -> tensor<4x8x1024x128xbf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$cache,
    AnyRankedTensor:$page_table,
    OptionalAttr<Attn_KvLayoutAttr>:$layout
  );
  let results = (outs AnyRankedTensor:$view);

  let assemblyFormat = [{
    $cache `,` $page_table attr-dict `:` type($cache) `,` type($page_table)
    `->` type($view)
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// The cache's layout (absent: NHD).
    ::mlir::attn::KvLayout getKvLayout() {
      if (::mlir::attn::KvLayoutAttr attr = getLayoutAttr())
        return attr.getValue();
      return ::mlir::attn::KvLayout::NHD;
    }
    /// The cache's heads dim and token (page slot) dim.
    unsigned getHeadsDim() {
      return getKvLayout() == ::mlir::attn::KvLayout::NHD ? 2 : 1;
    }
    unsigned getPageSlotDim() {
      return getKvLayout() == ::mlir::attn::KvLayout::NHD ? 1 : 2;
    }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_TD
