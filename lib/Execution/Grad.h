//===- Grad.h - attn-run --grad ---------------------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_GRAD_H
#define ATTN_LIB_EXECUTION_GRAD_H

#include "attn/Execution/Engine.h"

namespace mlir::attn::exec::detail {

/// runAttn() for RunOptions::grad (docs/attn-run.md, "--grad").
llvm::Expected<RunReport> runAttnGrad(MLIRContext &context,
                                      const RunOptions &options);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_GRAD_H
