//===- Match.cpp - attention written out in linalg, softmax and scores ----===//
//
// Part of the attn project.
//
// Matches from the P.V contraction backwards: P is a softmax over the key
// axis of the scores (optionally guarded against empty rows), the scores are
// scale * Q.K^T plus an additive mask or under a select, Q and K may be
// pre-scaled (torch's sqrt(scale) on both), K and V may be broadcast copies
// for grouped-query heads, and f16/bf16 operands may be extended to f32
// around the computation. Each step checks the generic's body and indexing
// maps through the Tracer; anything else is a match failure with a reason in
// the debug output (-debug-only=attn-raise-sdpa).
//
//===----------------------------------------------------------------------===//

#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <limits>

#define DEBUG_TYPE "attn-raise-sdpa"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

LogicalResult Matcher::fail(const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] no match: " << why << "\n");
  return failure();
}

bool mlir::attn::raise::isZeroInit(Value tensor) {
  Tracer scratch;
  Term t = scratch.element(
      tensor, SmallVector<Idx>(cast<ShapedType>(tensor.getType()).getRank()));
  std::optional<double> v = scratch.constantValue(t);
  return v && *v == 0.0;
}
/// A collapse_shape [[0, 1], [2], [3]] of a 4-D tensor with static dims 0, 1.
tensor::CollapseShapeOp mlir::attn::raise::batchCollapse(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 4)
    return {};
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups.size() != 3 || groups[0] != ReassociationIndices{0, 1})
    return {};
  if (collapse.getSrcType().isDynamicDim(0) ||
      collapse.getSrcType().isDynamicDim(1))
    return {};
  return collapse;
}

/// The only user of `v` if it is an expand_shape [[0, 1], [2], [3]] to 4-D.
tensor::ExpandShapeOp mlir::attn::raise::batchExpand(Value v) {
  if (!v.hasOneUse())
    return {};
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*v.getUsers().begin());
  if (!expand || expand.getResultType().getRank() != 4 ||
      expand.getReassociationIndices()[0] != ReassociationIndices{0, 1} ||
      expand.getResultType().isDynamicDim(0) ||
      expand.getResultType().isDynamicDim(1))
    return {};
  return expand;
}

bool mlir::attn::raise::sameBatchHeads(ShapedType a, ShapedType b) {
  return a.getDimSize(0) == b.getDimSize(0) &&
         a.getDimSize(1) == b.getDimSize(1);
}

bool mlir::attn::raise::isPlain(ArrayRef<Idx> idx, ArrayRef<int> roots) {
  if (idx.size() != roots.size())
    return false;
  for (auto [i, r] : llvm::zip(idx, roots))
    if (!i.isPlain(r))
      return false;
  return true;
}

bool mlir::attn::raise::isNegInf(std::optional<double> v) {
  return v && *v == -std::numeric_limits<double>::infinity();
}

Term Matcher::stripScale(Term t, double &scale) {
  while (true) {
    if (tr.opOf<arith::MulFOp>(t)) {
      SmallVector<Term> in = tr.operands(t);
      if (std::optional<double> c = tr.constantValue(in[1])) {
        scale *= *c;
        t = in[0];
        continue;
      }
      if (std::optional<double> c = tr.constantValue(in[0])) {
        scale *= *c;
        t = in[1];
        continue;
      }
    }
    if (tr.opOf<arith::DivFOp>(t)) {
      SmallVector<Term> in = tr.operands(t);
      if (std::optional<double> c = tr.constantValue(in[1]); c && *c != 0) {
        scale /= *c;
        t = in[0];
        continue;
      }
    }
    return t;
  }
}

Term Matcher::stripExt(Term t) {
  while (tr.opOf<arith::ExtFOp>(t))
    t = tr.operands(t)[0];
  return t;
}

/// A leaf whose dims are `roots` in another order (Q, K or V read through a
/// transpose that the producer fused into the multiply): `perm` is the
/// linalg.transpose permutation that puts them in order.
bool Matcher::permutedRead(Term &t, ArrayRef<int> roots,
                           SmallVector<int64_t> &perm) {
  if (!t.isLeaf() || t.leafIdx.size() != roots.size())
    return false;
  perm.clear();
  for (int root : roots) {
    auto it =
        llvm::find_if(t.leafIdx, [&](const Idx &i) { return i.isPlain(root); });
    if (it == t.leafIdx.end())
      return false;
    perm.push_back(it - t.leafIdx.begin());
  }
  t.leafIdx.clear();
  for (int root : roots)
    t.leafIdx.push_back(Idx::of(root));
  return true;
}

std::optional<Term> Matcher::rowReduction(const Term &reduced,
                                          StringRef combiner, double init) {
  if (!reduced.isLeaf())
    return std::nullopt;
  Value t = reduced.leaf;
  SmallVector<Idx> idx = reduced.leafIdx;
  if (auto expand = t.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto src = SmallVector<Idx>();
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      Idx chosen = Idx::zero();
      for (int64_t d : group)
        if (!idx[d].isZero())
          chosen = idx[d];
      src.push_back(chosen);
    }
    tr.consume(expand);
    t = expand.getSrc();
    idx = src;
  }
  auto generic = t.getDefiningOp<linalg::GenericOp>();
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumReductionLoops() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = generic.getIteratorTypesArray();
  int64_t reducedLoop =
      llvm::find(iters, utils::IteratorType::reduction) - iters.begin();
  unsigned r = cast<OpResult>(t).getResultNumber();
  AffineMap out = generic.getIndexingMapsArray()[generic.getNumDpsInputs() + r];
  // The result is read at `idx`; its map gives the parallel loops' points,
  // the reduced loop runs over the key axis j (and nothing else may).
  if (out.getNumResults() != idx.size())
    return std::nullopt;
  SmallVector<std::optional<Idx>> loops(generic.getNumLoops());
  for (auto [k, e] : llvm::enumerate(out.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      unsigned d = dim.getPosition();
      if (d == reducedLoop || (loops[d] && !(*loops[d] == idx[k])) ||
          idx[k].root == kJ)
        return std::nullopt;
      loops[d] = idx[k];
      continue;
    }
    auto cst = dyn_cast<AffineConstantExpr>(e);
    if (!cst || cst.getValue() != 0 || idx[k].root == kJ)
      return std::nullopt;
  }
  loops[reducedLoop] = Idx::of(kJ);
  SmallVector<Idx> iter;
  for (const std::optional<Idx> &loop : loops) {
    if (!loop)
      return std::nullopt;
    iter.push_back(*loop);
  }
  // yield[r] = combiner(x, out_r), in either order; x is what is reduced (an
  // input, or computed from the inputs in the body; a term that reads an
  // output argument matches nothing later).
  Block *body = generic.getBody();
  Operation *comb = body->getTerminator()->getOperand(r).getDefiningOp();
  if (!comb || comb->getName().getStringRef() != combiner ||
      comb->getNumOperands() != 2)
    return std::nullopt;
  Value outArg = body->getArgument(generic.getNumDpsInputs() + r);
  Value reducedValue;
  if (comb->getOperand(1) == outArg)
    reducedValue = comb->getOperand(0);
  else if (comb->getOperand(0) == outArg)
    reducedValue = comb->getOperand(1);
  else
    return std::nullopt;
  Tracer scratch;
  Value initTensor = generic.getDpsInits()[r];
  std::optional<double> initValue = scratch.constantValue(scratch.element(
      initTensor,
      SmallVector<Idx>(cast<ShapedType>(initTensor.getType()).getRank())));
  if (!initValue || *initValue != init)
    return std::nullopt;
  tr.consume(generic);
  Term input;
  input.generic = generic;
  input.iter = iter;
  input.value = reducedValue;
  return tr.resolve(input);
}

/// P = [select(all_j(x == -inf), 0,)] exp(x [- max_j x]) / sum_j exp(...).
LogicalResult Matcher::matchSoftmax(Term p, Term &scores) {
  std::optional<Term> guard;
  if (tr.opOf<arith::SelectOp>(p)) {
    SmallVector<Term> in = tr.operands(p);
    std::optional<double> zero = tr.constantValue(in[1]);
    if (!zero || *zero != 0.0)
      return fail("P is a select that is not the empty-row guard");
    guard = in[0];
    p = in[2];
  }
  if (!tr.opOf<arith::DivFOp>(p))
    return fail("P is not a divf (softmax normalization)");
  SmallVector<Term> div = tr.operands(p);
  std::optional<Term> summed = rowReduction(div[1], "arith.addf", 0.0);
  if (!summed)
    return fail("the softmax denominator is not a sum over the key axis "
                "starting at 0");
  if (!tr.equivalent(*summed, div[0]))
    return fail("the softmax sums something else than its numerator");
  if (!tr.opOf<math::ExpOp>(div[0]))
    return fail("the softmax numerator is not exp");
  Term x = tr.operands(div[0])[0];
  if (tr.opOf<arith::SubFOp>(x)) {
    SmallVector<Term> sub = tr.operands(x);
    std::optional<Term> maxed = rowReduction(sub[1], "arith.maximumf", kNegInf);
    if (!maxed)
      maxed = rowReduction(sub[1], "arith.maxnumf", kNegInf);
    if (!maxed)
      return fail("exp(x - m) with m not the max over the key axis");
    if (!tr.equivalent(*maxed, sub[0]))
      return fail("the row max is of something else than x in exp(x - m)");
    x = sub[0];
  }
  if (guard) {
    std::optional<Term> all = rowReduction(*guard, "arith.andi", 1.0);
    if (!all)
      return fail("the select guarding P is not an all() over the key axis");
    if (!tr.opOf<arith::CmpFOp>(*all))
      return fail("the empty-row guard does not compare the scores");
    auto cmp = tr.opOf<arith::CmpFOp>(*all);
    SmallVector<Term> in = tr.operands(*all);
    if (cmp.getPredicate() != arith::CmpFPredicate::OEQ ||
        !isNegInf(tr.constantValue(in[1])) ||
        !tr.equivalent(stripExt(in[0]), x))
      return fail("the empty-row guard is not (x == -inf) on the scores");
    m.guarded = true;
  }
  scores = x;
  return success();
}

/// Whether `t` (after a scale) is the element of the Q.K^T scores.
bool Matcher::reachesScoresMatmul(Term t) {
  double ignored = 1.0;
  t = stripScale(t, ignored);
  if (!t.isLeaf())
    return false;
  if (unitBatch && t.leaf.getDefiningOp<linalg::BatchMatmulOp>())
    return true;
  if (!unitBatch && !isPlain(t.leafIdx, {kB, kH, kI, kJ}))
    return false;
  auto expand = t.leaf.getDefiningOp<tensor::ExpandShapeOp>();
  return expand && expand.getSrc().getDefiningOp<linalg::BatchMatmulOp>();
}

/// x = cap * tanh(scale * Q.K^T / cap) (the softcap, before anything is
/// added): `x` is the tanh, `cap` the factor outside it.
LogicalResult Matcher::matchSoftcap(Term &x, double cap) {
  if (m.softcap)
    return fail("two softcaps");
  if (!(cap > 0.0) || std::isinf(cap))
    return fail("a tanh on the scores times a non-positive or infinite cap");
  double inner = 1.0;
  Term s = stripScale(tr.operands(x)[0], inner);
  // tanh(f * S) with f = scale / cap.
  if (!reachesScoresMatmul(s))
    return fail("a tanh of something else than the scaled scores");
  m.softcap = cap;
  double scale = inner * cap;
  if (scale != 1.0)
    m.scale = m.scale.value_or(1.0) * scale;
  x = s;
  return success();
}

/// x = scale * Q.K^T [softcapped] [- ALiBi] [+ float mask | select(cond, .,
/// -inf) | select(not cond, -inf, .)], in any nesting of the masks.
LogicalResult Matcher::matchScores(Term x) {
  double scale = 1.0;
  while (true) {
    x = stripScale(x, scale);
    if (tr.opOf<math::TanhOp>(x)) {
      // What multiplies the tanh (after the last add or select) is the cap.
      if (failed(matchSoftcap(x, scale)))
        return failure();
      scale = 1.0;
      break;
    }
    if (tr.opOf<arith::SubFOp>(x)) {
      // s - slope * |distance|: ALiBi written as a subtraction.
      if (scale != 1.0)
        return fail("a scale applied after a bias is subtracted");
      SmallVector<Term> in = tr.operands(x);
      if (failed(matchAlibi(in[1], -1.0)))
        return failure();
      x = in[0];
      continue;
    }
    if (tr.opOf<arith::AddFOp>(x)) {
      // c * (s + mask) scales the mask too: attn.sdpa adds it unscaled.
      if (scale != 1.0)
        return fail("a scale applied after the mask is added");
      SmallVector<Term> in = tr.operands(x);
      int s = reachesScoresMatmul(in[0])   ? 0
              : reachesScoresMatmul(in[1]) ? 1
                                           : -1;
      if (s < 0) {
        // The mask may be added after a select, a softcap or another add:
        // look one level further.
        auto inner = [&](const Term &t) {
          return tr.opOf<arith::SelectOp>(t) || tr.opOf<arith::AddFOp>(t) ||
                 tr.opOf<arith::SubFOp>(t) || tr.opOf<math::TanhOp>(t) ||
                 tr.opOf<arith::MulFOp>(t);
        };
        s = inner(in[0]) && !inner(in[1]) ? 0 : 1;
      }
      if (failed(matchAlibi(in[1 - s], 1.0)) &&
          failed(matchAdditiveMask(in[1 - s])))
        return failure();
      x = in[s];
      continue;
    }
    if (tr.opOf<arith::SelectOp>(x)) {
      // c * select(m, s, -inf) keeps hidden scores at -inf only for c > 0.
      if (scale <= 0.0)
        return fail("a non-positive scale applied after a select");
      SmallVector<Term> in = tr.operands(x);
      // select(m, s, -inf), or select(not m, -inf, s) (masked_fill).
      bool hiddenIfTrue = static_cast<bool>(tr.constantValue(in[1])) &&
                          !tr.constantValue(in[2]);
      std::optional<double> hidden =
          tr.constantValue(hiddenIfTrue ? in[1] : in[2]);
      if (hidden && !isNegInf(hidden) && *hidden <= -1e30)
        finiteHidden = true;
      else if (!isNegInf(hidden))
        return fail("a select on the scores that is not (cond, s, -inf)");
      if (failed(matchCondition(in[0], /*negated=*/hiddenIfTrue)))
        return failure();
      x = hiddenIfTrue ? in[2] : in[1];
      continue;
    }
    break;
  }
  if (scale != 1.0)
    m.scale = m.scale.value_or(1.0) * scale;
  return unitBatch ? matchQKUnitBatch(x) : matchQK(x);
}

LogicalResult Matcher::matchQK(Term s) {
  if (!reachesScoresMatmul(s))
    return fail("the scores are not an expanded batch_matmul");
  auto expand = s.leaf.getDefiningOp<tensor::ExpandShapeOp>();
  auto mm = expand.getSrc().getDefiningOp<linalg::BatchMatmulOp>();
  if (mm.hasUserDefinedMaps() || !isZeroInit(mm.getDpsInits()[0]))
    return fail("Q.K^T batch_matmul with custom maps or a non-zero init");
  if (!cast<ShapedType>(mm.getResult(0).getType()).getElementType().isF32())
    return fail("the scores are not computed in f32");
  tensor::CollapseShapeOp cq = batchCollapse(mm.getDpsInputs()[0]);
  tensor::CollapseShapeOp ck = batchCollapse(mm.getDpsInputs()[1]);
  if (!cq || !ck ||
      expand.getReassociationIndices()[0] != ReassociationIndices{0, 1} ||
      !sameBatchHeads(cq.getSrcType(), expand.getResultType()) ||
      !sameBatchHeads(ck.getSrcType(), expand.getResultType()))
    return fail("Q.K^T operands are not [B, H] collapses of 4-D tensors");
  for (Operation *op : {expand.getOperation(), mm.getOperation(),
                        cq.getOperation(), ck.getOperation()})
    tr.consume(op);

  double scale = 1.0;
  Term q =
      stripExt(stripScale(tr.element(cq.getSrc(), {Idx::of(kB), Idx::of(kH),
                                                   Idx::of(kI), Idx::of(kD)}),
                          scale));
  if (q.isLeaf() && !isPlain(q.leafIdx, {kB, kH, kI, kD}))
    q = Tracer::viaPlain(q);
  if (q.isLeaf() && !isPlain(q.leafIdx, {kB, kH, kI, kD}))
    permutedRead(q, {kB, kH, kI, kD}, m.queryPerm);
  if (!q.isLeaf() || !isPlain(q.leafIdx, {kB, kH, kI, kD}))
    return fail("Q is not a (scaled) read of a [B, H, L, D] tensor");
  // The collapsed K operand is [B, H, D, Lk] (K transposed).
  Term k =
      stripExt(stripScale(tr.element(ck.getSrc(), {Idx::of(kB), Idx::of(kH),
                                                   Idx::of(kD), Idx::of(kJ)}),
                          scale));
  auto isK = [](const Term &t) {
    return t.isLeaf() && t.leafIdx.size() == 4 && t.leafIdx[0].isPlain(kB) &&
           t.leafIdx[2].isPlain(kJ) && t.leafIdx[3].isPlain(kD);
  };
  if (!isK(k))
    k = Tracer::viaPlain(k);
  if (!isK(k))
    permutedRead(k, {kB, kH, kJ, kD}, m.keyPerm);
  if (!isK(k))
    return fail("K is not a (scaled) read of a [B, Hkv, Lk, D] tensor");
  const Idx &head = k.leafIdx[1];
  int64_t kGroup = head.isPlain(kH)                     ? 1
                   : (head.root == kH && head.mod == 0) ? head.div
                                                        : 0;
  if (kGroup == 0)
    return fail("K's head index is not h or h / group");
  if (m.key || group != kGroup)
    return fail("K and V are grouped differently");
  m.query = q.leaf;
  m.key = k.leaf;
  if (scale != 1.0)
    m.scale = m.scale.value_or(1.0) * scale;
  return success();
}

LogicalResult Matcher::matchDecomposed(linalg::BatchMatmulOp pv) {
  LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] trying " << pv << "\n");
  if (pv.hasUserDefinedMaps() || !isZeroInit(pv.getDpsInits()[0]))
    return fail("P.V batch_matmul with custom maps or a non-zero init");
  tensor::CollapseShapeOp cp = batchCollapse(pv.getDpsInputs()[0]);
  tensor::CollapseShapeOp cv = batchCollapse(pv.getDpsInputs()[1]);
  tensor::ExpandShapeOp out = batchExpand(pv.getResult(0));
  if (!cp || !out || !sameBatchHeads(cp.getSrcType(), out.getResultType()) ||
      (cv && !sameBatchHeads(cv.getSrcType(), out.getResultType())))
    return fail("P.V is not a batch_matmul of [B, H] collapses, expanded back");
  // With B = 1 the batch index of the [B*H] operand is the head: V may then
  // be collapsed straight from its [1, Hkv, group, Lk, Dv] broadcast.
  bool unitBatch = out.getResultType().getDimSize(0) == 1;
  if (!cv && !unitBatch)
    return fail("V is not a [B, H] collapse of a 4-D tensor");
  for (Operation *op :
       {pv.getOperation(), cp.getOperation(), out.getOperation()})
    tr.consume(op);
  if (cv)
    tr.consume(cv);
  m.root = out.getResult();
  // An f32 result rounded to f16/bf16 by an element-wise truncf.
  if (m.root.hasOneUse()) {
    Operation *user = *m.root.getUsers().begin();
    if (isElementwiseGeneric(user) && user->getNumOperands() == 2 &&
        llvm::all_of(cast<linalg::GenericOp>(user).getIndexingMapsArray(),
                     [](AffineMap map) { return map.isIdentity(); })) {
      Operation *yielded = cast<linalg::GenericOp>(user)
                               .getBody()
                               ->getTerminator()
                               ->getOperand(0)
                               .getDefiningOp();
      if (isa_and_nonnull<arith::TruncFOp>(yielded) &&
          yielded->getOperand(0) ==
              cast<linalg::GenericOp>(user).getBody()->getArgument(0)) {
        tr.consume(user);
        m.root = user->getResult(0);
      }
    }
  }

  // V: [B, Hkv, Lk, Dv], read at (b, h / group, j, e).
  Term v = stripExt(cv ? tr.element(cv.getSrc(), {Idx::of(kB), Idx::of(kH),
                                                  Idx::of(kJ), Idx::of(kE)})
                       : tr.element(pv.getDpsInputs()[1],
                                    {Idx::of(kH), Idx::of(kJ), Idx::of(kE)}));
  auto isV = [&](const Term &t) {
    return t.isLeaf() && t.leafIdx.size() == 4 &&
           (t.leafIdx[0].isPlain(kB) || (unitBatch && t.leafIdx[0].isZero())) &&
           t.leafIdx[2].isPlain(kJ) && t.leafIdx[3].isPlain(kE);
  };
  if (!isV(v))
    v = Tracer::viaPlain(v);
  if (!isV(v))
    permutedRead(v, {kB, kH, kJ, kE}, m.valuePerm);
  if (!isV(v))
    return fail("V is not a read of a [B, Hkv, Lk, Dv] tensor");
  const Idx &head = v.leafIdx[1];
  group = head.isPlain(kH)                     ? 1
          : (head.root == kH && head.mod == 0) ? head.div
                                               : 0;
  if (group == 0)
    return fail("V's head index is not h or h / group");
  m.kvGroup = group;
  m.value = v.leaf;

  // P: [B, H, Lq, Lk] at (b, h, i, j).
  Value p4 = cp.getSrc();
  Term x;
  if (failed(matchSoftmax(
          tr.element(p4, {Idx::of(kB), Idx::of(kH), Idx::of(kI), Idx::of(kJ)}),
          x)))
    return failure();
  lq = cast<ShapedType>(p4.getType()).getDimSize(2);
  lk = cast<ShapedType>(p4.getType()).getDimSize(3);
  if (failed(matchScores(x)) || failed(checkFiniteHidden()))
    return failure();
  // The decomposition's scale is what it multiplies by: none means 1.
  if (!m.scale)
    m.scale = 1.0;
  return success();
}
