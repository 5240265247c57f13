//===- CpuDecodeScores.cpp - the decode kernel's scores by shuffle trees --===//
//
// Part of the attn project.
//
// The decode kernel's dot products leave W partial sums per (row, key); a
// block's scores are their lane sums, one vector per row with key j in lane
// j. Two ways to get there with the same 15 folds per row (two shuffles and
// an add each) for W = 16: a binary counter per row, or each key's rows
// folded together first and the keys after, which keeps fewer vectors live
// and then gathers each row's scores by rows - 1 shuffles. Also the decode
// builder's score steps (CpuDecodeBuilder.h): the dot products of a group of
// keys, a P.V loop's share of the next block's (one key's, or with 8 rows
// on vdpbf16ps two keys' side by side in one vector per row), and a
// block's scores from them or from the tile the P.V loops fill.
//
//===----------------------------------------------------------------------===//

#include "CpuDecodeScores.h"

#include "CpuDecodeBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

#include <cassert>

using namespace mlir;
using namespace mlir::attn::detail;

Value mlir::attn::detail::foldLanes(OpBuilder &b, Location loc, Value a,
                                    Value bVec, int64_t lanes) {
  int64_t width = cast<VectorType>(a.getType()).getNumElements();
  SmallVector<int64_t> lo, hi;
  for (int64_t src = 0; src < 2; ++src)
    for (int64_t i = 0; i < width / lanes; ++i)
      for (int64_t k = 0; k < lanes / 2; ++k) {
        lo.push_back(src * width + i * lanes + k);
        hi.push_back(src * width + i * lanes + lanes / 2 + k);
      }
  Value x = vector::ShuffleOp::create(b, loc, a, bVec, lo);
  Value y = vector::ShuffleOp::create(b, loc, a, bVec, hi);
  return arith::AddFOp::create(b, loc, x, y);
}

SmallVector<Value> mlir::attn::detail::foldScoresPerRow(
    OpBuilder &b, Location loc, int64_t width, int64_t rows,
    function_ref<SmallVector<Value>(int64_t)> rowDots) {
  // One binary counter per row: after W keys one vector per row.
  SmallVector<SmallVector<std::pair<int64_t, Value>>> pending(rows);
  for (int64_t j = 0; j < width; ++j) {
    SmallVector<Value> dots = rowDots(j);
    for (int64_t r = 0; r < rows; ++r) {
      Value dot = dots[r];
      int64_t level = 0;
      auto &stack = pending[r];
      while (!stack.empty() && stack.back().first == level) {
        dot = foldLanes(b, loc, stack.back().second, dot, width >> level);
        stack.pop_back();
        ++level;
      }
      stack.push_back({level, dot});
    }
  }
  SmallVector<Value> scores;
  for (auto &stack : pending) {
    assert(stack.size() == 1 && "W is a power of 2");
    scores.push_back(stack.front().second);
  }
  return scores;
}

Value mlir::attn::detail::foldKeyRows(OpBuilder &b, Location loc,
                                      ArrayRef<Value> dots, int64_t lanes) {
  int64_t width = cast<VectorType>(dots.front().getType()).getNumElements();
  SmallVector<Value> level(dots);
  // Level k's vectors each hold 2^k rows, (lanes >> k) lanes per sum.
  for (lanes = lanes ? lanes : width; level.size() > 1; lanes /= 2) {
    SmallVector<Value> up;
    for (size_t i = 0; i < level.size(); i += 2)
      up.push_back(foldLanes(b, loc, level[i], level[i + 1], lanes));
    level = std::move(up);
  }
  return level.front();
}

SmallVector<Value>
mlir::attn::detail::foldScoresRowsFirst(OpBuilder &b, Location loc,
                                        int64_t width, int64_t rows,
                                        function_ref<Value(int64_t)> keyRows) {
  // Partial sums (ScoreLanes): lanes in len(sources) equal groups, group
  // g summing to the score sources[g] = r * W + j.
  auto combine = [&](const ScoreLanes &a, const ScoreLanes &bp) {
    ScoreLanes out{foldLanes(b, loc, a.v, bp.v,
                             width / static_cast<int64_t>(a.sources.size())),
                   a.sources};
    llvm::append_range(out.sources, bp.sources);
    return out;
  };
  // Each key's row dot products folded together first (one vector per key,
  // W / rows lanes per row, rows in order), then the keys by a binary
  // counter; a vector whose lanes are each one score is done. At most
  // log2(W / rows) pending and rows done vectors are live, against up to
  // rows * log2(W) with one counter per row.
  SmallVector<std::pair<int64_t, ScoreLanes>> pending;
  SmallVector<ScoreLanes> done;
  for (int64_t j = 0; j < width; ++j) {
    ScoreLanes x{keyRows(j), {}};
    for (int64_t r = 0; r < rows; ++r)
      x.sources.push_back(r * width + j);
    int64_t depth = 0;
    while (!pending.empty() && pending.back().first == depth) {
      x = combine(pending.back().second, x);
      pending.pop_back();
      ++depth;
    }
    if (static_cast<int64_t>(x.sources.size()) == width)
      done.push_back(std::move(x));
    else
      pending.push_back({depth, std::move(x)});
  }
  assert(pending.empty() && static_cast<int64_t>(done.size()) == rows &&
         "rows divides W");
  return gatherRowScores(b, loc, width, rows, done);
}

SmallVector<Value>
mlir::attn::detail::gatherRowScores(OpBuilder &b, Location loc, int64_t width,
                                    int64_t rows, ArrayRef<ScoreLanes> done) {
  // Row r's vector: key j from the lane of the done vector that holds it,
  // gathered by a tree of two-vector shuffles (rows - 1 per row).
  SmallVector<Value> scores;
  for (int64_t r = 0; r < rows; ++r) {
    // Per done vector: (value, lane of key j or -1).
    SmallVector<std::pair<Value, SmallVector<int64_t>>> parts;
    for (const ScoreLanes &d : done) {
      SmallVector<int64_t> laneOf(width, -1);
      for (int64_t l = 0; l < width; ++l)
        if (d.sources[l] / width == r)
          laneOf[d.sources[l] % width] = l;
      parts.push_back({d.v, laneOf});
    }
    while (parts.size() > 1) {
      SmallVector<std::pair<Value, SmallVector<int64_t>>> up;
      for (size_t i = 0; i < parts.size(); i += 2) {
        auto &[a, la] = parts[i];
        auto &[bv, lb] = parts[i + 1];
        SmallVector<int64_t> mask(width, 0), laneOf(width, -1);
        for (int64_t j = 0; j < width; ++j) {
          if (la[j] >= 0)
            mask[j] = la[j];
          else if (lb[j] >= 0)
            mask[j] = width + lb[j];
          if (la[j] >= 0 || lb[j] >= 0)
            laneOf[j] = j;
        }
        up.push_back({vector::ShuffleOp::create(b, loc, a, bv, mask), laneOf});
      }
      parts = std::move(up);
    }
    scores.push_back(parts.front().first);
  }
  return scores;
}

SmallVector<SmallVector<Value>>
CpuDecodeBuilder::keyGroupDots(function_ref<Value(int64_t)> keyIndex,
                               int64_t j0, int64_t n) {
  SmallVector<SmallVector<Value>> k, dots(n, SmallVector<Value>(rows));
  for (int64_t g = 0; g < n; ++g)
    k.push_back(readKeyChunks(keyIndex(j0 + g), 0, keyChunks()));
  for (int64_t c = 0; c < keyChunks(); ++c)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t g = 0; g < n; ++g)
        dots[g][r] = dotStep(dots[g][r], r, c, k[g][c]);
  return dots;
}

Value CpuDecodeBuilder::dotStep(Value dot, int64_t r, int64_t c, Value k) {
  return dotWith(dot, queries[r * keyChunks() + c], k);
}

Value CpuDecodeBuilder::dotWith(Value dot, Value q, Value k) {
  // The query as the last operand: a pair's two products commute exactly,
  // and there LLVM folds a query chunk's reload into the vdpbf16ps. With 8
  // rows the query chunks (64 halves with paired dots) do not fit the
  // registers: 59 separate reloads of the hq=8 hkv=1 d=128 library became
  // memory operands. Zen 4, one thread, paired CPU time against the query
  // first (outputs bit for bit the same): hq=8 hkv=1 Lk=1024 in cache
  // 0.969, hq=16 hkv=2 0.985, 4 rows 0.975 and 0.999; Lk=32k from memory
  // 0.922, 4 KiB pages 0.947 (journal/round-30.md).
  if (keyDots)
    return x86vector::DotBF16Op::create(b, loc, kernel.vecType,
                                        dot ? dot : kernel.splat(0.0f), k, q);
  if (!dot)
    return arith::MulFOp::create(b, loc, k, q);
  return vector::FMAOp::create(b, loc, k, q, dot);
}

void CpuDecodeBuilder::takeNextDots(const NextDots &nextDots, Value j,
                                    int64_t d0, int64_t d1) {
  // The next block's key j: this group's share of its chunks.
  Value kRow = arith::AddIOp::create(b, loc, nextDots.first, j);
  SmallVector<Value> kc = readKeyChunks(kRow, d0, d1);
  if (tileFoldsRows()) {
    // This share's sums of the rows folded into one vector: one store per
    // key rather than one per key and row.
    SmallVector<Value> dots;
    for (int64_t r = 0; r < rows; ++r) {
      Value dot;
      for (int64_t c = d0; c < d1; ++c)
        dot = dotStep(dot, r, c, kc[c - d0]);
      dots.push_back(dot);
    }
    storeFoldedShare(nextDots, j, d0 > 0, foldKeyRows(b, loc, dots));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    // The first share's chunks start the sums, the others add to the tile
    // row.
    SmallVector<Value, 3> at{j, kernel.idx(r), kernel.idx(0)};
    Value dot;
    if (d0 > 0)
      dot = vector::LoadOp::create(b, loc, kernel.vecType, nextDots.tile, at);
    for (int64_t c = d0; c < d1; ++c)
      dot = dotStep(dot, r, c, kc[c - d0]);
    vector::StoreOp::create(b, loc, dot, nextDots.tile, at);
  }
}

void CpuDecodeBuilder::takeNextDotPair(const NextDots &nextDots, Value j,
                                       int64_t d0, int64_t d1) {
  Value row0 = arith::AddIOp::create(b, loc, nextDots.first, j);
  SmallVector<Value> k0 = readKeyChunks(row0, d0, d1);
  SmallVector<Value> k1 = readKeyChunks(kernel.add(row0, 1), d0, d1);
  // Key j's chunk c in the low half of each vector, key j + 1's in the
  // high half: the low W values of both, then the high W.
  SmallVector<int64_t> lo, hi;
  for (int64_t key = 0; key < 2; ++key)
    for (int64_t i = 0; i < width; ++i) {
      lo.push_back(key * 2 * width + i);
      hi.push_back(key * 2 * width + width + i);
    }
  SmallVector<Value> dots(rows);
  for (int64_t c = d0; c < d1; ++c) {
    Value kLo = vector::ShuffleOp::create(b, loc, k0[c - d0], k1[c - d0], lo);
    Value kHi = vector::ShuffleOp::create(b, loc, k0[c - d0], k1[c - d0], hi);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = 2 * (r * keyChunks() + c);
      dots[r] = dotWith(dots[r], halfQueries[at], kLo);
      dots[r] = dotWith(dots[r], halfQueries[at + 1], kHi);
    }
  }
  // Groups of W / 2 lanes (one key each), rows folded: lane 2r + p holds
  // row r's sum for key j + p.
  Value folded = foldKeyRows(b, loc, dots, width / 2);
  storeFoldedShare(nextDots, j, d0 > 0, folded);
}

void CpuDecodeBuilder::storeFoldedShare(const NextDots &nextDots, Value j,
                                        bool addToTile, Value folded) {
  SmallVector<Value, 3> at{j, kernel.idx(0), kernel.idx(0)};
  if (addToTile)
    folded = arith::AddFOp::create(
        b, loc,
        vector::LoadOp::create(b, loc, kernel.vecType, nextDots.tile, at),
        folded);
  vector::StoreOp::create(b, loc, folded, nextDots.tile, at);
}

bool CpuDecodeBuilder::foldRowsFirst() const {
  // Not for 8 rows: the 56 shuffles of the end cost more than the spills
  // they save (b=4 hq=64 hkv=8 lk=128 d=128 bf16 in cache: 0.185-0.189
  // against 0.113-0.115 ms per call).
  return rows > 1 && rows <= 4 && llvm::isPowerOf2_64(rows) &&
         width % rows == 0;
}

SmallVector<Value>
CpuDecodeBuilder::scoresOf(function_ref<Value(int64_t)> keyIndex) {
  // Each K row read once, its dot products with every query row built a
  // group of keys at a time and folded as they come, so that few partial
  // vectors are live; after W keys scores[r] holds row r's scores, key j in
  // lane j. Groups of 4 keys rather than one at 4 rows: 564 -> 394 stack
  // references in the f32 hq=32 hkv=8 d=128 library, 104.7-108.0 ->
  // 111.9-113.2 GFLOP/s in cache, 1 thread Lk=32k 14.7-15.1 -> 13.9-14.1 ms
  // (journal/round-06.md).
  int64_t groupKeys = keysPerGroup();
  SmallVector<SmallVector<Value>> keyGroup;
  auto rowDots = [&](int64_t j) {
    if (j % groupKeys == 0)
      keyGroup = keyGroupDots(keyIndex, j, groupKeys);
    return keyGroup[j % groupKeys];
  };
  return foldedScores(rowDots);
}

bool CpuDecodeBuilder::tileFoldsRows() const {
  // On the 16-lane kernels, where it was measured: there a 512-bit store takes
  // two FMA slots (Zen 4) and the folds' shuffles and adds none. Also for 8
  // rows, unlike foldRowsFirst: its gather's 56 shuffles come once per block,
  // against 7 stores saved per key (f32 hq=8 hkv=1 Lk=2048 d=128, one thread:
  // 0.853 the time; 16 rows: 1.067; journal/round-24.md). Phased blocks fill
  // their own tile, per row (phasedScores).
  return width == 16 && !phased && rows > 1 && rows <= 8 &&
         llvm::isPowerOf2_64(rows);
}

SmallVector<Value> CpuDecodeBuilder::scaledScores(SmallVector<Value> scores) {
  if (keyDots)
    for (Value &x : scores)
      x = arith::MulFOp::create(b, loc, x, kernel.splat(decode.qScale));
  return scores;
}

SmallVector<Value> CpuDecodeBuilder::foldedScores(
    function_ref<SmallVector<Value>(int64_t)> rowDots) {
  if (foldRowsFirst())
    return scaledScores(
        foldScoresRowsFirst(b, loc, width, rows, [&](int64_t j) {
          return foldKeyRows(b, loc, rowDots(j));
        }));
  return scaledScores(foldScoresPerRow(b, loc, width, rows, rowDots));
}

SmallVector<Value> CpuDecodeBuilder::scoresFromTile(Value tile) {
  if (pairedNextDots()) {
    // Tile row j (even) holds keys j and j + 1 of every row, done.
    SmallVector<ScoreLanes> done;
    for (int64_t j = 0; j < width; j += 2) {
      ScoreLanes pair{
          vector::LoadOp::create(
              b, loc, kernel.vecType, tile,
              ValueRange{kernel.idx(j), kernel.idx(0), kernel.idx(0)}),
          {}};
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < 2; ++p)
          pair.sources.push_back(r * width + j + p);
      done.push_back(std::move(pair));
    }
    return scaledScores(gatherRowScores(b, loc, width, rows, done));
  }
  if (tileFoldsRows())
    return scaledScores(
        foldScoresRowsFirst(b, loc, width, rows, [&](int64_t j) {
          return vector::LoadOp::create(
              b, loc, kernel.vecType, tile,
              ValueRange{kernel.idx(j), kernel.idx(0), kernel.idx(0)});
        }));
  auto rowDots = [&](int64_t j) {
    SmallVector<Value> dots;
    for (int64_t r = 0; r < rows; ++r)
      dots.push_back(vector::LoadOp::create(
          b, loc, kernel.vecType, tile,
          ValueRange{kernel.idx(j), kernel.idx(r), kernel.idx(0)}));
    return dots;
  };
  return foldedScores(rowDots);
}
