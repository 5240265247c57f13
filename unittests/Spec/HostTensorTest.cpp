//===- HostTensorTest.cpp - Tests for HostTensor ----------------*- C++ -*-===//

#include "attn/Spec/HostTensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir::attn::exec;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

const float kInf = std::numeric_limits<float>::infinity();

TEST(DTypeTest, SizesNamesAndParsing) {
  EXPECT_EQ(dtypeSize(DType::F32), 4u);
  EXPECT_EQ(dtypeSize(DType::F16), 2u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::Bool), 1u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_STREQ(dtypeName(DType::F32), "f32");
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(dtypeName(DType::Bool), "i1");
  EXPECT_STREQ(dtypeName(DType::F64), "f64");

  EXPECT_EQ(parseDType("f32"), DType::F32);
  EXPECT_EQ(parseDType("f16"), DType::F16);
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("f64"), DType::F64);
  EXPECT_EQ(parseDType("bool"), DType::Bool);
  EXPECT_EQ(parseDType("i1"), DType::Bool);
  EXPECT_EQ(parseDType("f8"), std::nullopt);
  EXPECT_EQ(parseDType("F32"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
  // Every name dtypeName() prints reads back.
  for (DType d : {DType::F32, DType::F16, DType::BF16, DType::Bool, DType::F64})
    EXPECT_EQ(parseDType(dtypeName(d)), d) << dtypeName(d);
}

TEST(HalfTest, DecodesExactValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc100), -2.5f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0400), std::ldexp(1.0f, -14)); // 6.1035e-5
  EXPECT_EQ(halfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x7c00), kInf);
  EXPECT_EQ(halfToFloat(0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7e00)));
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
  EXPECT_EQ(bitsOf(halfToFloat(0x8000)), 0x80000000u); // -0
}

TEST(HalfTest, EncodesExactValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.5f), 0xc100);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(kInf), 0x7c00);
  EXPECT_EQ(floatToHalf(-kInf), 0xfc00);
  // Smallest normal, largest subnormal, smallest subnormal.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(6.1e-5f), 0x03ff); // Just below 2^-14.
}

TEST(HalfTest, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10 (odd).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 0x3c01 (odd) and 0x3c02 (even).
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above a tie rounds up.
  EXPECT_EQ(floatToHalf(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
            0x3c01);
  // Overflow: 65519 rounds down, 65520 is a tie with the odd 0x7bff -> Inf.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1.0e6f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1.0e6f), 0xfc00);
  // Subnormal ties: 2^-25 is halfway between 0 and 2^-24 -> 0.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(std::ldexp(5.0f, -25)), 0x0002);
  // Halfway between the largest subnormal (odd) and the smallest normal.
  EXPECT_EQ(floatToHalf(std::ldexp(2047.0f, -25)), 0x0400);
  // Far below the subnormal range, including float subnormals.
  EXPECT_EQ(floatToHalf(1.0e-30f), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(HalfTest, NaNStaysNaN) {
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xffc00000u, 0x7f802000u}) {
    uint16_t h = floatToHalf(floatFromBits(bits));
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << bits;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << bits;
    EXPECT_TRUE(std::isnan(halfToFloat(h)));
  }
}

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = halfToFloat(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    ASSERT_EQ(floatToHalf(f), h) << "bits 0x" << std::hex << i;
  }
}

TEST(BF16Test, ExactValuesAndRounding) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-2.5f), 0xc020);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16ToFloat(0xc020), -2.5f);
  EXPECT_EQ(floatToBf16(kInf), 0x7f80);
  EXPECT_EQ(floatToBf16(-kInf), 0xff80);
  EXPECT_EQ(bf16ToFloat(0x7f80), kInf);
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7 (odd).
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)),
            0x3f81);
  // The largest float lies above the last bf16 tie and overflows to Inf.
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBf16(bf16ToFloat(0x7f7f)), 0x7f7f);
  // Subnormals keep their top bits.
  EXPECT_EQ(floatToBf16(floatFromBits(0x00010000u)), 0x0001);
}

TEST(BF16Test, NaNStaysQuietNaN) {
  // A NaN whose payload sits only in the low 16 bits must not become Inf.
  for (uint32_t bits : {0x7f800001u, 0x7fc00000u, 0xff800100u, 0x7fffffffu}) {
    uint16_t b = floatToBf16(floatFromBits(bits));
    EXPECT_TRUE(std::isnan(bf16ToFloat(b))) << std::hex << bits;
    EXPECT_NE(b & 0x0040, 0) << "quiet bit, " << std::hex << bits;
  }
}

TEST(BF16Test, EveryBf16RoundTrips) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float f = bf16ToFloat(b);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBf16(f), b) << "bits 0x" << std::hex << i;
  }
}

TEST(HostTensorTest, ZerosNumelAndShape) {
  HostTensor t = HostTensor::zeros(DType::F16, {2, 8, 128, 64});
  EXPECT_EQ(t.numel(), 2 * 8 * 128 * 64);
  EXPECT_EQ(t.byteSize(), static_cast<size_t>(2 * 8 * 128 * 64 * 2));
  EXPECT_EQ(t.data.size(), t.byteSize());
  EXPECT_EQ(t.shapeString(), "2x8x128x64");
  EXPECT_EQ(t.raw(), static_cast<void *>(t.data.data()));
  EXPECT_EQ(t.getAsDouble(17), 0.0);

  HostTensor scalar = HostTensor::zeros(DType::F64, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.byteSize(), 8u);
  EXPECT_EQ(scalar.shapeString(), "");

  HostTensor empty = HostTensor::zeros(DType::F32, {3, 0});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.byteSize(), 0u);
  EXPECT_EQ(empty.shapeString(), "3x0");
}

TEST(HostTensorTest, TensorSpecDescribesAndAllocates) {
  TensorSpec spec{{2, 3, 5}, DType::BF16};
  HostTensor t = HostTensor::zeros(spec);
  EXPECT_EQ(t.shape, spec.shape);
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.byteSize(), static_cast<size_t>(2 * 3 * 5 * 2));
  EXPECT_EQ(t.data, std::vector<uint8_t>(t.byteSize(), 0));

  // The default element type is f32; equality compares shape and type.
  TensorSpec f32{{2, 3, 5}};
  EXPECT_EQ(f32.dtype, DType::F32);
  EXPECT_NE(f32, spec);
  EXPECT_EQ(f32, (TensorSpec{{2, 3, 5}, DType::F32}));
  EXPECT_NE(f32, (TensorSpec{{2, 3}, DType::F32}));
  EXPECT_EQ(HostTensor::zeros(TensorSpec{}).numel(), 1); // A rank-0 f32.
}

TEST(HostTensorTest, GetAndSetEachDType) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    HostTensor t = HostTensor::zeros(dtype, {4});
    t.setFromDouble(0, 1.0);
    t.setFromDouble(1, -2.5);
    t.setFromDouble(2, 0.1);
    t.setFromDouble(3, -std::numeric_limits<double>::infinity());
    EXPECT_EQ(t.getAsDouble(0), 1.0) << dtypeName(dtype);
    EXPECT_EQ(t.getAsDouble(1), -2.5) << dtypeName(dtype);
    EXPECT_EQ(t.getAsDouble(3), -std::numeric_limits<double>::infinity());
    double expected = 0.1;
    if (dtype == DType::F32)
      expected = 0.1f;
    else if (dtype == DType::F16)
      expected = halfToFloat(floatToHalf(0.1f));
    else if (dtype == DType::BF16)
      expected = bf16ToFloat(floatToBf16(0.1f));
    EXPECT_EQ(t.getAsDouble(2), expected) << dtypeName(dtype);
  }
  HostTensor f32 = HostTensor::zeros(DType::F32, {1});
  f32.setFromDouble(0, 3.0);
  EXPECT_EQ(f32.data, (std::vector<uint8_t>{0x00, 0x00, 0x40, 0x40}))
      << "little-endian raw bytes";

  HostTensor mask = HostTensor::zeros(DType::Bool, {3});
  mask.setFromDouble(0, 0.0);
  mask.setFromDouble(1, -3.0);
  mask.setFromDouble(2, 0.5);
  EXPECT_EQ(mask.data, (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(mask.getAsDouble(1), 1.0);
  mask.data[2] = 7; // Any non-zero byte reads as true.
  EXPECT_EQ(mask.getAsDouble(2), 1.0);

  // Out-of-range accesses read NaN and write nothing instead of crashing.
  EXPECT_TRUE(std::isnan(f32.getAsDouble(1)));
  EXPECT_TRUE(std::isnan(f32.getAsDouble(-1)));
  f32.setFromDouble(5, 1.0);
  EXPECT_EQ(f32.data.size(), 4u);
}

TEST(HostTensorTest, SetFromDoubleRoundsOnce) {
  // Rounding the double to float first would land exactly on the tie and
  // then round to even (down); the correctly rounded result is up.
  double justAboveHalfTie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  HostTensor h = HostTensor::zeros(DType::F16, {1});
  h.setFromDouble(0, justAboveHalfTie);
  EXPECT_EQ(h.getAsDouble(0), 1.0 + std::ldexp(1.0, -10));

  double justAboveBf16Tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  HostTensor b = HostTensor::zeros(DType::BF16, {1});
  b.setFromDouble(0, justAboveBf16Tie);
  EXPECT_EQ(b.getAsDouble(0), 1.0 + std::ldexp(1.0, -7));

  // Exact ties still round to even.
  h.setFromDouble(0, 1.0 + std::ldexp(1.0, -11));
  EXPECT_EQ(h.getAsDouble(0), 1.0);
  // Values beyond float range still become Inf, and NaN stays NaN.
  h.setFromDouble(0, 1e300);
  EXPECT_EQ(h.getAsDouble(0), std::numeric_limits<double>::infinity());
  b.setFromDouble(0, -1e300);
  EXPECT_EQ(b.getAsDouble(0), -std::numeric_limits<double>::infinity());
  b.setFromDouble(0, std::nan(""));
  EXPECT_TRUE(std::isnan(b.getAsDouble(0)));
  // Tiny doubles keep their sign through the round-to-odd step.
  h.setFromDouble(0, -1e-300);
  EXPECT_EQ(h.data, (std::vector<uint8_t>{0x00, 0x80}));
}

TEST(HostTensorTest, FillNaNPoisonsFloatsOnly) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    HostTensor t = HostTensor::zeros(dtype, {2, 3});
    t.fillNaN();
    for (int64_t i = 0; i < t.numel(); ++i)
      EXPECT_TRUE(std::isnan(t.getAsDouble(i))) << dtypeName(dtype);
  }
  HostTensor mask = HostTensor::zeros(DType::Bool, {3});
  mask.data = {1, 0, 1};
  mask.fillNaN();
  EXPECT_EQ(mask.data, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(RandomTest, NormalMomentsOverManySamples) {
  HostTensor t = HostTensor::zeros(DType::F32, {100000});
  fillRandomNormal(t, 42);
  double sum = 0, sumSq = 0;
  int64_t beyond3 = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    double x = t.getAsDouble(i);
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sumSq += x * x;
    beyond3 += std::fabs(x) > 3;
  }
  double n = static_cast<double>(t.numel());
  double mean = sum / n;
  double stddev = std::sqrt(sumSq / n - mean * mean);
  // The standard error of the mean is 1/sqrt(1e5) ~ 0.003.
  EXPECT_NEAR(mean, 0.0, 0.015);
  EXPECT_NEAR(stddev, 1.0, 0.015);
  // P(|x| > 3) = 0.27% for a normal: a uniform or a bad transform fails.
  EXPECT_GT(beyond3, 150);
  EXPECT_LT(beyond3, 400);
}

TEST(RandomTest, NormalIsDeterministicPerSeed) {
  HostTensor a = HostTensor::zeros(DType::F32, {1001});
  HostTensor b = HostTensor::zeros(DType::F32, {1001});
  HostTensor c = HostTensor::zeros(DType::F32, {1001});
  fillRandomNormal(a, 7);
  fillRandomNormal(b, 7);
  fillRandomNormal(c, 8);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  int64_t equal = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    equal += a.getAsDouble(i) == c.getAsDouble(i);
  EXPECT_LT(equal, 5);
}

TEST(RandomTest, NormalIsRoundedToTheDType) {
  HostTensor h = HostTensor::zeros(DType::F16, {257});
  HostTensor f = HostTensor::zeros(DType::F32, {257});
  HostTensor d = HostTensor::zeros(DType::F64, {257});
  fillRandomNormal(h, 3);
  fillRandomNormal(f, 3);
  fillRandomNormal(d, 3);
  for (int64_t i = 0; i < h.numel(); ++i) {
    // The same stream, each rounded once from the double draw.
    EXPECT_EQ(f.getAsDouble(i), static_cast<float>(d.getAsDouble(i)));
    HostTensor one = HostTensor::zeros(DType::F16, {1});
    one.setFromDouble(0, d.getAsDouble(i));
    EXPECT_EQ(h.getAsDouble(i), one.getAsDouble(0));
  }
}

TEST(RandomTest, BoolFrequencyFollowsPTrue) {
  HostTensor m = HostTensor::zeros(DType::Bool, {20000});
  fillRandomBool(m, 1, 0.25);
  int64_t trues = 0;
  for (uint8_t byte : m.data) {
    ASSERT_LE(byte, 1);
    trues += byte;
  }
  EXPECT_NEAR(static_cast<double>(trues) / 20000, 0.25, 0.02);

  HostTensor all = HostTensor::zeros(DType::Bool, {100});
  fillRandomBool(all, 1, 1.0);
  EXPECT_EQ(all.data, std::vector<uint8_t>(100, 1));
  fillRandomBool(all, 1, 0.0);
  EXPECT_EQ(all.data, std::vector<uint8_t>(100, 0));

  HostTensor again = HostTensor::zeros(DType::Bool, {20000});
  fillRandomBool(again, 1, 0.25);
  EXPECT_EQ(again.data, m.data);
  // fillRandomNormal on a mask gives a fair coin rather than garbage bytes.
  fillRandomNormal(again, 5);
  for (uint8_t byte : again.data)
    ASSERT_LE(byte, 1);
}

} // namespace

namespace {

TEST(HostTensorTest, ByteSizeOfIsOverflowChecked) {
  EXPECT_EQ(byteSizeOf({{2, 3}, DType::F16}), std::optional<int64_t>(12));
  EXPECT_EQ(byteSizeOf({{int64_t(1) << 62, 2}, DType::Bool}), std::nullopt);
  EXPECT_EQ(byteSizeOf({{int64_t(1) << 62}, DType::F32}), std::nullopt);
  EXPECT_EQ(byteSizeOf({{-1, 2}, DType::F32}), std::nullopt);
  HostTensor huge;
  huge.shape = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_EQ(huge.numel(), 0); // Not a wrapped product.
}

TEST(HostTensorTest, HostMemoryLimitIsPositive) {
  std::string why;
  EXPECT_GT(hostMemoryLimit(&why), 0u);
  EXPECT_FALSE(why.empty());
}

} // namespace
