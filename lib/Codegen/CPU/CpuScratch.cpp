//===- CpuScratch.cpp - scratch buffers of the CPU kernels ----------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "CpuScratch.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

Value mlir::attn::detail::queryBlockScratch(Operation *op, MemRefType type,
                                            StringRef use, bool shared) {
  auto forall = op->getParentOfType<scf::ForallOp>();
  if (!forall)
    return {};
  Block *body = forall.getBody();
  if (shared)
    for (auto alloc : body->getOps<memref::AllocOp>()) {
      auto tag = alloc->getAttrOfType<StringAttr>(kScratchAttrName);
      if (tag && tag.getValue() == use && alloc.getType() == type)
        return alloc;
    }
  OpBuilder b(body, body->begin());
  auto alloc =
      memref::AllocOp::create(b, op->getLoc(), type, b.getI64IntegerAttr(64));
  alloc->setAttr(kScratchAttrName, b.getStringAttr(use));
  b.setInsertionPoint(body->getTerminator());
  memref::DeallocOp::create(b, op->getLoc(), alloc);
  return alloc;
}
