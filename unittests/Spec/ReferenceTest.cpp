//===- ReferenceTest.cpp - Tests for the f64 sdpa reference -----*- C++ -*-===//

#include "attn/Spec/Reference.h"

#include "ErrorHelpers.h"
#include "attn/Spec/Numerics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir::attn::exec;
using namespace attn_test;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

HostTensor makeTensor(DType dtype, std::vector<int64_t> shape,
                      const std::vector<double> &values) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

HostTensor randomTensor(DType dtype, std::vector<int64_t> shape,
                        uint64_t seed) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape));
  fillRandomNormal(t, seed);
  return t;
}

struct Operands {
  HostTensor q, k, v;
};

Operands randomOperands(const SdpaProblem &p, uint64_t seed,
                        DType dtype = DType::F32) {
  return {randomTensor(dtype, {p.b, p.hq, p.lq, p.d}, seed),
          randomTensor(dtype, {p.b, p.hkv, p.lk, p.d}, seed + 1),
          randomTensor(dtype, {p.b, p.hkv, p.lk, p.dv}, seed + 2)};
}

SdpaProblem makeProblem(int64_t b, int64_t hq, int64_t hkv, int64_t lq,
                        int64_t lk, int64_t d, int64_t dv) {
  SdpaProblem p;
  p.b = b;
  p.hq = hq;
  p.hkv = hkv;
  p.lq = lq;
  p.lk = lk;
  p.d = d;
  p.dv = dv;
  p.scale = 1.0 / std::sqrt(static_cast<double>(d));
  return p;
}

/// Copies head `h` of batch `b` of a [B, H, L, D] tensor into a [1, 1, L, D]
/// one.
HostTensor sliceHead(const HostTensor &t, int64_t b, int64_t h) {
  int64_t heads = t.shape[1], rows = t.shape[2], cols = t.shape[3];
  HostTensor s = HostTensor::zeros(t.dtype, {1, 1, rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i)
    s.setFromDouble(i, t.getAsDouble(((b * heads + h) * rows) * cols + i));
  return s;
}

TEST(ReferenceTest, HandComputedTwoByTwo) {
  SdpaProblem p = makeProblem(1, 1, 1, 2, 2, 2, 2);
  p.scale = 0.5;
  p.lse = true;
  HostTensor q = makeTensor(DType::F32, {1, 1, 2, 2}, {1, 0, 0, 1});
  HostTensor k = makeTensor(DType::F32, {1, 1, 2, 2}, {1, 2, 3, -1});
  HostTensor v = makeTensor(DType::F32, {1, 1, 2, 2}, {1, 2, 3, 4});
  std::vector<double> out, lse;
  referenceSdpa(p, q, k, v, nullptr, out, &lse);
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(lse.size(), 2u);

  // Row 0: q = (1, 0), scores 0.5 * (1, 3) = (0.5, 1.5).
  double e00 = std::exp(0.5), e01 = std::exp(1.5);
  double p00 = e00 / (e00 + e01), p01 = e01 / (e00 + e01);
  EXPECT_NEAR(out[0], p00 * 1 + p01 * 3, 1e-14);
  EXPECT_NEAR(out[1], p00 * 2 + p01 * 4, 1e-14);
  EXPECT_NEAR(lse[0], std::log(e00 + e01), 1e-14);
  // Row 1: q = (0, 1), scores 0.5 * (2, -1) = (1, -0.5).
  double e10 = std::exp(1.0), e11 = std::exp(-0.5);
  double p10 = e10 / (e10 + e11), p11 = e11 / (e10 + e11);
  EXPECT_NEAR(out[2], p10 * 1 + p11 * 3, 1e-14);
  EXPECT_NEAR(out[3], p10 * 2 + p11 * 4, 1e-14);
  EXPECT_NEAR(lse[1], std::log(e10 + e11), 1e-14);
}

TEST(ReferenceTest, LessonMaskSeesOnlyKeysZeroAndOne) {
  // The lesson's example: T = 4, d_k = 8, every query may only see keys 0, 1.
  SdpaProblem p = makeProblem(1, 1, 1, 4, 4, 8, 8);
  p.mask = MaskKind::Bool;
  p.maskShape = {1, 1, 4, 4};
  Operands ops = randomOperands(p, 11);
  HostTensor mask =
      makeTensor(DType::Bool, {1, 1, 4, 4},
                 {1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0});
  std::vector<double> out;
  referenceSdpa(p, ops.q, ops.k, ops.v, &mask, out, nullptr);

  for (int64_t i = 0; i < 4; ++i) {
    double s[2];
    for (int j = 0; j < 2; ++j) {
      double dot = 0;
      for (int x = 0; x < 8; ++x)
        dot += ops.q.getAsDouble(i * 8 + x) * ops.k.getAsDouble(j * 8 + x);
      s[j] = dot * p.scale;
    }
    double m = std::max(s[0], s[1]);
    double w0 = std::exp(s[0] - m), w1 = std::exp(s[1] - m);
    for (int x = 0; x < 8; ++x) {
      double expected =
          (w0 * ops.v.getAsDouble(x) + w1 * ops.v.getAsDouble(8 + x)) /
          (w0 + w1);
      EXPECT_NEAR(out[i * 8 + x], expected, 1e-13);
    }
  }

  // Weights on keys 2 and 3 are exactly zero: whatever their value rows
  // hold, even NaN or huge values, the output does not change by a bit.
  HostTensor v2 = ops.v;
  for (int64_t x = 16; x < 32; ++x)
    v2.setFromDouble(x, x % 2 ? 1e30 : kNaN);
  std::vector<double> out2;
  referenceSdpa(p, ops.q, ops.k, v2, &mask, out2, nullptr);
  EXPECT_EQ(out2, out);
}

TEST(ReferenceTest, FullyMaskedRowGivesZeroAndMinusInfLse) {
  SdpaProblem p = makeProblem(1, 1, 1, 3, 4, 4, 4);
  p.mask = MaskKind::Bool;
  p.maskShape = {1, 1, 3, 4};
  p.lse = true;
  Operands ops = randomOperands(p, 21);
  HostTensor mask = makeTensor(DType::Bool, {1, 1, 3, 4},
                               {1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1});
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, &mask, out, &lse);
  for (int x = 0; x < 4; ++x) {
    EXPECT_EQ(out[4 + x], 0.0);
    EXPECT_TRUE(std::isfinite(out[x]));
    EXPECT_TRUE(std::isfinite(out[8 + x]));
  }
  EXPECT_EQ(lse[1], -kInf);
  EXPECT_TRUE(std::isfinite(lse[0]));

  // A float mask of -inf over a whole row means the same thing.
  SdpaProblem pf = p;
  pf.mask = MaskKind::Float;
  HostTensor fmask = HostTensor::zeros(DType::F32, {1, 1, 3, 4});
  for (int64_t i = 0; i < 12; ++i)
    fmask.setFromDouble(i, mask.getAsDouble(i) != 0 ? 0.0 : -kInf);
  std::vector<double> outF, lseF;
  referenceSdpa(pf, ops.q, ops.k, ops.v, &fmask, outF, &lseF);
  EXPECT_EQ(outF, out);
  EXPECT_EQ(lseF, lse);
}

TEST(ReferenceTest, GroupedQueryHeadsUseTheirKeyValueHead) {
  SdpaProblem p = makeProblem(2, 4, 2, 5, 7, 8, 6);
  p.lse = true;
  Operands ops = randomOperands(p, 31);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  ASSERT_EQ(out.size(), static_cast<size_t>(2 * 4 * 5 * 6));

  SdpaProblem single = makeProblem(1, 1, 1, 5, 7, 8, 6);
  single.lse = true;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 4; ++h) {
      // Heads 0, 1 read kv head 0; heads 2, 3 read kv head 1.
      int64_t kvHead = h / 2;
      std::vector<double> headOut, headLse;
      referenceSdpa(single, sliceHead(ops.q, b, h), sliceHead(ops.k, b, kvHead),
                    sliceHead(ops.v, b, kvHead), nullptr, headOut, &headLse);
      size_t row0 = static_cast<size_t>((b * 4 + h) * 5);
      for (size_t i = 0; i < headOut.size(); ++i)
        ASSERT_EQ(out[row0 * 6 + i], headOut[i]) << "b " << b << " h " << h;
      for (size_t i = 0; i < headLse.size(); ++i)
        ASSERT_EQ(lse[row0 + i], headLse[i]);
    }
  }
  // Sanity: heads sharing a kv head but with different queries differ.
  EXPECT_NE(out[0], out[5 * 6]);
}

/// Runs `causal` and the equivalent explicit -inf float mask and expects
/// identical results.
void checkCausalAgainstMask(Causal causal, int64_t lq, int64_t lk) {
  SdpaProblem p = makeProblem(1, 2, 1, lq, lk, 4, 3);
  p.lse = true;
  p.causal = causal;
  Operands ops = randomOperands(p, 41 + lq * 10 + lk);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);

  SdpaProblem pm = p;
  pm.causal = Causal::None;
  pm.mask = MaskKind::Float;
  pm.maskShape = {1, 1, lq, lk};
  HostTensor mask = HostTensor::zeros(DType::F32, {1, 1, lq, lk});
  int64_t admitted = 0;
  for (int64_t i = 0; i < lq; ++i) {
    for (int64_t j = 0; j < lk; ++j) {
      bool visible = causal == Causal::TopLeft ? j <= i : j <= i + lk - lq;
      admitted += visible;
      mask.setFromDouble(i * lk + j, visible ? 0.0 : -kInf);
    }
  }
  std::vector<double> outM, lseM;
  referenceSdpa(pm, ops.q, ops.k, ops.v, &mask, outM, &lseM);
  EXPECT_EQ(out, outM) << "lq " << lq << " lk " << lk;
  EXPECT_EQ(lse, lseM) << "lq " << lq << " lk " << lk;
  EXPECT_EQ(p.flops(), 2 * 1 * 2 * (4 + 3) * admitted);

  // Rows with nothing visible are exactly 0 / -inf; the rest are finite.
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < lq; ++i) {
      int64_t lastVisible = causal == Causal::TopLeft ? i : i + lk - lq;
      size_t row = static_cast<size_t>(h * lq + i);
      if (lastVisible < 0) {
        EXPECT_EQ(lse[row], -kInf);
        for (int64_t x = 0; x < 3; ++x)
          EXPECT_EQ(out[row * 3 + x], 0.0);
      } else {
        EXPECT_TRUE(std::isfinite(lse[row]));
      }
    }
  }
}

TEST(ReferenceTest, CausalMatchesExplicitMask) {
  for (Causal causal : {Causal::TopLeft, Causal::BottomRight})
    for (auto [lq, lk] :
         {std::pair<int64_t, int64_t>{3, 5}, {5, 3}, {4, 4}, {1, 6}, {6, 1}})
      checkCausalAgainstMask(causal, lq, lk);
}

TEST(ReferenceTest, CausalAlignmentDiffersWhenLengthsDiffer) {
  // lq = 2, lk = 4: top_left row 0 sees key 0 only, so its output is exactly
  // V row 0; bottom_right row 0 sees keys 0..2.
  SdpaProblem p = makeProblem(1, 1, 1, 2, 4, 4, 4);
  Operands ops = randomOperands(p, 51);
  std::vector<double> topLeft, bottomRight;
  p.causal = Causal::TopLeft;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, topLeft, nullptr);
  p.causal = Causal::BottomRight;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, bottomRight, nullptr);
  for (int x = 0; x < 4; ++x)
    EXPECT_EQ(topLeft[x], ops.v.getAsDouble(x));
  EXPECT_NE(topLeft, bottomRight);
  // Row 1 of bottom_right sees every key: the same as no causal rule.
  std::vector<double> none;
  p.causal = Causal::None;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, none, nullptr);
  for (int x = 4; x < 8; ++x)
    EXPECT_EQ(bottomRight[x], none[x]);
}

TEST(ReferenceTest, FloatMaskBroadcastEqualsMaterializedMask) {
  SdpaProblem p = makeProblem(2, 2, 2, 3, 5, 4, 4);
  p.lse = true;
  p.mask = MaskKind::Float;
  Operands ops = randomOperands(p, 61);
  std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 3, 5}, {2, 1, 1, 5}, {1, 2, 3, 1}, {1, 1, 1, 1}};
  uint64_t seed = 70;
  for (const auto &shape : shapes) {
    HostTensor small = randomTensor(DType::F32, shape, seed++);
    small.setFromDouble(0, -kInf); // Exercise -inf through broadcasting too.
    HostTensor full = HostTensor::zeros(DType::F32, {2, 2, 3, 5});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 5; ++j) {
            int64_t src = (((shape[0] == 1 ? 0 : b) * shape[1] +
                            (shape[1] == 1 ? 0 : h)) *
                               shape[2] +
                           (shape[2] == 1 ? 0 : i)) *
                              shape[3] +
                          (shape[3] == 1 ? 0 : j);
            full.setFromDouble(((b * 2 + h) * 3 + i) * 5 + j,
                               small.getAsDouble(src));
          }
    SdpaProblem pSmall = p, pFull = p;
    pSmall.maskShape = shape;
    pFull.maskShape = {2, 2, 3, 5};
    std::vector<double> outSmall, lseSmall, outFull, lseFull;
    referenceSdpa(pSmall, ops.q, ops.k, ops.v, &small, outSmall, &lseSmall);
    referenceSdpa(pFull, ops.q, ops.k, ops.v, &full, outFull, &lseFull);
    ASSERT_EQ(messageOf(pSmall.validate()), "");
    EXPECT_EQ(outSmall, outFull);
    EXPECT_EQ(lseSmall, lseFull);
    for (double x : outSmall)
      EXPECT_FALSE(std::isnan(x));
  }
}

TEST(ReferenceTest, FloatMaskIsAddedToTheScores) {
  // Adding the same constant to a whole row changes nothing (softmax is
  // shift-invariant) except the lse, which moves by that constant.
  SdpaProblem p = makeProblem(1, 1, 1, 2, 3, 4, 4);
  p.lse = true;
  Operands ops = randomOperands(p, 81);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  p.mask = MaskKind::Float;
  p.maskShape = {1, 1, 1, 1};
  HostTensor c = makeTensor(DType::F32, {1, 1, 1, 1}, {2.5});
  std::vector<double> outC, lseC;
  referenceSdpa(p, ops.q, ops.k, ops.v, &c, outC, &lseC);
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(outC[i], out[i], 1e-14);
  EXPECT_NEAR(lseC[0], lse[0] + 2.5, 1e-14);
  EXPECT_NEAR(lseC[1], lse[1] + 2.5, 1e-14);
}

TEST(ReferenceTest, LseIsLogSumExpOfScaledScores) {
  SdpaProblem p = makeProblem(1, 2, 2, 3, 6, 5, 2);
  p.scale = 0.37;
  p.lse = true;
  Operands ops = randomOperands(p, 91);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t i = 0; i < 3; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < 6; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < 5; ++x)
          dot += ops.q.getAsDouble((h * 3 + i) * 5 + x) *
                 ops.k.getAsDouble((h * 6 + j) * 5 + x);
        sum += std::exp(0.37 * dot);
      }
      EXPECT_NEAR(lse[h * 3 + i], std::log(sum), 1e-13);
    }
  }
}

TEST(ReferenceTest, LargeScoresDoNotOverflow) {
  // exp(1000) overflows a double; the max-subtracted softmax does not.
  SdpaProblem p = makeProblem(1, 1, 1, 1, 2, 1, 1);
  p.scale = 1.0;
  p.lse = true;
  HostTensor q = makeTensor(DType::F32, {1, 1, 1, 1}, {1000});
  HostTensor k = makeTensor(DType::F32, {1, 1, 2, 1}, {1, 1});
  HostTensor v = makeTensor(DType::F32, {1, 1, 2, 1}, {2, 4});
  std::vector<double> out, lse;
  referenceSdpa(p, q, k, v, nullptr, out, &lse);
  EXPECT_EQ(out[0], 3.0);
  EXPECT_NEAR(lse[0], 1000 + std::log(2.0), 1e-12);
}

TEST(ReferenceTest, NaNPropagatesToTheRowsItTouches) {
  SdpaProblem p = makeProblem(1, 1, 1, 3, 4, 2, 2);
  p.lse = true;
  Operands ops = randomOperands(p, 101);
  ops.q.setFromDouble(1 * 2 + 1, kNaN); // Query row 1.
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3]) && std::isnan(lse[1]));
  for (int64_t x : {0, 1, 4, 5})
    EXPECT_FALSE(std::isnan(out[x]));

  // A NaN in a visible key's value row reaches every row.
  Operands ops2 = randomOperands(p, 101);
  ops2.v.setFromDouble(0, kNaN);
  referenceSdpa(p, ops2.q, ops2.k, ops2.v, nullptr, out, &lse);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(std::isnan(out[i * 2]));
    EXPECT_FALSE(std::isnan(out[i * 2 + 1]));
  }
}

TEST(ReferenceTest, LowPrecisionInputsAreReadExactly) {
  SdpaProblem p = makeProblem(1, 2, 1, 3, 4, 8, 8);
  for (DType dtype : {DType::F16, DType::BF16}) {
    Operands low = randomOperands(p, 111, dtype);
    // The same values, held as f64.
    Operands wide;
    for (auto [from, to] :
         {std::pair<HostTensor *, HostTensor *>{&low.q, &wide.q},
          {&low.k, &wide.k},
          {&low.v, &wide.v}}) {
      *to = HostTensor::zeros(DType::F64, from->shape);
      for (int64_t i = 0; i < from->numel(); ++i)
        to->setFromDouble(i, from->getAsDouble(i));
    }
    std::vector<double> outLow, outWide;
    referenceSdpa(p, low.q, low.k, low.v, nullptr, outLow, nullptr);
    referenceSdpa(p, wide.q, wide.k, wide.v, nullptr, outWide, nullptr);
    EXPECT_EQ(outLow, outWide) << dtypeName(dtype);
  }
}

TEST(ReferenceTest, FlopsCountAdmittedPairs) {
  SdpaProblem p = makeProblem(1, 1, 1, 4, 4, 1, 1);
  // 2 * b * hq * (d + dv) = 4 per admitted pair here.
  EXPECT_EQ(p.flops(), 4 * 16);
  p.causal = Causal::TopLeft;
  EXPECT_EQ(p.flops(), 4 * 10);
  p.causal = Causal::BottomRight;
  EXPECT_EQ(p.flops(), 4 * 10);
  p.lq = 2;
  EXPECT_EQ(p.flops(), 4 * (3 + 4));
  p.causal = Causal::TopLeft;
  EXPECT_EQ(p.flops(), 4 * (1 + 2));
  p.lq = 4;
  p.lk = 2;
  EXPECT_EQ(p.flops(), 4 * (1 + 2 + 2 + 2));
  p.causal = Causal::BottomRight; // Rows 0, 1 see nothing.
  EXPECT_EQ(p.flops(), 4 * (0 + 0 + 1 + 2));

  SdpaProblem big = makeProblem(2, 8, 2, 128, 256, 64, 32);
  EXPECT_EQ(big.flops(), int64_t(2) * 2 * 8 * (64 + 32) * 128 * 256);

  // The closed form against brute force over many shapes.
  for (Causal causal : {Causal::TopLeft, Causal::BottomRight}) {
    for (int64_t lq = 1; lq <= 12; ++lq) {
      for (int64_t lk = 1; lk <= 12; ++lk) {
        SdpaProblem s = makeProblem(3, 2, 1, lq, lk, 5, 7);
        s.causal = causal;
        int64_t pairs = 0;
        for (int64_t i = 0; i < lq; ++i)
          for (int64_t j = 0; j < lk; ++j)
            pairs += causal == Causal::TopLeft ? j <= i : j <= i + lk - lq;
        ASSERT_EQ(s.flops(), 2 * 3 * 2 * (5 + 7) * pairs)
            << "lq " << lq << " lk " << lk;
      }
    }
  }
}

TEST(ReferenceTest, FlopsUnderWindowsAndKeyLengthsMatchBruteForce) {
  const int64_t huge = std::numeric_limits<int64_t>::max();
  const int64_t sides[] = {-1, 0, 1, 2, 5, huge};
  for (Causal causal : {Causal::None, Causal::TopLeft, Causal::BottomRight})
    for (int64_t left : sides)
      for (int64_t right : sides)
        for (int64_t lq = 1; lq <= 7; ++lq)
          for (int64_t lk = 1; lk <= 7; ++lk) {
            SdpaProblem s = makeProblem(2, 1, 1, lq, lk, 1, 1);
            s.causal = causal;
            s.window = std::make_pair(left, right);
            s.keyLengths = true;
            s.keyLengthValues = {lk - 2}; // Batch 1: no value, all lk keys.
            int64_t pairs = 0;
            for (int64_t batch = 0; batch < 2; ++batch) {
              int64_t n = batch == 0 ? std::max<int64_t>(0, lk - 2) : lk;
              for (int64_t i = 0; i < lq; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  int64_t diag = causal == Causal::TopLeft ? i : i + n - lq;
                  bool seen = (left < 0 || diag - j <= left) &&
                              (right < 0 || j - diag <= right);
                  if (causal == Causal::TopLeft)
                    seen = seen && j <= i;
                  if (causal == Causal::BottomRight)
                    seen = seen && j <= i + n - lq;
                  pairs += seen;
                }
            }
            ASSERT_EQ(s.flops(), 2 * 1 * (1 + 1) * pairs)
                << "causal " << static_cast<int>(causal) << " window " << left
                << ":" << right << " lq " << lq << " lk " << lk;
          }
}

TEST(ReferenceTest, FlopsOfHugeBandedProblemsAreClosedForm) {
  // Sizes at the 2^40-element limit: a per-row or per-batch count would run
  // for hours (the parser fuzzer timed out on such a spec).
  SdpaProblem rows = makeProblem(1, 1, 1, int64_t(1) << 40, 1, 1, 1);
  rows.causal = Causal::TopLeft; // Every row sees key 0; 4 FLOPs a pair.
  rows.window = std::make_pair(std::numeric_limits<int64_t>::max(), int64_t(0));
  EXPECT_EQ(rows.flops(), 4 * (int64_t(1) << 40));
  rows.window = std::make_pair(int64_t(0), int64_t(0)); // Row 0 only.
  EXPECT_EQ(rows.flops(), 4);
  SdpaProblem batches = makeProblem(int64_t(1) << 40, 1, 1, 1, 1, 1, 1);
  batches.keyLengths = true;
  EXPECT_EQ(batches.flops(), 4 * (int64_t(1) << 40));
}

TEST(ReferenceTest, ValidateReportsProblems) {
  SdpaProblem p = makeProblem(1, 8, 2, 16, 16, 64, 64);
  EXPECT_EQ(messageOf(p.validate()), "");
  p.hkv = 3;
  EXPECT_EQ(messageOf(p.validate()),
            "expected hq (8) to be a multiple of hkv (3)");
  p.hkv = 2;
  p.lk = 0;
  EXPECT_EQ(messageOf(p.validate()), "expected lk to be positive, got 0");
  p.lk = 16;
  p.d = -1;
  EXPECT_NE(messageOf(p.validate()).find("positive"), std::string::npos);
  p.d = 64;
  p.mask = MaskKind::Bool;
  p.maskShape = {1, 16, 16};
  EXPECT_EQ(messageOf(p.validate()),
            "expected a rank-4 mask shape, got rank 3");
  p.maskShape = {1, 4, 16, 16};
  EXPECT_EQ(messageOf(p.validate()),
            "expected mask dim 1 (4) to be 1 or equal hq (8)");
  p.maskShape = {1, 8, 1, 16};
  EXPECT_EQ(messageOf(p.validate()), "");
}

TEST(ReferenceTest, BadOperandsGiveNaNNotACrash) {
  SdpaProblem p = makeProblem(1, 2, 2, 3, 4, 8, 8);
  p.lse = true;
  Operands ops = randomOperands(p, 121);
  EXPECT_EQ(messageOf(validateOperands(p, ops.q, ops.k, ops.v, nullptr)), "");
  HostTensor shortKey = randomTensor(DType::F32, {1, 2, 3, 8}, 1);
  EXPECT_EQ(messageOf(validateOperands(p, ops.q, shortKey, ops.v, nullptr)),
            "expected key of shape 1x2x4x8, got 1x2x3x8");
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, shortKey, ops.v, nullptr, out, &lse);
  ASSERT_EQ(out.size(), static_cast<size_t>(2 * 3 * 8));
  ASSERT_EQ(lse.size(), 6u);
  for (double x : out)
    EXPECT_TRUE(std::isnan(x));

  p.mask = MaskKind::Bool;
  p.maskShape = {1, 1, 3, 4};
  EXPECT_EQ(messageOf(validateOperands(p, ops.q, ops.k, ops.v, nullptr)),
            "the problem has a mask but no mask tensor was given");
  HostTensor floatMask = HostTensor::zeros(DType::F32, {1, 1, 3, 4});
  EXPECT_EQ(messageOf(validateOperands(p, ops.q, ops.k, ops.v, &floatMask)),
            "expected an i1 mask, got f32");
  // An invalid problem is reported before its operands.
  p.hkv = 3;
  EXPECT_EQ(messageOf(validateOperands(p, ops.q, ops.k, ops.v, &floatMask)),
            "expected hq (2) to be a multiple of hkv (3)");
}

TEST(CompareTest, ExactMatchIsZero) {
  HostTensor got = makeTensor(DType::F32, {4}, {1, -2, 0.5, 3});
  ErrorStats s = compareToReference(got, {1, -2, 0.5, 3});
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
  EXPECT_EQ(s.refMaxAbs, 3.0);
  EXPECT_FALSE(s.hasNaN);
  EXPECT_EQ(s.count, 4);
}

TEST(CompareTest, ErrorMeasures) {
  HostTensor got = makeTensor(DType::F64, {2}, {3.5, 4});
  ErrorStats s = compareToReference(got, {3, 4});
  EXPECT_DOUBLE_EQ(s.maxAbs, 0.5);
  EXPECT_DOUBLE_EQ(s.relL2, 0.5 / 5.0);
  // A zero reference: relL2 falls back to the absolute norm.
  s = compareToReference(got, {0, 0});
  EXPECT_DOUBLE_EQ(s.relL2, std::sqrt(3.5 * 3.5 + 16));
  EXPECT_DOUBLE_EQ(s.maxAbs, 4.0);
  // f16 results are read through their rounding.
  HostTensor half = makeTensor(DType::F16, {1}, {0.1});
  s = compareToReference(half, {0.1});
  EXPECT_GT(s.maxAbs, 0.0);
  EXPECT_LT(s.maxAbs, 1e-4);
}

TEST(CompareTest, NaNHandling) {
  HostTensor got = makeTensor(DType::F32, {3}, {1, kNaN, 3});
  ErrorStats s = compareToReference(got, {1, 2, 3});
  EXPECT_TRUE(s.hasNaN);
  EXPECT_EQ(s.maxAbs, kInf);
  EXPECT_EQ(s.relL2, kInf);

  // NaN in both at the same place: skipped.
  s = compareToReference(got, {1, kNaN, 3});
  EXPECT_FALSE(s.hasNaN);
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
  EXPECT_EQ(s.count, 2);

  // NaN only in the reference: not a match.
  HostTensor finite = makeTensor(DType::F32, {3}, {1, 2, 3});
  s = compareToReference(finite, {1, kNaN, 3});
  EXPECT_FALSE(s.hasNaN);
  EXPECT_EQ(s.relL2, kInf);

  // A poisoned (never written) output fails.
  HostTensor poisoned = HostTensor::zeros(DType::BF16, {3});
  poisoned.fillNaN();
  s = compareToReference(poisoned, {1, 2, 3});
  EXPECT_TRUE(s.hasNaN);
}

TEST(CompareTest, InfinitiesForLse) {
  HostTensor got = makeTensor(DType::F32, {3}, {-kInf, 1.5, 2});
  ErrorStats s = compareToReference(got, {-kInf, 1.5, 2});
  EXPECT_EQ(s.maxAbs, 0.0);
  EXPECT_EQ(s.relL2, 0.0);
  EXPECT_FALSE(s.hasNaN);
  EXPECT_EQ(s.refMaxAbs, 2.0);
  // -inf where the reference is finite, or the reverse, is an infinite error.
  s = compareToReference(got, {0.0, 1.5, 2});
  EXPECT_EQ(s.maxAbs, kInf);
  HostTensor finite = makeTensor(DType::F32, {3}, {0, 1.5, 2});
  s = compareToReference(finite, {-kInf, 1.5, 2});
  EXPECT_EQ(s.relL2, kInf);
  s = compareToReference(got, {kInf, 1.5, 2});
  EXPECT_EQ(s.relL2, kInf);
}

TEST(CompareTest, SizeMismatchAndTensors) {
  HostTensor got = makeTensor(DType::F32, {3}, {1, 2, 3});
  ErrorStats s = compareToReference(got, {1, 2});
  EXPECT_EQ(s.relL2, kInf);
  EXPECT_EQ(s.count, 0);

  HostTensor ref = makeTensor(DType::F64, {3}, {1, 2, 3.5});
  s = compareTensors(got, ref);
  EXPECT_DOUBLE_EQ(s.maxAbs, 0.5);
  EXPECT_EQ(s.count, 3);
  HostTensor other = makeTensor(DType::F64, {1, 3}, {1, 2, 3});
  s = compareTensors(got, other);
  EXPECT_EQ(s.relL2, kInf);
}

} // namespace

TEST(ReferenceTest, RowStrideComputesTheSampledRowsOnly) {
  SdpaProblem p = makeProblem(1, 2, 2, 7, 9, 8, 4);
  p.lse = true;
  p.causal = Causal::BottomRight;
  Operands ops = randomOperands(p, 5);
  std::vector<double> full, fullLse, sampled, sampledLse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, full, &fullLse);
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, sampled, &sampledLse,
                /*rowStride=*/3);
  ASSERT_EQ(sampled.size(), full.size());
  for (int64_t row = 0; row < 2 * 7; ++row) {
    bool kept = (row % 7) % 3 == 0;
    EXPECT_EQ(kept, !std::isnan(sampledLse[row])) << "row " << row;
    if (kept) {
      EXPECT_EQ(sampledLse[row], fullLse[row]);
    }
    for (int64_t x = 0; x < 4; ++x) {
      double s = sampled[row * 4 + x];
      if (kept) {
        EXPECT_EQ(s, full[row * 4 + x]);
      } else {
        EXPECT_TRUE(std::isnan(s));
      }
    }
  }
}

namespace {

/// The problem of the sensitivity tests: one batch, two heads, 64 queries,
/// 200 keys, d = 64, scale 1/8, with the lse.
SdpaProblem sensProblem() {
  SdpaProblem p = makeProblem(1, 2, 2, 64, 200, 64, 64);
  p.lse = true;
  return p;
}

/// Random normal operands with q and k multiplied by `qkScale` (then stored
/// as f32): qkScale 30 makes the logits thousands wide, so softmax is almost
/// one-hot and its few near-ties decide the output.
Operands sensOperands(const SdpaProblem &p, uint64_t seed, double qkScale) {
  Operands ops = randomOperands(p, seed);
  for (HostTensor *t : {&ops.q, &ops.k})
    for (int64_t i = 0; i < t->numel(); ++i)
      t->setFromDouble(i, t->getAsDouble(i) * qkScale);
  return ops;
}

/// The reference with every score computed as an f32 kernel would: f32
/// products accumulated in f32, times the f32 scale; softmax and P.V in
/// double. No mask, no causal rule, hq == hkv.
std::vector<double> referenceWithF32Scores(const SdpaProblem &p,
                                           const Operands &ops) {
  std::vector<double> out(static_cast<size_t>(p.b * p.hq * p.lq * p.dv));
  std::vector<double> scores(static_cast<size_t>(p.lk));
  for (int64_t row = 0; row < p.b * p.hq * p.lq; ++row) {
    int64_t head = row / p.lq;
    double rowMax = -kInf;
    for (int64_t j = 0; j < p.lk; ++j) {
      float acc = 0;
      for (int64_t x = 0; x < p.d; ++x)
        acc +=
            static_cast<float>(ops.q.getAsDouble(row * p.d + x)) *
            static_cast<float>(ops.k.getAsDouble((head * p.lk + j) * p.d + x));
      scores[j] = acc * static_cast<float>(p.scale);
      rowMax = std::max(rowMax, scores[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < p.lk; ++j) {
      double e = std::exp(scores[j] - rowMax);
      sum += e;
      for (int64_t x = 0; x < p.dv; ++x)
        out[row * p.dv + x] +=
            e * ops.v.getAsDouble((head * p.lk + j) * p.dv + x);
    }
    for (int64_t x = 0; x < p.dv; ++x)
      out[row * p.dv + x] /= sum;
  }
  return out;
}

HostTensor asTensor(const std::vector<double> &values,
                    std::vector<int64_t> shape) {
  HostTensor t = HostTensor::zeros(DType::F64, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    t.setFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

TEST(SensitivityTest, NoiseFollowsTheFormula) {
  // With one key the lse is the score itself, so the perturbed lse minus the
  // plain one is exactly 2^-24 * sqrt(d) * |scale| * ||q_i o k_j|| * xi.
  // A negative scale checks the |scale|; grouped heads check that the noise
  // is keyed by the query head.
  SdpaProblem p = makeProblem(2, 4, 2, 512, 1, 8, 3);
  p.scale = -0.3;
  p.lse = true;
  Operands ops = randomOperands(p, 7);
  std::vector<double> out, lse, outNoisy, lseNoisy;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, outNoisy, &lseNoisy, 1, false,
                /*scoreNoiseSeed=*/42);
  // A single visible key: out is V whatever the score.
  EXPECT_EQ(outNoisy, out);

  std::vector<double> xi;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 4; ++h) {
      for (int64_t i = 0; i < 512; ++i) {
        int64_t row = (b * 4 + h) * 512 + i, kvRow = b * 2 + h / 2;
        double normSq = 0;
        for (int64_t x = 0; x < 8; ++x) {
          double prod =
              ops.q.getAsDouble(row * 8 + x) * ops.k.getAsDouble(kvRow * 8 + x);
          normSq += prod * prod;
        }
        double unit =
            std::ldexp(1.0, -24) * std::sqrt(8.0) * 0.3 * std::sqrt(normSq);
        xi.push_back((lseNoisy[row] - lse[row]) / unit);
      }
    }
  }
  double mean = 0, var = 0, lagged = 0;
  for (double x : xi)
    mean += x;
  mean /= xi.size();
  for (size_t n = 0; n < xi.size(); ++n) {
    var += (xi[n] - mean) * (xi[n] - mean);
    if (n)
      lagged += (xi[n] - mean) * (xi[n - 1] - mean);
  }
  var /= xi.size();
  lagged /= (xi.size() - 1) * var;
  // 4096 standard normals: standard errors 0.016 (mean), 0.022 (variance)
  // and 0.016 (lag-1 correlation).
  EXPECT_LT(std::fabs(mean), 0.08);
  EXPECT_NEAR(var, 1.0, 0.11);
  EXPECT_LT(std::fabs(lagged), 0.08);
  // Heads 0 and 1 share key/value head 0 but get their own noise.
  EXPECT_NE(xi[0], xi[512]);
}

TEST(SensitivityTest, OrdinaryInputsAreWellConditioned) {
  SdpaProblem p = sensProblem();
  Operands ops = sensOperands(p, 11, 1.0);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  Sensitivity s =
      measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  EXPECT_GT(s.outRelL2, 0.0);
  EXPECT_LT(s.outRelL2, 1e-6);
  EXPECT_LT(s.outMaxAbs, 1e-5);
  EXPECT_GT(s.lseRelL2, 0.0);
  EXPECT_LT(s.lseRelL2, 1e-6);
  EXPECT_LT(s.lseMaxAbs, 1e-5);
  // The fixed f32 bound is what decides: sens barely moves it.
  EXPECT_LT(4 * s.outRelL2, 0.5e-5);
}

/// Mean and variance of xs.
std::pair<double, double> meanAndVariance(const std::vector<double> &xs) {
  double mean = 0, var = 0;
  for (double x : xs)
    mean += x;
  mean /= xs.size();
  for (double x : xs)
    var += (x - mean) * (x - mean);
  return {mean, var / xs.size()};
}

TEST(SensitivityTest, BiasNoiseFollowsTheFormula) {
  // q = 0 (no dot-product noise), one key, ALiBi and a float mask: the lse
  // is the bias itself, -slope * |i + lk - lq| + m, and the perturbed lse
  // moves from it by 2^-24 * (slope * distance + |m|) * xi'.
  SdpaProblem p = makeProblem(1, 2, 2, 512, 1, 8, 3);
  p.lse = true;
  p.alibi = SdpaProblem::Alibi::Heads;
  p.alibiSlopeValues = {0.25, 3.0};
  p.mask = MaskKind::Float;
  p.maskShape = {1, 1, 512, 1};
  Operands ops = randomOperands(p, 7);
  for (int64_t x = 0; x < ops.q.numel(); ++x)
    ops.q.setFromDouble(x, 0.0);
  HostTensor mask = randomTensor(DType::F32, {1, 1, 512, 1}, 9);
  std::vector<double> out, lse, outNoisy, lseNoisy;
  referenceSdpa(p, ops.q, ops.k, ops.v, &mask, out, &lse);
  referenceSdpa(p, ops.q, ops.k, ops.v, &mask, outNoisy, &lseNoisy, 1, false,
                /*scoreNoiseSeed=*/42);
  std::vector<double> xi;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 512; ++i) {
      double bias =
          p.alibiSlopeValues[h] * (511 - i) + std::fabs(mask.getAsDouble(i));
      xi.push_back((lseNoisy[h * 512 + i] - lse[h * 512 + i]) /
                   std::ldexp(bias, -24));
    }
  auto [mean, var] = meanAndVariance(xi);
  // 1024 standard normals: standard errors 0.031 (mean), 0.044 (variance).
  EXPECT_LT(std::fabs(mean), 0.15);
  EXPECT_NEAR(var, 1.0, 0.2);
}

TEST(SensitivityTest, AlibiOverLongRowsWidensTheF32Bound) {
  // ALiBi over 1100 keys (scores down to -slope * 1099, i.e. -275 at a slope
  // of 1/4): the f32 score's own rounding moves the softmax by about 1e-5
  // (attn-run's case 637 of scripts/sweep.py --seed 20261203: fused and naive
  // 8.9e-6 from f64 and 1.1e-5 from each other), which the dot products'
  // noise alone put at 2.5e-7.
  SdpaProblem p = makeProblem(1, 2, 2, 33, 1100, 40, 40);
  p.causal = Causal::TopLeft;
  p.alibi = SdpaProblem::Alibi::Heads;
  p.alibiSlopeValues = {0.25, 0.4};
  Operands ops = randomOperands(p, 5);
  std::vector<double> out;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, nullptr);
  Sensitivity s =
      measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out, nullptr);
  EXPECT_GT(s.outRelL2, 2e-6);
}

TEST(SensitivityTest, HugeLogitsWidenTheF32Bound) {
  // q and k times 30: logits in the thousands, softmax almost one-hot. How
  // sensitive such an input is depends on whether some rows have near-ties
  // among their largest scores, which is chance: over these 16 inputs sens
  // ranges from ~1e-7 to ~5e-5. Computing the scores in f32 (the rounding
  // every f32 kernel makes) misses the f64 reference by more than the fixed
  // 1e-5 on several of them, and by no more than the bound with 4 * sens on
  // any of them.
  SdpaProblem p = sensProblem();
  double worstF32 = 0, largestSens = 0;
  int beyondFixedBound = 0;
  for (uint64_t seed = 17; seed <= 32; ++seed) {
    Operands ops = sensOperands(p, seed, 30.0);
    std::vector<double> out, lse;
    referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
    Sensitivity s = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out,
                                       &lse, /*rowStride=*/1, seed);
    largestSens = std::max(largestSens, s.outRelL2);

    HostTensor f32 =
        asTensor(referenceWithF32Scores(p, ops), {p.b, p.hq, p.lq, p.dv});
    ErrorStats err = compareToReference(f32, out);
    worstF32 = std::max(worstF32, err.relL2);
    EXPECT_LE(err.relL2, 1e-5 + 4 * s.outRelL2) << "seed " << seed;
    EXPECT_TRUE(judgeNumerics(err, DType::F32, false, std::nullopt, s.outRelL2,
                              s.outMaxAbs)
                    .pass)
        << "seed " << seed << ": " << err.relL2 << ", " << err.maxAbs;
    if (err.relL2 > 1e-5) {
      ++beyondFixedBound;
      EXPECT_GT(s.outRelL2, 1e-6) << "seed " << seed;
      // The fixed bound alone would fail a correct f32 computation.
      EXPECT_FALSE(
          judgeNumerics(err, DType::F32, false, std::nullopt, 0, 0).pass);
    }
  }
  EXPECT_GE(beyondFixedBound, 3);
  EXPECT_GT(worstF32, 1.2e-5);
  EXPECT_GT(largestSens, 1e-5);
}

TEST(SensitivityTest, DeterministicAndIndependentOfRowSampling) {
  SdpaProblem p = sensProblem();
  p.causal = Causal::BottomRight;
  Operands ops = sensOperands(p, 61, 5.0);
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, out, &lse);
  Sensitivity a = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out, &lse,
                                     1, /*seed=*/5);
  Sensitivity b = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out, &lse,
                                     1, /*seed=*/5);
  EXPECT_EQ(a.outRelL2, b.outRelL2);
  EXPECT_EQ(a.outMaxAbs, b.outMaxAbs);
  EXPECT_EQ(a.lseRelL2, b.lseRelL2);
  EXPECT_EQ(a.lseMaxAbs, b.lseMaxAbs);
  Sensitivity c = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out, &lse,
                                     1, /*seed=*/6);
  EXPECT_NE(a.outRelL2, c.outRelL2);
  // More trials can only find a larger deviation (the first three are the
  // same draws).
  Sensitivity more = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out,
                                        &lse, 1, /*seed=*/5, /*trials=*/6);
  EXPECT_GE(more.outRelL2, a.outRelL2);
  EXPECT_GE(more.outMaxAbs, a.outMaxAbs);
  Sensitivity none = measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, out,
                                        &lse, 1, 5, /*trials=*/0);
  EXPECT_EQ(none.outRelL2, 0.0);
  EXPECT_EQ(none.lseMaxAbs, 0.0);

  // A sampled perturbed reference perturbs each of its rows exactly as the
  // full one does.
  std::vector<double> full, fullLse, sampled, sampledLse;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, full, &fullLse, 1, false,
                /*scoreNoiseSeed=*/99);
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, sampled, &sampledLse, 5, false,
                /*scoreNoiseSeed=*/99);
  EXPECT_NE(full, out);
  int64_t keptRows = 0;
  for (int64_t row = 0; row < p.hq * p.lq; ++row) {
    if ((row % p.lq) % 5 != 0)
      continue;
    ++keptRows;
    ASSERT_EQ(sampledLse[row], fullLse[row]) << "row " << row;
    for (int64_t x = 0; x < p.dv; ++x)
      ASSERT_EQ(sampled[row * p.dv + x], full[row * p.dv + x]) << "row " << row;
  }
  EXPECT_EQ(keptRows, 2 * 13);
  // So the sampled sensitivity's max_abs is the maximum over a subset of
  // the same deviations.
  std::vector<double> outS, lseS;
  referenceSdpa(p, ops.q, ops.k, ops.v, nullptr, outS, &lseS, 5);
  Sensitivity s =
      measureSensitivity(p, ops.q, ops.k, ops.v, nullptr, outS, &lseS, 5, 5);
  EXPECT_GT(s.outMaxAbs, 0.0);
  EXPECT_LE(s.outMaxAbs, a.outMaxAbs);
  EXPECT_LE(s.lseMaxAbs, a.lseMaxAbs);
}

TEST(SensitivityTest, EmptyRowsNaNAndMismatches) {
  // A fully masked row (out 0, lse -inf in both) and a float mask holding
  // -inf are skipped, not infinite.
  SdpaProblem p = makeProblem(1, 2, 1, 3, 4, 8, 8);
  p.lse = true;
  p.mask = MaskKind::Float;
  p.maskShape = {1, 1, 3, 4};
  Operands ops = randomOperands(p, 71);
  HostTensor mask =
      makeTensor(DType::F32, {1, 1, 3, 4},
                 {0, -kInf, 0, 0.5, -kInf, -kInf, -kInf, -kInf, 0, 0, -1, 0});
  std::vector<double> out, lse;
  referenceSdpa(p, ops.q, ops.k, ops.v, &mask, out, &lse);
  ASSERT_EQ(lse[1], -kInf);
  Sensitivity s = measureSensitivity(p, ops.q, ops.k, ops.v, &mask, out, &lse);
  EXPECT_TRUE(std::isfinite(s.outRelL2) && std::isfinite(s.outMaxAbs));
  EXPECT_TRUE(std::isfinite(s.lseRelL2) && std::isfinite(s.lseMaxAbs));
  EXPECT_GT(s.outRelL2, 0.0);

  // NaN in a query row: that row is skipped, the others still count.
  Operands nanOps = ops;
  nanOps.q.setFromDouble(0, kNaN);
  referenceSdpa(p, nanOps.q, nanOps.k, nanOps.v, &mask, out, &lse);
  s = measureSensitivity(p, nanOps.q, nanOps.k, nanOps.v, &mask, out, &lse);
  EXPECT_TRUE(std::isfinite(s.outRelL2));
  EXPECT_GT(s.outRelL2, 0.0);

  // Without refLse the lse measures stay 0.
  s = measureSensitivity(p, ops.q, ops.k, ops.v, &mask, out, nullptr);
  EXPECT_EQ(s.lseRelL2, 0.0);
  EXPECT_EQ(s.lseMaxAbs, 0.0);

  // A reference of the wrong size: NaN, which judgeNumerics() reads as not
  // measured.
  std::vector<double> shortOut(out.begin(), out.end() - 1);
  s = measureSensitivity(p, ops.q, ops.k, ops.v, &mask, shortOut, &lse);
  EXPECT_TRUE(std::isnan(s.outRelL2));
  EXPECT_TRUE(std::isnan(s.outMaxAbs));
  EXPECT_FALSE(std::isnan(s.lseRelL2));
}

} // namespace

namespace {

// Sizes that --dims or a FILE's static types can give: every product is
// checked, so an overflow is a message, never a wrapped count.
TEST(ReferenceTest, ValidateRejectsSizesThatOverflow) {
  SdpaProblem p;
  p.b = int64_t(1) << 62;
  p.lq = p.lk = 4;
  EXPECT_EQ(errorOf(p.validate()),
            "b=4611686018427387904,hq=1,hkv=1,lq=4,lk=4,d=1,dv=1: the query "
            "tensor would have more than 2^40 elements");
  SdpaProblem flops;
  flops.lq = flops.lk = int64_t(1) << 40;
  EXPECT_EQ(errorOf(flops.validate()),
            "b=1,hq=1,hkv=1,lq=1099511627776,lk=1099511627776,d=1,dv=1: the "
            "FLOP count 2*b*hq*(d+dv)*lq*lk overflows int64");
  SdpaProblem fits;
  fits.lq = int64_t(1) << 40;
  EXPECT_EQ(messageOf(fits.validate()), "");
}

} // namespace
