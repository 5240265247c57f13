//===- ProblemPaged.cpp - the module of a paged --sdpa spec ---------------===//
//
// Part of the attn project.
//
// One attn.sdpa_paged on the query, the key and value caches, the page
// table, the kv lengths and (with alibi) the slopes; with `dynamic`, the
// sequence count, the query rows, the cache's pages and the table's width
// are '?'.
//
//===----------------------------------------------------------------------===//

#include "ProblemBuild.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Spec/Problem.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

OwningOpRef<ModuleOp> mlir::attn::exec::buildSdpaPagedModule(
    MLIRContext &context, const SdpaSpec &spec, llvm::StringRef funcName) {
  SdpaSpec full = spec.withDefaults();
  EntrySignature signature = signatureOf(full);
  // The dims of each argument and result that `dynamic` makes '?': B and Lq
  // of query, out and lse; the caches' pages; the table's B and width; the
  // lengths' and [B, Hq] slopes' B.
  auto typeOf = [&](const TensorSpec &t, ArrayRef<unsigned> dynamicDims) {
    SmallVector<int64_t> shape(t.shape.begin(), t.shape.end());
    if (full.dynamic)
      for (unsigned d : dynamicDims)
        shape[d] = ShapedType::kDynamic;
    return RankedTensorType::get(shape, elementTypeOf(context, t.dtype));
  };
  const SmallVector<unsigned> argDynamic[] = {{0, 2}, {0}, {0}, {0, 1}, {0}};
  SmallVector<Type> argTypes, resultTypes;
  for (auto [i, arg] : llvm::enumerate(signature.args)) {
    if (i < 5)
      argTypes.push_back(typeOf(arg, argDynamic[i]));
    else if (arg.shape.size() == 2) // Slopes [b, hq].
      argTypes.push_back(typeOf(arg, {0}));
    else // Slopes [hq].
      argTypes.push_back(typeOf(arg, {}));
  }
  resultTypes.push_back(typeOf(signature.results[0], {0, 2}));
  if (full.lse)
    resultTypes.push_back(typeOf(signature.results[1], {0, 2}));

  OpBuilder b(&context);
  Block *body = nullptr;
  OwningOpRef<ModuleOp> module = detail::createSpecFunction(
      context, b, funcName, argTypes, resultTypes, body);
  Location loc = module->getLoc();
  Value slopes =
      full.alibi != SdpaProblem::Alibi::None ? body->getArgument(5) : Value();
  auto [scale, softcap, causal, window] = detail::specAttrsOf(b, full);
  KvLayoutAttr layout =
      full.hndLayout ? KvLayoutAttr::get(&context, KvLayout::HND) : nullptr;
  auto op = SdpaPagedOp::create(b, loc, resultTypes, body->getArgument(0),
                                body->getArgument(1), body->getArgument(2),
                                body->getArgument(3), body->getArgument(4),
                                slopes, layout, scale, causal, window, softcap);
  func::ReturnOp::create(b, loc, op->getResults());
  return module;
}
