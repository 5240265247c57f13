//===- HostTensor.cpp - Host tensors and element conversions ----*- C++ -*-===//
//
// Element conversions are written with integer bit manipulation rather than
// compiler intrinsics (_Float16, __bf16) so that rounding is identical on every
// host compiler and does not depend on the target's floating-point support.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/HostTensor.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sys/resource.h>
#include <unistd.h>

namespace mlir::attn::exec {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::Bool:
    return 1;
  case DType::F64:
    return 8;
  case DType::I32:
    return 4;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::Bool:
    return "i1";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  }
  return "?";
}

std::optional<DType> parseDType(llvm::StringRef s) {
  if (s == "f32")
    return DType::F32;
  if (s == "f16")
    return DType::F16;
  if (s == "bf16")
    return DType::BF16;
  if (s == "f64")
    return DType::F64;
  if (s == "i1" || s == "bool")
    return DType::Bool;
  if (s == "i32")
    return DType::I32;
  return std::nullopt;
}

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

static float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  if (exp == 0x1f) // Inf or NaN; keep the payload (a NaN stays a NaN).
    return bitsToFloat(sign | 0x7f800000 | (mant << 13));
  if (exp != 0)
    return bitsToFloat(sign | ((exp + 127 - 15) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24 is exact in binary32.
  float magnitude = std::ldexp(static_cast<float>(mant), -24);
  return sign ? -magnitude : magnitude;
}

/// Rounds `value` (an integer mantissa) right by `shift` bits to nearest-even.
static uint32_t shiftRightRoundEven(uint32_t value, int shift) {
  if (shift <= 0)
    return value;
  if (shift >= 32)
    return 0;
  uint32_t kept = value >> shift;
  uint32_t rem = value & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (kept & 1)))
    ++kept;
  return kept;
}

uint16_t floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  x &= 0x7fffffff;
  if (x >= 0x7f800000) {
    if (x == 0x7f800000)
      return sign | 0x7c00;
    // Quiet the NaN and keep the top payload bits so it cannot become Inf.
    return sign | 0x7e00 | static_cast<uint16_t>((x >> 13) & 0x3ff);
  }
  int exp = static_cast<int>(x >> 23) - 127;
  uint32_t mant = x & 0x7fffff;
  if (exp > 15)
    return sign | 0x7c00;
  if (exp >= -14) {
    // Normal range: a carry out of the mantissa correctly bumps the exponent,
    // and one out of the largest exponent yields exactly Inf (0x7c00).
    uint32_t h = (static_cast<uint32_t>(exp + 15) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
      ++h;
    return sign | static_cast<uint16_t>(h);
  }
  // Subnormal half: the value in units of 2^-24 is (1.mant) * 2^(exp + 24),
  // i.e. the 24-bit significand shifted right by -(exp + 1). Rounding up to
  // 0x400 gives the smallest normal, which is the right encoding.
  uint32_t significand = mant | 0x800000;
  // A float subnormal has exp == -127 here and always rounds to zero.
  return sign |
         static_cast<uint16_t>(shiftRightRoundEven(significand, -(exp + 1)));
}

float bf16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

uint16_t floatToBf16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((x >> 16) | 0x0040);
  // Adding 0x7fff plus the kept LSB rounds to nearest-even; an overflow of the
  // largest finite values carries into the exponent and gives Inf, as it must.
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

/// Rounds a double to float with round-to-odd. Rounding that result to f16 or
/// bf16 with nearest-even then equals rounding the double directly, because
/// binary32 keeps more than two extra bits; plain double->float->half would
/// round twice and can be off by one ulp at ties.
static float roundToOddFloat(double v) {
  if (std::isnan(v))
    return std::numeric_limits<float>::quiet_NaN();
  float f = static_cast<float>(v);
  if (static_cast<double>(f) == v)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v))
    f = std::nextafter(f,
                       0.0f); // Truncate toward zero (also turns Inf to max).
  return bitsToFloat(floatBits(f) | 1u);
}

HostTensor HostTensor::zeros(DType dtype, std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(t.byteSize(), 0);
  return t;
}

HostTensor HostTensor::zeros(const TensorSpec &spec) {
  return zeros(spec.dtype, spec.shape);
}

/// The product of `shape`; nullopt if a dim is negative or it overflows.
static std::optional<int64_t> checkedNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> next =
        dim < 0 ? std::nullopt : llvm::checkedMul(n, dim);
    if (!next)
      return std::nullopt;
    n = *next;
  }
  return n;
}

std::optional<int64_t> byteSizeOf(const TensorSpec &spec) {
  std::optional<int64_t> n = checkedNumel(spec.shape);
  if (!n)
    return std::nullopt;
  return llvm::checkedMul(*n, static_cast<int64_t>(dtypeSize(spec.dtype)));
}

uint64_t hostMemoryLimit(std::string *why) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  uint64_t limit = pages > 0 && pageSize > 0
                       ? uint64_t(pages) * uint64_t(pageSize)
                       : std::numeric_limits<uint64_t>::max();
  if (why)
    *why = "the physical memory";
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    // The address space already mapped: /proc/self/statm's first field.
    uint64_t mapped = 0;
    if (FILE *f = std::fopen("/proc/self/statm", "r")) {
      unsigned long long size = 0;
      if (std::fscanf(f, "%llu", &size) == 1 && pageSize > 0)
        mapped = size * uint64_t(pageSize);
      std::fclose(f);
    }
    uint64_t left = rl.rlim_cur > mapped ? rl.rlim_cur - mapped : 0;
    if (left < limit) {
      limit = left;
      if (why)
        *why = "what ulimit -v leaves";
    }
  }
  return limit;
}

int64_t HostTensor::numel() const { return checkedNumel(shape).value_or(0); }

size_t HostTensor::byteSize() const {
  return static_cast<size_t>(numel()) * dtypeSize(dtype);
}

void *HostTensor::raw() { return data.data(); }
const void *HostTensor::raw() const { return data.data(); }

double HostTensor::getAsDouble(int64_t flatIndex) const {
  size_t size = dtypeSize(dtype);
  if (flatIndex < 0 || static_cast<size_t>(flatIndex) >= data.size() / size)
    return std::numeric_limits<double>::quiet_NaN();
  const uint8_t *p = data.data() + static_cast<size_t>(flatIndex) * size;
  switch (dtype) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, sizeof(f));
    return f;
  }
  case DType::F16:
  case DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, sizeof(h));
    return dtype == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  }
  case DType::Bool:
    return *p != 0 ? 1.0 : 0.0;
  case DType::F64: {
    double d;
    std::memcpy(&d, p, sizeof(d));
    return d;
  }
  case DType::I32: {
    int32_t i;
    std::memcpy(&i, p, sizeof(i));
    return i;
  }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void HostTensor::setFromDouble(int64_t flatIndex, double v) {
  size_t size = dtypeSize(dtype);
  if (flatIndex < 0 || static_cast<size_t>(flatIndex) >= data.size() / size)
    return;
  uint8_t *p = data.data() + static_cast<size_t>(flatIndex) * size;
  switch (dtype) {
  case DType::F32: {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, sizeof(f));
    return;
  }
  case DType::F16:
  case DType::BF16: {
    float f = roundToOddFloat(v);
    uint16_t h = dtype == DType::F16 ? floatToHalf(f) : floatToBf16(f);
    std::memcpy(p, &h, sizeof(h));
    return;
  }
  case DType::Bool:
    *p = v != 0 ? 1 : 0;
    return;
  case DType::F64:
    std::memcpy(p, &v, sizeof(v));
    return;
  case DType::I32: {
    // Saturating, and 0 for NaN: an integer has no NaN to poison with.
    int32_t i = 0;
    if (v >= 2147483647.0)
      i = 2147483647;
    else if (v <= -2147483648.0)
      i = -2147483647 - 1;
    else if (v == v)
      i = static_cast<int32_t>(v);
    std::memcpy(p, &i, sizeof(i));
    return;
  }
  }
}

void HostTensor::fillNaN() {
  if (dtype == DType::Bool || dtype == DType::I32)
    return;
  int64_t n = static_cast<int64_t>(data.size() / dtypeSize(dtype));
  for (int64_t i = 0; i < n; ++i)
    setFromDouble(i, std::numeric_limits<double>::quiet_NaN());
}

std::string HostTensor::shapeString() const {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

/// A uniform double in [0, 1) from the top 53 bits, the same on every
/// platform (unlike std::uniform_real_distribution).
static double uniform01(std::mt19937_64 &gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

void fillRandomNormal(HostTensor &t, uint64_t seed) {
  if (t.dtype == DType::Bool) {
    fillRandomBool(t, seed, 0.5);
    return;
  }
  std::mt19937_64 gen(seed);
  int64_t n = static_cast<int64_t>(t.data.size() / dtypeSize(t.dtype));
  const double twoPi = 6.283185307179586476925286766559;
  for (int64_t i = 0; i < n; i += 2) {
    // 1 - u lies in (0, 1], so the log is finite.
    double u1 = 1.0 - uniform01(gen);
    double u2 = uniform01(gen);
    double r = std::sqrt(-2.0 * std::log(u1));
    t.setFromDouble(i, r * std::cos(twoPi * u2));
    if (i + 1 < n)
      t.setFromDouble(i + 1, r * std::sin(twoPi * u2));
  }
}

void fillRandomInt(HostTensor &t, uint64_t seed, int64_t lo, int64_t hi) {
  std::mt19937_64 gen(seed);
  int64_t n = static_cast<int64_t>(t.data.size() / dtypeSize(t.dtype));
  uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  for (int64_t i = 0; i < n; ++i)
    t.setFromDouble(
        i, static_cast<double>(lo + static_cast<int64_t>(gen() % span)));
}

void fillRandomBool(HostTensor &t, uint64_t seed, double pTrue) {
  std::mt19937_64 gen(seed);
  int64_t n = static_cast<int64_t>(t.data.size() / dtypeSize(t.dtype));
  for (int64_t i = 0; i < n; ++i)
    t.setFromDouble(i, uniform01(gen) < pTrue ? 1.0 : 0.0);
}

} // namespace mlir::attn::exec
