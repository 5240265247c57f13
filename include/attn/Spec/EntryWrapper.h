//===- EntryWrapper.h - destination-passing entry points --------*- C++ -*-===//
//
// Part of the attn project.
//
// The JIT (Jit.cpp) and the AOT compiler (lib/Compile) both call a function
// that takes and returns tensors through an entry point over caller-owned
// buffers: this builds that entry point.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_ENTRYWRAPPER_H
#define ATTN_EXECUTION_ENTRYWRAPPER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::attn::exec {

/// Adds `func.func @<wrapperName>(inputs..., outputs...)` over memrefs (the
/// identity layout) to `module`, with `llvm.emit_c_interface`: it calls
/// `entry` on the inputs and materializes each result in its output buffer,
/// so that after inlining, bufferization writes the results straight into
/// the caller's buffers. Every other function with a body is made private,
/// for the inliner and symbol-dce to fold it into the wrapper. Fails if
/// `entry` takes or returns anything but ranked tensors.
llvm::Error buildDestinationPassingEntry(ModuleOp module, func::FuncOp entry,
                                         llvm::StringRef wrapperName);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_ENTRYWRAPPER_H
