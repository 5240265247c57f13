//===- CpuKernelsBf16.cpp - bf16 dot-product kernels for the tile ops -----===//
//
// Part of the attn project.
//
// Packing: two rows of a tile (two keys of P, two values of V, two dims of
// Q) are loaded as vectors, rounded to bf16 where they are f32, and
// interleaved (vector.interleave), so that lane i of the packed vector holds
// the pair (row 2t, row 2t + 1) of column i. The contraction then feeds
// x86vector.avx512.dot with a packed row vector and one 32-bit pair of the
// other operand broadcast to every lane.
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsBf16.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::attn::detail;

namespace {

VectorType bf16Vector(KernelBuilder &kernel, int64_t lanes) {
  return VectorType::get({lanes}, kernel.b.getBF16Type());
}

/// Shared by the packers: `pairs(r0, r1, i0)` gives columns [i0, i0 + W)
/// of rows r0 and r1 as 2W interleaved bf16 values.
void packRowPairs(KernelBuilder &kernel, int64_t rows, int64_t cols, Value dst,
                  function_ref<Value(Value, Value, Value)> pairs) {
  OpBuilder &b = kernel.b;
  kernel.loop(0, rows / 2, 1, [&](Value t) {
    Value r0 = arith::MulIOp::create(b, kernel.loc, t, kernel.idx(2));
    Value r1 = kernel.add(r0, 1);
    kernel.loop(0, cols, kernel.width, [&](Value i0) {
      Value col = arith::MulIOp::create(b, kernel.loc, i0, kernel.idx(2));
      vector::StoreOp::create(b, kernel.loc, pairs(r0, r1, i0), dst,
                              ValueRange{t, col});
    });
  });
}

} // namespace

void mlir::attn::detail::emitPackRowPairsF32(KernelBuilder &kernel, Value src,
                                             Value dst,
                                             std::optional<float> scale) {
  MemRefType type = memrefOf(src);
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  Value factor = scale ? kernel.splat(*scale) : Value();
  auto row = [&](Value r, Value i0) -> Value {
    Value x = kernel.load(src, {r, i0});
    return factor ? arith::MulFOp::create(b, loc, x, factor).getResult() : x;
  };
  packRowPairs(kernel, type.getDimSize(0), type.getDimSize(1), dst,
               [&](Value r0, Value r1, Value i0) -> Value {
                 return emitPairF32(kernel, row(r0, i0), row(r1, i0),
                                    memrefOf(dst).getElementType());
               });
}

std::pair<Value, Value> mlir::attn::detail::emitSplitF32(KernelBuilder &kernel,
                                                         Value x) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  VectorType bf16Type = bf16Vector(kernel, kernel.width);
  Value hi = arith::TruncFOp::create(b, loc, bf16Type, x);
  Value rest = arith::SubFOp::create(
      b, loc, x, arith::ExtFOp::create(b, loc, kernel.vecType, hi));
  return {hi, arith::TruncFOp::create(b, loc, bf16Type, rest)};
}

void mlir::attn::detail::emitPackRowPairsF32Split(KernelBuilder &kernel,
                                                  Value src, Value dstHi,
                                                  Value dstLo,
                                                  std::optional<float> scale) {
  MemRefType type = memrefOf(src);
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  Value factor = scale ? kernel.splat(*scale) : Value();
  kernel.loop(0, type.getDimSize(0) / 2, 1, [&](Value t) {
    Value r0 = arith::MulIOp::create(b, loc, t, kernel.idx(2));
    Value r1 = kernel.add(r0, 1);
    kernel.loop(0, type.getDimSize(1), kernel.width, [&](Value i0) {
      auto part = [&](Value r) {
        Value x = kernel.load(src, {r, i0});
        if (factor)
          x = arith::MulFOp::create(b, loc, x, factor);
        return emitSplitF32(kernel, x);
      };
      auto [hi0, lo0] = part(r0);
      auto [hi1, lo1] = part(r1);
      Value col = arith::MulIOp::create(b, loc, i0, kernel.idx(2));
      vector::StoreOp::create(b, loc,
                              vector::InterleaveOp::create(b, loc, hi0, hi1),
                              dstHi, ValueRange{t, col});
      vector::StoreOp::create(b, loc,
                              vector::InterleaveOp::create(b, loc, lo0, lo1),
                              dstLo, ValueRange{t, col});
    });
  });
}

Value mlir::attn::detail::emitPairF32(KernelBuilder &kernel, Value x0, Value x1,
                                      Type elt) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  if (elt && elt.isF16()) {
    // vcvtps2ph each, then one word shuffle.
    VectorType type = VectorType::get({kernel.width}, elt);
    Value h0 = arith::TruncFOp::create(b, loc, type, x0);
    Value h1 = arith::TruncFOp::create(b, loc, type, x1);
    return vector::InterleaveOp::create(b, loc, h0, h1);
  }
  if (kernel.width == 16) {
    // Both rounded by one vcvtne2ps2bf16 ([x0 | x1] as 32 bf16; the
    // AVX512-BF16 path), then interleaved by one word shuffle.
    SmallVector<int64_t> interleave;
    for (int64_t i = 0; i < kernel.width; ++i)
      interleave.append({i, i + kernel.width});
    Value both = LLVM::CallIntrinsicOp::create(
                     b, loc, bf16Vector(kernel, 32),
                     b.getStringAttr("llvm.x86.avx512bf16.cvtne2ps2bf16.512"),
                     ValueRange{x1, x0})
                     .getResult(0);
    return vector::ShuffleOp::create(b, loc, both, both, interleave);
  }
  auto round = [&](Value x) -> Value {
    return arith::TruncFOp::create(b, loc, bf16Vector(kernel, kernel.width), x);
  };
  Value r0 = round(x0);
  Value r1 = round(x1);
  return vector::InterleaveOp::create(b, loc, r0, r1);
}

void mlir::attn::detail::emitPackRowPairsBf16(KernelBuilder &kernel, Value src,
                                              Value dst) {
  MemRefType type = memrefOf(src);
  auto row = [&](Value r, Value i0) -> Value {
    return vector::LoadOp::create(kernel.b, kernel.loc,
                                  bf16Vector(kernel, kernel.width), src,
                                  ValueRange{r, i0});
  };
  packRowPairs(kernel, type.getDimSize(0), type.getDimSize(1), dst,
               [&](Value r0, Value r1, Value i0) -> Value {
                 // One statement per load: the IR's order must not depend
                 // on the compiler's order of evaluating arguments.
                 Value x0 = row(r0, i0);
                 Value x1 = row(r1, i0);
                 return vector::InterleaveOp::create(kernel.b, kernel.loc, x0,
                                                     x1);
               });
}

void mlir::attn::detail::emitBf16Contraction(
    KernelBuilder &kernel, const RegisterBlocking &blocking, Value aPairs,
    Value bMat, function_ref<SmallVector<Value>(Value, Value)> bPair, Value out,
    const ContractionExtras &extras, float outScale, bool reducesKeyPairs) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  int64_t numT = memrefOf(aPairs).getDimSize(0);
  assert(blocking.width == kernel.width && "one vector width");
  VectorType pairsType = bf16Vector(kernel, 2 * blocking.width);
  // One pair of bMat, as a 32-bit word broadcast to every lane.
  auto broadcastPair = [&](Value c, Value t) -> Value {
    Value pair = vector::LoadOp::create(b, loc, bf16Vector(kernel, 2), bMat,
                                        bPair(c, t));
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    return kernel.splatPair(
        vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
  };
  ContractionPrefetch prefetch(kernel, blocking, out, numT, extras);
  // One prefetch per step below: no spread here (prefetch-spread is the f32
  // products').
  assert(prefetch.spread() == 1 && "the bf16 products take no spread");
  emitRegisterBlocks(
      kernel, blocking, out, extras,
      [&](const RegisterBlock &block, SmallVector<Value> acc) {
        // The block's pair columns of A: a window at its first row, indexed
        // with constants.
        int64_t rowStep = blocking.width * blocking.rowVecs;
        Value aBlock = kernel.window(
            aPairs,
            {kernel.idx(0),
             arith::MulIOp::create(b, loc, block.i0, kernel.idx(2))},
            {numT, 2 * rowStep});
        SmallVector<Value> pairCols;
        for (int64_t r = 0; r < blocking.rowVecs; ++r)
          pairCols.push_back(kernel.idx(2 * r * blocking.width));
        SmallVector<Value> firstLines = prefetch.firstLines(block);
        // P.V on a band's edge: no pair before the first key a row of the
        // block sees, none past the last.
        auto [tStart, tEnd] =
            reducesKeyPairs && (extras.hiddenAbove || extras.hiddenBelow)
                ? edgeReductionRange(kernel, block, rowStep, extras, numT, 2)
                : std::pair<Value, Value>(kernel.idx(0), kernel.idx(numT));
        SmallVector<Value> red = kernel.loopCarrying(
            tStart, tEnd, 1, acc, [&](Value t, ValueRange carried) {
              prefetch.emit(firstLines, t);
              SmallVector<Value> rowPairs, next;
              for (Value col : pairCols)
                rowPairs.push_back(vector::LoadOp::create(
                    b, loc, pairsType, aBlock, ValueRange{t, col}));
              for (size_t c = 0; c < block.cOffsets.size(); ++c) {
                Value bc = broadcastPair(kernel.add(block.c0, c), t);
                for (int64_t r = 0; r < blocking.rowVecs; ++r)
                  next.push_back(x86vector::DotBF16Op::create(
                      b, loc, kernel.vecType, carried[c * blocking.rowVecs + r],
                      rowPairs[r], bc));
              }
              return next;
            });
        if (outScale != 1.0f) {
          Value factor = kernel.splat(outScale);
          for (Value &v : red)
            v = arith::MulFOp::create(b, loc, v, factor);
        }
        return red;
      },
      // Scores on a band's edge: only the blocks with a key a row sees.
      !reducesKeyPairs && (extras.hiddenAbove || extras.hiddenBelow)
          ? function_ref<Value(const RegisterBlock &)>(
                [&](const RegisterBlock &block) -> Value {
                  return edgeScoresNeeded(
                      kernel, block, blocking.width * blocking.rowVecs, extras);
                })
          : function_ref<Value(const RegisterBlock &)>());
}
