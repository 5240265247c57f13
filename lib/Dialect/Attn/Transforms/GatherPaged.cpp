//===- GatherPaged.cpp - attn.sdpa_paged as a gather and one attn.sdpa ----===//
//
// Part of the attn project.
//
// The oracle's form of attention over a paged key/value cache: each
// sequence's pages are copied into dense [B, Hkv, max_pages * page_size, D]
// keys and values, and one attn.sdpa with key_lengths = kv_lens computes
// the rest (keys past a sequence's length invisible, bottom_right at its
// own length). The copy is O(B * max_pages * page_size * Hkv * D) traffic:
// fine for an oracle, what a fused lowering must not do. A page is read only
// for keys below the sequence's length and when its index is inside the
// cache, so no page table makes the generated code read outside it.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGATHERPAGED
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `t[indices]` (an i32 tensor) as an index, sign-extended.
static Value extractIndex(OpBuilder &b, Location loc, Value t,
                          ValueRange indices) {
  Value v = tensor::ExtractOp::create(b, loc, t, indices);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// Dense [B, Hkv, max_pages * page_size, D] copy of `cache` (key or value
/// cache of `op`): element (b, h, t, d) is the cache's (page, t % page_size,
/// h, d) (NHD; HND swaps slot and head), page = page_table[b, t /
/// page_size], read only when t < kv_lens[b] and 0 <= page < num_pages;
/// else 0.
static Value gatherPages(OpBuilder &b, Location loc, SdpaPagedOp op,
                         Value cache, OpFoldResult batch) {
  auto cacheType = cast<RankedTensorType>(cache.getType());
  Type elt = cacheType.getElementType();
  unsigned headsDim = op.getKeyValueHeadsDim(), slotDim = op.getPageSlotDim();
  int64_t hkv = cacheType.getDimSize(headsDim), d = cacheType.getDimSize(3);

  OpFoldResult pageSize = tensor::getMixedSize(b, loc, cache, slotDim);
  OpFoldResult maxPages = tensor::getMixedSize(b, loc, op.getPageTable(), 1);
  OpFoldResult keys;
  std::optional<int64_t> staticSize = getConstantIntValue(pageSize),
                         staticPages = getConstantIntValue(maxPages);
  if (staticSize && staticPages)
    keys = b.getIndexAttr(*staticSize * *staticPages);
  else
    keys = arith::MulIOp::create(
               b, loc, getValueOrCreateConstantIndexOp(b, loc, maxPages),
               getValueOrCreateConstantIndexOp(b, loc, pageSize))
               .getResult();
  Value init = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{batch, b.getIndexAttr(hkv), keys,
                                b.getIndexAttr(d)},
      elt);
  Value sizeValue = getValueOrCreateConstantIndexOp(b, loc, pageSize);
  Value numPages = tensor::DimOp::create(b, loc, cache, 0);

  AffineMap identity = b.getMultiDimIdentityMap(4);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{identity}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange) {
        Value bIdx = linalg::IndexOp::create(nb, nloc, 0);
        Value hIdx = linalg::IndexOp::create(nb, nloc, 1);
        Value tIdx = linalg::IndexOp::create(nb, nloc, 2);
        Value dIdx = linalg::IndexOp::create(nb, nloc, 3);
        Value len = extractIndex(nb, nloc, op.getKvLens(), bIdx);
        Value pageCol = arith::DivUIOp::create(nb, nloc, tIdx, sizeValue);
        Value slot = arith::RemUIOp::create(nb, nloc, tIdx, sizeValue);
        Value page = extractIndex(nb, nloc, op.getPageTable(), {bIdx, pageCol});
        Value c0 = arith::ConstantIndexOp::create(nb, nloc, 0);
        Value inLength = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::slt, tIdx, len);
        Value notNegative = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::sge, page, c0);
        Value inCache = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::slt, page, numPages);
        Value valid = arith::AndIOp::create(
            nb, nloc, inLength,
            arith::AndIOp::create(nb, nloc, notNegative, inCache));
        auto read = scf::IfOp::create(
            nb, nloc, valid,
            [&](OpBuilder &tb, Location tloc) {
              SmallVector<Value> at = {page, slot, hIdx, dIdx};
              if (slotDim == 2)
                std::swap(at[1], at[2]);
              Value v = tensor::ExtractOp::create(tb, tloc, cache, at);
              scf::YieldOp::create(tb, tloc, v);
            },
            [&](OpBuilder &eb, Location eloc) {
              Value zero =
                  arith::ConstantOp::create(eb, eloc, eb.getZeroAttr(elt));
              scf::YieldOp::create(eb, eloc, zero);
            });
        linalg::YieldOp::create(nb, nloc, read.getResult(0));
      });
  return generic.getResult(0);
}

static void gather(IRRewriter &rewriter, SdpaPagedOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  OpFoldResult batch = tensor::getMixedSize(b, loc, op.getQuery(), 0);
  Value key = gatherPages(b, loc, op, op.getKeyCache(), batch);
  Value value = gatherPages(b, loc, op, op.getValueCache(), batch);
  auto sdpa = SdpaOp::create(
      b, loc, op->getResultTypes(), op.getQuery(), key, value, /*mask=*/Value(),
      op.getKvLens(), op.getAlibiSlopes(), op.getScaleAttr(),
      op.getCausalAttr(), op.getWindowAttr(), op.getSoftcapAttr());
  rewriter.replaceOp(op, sdpa->getResults());
}

struct AttnGatherPagedPass
    : public attn::impl::AttnGatherPagedBase<AttnGatherPagedPass> {
  void runOnOperation() override {
    SmallVector<SdpaPagedOp> ops;
    getOperation()->walk([&](SdpaPagedOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (SdpaPagedOp op : ops)
      gather(rewriter, op);
  }
};

} // namespace
