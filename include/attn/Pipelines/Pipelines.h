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

#include "attn/Codegen/CPU/CpuFeatures.h"
#include "attn/Codegen/CPU/Passes.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Tuning/Tuning.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/Support/Error.h"

namespace mlir {
class OpPassManager;
namespace attn {

/// Lowers the bufferized, loop-level module (memref, scf, arith, math,
/// vector, omp) to the LLVM dialect. Shared by the CPU pipelines.
void buildLowerToLLVMPipeline(OpPassManager &pm);

/// `attn-lower-naive-cpu`: convert-attn-to-linalg, one-shot bufferization,
/// loops, LLVM. The reference (oracle) lowering for the CPU.
void buildNaiveCpuPipeline(OpPassManager &pm);

/// Options of the fused CPU pipeline: Tuning.td's knobs of attn-lower-cpu,
/// with their defaults (per kernel path: tuning::CpuPathDefaults, taken where
/// an option is not given) in their help.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
#define ATTN_TUNING_CPU_PIPELINE_OPTIONS
#include "attn/Tuning/Knobs.h.inc"
};

/// The attn-cpu-microkernels options of the pipeline: those of its
/// `kernels` path (resolved against this machine's CPU for auto;
/// tuning::CpuPathDefaults), with the options given explicitly.
AttnCpuMicrokernelsOptions
microkernelOptionsFor(const CpuPipelineOptions &options);

/// narrow-block-q as attn-lower-cpu applies it: as given; else 0 where
/// block-q is given (an explicit block-q is taken as asked for); else the
/// default of its `kernels` path (resolved for this host; Tuning.td: 0 on
/// avx2, block-q's rows for every op, else 128).
int64_t narrowBlockQFor(const CpuPipelineOptions &options);

/// decode-rows as attn-lower-cpu applies it: 0 without microkernels or with
/// a vector width that is not a power of two (the decode kernel's vectors
/// run along D); as given; else the default of its `kernels` path
/// (resolved for this host) at the kernels' vector-width (Tuning.td: 7 on
/// avx2 at its 8 lanes, 8 on the other paths at 16, else 16).
int64_t decodeRowsFor(const CpuPipelineOptions &options);

/// wide-block-kv as attn-lower-cpu applies it: 0 without microkernels,
/// where block-kv is given or narrow blocks are off (narrowBlockQFor is 0);
/// else the default of its `kernels` path (resolved for this host) at the
/// kernels' vector-width (Tuning.td: 128 on amx, else 0).
int64_t wideBlockKVFor(const CpuPipelineOptions &options);

/// Why attn-lower-cpu with `options` refuses an attn.sdpa_paged of
/// `module` (it reads paged caches through the decode kernel only: every
/// query block must be one decode group, attn-tile-online-softmax's
/// verdict); empty where it lowers them all.
std::string whyNoFusedPagedLowering(ModuleOp module,
                                    const CpuPipelineOptions &options);

/// `attn-lower-cpu`: attn-tile-online-softmax, attn-cpu-decode,
/// bufferization, loops, OpenMP, LLVM. The fused lowering for the CPU.
void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// The CUDA toolkit CMake found (ATTN_CUDA_TOOLKIT_DIR), or "" if none.
llvm::StringRef getDefaultCudaToolkitDir();

/// The PTX features used for `chip` when the options give none (Tuning.td's
/// GpuChip records), or "" for a chip the pipelines do not take.
llvm::StringRef getDefaultPtxFeatures(llvm::StringRef chip);

/// Options of the GPU pipelines (NVIDIA, through NVVM and PTX). The chip and
/// format are checked by verifyGpuPipelineOptions: the registered pipelines
/// reject bad values with its message; callers of the build functions check
/// first.
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  // Tuning.td's knobs of the GPU pipelines: chip, features, and the fused
  // lowering's (convert-attn-to-gpu; the naive pipeline does not read them).
#define ATTN_TUNING_GPU_PIPELINE_OPTIONS
#include "attn/Tuning/Knobs.h.inc"
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit (bin/ptxas, nvvm/libdevice) for "
                     "gpu-module-to-binary; default: the one CMake found"),
      llvm::cl::init(getDefaultCudaToolkitDir().str())};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What each gpu.binary holds: fatbin, bin (cubin) or isa "
                     "(PTX text)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("LLVM optimization level of the device code (0-3)"),
      llvm::cl::init(3)};
};

/// Fails, naming the option and the values accepted, for a chip, format or
/// opt-level the GPU pipelines do not support.
llvm::Error verifyGpuPipelineOptions(const GpuPipelineOptions &options);

/// The device half of every GPU pipeline: from a bufferized module whose
/// device code is in `gpu.launch` ops (buffers in device memory) to one
/// LLVM-dialect module holding a `gpu.binary` per kernel and host code that
/// launches them through the `mgpu*` runtime functions (stream, memory,
/// launch). Memref kernel arguments are passed as one bare pointer each. The
/// context needs the GPU dialects' LLVM IR translations
/// (registerAllGPUToLLVMIRTranslations; registerAttnDialects adds them).
void buildGpuLoweringTail(OpPassManager &pm, const GpuPipelineOptions &options);

/// `attn-lower-naive-gpu`: convert-attn-to-linalg, one-shot bufferization,
/// buffers in device memory, linalg -> parallel loops -> gpu.launch (every
/// linalg op a kernel; reductions are sequential loops in a thread), then
/// buildGpuLoweringTail. The reference (oracle) lowering for the GPU.
/// The function's memref arguments are device pointers; the results it
/// returns are device buffers it allocated (mgpuMemAlloc), which the caller
/// frees. Temporaries are allocated and freed (mgpuMemFree) on the stream of
/// the launches, before that stream is synchronized: the runtime's
/// allocation functions must be stream-ordered or synchronizing.
void buildNaiveGpuPipeline(OpPassManager &pm,
                           const GpuPipelineOptions &options);

/// `attn-lower-gpu`: convert-attn-to-gpu (the fused FlashAttention-2 kernel
/// for `chip`, `block-q`, `block-kv`), one-shot bufferization, buffers in
/// device memory, then buildGpuLoweringTail. The function's memref arguments
/// are device pointers; its results are device buffers it allocated, which
/// the caller frees (as with buildNaiveGpuPipeline).
void buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// Registers the named pipelines above with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
