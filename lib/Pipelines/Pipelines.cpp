//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// One-shot bufferization across function boundaries with identity layouts,
/// so that entry points take plain memrefs, then ownership-based
/// deallocation so the temporaries are freed. Results that an entry point
/// materializes into a destination argument are computed in place there
/// (empty-tensor elimination), so nothing is copied and nothing the kernel
/// leaves unwritten goes unnoticed.
static void addBufferization(OpPassManager &pm) {
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
  pm.addPass(createConvertVectorToLLVMPass());
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

void mlir::attn::buildNaiveCpuPipeline(OpPassManager &pm) {
  pm.addPass(createConvertAttnToLinalg());
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  buildLowerToLLVMPipeline(pm);
}

void mlir::attn::buildCpuPipeline(OpPassManager &pm,
                                  const CpuPipelineOptions &options) {
  AttnTileOnlineSoftmaxOptions tiling;
  tiling.blockQ = options.blockQ;
  tiling.blockKV = options.blockKV;
  // Query rows run along the microkernels' vectors: fill whole vectors. A
  // width that is not positive is left to attn-cpu-microkernels to reject,
  // under its own name.
  if (options.microkernels && options.vectorWidth > 0)
    tiling.rowMultiple = options.vectorWidth;
  pm.addPass(createAttnTileOnlineSoftmax(tiling));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  addBufferization(pm);
  if (options.microkernels) {
    AttnCpuMicrokernelsOptions kernels;
    kernels.vectorWidth = options.vectorWidth;
    kernels.regBlock = options.regBlock;
    kernels.rowVectors = options.rowVectors;
    pm.addNestedPass<func::FuncOp>(createAttnCpuMicrokernels(kernels));
  }
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  if (options.openmp) {
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createCanonicalizerPass());
  }
  buildLowerToLLVMPipeline(pm);
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
}
