//===- GuardedBuffer.h - buffers between PROT_NONE guard pages --*- C++ -*-===//
//
// Part of the attn project.
//
// attn-run --guard-pages hands the compiled kernels every input and output
// in its own mmap'd region with an inaccessible (PROT_NONE) page on either
// side, the data flush against one of them, so that an out-of-bounds read
// or write by the generated code faults at once; valgrind cannot see such
// accesses in AVX-512 code. A SIGSEGV/SIGBUS handler turns a fault in a
// guard page into one line and an exit status instead of a bare crash.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_GUARDEDBUFFER_H
#define ATTN_EXECUTION_GUARDEDBUFFER_H

#include "llvm/Support/Error.h"

#include <cstddef>

namespace mlir::attn::exec {

/// Which end of its region a buffer's data touches. A buffer can sit
/// exactly against only one page boundary, so checking both ends takes two
/// runs, one per placement.
enum class GuardPlacement {
  /// The last byte is followed at once by the guard page: catches accesses
  /// past the end.
  AgainstEnd,
  /// The first byte directly follows the guard page: catches accesses
  /// before the start.
  AgainstStart,
};

/// `bytes` of zeroed, read-write memory between two PROT_NONE pages. The
/// guard pages are registered (up to 1024 live buffers) for the fault
/// handler of installGuardFaultHandler().
class GuardedBuffer {
public:
  static llvm::Expected<GuardedBuffer> create(size_t bytes,
                                              GuardPlacement placement);
  GuardedBuffer(GuardedBuffer &&other) noexcept;
  GuardedBuffer &operator=(GuardedBuffer &&other) noexcept;
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  ~GuardedBuffer();

  /// The first data byte; for zero bytes, the guard page boundary itself.
  void *data() const { return dataPtr; }
  size_t size() const { return bytes; }
  /// Makes the data pages read-only (after they are filled): a write into
  /// them then faults, and the handler reports it as a write into an input.
  llvm::Error makeReadOnly();

private:
  GuardedBuffer() = default;
  void release();

  void *base = nullptr;
  size_t mapped = 0;
  void *dataPtr = nullptr;
  size_t bytes = 0;
  int slot = -1;
};

/// Installs (once per process; later calls only update `prefix` and
/// `exitStatus`) a SIGSEGV and SIGBUS handler. A fault whose address lies in
/// a guard page of a live GuardedBuffer writes one line to stderr,
///   <prefix>out-of-bounds access by the generated code (a write at byte
///   1024 of a 1024-byte buffer)
/// (the faulting address's offset from the first data byte; negative before
/// the start; "read or write" where the fault does not say which), or for a
/// write into the data of a buffer made read-only,
///   <prefix>write into an input by the generated code (a write at byte 0
///   of a 64-byte read-only buffer)
/// and calls _exit(exitStatus). Any other fault gets the default action
/// (the process dies by the signal), as without the handler. `prefix` must
/// outlive the process (a string literal).
void installGuardFaultHandler(const char *prefix, int exitStatus);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_GUARDEDBUFFER_H
