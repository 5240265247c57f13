//===- CpuKernelsWiden.cpp - f16/bf16 tiles widened once to f32 -----------===//
//
// Part of the attn project.
//
// Rows of the tile are read `width` elements at a time (vector.load of
// vector<Wxf16>), extended (arith.extf, one vcvtph2ps) and stored into the
// f32 buffer; a row's last cols % width elements one at a time.
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsWiden.h"
#include "CpuScratch.h"

using namespace mlir;
using namespace mlir::attn::detail;

Value mlir::attn::detail::widenTileToF32(KernelBuilder &kernel,
                                         Operation *anchor, Value tile) {
  MemRefType type = memrefOf(tile);
  if (!type || type.getRank() != 2 || !type.hasStaticShape() ||
      type.getElementType().isF32() ||
      !isa<Float16Type, BFloat16Type>(type.getElementType()))
    return {};
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  // One buffer per shape for all the tiles of the query block: each copy is
  // dead once the contraction right after it has run.
  Value buffer = queryBlockScratch(
      anchor, MemRefType::get({rows, cols}, b.getF32Type()), "widen",
      /*shared=*/true);
  if (!buffer)
    return {};
  int64_t full = cols / kernel.width * kernel.width;
  auto narrowType = VectorType::get({kernel.width}, type.getElementType());
  kernel.loop(0, rows, 1, [&](Value r) {
    kernel.loop(0, full, kernel.width, [&](Value c) {
      Value x =
          vector::LoadOp::create(b, loc, narrowType, tile, ValueRange{r, c});
      kernel.store(arith::ExtFOp::create(b, loc, kernel.vecType, x), buffer,
                   {r, c});
    });
    for (int64_t c = full; c < cols; ++c) {
      Value x =
          memref::LoadOp::create(b, loc, tile, ValueRange{r, kernel.idx(c)});
      memref::StoreOp::create(b, loc,
                              arith::ExtFOp::create(b, loc, b.getF32Type(), x),
                              buffer, ValueRange{r, kernel.idx(c)});
    }
  });
  return buffer;
}
