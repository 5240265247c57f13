//===- Mask.cpp - masks and causal rules on the attention scores ----------===//
//
// Part of the attn project.
//
// What is added to or selected on the scores: a float tensor (the mask
// operand), select(c, 0, -inf) or select(c, s, -inf) with c an i1 tensor (a
// bool mask), or an index comparison of the query and key positions (a causal
// rule, top-left or bottom-right), and their conjunctions.
//
//===----------------------------------------------------------------------===//

#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-raise-sdpa"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

LogicalResult Matcher::matchAdditiveMask(Term mask) {
  if (std::optional<double> c = tr.constantValue(mask)) {
    if (*c == 0.0)
      return success();
    return fail("a constant added to the scores");
  }
  if (tr.opOf<arith::SelectOp>(mask)) {
    SmallVector<Term> in = tr.operands(mask);
    std::optional<double> a = tr.constantValue(in[1]),
                          b = tr.constantValue(in[2]);
    if (a && *a == 0.0 && isNegInf(b))
      return matchCondition(in[0]);
    if (a && *a == 0.0 && b && *b <= -1e30) {
      finiteHidden = true;
      return matchCondition(in[0]);
    }
    return fail("an additive mask select(c, a, b) that is not (c, 0, -inf)");
  }
  Term leaf = stripExt(mask);
  if (!leaf.isLeaf() || !isa<FloatType>(leaf.getType()))
    return fail("the additive mask is not a float tensor read");
  return setMask(leaf);
}

LogicalResult Matcher::setMask(const Term &leaf) {
  if (m.mask)
    return fail("more than one mask tensor (attn.sdpa takes one)");
  auto type = cast<ShapedType>(leaf.leaf.getType());
  // Broadcast dims read index 0 of a size-1 dim; other dims are b, h, i, j
  // in order.
  int last = -1;
  for (auto [k, i] : llvm::enumerate(leaf.leafIdx)) {
    if (i.isZero()) {
      if (type.getDimSize(k) != 1)
        return fail("the mask reads index 0 of a dim that is not 1");
      continue;
    }
    if (i.div != 1 || i.mod != 0 || i.root > kJ || i.root <= last)
      return fail("the mask is not indexed by (b, h, i, j) in order");
    last = i.root;
  }
  m.mask = leaf.leaf;
  m.maskIdx = leaf.leafIdx;
  return success();
}

LogicalResult Matcher::matchCondition(Term cond) {
  if (std::optional<double> c = tr.constantValue(cond)) {
    if (*c == 1.0)
      return success();
    return fail("a constant false condition");
  }
  if (tr.opOf<arith::AndIOp>(cond)) {
    SmallVector<Term> in = tr.operands(cond);
    if (failed(matchCondition(in[0])))
      return failure();
    return matchCondition(in[1]);
  }
  if (auto cmp = tr.opOf<arith::CmpIOp>(cond))
    return matchCausal(cmp, cond);
  if (cond.isLeaf() && cond.getType().isInteger(1))
    return setMask(cond);
  return fail("a mask condition that is neither an i1 tensor nor a causal "
              "index comparison");
}

/// cmpi(pred, lhs, rhs) on index expressions of i and j: visible iff
/// j - i <= offset; offset 0 is top-left, Lk - Lq bottom-right.
LogicalResult Matcher::matchCausal(arith::CmpIOp cmp, const Term &t) {
  SmallVector<Term> in = tr.operands(t);
  std::optional<Tracer::Linear> l = tr.linear(in[0]), r = tr.linear(in[1]);
  if (!l || !r)
    return fail("a comparison of something else than i and j");
  int64_t ci = l->ci - r->ci, cj = l->cj - r->cj, c0 = l->c0 - r->c0;
  // D = ci*i + cj*j + c0; visible iff pred(D, 0).
  std::optional<int64_t> offset;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if (ci == -1 && cj == 1 && (pred == P::sle || pred == P::slt))
    offset = pred == P::sle ? -c0 : -c0 - 1; // j - i + c0 <= 0
  else if (ci == 1 && cj == -1 && (pred == P::sge || pred == P::sgt))
    offset = pred == P::sge ? c0 : c0 - 1; // i - j + c0 >= 0
  if (!offset)
    return fail("an index comparison that is not a causal rule j - i <= c");
  if (*offset == 0) {
    if (m.causal && *m.causal != CausalKind::TopLeft)
      return fail("two causal rules");
    m.causal = CausalKind::TopLeft;
    return success();
  }
  if (!ShapedType::isDynamic(lq) && !ShapedType::isDynamic(lk) &&
      *offset == lk - lq) {
    if (m.causal && *m.causal != CausalKind::BottomRight)
      return fail("two causal rules");
    m.causal = CausalKind::BottomRight;
    return success();
  }
  return fail("a causal rule j - i <= " + Twine(*offset) +
              " that is neither top-left (0) nor bottom-right (Lk - Lq)");
}

/// A finite "-inf" (JAX masks with -2.38e38) gives the same result as -inf
/// as long as every row keeps a visible key: a causal rule alone, top-left or
/// bottom-right with Lk >= Lq, and no mask tensor.
LogicalResult Matcher::checkFiniteHidden() {
  if (!finiteHidden)
    return success();
  bool rowsKeepAKey =
      m.causal && !m.mask &&
      (*m.causal == CausalKind::TopLeft ||
       (!ShapedType::isDynamic(lq) && !ShapedType::isDynamic(lk) && lk >= lq));
  if (!rowsKeepAKey)
    return fail("hidden scores are a finite value and a row may hide every "
                "key (attn.sdpa gives 0 there, the program an average)");
  return success();
}
