//===- RejectSdpaPaged.cpp - fail on attn.sdpa_paged ----------------------===//
//
// Part of the attn project.
//
// Attention over a paged cache has no GPU lowering yet: the GPU pipelines
// say so on the op rather than fail later in bufferization, or run a copy
// (attn-gather-paged) that a fused lowering exists to avoid. The CPU
// pipelines lower it: attn-lower-cpu in place (attn-view-paged, the decode
// kernel), attn-lower-naive-cpu by a gather.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnPagedOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNREJECTSDPAPAGED
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct AttnRejectSdpaPagedPass
    : public attn::impl::AttnRejectSdpaPagedBase<AttnRejectSdpaPagedPass> {
  void runOnOperation() override {
    WalkResult found = getOperation()->walk([](SdpaPagedOp op) {
      op.emitOpError("has no lowering in this pipeline: attention over a "
                     "paged cache runs on attn-lower-cpu (decode groups) and "
                     "attn-lower-naive-cpu");
      return WalkResult::interrupt();
    });
    if (found.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
