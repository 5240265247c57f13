//===- Error.h - the execution library's one error convention ---*- C++ -*-===//
//
// Part of the attn project.
//
// Library code under lib/Execution reports failures as llvm::Error or
// llvm::Expected<T> carrying a one-line message; only a tool's main turns an
// error into a message and an exit code.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_ERROR_H
#define ATTN_EXECUTION_ERROR_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace mlir::attn::exec {

/// An error carrying `message` (one line, no trailing period).
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_ERROR_H
