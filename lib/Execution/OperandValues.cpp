//===- OperandValues.cpp - values the attn ops constrain ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "OperandValues.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"
#include "attn/Spec/Reference.h"
#include "attn/Spec/ReferenceVarlen.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

llvm::Error mlir::attn::exec::detail::prepareOperandValues(
    func::FuncOp entry, std::vector<HostTensor> &inputs, bool generated) {
  Block &body = entry.getBody().front();
  auto argIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast_or_null<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() >= inputs.size())
      return std::nullopt;
    return arg.getArgNumber();
  };
  // The packed rows of a query or key: its input's, or its type's; unknown
  // (any) when computed in the entry with a dynamic size.
  auto rowsOf = [&](Value packed) -> int64_t {
    if (std::optional<unsigned> i = argIndex(packed))
      return inputs[*i].shape[0];
    auto type = cast<RankedTensorType>(packed.getType());
    return type.isDynamicDim(0) ? std::numeric_limits<int64_t>::max()
                                : type.getDimSize(0);
  };
  std::optional<llvm::Error> error;
  auto fail = [&](llvm::Error e) {
    error.emplace(std::move(e));
    return WalkResult::interrupt();
  };
  entry.walk([&](Operation *op) {
    if (auto varlen = dyn_cast<SdpaVarlenOp>(op)) {
      struct Offsets {
        const char *name;
        Value cu, packed;
      } offsets[2] = {
          {"cu_seqlens_q", varlen.getCuSeqlensQ(), varlen.getQuery()},
          {"cu_seqlens_k", varlen.getCuSeqlensK(), varlen.getKey()}};
      for (const Offsets &o : offsets) {
        std::optional<unsigned> i = argIndex(o.cu);
        if (!i)
          continue;
        int64_t rows = rowsOf(o.packed);
        if (generated && rows != std::numeric_limits<int64_t>::max()) {
          fillEvenVarlenOffsets(inputs[*i], rows);
          continue;
        }
        llvm::Expected<std::vector<int64_t>> cu =
            checkVarlenOffsets(o.name, inputs[*i], rows);
        if (!cu)
          return fail(cu.takeError());
      }
    }
    Value slopes;
    if (auto sdpa = dyn_cast<SdpaOp>(op))
      slopes = sdpa.getAlibiSlopes();
    else if (auto varlen = dyn_cast<SdpaVarlenOp>(op))
      slopes = varlen.getAlibiSlopes();
    else if (auto paged = dyn_cast<SdpaPagedOp>(op))
      slopes = paged.getAlibiSlopes();
    if (std::optional<unsigned> i = argIndex(slopes))
      if (llvm::Error e = checkAlibiSlopes(inputs[*i]))
        return fail(std::move(e));
    return WalkResult::advance();
  });
  if (error)
    return std::move(*error);
  return llvm::Error::success();
}
