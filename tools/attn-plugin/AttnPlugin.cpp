//===- AttnPlugin.cpp - attn as a plugin of a stock mlir-opt --------------===//
//
// Part of the attn project.
//
// One shared library with both plugin entry points, so that a packaged
// mlir-opt gets the attn dialect, its passes and its pipelines:
//
//   mlir-opt --load-dialect-plugin=AttnPlugin.so \
//            --load-pass-plugin=AttnPlugin.so file.mlir --attn-lower-cpu
//
// The library links libMLIR.so, the one mlir-opt links, so that the dialect,
// pass and option registries it fills are mlir-opt's own.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

using namespace mlir;

/// mlir-opt already holds every upstream dialect and extension; the attn
/// dialect is what it lacks, and the LLVM IR translations that
/// gpu-module-to-binary (the GPU pipelines) runs inside the pass.
static void registerAttnPluginDialects(DialectRegistry *registry) {
  registry->insert<attn::AttnDialect>();
  registerAllToLLVMIRTranslations(*registry);
}

/// attn's own passes and pipelines only: the upstream ones are mlir-opt's.
static void registerAttnPluginPasses() {
  attn::registerAttnConversionPasses();
  attn::registerAttnTransformsPasses();
  attn::registerAttnCpuCodegenPasses();
  attn::registerAttnGpuCodegenPasses();
  attn::registerAttnPipelines();
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "attn", LLVM_VERSION_STRING,
          registerAttnPluginDialects};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "attn", LLVM_VERSION_STRING,
          registerAttnPluginPasses};
}
