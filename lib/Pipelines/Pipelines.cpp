//===- Pipelines.cpp - named attn pass pipelines --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

/// One-shot bufferization across function boundaries with identity layouts,
/// so that entry points take plain memrefs, then ownership-based
/// deallocation so the temporaries are freed.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions opts;
  opts.bufferizeFunctionBoundaries = true;
  opts.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(opts));
  bufferization::BufferDeallocationPipelineOptions deallocOpts;
  bufferization::buildBufferDeallocationPipeline(pm, deallocOpts);
}

void mlir::attn::buildLowerToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
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

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<>(
      "attn-lower-naive-cpu",
      "Lower attn.sdpa naively (score table materialized) to LLVM for the CPU",
      buildNaiveCpuPipeline);
}
