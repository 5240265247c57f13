//===- attn-opt.cpp - the attn optimizer driver ---------------------------===//
//
// Part of the attn project.
//
// mlir-opt with the attn dialect, its passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::attn::registerAttnPasses();
  mlir::DialectRegistry registry;
  mlir::attn::registerAttnDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attn optimizer driver\n", registry));
}
