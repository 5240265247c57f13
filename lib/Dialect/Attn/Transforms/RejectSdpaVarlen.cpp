//===- RejectSdpaVarlen.cpp - fail on attn.sdpa_varlen --------------------===//
//
// Part of the attn project.
//
// The GPU pipelines have no lowering of packed variable-length attention
// (attn.sdpa_varlen and its backward, attn.sdpa_varlen_grad): they say so on
// the op rather than fail later in bufferization.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREJECTSDPAVARLEN
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnRejectSdpaVarlenPass
    : public attn::impl::AttnRejectSdpaVarlenBase<AttnRejectSdpaVarlenPass> {
  void runOnOperation() override {
    WalkResult found = getOperation()->walk([](Operation *op) {
      if (!isa<SdpaVarlenOp, SdpaVarlenGradOp>(op))
        return WalkResult::advance();
      op->emitOpError("has no GPU lowering: packed variable-length attention "
                      "runs on the CPU pipelines (attn-lower-cpu, "
                      "attn-lower-naive-cpu)");
      return WalkResult::interrupt();
    });
    if (found.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
