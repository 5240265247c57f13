//===- CpuPrefetch.cpp - software prefetch of the next tile ---------------===//
//
// Part of the attn project.
//
// With short sequences (L = 128: two key blocks per query block) every
// query block starts on operands that are not in any cache yet: its query
// rows, and for the first query block of a (batch, head) its K and V; the
// hardware prefetcher does not run that far ahead of a kernel that spends
// thousands of cycles on each tile. The kernels therefore prefetch, spread
// over their own work, the bytes that follow the tile they read: the next
// key block's K or V tile, which after the last one of a head is the next
// head's (the layout is [B, H, L, D]), and the next query block's rows.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

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
