//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Tuning/CpuPathDefaults.h"

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
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

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
  // Paged caches: the oracle gathers the pages into dense keys and values.
  pm.addPass(createAttnGatherPaged());
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
  // The path's defaults (Tuning.td says why each differs), where the
  // options do not give the knob.
  CpuKernels path = resolveCpuKernelsForHost(options.kernels);
  tuning::CpuPathDefaults onPath = tuning::cpuPathDefaults(path);
  AttnCpuMicrokernelsOptions kernels;
  kernels.vectorWidth =
      options.vectorWidth.hasValue() ? options.vectorWidth : onPath.vectorWidth;
  kernels.regBlock = options.regBlock;
  kernels.rowVectors =
      options.rowVectors.hasValue() ? options.rowVectors : onPath.rowVectors;
  kernels.prefetchSpread = options.prefetchSpread.hasValue()
                               ? options.prefetchSpread
                               : onPath.prefetchSpread;
  // Those that hold at the path's own vector-width only.
  tuning::CpuPathDefaults atWidth =
      tuning::cpuPathDefaults(path, kernels.vectorWidth);
  kernels.bf16Dot = atWidth.bf16Dot;
  kernels.amx = atWidth.amx;
  // The host's default (attn-compile sets the option from --cpu's).
  kernels.amxFp16 =
      kernels.amx &&
      (options.amxFp16.hasValue() ? bool(options.amxFp16) : hostHasAmxFp16());
  kernels.avx512Exp = atWidth.avx512Exp;
  // As addBf16RoundingInIntegers: integer code where the path has no
  // vcvtneps2bf16.
  kernels.bf16RoundInIntegers = onPath.bf16RoundInIntegers;
  // Only x86 knows the features (the 8-lane kernels also serve other hosts).
  kernels.targetFeatures =
      llvm::Triple(llvm::sys::getDefaultTargetTriple()).isX86()
          ? onPath.targetFeatures.str()
          : std::string();
  // Only on an x86 host with AVX (attn-compile sets the option from
  // --cpu's).
  kernels.blendStores = options.blendStores.hasValue()
                            ? bool(options.blendStores)
                            : atWidth.blendStores && hostBlendsStores(path);
  return kernels;
}

int64_t mlir::attn::narrowBlockQFor(const CpuPipelineOptions &options) {
  if (options.narrowBlockQ.hasValue())
    return options.narrowBlockQ;
  if (options.blockQ.hasValue())
    return 0;
  return tuning::cpuPathDefaults(resolveCpuKernelsForHost(options.kernels))
      .narrowBlockQ;
}

int64_t mlir::attn::decodeRowsFor(const CpuPipelineOptions &options) {
  // The decode kernel runs its vectors along D: only with microkernels of a
  // power-of-two width.
  int64_t width = microkernelOptionsFor(options).vectorWidth;
  if (!options.microkernels || width < 2 || !llvm::isPowerOf2_64(width))
    return 0;
  if (options.decodeRows.hasValue())
    return options.decodeRows;
  return tuning::cpuPathDefaults(resolveCpuKernelsForHost(options.kernels),
                                 width)
      .decodeRows;
}

int64_t mlir::attn::wideBlockKVFor(const CpuPipelineOptions &options) {
  // Only ops on the narrow path take it: none where narrow blocks are off.
  if (!options.microkernels || options.blockKV.hasValue() ||
      narrowBlockQFor(options) == 0)
    return 0;
  return tuning::cpuPathDefaults(resolveCpuKernelsForHost(options.kernels),
                                 microkernelOptionsFor(options).vectorWidth)
      .wideBlockKV;
}

/// attn-tile-online-softmax's options in attn-lower-cpu, with the
/// microkernels' options `kernels`.
static AttnTileOnlineSoftmaxOptions
tilingOptionsFor(const CpuPipelineOptions &options,
                 const AttnCpuMicrokernelsOptions &kernels) {
  AttnTileOnlineSoftmaxOptions tiling;
  tiling.blockQ = options.blockQ;
  tiling.blockKV = options.blockKV;
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
  if (tiling.decodeRows > 0)
    tiling.decodeDimMultiple = kernels.vectorWidth;
  return tiling;
}

std::string
mlir::attn::whyNoFusedPagedLowering(ModuleOp module,
                                    const CpuPipelineOptions &options) {
  // attn-lower-cpu's first step on a copy, then the tiling's own verdict on
  // each attn.sdpa over paged views.
  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  pm.addPass(createAttnViewPaged());
  if (failed(pm.run(*copy)))
    return "attn-view-paged failed";
  AttnTileOnlineSoftmaxOptions tiling =
      tilingOptionsFor(options, microkernelOptionsFor(options));
  std::string why;
  copy->walk([&](SdpaOp op) {
    if (why.empty() && op.getKey().getDefiningOp<PagedViewOp>())
      why = whyNotDecodeGroups(op, tiling);
  });
  return why;
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  AttnCpuMicrokernelsOptions kernels = microkernelOptionsFor(options);
  // The path's defaults at the kernels' vector-width (Tuning.td).
  tuning::CpuPathDefaults onPath = tuning::cpuPathDefaults(
      resolveCpuKernelsForHost(options.kernels), kernels.vectorWidth);
  AttnTileOnlineSoftmaxOptions tiling = tilingOptionsFor(options, kernels);
  // What the kernels want of the tiling, op by op (attn-cpu-plan-tiling).
  AttnCpuPlanTilingOptions plan;
  plan.narrowBlockQ = narrowBlockQFor(options);
  // The AMX kernels' P.V reads V transposed: made once per call.
  plan.transposeValues = options.microkernels && kernels.amx;
  // The bf16 dot products' P.V broadcasts V in key pairs: packed once per
  // call rather than once per key block in every query block.
  plan.pairValues = options.microkernels && kernels.bf16Dot;
  // f16 on the same tiles: as it is on AMX-FP16, else as bf16 hi + lo
  // parts.
  plan.f16Tiles = options.microkernels && kernels.amxFp16;
  plan.splitF16 = options.microkernels && kernels.amx && !kernels.amxFp16;
  if (options.microkernels)
    plan.narrowLowpMaxD = onPath.narrowLowpMaxD;
  plan.wideBlockKV = wideBlockKVFor(options);
  AttnCpuDecodeOptions decode;
  if (tiling.decodeRows > 0) {
    decode.decodeWidth = kernels.vectorWidth;
    decode.decodeBf16Dot = kernels.bf16Dot;
    decode.decodeBf16ValueDot = kernels.bf16Dot;
    decode.decodePrefetchLocality = options.decodePrefetchLocality;
    decode.decodePrefetch = options.decodePrefetch.hasValue()
                                ? options.decodePrefetch.getValue()
                                : onPath.decodePrefetch.str();
    decode.decodePageTouch = options.decodePageTouch;
    decode.decodePhased = onPath.decodePhased;
  }
  // Paged caches as views that the decode kernel reads in place (the
  // tiling refuses an op whose blocks are not decode groups).
  pm.addPass(createAttnViewPaged());
  pm.addPass(createAttnExpandVarlen());
  pm.addPass(createAttnCpuPlanTiling(plan));
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
  // setmaxnreg needs launch bounds (the sm_90a kernel's warpgroups).
  device.addPass(createAttnGpuLaunchBounds());
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
  pm.addPass(createAttnRejectSdpaPaged());
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
  fused.kernels = options.kernels;
  fused.deterministic = options.deterministic;
  fused.persistent = options.persistent;
  fused.softmaxOverlap = options.softmaxOverlap;
  pm.addPass(createAttnRejectSdpaVarlen());
  pm.addPass(createAttnRejectSdpaPaged());
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
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
             printOptions) { printOptions(GpuPipelineOptions()); });
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
                      "(FlashAttention-2 on tensor cores, or kernels=wgmma's "
                      "warp-specialized sm_90a kernel), bufferization, "
                      "device buffers, NVVM, gpu.binary and host code",
                      buildGpuPipeline);
  registerGpuPipeline("attn-lower-gpu-tail",
                      "Lower bufferized gpu.launch code to gpu.binary ops and "
                      "LLVM host code (the end of every GPU pipeline)",
                      buildGpuLoweringTail);
}
