//===- Npy.h - .npy reading and writing -------------------------*- C++ -*-===//
//
// NumPy's .npy format, the interchange format of `attn-run --inputs/--dump`.
// Reads versions 1.0, 2.0 and 3.0; writes 1.0 with the data aligned to 64
// bytes, as NumPy does. Element types: f32 '<f4', f16 '<f2', bf16 as its raw
// bits '<u2' (NumPy has no bfloat16), i1 '|b1', f64 '<f8'; '<u2' always reads
// as BF16. Little-endian, C order only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_NPY_H
#define ATTN_EXECUTION_NPY_H

#include "attn/Execution/HostTensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// Reads the file at `path`. On failure returns false and sets `error` to a
/// message that starts with the path.
bool readNpy(const std::string &path, HostTensor &out, std::string &error);
/// Writes `t` to `path`. On failure returns false and sets `error`.
bool writeNpy(const std::string &path, const HostTensor &t, std::string &error);

/// Parses the bytes of a whole .npy file. On failure returns false and sets
/// `error`; `out` is then unspecified.
bool parseNpy(const std::vector<uint8_t> &bytes, HostTensor &out,
              std::string &error);
/// The bytes of a version 1.0 .npy file holding `t`.
std::vector<uint8_t> serializeNpy(const HostTensor &t);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_NPY_H
