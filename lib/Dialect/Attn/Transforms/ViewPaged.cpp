//===- ViewPaged.cpp - attn.sdpa_paged as attn.sdpa over paged views ------===//
//
// Part of the attn project.
//
// The fused CPU lowering's form of attention over a paged cache: one
// attn.sdpa with key_lengths = kv_lens over attn.paged_view keys and values,
// which nothing copies. The tiling takes such an op as decode groups only
// (attn-tile-online-softmax refuses the others), and the decode kernel
// (attn-cpu-decode) reads the caches in place through the views, resolving
// each key's page.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVIEWPAGED
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The [B, Hkv, max_pages * page_size, D] view of `cache` through `op`'s
/// page table.
static Value viewOf(OpBuilder &b, SdpaPagedOp op, Value cache) {
  auto cacheType = cast<RankedTensorType>(cache.getType());
  auto tableType = cast<RankedTensorType>(op.getPageTable().getType());
  int64_t pages = tableType.getDimSize(1),
          pageSize = cacheType.getDimSize(op.getPageSlotDim());
  int64_t keys = ShapedType::isDynamic(pages) || ShapedType::isDynamic(pageSize)
                     ? ShapedType::kDynamic
                     : pages * pageSize;
  auto viewType = RankedTensorType::get(
      {tableType.getDimSize(0), cacheType.getDimSize(op.getKeyValueHeadsDim()),
       keys, cacheType.getDimSize(3)},
      cacheType.getElementType());
  return PagedViewOp::create(b, op.getLoc(), viewType, cache, op.getPageTable(),
                             op.getLayoutAttr());
}

struct AttnViewPagedPass
    : public attn::impl::AttnViewPagedBase<AttnViewPagedPass> {
  void runOnOperation() override {
    SmallVector<SdpaPagedOp> ops;
    getOperation()->walk([&](SdpaPagedOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (SdpaPagedOp op : ops) {
      rewriter.setInsertionPoint(op);
      Value key = viewOf(rewriter, op, op.getKeyCache());
      Value value = viewOf(rewriter, op, op.getValueCache());
      auto sdpa = SdpaOp::create(rewriter, op.getLoc(), op->getResultTypes(),
                                 op.getQuery(), key, value, /*mask=*/Value(),
                                 op.getKvLens(), op.getAlibiSlopes(),
                                 op.getScaleAttr(), op.getCausalAttr(),
                                 op.getWindowAttr(), op.getSoftcapAttr());
      rewriter.replaceOp(op, sdpa->getResults());
    }
  }
};

} // namespace
