//===- AttnPagedOps.h - attn.sdpa_paged ------------------------*- C++
//-*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_H

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnPagedOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNPAGEDOPS_H
