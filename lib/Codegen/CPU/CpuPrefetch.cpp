//===- CpuPrefetch.cpp - software prefetch of the next tile ---------------===//
//
// Part of the attn project.
//
// With short sequences (L = 128: two key blocks per query block) every query
// block starts on operands that are not in any cache yet: its query rows, and
// for the first query block of a (batch, head) its K and V; the hardware
// prefetcher does not run that far ahead of a kernel that spends thousands of
// cycles on each tile. The kernels therefore prefetch, spread over their own
// work, the bytes that follow the tile they read: the next key block's K or V
// tile, which after the last one of a head is the next head's (the layout is
// [B, H, L, D]), and the next query block's rows. The products' prefetches
// (ContractionPrefetch) take one line of each stream per reduction step, or
// with a spread one per group of that many steps (most per-step ones repeated
// the clamped last line; on a Zen 3 the f32 products took 0.89-0.94x the time
// with 8: journal/round-17.md); the query and output rows of the next block
// issued all at once by the transposes alone left b = 32 BERT-base at 185
// GFLOP/s on one core, spread over the products too at 197–200.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>

using namespace mlir;
using namespace mlir::attn::detail;

std::optional<int64_t> mlir::attn::detail::contiguousRowStride(Value view) {
  MemRefType type = memrefOf(view);
  if (!type || type.getRank() != 2)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides[1] != 1 ||
      ShapedType::isDynamic(strides[0]) || type.isDynamicDim(1) ||
      strides[0] != type.getDimSize(1))
    return std::nullopt;
  return strides[0];
}

Value mlir::attn::detail::addressAfterView(KernelBuilder &kernel, Value view) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  MemRefType type = memrefOf(view);
  int64_t eltBytes = type.getElementTypeBitWidth() / 8;
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, view);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view);
  Value rows = memref::DimOp::create(b, loc, view, 0);
  Value elements = arith::AddIOp::create(
      b, loc, meta.getOffset(),
      arith::MulIOp::create(b, loc, rows, meta.getStrides()[0]));
  return arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, elements, kernel.idx(eltBytes)));
}

void mlir::attn::detail::prefetchAt(KernelBuilder &kernel, Value address,
                                    bool forWrite) {
  OpBuilder &b = kernel.b;
  Value address64 =
      arith::IndexCastOp::create(b, kernel.loc, b.getI64Type(), address);
  Value ptr = LLVM::IntToPtrOp::create(
      b, kernel.loc, LLVM::LLVMPointerType::get(b.getContext()), address64);
  // Into L2 (locality 2): the bytes are read one tile or one query block
  // later, after this kernel's own tiles have gone through L1.
  LLVM::Prefetch::create(b, kernel.loc, ptr, /*rw=*/forWrite ? 1 : 0,
                         /*hint=*/2, /*cache=*/1);
}

ContractionPrefetch::ContractionPrefetch(KernelBuilder &kernel,
                                         const RegisterBlocking &blocking,
                                         Value out, int64_t numT,
                                         const ContractionExtras &extras)
    : kernel(kernel), blocking(blocking), numT(numT),
      rowGroups(memrefOf(out).getDimSize(1) /
                (blocking.width * blocking.rowVecs)) {
  if (extras.prefetchAfter)
    addStream(extras.prefetchAfter, /*forWrite=*/false, /*perRowGroup=*/false);
  if (extras.nextRows)
    addStream(extras.nextRows, extras.nextRowsForWrite, /*perRowGroup=*/true);
  if (streams.empty())
    return;
  // The largest spread whose steps, all of them taken, still reach every
  // line of every stream: register blocks * numT / spread of them. (A block
  // on the causal diagonal takes fewer: its skipped score blocks and its
  // P.V's shortened reductions leave some lines unprefetched.) The kernels
  // only take static tiles, so numT and out's dims are known.
  MemRefType outType = memrefOf(out);
  assert(outType.hasStaticShape() && "the products take static tiles only");
  int64_t regBlocks =
      llvm::divideCeilSigned(outType.getDimSize(0), blocking.regBlock) *
      rowGroups;
  int64_t lines = 0;
  for (const Stream &stream : streams)
    lines = std::max(lines, stream.lines);
  int64_t most = std::min(extras.prefetchSpread, numT);
  for (int64_t spread = 2; spread <= most; spread *= 2)
    if (numT % spread == 0 && regBlocks * (numT / spread) >= lines)
      every = spread;
}

void ContractionPrefetch::addStream(Value view, bool forWrite,
                                    bool perRowGroup) {
  MemRefType type = memrefOf(view);
  if (!type.hasStaticShape())
    return;
  int64_t lines =
      type.getNumElements() * type.getElementTypeBitWidth() / 8 / 64;
  if (lines > 0)
    streams.push_back(
        {addressAfterView(kernel, view), lines, forWrite, perRowGroup});
}

SmallVector<Value> ContractionPrefetch::firstLines(const RegisterBlock &block) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  SmallVector<Value> lines;
  for (const Stream &stream : streams) {
    Value step =
        arith::DivUIOp::create(b, loc, block.c0, kernel.idx(blocking.regBlock));
    // With a spread, every stream counts register blocks over both the c
    // blocks and the row groups, as the spread's bound does; with none, the
    // K/V stream's row groups of one c block take the same lines (as before
    // the spread existed).
    if (stream.perRowGroup || every > 1) {
      Value rowGroup = arith::DivUIOp::create(
          b, loc, block.i0, kernel.idx(blocking.width * blocking.rowVecs));
      Value before = arith::MulIOp::create(b, loc, step, kernel.idx(rowGroups));
      step = arith::AddIOp::create(b, loc, before, rowGroup);
    }
    lines.push_back(
        arith::MulIOp::create(b, loc, step, kernel.idx(numT / every)));
  }
  return lines;
}

void ContractionPrefetch::emit(ArrayRef<Value> firstLines, Value t) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  for (auto [stream, first] : llvm::zip_equal(streams, firstLines)) {
    Value step =
        every == 1 ? t : arith::DivUIOp::create(b, loc, t, kernel.idx(every));
    Value line = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, first, step),
        kernel.idx(stream.lines - 1));
    prefetchAt(kernel,
               arith::AddIOp::create(
                   b, loc, stream.after,
                   arith::MulIOp::create(b, loc, line, kernel.idx(64))),
               stream.forWrite);
  }
}
