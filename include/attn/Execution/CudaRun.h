//===- CudaRun.h - run an attn entry on a CUDA GPU --------------*- C++ -*-===//
//
// Part of the attn project.
//
// attn-run --target cuda: the entry is compiled ahead of time (lib/Compile,
// the cuda target) into a shared library in a temporary directory, loaded
// with dlopen, and run on device buffers that the CUDA runtime
// (lib/Runtime/CUDA, the dlopen'ed driver API) allocates and fills from the
// HostTensors. Nothing links a CUDA library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_CUDARUN_H
#define ATTN_EXECUTION_CUDARUN_H

#include "attn/Execution/Jit.h"
#include "attn/Spec/HostTensor.h"
#include "attn/Tuning/Tuning.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// Loads the CUDA driver and returns device 0's chip ("sm_90", from its
/// compute capability). Fails with one line ("no CUDA driver (libcuda.so.1
/// not found)", "cuInit failed: ...") where there is no usable GPU, or where
/// attn was built without the CUDA runtime (no cuda.h).
llvm::Expected<std::string> probeCudaDevice();

/// One lowering of an entry compiled for the GPU and loaded.
class CudaKernel {
public:
  ~CudaKernel();
  /// Compiles function `entry` of `module` (over tensors) with the fused
  /// (attn-lower-gpu, with the knobs `fusedKnobs`) or naive
  /// (attn-lower-naive-gpu) pipeline for `chip` into a library in a
  /// temporary directory and loads it.
  static llvm::Expected<std::unique_ptr<CudaKernel>>
  compile(ModuleOp module, llvm::StringRef entry, bool naive,
          llvm::StringRef chip, const tuning::KnobValues &fusedKnobs);
  /// Copies `inputs` to the device, runs the entry into device buffers,
  /// waits and copies the results back into `outputs` (whose shapes and
  /// dtypes the caller sets).
  llvm::Error run(const std::vector<HostTensor *> &inputs,
                  const std::vector<HostTensor *> &outputs);
  /// One warm-up run, then `runs` timed ones (CUDA events recorded before
  /// and after each run on the stream it launches on; inputs copied once);
  /// the median. The results
  /// of the last run are copied into `outputs`.
  llvm::Expected<Timing> benchmark(const std::vector<HostTensor *> &inputs,
                                   const std::vector<HostTensor *> &outputs,
                                   int runs);

private:
  CudaKernel() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_CUDARUN_H
