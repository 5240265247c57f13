//===- AttnDialect.td - The attn dialect -------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Scaled dot-product attention as one op";
  let description = [{
    The `attn` dialect holds `attn.sdpa`, scaled dot-product attention with
    grouped-query heads, boolean or additive masks, causal structure and an
    optional log-sum-exp result, and the attributes that describe it. Passes
    lower it either naively (materializing the score table, as the formula
    reads) or fused into online-softmax tile loops.
  }];
  let useDefaultAttributePrinterParser = 1;
  // `attn.tile` on any op must hold a TileRoleAttr, `attn.tiling` a plan
  // (TilingPlan).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The discardable attribute that names a tile op's role
    /// (a TileRoleAttr), set by attn-tile-online-softmax.
    static constexpr ::llvm::StringLiteral getTileRoleAttrName() {
      return ::llvm::StringLiteral("attn.tile");
    }
    /// The discardable attribute of an attn.sdpa that plans its tiling for
    /// a target (a TilingPlan as a dictionary), read by
    /// attn-tile-online-softmax.
    static constexpr ::llvm::StringLiteral getTilingAttrName() {
      return ::llvm::StringLiteral("attn.tiling");
    }
  }];
  let hasCanonicalizer = 0;
  let dependentDialects = ["tensor::TensorDialect"];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
