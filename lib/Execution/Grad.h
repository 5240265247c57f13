//===- Grad.h - attn-run --grad ---------------------------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_GRAD_H
#define ATTN_LIB_EXECUTION_GRAD_H

#include "attn/Execution/Engine.h"
#include "attn/Pipelines/Pipelines.h"

namespace mlir::attn::exec::detail {

/// options.pipelineOptions parsed into `pipeline` (attn-lower-cpu's
/// options), with the values the pipeline would only refuse deep inside a
/// pass (omp-schedule's kind) refused here, in one line.
llvm::Error parsePipelineOptions(const RunOptions &options,
                                 CpuPipelineOptions &pipeline);

/// runAttn() for RunOptions::grad (docs/attn-run.md, "--grad").
llvm::Expected<RunReport> runAttnGrad(MLIRContext &context,
                                      const RunOptions &options);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_GRAD_H
