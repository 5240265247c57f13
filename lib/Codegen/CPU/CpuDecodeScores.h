//===- CpuDecodeScores.h - the decode kernel's score folds ------*- C++ -*-===//
//
// Part of the attn project.
//
// Private to the CPU code generation library (the decode kernel).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CODEGEN_CPU_CPUDECODESCORES_H
#define ATTN_LIB_CODEGEN_CPU_CPUDECODESCORES_H

#include "mlir/IR/Builders.h"

namespace mlir::attn::detail {

/// Two W-lane vectors of partial sums whose sources (the dot products they
/// sum to) occupy `lanes` lanes each, folded into one whose sources occupy
/// lanes / 2 lanes each: a's sources, then b's (two shuffles and an add).
Value foldLanes(OpBuilder &b, Location loc, Value a, Value bVec, int64_t lanes);

/// A block of W keys' scores for `rows` rows, one vector per row with key j
/// in lane j, from `rowDots(j)`: key j's W-lane partial sums, one vector per
/// row (called once per key, in order). Each row's vectors folded by a
/// binary counter of its own.
SmallVector<Value>
foldScoresPerRow(OpBuilder &b, Location loc, int64_t width, int64_t rows,
                 function_ref<SmallVector<Value>(int64_t)> rowDots);

/// One key's W-lane partial sums, one vector per row (a power of 2
/// dividing W of them), folded into one vector: row r's sum in the r-th of
/// rows equal groups of lanes (rows - 1 folds). With `lanes` (0: W) below
/// W each vector holds W / lanes sums in groups of `lanes` lanes (several
/// keys'), and the result holds sum g of row r in group r * (W / lanes) +
/// g.
Value foldKeyRows(OpBuilder &b, Location loc, ArrayRef<Value> dots,
                  int64_t lanes = 0);

/// A vector of partial sums in len(sources) equal groups of lanes, group g
/// summing to the score sources[g] = r * W + j (row r, key j); with W
/// sources each lane is one score.
struct ScoreLanes {
  Value v;
  SmallVector<int64_t> sources;
};

/// Row r's W scores, key j in lane j, gathered from `done` (rows vectors
/// that hold every score of the block once) by a tree of two-vector
/// shuffles, rows - 1 per row.
SmallVector<Value> gatherRowScores(OpBuilder &b, Location loc, int64_t width,
                                   int64_t rows, ArrayRef<ScoreLanes> done);

/// The same scores with each key's rows folded together first (rows a power
/// of 2 dividing W): `keyRows(j)` is key j's foldKeyRows (called once per
/// key, in order). The same folds as foldScoresPerRow, at most log2(W /
/// rows) pending and `rows` finished vectors live instead of up to rows *
/// log2(W), then rows - 1 shuffles per row to gather its scores.
SmallVector<Value> foldScoresRowsFirst(OpBuilder &b, Location loc,
                                       int64_t width, int64_t rows,
                                       function_ref<Value(int64_t)> keyRows);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_CODEGEN_CPU_CPUDECODESCORES_H
