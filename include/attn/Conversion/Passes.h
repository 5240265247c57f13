//===- Passes.h - the naive (oracle) lowerings ------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn/Conversion/AttnGradToLinalg.h"
#include "attn/Conversion/AttnToLinalg.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
