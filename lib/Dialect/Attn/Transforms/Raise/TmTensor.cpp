//===- TmTensor.cpp - the generic form of torch-mlir's tm_tensor.attention ===//
//
// Part of the attn project.
//
// torch-mlir lowers an SDPA it keeps whole (an empty decomposition table) to
// `tm_tensor.attention` on [B*H, L, D] operands, collapsed from [B, H, L, D],
// with causality materialized as an additive mask and GQA's K/V copied. attn
// does not register the TMTensor dialect: the op is matched by name in its
// generic form (parse with --allow-unregistered-dialect).
//
//===----------------------------------------------------------------------===//

#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-raise-sdpa"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

LogicalResult Matcher::matchTmTensorAttention(Operation *op) {
  LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] trying " << *op << "\n");
  // Operands: query, key, value, [mask], output (operandSegmentSizes).
  auto segments = op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
  if (!segments || segments.size() != 2 || segments[1] != 1 ||
      (segments[0] != 3 && segments[0] != 4) || op->getNumResults() != 1)
    return fail("tm_tensor.attention with unexpected operands");
  for (NamedAttribute attr : op->getAttrs())
    if (attr.getName() != "operandSegmentSizes" && attr.getName() != "scale")
      return fail("tm_tensor.attention with attribute " +
                  attr.getName().getValue());
  tensor::CollapseShapeOp cq = batchCollapse(op->getOperand(0));
  tensor::CollapseShapeOp ck = batchCollapse(op->getOperand(1));
  tensor::CollapseShapeOp cv = batchCollapse(op->getOperand(2));
  tensor::ExpandShapeOp out = batchExpand(op->getResult(0));
  if (!cq || !ck || !cv || !out ||
      !sameBatchHeads(cq.getSrcType(), out.getResultType()) ||
      !sameBatchHeads(ck.getSrcType(), out.getResultType()) ||
      !sameBatchHeads(cv.getSrcType(), out.getResultType()))
    return fail("tm_tensor.attention operands are not [B, H] collapses");
  for (Operation *o : {op, cq.getOperation(), ck.getOperation(),
                       cv.getOperation(), out.getOperation()})
    tr.consume(o);
  m.root = out.getResult();
  Term q = tr.element(cq.getSrc(),
                      {Idx::of(kB), Idx::of(kH), Idx::of(kI), Idx::of(kD)});
  Term k = tr.element(ck.getSrc(),
                      {Idx::of(kB), Idx::of(kH), Idx::of(kJ), Idx::of(kD)});
  Term v = tr.element(cv.getSrc(),
                      {Idx::of(kB), Idx::of(kH), Idx::of(kJ), Idx::of(kE)});
  if (!q.isLeaf() || !isPlain(q.leafIdx, {kB, kH, kI, kD}))
    return fail("tm_tensor.attention query is not a [B, H, L, D] tensor");
  auto kvGroup = [](const Term &t, int last) -> int64_t {
    if (!t.isLeaf() || t.leafIdx.size() != 4 || !t.leafIdx[0].isPlain(kB) ||
        !t.leafIdx[2].isPlain(kJ) || !t.leafIdx[3].isPlain(last))
      return 0;
    const Idx &h = t.leafIdx[1];
    return h.isPlain(kH) ? 1 : (h.root == kH && h.mod == 0) ? h.div : 0;
  };
  int64_t gk = kvGroup(k, kD), gv = kvGroup(v, kE);
  if (gk == 0 || gk != gv)
    return fail("tm_tensor.attention key/value are not (grouped) reads");
  m.query = q.leaf;
  m.key = k.leaf;
  m.value = v.leaf;
  m.kvGroup = gk;
  if (auto scale = op->getAttrOfType<FloatAttr>("scale"))
    m.scale = scale.getValueAsDouble();
  else if (op->hasAttr("scale"))
    return fail("tm_tensor.attention scale is not a float");
  if (segments[0] == 4) {
    tensor::CollapseShapeOp cm = batchCollapse(op->getOperand(3));
    if (!cm || !sameBatchHeads(cm.getSrcType(), out.getResultType()))
      return fail("tm_tensor.attention mask is not a [B, H] collapse");
    tr.consume(cm);
    lq = cm.getSrcType().getDimSize(2);
    lk = cm.getSrcType().getDimSize(3);
    Term mask = tr.element(
        cm.getSrc(), {Idx::of(kB), Idx::of(kH), Idx::of(kI), Idx::of(kJ)});
    if (!isa<FloatType>(mask.getType()))
      return fail("tm_tensor.attention with a mask that is not float");
    if (failed(matchAdditiveMask(mask)))
      return failure();
    return checkFiniteHidden();
  }
  return success();
}
