//===- AttnInterfaces.td - attn dialect op interfaces ------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
#define ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_AttentionOpInterface : OpInterface<"AttentionOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    What `attn.sdpa`, `attn.sdpa_grad`, `attn.sdpa_varlen` and
    `attn.sdpa_paged` share: the query, key and value operands, their dims
    (query heads at dim 1 and the head dim last in every layout:
    `[B, H, L, D]`, varlen's packed `[total, H, D]`, the paged caches'
    `[pages, page_size, Hkv, D]` or `[pages, Hkv, page_size, D]`, whose heads
    dim `getKeyValueHeadsDim` says), the scale, the causal alignment and the
    sliding window. The lowerings read an op's attention geometry through it
    (`getVisibleBand` in `attn/Dialect/Attn/Utils/Geometry.h`), whichever of
    the ops it is.
  }];

  let methods = [
    InterfaceMethod<"The query operand.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getQuery">,
    InterfaceMethod<"The key operand.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getKey">,
    InterfaceMethod<"The value operand.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getValue">,
    InterfaceMethod<[{
        The mask operand (`[B, Hq, Lq, Lk]` with broadcast dims), or null:
        an op without one (`attn.sdpa_varlen`) has none.
      }],
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getMask", (ins), [{}],
      [{ return {}; }]>,
    InterfaceMethod<[{
        The dim of query, key and value that runs along the sequence: 2 for
        `[B, H, L, D]`; 0, the packed rows of every sequence, for
        `attn.sdpa_varlen`'s `[total, H, D]`.
      }],
      "unsigned", "getSequenceDim", (ins), [{}], [{ return 2; }]>,
    InterfaceMethod<[{
        The dim of key and value that holds the key/value heads: 1 for
        `[B, H, L, D]` and `[total, H, D]`; `attn.sdpa_paged`'s cache
        layout says (2 for NHD `[pages, page_size, Hkv, D]`).
      }],
      "unsigned", "getKeyValueHeadsDim", (ins), [{}], [{ return 1; }]>,
    InterfaceMethod<"The `scale` attribute, or null (then 1/sqrt(D)).",
      "::mlir::FloatAttr", "getScaleAttr">,
    InterfaceMethod<"The `causal` attribute, or null.",
      "::mlir::attn::CausalKindAttr", "getCausalAttr">,
    InterfaceMethod<[{
        The `window` attribute's `[left, right]` (-1: unbounded), or none:
        an op without one (`attn.sdpa_grad`) has none.
      }],
      "::std::optional<::llvm::ArrayRef<int64_t>>", "getWindow", (ins), [{}],
      [{ return std::nullopt; }]>,
  ];

  let extraSharedClassDeclaration = [{
    ::mlir::RankedTensorType getQueryType() {
      return $_op.getQuery().getType();
    }
    ::mlir::RankedTensorType getKeyType() { return $_op.getKey().getType(); }
    ::mlir::RankedTensorType getValueType() {
      return $_op.getValue().getType();
    }
    /// Hq and Hkv (query dim 1, key's heads dim: static, as the verifiers
    /// require).
    int64_t getNumQueryHeads() { return getQueryType().getDimSize(1); }
    int64_t getNumKeyValueHeads() {
      return getKeyType().getDimSize($_op.getKeyValueHeadsDim());
    }
    /// Number of query heads sharing one key/value head (Hq / Hkv).
    int64_t getGroupSize() {
      return getNumQueryHeads() / getNumKeyValueHeads();
    }
    /// D and Dv: the last dim of query and value (static).
    int64_t getHeadDim() {
      return getQueryType().getDimSize(getQueryType().getRank() - 1);
    }
    int64_t getValueHeadDim() {
      return getValueType().getDimSize(getValueType().getRank() - 1);
    }
    /// The default scale for this op's head dim, 1/sqrt(D), as f32.
    float getDefaultScale() {
      return static_cast<float>(
          1.0 / std::sqrt(static_cast<double>(getHeadDim())));
    }
    /// The scale actually applied: the attribute, or 1/sqrt(D).
    float getEffectiveScale() {
      if (::mlir::FloatAttr scale = $_op.getScaleAttr())
        return scale.getValue().convertToFloat();
      return getDefaultScale();
    }
    /// The causal alignment, if any.
    ::std::optional<::mlir::attn::CausalKind> getCausalKind() {
      if (::mlir::attn::CausalKindAttr attr = $_op.getCausalAttr())
        return attr.getValue();
      return std::nullopt;
    }
    /// True if the mask is i1 (select), false if it is additive or absent.
    bool hasBoolMask() {
      ::mlir::Value mask = $_op.getMask();
      return mask && ::llvm::cast<::mlir::RankedTensorType>(mask.getType())
                         .getElementType()
                         .isInteger(1);
    }
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
