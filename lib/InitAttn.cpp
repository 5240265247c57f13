//===- InitAttn.cpp - register everything attn provides -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<AttnDialect>();
  // attn-opt is a drop-in mlir-opt: users run attn's passes in the middle of
  // their own pipelines, so every upstream dialect and extension is there.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary (the GPU pipelines) translates device code to LLVM
  // IR (and PTX) inside the pass: every dialect's translation, GPU included.
  registerAllToLLVMIRTranslations(registry);
}

void mlir::attn::registerAttnPasses() {
  registerAllPasses();
  registerAttnConversionPasses();
  registerAttnTransformsPasses();
  registerAttnCpuCodegenPasses();
  registerAttnGpuCodegenPasses();
  registerAttnPipelines();
}
