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

/// Options of the fused CPU pipeline. The defaults of the options it hands
/// to a pass are that pass's own (its generated Attn...Options struct), so
/// that each default is written once, in Passes.td.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> blockQ{
      *this, "block-q",
      llvm::cl::desc("Query rows per block of the online-softmax tiling"),
      llvm::cl::init(AttnTileOnlineSoftmaxOptions{}.blockQ)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("Keys per block of the online-softmax loop"),
      llvm::cl::init(AttnTileOnlineSoftmaxOptions{}.blockKV)};
  PassOptions::Option<int64_t> kvSplits{
      *this, "kv-splits",
      llvm::cl::desc("Split-K chunks of the keys (0: auto, 1: never)"),
      llvm::cl::init(AttnTileOnlineSoftmaxOptions{}.kvSplits)};
  PassOptions::Option<int64_t> decodeRows{
      *this, "decode-rows",
      llvm::cl::desc("Query blocks of at most this many rows (Lq, times the "
                     "group size with grouped-query attention) use the decode "
                     "kernel (vectors along D) when the op allows it; 0: "
                     "never. Only with microkernels. Default 8 on the 16-lane "
                     "kernels, 7 on the avx2 kernels' 8 lanes, else 16"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> decodePrefetchLocality{
      *this, "decode-prefetch-locality",
      llvm::cl::desc("The decode kernel's prefetches of the K and V rows "
                     "ahead: 3 into L1 (prefetcht0), 2 into L2 (prefetcht1), "
                     "1 prefetcht2, 0 prefetchnta"),
      llvm::cl::init(AttnCpuDecodeOptions{}.decodePrefetchLocality)};
  PassOptions::Option<std::string> decodePrefetch{
      *this, "decode-prefetch",
      llvm::cl::desc("Which decode kernels prefetch their K and V rows "
                     "ahead: auto (all but the f32 ones whose P.V takes one "
                     "group of accumulators), all or none. Default auto on "
                     "the avx512 and avx512-bf16 kernels, all on the amx and "
                     "avx2 kernels"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> decodePageTouch{
      *this, "decode-page-touch",
      llvm::cl::desc("The decode kernel with 16-bit K and V: one element of "
                     "K and of V loaded per block this many bytes past the "
                     "rows its prefetches reach (page walks by a load on "
                     "4 KiB pages); 0: none"),
      llvm::cl::init(AttnCpuDecodeOptions{}.decodePageTouch)};
  PassOptions::Option<int64_t> narrowBlockQ{
      *this, "narrow-block-q",
      llvm::cl::desc("Query rows per block for ops whose D and Dv are at most "
                     "64, without a causal or window band; 0: block-q. "
                     "Default 128 (0 with the avx2 kernels), or 0 where "
                     "block-q is given"),
      llvm::cl::init(128)};
  PassOptions::Option<bool> microkernels{
      *this, "microkernels",
      llvm::cl::desc("Replace the tile ops with vector microkernels "
                     "(attn-cpu-microkernels)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("f32 lanes per vector in the microkernels"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.vectorWidth)};
  PassOptions::Option<int64_t> regBlock{
      *this, "reg-block",
      llvm::cl::desc("Keys or value columns per register block"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.regBlock)};
  PassOptions::Option<int64_t> rowVectors{
      *this, "row-vectors",
      llvm::cl::desc("Row vectors per register block in the microkernels"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.rowVectors)};
  PassOptions::Option<int64_t> prefetchSpread{
      *this, "prefetch-spread",
      llvm::cl::desc("Most reduction steps per prefetch in the f32 products "
                     "(attn-cpu-microkernels' prefetch-spread; default 8 on "
                     "the avx2 kernels, 1 on the others)"),
      llvm::cl::init(AttnCpuMicrokernelsOptions{}.prefetchSpread)};
  PassOptions::Option<bool> amxFp16{
      *this, "amx-fp16",
      llvm::cl::desc("On the amx kernels: f16 products on AMX-FP16 tiles "
                     "(attn-cpu-microkernels' amx-fp16) rather than as "
                     "split-f16's bf16 parts; default: whether the target "
                     "has amx-fp16 (the JIT: the host; attn-compile: --cpu)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> emulateAmx{
      *this, "emulate-amx",
      llvm::cl::desc("On the amx kernels: their tile ops as vector code "
                     "(attn-emulate-amx), so that they run and are checked "
                     "on a CPU without AMX (AVX-512 with AVX512-BF16 is "
                     "enough); slow, for tests"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> blendStores{
      *this, "blend-stores",
      llvm::cl::desc("attn-cpu-microkernels' blend-stores (masked tiles "
                     "stored through an empty inline asm, never as masked "
                     "stores); default: on for the avx2 kernels at vector "
                     "width 8 on an x86 host with AVX, else off"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> gradBlockQ{
      *this, "grad-block-q",
      llvm::cl::desc("Query rows per tile of the fused backward "
                     "(attn-cpu-sdpa-grad)"),
      llvm::cl::init(AttnCpuSdpaGradOptions{}.blockQ)};
  PassOptions::Option<int64_t> gradBlockKV{
      *this, "grad-block-kv",
      llvm::cl::desc("Keys per block of the fused backward "
                     "(attn-cpu-sdpa-grad)"),
      llvm::cl::init(AttnCpuSdpaGradOptions{}.blockKV)};
  PassOptions::Option<bool> openmp{
      *this, "openmp", llvm::cl::desc("Run the query blocks on OpenMP threads"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> ompSchedule{
      *this, "omp-schedule",
      llvm::cl::desc("With openmp: the query-block loops' schedule "
                     "(attn-omp-schedule): static, dynamic or guided"),
      llvm::cl::init(AttnOmpScheduleOptions{}.kind)};
  PassOptions::Option<CpuKernels> kernels{
      *this, "kernels",
      llvm::cl::desc(
          "Which CPU kernels (README, Passes and pipelines): auto picks the "
          "best this machine has; vector-width, reg-block and "
          "row-vectors, when given, override the kernels' own"),
      llvm::cl::init(CpuKernels::Auto),
      llvm::cl::values(
          clEnumValN(CpuKernels::Auto, "auto",
                     "amx, avx512-bf16, avx512 or avx2, by the host's "
                     "features"),
          clEnumValN(CpuKernels::Amx, "amx",
                     "avx512-bf16, with the bf16 products on AMX tiles"),
          clEnumValN(CpuKernels::Avx512Bf16, "avx512-bf16",
                     "AVX-512, bf16 products on vdpbf16ps"),
          clEnumValN(CpuKernels::Avx512, "avx512",
                     "AVX-512, bf16/f16 widened to f32"),
          clEnumValN(CpuKernels::Avx2, "avx2",
                     "AVX2 + FMA, 8 lanes, no AVX-512 instructions"))};
};

/// The attn-cpu-microkernels options of the pipeline: those of its
/// `kernels` path (resolved against this machine's CPU for auto), with the
/// vector-width, reg-block and row-vectors the options give explicitly.
AttnCpuMicrokernelsOptions
microkernelOptionsFor(const CpuPipelineOptions &options);

/// narrow-block-q as attn-lower-cpu applies it: 0 where block-q is given and
/// narrow-block-q is not (an explicit block-q is taken as asked for); where
/// neither is given, 0 on the avx2 kernels path (`kernels`, resolved for
/// this host: block-q's rows for every op) and the option's 128 on the
/// others.
int64_t narrowBlockQFor(const CpuPipelineOptions &options);

/// decode-rows as attn-lower-cpu applies it: 0 without microkernels or with
/// a vector width that is not a power of two (the decode kernel's vectors
/// run along D); as given; else 7 on the avx2
/// kernels path at its 8 lanes (`kernels`, resolved for this host: the
/// decode kernel only for blocks whose rows do not fill one vector), 8 on
/// the other paths at 16 lanes (from 10 rows on their tile ops are faster)
/// and the option's 16 otherwise.
int64_t decodeRowsFor(const CpuPipelineOptions &options);

/// wide-block-kv as attn-lower-cpu applies it: 128 on the amx kernels path
/// (`kernels`, resolved for this host) with microkernels, unless block-kv is
/// given or narrow blocks are off (narrowBlockQFor is 0); else 0.
int64_t wideBlockKVFor(const CpuPipelineOptions &options);

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
