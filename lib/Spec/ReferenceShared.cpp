//===- ReferenceShared.cpp - pieces both f64 oracles use ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "ReferenceShared.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::attn::exec;

std::vector<double> ref::toDoubles(const HostTensor &t) {
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = t.getAsDouble(static_cast<int64_t>(i));
  return values;
}

bool ref::causalAdmits(Causal causal, int64_t i, int64_t j, int64_t lq,
                       int64_t lk) {
  switch (causal) {
  case Causal::None:
    return true;
  case Causal::TopLeft:
    return j <= i;
  case Causal::BottomRight:
    return j <= i + lk - lq;
  }
  return true;
}

/// SplitMix64's output function applied to x + the golden gamma: a
/// bijective 64-bit mix with full avalanche.
static uint64_t splitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t ref::trialSeed(uint64_t seed, int trial) {
  return splitMix64(splitMix64(seed) + static_cast<uint64_t>(trial));
}

double ref::scoreNoise(uint64_t seed, int64_t b, int64_t h, int64_t i,
                       int64_t j) {
  uint64_t key = splitMix64(seed);
  for (int64_t index : {b, h, i, j})
    key = splitMix64(key ^ static_cast<uint64_t>(index));
  const double twoToMinus53 = 1.0 / 9007199254740992.0;
  double u1 = static_cast<double>(splitMix64(key) >> 11) * twoToMinus53;
  double u2 = static_cast<double>(splitMix64(key + 1) >> 11) * twoToMinus53;
  const double twoPi = 6.283185307179586476925286766559;
  // 1 - u1 is in (0, 1], so the log is finite.
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(twoPi * u2);
}

double ref::biasNoise(uint64_t seed, double bias, int64_t b, int64_t h,
                      int64_t i, int64_t j) {
  if (bias == 0 || !std::isfinite(bias))
    return 0;
  // Another stream than scoreNoise()'s for the same seed.
  return std::ldexp(std::fabs(bias), -24) *
         scoreNoise(trialSeed(seed, 1 << 30), b, h, i, j);
}

ref::Deviation ref::deviation(const std::vector<double> &perturbed,
                              const std::vector<double> &ref) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (perturbed.size() != ref.size())
    return {nan, nan};
  long double diffSq = 0, refSq = 0;
  Deviation dev;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(perturbed[i]) || !std::isfinite(ref[i]))
      continue;
    double diff = std::fabs(perturbed[i] - ref[i]);
    dev.maxAbs = std::max(dev.maxAbs, diff);
    diffSq += static_cast<long double>(diff) * diff;
    refSq += static_cast<long double>(ref[i]) * ref[i];
  }
  long double diffNorm = std::sqrt(diffSq), refNorm = std::sqrt(refSq);
  dev.relL2 = static_cast<double>(refNorm == 0 ? diffNorm : diffNorm / refNorm);
  return dev;
}
