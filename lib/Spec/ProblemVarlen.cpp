//===- ProblemVarlen.cpp - the module of a varlen --sdpa spec -------------===//
//
// Part of the attn project.
//
// A spec with seqlens_q builds one attn.sdpa_varlen on its arguments: the
// packed query, key and value, the offsets cu_seqlens_q and cu_seqlens_k
// (arguments, so that --inputs and --dump carry them) and the ALiBi slopes.
//
//===----------------------------------------------------------------------===//

#include "ProblemBuild.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"
#include "attn/Spec/Problem.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

OwningOpRef<ModuleOp> mlir::attn::exec::buildSdpaVarlenModule(
    MLIRContext &context, const SdpaSpec &spec, llvm::StringRef funcName) {
  SdpaSpec full = spec.withDefaults();
  EntrySignature signature = signatureOf(full);
  // With `dynamic`: the packed totals, the offsets' count and the slopes'
  // sequence dim.
  auto typeOf = [&](const TensorSpec &t, bool dynamicFirst) {
    SmallVector<int64_t> shape(t.shape.begin(), t.shape.end());
    if (dynamicFirst && full.dynamic)
      shape[0] = ShapedType::kDynamic;
    return RankedTensorType::get(shape, elementTypeOf(context, t.dtype));
  };
  SmallVector<Type> argTypes, resultTypes;
  for (auto [i, arg] : llvm::enumerate(signature.args))
    argTypes.push_back(typeOf(arg, i < 5 || arg.shape.size() == 2));
  resultTypes.push_back(typeOf(signature.results[0], true));
  if (full.lse) { // [Hq, total_q].
    RankedTensorType lse = typeOf(signature.results[1], false);
    SmallVector<int64_t> shape(lse.getShape());
    if (full.dynamic)
      shape[1] = ShapedType::kDynamic;
    resultTypes.push_back(lse.clone(shape));
  }

  OpBuilder b(&context);
  Block *body = nullptr;
  OwningOpRef<ModuleOp> module = detail::createSpecFunction(
      context, b, funcName, argTypes, resultTypes, body);
  Location loc = module->getLoc();
  Value slopes =
      full.alibi != SdpaProblem::Alibi::None ? body->getArgument(5) : Value();
  auto [scale, softcap, causal, window] = detail::specAttrsOf(b, full);
  auto op = SdpaVarlenOp::create(b, loc, resultTypes, body->getArgument(0),
                                 body->getArgument(1), body->getArgument(2),
                                 body->getArgument(3), body->getArgument(4),
                                 slopes, scale, causal, window, softcap);
  func::ReturnOp::create(b, loc, op->getResults());
  return module;
}
