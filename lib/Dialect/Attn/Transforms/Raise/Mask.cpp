//===- Mask.cpp - masks and causal rules on the attention scores ----------===//
//
// Part of the attn project.
//
// What is added to or selected on the scores: a float tensor (the mask
// operand), select(c, 0, -inf) or select(c, s, -inf) (or select(not c, -inf,
// s)) with c an i1 tensor (a bool mask), or index comparisons of the query
// and key positions (a causal rule, top-left or bottom-right, and a sliding
// window's band), and their conjunctions; an ALiBi bias.
//
//===----------------------------------------------------------------------===//

#include "Match.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
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

LogicalResult Matcher::matchCondition(Term cond, bool negated) {
  if (std::optional<double> c = tr.constantValue(cond)) {
    if ((*c == 1.0) != negated)
      return success();
    return fail("a constant false condition");
  }
  // not(c): xori with true (torch's `~`).
  if (tr.opOf<arith::XOrIOp>(cond)) {
    SmallVector<Term> in = tr.operands(cond);
    for (int k = 0; k < 2; ++k)
      if (std::optional<double> c = tr.constantValue(in[k]); c && *c == 1.0)
        return matchCondition(in[1 - k], !negated);
    return fail("an xori that is not a negation");
  }
  // a and b; not(a or b) = not(a) and not(b). (not(a and b) is a union,
  // which attn.sdpa's rules cannot state.)
  if ((!negated && tr.opOf<arith::AndIOp>(cond)) ||
      (negated && tr.opOf<arith::OrIOp>(cond))) {
    SmallVector<Term> in = tr.operands(cond);
    if (failed(matchCondition(in[0], negated)))
      return failure();
    return matchCondition(in[1], negated);
  }
  if (auto cmp = tr.opOf<arith::CmpIOp>(cond))
    return matchCausal(cmp, cond, negated);
  if (!negated && cond.isLeaf() && cond.getType().isInteger(1))
    return setMask(cond);
  return fail("a mask condition that is neither an i1 tensor nor an index "
              "comparison (or their conjunction)");
}

/// cmpi(pred, lhs, rhs) on index expressions of i and j (negated: its
/// complement), as a bound on j - i: j - i <= offset (an upper bound: 0 is
/// top-left causal, Lk - Lq bottom-right, others a window's right edge) or
/// j - i >= offset (a window's left edge).
LogicalResult Matcher::matchCausal(arith::CmpIOp cmp, const Term &t,
                                   bool negated) {
  SmallVector<Term> in = tr.operands(t);
  std::optional<Tracer::Linear> l = tr.linear(in[0]), r = tr.linear(in[1]);
  if (!l || !r)
    return fail("a comparison of something else than i and j");
  int64_t ci = l->ci - r->ci, cj = l->cj - r->cj, c0 = l->c0 - r->c0;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  if (negated)
    pred = arith::invertPredicate(pred);
  // D = ci*i + cj*j + c0; visible iff pred(D, 0), D = cj * (j - i) + c0.
  if (!((ci == -1 && cj == 1) || (ci == 1 && cj == -1)))
    return fail("an index comparison that is not a bound on j - i");
  // pred(-(j - i) + c0, 0) is swapped-pred((j - i) - c0, 0).
  if (cj == -1)
    pred = pred == P::sle   ? P::sge
           : pred == P::slt ? P::sgt
           : pred == P::sge ? P::sle
           : pred == P::sgt ? P::slt
                            : pred;
  int64_t bound = cj == 1 ? -c0 : c0; // visible iff pred(j - i - bound, 0)
  std::optional<int64_t> upper, lower;
  switch (pred) {
  case P::sle:
    upper = bound;
    break;
  case P::slt:
    upper = bound - 1;
    break;
  case P::sge:
    lower = bound;
    break;
  case P::sgt:
    lower = bound + 1;
    break;
  default:
    return fail("an index comparison that is not a bound on j - i");
  }
  if (lower) {
    if (bandLower && *bandLower != *lower)
      return fail("two lower bounds on the keys");
    bandLower = lower;
    return success();
  }
  if (*upper == 0) {
    if (m.causal && *m.causal != CausalKind::TopLeft)
      return fail("two causal rules");
    m.causal = CausalKind::TopLeft;
    return success();
  }
  if (!ShapedType::isDynamic(lq) && !ShapedType::isDynamic(lk) &&
      *upper == lk - lq) {
    if (m.causal && *m.causal != CausalKind::BottomRight)
      return fail("two causal rules");
    m.causal = CausalKind::BottomRight;
    return success();
  }
  if (bandUpper && *bandUpper != *upper)
    return fail("two upper bounds on the keys");
  bandUpper = upper;
  return success();
}

/// The bounds that are not a causal rule as attn.sdpa's window [left,
/// right] around the diagonal d: d = i with top-left causality, i + Lk - Lq
/// otherwise (which needs static lengths).
LogicalResult Matcher::finishBand() {
  if (!bandUpper && !bandLower)
    return success();
  if (m.causal && bandUpper)
    return fail("a causal rule and another upper bound on the keys");
  bool staticLengths = !ShapedType::isDynamic(lq) && !ShapedType::isDynamic(lk);
  if (!(m.causal && *m.causal == CausalKind::TopLeft) && !staticLengths)
    return fail("a window around the bottom-right diagonal with dynamic "
                "lengths");
  int64_t diagonal = m.causal && *m.causal == CausalKind::TopLeft ? 0 : lk - lq;
  int64_t left = bandLower ? diagonal - *bandLower : -1;
  int64_t right = bandUpper ? *bandUpper - diagonal : -1;
  if ((bandLower && left < 0) || (bandUpper && right < 0))
    return fail("a window that excludes its own diagonal");
  m.window = {left, right};
  return success();
}

/// `sign` * bias (sign 1: added to the scores, -1: subtracted), bias =
/// slope[h] * |j - i - (Lk - Lq)| with the slope possibly negated and the
/// distance an integer converted to float: ALiBi with attn.sdpa's
/// bottom-right distance, when what the scores get is -slope * distance.
LogicalResult Matcher::matchAlibi(Term bias, double sign) {
  if (m.alibiSlopes)
    return fail("two ALiBi biases");
  if (!tr.opOf<arith::MulFOp>(bias))
    return fail("not an ALiBi bias (slope * distance)");
  SmallVector<Term> in = tr.operands(bias);
  for (int k = 0; k < 2; ++k) {
    Term slope = in[k], dist = in[1 - k];
    double s = sign;
    while (tr.opOf<arith::NegFOp>(slope)) {
      s = -s;
      slope = tr.operands(slope)[0];
    }
    if (!tr.opOf<arith::SIToFPOp>(dist) && !tr.opOf<arith::UIToFPOp>(dist))
      continue;
    Term absolute = tr.operands(dist)[0];
    if (!tr.opOf<math::AbsIOp>(absolute))
      continue;
    std::optional<Tracer::Linear> d = tr.linear(tr.operands(absolute)[0]);
    if (!d || d->ci != -d->cj || (d->cj != 1 && d->cj != -1))
      return fail("an ALiBi distance that is not |j - i + c|");
    // |cj * (j - i) + c0| = |j - i + cj * c0|: attn.sdpa's is
    // |j - i - (Lk - Lq)|.
    int64_t offset = d->cj * d->c0;
    if (offset != 0 && (ShapedType::isDynamic(lq) ||
                        ShapedType::isDynamic(lk) || offset != lq - lk))
      return fail("an ALiBi distance not from the bottom-right diagonal");
    if (s != -1.0)
      return fail("an ALiBi bias that raises far scores (+slope * distance)");
    auto type = slope.isLeaf()
                    ? dyn_cast<RankedTensorType>(slope.leaf.getType())
                    : RankedTensorType();
    if (!type || !type.getElementType().isF32() ||
        !(isPlain(slope.leafIdx, {kH}) || isPlain(slope.leafIdx, {kB, kH})))
      return fail("ALiBi slopes that are not an f32 [H] or [B, H] tensor");
    m.alibiSlopes = slope.leaf;
    return success();
  }
  return fail("not an ALiBi bias (slope * distance)");
}

/// A finite "-inf" (JAX masks with -2.38e38) gives the same result as -inf
/// as long as every row keeps a visible key: a causal rule alone, top-left or
/// bottom-right with Lk >= Lq, and no mask tensor; with a window, the
/// diagonal key, inside [0, Lk) when Lq <= Lk.
LogicalResult Matcher::checkFiniteHidden() {
  if (failed(finishBand()))
    return failure();
  if (!finiteHidden)
    return success();
  bool staticLonger =
      !ShapedType::isDynamic(lq) && !ShapedType::isDynamic(lk) && lk >= lq;
  bool rowsKeepAKey =
      !m.mask && (m.window ? staticLonger
                           : m.causal && (*m.causal == CausalKind::TopLeft ||
                                          staticLonger));
  if (!rowsKeepAKey)
    return fail("hidden scores are a finite value and a row may hide every "
                "key (attn.sdpa gives 0 there, the program an average)");
  return success();
}
