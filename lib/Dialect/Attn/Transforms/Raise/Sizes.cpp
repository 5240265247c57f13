//===- Sizes.cpp - proving that two dynamic sizes are the same value ------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "Sizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;
using namespace mlir::attn::raise;

/// The walks are short in practice; the bound only stops pathological IR.
static constexpr unsigned kMaxDepth = 48;

static bool isSizeType(Type t) { return t.isIndex() || t.isInteger(64); }

Value Size::materialize(OpBuilder &b, Location loc) const {
  if (!base)
    return arith::ConstantIndexOp::create(b, loc, constant);
  if (dim < 0)
    return base.getType().isIndex()
               ? base
               : arith::IndexCastOp::create(b, loc, b.getIndexType(), base)
                     .getResult();
  return tensor::DimOp::create(b, loc, base, dim);
}

static std::optional<Size> sizeOfImpl(Value v, unsigned depth);
static std::optional<Size> dimOfImpl(Value tensor, int64_t dim, unsigned depth);

static std::optional<bool> conditionImpl(Value cond, unsigned depth) {
  APInt c;
  if (matchPattern(cond, m_ConstantInt(&c)))
    return !c.isZero();
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || depth > kMaxDepth)
    return std::nullopt;
  std::optional<Size> x = sizeOfImpl(cmp.getLhs(), depth + 1);
  std::optional<Size> y = sizeOfImpl(cmp.getRhs(), depth + 1);
  if (!x || !y)
    return std::nullopt;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if (*x == *y) {
    switch (pred) {
    case P::eq:
    case P::sle:
    case P::sge:
    case P::ule:
    case P::uge:
      return true;
    default:
      return false;
    }
  }
  if (!x->base && !y->base) {
    APInt a(64, x->constant, true), b(64, y->constant, true);
    return arith::applyCmpPredicate(pred, a, b);
  }
  // A size (never negative) against 0.
  if (x->isTensorDim() && y->isConstant(0)) {
    if (pred == P::slt)
      return false;
    if (pred == P::sge)
      return true;
  }
  if (y->isTensorDim() && x->isConstant(0)) {
    if (pred == P::sgt)
      return false;
    if (pred == P::sle)
      return true;
  }
  return std::nullopt;
}

static std::optional<Size> sizeOfImpl(Value v, unsigned depth) {
  if (depth > kMaxDepth || !isSizeType(v.getType()))
    return std::nullopt;
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return Size{Value(), 0, c.getSExtValue()};
  Size opaque{v, -1, 0};
  Operation *def = v.getDefiningOp();
  if (!def)
    return opaque;
  // Between index (64-bit) and i64 the casts keep the value.
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def) &&
      isSizeType(def->getOperand(0).getType()))
    return sizeOfImpl(def->getOperand(0), depth + 1);
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (!d || !type || *d < 0 || *d >= type.getRank())
      return std::nullopt;
    return dimOfImpl(dim.getSource(), *d, depth + 1);
  }
  if (auto select = dyn_cast<arith::SelectOp>(def)) {
    if (std::optional<bool> c = conditionImpl(select.getCondition(), depth + 1))
      return sizeOfImpl(*c ? select.getTrueValue() : select.getFalseValue(),
                        depth + 1);
    std::optional<Size> a = sizeOfImpl(select.getTrueValue(), depth + 1);
    std::optional<Size> b = sizeOfImpl(select.getFalseValue(), depth + 1);
    if (a && b && *a == *b)
      return a;
  }
  return opaque;
}

static std::optional<Size> dimOfImpl(Value tensor, int64_t dim,
                                     unsigned depth) {
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!type || dim < 0 || dim >= type.getRank() || depth > kMaxDepth)
    return std::nullopt;
  if (!type.isDynamicDim(dim))
    return Size{Value(), 0, type.getDimSize(dim)};
  Size opaque{tensor, dim, 0};
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return opaque;
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return sizeOfImpl(empty.getDynamicSize(dim), depth + 1);
  if (auto cast = dyn_cast<tensor::CastOp>(def)) {
    auto src = dyn_cast<RankedTensorType>(cast.getSource().getType());
    if (src && src.getRank() == type.getRank())
      return dimOfImpl(cast.getSource(), dim, depth + 1);
    return opaque;
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    OpFoldResult size = expand.getMixedOutputShape()[dim];
    if (auto attr = dyn_cast<Attribute>(size))
      return Size{Value(), 0, cast<IntegerAttr>(attr).getInt()};
    return sizeOfImpl(cast<Value>(size), depth + 1);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    ReassociationIndices group = collapse.getReassociationIndices()[dim];
    std::optional<int64_t> kept;
    for (int64_t d : group) {
      if (collapse.getSrcType().getDimSize(d) == 1)
        continue;
      if (kept)
        return opaque;
      kept = d;
    }
    if (kept)
      return dimOfImpl(collapse.getSrc(), *kept, depth + 1);
    return opaque;
  }
  if (auto reshape = dyn_cast<tensor::ReshapeOp>(def)) {
    if (auto elems = reshape.getShape().getDefiningOp<tensor::FromElementsOp>())
      return sizeOfImpl(elems.getElements()[dim], depth + 1);
    return opaque;
  }
  // A destination-style op's tensor result has its init's shape.
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
    if (OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(tensor)))
      return dimOfImpl(init->get(), dim, depth + 1);
  }
  return opaque;
}

std::optional<Size> mlir::attn::raise::sizeOf(Value v) {
  return sizeOfImpl(v, 0);
}

std::optional<Size> mlir::attn::raise::dimOf(Value tensor, int64_t dim) {
  return dimOfImpl(tensor, dim, 0);
}

std::optional<bool> mlir::attn::raise::knownCondition(Value cond) {
  return conditionImpl(cond, 0);
}
