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

#include "attn/Spec/HostTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace mlir::attn::exec {

/// Reads the file at `path`; an error's message starts with the path.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path);
/// Writes `t` to `path`; an error's message starts with the path.
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &t);

/// Parses the bytes of a whole .npy file.
llvm::Expected<HostTensor> parseNpy(llvm::ArrayRef<uint8_t> bytes);
/// The bytes of a version 1.0 .npy file holding `t`.
std::vector<uint8_t> serializeNpy(const HostTensor &t);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_NPY_H
