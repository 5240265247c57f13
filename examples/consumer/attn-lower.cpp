//===- attn-lower.cpp - an out-of-tree user of attn -----------------------===//
//
// Part of the attn project.
//
// Parses a module, runs attn's fused CPU pipeline (attn-lower-cpu) on it
// with the pass manager and prints the result: what a compiler that embeds
// attn does, built against attn's CMake package (examples/consumer).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc != 2) {
    llvm::errs() << "usage: attn-lower FILE.mlir\n";
    return 2;
  }

  mlir::DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  std::string error;
  auto file = mlir::openInputFile(argv[1], &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 2;
  }
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 2;

  mlir::PassManager pm(&context);
  mlir::attn::buildCpuPipeline(pm, mlir::attn::CpuPipelineOptions());
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
