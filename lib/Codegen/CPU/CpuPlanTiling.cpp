//===- CpuPlanTiling.cpp - the CPU kernels' plan for the tiling -----------===//
//
// Part of the attn project.
//
// attn-cpu-plan-tiling: what the CPU kernels want of attn-tile-online-softmax
// for each attn.sdpa (block sizes for narrow heads, the K/V layouts the
// kernels read), set as the op's `attn.tiling` before the tiling runs.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"

#include <algorithm>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUPLANTILING
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The plan for `op`: narrow-block-q, where it applies, in place of the
/// tiling's block-q. Not with a user mask and grouped-query heads: larger
/// blocks would group more of their rows, whose mask tile the CPU kernels do
/// not take (a scalar loop instead). Where it applies to an op with bf16
/// values and D or Dv above 64, wide-block-kv in place of block-kv. The K/V
/// layouts as the options ask (the tiling takes each where the op allows).
TilingPlan planFor(SdpaOp op, const AttnCpuPlanTilingOptions &options) {
  TilingPlan plan;
  int64_t d = op.getQueryType().getDimSize(3);
  int64_t dv = op.getValueType().getDimSize(3);
  Type valueElt = op.getValueType().getElementType();
  int64_t maxD = valueElt.isBF16() || valueElt.isF16()
                     ? std::max<int64_t>(64, options.narrowLowpMaxD)
                     : 64;
  if (options.narrowBlockQ > 0 && !ShapedType::isDynamic(d) &&
      !ShapedType::isDynamic(dv) && d <= maxD && dv <= maxD &&
      !getVisibleBand(op) && !(op.getMask() && op.getGroupSize() > 1)) {
    plan.blockQ = options.narrowBlockQ;
    if (options.wideBlockKV > 0 && valueElt.isBF16() && (d > 64 || dv > 64))
      plan.blockKV = options.wideBlockKV;
  }
  plan.transposeValues = options.transposeValues;
  plan.pairValues = options.pairValues;
  plan.splitF16 = options.splitF16;
  plan.f16Tiles = options.f16Tiles;
  return plan;
}

struct AttnCpuPlanTilingPass
    : public attn::impl::AttnCpuPlanTilingBase<AttnCpuPlanTilingPass> {
  using Base::Base;

  void runOnOperation() override {
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            getOperation()->getLoc(), getArgument(),
            {{narrowBlockQ.ArgStr, narrowBlockQ, bounds::kCpuNarrowBlockQ},
             {narrowLowpMaxD.ArgStr, narrowLowpMaxD,
              bounds::kCpuNarrowLowpMaxD},
             {wideBlockKV.ArgStr, wideBlockKV, bounds::kCpuWideBlockKV}})))
      return signalPassFailure();
    AttnCpuPlanTilingOptions options;
    options.narrowBlockQ = narrowBlockQ;
    options.narrowLowpMaxD = narrowLowpMaxD;
    options.wideBlockKV = wideBlockKV;
    options.transposeValues = transposeValues;
    options.pairValues = pairValues;
    options.f16Tiles = f16Tiles;
    options.splitF16 = splitF16;
    getOperation()->walk(
        [&](SdpaOp op) { setTilingPlan(op, planFor(op, options)); });
  }
};

} // namespace
