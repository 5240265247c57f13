//===- Checks.h - the engine's numerics checks (private) --------*- C++ -*-===//
//
// Part of the attn project.
//
// The check step of runAttn() (Engine.cpp): the f64 reference with the
// input's conditioning, docs/numerics.md's checks of every result against
// the oracles, and the no-NaN rule. Private to lib/Execution.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_CHECKS_H
#define ATTN_LIB_EXECUTION_CHECKS_H

#include "attn/Execution/Engine.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace mlir::attn::exec::detail {

/// The tensors of one lowering's results.
using Results = std::vector<HostTensor>;

/// The f64 reference of a one-sdpa entry, with the input's conditioning.
struct Reference {
  std::vector<double> out, lse;
  /// docs/op.md rule 7: with NaN or inf in the inputs, the reference that
  /// multiplies hidden value rows by 0; empty otherwise.
  std::vector<double> outHiddenNaN;
  Sensitivity sens;
  bool hasSens = false;
};

/// Whether any element of `tensors` satisfies `predicate`.
bool anyElement(const std::vector<HostTensor> &tensors,
                llvm::function_ref<bool(double)> predicate);

/// Whether docs/op.md promises results without NaN for `inputs`.
bool noNaNExpected(const std::vector<HostTensor> &inputs, bool isSdpa);

/// The f64 reference on every `rowStride`-th query row and, with
/// `needSens`, the input's conditioning; with `inputsNonFinite`, also the
/// reference that multiplies hidden value rows by 0.
Reference computeReference(const RunOptions &options,
                           const SdpaProblem &problem,
                           const std::vector<HostTensor> &inputs,
                           int64_t rowStride, bool needSens,
                           bool inputsNonFinite);

/// computeReference() of an attn.sdpa_varlen problem (ReferenceVarlen.cpp):
/// every row, the conditioning measured per sequence.
Reference computeVarlenReference(const RunOptions &options,
                                 const SdpaProblem &problem,
                                 const std::vector<HostTensor> &inputs,
                                 bool needSens, bool inputsNonFinite);

/// docs/numerics.md's checks of every result: the naive lowering and the
/// fused one against the f64 reference (when `ref` and `refChecks`), the
/// fused against the naive (when `naiveOut`), each bound carrying `ref`'s
/// sensitivity when it has one. Appends to report.checks.
void judgeResults(RunReport &report, const EntrySignature &signature,
                  const Results &fusedOut, const Results *naiveOut,
                  const Reference *ref, bool refChecks = true);

/// Whether every check in `report` passed (the run's verdict).
bool allChecksPass(const RunReport &report);

/// The no-NaN rule on every result of both lowerings.
void checkNoNaN(RunReport &report, bool isSdpa, const Results &fusedOut,
                const Results *naiveOut);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_CHECKS_H
