//===- RejectSdpaPaged.cpp - fail on attn.sdpa_paged ----------------------===//
//
// Part of the attn project.
//
// Attention over a paged cache has only its oracle's lowering so far (a
// gather into dense keys and values, attn-gather-paged): the fused
// pipelines say so on the op rather than fail later in bufferization, or
// run a copy that a fused lowering exists to avoid.
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
      op.emitOpError("has no fused lowering yet: attention over a paged "
                     "cache runs on attn-lower-naive-cpu only");
      return WalkResult::interrupt();
    });
    if (found.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
