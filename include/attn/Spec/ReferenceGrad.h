//===- ReferenceGrad.h - The f64 oracle of attn.sdpa_grad -------*- C++ -*-===//
//
// Part of the attn project.
//
// The backward pass of attn.sdpa in plain double-precision loops, sharing
// nothing with either lowering: it recomputes the forward (probabilities and
// out) itself from q, k, v and the mask, then differentiates.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REFERENCEGRAD_H
#define ATTN_EXECUTION_REFERENCEGRAD_H

#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::attn::exec {

/// d_query [b,hq,lq,d], d_key [b,hkv,lk,d], d_value [b,hkv,lk,dv].
struct GradReference {
  std::array<std::vector<double>, 3> grads;
};

/// The gradients of sum(out * dOut) with respect to q, k and v, with out as
/// docs/op.md defines it: with p the softmax row of visible keys,
///   dV[j] += p_j dO_i,  dS_j = p_j (dO_i . V[j] - dO_i . out_i),
///   dQ_i += scale dS_j K[j],  dK[j] += scale dS_j Q_i,
/// summed over the query heads of a group for dK and dV. A row with nothing
/// visible contributes nothing. With scoreNoiseSeed every finite scaled score
/// is perturbed exactly as referenceSdpa() perturbs it (the rounding of an
/// f32 score; docs/numerics.md's `sens`). With `givenOut` ([b, hq, lq, dv],
/// an out as a backward is handed it, e.g. rounded to its element type),
/// dO_i . out_i is taken from it instead of from the recomputed out
/// (docs/numerics.md's `sens_out`). Operands that do not match `p` give NaN
/// gradients.
void referenceSdpaGrad(const SdpaProblem &p, const HostTensor &q,
                       const HostTensor &k, const HostTensor &v,
                       const HostTensor *mask, const HostTensor &dOut,
                       GradReference &ref,
                       std::optional<uint64_t> scoreNoiseSeed = std::nullopt,
                       const HostTensor *givenOut = nullptr);

/// docs/numerics.md's `sens` for each gradient: the largest rel_l2 and
/// max_abs of the perturbed gradients against `ref` over `trials` noise
/// seeds derived from `seed`.
struct GradSensitivity {
  std::array<double, 3> relL2{}, maxAbs{};
};
GradSensitivity measureGradSensitivity(
    const SdpaProblem &p, const HostTensor &q, const HostTensor &k,
    const HostTensor &v, const HostTensor *mask, const HostTensor &dOut,
    const GradReference &ref, uint64_t seed = 0, int trials = 3);

/// For f16/bf16 gradients, `sens_out`: rel_l2 and max_abs against `ref` of
/// the reference that takes dO . out from the exact out (referenceSdpa())
/// rounded to `outType`, as a correct forward hands it to every backward.
/// Where dO_i . V[j] and dO_i . out_i nearly cancel (few keys, similar
/// values) that rounding alone moves d_query and d_key by more than the
/// fixed bf16 bound. From the exact out, not the forward's result: a wrong
/// forward does not widen the bound.
GradSensitivity
measureOutRoundingSensitivity(const SdpaProblem &p, const HostTensor &q,
                              const HostTensor &k, const HostTensor &v,
                              const HostTensor *mask, const HostTensor &dOut,
                              DType outType, const GradReference &ref);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_REFERENCEGRAD_H
