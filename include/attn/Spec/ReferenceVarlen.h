//===- ReferenceVarlen.h - The f64 oracle of attn.sdpa_varlen ---*- C++ -*-===//
//
// Part of the attn project.
//
// attn.sdpa_varlen is defined by attn.sdpa (docs/op.md): sequence `s` of the
// packed rows is one attn.sdpa of its own rows. Its f64 reference is that
// definition read literally: every sequence is copied out of the packed
// tensors and given to referenceSdpa() on its own (rows of no sequence, and
// sequences without keys, follow the empty-row rule), and the input's
// conditioning (`sens`) is measured per sequence and combined.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_REFERENCEVARLEN_H
#define ATTN_EXECUTION_REFERENCEVARLEN_H

#include "attn/Spec/Reference.h"
#include "attn/Spec/ReferenceGrad.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace mlir::attn::exec {

/// The number of sequences of a varlen problem (its offsets' count - 1).
int64_t varlenSequences(const SdpaProblem &p);

/// The attn.sdpa problem of sequence `seq` (b = 1, its own lq and lk, its
/// row of [b, hq] ALiBi slopes). Its lq or lk may be 0.
SdpaProblem varlenSequence(const SdpaProblem &p, int64_t seq);

/// Σ over the sequences of their attn.sdpa FLOPs.
int64_t varlenFlops(const SdpaProblem &p);

/// The offsets `cu` (`name`, i32 [B + 1]) as integers, refusing in one line
/// offsets that do not start at 0, decrease, or run past the `rows` packed
/// rows (attn.sdpa_varlen leaves those undefined): the one statement of the
/// rule, for the spec's runs and for FILE mode's.
llvm::Expected<std::vector<int64_t>>
checkVarlenOffsets(llvm::StringRef name, const HostTensor &cu, int64_t rows);

/// Writes offsets valid by construction into `cu` (i32 [B + 1]): the `rows`
/// packed rows cut into B sequences of near-equal length, from 0 to `rows`.
void fillEvenVarlenOffsets(HostTensor &cu, int64_t rows);

/// Writes p.cuSeqlensQ and p.cuSeqlensK into the offset arguments (3, 4).
void fillVarlenOffsets(const SdpaProblem &p, std::vector<HostTensor> &inputs);

/// Reads the offsets from arguments 3 and 4 into `p` (and the ALiBi slopes,
/// setKeyLengthValues()), refusing offsets that do not start at 0, decrease,
/// or run past the packed rows (the op leaves those undefined).
llvm::Error setVarlenValues(SdpaProblem &p,
                            const std::vector<HostTensor> &inputs);

/// out [total_q, hq, dv] and lse [hq, total_q] in double, from the packed
/// query, key and value (inputs 0-2); referenceSdpa()'s hiddenValuesTimesZero
/// per sequence.
void referenceVarlen(const SdpaProblem &p,
                     const std::vector<HostTensor> &inputs,
                     std::vector<double> &out, std::vector<double> *lse,
                     bool hiddenValuesTimesZero = false);

/// measureSensitivity() per sequence against its rows of `refOut` and
/// `*refLse` (referenceVarlen()'s results for the same inputs, which are not
/// computed again), combined: max_abs the largest, rel_l2
/// sqrt(Σ_s (rel_s·||ref_s||)²) / ||ref|| (each sequence's largest trial, so
/// never below the largest trial of the whole).
Sensitivity measureVarlenSensitivity(const SdpaProblem &p,
                                     const std::vector<HostTensor> &inputs,
                                     const std::vector<double> &refOut,
                                     const std::vector<double> *refLse,
                                     uint64_t seed, int trials = 3);

/// The f64 gradients of attn.sdpa_varlen_grad for `inputs` (query, key,
/// value, cu_seqlens_q, cu_seqlens_k, packed) and the packed `dOut`
/// ([total_q, hq, dv]): referenceSdpaGrad() of each sequence on its own
/// rows, packed like the query, key and value; rows of no sequence, and
/// sequences without a query or a key, get 0. With `sens`, also
/// docs/numerics.md's sensitivity of each gradient, measured per sequence and
/// combined as measureVarlenSensitivity() combines out's: `sens` from
/// perturbed scores (f32; `seed`), or, with `roundedOut` (f16/bf16 outs),
/// `sens_out` from the exact out rounded to that type.
void referenceVarlenGrad(const SdpaProblem &p,
                         const std::vector<HostTensor> &inputs,
                         const HostTensor &dOut, GradReference &ref,
                         GradSensitivity *sens = nullptr,
                         std::optional<DType> roundedOut = std::nullopt,
                         uint64_t seed = 0);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_REFERENCEVARLEN_H
