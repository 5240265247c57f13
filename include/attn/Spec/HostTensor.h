//===- HostTensor.h - Host tensors and element conversions ------*- C++ -*-===//
//
// A dense, C-ordered tensor of raw little-endian element bytes, its
// description (TensorSpec), plus the scalar conversions (f16, bf16) and the
// seeded random fills that every tool shares. Free of MLIR (it needs LLVM's
// Support only) so that the runner, the tests and the Python package can all
// link it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_HOSTTENSOR_H
#define ATTN_EXECUTION_HOSTTENSOR_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::exec {

enum class DType { F32, F16, BF16, Bool, F64, I32 };

/// Bytes per element: 4, 2, 2, 1, 8, 4.
size_t dtypeSize(DType dtype);
/// MLIR spelling of the element type: "f32", "f16", "bf16", "i1", "f64".
const char *dtypeName(DType dtype);
/// Parses "f32", "f16", "bf16", "f64", and "i1"/"bool" for Bool; nullopt for
/// anything else (the spelling is case-sensitive).
std::optional<DType> parseDType(llvm::StringRef s);

/// IEEE binary16 <-> binary32, round-to-nearest-even, with infinities, NaNs
/// and subnormals handled exactly.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
/// bfloat16 <-> binary32, round-to-nearest-even; a NaN stays a (quiet) NaN.
float bf16ToFloat(uint16_t bits);
uint16_t floatToBf16(float value);

/// The shape and element type of one tensor: what a function's argument or
/// result needs allocated.
struct TensorSpec {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;

  bool operator==(const TensorSpec &other) const {
    return shape == other.shape && dtype == other.dtype;
  }
  bool operator!=(const TensorSpec &other) const { return !(*this == other); }
};

/// The bytes a tensor of `spec` holds; nullopt if a dim is negative or the
/// size does not fit in int64 (every product overflow-checked).
std::optional<int64_t> byteSizeOf(const TensorSpec &spec);

/// How much memory this process may still allocate: the physical memory,
/// lowered to what `ulimit -v` (RLIMIT_AS) leaves beyond the address space
/// already mapped. `why` names the bound that applied.
uint64_t hostMemoryLimit(std::string *why = nullptr);

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Raw little-endian element bytes in C order.
  std::vector<uint8_t> data;

  /// A tensor of `shape` with every byte zero (0.0 / false).
  static HostTensor zeros(DType dtype, std::vector<int64_t> shape);
  /// The same for the shape and element type of `spec`.
  static HostTensor zeros(const TensorSpec &spec);

  /// Product of the dims (1 for a scalar); 0 if any dim is negative or the
  /// product overflows int64.
  int64_t numel() const;
  /// numel() * dtypeSize(dtype).
  size_t byteSize() const;
  void *raw();
  const void *raw() const;

  /// Element `flatIndex` (C order) as a double; Bool reads as 0 or 1. An index
  /// outside [0, numel()) reads as NaN rather than touching foreign memory.
  double getAsDouble(int64_t flatIndex) const;
  /// Stores `v` rounded once to the element type (Bool: v != 0). An index
  /// outside [0, numel()) is ignored.
  void setFromDouble(int64_t flatIndex, double v);
  /// Fills a floating-point tensor with quiet NaNs so that any element a
  /// kernel forgets to write shows up in the comparison. Bool is left as is.
  void fillNaN();
  /// "2x8x128x64"; the empty string for a rank-0 tensor.
  std::string shapeString() const;
};

/// Fills `t` with standard normals drawn from std::mt19937_64 seeded with
/// `seed` through a hand-written Box-Muller transform, so the values are the
/// same with every standard library. Each value is rounded to t.dtype. A Bool
/// tensor gets fillRandomBool(t, seed, 0.5).
void fillRandomNormal(HostTensor &t, uint64_t seed);
/// Fills `t` with true (1) with probability `pTrue`, else false (0).
void fillRandomBool(HostTensor &t, uint64_t seed, double pTrue);
/// Fills `t` with integers uniform in [lo, hi] from `seed`.
void fillRandomInt(HostTensor &t, uint64_t seed, int64_t lo, int64_t hi);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_HOSTTENSOR_H
