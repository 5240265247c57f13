//===- AttnInterfaces.cpp - attn dialect op interfaces --------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnInterfaces.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnInterfaces.cpp.inc"
