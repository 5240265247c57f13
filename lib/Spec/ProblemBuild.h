//===- ProblemBuild.h - Pieces shared by the --sdpa module builders -------===//
//
// buildSdpaModule (Problem.cpp) and buildSdpaVarlenModule (ProblemVarlen.cpp)
// make the same function skeleton and the same op attributes from a spec.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_PROBLEMBUILD_H
#define ATTN_LIB_EXECUTION_PROBLEMBUILD_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Spec/Problem.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::attn::exec::detail {

/// A module with one `func.func @funcName` of the given type whose entry
/// block is empty; `b` is left at the start of that block. Diagnostics of the
/// passes point at the spec (`--sdpa`).
OwningOpRef<ModuleOp> createSpecFunction(MLIRContext &context, OpBuilder &b,
                                         llvm::StringRef funcName,
                                         TypeRange argTypes,
                                         TypeRange resultTypes, Block *&body);

/// The op attributes a spec (defaults filled) sets; null where it sets none.
struct SpecAttrs {
  FloatAttr scale, softcap;
  CausalKindAttr causal;
  DenseI64ArrayAttr window;
};
SpecAttrs specAttrsOf(OpBuilder &b, const SdpaSpec &full);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_PROBLEMBUILD_H
