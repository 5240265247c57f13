//===- PeakTest.cpp - Tests for the peak and read-bandwidth probes -*- C++
//-*-===//
//
// Each probe's figure is work over time, so each must do the work it counts:
// the FMA loop as many chains of as many lanes as its FLOP count says, the
// read patterns every word of their share once.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Peak.h"

#include "attn/Execution/Engine.h"
#include "attn/Codegen/CPU/CpuFeatures.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace mlir::attn::exec;

namespace {

// Chain k starts at k and steps x = x * a + b; the loop stores the sum of
// the chains, lane by lane. A loop with fewer chains or lanes than its
// shape (or FLOP count) says would store something else.
float expectedPeakSum(const PeakShape &shape, int64_t iterations) {
  const float a = 0.999999f, b = 1.0e-7f;
  float sum = 0;
  for (int k = 0; k < shape.chains; ++k) {
    float x = float(k);
    for (int64_t i = 0; i < iterations; ++i)
      x = std::fma(x, a, b);
    sum = k ? sum + x : x;
  }
  return sum;
}

TEST(PeakTest, HostShapeStaysInRegisters) {
  // The chains and the loop's two operands fit the vector registers: 32 of
  // 16 lanes with AVX-512, 16 of 8 lanes otherwise.
  PeakShape wide = peakShapeFor(/*avx512=*/true);
  PeakShape narrow = peakShapeFor(/*avx512=*/false);
  EXPECT_EQ(wide.lanes, 16);
  EXPECT_LE(wide.chains + 2, 32);
  EXPECT_EQ(narrow.lanes, 8);
  EXPECT_LE(narrow.chains + 2, 16);
  // Two FMA ports with a 4-cycle latency need 8 chains in flight.
  EXPECT_GE(narrow.chains, 8);
}

TEST(PeakTest, LoopComputesEveryChainAndLane) {
  std::unique_ptr<mlir::MLIRContext> context = createEngineContext();
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<PeakShape> shapes = {peakShapeFor(/*avx512=*/false)};
  if (features.lookup("avx512f"))
    shapes.push_back(peakShapeFor(/*avx512=*/true));
  for (const PeakShape &shape : shapes) {
    auto kernel = PeakKernel::compile(*context, shape, /*bf16Dot=*/false);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    EXPECT_EQ((*kernel)->flopPerIteration, 2.0 * shape.lanes * shape.chains);
    const int64_t iterations = 1000;
    llvm::Expected<double> seconds = (*kernel)->run(iterations);
    ASSERT_TRUE(bool(seconds)) << llvm::toString(seconds.takeError());
    float expected = expectedPeakSum(shape, iterations);
    for (int lane = 0; lane < shape.lanes; ++lane)
      EXPECT_NEAR((*kernel)->out[lane], expected, 1e-4f * std::abs(expected))
          << shape.lanes << " lanes, " << shape.chains << " chains, lane "
          << lane;
  }
}

/// x rounded to bf16 (to nearest even), as f32.
float roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

TEST(PeakTest, AmxLoopDoesEveryProduct) {
  if (!mlir::attn::hostGrantsAmx())
    GTEST_SKIP() << "no AMX tiles on this CPU or OS";
  std::unique_ptr<mlir::MLIRContext> context = createEngineContext();
  auto kernel = PeakKernel::compileText(
      *context, amxPeakKernelText(), PeakShape{16, 4}, 32.0 * 16 * 16 * 32 * 2);
  ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
  const int64_t iterations = 64;
  llvm::Expected<double> seconds = (*kernel)->run(iterations);
  ASSERT_TRUE(bool(seconds)) << llvm::toString(seconds.takeError());
  // Row 0 of the first C tile: 8 products per iteration, each a sum of 32
  // products of the same bf16 value, exact in f32 at this size.
  float a = roundToBf16(0.01f);
  float expected = float(iterations) * 8 * 32 * a * a;
  for (int lane = 0; lane < 16; ++lane)
    EXPECT_NEAR((*kernel)->out[lane], expected, 1e-5f * expected)
        << "lane " << lane;
}

TEST(ReadProbeTest, EveryPatternReadsEveryWordOnce) {
  // Word i holds 3^i (mod 2^64): a missed or repeated word changes the sum.
  std::vector<uint64_t> words(10007);
  uint64_t x = 1;
  for (uint64_t &w : words) {
    w = x;
    x *= 3;
  }
  // Shares that split into whole lines per stream and ones that leave words
  // over, from the buffer's start and from inside it.
  const std::pair<size_t, size_t> shares[] = {
      {0, 10007}, {0, 8192}, {13, 5000}, {5000, 10007}, {7, 7}, {1, 70}};
  for (auto [begin, end] : shares) {
    uint64_t expected = 0;
    for (size_t i = begin; i < end; ++i)
      expected += words[i];
    for (int streams : {1, 2, 3, 4, 8})
      for (size_t prefetch : {size_t(0), size_t(2048)})
        EXPECT_EQ(sumForReadProbe(words.data(), begin, end, streams, prefetch),
                  expected)
            << "words [" << begin << ", " << end << "), " << streams
            << " streams, prefetch " << prefetch;
  }
}

TEST(PairedPeakTest, EachCallAgainstTheBurstsAroundIt) {
  // Call 0 between bursts of 100 and 200 (mean 150), call 1 between 200
  // and 50 (mean 125): each call's share is against its own pair.
  std::vector<double> shares = pairedPeakShares({120, 100}, {100, 200, 50}, 1);
  ASSERT_EQ(2u, shares.size());
  EXPECT_DOUBLE_EQ(0.8, shares[0]);
  EXPECT_DOUBLE_EQ(0.8, shares[1]);
  // Two threads: against twice one core's burst.
  shares = pairedPeakShares({300}, {100, 200}, 2);
  ASSERT_EQ(1u, shares.size());
  EXPECT_DOUBLE_EQ(1.0, shares[0]);
}

TEST(PairedPeakTest, MismatchedOrEmptyBurstsGiveNothing) {
  EXPECT_TRUE(pairedPeakShares({120, 100}, {100, 200}, 1).empty());
  EXPECT_TRUE(pairedPeakShares({120}, {100, 0}, 1).empty());
  EXPECT_TRUE(pairedPeakShares({120}, {100, 200}, 0).empty());
}

TEST(PairedPeakTest, ProbeBurstsRunTheFmaLoop) {
  std::unique_ptr<mlir::MLIRContext> context = createEngineContext();
  auto probe = PeakProbe::create(*context, 0.002);
  ASSERT_TRUE(bool(probe)) << llvm::toString(probe.takeError());
  for (int i = 0; i < 3; ++i) {
    llvm::Expected<double> gflops = (*probe)->burst();
    ASSERT_TRUE(bool(gflops)) << llvm::toString(gflops.takeError());
    EXPECT_GT(*gflops, 0.0);
    EXPECT_TRUE(std::isfinite(*gflops));
  }
}

TEST(PeakTest, AllThreadsPeakRunsOnEveryThread) {
  std::unique_ptr<mlir::MLIRContext> context = createEngineContext();
  llvm::Expected<double> two =
      measureFmaPeakAllThreadsGflops(*context, /*threads=*/2, 0.05);
  ASSERT_TRUE(bool(two)) << llvm::toString(two.takeError());
  EXPECT_GT(*two, 0.0);
  EXPECT_TRUE(std::isfinite(*two));
  llvm::Expected<double> none =
      measureFmaPeakAllThreadsGflops(*context, /*threads=*/0, 0.05);
  ASSERT_FALSE(bool(none));
  EXPECT_NE(std::string::npos,
            llvm::toString(none.takeError()).find("needs at least one thread"));
}

TEST(ReadProbeTest, MeasuresPositiveRates) {
  // One and two threads over one buffer: the best rate, and single passes
  // (one stream before the best way is known, the best way after it).
  for (int threads : {1, 2}) {
    ReadProbe probe(threads, size_t(8) << 20);
    for (double gbs : {probe.pass(), probe.measureBest(), probe.pass()}) {
      EXPECT_GT(gbs, 0.0) << threads << " threads";
      EXPECT_TRUE(std::isfinite(gbs)) << threads << " threads";
    }
  }
}

} // namespace
