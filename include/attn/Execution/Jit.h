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

#include "attn/Spec/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

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
  /// LLVM dialect) and JIT-compiles the result. MLIR diagnostics of a failed
  /// lowering also go to the context's handler.
  static llvm::Expected<std::unique_ptr<JitKernel>>
  compile(ModuleOp module, StringRef entry,
          const std::function<void(OpPassManager &)> &buildPipeline);

  /// Runs the kernel once. Fails on a shape or dtype mismatch against the
  /// function's signature or a JIT failure. With `data` (one pointer per
  /// input, then one per output), the kernel reads and writes there instead
  /// of in the tensors' own bytes (attn-run --guard-pages, --huge-pages).
  llvm::Error run(const std::vector<HostTensor *> &inputs,
                  const std::vector<HostTensor *> &outputs,
                  ArrayRef<void *> data = {});

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
llvm::Expected<std::unique_ptr<ExecutionEngine>>
createHostEngine(ModuleOp llvmModule);

/// The median and the best of `runs` timed runs of `kernel` after one
/// warm-up run, and each run's time in the order they ran.
struct Timing {
  double medianMs = 0;
  double bestMs = 0;
  int runs = 0;
  std::vector<double> runMs;
};

/// The median and best of the run times `ms` (milliseconds, in the order
/// they ran), with their count.
Timing medianTiming(std::vector<double> ms);

/// Runs `kernel` once to warm up, then `runs` times, and returns the median
/// time. Every run is checked: the first failure is returned. `between`,
/// when given, is called before each timed run and once after the last
/// (outside the timed span): a probe paired with each run (RunReport's
/// paired peak share); its error ends the benchmark. With `data`, as
/// JitKernel::run's (attn-run --huge-pages).
llvm::Expected<Timing>
benchmark(JitKernel &kernel, const std::vector<HostTensor *> &inputs,
          const std::vector<HostTensor *> &outputs, int runs,
          llvm::function_ref<llvm::Error()> between = nullptr,
          ArrayRef<void *> data = {});

/// Sets the number of OpenMP threads the JIT-compiled code uses.
void setJitThreads(int threads);

/// The compiled code allocates through _mlir_memref_to_llvm_alloc (the
/// pipelines' use-generic-functions), which the JIT host defines: when the
/// allocation fails it writes one line,
///   <prefix>out of memory in the compiled code (N bytes)
/// and calls _exit(status) (the kernel may be on an OpenMP worker thread and
/// cannot be unwound). Defaults: "error: " and 2. The environment variable
/// ATTN_FAIL_ALLOC_ABOVE=N (tests only) fails every allocation above N bytes.
void setJitAllocFailure(const char *prefix, int status);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_JIT_H
