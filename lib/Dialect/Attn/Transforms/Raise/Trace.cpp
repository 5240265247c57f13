//===- Trace.cpp - element-wise tracing of attention written in linalg ----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn::raise;

bool mlir::attn::raise::isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumReductionLoops() == 0 &&
         generic.hasPureTensorSemantics();
}

Type Term::getType() const {
  if (value)
    return value.getType();
  if (constant)
    return constant.getType();
  if (leaf)
    return getElementTypeOrSelf(leaf.getType());
  return {};
}

static bool isUnitDim(ShapedType type, int64_t dim) {
  return type.getDimSize(dim) == 1;
}

/// The index of a merged dim from those of its static parts `dims` (outer
/// first), when they split one index as a collapse_shape does: the innermost
/// reads (x / D) % n_k, the next (x / (D * n_k)) % n_(k-1), and so on, the
/// outermost possibly without a modulus. The merged index is (x / D) % the
/// product (no modulus if the outermost had none).
static std::optional<Idx>
mergeSplit(ShapedType expanded, ArrayRef<int64_t> dims, ArrayRef<Idx> idx) {
  const Idx &innermost = idx[dims.back()];
  if (innermost.isZero())
    return std::nullopt;
  int64_t inner = 1;
  bool unbounded = false;
  for (auto [k, d] : llvm::enumerate(llvm::reverse(dims))) {
    int64_t n = expanded.getDimSize(d);
    const Idx &i = idx[d];
    if (ShapedType::isDynamic(n) || i.root != innermost.root ||
        i.div != innermost.div * inner)
      return std::nullopt;
    bool outermost = k + 1 == dims.size();
    if (i.mod != n && !(outermost && i.mod == 0))
      return std::nullopt;
    unbounded = i.mod == 0;
    inner *= n;
  }
  return Idx{innermost.root, innermost.div, unbounded ? 0 : inner};
}

/// Indices of the source of an expand_shape from those of its result: each
/// group must have at most one dim that is not a static 1, or split one
/// index into its static dims (mergeSplit).
std::optional<SmallVector<Idx>>
mlir::attn::raise::collapseGroups(ShapedType expanded,
                                  ArrayRef<ReassociationIndices> groups,
                                  ArrayRef<Idx> idx) {
  SmallVector<Idx> src;
  for (const ReassociationIndices &group : groups) {
    Idx chosen = group.size() == 1 ? idx[group[0]] : Idx::zero();
    SmallVector<int64_t> nonUnit;
    for (int64_t d : group) {
      if (isUnitDim(expanded, d))
        continue;
      chosen = idx[d];
      nonUnit.push_back(d);
    }
    if (nonUnit.size() > 1) {
      std::optional<Idx> merged = mergeSplit(expanded, nonUnit, idx);
      if (!merged)
        return std::nullopt;
      chosen = *merged;
    }
    src.push_back(chosen);
  }
  return src;
}

static bool isSortedPlain(ArrayRef<Idx> idx) {
  int last = -1;
  for (const Idx &i : idx) {
    if (i.isZero() || i.div != 1 || i.mod != 0 || i.root <= last)
      return false;
    last = i.root;
  }
  return true;
}

Term Tracer::element(Value tensor, ArrayRef<Idx> idx) {
  Term t = elementImpl(tensor, idx);
  if (t.isLeaf() && !t.plain && isSortedPlain(idx)) {
    t.plain = tensor;
    t.plainIdx.assign(idx.begin(), idx.end());
  }
  return t;
}

Term Tracer::viaPlain(const Term &t) {
  if (!t.isLeaf() || !t.plain)
    return t;
  Term u = t;
  u.leaf = t.plain;
  u.leafIdx = t.plainIdx;
  return u;
}

Term Tracer::elementImpl(Value tensor, ArrayRef<Idx> idx) {
  Term leafTerm;
  leafTerm.leaf = tensor;
  leafTerm.leafIdx.assign(idx.begin(), idx.end());
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return leafTerm;

  if (auto generic = dyn_cast<linalg::GenericOp>(def)) {
    if (!isElementwiseGeneric(generic))
      return leafTerm;
    unsigned r = cast<OpResult>(tensor).getResultNumber();
    AffineMap out =
        generic.getIndexingMapsArray()[generic.getNumDpsInputs() + r];
    if (!out.isPermutation())
      return leafTerm;
    Term t;
    t.generic = generic;
    t.iter.resize(generic.getNumLoops());
    for (auto [k, e] : llvm::enumerate(out.getResults()))
      t.iter[cast<AffineDimExpr>(e).getPosition()] = idx[k];
    t.value = generic.getBody()->getTerminator()->getOperand(r);
    ops.insert(generic);
    return resolve(t);
  }
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    Term t;
    t.value = fill.getInputs()[0];
    return t;
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    if (auto dense = dyn_cast<SplatElementsAttr>(cst.getValue())) {
      Term t;
      t.constant = dense.getSplatValue<TypedAttr>();
      return t;
    }
    return leafTerm;
  }
  if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
    SmallVector<Idx> src(idx.size());
    for (auto [k, p] : llvm::enumerate(transpose.getPermutation()))
      src[p] = idx[k];
    ops.insert(transpose);
    return element(transpose.getInput(), src);
  }
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
    SmallVector<Idx> src;
    ArrayRef<int64_t> added = broadcast.getDimensions();
    for (auto [k, i] : llvm::enumerate(idx))
      if (!llvm::is_contained(added, static_cast<int64_t>(k)))
        src.push_back(i);
    ops.insert(broadcast);
    return element(broadcast.getInput(), src);
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return element(cast.getSource(), idx);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
    // The result of a contraction or reduction is a leaf, reshape included.
    Operation *srcDef = expand.getSrc().getDefiningOp();
    if (srcDef && isa<linalg::LinalgOp>(srcDef) &&
        !isElementwiseGeneric(srcDef) && !throughContractionReshapes)
      return leafTerm;
    auto src = collapseGroups(expand.getResultType(),
                              expand.getReassociationIndices(), idx);
    if (!src) {
      // A flatten and unflatten (collapse then expand) that keeps the dims
      // that are not 1, in order.
      auto inner = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
      if (!inner)
        return leafTerm;
      ShapedType from = inner.getSrcType(), to = expand.getResultType();
      if (!from.hasStaticShape() || !to.hasStaticShape())
        return leafTerm;
      SmallVector<int64_t> fromDims, toDims;
      for (int64_t d = 0; d < from.getRank(); ++d)
        if (from.getDimSize(d) != 1)
          fromDims.push_back(d);
      for (int64_t d = 0; d < to.getRank(); ++d)
        if (to.getDimSize(d) != 1)
          toDims.push_back(d);
      if (fromDims.size() != toDims.size())
        return leafTerm;
      SmallVector<Idx> fromIdx(from.getRank(), Idx::zero());
      for (auto [f, t] : llvm::zip(fromDims, toDims)) {
        if (from.getDimSize(f) != to.getDimSize(t))
          return leafTerm;
        fromIdx[f] = idx[t];
      }
      ops.insert(expand);
      ops.insert(inner);
      return element(inner.getSrc(), fromIdx);
    }
    ops.insert(expand);
    return element(expand.getSrc(), *src);
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    ShapedType srcType = collapse.getSrcType();
    SmallVector<Idx> src;
    for (auto [k, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      SmallVector<int64_t> nonUnit;
      for (int64_t d : group)
        if (!isUnitDim(srcType, d))
          nonUnit.push_back(d);
      for (int64_t d : group) {
        (void)d;
        src.push_back(Idx::zero());
      }
      if (group.size() == 1) {
        src[group[0]] = idx[k];
      } else if (nonUnit.size() == 1) {
        src[nonUnit[0]] = idx[k];
      } else if (nonUnit.size() == 2 && nonUnit[1] == nonUnit[0] + 1 &&
                 !srcType.isDynamicDim(nonUnit[1]) && idx[k].mod == 0 &&
                 !idx[k].isZero()) {
        // [outer, inner] -> outer * inner: x -> (x / inner, x % inner).
        int64_t inner = srcType.getDimSize(nonUnit[1]);
        src[nonUnit[0]] = Idx{idx[k].root, idx[k].div * inner, 0};
        src[nonUnit[1]] = Idx{idx[k].root, idx[k].div, inner};
      } else if (!nonUnit.empty()) {
        return leafTerm;
      }
    }
    ops.insert(collapse);
    return element(collapse.getSrc(), src);
  }
  return leafTerm;
}

Term Tracer::resolve(Term t) {
  if (!t.value || !t.generic)
    return t;
  Block *body = t.generic.getBody();
  if (auto arg = dyn_cast<BlockArgument>(t.value)) {
    if (arg.getOwner() != body ||
        arg.getArgNumber() >= t.generic.getNumDpsInputs())
      return t;
    OpOperand *operand = t.generic.getDpsInputOperand(arg.getArgNumber());
    AffineMap map = t.generic.getMatchingIndexingMap(operand);
    SmallVector<Idx> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(e)) {
        idx.push_back(t.iter[dim.getPosition()]);
        continue;
      }
      auto cst = dyn_cast<AffineConstantExpr>(e);
      if (!cst || cst.getValue() != 0)
        return t; // an access the matcher does not model
      idx.push_back(Idx::zero());
    }
    // A rank-0 operand (a scalar tensor) reads its only element.
    return element(operand->get(), idx);
  }
  if (auto extract = t.value.getDefiningOp<tensor::ExtractOp>())
    if (extract->getParentOp() == t.generic.getOperation())
      if (Term u = throughExtract(t, extract); u.isValid())
        return u;
  // A value defined outside the body is the same at every point.
  if (!body->getParent()->isAncestor(t.value.getParentRegion())) {
    t.generic = {};
    t.iter.clear();
  }
  return t;
}

/// The extent of loop `d` of `generic`, from an operand that it indexes.
static std::optional<Size> loopExtent(linalg::GenericOp generic, unsigned d) {
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    for (auto [k, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e); dim && dim.getPosition() == d)
        return dimOf(operand.get(), k);
  }
  return std::nullopt;
}

/// `tensor.extract %src[...]` in a generic's body, each index 0, a loop index
/// i, or `select(n == 1, 0, i)` (broadcast when n is 1): the element of %src
/// at those loop dims. That is an identity only if the loop runs over the
/// whole source axis: n must provably be the source's extent, and the loop's
/// extent must be it too; what is not provable is assumed (assumedEqual).
Term Tracer::throughExtract(const Term &t, tensor::ExtractOp extract) {
  linalg::GenericOp generic = t.generic;
  Value src = extract.getTensor();
  if (generic.getRegion().isAncestor(src.getParentRegion()))
    return {};
  SmallVector<Idx> idx;
  SmallVector<bool> used(generic.getNumLoops(), false);
  SmallVector<std::pair<Size, Size>> assumed;
  for (auto [axis, index] : llvm::enumerate(extract.getIndices())) {
    if (matchPattern(index, m_Zero())) {
      idx.push_back(Idx::zero());
      continue;
    }
    std::optional<Size> srcExtent = dimOf(src, axis);
    if (!srcExtent)
      return {};
    Value loop = index;
    if (auto select = index.getDefiningOp<arith::SelectOp>()) {
      auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
      if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
          !matchPattern(select.getTrueValue(), m_Zero()))
        return {};
      Value n = matchPattern(cmp.getRhs(), m_One())   ? cmp.getLhs()
                : matchPattern(cmp.getLhs(), m_One()) ? cmp.getRhs()
                                                      : Value();
      std::optional<Size> broadcastIf = n ? sizeOf(n) : std::nullopt;
      if (!broadcastIf || !(*broadcastIf == *srcExtent))
        return {};
      loop = select.getFalseValue();
    }
    auto loopIndex = loop.getDefiningOp<linalg::IndexOp>();
    if (!loopIndex || loopIndex->getParentOp() != generic.getOperation() ||
        loopIndex.getDim() >= used.size() || used[loopIndex.getDim()])
      return {};
    used[loopIndex.getDim()] = true;
    std::optional<Size> extent = loopExtent(generic, loopIndex.getDim());
    if (!extent)
      return {};
    if (!extent->base && !srcExtent->base && !(*extent == *srcExtent))
      return {};
    if (!(*extent == *srcExtent))
      assumed.push_back({*extent, *srcExtent});
    idx.push_back(t.iter[loopIndex.getDim()]);
  }
  // Index 0 of a static unit axis read at the same position by a unit loop
  // that no index uses (torch's batch axis of one): the loop's only index is
  // 0 too, so the element is read at that loop dim, as an identity would.
  auto srcType = cast<RankedTensorType>(src.getType());
  for (auto [axis, i] : llvm::enumerate(idx)) {
    if (!i.isZero() || srcType.getDimSize(axis) != 1 || axis >= used.size() ||
        used[axis])
      continue;
    std::optional<Size> extent = loopExtent(generic, axis);
    if (extent && extent->isConstant(1)) {
      used[axis] = true;
      i = t.iter[axis];
    }
  }
  for (const std::pair<Size, Size> &eq : assumed)
    if (!llvm::is_contained(assumedEqual, eq))
      assumedEqual.push_back(eq);
  return element(src, idx);
}

SmallVector<Term> Tracer::operands(const Term &t) {
  SmallVector<Term> result;
  Operation *op = t.op();
  if (!op)
    return result;
  for (Value operand : op->getOperands()) {
    Term u = t;
    u.value = operand;
    result.push_back(resolve(u));
  }
  return result;
}

static std::optional<double> attrValue(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(i.getType().isInteger(1)
                                   ? i.getValue().getZExtValue()
                                   : i.getValue().getSExtValue());
  return std::nullopt;
}

std::optional<double> Tracer::constantValue(const Term &t) {
  if (t.constant)
    return attrValue(t.constant);
  if (!t.value)
    return std::nullopt;
  Attribute attr;
  if (matchPattern(t.value, m_Constant(&attr)))
    return attrValue(attr);
  if (auto trunc = opOf<arith::TruncFOp>(t)) {
    std::optional<double> v = constantValue(operands(t)[0]);
    if (!v)
      return std::nullopt;
    APFloat f(*v);
    bool lost;
    f.convert(cast<FloatType>(trunc.getType()).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    return f.convertToDouble();
  }
  if (opOf<arith::ExtFOp>(t))
    return constantValue(operands(t)[0]);
  return std::nullopt;
}

/// Whether `v` is a constant rank-1 integer tensor holding 0, 1, 2, ... (an
/// iota a producer folded: JAX through IREE).
static bool isIotaConstant(Value v) {
  DenseIntElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)) || values.getType().getRank() != 1)
    return false;
  int64_t k = 0;
  for (const APInt &x : values.getValues<APInt>())
    if (x.getSExtValue() != k++)
      return false;
  return true;
}

std::optional<Tracer::Linear> Tracer::linear(const Term &t) {
  if (t.isLeaf() && t.leafIdx.size() == 1 && isIotaConstant(t.leaf)) {
    const Idx &i = t.leafIdx[0];
    if (i.isPlain(kI))
      return Linear{1, 0, 0};
    if (i.isPlain(kJ))
      return Linear{0, 1, 0};
    if (i.isZero())
      return Linear{0, 0, 0};
    return std::nullopt;
  }
  if (auto index = opOf<linalg::IndexOp>(t)) {
    if (!t.generic || index.getDim() >= t.iter.size())
      return std::nullopt;
    const Idx &i = t.iter[index.getDim()];
    if (i.isPlain(kI))
      return Linear{1, 0, 0};
    if (i.isPlain(kJ))
      return Linear{0, 1, 0};
    if (i.isZero())
      return Linear{0, 0, 0};
    return std::nullopt;
  }
  if (opOf<arith::IndexCastOp>(t) || opOf<arith::IndexCastUIOp>(t) ||
      opOf<arith::ExtSIOp>(t))
    return linear(operands(t)[0]);
  bool add = static_cast<bool>(opOf<arith::AddIOp>(t));
  if (add || opOf<arith::SubIOp>(t)) {
    SmallVector<Term> in = operands(t);
    std::optional<Linear> a = linear(in[0]), b = linear(in[1]);
    if (!a || !b)
      return std::nullopt;
    int64_t s = add ? 1 : -1;
    return Linear{a->ci + s * b->ci, a->cj + s * b->cj, a->c0 + s * b->c0};
  }
  if ((t.value && isa<IntegerType, IndexType>(t.value.getType())) ||
      t.constant) {
    std::optional<double> v = constantValue(t);
    if (v)
      return Linear{0, 0, static_cast<int64_t>(*v)};
  }
  return std::nullopt;
}

bool Tracer::equivalent(const Term &a, const Term &b, unsigned depth) {
  if (depth > 64)
    return false;
  if (a.isLeaf() || b.isLeaf())
    return a.isLeaf() && b.isLeaf() && a.leaf == b.leaf &&
           a.leafIdx == b.leafIdx;
  if (a.value && a.value == b.value && a.iter == b.iter)
    return true;
  std::optional<double> ca = constantValue(a), cb = constantValue(b);
  if (ca || cb)
    return ca && cb && *ca == *cb && a.getType() == b.getType();
  Operation *oa = a.op(), *ob = b.op();
  if (!oa || !ob || oa->getName() != ob->getName() ||
      oa->getNumOperands() != ob->getNumOperands() ||
      oa->getRawDictionaryAttrs() != ob->getRawDictionaryAttrs() ||
      oa->getPropertiesAsAttribute() != ob->getPropertiesAsAttribute() ||
      cast<OpResult>(a.value).getResultNumber() !=
          cast<OpResult>(b.value).getResultNumber())
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(oa))
    return a.iter[index.getDim()] == b.iter[index.getDim()];
  SmallVector<Term> ia = operands(a), ib = operands(b);
  for (auto [x, y] : llvm::zip(ia, ib))
    if (!equivalent(x, y, depth + 1))
      return false;
  return true;
}
