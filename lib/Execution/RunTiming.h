//===- RunTiming.h - the timing step of runAttn() (private) -----*- C++ -*-===//
//
// Part of the attn project.
//
// The compiled lowerings runAttn() (Engine.cpp) runs, and its --bench step:
// the timed calls of both lowerings, with --peak paired with the probes
// (RunPeaks.h), with --huge-pages on copies of the large tensors on huge
// pages (HugePages.h). Private to lib/Execution.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_RUNTIMING_H
#define ATTN_LIB_EXECUTION_RUNTIMING_H

#include "Checks.h"

#include "attn/Execution/CudaRun.h"
#include "attn/Execution/Engine.h"
#include "attn/Execution/Jit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mlir::attn::exec::detail {

/// One compiled lowering: JIT-compiled for the CPU, or a cuda library.
struct Kernel {
  std::unique_ptr<JitKernel> jit;
  std::unique_ptr<CudaKernel> cuda;
  llvm::Error run(const std::vector<HostTensor *> &inputs,
                  const std::vector<HostTensor *> &outputs) {
    return jit ? jit->run(inputs, outputs) : cuda->run(inputs, outputs);
  }
  /// `between` (CPU only) runs before each timed run and after the last.
  /// `data` (CPU only), as JitKernel::run's.
  llvm::Expected<Timing>
  time(const std::vector<HostTensor *> &inputs,
       const std::vector<HostTensor *> &outputs, int runs,
       llvm::function_ref<llvm::Error()> between = nullptr,
       llvm::ArrayRef<void *> data = {}) {
    return jit ? benchmark(*jit, inputs, outputs, runs, between, data)
               : cuda->benchmark(inputs, outputs, runs);
  }
};

/// A pointer to each of `tensors`.
inline std::vector<HostTensor *> pointersTo(std::vector<HostTensor> &tensors) {
  std::vector<HostTensor *> ptrs;
  for (HostTensor &t : tensors)
    ptrs.push_back(&t);
  return ptrs;
}

/// runAttn()'s --bench step: options.benchRuns timed calls of `fused` (and
/// of `naive` where it ran) on `inputs` into `fusedOut` (`naiveOut`); with
/// --peak the run's peaks first (measureRunPeaks), the read probe on a
/// memory-bound run on one thread, and every fused call paired with probe
/// bursts; with --huge-pages the calls on copies of the large tensors.
/// Fills the report's timings, paired shares and pages fields.
llvm::Error timeKernels(MLIRContext &context, const RunOptions &options,
                        Kernel &fused, Kernel *naive,
                        std::vector<HostTensor> &inputs, Results &fusedOut,
                        Results &naiveOut, RunReport &report);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_RUNTIMING_H
