//===- ReferenceShared.h - pieces both f64 oracles use ----------*- C++ -*-===//
//
// Part of the attn project.
//
// The forward's f64 reference (Reference.cpp) and the backward's
// (ReferenceGrad.cpp) read tensors as doubles, decide causal visibility,
// perturb scores for `sens` and measure the perturbed results the same way: one
// definition of each, here (private to lib/Execution).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_REFERENCESHARED_H
#define ATTN_LIB_EXECUTION_REFERENCESHARED_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"

#include <cstdint>
#include <vector>

namespace mlir::attn::exec::ref {

/// Every element of `t` as a double, in order.
std::vector<double> toDoubles(const HostTensor &t);

/// rel_l2 and max_abs of a perturbed result against the unperturbed one,
/// over the elements where both are finite; NaN for results of different
/// sizes. What `sens` measures, forward and backward.
struct Deviation {
  double relL2 = 0, maxAbs = 0;
};
Deviation deviation(const std::vector<double> &perturbed,
                    const std::vector<double> &ref);

/// Whether the causal rule lets query row i see key j (lq queries, lk keys).
bool causalAdmits(Causal causal, int64_t i, int64_t j, int64_t lq, int64_t lk);

/// A standard normal that is a pure function of (seed, b, h, i, j): the
/// indices are hashed in turn (SplitMix64) into one 64-bit key, two 53-bit
/// uniforms are drawn from it and Box-Muller turns them into a normal.
/// Counter-based, so no state is carried from one score to the next.
double scoreNoise(uint64_t seed, int64_t b, int64_t h, int64_t i, int64_t j);

/// The noise seed of `sens` trial `trial` of a run seeded with `seed`.
uint64_t trialSeed(uint64_t seed, int trial);

/// The rounding of adding `bias` (ALiBi's slope times distance plus a float
/// mask's value, in magnitude) to an f32 score: 2^-24 * |bias| times a
/// second standard normal of (seed, b, h, i, j), independent of
/// scoreNoise()'s. Without a bias, 0. Large biases (ALiBi over a thousand
/// keys: scores in the hundreds) make the f32 score's own rounding, not its
/// dot product's, what moves the softmax.
double biasNoise(uint64_t seed, double bias, int64_t b, int64_t h, int64_t i,
                 int64_t j);

} // namespace mlir::attn::exec::ref

#endif // ATTN_LIB_EXECUTION_REFERENCESHARED_H
