//===- CpuDecode.cpp - attn.decode_keys to the CPU decode kernel ----------===//
//
// Part of the attn project.
//
// attn-cpu-decode: the decode kernel (CpuDecodeKernel.h) built in place of
// each attn.decode_keys that attn-tile-online-softmax left, at the op's
// position, with the pass's options; the op's results become the kernel's.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "CpuDecodeKernel.h"

#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/IR/AttnTileOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUDECODE
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

struct AttnCpuDecodePass
    : public attn::impl::AttnCpuDecodeBase<AttnCpuDecodePass> {
  using Base::Base;

  /// The options as the kernel takes them; an error (at `loc`, without an
  /// op attached: it is the options that are wrong, not the IR) for a value
  /// it cannot take.
  FailureOr<DecodeOptions> kernelOptions(Location loc) {
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            loc, getArgument(),
            {{decodeWidth.ArgStr, decodeWidth, bounds::kCpuDecodeWidth},
             {decodePrefetchLocality.ArgStr, decodePrefetchLocality,
              bounds::kCpuDecodePrefetchLocality},
             {decodePageTouch.ArgStr, decodePageTouch,
              bounds::kCpuDecodePageTouch}})))
      return failure();
    std::optional<DecodePrefetch> prefetch =
        parseDecodePrefetch(decodePrefetch);
    if (!prefetch)
      return mlir::emitError(loc)
             << getArgument() << ": " << decodePrefetch.ArgStr << " ('"
             << decodePrefetch << "') must be auto, all or none";
    DecodeOptions options;
    options.width = decodeWidth;
    options.bf16Dot = decodeBf16Dot;
    options.bf16ValueDot = decodeBf16ValueDot;
    options.prefetchLocality = decodePrefetchLocality;
    options.pageTouch = decodePageTouch;
    options.phased = decodePhased;
    options.prefetch = *prefetch;
    return options;
  }

  void runOnOperation() override {
    FailureOr<DecodeOptions> options = kernelOptions(getOperation()->getLoc());
    if (failed(options))
      return signalPassFailure();
    SmallVector<DecodeKeysOp> groups;
    getOperation()->walk([&](DecodeKeysOp op) { groups.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (DecodeKeysOp op : groups) {
      // The kernel runs whole vectors along D and Dv.
      DecodeGroup group = DecodeGroup::of(op);
      if (group.d % options->width != 0 || group.dv % options->width != 0) {
        op.emitOpError() << "expected D (" << group.d << ") and Dv ("
                         << group.dv << ") to be multiples of decode-width ("
                         << options->width << ")";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      DecodeResult result = emitDecodeKeys(rewriter, group, *options,
                                           op.getKeyBegin(), op.getKeyEnd());
      rewriter.replaceOp(op, ValueRange{result.m, result.l, result.acc});
    }
    if (failed(dropPagedViews(rewriter)))
      signalPassFailure();
  }

  /// The views of paged caches (attn-view-paged), read by the kernels in
  /// place: their sizes, where the tiling asked for them, from the page
  /// table and the cache; then the views go. A view read otherwise is an
  /// error (the tiling refuses such ops).
  LogicalResult dropPagedViews(IRRewriter &rewriter) {
    SmallVector<PagedViewOp> views;
    getOperation()->walk([&](PagedViewOp op) { views.push_back(op); });
    for (PagedViewOp view : views) {
      for (OpOperand &use : llvm::make_early_inc_range(view->getUses())) {
        auto dim = dyn_cast<tensor::DimOp>(use.getOwner());
        std::optional<int64_t> index =
            dim ? dim.getConstantIndex() : std::nullopt;
        if (!index || *index < 0 || *index > 3)
          continue;
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOp(dim, viewSize(rewriter, view, *index));
      }
      if (!view->use_empty())
        return view.emitOpError()
               << "is read by something other than the decode kernel (the "
                  "fused CPU lowering reads paged caches in place)";
      rewriter.eraseOp(view);
    }
    return success();
  }

  /// Dim `dim` of `view`: [B, Hkv, max_pages * page_size, D].
  static Value viewSize(OpBuilder &b, PagedViewOp view, int64_t dim) {
    Location loc = view.getLoc();
    auto size = [&](Value t, int64_t i) -> Value {
      return tensor::DimOp::create(b, loc, t, i);
    };
    switch (dim) {
    case 0:
      return size(view.getPageTable(), 0);
    case 2:
      return arith::MulIOp::create(
          b, loc, size(view.getPageTable(), 1),
          size(view.getCache(), view.getPageSlotDim()));
    default:
      return arith::ConstantIndexOp::create(
          b, loc, view.getView().getType().getDimSize(dim));
    }
  }
};

} // namespace
