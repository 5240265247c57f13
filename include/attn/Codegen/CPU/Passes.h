//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_CPU_PASSES_H
#define ATTN_CODEGEN_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "attn/Codegen/CPU/Passes.h.inc"

/// True for the kinds attn-omp-schedule takes (static, dynamic, guided), so
/// that the tools refuse another in one line before any pass runs.
bool isOmpScheduleKind(llvm::StringRef kind);

} // namespace mlir::attn

#endif // ATTN_CODEGEN_CPU_PASSES_H
