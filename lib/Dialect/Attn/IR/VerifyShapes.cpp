//===- VerifyShapes.cpp - checks the attn ops' verifiers share ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "VerifyShapes.h"

#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include <cassert>
#include <cmath>

#include <string>

using namespace mlir;
using namespace mlir::attn;

static std::string dimToString(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

LogicalResult verify::dimRules(Operation *op, ArrayRef<NamedType> all,
                               ArrayRef<DimRule> rules) {
  for (const DimRule &r : rules) {
    if (!all[r.lhs].type || !all[r.rhs].type)
      continue;
    int64_t a = all[r.lhs].type.getDimSize(r.lhsDim);
    int64_t b = all[r.rhs].type.getDimSize(r.rhsDim);
    if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
      continue;
    return op->emitOpError()
           << "expected " << all[r.lhs].name << " dim " << r.lhsDim << " (" << a
           << ") to equal " << all[r.rhs].name << " dim " << r.rhsDim << " ("
           << b << ")";
  }
  return success();
}

LogicalResult verify::staticHeadDims(Operation *op, ArrayRef<NamedType> tensors,
                                     unsigned headsDim, unsigned headDimDim) {
  for (const NamedType &t : tensors)
    for (unsigned dim : {headsDim, headDimDim})
      if (t.type.isDynamicDim(dim))
        return op->emitOpError()
               << "expected " << t.name << " dim " << dim << " ("
               << (dim == headsDim ? "heads" : "head dim") << ") to be static";
  return success();
}

LogicalResult verify::positiveHeadDims(Operation *op, RankedTensorType q,
                                       RankedTensorType v, unsigned dim) {
  if (q.getDimSize(dim) > 0 && v.getDimSize(dim) > 0)
    return success();
  return op->emitOpError() << "expected positive head dims, but got query dim "
                           << dim << " (" << q.getDimSize(dim)
                           << ") and value dim " << dim << " ("
                           << v.getDimSize(dim) << ")";
}

LogicalResult verify::alibiSlopes(Operation *op, RankedTensorType t, int64_t hq,
                                  int64_t batch, StringRef batchName) {
  if ((t.getRank() != 1 && t.getRank() != 2) || !t.getElementType().isF32())
    return op->emitOpError() << "expected alibi_slopes to be an f32 tensor "
                                "[Hq] or [B, Hq], but got "
                             << t;
  int64_t heads = t.getDimSize(t.getRank() - 1);
  if (!ShapedType::isDynamic(heads) && !ShapedType::isDynamic(hq) &&
      heads != hq)
    return op->emitOpError()
           << "expected alibi_slopes dim " << t.getRank() - 1 << " (" << heads
           << ") to equal query dim 1 (" << hq << ")";
  if (t.getRank() == 2 && !t.isDynamicDim(0) && !ShapedType::isDynamic(batch) &&
      t.getDimSize(0) != batch)
    return op->emitOpError()
           << "expected alibi_slopes dim 0 (" << t.getDimSize(0)
           << ") to equal " << batchName << batch << ")";
  return success();
}

LogicalResult verify::heads(Operation *op, int64_t hq, int64_t hkv) {
  if (hq > 0 && hkv > 0 && hq % hkv == 0)
    return success();
  return op->emitOpError() << "expected query heads (query dim 1: " << hq
                           << ") to be a positive multiple of key/value heads "
                              "(key dim 1: "
                           << hkv << ")";
}

LogicalResult verify::mask(Operation *op, RankedTensorType m, Type elt,
                           ArrayRef<int64_t> full) {
  if (m.getRank() != 4)
    return op->emitOpError()
           << "expected mask to have rank 4, but got rank " << m.getRank();
  Type mt = m.getElementType();
  if (!mt.isInteger(1) && mt != elt && !mt.isF32())
    return op->emitOpError() << "expected mask element type to be i1, f32 or "
                                "the query element type ("
                             << elt << "), but got " << mt;
  const char *names[4] = {"B", "Hq", "Lq", "Lk"};
  for (unsigned i = 0; i < 4; ++i) {
    int64_t md = m.getDimSize(i);
    if (md == 1 || ShapedType::isDynamic(md) ||
        ShapedType::isDynamic(full[i]) || md == full[i])
      continue;
    return op->emitOpError()
           << "expected mask dim " << i << " (" << md << ") to be 1 or "
           << names[i] << " (" << dimToString(full[i]) << ")";
  }
  return success();
}

LogicalResult verify::scoreAttributes(Operation *op,
                                      std::optional<ArrayRef<int64_t>> window,
                                      Attribute softcapAttr,
                                      Attribute scaleAttr) {
  if (window) {
    if (window->size() != 2)
      return op->emitOpError() << "expected window to hold 2 values (left, "
                                  "right), but got "
                               << window->size();
    const char *sides[2] = {"left", "right"};
    for (unsigned i = 0; i < 2; ++i)
      if ((*window)[i] < -1)
        return op->emitOpError()
               << "expected window " << sides[i] << " (" << (*window)[i]
               << ") to be -1 (unbounded) or non-negative";
  }
  if (auto cap = dyn_cast_or_null<FloatAttr>(softcapAttr)) {
    const APFloat &c = cap.getValue();
    if (!c.isFiniteNonZero() || c.isNegative())
      return op->emitOpError() << "expected softcap to be finite and positive, "
                                  "but got "
                               << softcapAttr;
    if (cap.getValueAsDouble() > kMaxLog2EFactor)
      return op->emitOpError()
             << "expected softcap to be at most " << kMaxLog2EFactor
             << " (FLT_MAX / log2(e)), but got " << softcapAttr;
  }
  if (auto s = dyn_cast_or_null<FloatAttr>(scaleAttr)) {
    if (!s.getValue().isFiniteNonZero())
      return op->emitOpError() << "expected scale to be finite and non-zero, "
                                  "but got "
                               << scaleAttr;
    if (std::abs(s.getValueAsDouble()) > kMaxLog2EFactor)
      return op->emitOpError()
             << "expected |scale| to be at most " << kMaxLog2EFactor
             << " (FLT_MAX / log2(e)), but got " << scaleAttr;
  }
  return success();
}

LogicalResult verify::denseTensors(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned i) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.getEncoding())
      return success();
    return op->emitOpError()
           << "expected " << what << " " << i
           << " to be a dense tensor (no encoding), but got " << type;
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

LogicalResult verify::ranksAndElementTypes(Operation *op,
                                           ArrayRef<NamedType> all,
                                           ArrayRef<int64_t> ranks) {
  enum { Q, K, V, Index0, Index1, O, Lse };
  assert(all.size() == 7 && ranks.size() == 7 && "seven tensors");
  for (unsigned t = Q; t <= Lse; ++t) {
    if (!all[t].type)
      continue;
    if (all[t].type.getRank() != ranks[t])
      return op->emitOpError()
             << "expected " << all[t].name << " to have rank " << ranks[t]
             << ", but got rank " << all[t].type.getRank();
  }
  Type elt = all[Q].type.getElementType();
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16())
    return op->emitOpError() << "expected query element type to be f32, f16 "
                                "or bf16, but got "
                             << elt;
  for (unsigned t : {K, V, O})
    if (all[t].type.getElementType() != elt)
      return op->emitOpError()
             << "expected " << all[t].name << " element type ("
             << all[t].type.getElementType()
             << ") to equal query element type (" << elt << ")";
  for (unsigned t : {Index0, Index1})
    if (!all[t].type.getElementType().isInteger(32))
      return op->emitOpError() << "expected " << all[t].name
                               << " element type to be i32, but got "
                               << all[t].type.getElementType();
  if (all[Lse].type && !all[Lse].type.getElementType().isF32())
    return op->emitOpError() << "expected lse element type to be f32, but got "
                             << all[Lse].type.getElementType();
  return success();
}
