//===- AttnInterfaces.h - attn dialect op interfaces ------------*- C++ -*-===//
//
// Part of the attn project.
//
// AttentionOpInterface: what attn.sdpa, attn.sdpa_grad and attn.sdpa_varlen
// share (operands, dims, scale, causal alignment, window).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H
#define ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H

#include "attn/Dialect/Attn/IR/AttnAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include <cmath>
#include <optional>

#include "attn/Dialect/Attn/IR/AttnInterfaces.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_H
