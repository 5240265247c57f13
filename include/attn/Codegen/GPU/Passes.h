//===- Passes.h - GPU code generation passes --------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_PASSES_H
#define ATTN_CODEGEN_GPU_PASSES_H

#include "attn/Codegen/GPU/AttnToGpu.h"

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "attn/Codegen/GPU/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CODEGEN_GPU_PASSES_H
