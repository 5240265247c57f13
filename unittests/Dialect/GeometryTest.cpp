//===- GeometryTest.cpp - the keys each query row sees --------------------===//
//
// Part of the attn project.
//
// The band's rules on integers (VisibleBand's members) against worked
// examples, and the IR builders of Geometry.h against those rules: each
// builder is built on constant operands and folded to a constant, for every
// band, sequence length and key length of a small sweep.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/Geometry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>

using namespace mlir;
using namespace mlir::attn;

namespace {

VisibleBand band(CausalKind alignment, std::optional<int64_t> left,
                 std::optional<int64_t> right) {
  VisibleBand b;
  b.alignment = alignment;
  b.left = left;
  b.right = right;
  return b;
}

std::string describe(const VisibleBand &b) {
  auto side = [](std::optional<int64_t> v) {
    return v ? std::to_string(*v) : std::string("-");
  };
  return std::string(b.isBottomRight() ? "bottom_right" : "top_left") +
         " left=" + side(b.left) + " right=" + side(b.right);
}

//===----------------------------------------------------------------------===//
// The rules on integers
//===----------------------------------------------------------------------===//

TEST(VisibleBandRules, CausalTopLeft) {
  // Lq = 4, Lk = 6: row i sees keys [0, i].
  VisibleBand causal = band(CausalKind::TopLeft, std::nullopt, 0);
  int64_t shift = causal.getDiagonalShift(4, 6);
  EXPECT_EQ(shift, 0);
  EXPECT_EQ(causal.getFirstKey(2 + shift), std::nullopt);
  EXPECT_EQ(causal.getKeyEnd(2 + shift), 3);
  EXPECT_TRUE(causal.admits(2 + shift, 2));
  EXPECT_FALSE(causal.admits(2 + shift, 3));
  EXPECT_TRUE(causal.admits(0 + shift, 0));
  // Key 3 is first seen by row 3.
  EXPECT_EQ(causal.getFirstRow(shift, 3), 3);
}

TEST(VisibleBandRules, CausalBottomRight) {
  // Lq = 4, Lk = 6: row i sees keys [0, i + 2]; the last row sees them all.
  VisibleBand causal = band(CausalKind::BottomRight, std::nullopt, 0);
  int64_t shift = causal.getDiagonalShift(4, 6);
  EXPECT_EQ(shift, 2);
  EXPECT_EQ(causal.getKeyEnd(0 + shift), 3);
  EXPECT_EQ(causal.getKeyEnd(3 + shift), 6);
  EXPECT_EQ(causal.getFirstRow(shift, 0), -2); // every row sees key 0
  EXPECT_EQ(causal.getFirstRow(shift, 5), 3);
  // Lq > Lk: the first rows see nothing (their key end is at most 0).
  shift = causal.getDiagonalShift(6, 4);
  EXPECT_EQ(shift, -2);
  EXPECT_EQ(causal.getKeyEnd(0 + shift), -1);
  EXPECT_EQ(causal.getKeyEnd(2 + shift), 1);
}

TEST(VisibleBandRules, KeyLengthsMoveTheBottomRightDiagonal) {
  VisibleBand causal = band(CausalKind::BottomRight, std::nullopt, 0);
  // Lk = 10, a batch with 7 keys and Lq = 4: row i sees [0, i + 3].
  int64_t keyLen = clampKeyLength(7, 10);
  EXPECT_EQ(keyLen, 7);
  EXPECT_EQ(causal.getKeyEnd(3 + causal.getDiagonalShift(4, keyLen)), 7);
  // Lengths are clamped to [0, Lk].
  EXPECT_EQ(clampKeyLength(-3, 10), 0);
  EXPECT_EQ(clampKeyLength(12, 10), 10);
  // top_left does not move.
  VisibleBand topLeft = band(CausalKind::TopLeft, std::nullopt, 0);
  EXPECT_EQ(topLeft.getDiagonalShift(4, keyLen), 0);
}

TEST(VisibleBandRules, SlidingWindow) {
  // window [3, 1] around the bottom-right diagonal, Lq = Lk = 8: row i sees
  // keys [i - 3, i + 1].
  VisibleBand window = band(CausalKind::BottomRight, 3, 1);
  int64_t shift = window.getDiagonalShift(8, 8);
  EXPECT_EQ(shift, 0);
  EXPECT_EQ(window.getFirstKey(5), 2);
  EXPECT_EQ(window.getKeyEnd(5), 7);
  EXPECT_EQ(window.getFirstKey(1), -2); // past key 0: callers clamp
  EXPECT_FALSE(window.admits(5, 1));
  EXPECT_TRUE(window.admits(5, 2));
  EXPECT_TRUE(window.admits(5, 6));
  EXPECT_FALSE(window.admits(5, 7));
  EXPECT_EQ(window.getFirstRow(shift, 6), 5);
  // A left bound only.
  VisibleBand leftOnly = band(CausalKind::TopLeft, 2, std::nullopt);
  EXPECT_EQ(leftOnly.getKeyEnd(0), std::nullopt);
  EXPECT_EQ(leftOnly.getFirstRow(0, 4), std::nullopt);
  EXPECT_TRUE(leftOnly.admits(0, 100));
  EXPECT_FALSE(leftOnly.admits(5, 2));
}

//===----------------------------------------------------------------------===//
// The IR builders, folded
//===----------------------------------------------------------------------===//

/// Builds values into one function from constant index operands, folds the
/// function and reads the values back as constants.
class Folded {
public:
  explicit Folded(MLIRContext &context)
      : b(&context), loc(UnknownLoc::get(&context)) {
    module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    func = func::FuncOp::create(b, loc, "f", b.getFunctionType({}, {}));
    b.setInsertionPointToEnd(func.addEntryBlock());
  }

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// Keeps `v` (null: none) as result `slot()` of the function.
  int keep(Value v) {
    kept.push_back(v);
    return static_cast<int>(kept.size()) - 1;
  }

  /// Folds, then the kept values as integers (i1 as 0 or 1; nullopt for a
  /// null value).
  SmallVector<std::optional<int64_t>> fold() {
    SmallVector<Value> results;
    for (Value v : kept)
      if (v)
        results.push_back(v);
    func::ReturnOp::create(b, loc, results);
    func.setType(b.getFunctionType({}, ValueRange(results).getTypes()));
    EXPECT_TRUE(succeeded(applyPatternsGreedily(
        func.getOperation(), RewritePatternSet(b.getContext()))));
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<std::optional<int64_t>> values;
    unsigned next = 0;
    for (Value v : kept) {
      if (!v) {
        values.push_back(std::nullopt);
        continue;
      }
      std::optional<std::pair<APInt, bool>> c =
          getConstantAPIntValue(ret.getOperand(next++));
      EXPECT_TRUE(c) << "not folded to a constant";
      if (!c) {
        values.push_back(std::nullopt);
        continue;
      }
      const APInt &x = c->first;
      values.push_back(x.getBitWidth() == 1 ? x.getZExtValue()
                                            : x.getSExtValue());
    }
    return values;
  }

  OpBuilder b;
  Location loc;

private:
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  SmallVector<Value> kept;
};

class GeometryBuilders : public ::testing::Test {
protected:
  GeometryBuilders() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect>();
  }

  /// Every band of the sweep: both alignments, each side unbounded or 0 to 5.
  static SmallVector<VisibleBand> bands() {
    SmallVector<VisibleBand> all;
    std::optional<int64_t> sides[] = {std::nullopt, 0, 1, 2, 5};
    for (CausalKind alignment : {CausalKind::TopLeft, CausalKind::BottomRight})
      for (std::optional<int64_t> left : sides)
        for (std::optional<int64_t> right : sides)
          if (left || right)
            all.push_back(band(alignment, left, right));
    return all;
  }

  MLIRContext context;
};

/// Each row's diagonal, first visible key, key end and predicate; each
/// key's first row: as VisibleBand's rules say, with and without key
/// lengths (keyLen < Lk moves the bottom-right diagonal).
TEST_F(GeometryBuilders, RowsAndKeysFollowTheRules) {
  for (const VisibleBand &vb : bands())
    for (int64_t lq : {1, 4, 7})
      for (int64_t keyLen : {0, 3, 7, 10}) {
        SCOPED_TRACE(describe(vb) + " lq=" + std::to_string(lq) +
                     " keyLen=" + std::to_string(keyLen));
        Folded f(context);
        OpBuilder &b = f.b;
        Value shift =
            buildDiagonalShift(b, f.loc, vb, f.index(lq), f.index(keyLen));
        int shiftSlot = f.keep(shift);
        struct Row {
          int diag, first, end;
          SmallVector<int> visible;
        };
        SmallVector<Row> rows;
        for (int64_t i = 0; i < lq; ++i) {
          Row row;
          Value diag = buildDiagonal(b, f.loc, f.index(i), shift);
          row.diag = f.keep(diag);
          row.first = f.keep(buildFirstVisibleKey(b, f.loc, vb, diag));
          row.end = f.keep(buildVisibleKeyEnd(b, f.loc, vb, diag));
          for (int64_t j = 0; j < keyLen; ++j)
            row.visible.push_back(
                f.keep(buildBandPredicate(b, f.loc, vb, diag, f.index(j))));
          rows.push_back(row);
        }
        SmallVector<int> firstRows;
        for (int64_t j = 0; j < keyLen; ++j)
          firstRows.push_back(
              f.keep(buildFirstVisibleRow(b, f.loc, vb, shift, f.index(j))));
        SmallVector<std::optional<int64_t>> v = f.fold();

        int64_t hostShift = vb.getDiagonalShift(lq, keyLen);
        EXPECT_EQ(v[shiftSlot], hostShift);
        for (int64_t i = 0; i < lq; ++i) {
          const Row &row = rows[i];
          int64_t diag = i + hostShift;
          EXPECT_EQ(v[row.diag], diag);
          EXPECT_EQ(v[row.first], vb.getFirstKey(diag));
          EXPECT_EQ(v[row.end], vb.getKeyEnd(diag));
          for (int64_t j = 0; j < keyLen; ++j)
            EXPECT_EQ(v[row.visible[j]], vb.admits(diag, j) ? 1 : 0)
                << "row " << i << " key " << j;
        }
        for (int64_t j = 0; j < keyLen; ++j) {
          std::optional<int64_t> firstRow = v[firstRows[j]];
          EXPECT_EQ(firstRow, vb.getFirstRow(hostShift, j));
          // The first row that sees key j is the first whose upper edge
          // reaches it.
          if (firstRow) {
            for (int64_t i = 0; i < lq; ++i)
              EXPECT_EQ(i >= *firstRow, j < *vb.getKeyEnd(i + hostShift))
                  << "row " << i << " key " << j;
          }
        }
      }
}

/// A null shift is no shift: the diagonal is the row.
TEST_F(GeometryBuilders, NoShiftIsTheRow) {
  Folded f(context);
  Value row = f.index(3);
  EXPECT_EQ(buildDiagonal(f.b, f.loc, row, Value()), row);
}

/// Blocks classified unmasked for a range of rows are seen whole by every
/// row of the range, and the blocks just outside are not.
TEST_F(GeometryBuilders, UnmaskedBlocksAreSeenWholeByEveryRow) {
  for (const VisibleBand &vb : bands())
    for (int64_t blockSize : {1, 2, 4})
      for (int64_t shift : {-3, 0, 5}) {
        SCOPED_TRACE(describe(vb) + " block=" + std::to_string(blockSize) +
                     " shift=" + std::to_string(shift));
        constexpr int64_t kRows = 8;
        Folded f(context);
        Value bs = f.index(blockSize);
        struct Range {
          int64_t firstRow, lastRow;
          int begin, end;
        };
        SmallVector<Range> ranges;
        for (int64_t r0 = 0; r0 < kRows; ++r0)
          for (int64_t r1 = r0; r1 < kRows; ++r1) {
            Value firstDiag =
                buildDiagonal(f.b, f.loc, f.index(r0), f.index(shift));
            Value lastDiag =
                buildDiagonal(f.b, f.loc, f.index(r1), f.index(shift));
            ranges.push_back(
                {r0, r1,
                 f.keep(buildFirstUnmaskedBlock(f.b, f.loc, vb, lastDiag, bs)),
                 f.keep(buildUnmaskedBlockEnd(f.b, f.loc, vb, firstDiag, bs))});
          }
        SmallVector<std::optional<int64_t>> v = f.fold();
        for (const Range &range : ranges) {
          std::optional<int64_t> begin = v[range.begin], end = v[range.end];
          EXPECT_EQ(begin.has_value(), vb.left.has_value());
          EXPECT_EQ(end.has_value(), vb.right.has_value());
          auto seenWholeByAll = [&](int64_t block) {
            for (int64_t i = range.firstRow; i <= range.lastRow; ++i)
              for (int64_t k = block * blockSize; k < (block + 1) * blockSize;
                   ++k)
                if (!vb.admits(i + shift, k))
                  return false;
            return true;
          };
          // Over the keys around the rows' band (an unbounded side: 8
          // blocks past the other edge, or past the rows' diagonals).
          int64_t lo = begin ? *begin : (end ? *end : 0) - 8;
          int64_t hi = end ? *end : (begin ? *begin : 0) + 8;
          for (int64_t block = lo; block < hi; ++block)
            EXPECT_TRUE(seenWholeByAll(block))
                << "rows [" << range.firstRow << ", " << range.lastRow
                << "] block " << block;
          if (begin) {
            EXPECT_FALSE(seenWholeByAll(*begin - 1));
          }
          if (end) {
            EXPECT_FALSE(seenWholeByAll(*end));
          }
        }
      }
}

} // namespace
