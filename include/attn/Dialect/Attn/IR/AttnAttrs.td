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

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
