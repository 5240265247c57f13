//===- NumericsTest.cpp - Tests for the numerics contract -------*- C++ -*-===//

#include "attn/Spec/Numerics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir::attn::exec;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

ErrorStats stats(double relL2, double maxAbs, double refMaxAbs = 1.0,
                 bool hasNaN = false) {
  ErrorStats s;
  s.relL2 = relL2;
  s.maxAbs = maxAbs;
  s.refMaxAbs = refMaxAbs;
  s.hasNaN = hasNaN;
  s.count = 100;
  return s;
}

/// Just above and just below `x`, by a relative 1e-9: far beyond rounding,
/// far below any tolerance a rule could be mistaken for.
double above(double x) { return x * (1 + 1e-9); }
double below(double x) { return x * (1 - 1e-9); }

bool passF32(const ErrorStats &s, double sensRel = 0, double sensAbs = 0) {
  return judgeNumerics(s, DType::F32, /*lowPrecisionOut=*/false, std::nullopt,
                       sensRel, sensAbs)
      .pass;
}

bool passLow(const ErrorStats &s, DType dtype,
             std::optional<double> naive = std::nullopt) {
  return judgeNumerics(s, dtype, /*lowPrecisionOut=*/true, naive, 0, 0).pass;
}

TEST(JudgeNumericsTest, F32RelL2Bound) {
  EXPECT_TRUE(passF32(stats(0, 0)));
  EXPECT_TRUE(passF32(stats(1e-5, 0)));
  EXPECT_TRUE(passF32(stats(below(1e-5), 0)));
  EXPECT_FALSE(passF32(stats(above(1e-5), 0)));
  EXPECT_FALSE(passF32(stats(1e-3, 0)));
}

TEST(JudgeNumericsTest, F32MaxAbsBoundScalesWithTheReference) {
  // max(1, refMaxAbs): a reference below 1 keeps the bound at 1e-4.
  EXPECT_TRUE(passF32(stats(0, 1e-4, 0.25)));
  EXPECT_FALSE(passF32(stats(0, above(1e-4), 0.25)));
  EXPECT_TRUE(passF32(stats(0, below(1e-4), 1.0)));
  EXPECT_FALSE(passF32(stats(0, above(1e-4), 1.0)));
  // A reference of magnitude 50 allows 5e-3.
  EXPECT_TRUE(passF32(stats(0, below(5e-3), 50)));
  EXPECT_FALSE(passF32(stats(0, above(5e-3), 50)));
  EXPECT_FALSE(passF32(stats(0, 6e-3, 50)));
  // Both bounds must hold.
  EXPECT_FALSE(passF32(stats(above(1e-5), below(1e-4))));
  EXPECT_FALSE(passF32(stats(below(1e-5), above(1e-4))));
}

TEST(JudgeNumericsTest, NaNAndInfiniteErrorsFail) {
  EXPECT_FALSE(passF32(stats(0, 0, 1, /*hasNaN=*/true)));
  EXPECT_FALSE(passF32(stats(kInf, kInf)));
  EXPECT_FALSE(passF32(stats(kNaN, 0)));
  EXPECT_FALSE(passF32(stats(0, kNaN)));
  for (DType dtype : {DType::F16, DType::BF16}) {
    EXPECT_FALSE(passLow(stats(0, 0, 1, /*hasNaN=*/true), dtype));
    EXPECT_FALSE(passLow(stats(0, 0, 1, /*hasNaN=*/true), dtype, 1e-3));
    EXPECT_FALSE(passLow(stats(kInf, kInf), dtype));
  }
  // A huge sensitivity does not excuse a NaN.
  EXPECT_FALSE(passF32(stats(0, 0, 1, /*hasNaN=*/true), 1.0, 1.0));
}

TEST(JudgeNumericsTest, SensWidensTheF32Bounds) {
  // rel_l2 2e-5 fails the fixed bound, passes with sens_rel 3e-6
  // (1e-5 + 1.2e-5 = 2.2e-5), fails with sens_rel 2e-6 (1.8e-5).
  EXPECT_FALSE(passF32(stats(2e-5, 0)));
  EXPECT_TRUE(passF32(stats(2e-5, 0), 3e-6, 0));
  EXPECT_FALSE(passF32(stats(2e-5, 0), 2e-6, 0));
  EXPECT_TRUE(passF32(stats(below(1e-5 + 4 * 2e-6), 0), 2e-6, 0));
  EXPECT_FALSE(passF32(stats(above(1e-5 + 4 * 2e-6), 0), 2e-6, 0));
  // sens_abs widens max_abs by 4 * sens_abs on top of the scaled bound.
  EXPECT_FALSE(passF32(stats(0, 3e-4, 2.0)));
  EXPECT_TRUE(passF32(stats(0, 3e-4, 2.0), 0, 2.5e-5));
  EXPECT_TRUE(passF32(stats(0, below(2e-4 + 4 * 2.5e-5), 2.0), 0, 2.5e-5));
  EXPECT_FALSE(passF32(stats(0, above(2e-4 + 4 * 2.5e-5), 2.0), 0, 2.5e-5));
  // Each sens widens its own measure only.
  EXPECT_FALSE(passF32(stats(2e-5, 0), 0, 1.0));
  EXPECT_FALSE(passF32(stats(0, 3e-4, 2.0), 1.0, 0));
  // Not measured, negative or non-finite: the fixed bound alone.
  EXPECT_FALSE(passF32(stats(2e-5, 0), -1.0, -1.0));
  EXPECT_FALSE(passF32(stats(2e-5, 0), kInf, kInf));
  EXPECT_FALSE(passF32(stats(2e-5, 0), kNaN, kNaN));
  EXPECT_TRUE(passF32(stats(1e-5, 1e-4), kNaN, kNaN));
}

TEST(JudgeNumericsTest, F16AndBF16Bounds) {
  EXPECT_TRUE(passLow(stats(2e-3, 1.0), DType::F16));
  EXPECT_TRUE(passLow(stats(below(2e-3), 1.0), DType::F16));
  EXPECT_FALSE(passLow(stats(above(2e-3), 0), DType::F16));
  // bf16 has 3 fewer mantissa bits: 1.6e-2.
  EXPECT_TRUE(passLow(stats(above(2e-3), 0), DType::BF16));
  EXPECT_TRUE(passLow(stats(1.6e-2, 0), DType::BF16));
  EXPECT_TRUE(passLow(stats(below(1.6e-2), 0), DType::BF16));
  EXPECT_FALSE(passLow(stats(above(1.6e-2), 0), DType::BF16));
  EXPECT_FALSE(passLow(stats(1e-2, 0), DType::F16));
  // max_abs plays no part in the low-precision row.
  EXPECT_TRUE(passLow(stats(1e-3, 10.0, 1.0), DType::F16));
}

TEST(JudgeNumericsTest, NaiveRelativeRule) {
  // 2 * naive + 1e-6, when it is tighter than the fixed bound.
  double naive = 1e-4, bound = 2 * 1e-4 + 1e-6;
  for (DType dtype : {DType::F16, DType::BF16}) {
    EXPECT_TRUE(passLow(stats(below(bound), 0), dtype, naive));
    EXPECT_FALSE(passLow(stats(above(bound), 0), dtype, naive));
    // Without the naive figure only the fixed bound applies.
    EXPECT_TRUE(passLow(stats(above(bound), 0), dtype));
  }
  // A naive lowering with a large error does not loosen the fixed bound.
  EXPECT_FALSE(passLow(stats(above(2e-3), 0), DType::F16, 5e-3));
  EXPECT_TRUE(passLow(stats(below(2e-3), 0), DType::F16, 5e-3));
  // An exact naive result still leaves 1e-6.
  EXPECT_TRUE(passLow(stats(below(1e-6), 0), DType::F16, 0.0));
  EXPECT_FALSE(passLow(stats(above(1e-6), 0), DType::F16, 0.0));
}

TEST(JudgeNumericsTest, WhichRowApplies) {
  // The lse of an f16 problem (or any result that is not a low-precision
  // out) is held to the f32 row.
  ErrorStats s = stats(1e-4, 0);
  EXPECT_TRUE(passLow(s, DType::F16));
  EXPECT_FALSE(judgeNumerics(s, DType::F16, /*lowPrecisionOut=*/false,
                             std::nullopt, 0, 0)
                   .pass);
  // An f32 result is never judged by the low-precision row.
  EXPECT_FALSE(
      judgeNumerics(s, DType::F32, /*lowPrecisionOut=*/true, std::nullopt, 0, 0)
          .pass);
  // The naive figure does not affect the f32 row.
  EXPECT_TRUE(judgeNumerics(stats(1e-5, 0), DType::F32, false, 0.0, 0, 0).pass);
}

TEST(JudgeNumericsTest, RuleStrings) {
  auto rule = [](const ErrorStats &s, DType dtype, bool lowp,
                 std::optional<double> naive, double sensRel, double sensAbs) {
    return judgeNumerics(s, dtype, lowp, naive, sensRel, sensAbs).rule;
  };
  // Without sens: attn-run's wording, word for word.
  EXPECT_EQ(rule(stats(0, 0, 0.5), DType::F32, false, std::nullopt, 0, 0),
            "rel_l2 <= 1e-5, max_abs <= 0.0001");
  EXPECT_EQ(rule(stats(0, 0, 50), DType::F32, false, std::nullopt, 0, 0),
            "rel_l2 <= 1e-5, max_abs <= 0.005");
  EXPECT_EQ(rule(stats(0, 0), DType::F16, true, std::nullopt, 0, 0),
            "rel_l2 <= 0.002");
  EXPECT_EQ(rule(stats(0, 0), DType::BF16, true, 1e-4, 0, 0),
            "rel_l2 <= min(0.016, 2*naive 0.0001 + 1e-6)");
  // With sens, only the measures it widens say so.
  EXPECT_EQ(rule(stats(0, 0), DType::F32, false, std::nullopt, 2.1e-7, 0),
            "rel_l2 <= 1e-5 + 4*sens_rel 2.10e-07, max_abs <= 0.0001");
  EXPECT_EQ(rule(stats(0, 0, 2), DType::F32, false, std::nullopt, 2.1e-7, 3e-7),
            "rel_l2 <= 1e-5 + 4*sens_rel 2.10e-07, max_abs <= 0.0002 + "
            "4*sens_abs 3.00e-07");
  EXPECT_EQ(rule(stats(0, 0), DType::F32, false, std::nullopt, 0, 3e-7),
            "rel_l2 <= 1e-5, max_abs <= 0.0001 + 4*sens_abs 3.00e-07");
}

TEST(JudgeNumericsTest, SensOutWidensTheLowPrecisionBoundOnly) {
  // An f16/bf16 gradient: the fixed bound plus sens_out, and still at most
  // twice the naive lowering's error.
  auto judge = [](double rel, DType dtype, bool lowp,
                  std::optional<double> naive, double sensOut) {
    return judgeNumerics(stats(rel, 0), dtype, lowp, naive, 0, 0, sensOut);
  };
  EXPECT_FALSE(judge(0.03, DType::BF16, true, std::nullopt, 0).pass);
  EXPECT_TRUE(judge(0.03, DType::BF16, true, std::nullopt, 0.015).pass);
  EXPECT_FALSE(judge(0.032, DType::BF16, true, std::nullopt, 0.015).pass);
  EXPECT_FALSE(judge(0.03, DType::BF16, true, 0.01, 0.015).pass);
  EXPECT_TRUE(judge(0.0025, DType::F16, true, 0.002, 1e-3).pass);
  EXPECT_EQ(judge(0, DType::BF16, true, 1e-4, 3.28e-2).rule,
            "rel_l2 <= min(0.016 + sens_out 3.28e-02, 2*naive 0.0001 + 1e-6)");
  EXPECT_EQ(judge(0, DType::F16, true, std::nullopt, 1.6e-3).rule,
            "rel_l2 <= 0.002 + sens_out 1.60e-03");
  // Not measured (0, negative, NaN): the fixed bound.
  EXPECT_EQ(judge(0, DType::F16, true, std::nullopt, -1).rule,
            "rel_l2 <= 0.002");
  EXPECT_FALSE(judge(0.0025, DType::F16, true, std::nullopt, NAN).pass);
  // The f32 row ignores it.
  EXPECT_FALSE(judge(1e-3, DType::F32, false, std::nullopt, 1.0).pass);
}

/// A [b, h, lq, width] (or [b, h, lq] when width is 0) f32 tensor with
/// element e = e, and its reference with the rows i % stride != 0 NaN.
struct Sampled {
  HostTensor got;
  std::vector<double> ref;
};

Sampled makeSampled(int64_t b, int64_t h, int64_t lq, int64_t width,
                    int64_t stride) {
  std::vector<int64_t> shape = {b, h, lq};
  if (width)
    shape.push_back(width);
  int64_t w = width ? width : 1;
  Sampled s{HostTensor::zeros(DType::F32, shape), {}};
  for (int64_t e = 0; e < s.got.numel(); ++e) {
    s.got.setFromDouble(e, e);
    int64_t i = (e / w) % lq;
    s.ref.push_back(i % stride == 0 ? double(e) : kNaN);
  }
  return s;
}

TEST(CompareSampledTest, ComparesTheSampledRowsOnly) {
  Sampled s = makeSampled(2, 3, 7, 4, 3); // Rows 0, 3, 6 of each head.
  ErrorStats exact = compareSampled(s.got, s.ref, 3);
  EXPECT_EQ(exact.count, 2 * 3 * 3 * 4);
  EXPECT_EQ(exact.maxAbs, 0.0);
  EXPECT_EQ(exact.relL2, 0.0);
  EXPECT_FALSE(exact.hasNaN);
  EXPECT_EQ(exact.refMaxAbs, double((((1 * 3 + 2) * 7 + 6) * 4) + 3));

  // Anything in a row that is not sampled is ignored, even NaN.
  Sampled poisoned = s;
  poisoned.got.setFromDouble((0 * 7 + 1) * 4 + 2, kNaN);
  poisoned.got.setFromDouble((5 * 7 + 5) * 4, 1e30);
  ErrorStats ignored = compareSampled(poisoned.got, poisoned.ref, 3);
  EXPECT_EQ(ignored.maxAbs, 0.0);
  EXPECT_FALSE(ignored.hasNaN);

  // An error in a sampled row counts.
  Sampled off = s;
  int64_t at = (4 * 7 + 3) * 4 + 1; // Head 4, row 3.
  off.got.setFromDouble(at, at + 0.5);
  EXPECT_EQ(compareSampled(off.got, off.ref, 3).maxAbs, 0.5);
  off.got.setFromDouble(at, kNaN);
  EXPECT_TRUE(compareSampled(off.got, off.ref, 3).hasNaN);
}

TEST(CompareSampledTest, RankThreeLse) {
  Sampled s = makeSampled(1, 2, 5, 0, 2); // Rows 0, 2, 4.
  ErrorStats st = compareSampled(s.got, s.ref, 2);
  EXPECT_EQ(st.count, 2 * 3);
  EXPECT_EQ(st.maxAbs, 0.0);
  s.got.setFromDouble(5 + 4, 100); // Head 1, row 4.
  EXPECT_EQ(compareSampled(s.got, s.ref, 2).maxAbs, 100 - 9);
}

TEST(CompareSampledTest, StrideOneIsTheWholeComparison) {
  Sampled s = makeSampled(1, 2, 3, 2, 1);
  s.got.setFromDouble(3, 3.25);
  ErrorStats a = compareSampled(s.got, s.ref, 1);
  ErrorStats b = compareToReference(s.got, s.ref);
  EXPECT_EQ(a.count, 12);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.maxAbs, b.maxAbs);
  EXPECT_EQ(a.relL2, b.relL2);
  // The NaN rows of a sampled reference fail a whole comparison.
  Sampled sampled = makeSampled(1, 2, 3, 2, 2);
  EXPECT_EQ(compareSampled(sampled.got, sampled.ref, 1).relL2, kInf);
}

TEST(CompareSampledTest, MismatchesGiveInfiniteErrors) {
  Sampled s = makeSampled(1, 2, 6, 2, 2);
  std::vector<double> shortRef(s.ref.begin(), s.ref.end() - 1);
  ErrorStats st = compareSampled(s.got, shortRef, 2);
  EXPECT_EQ(st.count, 0);
  EXPECT_EQ(st.relL2, kInf);
  EXPECT_EQ(st.maxAbs, kInf);
  HostTensor flat = HostTensor::zeros(DType::F32, {24});
  EXPECT_EQ(compareSampled(flat, s.ref, 2).relL2, kInf);
  HostTensor mask = HostTensor::zeros(DType::Bool, {1, 2, 6, 2});
  EXPECT_EQ(compareSampled(mask, s.ref, 2).relL2, kInf);
}

} // namespace
