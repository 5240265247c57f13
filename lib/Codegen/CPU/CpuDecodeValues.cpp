//===- CpuDecodeValues.cpp - the decode kernel's P.V on bf16 dot products -===//
//
// Part of the attn project.
//
// decode-bf16-value-dot: vdpbf16ps sums the products of pairs of adjacent
// bf16 values, and P.V's pairs run along the keys: the V rows of keys j and
// j + 1 are interleaved by 16-bit words in registers (unpack low and high,
// which work within each 128-bit lane), and each query row's probabilities
// of the two keys, rounded to bf16, are one 32-bit word broadcast to every
// lane. One vdpbf16ps then takes two keys of 16 value columns where the
// widened V took two FMAs, and the two unpacks replace the shift and the
// mask that widened each key's row. The accumulators' lanes hold the
// columns in the unpacks' order, put back by finish's shuffle
// (accPairColumns).
//
//===----------------------------------------------------------------------===//

#include "CpuDecodeBuilder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include <cassert>

using namespace mlir;
using namespace mlir::attn::detail;

/// Words per 128-bit lane of a vector of 16-bit values, and how many of them
/// each unpack takes from each source.
static constexpr int64_t kLaneWords = 8, kHalfLane = kLaneWords / 2;

void CpuDecodeBuilder::pairedValueStep(SmallVector<Value> &out, Value j,
                                       Value row0, Value row1, int64_t c0,
                                       int64_t c1) {
  assert(valueDots && c0 % 2 == 0 && c1 % 2 == 0 && "whole pairs of chunks");
  // Each row's probabilities of keys j and j + 1: one i32 of probTile.
  Value pairIndex = arith::DivUIOp::create(b, loc, j, kernel.idx(2));
  SmallVector<Value> probs;
  for (int64_t r = 0; r < rows; ++r)
    probs.push_back(kernel.splatPair(memref::LoadOp::create(
        b, loc, probTile, ValueRange{kernel.idx(r), pairIndex})));
  // Unpack low and high: in each 128-bit lane, words k of both rows
  // alternating, k in [0, 4) for the low half, [4, 8) for the high.
  SmallVector<int64_t> low, high;
  for (int64_t lane = 0; lane < 2 * width / kLaneWords; ++lane)
    for (int64_t k = 0; k < kLaneWords; ++k) {
      SmallVector<int64_t> &half = k < kHalfLane ? low : high;
      half.append({lane * kLaneWords + k, 2 * width + lane * kLaneWords + k});
    }
  Value value = decode.value;
  for (int64_t c = c0; c < c1; c += 2) {
    Value v0 = readPairChunk(value, decode.kvHead, row0, c / 2);
    Value v1 = readPairChunk(value, decode.kvHead, row1, c / 2);
    Value halves[2] = {vector::ShuffleOp::create(b, loc, v0, v1, low),
                       vector::ShuffleOp::create(b, loc, v0, v1, high)};
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t r = 0; r < rows; ++r) {
        Value &acc = out[r * (c1 - c0) + (c + h - c0)];
        acc = x86vector::DotBF16Op::create(b, loc, kernel.vecType, acc,
                                           probs[r], halves[h]);
      }
  }
}

SmallVector<int64_t> CpuDecodeBuilder::accPairColumns() const {
  SmallVector<int64_t> columns;
  if (!valueDots) {
    // The pair layout (readRow): the even columns, then the odd ones.
    for (int64_t i = 0; i < width; ++i)
      columns.append({i, width + i});
    return columns;
  }
  // Column x of the 2W: word x % 8 of 128-bit lane x / 8 in both rows,
  // lane 4 * (x / 8) + x % 4 of the low accumulator (x % 8 < 4) or of the
  // high one.
  for (int64_t x = 0; x < 2 * width; ++x) {
    int64_t lane = x / kLaneWords, k = x % kLaneWords;
    columns.push_back((k < kHalfLane ? 0 : width) + lane * kHalfLane +
                      k % kHalfLane);
  }
  return columns;
}
