//===- Reference.cpp - The f64 sdpa oracle ----------------------*- C++ -*-===//
//
// Deliberately the most literal reading of the semantics: per (b, h, i) row,
// compute every score, decide visibility, then a two-pass softmax (max, then
// sum) in double. Nothing here is tiled or fused, so a bug in the online
// softmax of the fused lowering cannot be mirrored here.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlir::attn::exec {

static const double kInf = std::numeric_limits<double>::infinity();
static const double kNaN = std::numeric_limits<double>::quiet_NaN();

/// sum_{i=0}^{lq-1} clamp(i + c, 0, lk): the number of admitted (i, j) pairs
/// when row i sees keys j < i + c. Closed form, so that it is exact and O(1)
/// even for long sequences.
static int64_t sumClampedDiagonal(int64_t lq, int64_t lk, int64_t c) {
  // Rows [0, first) see nothing, rows [first, full) see i + c keys, rows
  // [full, lq) see all lk keys.
  int64_t first = std::min(std::max<int64_t>(0, -c), lq);
  int64_t full = std::min(std::max<int64_t>(0, lk - c), lq);
  int64_t n = full - first;
  int64_t partial = n * (first + c) + n * (n - 1) / 2;
  return partial + (lq - full) * lk;
}

int64_t SdpaProblem::flops() const {
  int64_t pairs = lq * lk;
  switch (causal) {
  case Causal::None:
    break;
  case Causal::TopLeft: // j <= i
    pairs = sumClampedDiagonal(lq, lk, 1);
    break;
  case Causal::BottomRight: // j <= i + lk - lq
    pairs = sumClampedDiagonal(lq, lk, lk - lq + 1);
    break;
  }
  return 2 * b * hq * (d + dv) * pairs;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error SdpaProblem::validate() const {
  const std::pair<const char *, int64_t> dims[] = {
      {"b", b},   {"hq", hq}, {"hkv", hkv}, {"lq", lq},
      {"lk", lk}, {"d", d},   {"dv", dv}};
  for (const auto &[name, value] : dims)
    if (value <= 0)
      return makeError(std::string("expected ") + name +
                       " to be positive, got " + std::to_string(value));
  if (hq % hkv != 0)
    return makeError("expected hq (" + std::to_string(hq) +
                     ") to be a multiple of hkv (" + std::to_string(hkv) + ")");
  if (mask == MaskKind::None)
    return llvm::Error::success();
  if (maskShape.size() != 4)
    return makeError("expected a rank-4 mask shape, got rank " +
                     std::to_string(maskShape.size()));
  const int64_t full[4] = {b, hq, lq, lk};
  const char *names[4] = {"b", "hq", "lq", "lk"};
  for (int i = 0; i < 4; ++i)
    if (maskShape[i] != full[i] && maskShape[i] != 1)
      return makeError("expected mask dim " + std::to_string(i) + " (" +
                       std::to_string(maskShape[i]) + ") to be 1 or equal " +
                       names[i] + " (" + std::to_string(full[i]) + ")");
  return llvm::Error::success();
}

static bool isFloatType(DType dtype) { return dtype != DType::Bool; }

static llvm::Error checkShape(const char *name, const HostTensor &t,
                              const std::vector<int64_t> &expected) {
  if (t.shape != expected) {
    HostTensor want;
    want.shape = expected;
    return makeError(std::string("expected ") + name + " of shape " +
                     want.shapeString() + ", got " + t.shapeString());
  }
  if (t.data.size() != t.byteSize())
    return makeError(std::string(name) + " holds " +
                     std::to_string(t.data.size()) + " bytes, expected " +
                     std::to_string(t.byteSize()));
  return llvm::Error::success();
}

llvm::Error validateOperands(const SdpaProblem &p, const HostTensor &q,
                             const HostTensor &k, const HostTensor &v,
                             const HostTensor *mask) {
  if (llvm::Error err = p.validate())
    return err;
  if (llvm::Error err = checkShape("query", q, {p.b, p.hq, p.lq, p.d}))
    return err;
  if (llvm::Error err = checkShape("key", k, {p.b, p.hkv, p.lk, p.d}))
    return err;
  if (llvm::Error err = checkShape("value", v, {p.b, p.hkv, p.lk, p.dv}))
    return err;
  if (!isFloatType(q.dtype) || !isFloatType(k.dtype) || !isFloatType(v.dtype))
    return makeError("expected floating-point query, key and value");
  if (p.mask == MaskKind::None)
    return llvm::Error::success();
  if (!mask)
    return makeError("the problem has a mask but no mask tensor was given");
  if (llvm::Error err = checkShape("mask", *mask, p.maskShape))
    return err;
  if (p.mask == MaskKind::Bool && mask->dtype != DType::Bool)
    return makeError(std::string("expected an i1 mask, got ") +
                     dtypeName(mask->dtype));
  if (p.mask == MaskKind::Float && !isFloatType(mask->dtype))
    return makeError("expected a floating-point mask, got i1");
  return llvm::Error::success();
}

static std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = t.getAsDouble(static_cast<int64_t>(i));
  return values;
}

/// Whether the causal rule lets query row i see key j.
static bool causalAdmits(Causal causal, int64_t i, int64_t j, int64_t lq,
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

void referenceSdpa(const SdpaProblem &p, const HostTensor &q,
                   const HostTensor &k, const HostTensor &v,
                   const HostTensor *mask, std::vector<double> &out,
                   std::vector<double> *lse, int64_t rowStride,
                   bool hiddenValuesTimesZero) {
  auto nonNeg = [](int64_t x) {
    return static_cast<size_t>(std::max<int64_t>(x, 0));
  };
  size_t rows = nonNeg(p.b) * nonNeg(p.hq) * nonNeg(p.lq);
  out.assign(rows * nonNeg(p.dv), 0.0);
  if (lse)
    lse->assign(rows, -kInf);
  if (llvm::Error err = validateOperands(p, q, k, v, mask)) {
    llvm::consumeError(std::move(err));
    std::fill(out.begin(), out.end(), kNaN);
    if (lse)
      std::fill(lse->begin(), lse->end(), kNaN);
    return;
  }

  std::vector<double> qd = toDoubles(q), kd = toDoubles(k), vd = toDoubles(v);
  std::vector<double> md;
  if (p.mask != MaskKind::None)
    md = toDoubles(*mask);
  const int64_t group = p.hq / p.hkv;
  std::vector<double> scores(static_cast<size_t>(p.lk));
  std::vector<char> visible(static_cast<size_t>(p.lk));
  std::vector<double> acc(static_cast<size_t>(p.dv));

  for (int64_t b = 0; b < p.b; ++b) {
    for (int64_t h = 0; h < p.hq; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < p.lq; ++i) {
        if (rowStride > 1 && i % rowStride != 0) {
          // Not sampled: NaN, so that nobody mistakes it for a result.
          const size_t row = static_cast<size_t>((b * p.hq + h) * p.lq + i);
          std::fill_n(out.begin() + row * p.dv, p.dv, kNaN);
          if (lse)
            (*lse)[row] = kNaN;
          continue;
        }
        const double *qRow = &qd[((b * p.hq + h) * p.lq + i) * p.d];
        bool anyVisible = false, sawNaN = false;
        double rowMax = -kInf;
        for (int64_t j = 0; j < p.lk; ++j) {
          const double *kRow = &kd[((b * p.hkv + hk) * p.lk + j) * p.d];
          double dot = 0;
          for (int64_t x = 0; x < p.d; ++x)
            dot += qRow[x] * kRow[x];
          double s = p.scale * dot;
          bool allowed = causalAdmits(p.causal, i, j, p.lq, p.lk);
          if (p.mask != MaskKind::None) {
            const std::vector<int64_t> &ms = p.maskShape;
            int64_t mIndex =
                (((ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : h)) * ms[2] +
                 (ms[2] == 1 ? 0 : i)) *
                    ms[3] +
                (ms[3] == 1 ? 0 : j);
            double m = md[mIndex];
            if (p.mask == MaskKind::Float)
              s += m;
            else if (m == 0)
              allowed = false;
          }
          scores[j] = s;
          visible[j] = allowed && s != -kInf;
          if (!visible[j])
            continue;
          anyVisible = true;
          // std::max would drop a NaN depending on argument order; the NaN
          // must reach the whole row instead.
          if (std::isnan(s))
            sawNaN = true;
          else
            rowMax = std::max(rowMax, s);
        }
        const size_t row = static_cast<size_t>((b * p.hq + h) * p.lq + i);
        if (!anyVisible)
          continue; // out stays 0 and lse -inf.
        if (sawNaN)
          rowMax = kNaN;

        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t j = 0; j < p.lk; ++j) {
          if (!visible[j]) {
            if (hiddenValuesTimesZero) {
              const double *vRow = &vd[((b * p.hkv + hk) * p.lk + j) * p.dv];
              for (int64_t x = 0; x < p.dv; ++x)
                acc[x] += 0.0 * vRow[x];
            }
            continue;
          }
          double e = std::exp(scores[j] - rowMax);
          sum += e;
          const double *vRow = &vd[((b * p.hkv + hk) * p.lk + j) * p.dv];
          for (int64_t x = 0; x < p.dv; ++x)
            acc[x] += e * vRow[x];
        }
        for (int64_t x = 0; x < p.dv; ++x)
          out[row * p.dv + x] = acc[x] / sum;
        if (lse)
          (*lse)[row] = rowMax + std::log(sum);
      }
    }
  }
}

namespace {
/// Accumulates the error measures one element at a time.
struct ErrorAccumulator {
  ErrorStats stats;
  long double diffSq = 0, refSq = 0;
  bool infinite = false;

  void add(double got, double ref) {
    bool gotNaN = std::isnan(got), refNaN = std::isnan(ref);
    if (gotNaN && refNaN)
      return;
    ++stats.count;
    if (gotNaN) {
      stats.hasNaN = true;
      infinite = true;
      return;
    }
    if (refNaN) {
      infinite = true;
      return;
    }
    if (std::isinf(ref) || std::isinf(got)) {
      // Equal infinities (an lse of -inf for an empty row) are exact.
      if (got != ref)
        infinite = true;
      return;
    }
    double diff = std::fabs(got - ref);
    stats.maxAbs = std::max(stats.maxAbs, diff);
    stats.refMaxAbs = std::max(stats.refMaxAbs, std::fabs(ref));
    diffSq += static_cast<long double>(diff) * diff;
    refSq += static_cast<long double>(ref) * ref;
  }

  ErrorStats finish() {
    if (infinite) {
      stats.maxAbs = kInf;
      stats.relL2 = kInf;
      return stats;
    }
    long double diffNorm = std::sqrt(diffSq), refNorm = std::sqrt(refSq);
    stats.relL2 =
        static_cast<double>(refNorm == 0 ? diffNorm : diffNorm / refNorm);
    return stats;
  }
};
} // namespace

static ErrorStats sizeMismatch() {
  ErrorStats stats;
  stats.maxAbs = kInf;
  stats.relL2 = kInf;
  return stats;
}

ErrorStats compareToReference(const HostTensor &got,
                              const std::vector<double> &ref) {
  if (got.dtype == DType::Bool || got.data.size() != got.byteSize() ||
      static_cast<size_t>(got.numel()) != ref.size())
    return sizeMismatch();
  ErrorAccumulator acc;
  for (size_t i = 0; i < ref.size(); ++i)
    acc.add(got.getAsDouble(static_cast<int64_t>(i)), ref[i]);
  return acc.finish();
}

ErrorStats compareTensors(const HostTensor &got, const HostTensor &ref) {
  if (got.shape != ref.shape || ref.data.size() != ref.byteSize())
    return sizeMismatch();
  return compareToReference(got, toDoubles(ref));
}

} // namespace mlir::attn::exec
