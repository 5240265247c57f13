//===- Shim.h - the C entry points of an AOT library ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_COMPILE_SHIM_H
#define ATTN_LIB_COMPILE_SHIM_H

#include "attn/Compile/Aot.h"

#include <string>
#include <vector>

namespace mlir::attn::compile {

/// The symbol of the function that the lowering exports for `name`:
/// `_mlir_ciface_<implName(name)>` takes one memref descriptor pointer per
/// buffer.
std::string implName(llvm::StringRef name);

/// C source implementing include/attn-c/attn.h for `functions`: each entry
/// validates its arguments, builds the memref descriptors from the buffer
/// pointers and the static and dynamic sizes, and calls the generated code;
/// plus attn_status_string() and attn_last_error(). For the cpu target it
/// also defines the runner-utils function the generated code may call
/// (memrefCopy); for cuda it brackets the call with AttnCudaRuntime's
/// attnCudaBeginCall/attnCudaEndCall. With `amx` (cpu: the generated code
/// runs AMX tiles), each entry first asks the OS for the AMX tile state,
/// once per process, and returns ATTN_ERROR_NO_DEVICE if it is refused.
std::string generateShim(const std::vector<FunctionAbi> &functions,
                         Target target, bool amx = false);

} // namespace mlir::attn::compile

#endif // ATTN_LIB_COMPILE_SHIM_H
