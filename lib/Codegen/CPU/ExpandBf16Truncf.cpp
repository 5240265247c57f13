//===- ExpandBf16Truncf.cpp - vector f32 -> bf16 rounding in integers -----===//
//
// Part of the attn project.
//
// Where the CPU has no vcvtneps2bf16, the pipelines round f32 to bf16 in
// integer code (arith-expand's bf16 expansion: attn-lower-cpu's and
// attn-lower-naive-cpu's addBf16RoundingInIntegers). On vectors that
// expansion selects the NaN case on the i16 lanes after the narrowing,
// which LLVM's x86 code generation scalarizes: a vucomiss and a cmov per
// element, and scalar 16-bit stores (journal/round-18.md).
// This pass runs before it and rounds vector truncf the same way, bit for
// bit, with the NaN lanes replaced on the f32 lanes first (one blend):
// 0x7FC00000, which the rounding keeps as 0x7FC0.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDBF16TRUNCF
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// truncf vector<N x f32> -> vector<N x bf16> (no rounding mode: to nearest
/// even) as integer ops on the f32 bits.
struct ExpandVectorBf16Truncf : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    auto inType = dyn_cast<VectorType>(op.getIn().getType());
    auto outType = dyn_cast<VectorType>(op.getType());
    if (!inType || !outType || !inType.getElementType().isF32() ||
        !outType.getElementType().isBF16() || op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    auto i32s = inType.clone(rewriter.getI32Type());
    auto splat = [&](int32_t v) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(i32s, rewriter.getI32IntegerAttr(v)));
    };
    Value x = op.getIn();
    Value isNan =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO, x, x);
    Value quietNan =
        arith::BitcastOp::create(rewriter, loc, inType, splat(0x7FC00000));
    x = arith::SelectOp::create(rewriter, loc, isNan, quietNan, x);
    Value bits = arith::BitcastOp::create(rewriter, loc, i32s, x);
    Value lsb = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, splat(16)),
        splat(1));
    Value bias = arith::AddIOp::create(rewriter, loc, lsb, splat(0x7FFF));
    Value rounded = arith::ShRUIOp::create(
        rewriter, loc, arith::AddIOp::create(rewriter, loc, bits, bias),
        splat(16));
    Value narrow = arith::TruncIOp::create(
        rewriter, loc, inType.clone(rewriter.getI16Type()), rounded);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, outType, narrow);
    return success();
  }
};

struct AttnExpandBf16TruncfPass
    : public attn::impl::AttnExpandBf16TruncfBase<AttnExpandBf16TruncfPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandVectorBf16Truncf>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
