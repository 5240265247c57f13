//===- AttnDialect.cpp - The attn dialect ---------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
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
#include "attn/Dialect/Attn/IR/AttnPagedOps.cpp.inc"
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
  if (attr.getName() == getTilingAttrName())
    return verifyTilingPlan(op, attr.getValue());
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

namespace {
/// The unit entries of `attn.tiling`, with the TilingPlan flag each sets.
struct TilingFlag {
  StringLiteral name;
  bool TilingPlan::*flag;
};
constexpr TilingFlag kTilingFlags[] = {
    {"transpose_values", &TilingPlan::transposeValues},
    {"pair_values", &TilingPlan::pairValues},
    {"split_f16", &TilingPlan::splitF16},
    {"f16_tiles", &TilingPlan::f16Tiles}};
constexpr StringLiteral kBlockQ = "block_q", kBlockKV = "block_kv";
} // namespace

bool TilingPlan::empty() const {
  return !blockQ && !blockKV && !transposeValues && !pairValues && !splitF16 &&
         !f16Tiles;
}

void mlir::attn::setTilingPlan(Operation *op, const TilingPlan &plan) {
  if (plan.empty()) {
    op->removeAttr(AttnDialect::getTilingAttrName());
    return;
  }
  Builder b(op->getContext());
  SmallVector<NamedAttribute> entries;
  if (plan.blockQ)
    entries.push_back(
        b.getNamedAttr(kBlockQ, b.getI64IntegerAttr(*plan.blockQ)));
  if (plan.blockKV)
    entries.push_back(
        b.getNamedAttr(kBlockKV, b.getI64IntegerAttr(*plan.blockKV)));
  for (const TilingFlag &f : kTilingFlags)
    if (plan.*f.flag)
      entries.push_back(b.getNamedAttr(f.name, b.getUnitAttr()));
  op->setAttr(AttnDialect::getTilingAttrName(), b.getDictionaryAttr(entries));
}

TilingPlan mlir::attn::getTilingPlan(Operation *op) {
  TilingPlan plan;
  auto dict =
      op->getAttrOfType<DictionaryAttr>(AttnDialect::getTilingAttrName());
  if (!dict)
    return plan;
  if (auto q = dict.getAs<IntegerAttr>(kBlockQ))
    plan.blockQ = q.getInt();
  if (auto kv = dict.getAs<IntegerAttr>(kBlockKV))
    plan.blockKV = kv.getInt();
  for (const TilingFlag &f : kTilingFlags)
    plan.*f.flag = static_cast<bool>(dict.getAs<UnitAttr>(f.name));
  return plan;
}

LogicalResult mlir::attn::verifyTilingPlan(Operation *op, Attribute attr) {
  StringLiteral name = AttnDialect::getTilingAttrName();
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return op->emitError() << "expected '" << name
                           << "' to be a dictionary, got " << attr;
  if (!isa<SdpaOp>(op))
    return op->emitError() << "'" << name << "' plans an attn.sdpa's tiling: "
                           << "not expected on '" << op->getName() << "'";
  for (NamedAttribute entry : dict) {
    StringRef key = entry.getName().getValue();
    if (key == kBlockQ || key == kBlockKV) {
      auto size = dyn_cast<IntegerAttr>(entry.getValue());
      if (!size || !size.getType().isInteger(64) || size.getInt() <= 0)
        return op->emitError()
               << "expected '" << name << "' entry '" << key
               << "' to be a positive i64, got " << entry.getValue();
      continue;
    }
    if (llvm::any_of(kTilingFlags,
                     [&](const TilingFlag &f) { return f.name == key; })) {
      if (!isa<UnitAttr>(entry.getValue()))
        return op->emitError()
               << "expected '" << name << "' entry '" << key
               << "' to be a unit attribute, got " << entry.getValue();
      continue;
    }
    return op->emitError()
           << "unknown '" << name << "' entry '" << key
           << "' (expected block_q, block_kv, transpose_values, pair_values, "
              "split_f16, f16_tiles)";
  }
  return success();
}
