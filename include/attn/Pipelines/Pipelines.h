//===- Pipelines.h - named attn pass pipelines ------------------*- C++ -*-===//
//
// Part of the attn project.
//
// Every tool builds its pipelines from these functions, so that attn-opt,
// attn-run and the tests lower the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace attn {

/// Lowers the bufferized, loop-level module (memref, scf, arith, math,
/// vector, omp) to the LLVM dialect. Shared by the CPU pipelines.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// `attn-lower-naive-cpu`: convert-attn-to-linalg, one-shot bufferization,
/// loops, LLVM. The reference (oracle) lowering for the CPU.
void buildNaiveCpuPipeline(OpPassManager &pm);

/// Registers the named pipelines above with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
