//===- Checks.cpp - the engine's numerics checks --------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "Checks.h"

#include "attn/Spec/ReferencePaged.h"
#include "attn/Spec/ReferenceVarlen.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn::exec;
using namespace mlir::attn::exec::detail;

bool mlir::attn::exec::detail::anyElement(
    const std::vector<HostTensor> &tensors,
    llvm::function_ref<bool(double)> predicate) {
  for (const HostTensor &t : tensors)
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      if (predicate(t.getAsDouble(i)))
        return true;
  return false;
}

/// Whether docs/op.md promises results without NaN for `inputs`. An infinity
/// in Q or K makes a score +-inf or, summed with one of the other sign, NaN;
/// a +inf score makes its row's softmax inf - inf = NaN, and an infinite
/// value row times a probability of 0 is NaN too (rule 7). So only finite Q,
/// K and V qualify; a float mask may hold -inf (a hidden key, rule 3) but not
/// +inf or NaN. For an entry that is not one sdpa, every input is finite.
bool mlir::attn::exec::detail::noNaNExpected(
    const std::vector<HostTensor> &inputs, bool isSdpa) {
  for (auto [i, t] : llvm::enumerate(inputs)) {
    bool floatMask = isSdpa && i == 3 && t.dtype != DType::Bool;
    for (int64_t e = 0, n = t.numel(); e < n; ++e) {
      double x = t.getAsDouble(e);
      if (std::isnan(x) || (std::isinf(x) && !(floatMask && x < 0)))
        return false;
    }
  }
  return true;
}

/// The name of result `r` in the report: out and lse for one sdpa.
static std::string resultName(size_t r, bool isSdpa) {
  if (isSdpa && r == 0)
    return "out";
  if (isSdpa && r == 1)
    return "lse";
  return "result" + std::to_string(r);
}

/// `ref` with NaN wherever `got` and the hidden-NaN reference both are
/// (docs/op.md rule 7: a NaN stored in a hidden value row may reach the
/// output), so that the comparison skips those elements.
static std::vector<double> excuseHiddenNaN(const HostTensor &got,
                                           const std::vector<double> &ref,
                                           const std::vector<double> &hidden) {
  if (hidden.empty())
    return ref;
  std::vector<double> adjusted = ref;
  for (size_t i = 0; i < adjusted.size(); ++i)
    if (std::isnan(got.getAsDouble(static_cast<int64_t>(i))) &&
        std::isnan(hidden[i]))
      adjusted[i] = std::numeric_limits<double>::quiet_NaN();
  return adjusted;
}

/// Fused against naive; where the hidden-NaN reference is NaN, either side
/// may be NaN (docs/op.md rule 7: one may multiply a hidden non-finite value
/// row by 0, the other not), so such elements are skipped.
static ErrorStats compareExcusingHiddenNaN(const HostTensor &fused,
                                           const HostTensor &naive,
                                           const std::vector<double> &hidden) {
  if (hidden.empty() || static_cast<int64_t>(hidden.size()) != fused.numel() ||
      fused.shape != naive.shape)
    return compareTensors(fused, naive);
  HostTensor got = fused;
  std::vector<double> want(hidden.size());
  for (size_t i = 0; i < hidden.size(); ++i) {
    double f = fused.getAsDouble(i), n = naive.getAsDouble(i);
    want[i] = n;
    if (std::isnan(hidden[i]) && (std::isnan(f) || std::isnan(n))) {
      want[i] = std::numeric_limits<double>::quiet_NaN();
      got.setFromDouble(i, want[i]);
    }
  }
  return compareToReference(got, want);
}

/// computeReference() of a varlen problem: every row (no sampling), the
/// sensitivity per sequence.
mlir::attn::exec::detail::Reference
mlir::attn::exec::detail::computeVarlenReference(
    const RunOptions &options, const SdpaProblem &problem,
    const std::vector<HostTensor> &inputs, bool needSens,
    bool inputsNonFinite) {
  Reference ref;
  referenceVarlen(problem, inputs, ref.out, problem.lse ? &ref.lse : nullptr);
  if (inputsNonFinite)
    referenceVarlen(problem, inputs, ref.outHiddenNaN, nullptr,
                    /*hiddenValuesTimesZero=*/true);
  if (needSens) {
    ref.sens = measureVarlenSensitivity(problem, inputs, ref.out,
                                        problem.lse ? &ref.lse : nullptr,
                                        options.seed);
    ref.hasSens = true;
  }
  return ref;
}

/// The f64 reference on every `rowStride`-th query row and the input's
/// conditioning (on a coarser sample when three more references would not
/// fit the FLOP budget).
mlir::attn::exec::detail::Reference mlir::attn::exec::detail::computeReference(
    const RunOptions &options, const SdpaProblem &problem,
    const std::vector<HostTensor> &inputs, int64_t rowStride, bool needSens,
    bool inputsNonFinite) {
  if (problem.varlen)
    return computeVarlenReference(options, problem, inputs, needSens,
                                  inputsNonFinite);
  Reference ref;
  const HostTensor *mask =
      problem.mask != MaskKind::None ? &inputs[3] : nullptr;
  // attn.sdpa_paged: attn.sdpa with key lengths on its caches' dense view.
  const HostTensor *key = &inputs[1], *value = &inputs[2];
  PagedDenseView dense;
  if (problem.paged) {
    dense = densePagedView(problem, inputs);
    key = &dense.key;
    value = &dense.value;
  }
  referenceSdpa(problem, inputs[0], *key, *value, mask, ref.out,
                problem.lse ? &ref.lse : nullptr, rowStride);
  if (inputsNonFinite)
    referenceSdpa(problem, inputs[0], *key, *value, mask, ref.outHiddenNaN,
                  nullptr, rowStride,
                  /*hiddenValuesTimesZero=*/true);
  if (needSens) {
    constexpr int trials = 3;
    double sampledGflop = problem.flops() / 1e9 / rowStride;
    double budget = std::max(1e-3, options.refLimitGflop);
    int64_t coarsen = std::max<int64_t>(
        1, static_cast<int64_t>(std::ceil(trials * sampledGflop / budget)));
    ref.sens = measureSensitivity(problem, inputs[0], *key, *value, mask,
                                  ref.out, problem.lse ? &ref.lse : nullptr,
                                  rowStride * coarsen, options.seed, trials);
    ref.hasSens = true;
  }
  return ref;
}

/// docs/numerics.md's checks of every result: the naive lowering and the fused
/// one against the f64 reference, the fused against the naive.
void mlir::attn::exec::detail::judgeResults(
    RunReport &report, const EntrySignature &signature, const Results &fusedOut,
    const Results *naiveOut, const Reference *ref, bool refChecks) {
  bool isSdpa = signature.problem.has_value();
  // No fused results where the op has no fused lowering (attn.sdpa_paged):
  // the naive lowering against the f64 reference only.
  bool withFused = !fusedOut.empty();
  size_t results = withFused  ? fusedOut.size()
                   : naiveOut ? naiveOut->size()
                              : 0;
  for (size_t r = 0; r < results; ++r) {
    std::string name = resultName(r, isSdpa);
    DType dtype = signature.results[r].dtype;
    // An entry that is not one sdpa (e.g. attn.sdpa_varlen): every f16/bf16
    // result is an output rounded once to that type, judged by its rule.
    bool lowPrecisionOut =
        (!isSdpa || r == 0) && (dtype == DType::F16 || dtype == DType::BF16);
    double sensRel = 0, sensAbs = 0;
    if (ref && ref->hasSens && !lowPrecisionOut) {
      sensRel = r == 0 ? ref->sens.outRelL2 : ref->sens.lseRelL2;
      sensAbs = r == 0 ? ref->sens.outMaxAbs : ref->sens.lseMaxAbs;
    }
    auto record = [&](const char *oracle, const ErrorStats &stats,
                      std::optional<double> naiveRelL2) {
      CheckRecord c;
      c.result = name;
      c.oracle = oracle;
      c.stats = stats;
      c.verdict = judgeNumerics(stats, dtype, lowPrecisionOut, naiveRelL2,
                                sensRel, sensAbs);
      if (ref && ref->hasSens && !lowPrecisionOut) {
        c.sensRel = sensRel;
        c.sensAbs = sensAbs;
      }
      report.checks.push_back(std::move(c));
    };
    if (ref && refChecks) {
      const std::vector<double> &values = r == 0 ? ref->out : ref->lse;
      const std::vector<double> &hidden =
          r == 0 ? ref->outHiddenNaN : std::vector<double>();
      std::optional<double> naiveRelL2;
      if (naiveOut) {
        const HostTensor &naive = (*naiveOut)[r];
        ErrorStats stats = compareSampled(
            naive, excuseHiddenNaN(naive, values, hidden), report.refRowStride);
        naiveRelL2 = stats.relL2;
        record("f64 (naive)", stats, std::nullopt);
      }
      if (withFused) {
        const HostTensor &fused = fusedOut[r];
        record("f64",
               compareSampled(fused, excuseHiddenNaN(fused, values, hidden),
                              report.refRowStride),
               naiveRelL2);
      }
    }
    if (naiveOut && withFused) {
      const std::vector<double> &hidden =
          ref && r == 0 && report.refRowStride <= 1 ? ref->outHiddenNaN
                                                    : std::vector<double>();
      record("naive",
             compareExcusingHiddenNaN(fusedOut[r], (*naiveOut)[r], hidden),
             std::nullopt);
    }
  }
}

/// Finite inputs give results without NaN (hidden rows give 0; see
/// noNaNExpected): a NaN there is an element the kernel did not write
/// (outputs start poisoned) or a numerical failure, even where both
/// lowerings agree on it.
void mlir::attn::exec::detail::checkNoNaN(RunReport &report, bool isSdpa,
                                          const Results &fusedOut,
                                          const Results *naiveOut) {
  auto check = [&](const std::string &name, const char *which,
                   const HostTensor &t) {
    int64_t nans = 0;
    for (int64_t i = 0, n = t.numel(); i < n; ++i)
      nans += std::isnan(t.getAsDouble(i));
    CheckRecord c;
    c.result = name;
    c.oracle = which;
    c.stats.hasNaN = nans > 0;
    c.stats.count = t.numel();
    c.verdict.pass = nans == 0;
    c.verdict.rule = nans ? std::to_string(nans) + " NaN from finite inputs"
                          : "no NaN from finite inputs";
    report.checks.push_back(std::move(c));
  };
  size_t results = !fusedOut.empty() ? fusedOut.size()
                   : naiveOut        ? naiveOut->size()
                                     : 0;
  for (size_t r = 0; r < results; ++r) {
    std::string name = resultName(r, isSdpa);
    if (r < fusedOut.size())
      check(name, "no-NaN", fusedOut[r]);
    if (naiveOut)
      check(name, "no-NaN naive", (*naiveOut)[r]);
  }
}

bool mlir::attn::exec::detail::allChecksPass(const RunReport &report) {
  return std::all_of(report.checks.begin(), report.checks.end(),
                     [](const CheckRecord &c) { return c.verdict.pass; });
}
