//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// The alignment of the causal diagonal. `window` (a later attribute) reuses
// the same alignment, so it is its own enum rather than a flag.
def Attn_CausalKind : I32EnumAttr<"CausalKind",
    "alignment of the causal diagonal", [
      I32EnumAttrCase<"TopLeft", 0, "top_left">,
      I32EnumAttrCase<"BottomRight", 1, "bottom_right">
    ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_CausalAttr : EnumAttr<Attn_Dialect, Attn_CausalKind, "causal"> {
  let summary = "causal alignment: top_left (j <= i) or bottom_right (j <= i + Lk - Lq)";
  let assemblyFormat = "`<` $value `>`";
}

// The layout of attn.sdpa_paged's key/value caches: a page's tokens then
// heads (vLLM's and FlashInfer's NHD) or heads then tokens (FlashInfer's
// HND, one head's page rows contiguous).
def Attn_KvLayout : I32EnumAttr<"KvLayout",
    "layout of a paged key/value cache", [
      I32EnumAttrCase<"NHD", 0, "nhd">,  // [num_pages, page_size, Hkv, D]
      I32EnumAttrCase<"HND", 1, "hnd">   // [num_pages, Hkv, page_size, D]
    ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_KvLayoutAttr : EnumAttr<Attn_Dialect, Attn_KvLayout, "kv_layout"> {
  let summary = "paged cache layout: nhd ([pages, page_size, Hkv, D]) or hnd "
                "([pages, Hkv, page_size, D])";
  let assemblyFormat = "`<` $value `>`";
}

// The role of a tile op in the online-softmax loops. attn-tile-online-softmax
// tags every tile op (and every fill that starts one of its buffers) with its
// role, so that a target pass can recognize each op by a verified attribute
// and swap in a kernel for it without matching the op's body.
def Attn_TileRole : I32EnumAttr<"TileRole",
    "role of a tile op in the online-softmax loops", [
      // Fills that start a buffer.
      I32EnumAttrCase<"InitQuery", 0, "init_query">,     // [D, BQ] query tile (0)
      I32EnumAttrCase<"InitScores", 1, "init_scores">,   // [BK, BQ] scores (0)
      I32EnumAttrCase<"InitRowMax", 2, "init_row_max">,  // [BQ] block row max (-inf)
      I32EnumAttrCase<"InitMax", 3, "init_max">,         // [BQ] running max m (-inf)
      I32EnumAttrCase<"InitSum", 4, "init_sum">,         // [BQ] running sum l (0)
      I32EnumAttrCase<"InitAcc", 5, "init_acc">,         // [Dv, BQ] accumulator (0)
      // The steps of one key block, in order.
      I32EnumAttrCase<"Scores", 6, "scores">,             // St += K . Qt
      I32EnumAttrCase<"ElementMask", 7, "element_mask">,  // causal / tail -inf
      I32EnumAttrCase<"RowMax", 8, "row_max">,            // r = max_j St
      I32EnumAttrCase<"MaxUpdate", 9, "max_update">,      // m, alpha
      I32EnumAttrCase<"Rescale", 10, "rescale">,          // l or acc *= alpha
      I32EnumAttrCase<"Probs", 11, "probs">,              // Pt = exp2(St - m)
      I32EnumAttrCase<"RowSum", 12, "row_sum">,           // l += sum_j Pt
      I32EnumAttrCase<"PV", 13, "pv">,                    // acct += V^T . Pt
      // Score modifiers (attention variants), right after the scores.
      I32EnumAttrCase<"Softcap", 14, "softcap">,          // St = c tanh(St / c)
      I32EnumAttrCase<"Alibi", 15, "alibi">,              // St -= slope |i - j|
      // The op's mask, after the score modifiers.
      I32EnumAttrCase<"UserMask", 16, "user_mask">,       // keep / -inf or + M
      // Once per query block: the query rows in, the output rows out.
      I32EnumAttrCase<"ScaleQuery", 17, "scale_query">,   // Qt = Q^T * scale
      I32EnumAttrCase<"Output", 18, "output">,            // O = (acct / l)^T
      // Once per call (transpose-values): V transposed for P.V.
      I32EnumAttrCase<"TransposeValues", 19, "transpose_values">, // Vt = V^T
      // Once per call (split-f16): f16 K as bf16 hi + lo.
      I32EnumAttrCase<"Bf16Keys", 20, "bf16_keys">,       // K = hi + lo
      // Once per call (pair-values): V in key pairs for bf16 dot products.
      I32EnumAttrCase<"PairValues", 21, "pair_values">    // Vp[t, 2e + p] = V[2t + p, e]
    ]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_TileRoleAttr : EnumAttr<Attn_Dialect, Attn_TileRole, "tile"> {
  let summary = "role of a tile op in the online-softmax loops, set by "
                "attn-tile-online-softmax as the discardable attribute "
                "`attn.tile`";
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
