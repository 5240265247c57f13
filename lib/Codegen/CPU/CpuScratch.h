//===- CpuScratch.h - scratch buffers of the CPU kernels --------*- C++ -*-===//
//
// Part of the attn project.
//
// The CPU kernels' own buffers (f16/bf16 tiles widened to f32, the packed
// operands of the bf16 dot products) live for one query block: each is a
// memref.alloc at the start of the scf.forall body around the op, freed at
// its end, and tagged `attn.scratch` so that attn-hoist-thread-scratch can
// move it out of the loop once the query blocks are threads (one buffer per
// thread, allocated once per call). Private to the attn transforms library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUSCRATCH_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUSCRATCH_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Operation.h"

namespace mlir::attn::detail {

/// The attribute that marks a scratch buffer (a string: its use).
constexpr llvm::StringLiteral kScratchAttrName = "attn.scratch";

/// A buffer of `type` for the query block around `op` (allocated at the
/// start of the enclosing scf.forall's body, freed before its terminator),
/// tagged attn.scratch = `use`. With `shared`, a buffer of the same type and
/// use that the body already has is returned instead of a new one: for uses
/// whose contents are dead once the kernel that wrote them has run. Null if
/// `op` is not inside an scf.forall.
Value queryBlockScratch(Operation *op, MemRefType type, StringRef use,
                        bool shared);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_CPUSCRATCH_H
