//===- RejectSdpaGrad.cpp - fail on attn.sdpa_grad ------------------------===//
//
// Part of the attn project.
//
// The naive GPU pipeline has no lowering of the backward pass: it says so on
// the op rather than fail later in bufferization.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnGradOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREJECTSDPAGRAD
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnRejectSdpaGradPass
    : public attn::impl::AttnRejectSdpaGradBase<AttnRejectSdpaGradPass> {
  void runOnOperation() override {
    WalkResult found = getOperation()->walk([](SdpaGradOp op) {
      op.emitOpError("has no naive GPU lowering: the backward pass runs on "
                     "attn-lower-gpu (f16/bf16) and the CPU pipelines "
                     "(attn-lower-cpu, attn-lower-naive-cpu)");
      return WalkResult::interrupt();
    });
    if (found.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
