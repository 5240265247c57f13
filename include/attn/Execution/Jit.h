//===- Jit.h - compile and run an attn entry point with the JIT -*- C++ -*-===//
//
// Part of the attn project.
//
// Wraps a function that takes and returns tensors into a destination-passing
// entry point (inputs and outputs are caller-owned buffers), lowers it with
// one of the CPU pipelines, JIT-compiles it for the host CPU and runs it on
// HostTensors.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_JIT_H
#define ATTN_EXECUTION_JIT_H

#include "attn/Execution/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class OpPassManager;
namespace attn::exec {

/// A JIT-compiled entry point: run(inputs, outputs) writes the function's
/// results into `outputs` (whose shapes and dtypes the caller sets).
class JitKernel {
public:
  ~JitKernel();

  /// Clones `module`, wraps function `entry` into a destination-passing
  /// entry point, runs `buildPipeline` on it (a pipeline that ends in the
  /// LLVM dialect) and JIT-compiles the result. On failure returns null and
  /// sets `error` (MLIR diagnostics are also reported to the context's
  /// handler).
  static std::unique_ptr<JitKernel>
  compile(ModuleOp module, StringRef entry,
          const std::function<void(OpPassManager &)> &buildPipeline,
          std::string &error);

  /// Runs the kernel once. Returns "" or an error message (shape or dtype
  /// mismatch against the function's signature, a JIT failure).
  std::string run(const std::vector<HostTensor *> &inputs,
                  const std::vector<HostTensor *> &outputs);

  /// The LLVM-dialect module the kernel was compiled from (for --dump-ir).
  std::string llvmDialectText() const { return loweredText; }

private:
  JitKernel() = default;

  std::unique_ptr<ExecutionEngine> engine;
  std::vector<RankedTensorType> argTypes, resultTypes;
  std::string loweredText;
};

/// JIT-compiles a module already in the LLVM dialect for the host CPU (its
/// features, -O3), with the runtime libraries generated code may call.
/// Returns null and sets `error` on failure.
std::unique_ptr<ExecutionEngine> createHostEngine(ModuleOp llvmModule,
                                                  std::string &error);

/// Sets the number of OpenMP threads the JIT-compiled code uses.
void setJitThreads(int threads);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_JIT_H
