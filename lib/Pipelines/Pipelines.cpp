//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
constexpr llvm::StringLiteral kGpuFormats[] = {"fatbin", "bin", "isa"};
/// Query rows per CTA of the naive GPU lowering (one warp).
constexpr int64_t kNaiveGpuRowsPerBlock = 32;
} // namespace

/// One-shot bufferization across function boundaries with identity layouts,
/// so that entry points take plain memrefs, then ownership-based
/// deallocation so the temporaries are freed. Results that an entry point
/// materializes into a destination argument are computed in place there
/// (empty-tensor elimination), so nothing is copied and nothing the kernel
/// leaves unwritten goes unnoticed.
static void addBufferization(OpPassManager &pm, bool deallocate = true) {
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions opts;
  opts.bufferizeFunctionBoundaries = true;
  opts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // An attn.sdpa inside a user's loop that carries its result.
  opts.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(opts));
  // Tile buffers have static shapes: allocate them once per query block,
  // not once per key block.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // Inserting a tile back where it was extracted leaves a copy between two
  // equal subviews: CSE makes them one value and the copy folds away.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  if (!deallocate)
    return;
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
  // Deallocation may leave bufferization.clone (e.g. for a result written
  // into a slice of an argument).
  pm.addPass(createConvertBufferizationToMemRefPass());
}

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm) {
  // expand-strided-metadata emits affine.apply: lower affine once, after it.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // x86vector ops (avx512.dot of the bf16 kernels) become LLVM intrinsics.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.x86Vector = true;
  // amx ops (the amx kernels' tile products) too.
  vectorToLLVM.amx = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  // Vector rewrites may leave ub.poison (attn-emulate-amx's tiles built row
  // by row).
  pm.addPass(createUBToLLVMConversionPass());
  // memref.alloc calls _mlir_memref_to_llvm_alloc/_free, which attn's hosts
  // define to check for allocation failure (attn-run's JIT, the AOT shim,
  // libattn_runner_utils.so for mlir-runner).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Without AVX512-BF16, LLVM rounds f32 to bf16 by a call to __truncsfbf2,
/// which older libgcc lacks (an AOT library would not link: Debian 12's gcc
/// 12): integer code instead, on the kernels' path (`kernels`, resolved for
/// this host).
static void addBf16RoundingInIntegers(OpPassManager &pm, CpuKernels kernels) {
  CpuKernels path = resolveCpuKernelsForHost(kernels);
  if (path == CpuKernels::Avx512Bf16 || path == CpuKernels::Amx)
    return;
  // Vector truncf first: arith-expand's NaN select on i16 lanes is
  // scalarized by LLVM on x86.
  pm.addPass(createAttnExpandBf16Truncf());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
}

void mlir::attn::buildNaiveCpuPipeline(OpPassManager &pm) {
  // Packed variable-length attention: one attn.sdpa per sequence, the same
  // decomposition as attn-lower-cpu's.
  pm.addPass(createAttnExpandVarlen());
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createConvertAttnGradToLinalg());
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  addBf16RoundingInIntegers(pm, CpuKernels::Auto);
  buildLowerToLLVMPipeline(pm);
}

AttnCpuMicrokernelsOptions
mlir::attn::microkernelOptionsFor(const CpuPipelineOptions &options) {
  CpuKernels path = resolveCpuKernelsForHost(options.kernels);
  AttnCpuMicrokernelsOptions kernels;
  if (path == CpuKernels::Avx2) {
    // 16 vector registers: 12 accumulators, 2 row vectors, a broadcast.
    // Against reg-block 4 (8 accumulators), on a Zen 3, 7 alternating
    // rounds of attn-run --bench 5 --peak, median % of peak, 1 thread: f32
    // L4096 d64 61.6 -> 70.6, bf16 56.0 -> 67.6, Lq=1000 Lk=3001 d80 52.6
    // -> 65.8 (5 rounds); docs/benchmarks.md, round eight.
    kernels.vectorWidth = 8;
    kernels.regBlock = 6;
    kernels.rowVectors = 2;
    // One prefetch per 8 reduction steps instead of one per step (most of
    // which repeated the clamped last line): on a Zen 3, paired CPU time
    // against spread 1, L4096 d64 0.89-0.94, d128 0.93, BERT-base 0.91,
    // causal L512 0.92, bf16 (widened) 0.93, outputs bit for bit the same;
    // spread 4 and 8 alike (docs/benchmarks.md, round seventeen).
    kernels.prefetchSpread = 8;
  }
  if (options.vectorWidth.hasValue())
    kernels.vectorWidth = options.vectorWidth;
  if (options.regBlock.hasValue())
    kernels.regBlock = options.regBlock;
  if (options.rowVectors.hasValue())
    kernels.rowVectors = options.rowVectors;
  if (options.prefetchSpread.hasValue())
    kernels.prefetchSpread = options.prefetchSpread;
  bool wide = kernels.vectorWidth == 16;
  kernels.bf16Dot =
      (path == CpuKernels::Avx512Bf16 || path == CpuKernels::Amx) && wide;
  kernels.amx = path == CpuKernels::Amx && wide;
  // The host's default (attn-compile sets the option from --cpu's).
  kernels.amxFp16 =
      kernels.amx &&
      (options.amxFp16.hasValue() ? bool(options.amxFp16) : hostHasAmxFp16());
  kernels.avx512Exp = path != CpuKernels::Avx2 && wide;
  // As addBf16RoundingInIntegers: integer code where the path has no
  // vcvtneps2bf16.
  kernels.bf16RoundInIntegers =
      path != CpuKernels::Avx512Bf16 && path != CpuKernels::Amx;
  kernels.targetFeatures = disabledTargetFeatures(path).str();
  // The host's default (attn-compile sets the option from --cpu's).
  kernels.blendStores =
      options.blendStores.hasValue()
          ? options.blendStores
          : kernels.vectorWidth == 8 && hostBlendsStores(path);
  return kernels;
}

int64_t mlir::attn::narrowBlockQFor(const CpuPipelineOptions &options) {
  if (options.narrowBlockQ.hasValue())
    return options.narrowBlockQ;
  if (options.blockQ.hasValue())
    return 0;
  // The avx2 kernels: off, so every op runs block-q's rows (64 by default).
  // A 128-row block of d = 64 holds a 32 KiB transposed query tile and a
  // 32 KiB score tile, twice the L1 of the AVX2-only host measured (Zen 3:
  // 32 KiB). There, one thread, CPU time per call, 128 -> 64 rows
  // (bench/ab-aot.py, best of 20 calls a side): f32 L4096 d64 0.959x the
  // time, bf16 0.992x, f16 0.988x, BERT-base 0.978x (docs/benchmarks.md,
  // round ten).
  if (resolveCpuKernelsForHost(options.kernels) == CpuKernels::Avx2)
    return 0;
  return options.narrowBlockQ;
}

int64_t mlir::attn::decodeRowsFor(const CpuPipelineOptions &options) {
  // The decode kernel runs its vectors along D: only with microkernels of a
  // power-of-two width.
  int64_t width = microkernelOptionsFor(options).vectorWidth;
  if (!options.microkernels || width < 2 || !llvm::isPowerOf2_64(width))
    return 0;
  if (options.decodeRows.hasValue())
    return options.decodeRows;
  // The avx2 kernels: the decode kernel only where a block's rows do not
  // fill one of their 8-lane vectors. From 8 rows on, the tile ops (rows
  // along the vectors, no horizontal sums) are faster. On a Zen 3, one
  // thread, paired CPU time of decode-rows 0 against 16 (bench/ab-paired.py,
  // d=128, Lk=2048 unless said): hq=8 hkv=1 0.847x the time, Lk=32k 0.894x
  // (two threads, split-K, wall 0.925x), bf16 Lk=32k 0.684x, hq=12 hkv=1
  // 0.665x, hq=16 hkv=1 0.493x (f16, Lk=4096, 0.367x), hq=4 hkv=1 Lq=2
  // 0.817x, hq=2 Lq=8 0.744x; but with fewer rows than a vector the decode
  // kernel wins: hq=6 hkv=1 1.358x, hq=32 hkv=8 (4 rows) 1.071x with the
  // tile ops (docs/benchmarks.md, round twenty-one).
  bool avx2 = resolveCpuKernelsForHost(options.kernels) == CpuKernels::Avx2;
  if (avx2 && width == 8)
    return 7;
  // The 16-lane kernels (avx512, avx512-bf16, amx): the decode kernel up to
  // 8 rows. On a Zen 4, one thread, paired time of the tile ops against it
  // (decode-rows 7 to 15, d=128 unless said): 16 rows (hq=16 hkv=1) Lk=2048
  // 0.332x, Lk=32k 0.598x, bf16 0.283x; hq=4 hkv=1 Lq=4 0.376x; hq=32 hkv=2
  // d=64 0.382x; 12 rows 0.654x (bf16 Lk=32k 0.465x); 10 rows 0.548x; but 8
  // rows (hq=8 hkv=1) 1.303x at Lk=32k, 1.023x at 2048 (bf16 0.844x) and 6
  // rows 1.531x (docs/benchmarks.md, round twenty-two).
  if (!avx2 && width == 16)
    return 8;
  return options.decodeRows;
}

int64_t mlir::attn::wideBlockKVFor(const CpuPipelineOptions &options) {
  // Only ops on the narrow path take it: none where narrow blocks are off.
  if (!options.microkernels || options.blockKV.hasValue() ||
      narrowBlockQFor(options) == 0)
    return 0;
  return microkernelOptionsFor(options).amx ? 128 : 0;
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  AttnCpuMicrokernelsOptions kernels = microkernelOptionsFor(options);
  AttnTileOnlineSoftmaxOptions tiling;
  tiling.blockQ = options.blockQ;
  tiling.blockKV = options.blockKV;
  tiling.narrowBlockQ = narrowBlockQFor(options);
  // The AMX kernels' P.V reads V transposed: made once per call. Their
  // bf16 and f16 ops take 128-row blocks up to D = 256: hq=8 L=4096, one
  // thread, paired CPU time against 64 rows (bench/ab-paired.py,
  // --block-q=128): bf16 d=128 0.913x, d=256 (hq=4 L=2048) 0.973x, f16
  // d=128 0.920x; f32 at d=128 1.016x, so it keeps 64 (docs/benchmarks.md,
  // round twelve).
  tiling.transposeValues = options.microkernels && kernels.amx;
  // The bf16 dot products' P.V broadcasts V in key pairs: packed once per
  // call rather than once per key block in every query block.
  tiling.pairValues = options.microkernels && kernels.bf16Dot;
  // f16 on the same tiles: as it is on AMX-FP16, else as bf16 hi + lo
  // parts.
  tiling.f16Tiles = options.microkernels && kernels.amxFp16;
  tiling.splitF16 = options.microkernels && kernels.amx && !kernels.amxFp16;
  if (options.microkernels && kernels.amx)
    tiling.narrowLowpMaxD = 256;
  // And 128-key blocks for bf16 ops with D or Dv above 64 (unless block-kv
  // is given): each P.V accumulator tile is loaded and stored once per 128
  // keys rather than 64. One thread, paired CPU time against block-kv's 64
  // on an Emerald Rapids Xeon (bench/ab-paired.py): d=128 L=4096 0.877x,
  // L=2048 0.954x, d=256 0.904x; d=64 lost (1.070x) and f16 (split into
  // bf16 parts) gained nothing (0.987x) (docs/benchmarks.md, round
  // thirteen).
  tiling.wideBlockKV = wideBlockKVFor(options);
  tiling.kvSplits = options.kvSplits;
  // Query rows run along the microkernels' vectors: fill whole vectors. A
  // width that is not positive is left to attn-cpu-microkernels to reject,
  // under its own name.
  if (options.microkernels && kernels.vectorWidth > 0)
    tiling.rowMultiple = kernels.vectorWidth;
  // Few query rows per block (decoding): decode groups (attn-tile-online-
  // softmax's decode-rows), whose kernel runs vectors along D
  // (attn-cpu-decode): D and Dv whole vectors.
  tiling.decodeRows = decodeRowsFor(options);
  AttnCpuDecodeOptions decode;
  if (tiling.decodeRows > 0) {
    tiling.decodeDimMultiple = kernels.vectorWidth;
    decode.decodeWidth = kernels.vectorWidth;
    decode.decodeBf16Dot = kernels.bf16Dot;
    decode.decodeBf16ValueDot = kernels.bf16Dot;
    // K and V prefetched into L2 (prefetcht1) by default, on every host:
    // hq=32 hkv=8 Lk=32k d=128, paired time against L1 (bench/ab-paired.py)
    // on a Zen 4 (avx512-bf16 kernels): f32 one thread 0.497x (CPU time),
    // two 0.574x (wall), hq=8 hkv=1 (split-K) 0.677x, d=64 0.902x, bf16
    // 0.633x, hq=hkv=32 0.998x; on an Emerald Rapids (amx): f32 0.914x, two
    // threads 0.956x, hq=8 hkv=1 0.929x, bf16 1.014x; on a Zen 3 (avx2)
    // 0.981-0.997x; a Zen 5 measured it no better for f32
    // (docs/benchmarks.md: rounds ten, fourteen and twenty-two).
    decode.decodePrefetchLocality = options.decodePrefetchLocality;
    // The one-group f32 kernels leave K and V to the hardware prefetchers
    // where that was measured (a Zen 4, CpuDecodeBuilder::prefetches): on the
    // avx512 kernels; the amx kernels' hosts (Intel) and the avx2 ones'
    // keep every prefetch until measured there.
    if (!options.decodePrefetch.empty()) {
      decode.decodePrefetch = options.decodePrefetch;
    } else {
      CpuKernels path = resolveCpuKernelsForHost(options.kernels);
      decode.decodePrefetch =
          path == CpuKernels::Avx512 || path == CpuKernels::Avx512Bf16 ? "auto"
                                                                       : "all";
    }
    decode.decodePageTouch = options.decodePageTouch;
    // The blocks of f32 decode in two phases on the avx2 kernels at their 8
    // lanes: on a Zen 3, one thread, paired CPU time against the overlapped
    // blocks, Lk=32k d=128: hq=32 hkv=8 0.85x, two threads 0.86x (wall),
    // hq=32 hkv=4 0.90x; bf16 1.12x, so 16-bit K and V keep the overlap
    // (CpuDecodeBuilder.h; docs/benchmarks.md, round sixteen). Not on the
    // 16-lane paths: on a Zen 4 (avx512-bf16 kernels, L2 prefetches) f32
    // hq=32 hkv=8 took 1.084x the time (round twenty-two).
    decode.decodePhased =
        kernels.vectorWidth == 8 &&
        resolveCpuKernelsForHost(options.kernels) == CpuKernels::Avx2;
  }
  pm.addPass(createAttnExpandVarlen());
  pm.addPass(createAttnTileOnlineSoftmax(tiling));
  pm.addPass(createAttnCpuDecode(decode));
  // The backward pass (attn.sdpa_grad), fused; its blocks are its own.
  AttnCpuSdpaGradOptions grad;
  grad.blockQ = options.gradBlockQ;
  grad.blockKV = options.gradBlockKV;
  // The forward's kernel path sets the width (8 lanes for avx2).
  if (kernels.vectorWidth > 0)
    grad.vectorWidth = kernels.vectorWidth;
  pm.addPass(createAttnCpuSdpaGrad(grad));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addBufferization(pm);
  if (options.microkernels)
    pm.addNestedPass<func::FuncOp>(createAttnCpuMicrokernels(kernels));
  // The amx kernels' tiles as vector code: checked where the CPU has no AMX.
  if (options.emulateAmx)
    pm.addPass(createAttnEmulateAmx());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (options.openmp) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createCanonicalizerPass());
    AttnOmpScheduleOptions schedule;
    schedule.kind = options.ompSchedule;
    pm.addNestedPass<func::FuncOp>(createAttnOmpSchedule(schedule));
  }
  // The kernels' scratch buffers: once per thread, not per query block.
  pm.addNestedPass<func::FuncOp>(createAttnHoistThreadScratch());
  addBf16RoundingInIntegers(pm, options.kernels);
  buildLowerToLLVMPipeline(pm);
}

llvm::StringRef mlir::attn::getDefaultCudaToolkitDir() {
#ifdef ATTN_CUDA_TOOLKIT_DIR
  return ATTN_CUDA_TOOLKIT_DIR;
#else
  return "";
#endif
}

llvm::StringRef mlir::attn::getDefaultPtxFeatures(llvm::StringRef chip) {
  const tuning::GpuChipInfo *known = tuning::lookupGpuChip(chip);
  return known ? llvm::StringRef(known->ptxFeatures) : llvm::StringRef();
}

llvm::Error
mlir::attn::verifyGpuPipelineOptions(const GpuPipelineOptions &options) {
  SmallVector<llvm::StringRef> chips;
  for (const tuning::GpuChipInfo &known : tuning::kGpuChips)
    chips.push_back(known.name);
  if (!tuning::lookupGpuChip(options.chip))
    return llvm::createStringError("chip '" + options.chip +
                                   "' is not supported (expected one of " +
                                   llvm::join(chips, ", ") + ")");
  if (!llvm::is_contained(kGpuFormats, options.format))
    return llvm::createStringError(
        "format '" + options.format + "' is not supported (expected one of " +
        llvm::join(llvm::ArrayRef(kGpuFormats), ", ") + ")");
  if (options.optLevel > 3)
    return llvm::createStringError("opt-level " +
                                   std::to_string(options.optLevel) +
                                   " is not supported (expected 0 to 3)");
  return llvm::Error::success();
}

void mlir::attn::buildGpuLoweringTail(OpPassManager &pm,
                                      const GpuPipelineOptions &options) {
  // Kernel arguments become bare pointers, which carry no sizes: memrefs
  // of dynamic shape reach the kernels as a base pointer and index values
  // (sizes, strides) and are rebuilt inside.
  pm.addNestedPass<func::FuncOp>(createAttnGpuRebuildCapturedMemrefs());
  // Constants and index arithmetic into the kernels, rather than passed as
  // kernel arguments.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Allocations, launches and frees on one stream, synchronized at the end.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  // Device code. Vector ops first: convert-gpu-to-nvvm does not lower all
  // of them (vector.extract_strided_slice stays).
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createConvertVectorToSCFPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createSCFToControlFlowPass());
  device.addPass(createConvertVectorToLLVMPass());
  device.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  device.addPass(createConvertNVVMToLLVMPass());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features.empty()
                        ? getDefaultPtxFeatures(options.chip).str()
                        : std::string(options.features);
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));

  // Host code: launches, then everything else as on the CPU.
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  buildLowerToLLVMPipeline(pm);

  // The toolkit gives ptxas and libdevice (math functions such as expf).
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::attn::buildNaiveGpuPipeline(OpPassManager &pm,
                                       const GpuPipelineOptions &options) {
  pm.addPass(createAttnRejectSdpaGrad());
  pm.addPass(createAttnRejectSdpaVarlen());
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  pm.addNestedPass<func::FuncOp>(createAttnGpuDeviceBuffers());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Parallel dims (batch, head, query row, key or value column) become the
  // grid and the threads; reduction dims stay sequential loops in a thread.
  // gpu-map-parallel-loops maps the first three dims of a loop (blocks for
  // the outer loop, threads for the inner one): tile the query rows by 32
  // so that a warp takes 32 rows of one (batch, head) and each thread walks
  // one row's keys or value columns.
  pm.addNestedPass<func::FuncOp>(createParallelLoopTilingPass(
      {1, 1, kNaiveGpuRowsPerBlock, kNaiveGpuRowsPerBlock},
      /*noMinMaxBounds=*/true));
  GpuMapParallelLoopsPassOptions mapping;
  mapping.mappingPolicyStr = "innermost-first";
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass(mapping));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildGpuLoweringTail(pm, options);
}

void mlir::attn::buildGpuPipeline(OpPassManager &pm,
                                  const GpuPipelineOptions &options) {
  ConvertAttnToGpuOptions fused;
  fused.chip = options.chip;
  fused.blockQ = options.blockQ;
  fused.blockKV = options.blockKV;
  fused.decodeRows = options.decodeRows;
  fused.kvSplits = options.kvSplits;
  fused.decodeStages = options.decodeStages;
  fused.decodeUnroll = options.decodeUnroll;
  fused.sharedMemory = options.sharedMemory;
  fused.foldScale = options.foldScale;
  fused.lazyRescale = options.lazyRescale;
  pm.addPass(createAttnRejectSdpaGrad());
  pm.addPass(createAttnRejectSdpaVarlen());
  pm.addPass(createConvertAttnToGpu(fused));
  pm.addPass(createCanonicalizerPass());
  // Ownership-based deallocation cannot see through the kernel's NVVM ops
  // (no memory-effect interface); the fused lowering allocates only its
  // results, which the caller owns, so there is nothing for it to free.
  addBufferization(pm, /*deallocate=*/false);
  pm.addNestedPass<func::FuncOp>(createAttnGpuDeviceBuffers());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  buildGpuLoweringTail(pm, options);
}

/// Registers a GPU pipeline whose options are checked before it is built,
/// so that a bad chip or format is an error under the pipeline's name.
static void registerGpuPipeline(llvm::StringRef name,
                                llvm::StringRef description,
                                void (*build)(OpPassManager &,
                                              const GpuPipelineOptions &)) {
  registerPassPipeline(
      name, description,
      [name,
       build](OpPassManager &pm, llvm::StringRef text,
              llvm::function_ref<LogicalResult(const Twine &)> errorHandler)
          -> LogicalResult {
        GpuPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (llvm::Error error = verifyGpuPipelineOptions(options))
          return errorHandler(name + ": " + llvm::toString(std::move(error)));
        build(pm, options);
        return success();
      },
      [](llvm::function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(GpuPipelineOptions());
      });
}

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "attn-lower-cpu",
      "Lower attn.sdpa to fused online-softmax loops, OpenMP and LLVM for the "
      "CPU",
      buildCpuPipeline);
  PassPipelineRegistration<>(
      "attn-lower-naive-cpu",
      "Lower attn.sdpa naively (score table materialized) to LLVM for the CPU",
      buildNaiveCpuPipeline);
  registerGpuPipeline("attn-lower-naive-gpu",
                      "Lower attn.sdpa naively (score table materialized) to "
                      "NVVM kernels and LLVM host code for an NVIDIA GPU",
                      buildNaiveGpuPipeline);
  registerGpuPipeline("attn-lower-gpu",
                      "The fused GPU lowering: convert-attn-to-gpu "
                      "(FlashAttention-2 on tensor cores), bufferization, "
                      "device buffers, NVVM, gpu.binary and host code",
                      buildGpuPipeline);
  registerGpuPipeline("attn-lower-gpu-tail",
                      "Lower bufferized gpu.launch code to gpu.binary ops and "
                      "LLVM host code (the end of every GPU pipeline)",
                      buildGpuLoweringTail);
}
