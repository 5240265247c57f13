//===- Problem.h - from a spec or an entry function to a problem -*- C++
//-*-===//
//
// Part of the attn project.
//
// The bridge between the IR and the host side: builds the module of an
// `--sdpa` spec directly with an OpBuilder (no print/parse round trip), and
// works out what an entry function of a user's module takes and returns and,
// when it is exactly one attn.sdpa on its arguments, the SdpaProblem that the
// f64 reference checks. The one mapping between MLIR element types and
// DType, and between attn::CausalKind and exec::Causal, lives here.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_PROBLEM_H
#define ATTN_EXECUTION_PROBLEM_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Reference.h"
#include "attn/Spec/SdpaSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// The DType of an MLIR element type (f32, f16, bf16, i1, f64), if any.
std::optional<DType> dtypeOf(Type elementType);
/// The MLIR element type of a DType.
Type elementTypeOf(MLIRContext &context, DType dtype);
/// The op's causal alignment as the reference's enum, and back.
Causal toHostCausal(std::optional<CausalKind> kind);
std::optional<CausalKind> toCausalKind(Causal causal);

/// What an entry function takes and returns (concrete shapes), and the
/// problem it computes when it is exactly one attn.sdpa on its arguments.
struct EntrySignature {
  std::vector<TensorSpec> args, results;
  /// Set when the entry is one attn.sdpa on its arguments, returned as is:
  /// then the f64 reference can check it.
  std::optional<SdpaProblem> problem;
};

/// Sizes of the dynamic dims `b`, `lq`, `lk` of an entry (`--dims`).
using DimSizes = std::map<std::string, int64_t>;

/// Parses "b=2,lq=77,lk=300" (keys b, lq, lk; values > 0; "" gives none).
llvm::Expected<DimSizes> parseDimSizes(llvm::StringRef text);

/// A module holding `func.func @<funcName>` whose body is one attn.sdpa of
/// `spec` (defaults filled) and a return. `scale` is set only when the spec
/// sets it, `causal` only when not none. With `spec.dynamic`, dims 0 and 2
/// of every operand and result, and the mask's dims 0, 2 and 3 that are not
/// 1, are dynamic. The result verifies.
OwningOpRef<ModuleOp> buildSdpaModule(MLIRContext &context,
                                      const SdpaSpec &spec,
                                      llvm::StringRef funcName = "sdpa");

/// The same for a varlen spec (`seqlens_q`): one attn.sdpa_varlen on the
/// packed query, key, value, the offsets and the ALiBi slopes
/// (ProblemVarlen.cpp); buildSdpaModule() calls it for such a spec.
OwningOpRef<ModuleOp> buildSdpaVarlenModule(MLIRContext &context,
                                            const SdpaSpec &spec,
                                            llvm::StringRef funcName);

/// The same for a paged spec (`page_size`): one attn.sdpa_paged on the
/// query, the caches, the page table, the lengths and the ALiBi slopes
/// (ProblemPaged.cpp); buildSdpaModule() calls it for such a spec.
OwningOpRef<ModuleOp> buildSdpaPagedModule(MLIRContext &context,
                                           const SdpaSpec &spec,
                                           llvm::StringRef funcName);

/// The signature of the function buildSdpaModule() makes, with the spec's
/// concrete sizes (also when `spec.dynamic`).
EntrySignature signatureOf(const SdpaSpec &spec);

/// The function @`name` (it must have a body), or with an empty name the
/// first function with a body that calls attn.sdpa. `source` names the input
/// in the message when there is none.
llvm::Expected<func::FuncOp> findEntry(ModuleOp module, llvm::StringRef name,
                                       llvm::StringRef source);

/// The attn.sdpa that `entry` consists of when its body is exactly one
/// attn.sdpa on its arguments in order, whose results it returns; else null.
SdpaOp getSoleSdpaOnArguments(func::FuncOp entry);

/// The concrete signature of `entry`: its static shapes, with dynamic dims
/// of a one-sdpa entry sized from `dims`. Fails, naming the argument and
/// dim, on a type that is not a ranked tensor of f32/f16/bf16/i1, a dynamic
/// dim that `dims` does not size, or a `dims` size contradicting a static
/// one.
llvm::Expected<EntrySignature> analyzeEntry(func::FuncOp entry,
                                            const DimSizes &dims);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_PROBLEM_H
