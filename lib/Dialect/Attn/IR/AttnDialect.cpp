//===- AttnDialect.cpp - The attn dialect ---------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnTileOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnOpsDialect.cpp.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

namespace {
/// attn.sdpa is Pure and holds no region: a call of a function made of it may
/// be inlined anywhere. Without this the inliner keeps such calls, and a
/// caller that materializes the result in its own buffer gets the result
/// allocated in the callee and copied out (one output-sized buffer more).
struct AttnInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnGradOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnVarlenOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnTileOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
  addInterfaces<AttnInlinerInterface>();
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  // A target pass trusts the role it reads: a role that is not one of the
  // enum's is rejected here rather than misread there.
  if (attr.getName() == getTileRoleAttrName() &&
      !isa<TileRoleAttr>(attr.getValue()))
    return op->emitError() << "expected '" << getTileRoleAttrName()
                           << "' to be a #attn.tile<...> role, got "
                           << attr.getValue();
  return success();
}

void mlir::attn::setTileRole(Operation *op, TileRole role) {
  op->setAttr(AttnDialect::getTileRoleAttrName(),
              TileRoleAttr::get(op->getContext(), role));
}

std::optional<TileRole> mlir::attn::getTileRole(Operation *op) {
  if (auto attr =
          op->getAttrOfType<TileRoleAttr>(AttnDialect::getTileRoleAttrName()))
    return attr.getValue();
  return std::nullopt;
}
