//===- PeakTest.cpp - Tests for the read-bandwidth probe --------*- C++ -*-===//
//
// The probe's figure is bytes over time, so each of its read patterns must
// read every word of its share once: the sums below would differ by a
// word missed or read twice.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Peak.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace mlir::attn::exec;

namespace {

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

TEST(ReadProbeTest, MeasuresAPositiveRate) {
  double gbs = measureReadBandwidthGBs(/*threads=*/1, size_t(8) << 20);
  EXPECT_GT(gbs, 0.0);
  EXPECT_TRUE(std::isfinite(gbs));
}

} // namespace
