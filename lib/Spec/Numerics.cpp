//===- Numerics.cpp - The numerics contract as pure functions ---*- C++ -*-===//
//
// The bounds are compared with `<=` on the measures as they are, so that a
// NaN measure (which only a broken comparison produces) fails every rule.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace mlir::attn::exec {

/// docs/numerics.md's fixed bounds.
static const double kF32RelL2 = 1e-5;
static const double kF32MaxAbs = 1e-4;
static const double kF16RelL2 = 2e-3;
static const double kBF16RelL2 = 1.6e-2;

/// A measured sensitivity as it enters a bound: not measured, negative or
/// non-finite counts as zero (the fixed bound alone).
static double usableSens(double sens) {
  return std::isfinite(sens) && sens > 0 ? sens : 0.0;
}

static std::string format(const char *fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, a);
  return buf;
}

Verdict judgeNumerics(const ErrorStats &s, DType dtype, bool lowPrecisionOut,
                      std::optional<double> naiveRelL2, double sensRel,
                      double sensAbs, double sensOutRel) {
  Verdict v;
  bool lowp = lowPrecisionOut && (dtype == DType::F16 || dtype == DType::BF16);
  if (!lowp) {
    double rel = usableSens(sensRel), abs = usableSens(sensAbs);
    double maxAbsBase = kF32MaxAbs * std::max(1.0, s.refMaxAbs);
    v.pass = !s.hasNaN && s.relL2 <= kF32RelL2 + 4 * rel &&
             s.maxAbs <= maxAbsBase + 4 * abs;
    v.rule = "rel_l2 <= 1e-5";
    if (rel > 0)
      v.rule += format(" + 4*sens_rel %.2e", rel);
    v.rule += format(", max_abs <= %.3g", maxAbsBase);
    if (abs > 0)
      v.rule += format(" + 4*sens_abs %.2e", abs);
    return v;
  }
  double fixed = dtype == DType::F16 ? kF16RelL2 : kBF16RelL2;
  double sensOut = usableSens(sensOutRel);
  v.pass = !s.hasNaN && s.relL2 <= fixed + sensOut;
  std::string bound = format("%g", fixed);
  if (sensOut > 0)
    bound += format(" + sens_out %.2e", sensOut);
  if (naiveRelL2) {
    v.pass &= s.relL2 <= 2 * *naiveRelL2 + 1e-6;
    v.rule = "rel_l2 <= min(" + bound +
             format(", 2*naive %.3g + 1e-6)", *naiveRelL2);
  } else {
    v.rule = "rel_l2 <= " + bound;
  }
  return v;
}

ErrorStats compareSampled(const HostTensor &got, const std::vector<double> &ref,
                          int64_t rowStride) {
  if (rowStride <= 1)
    return compareToReference(got, ref);
  ErrorStats mismatch;
  mismatch.maxAbs = mismatch.relL2 = std::numeric_limits<double>::infinity();
  size_t rank = got.shape.size();
  if ((rank != 3 && rank != 4) || got.dtype == DType::Bool ||
      got.data.size() != got.byteSize() ||
      static_cast<size_t>(got.numel()) != ref.size() || got.numel() == 0)
    return mismatch;
  int64_t lq = got.shape[2];
  int64_t width = rank == 4 ? got.shape[3] : 1;
  int64_t heads = got.numel() / (lq * width);
  int64_t kept = (lq + rowStride - 1) / rowStride;
  HostTensor gotRows = HostTensor::zeros(got.dtype, {heads, kept, width});
  std::vector<double> refRows;
  refRows.reserve(static_cast<size_t>(heads * kept * width));
  size_t elt = dtypeSize(got.dtype);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0, k = 0; i < lq; i += rowStride, ++k) {
      int64_t from = (h * lq + i) * width, to = (h * kept + k) * width;
      std::memcpy(gotRows.data.data() + to * elt, got.data.data() + from * elt,
                  width * elt);
      refRows.insert(refRows.end(), ref.begin() + from,
                     ref.begin() + from + width);
    }
  return compareToReference(gotRows, refRows);
}

} // namespace mlir::attn::exec
