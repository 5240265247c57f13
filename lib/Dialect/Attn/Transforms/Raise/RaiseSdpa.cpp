//===- RaiseSdpa.cpp - raise attention written in upstream ops to attn.sdpa ==//
//
// Part of the attn project.
//
// Anchors on each P.V contraction (linalg.batch_matmul) and each generic-form
// tm_tensor.attention, matches the attention around it (Match.cpp), checks
// that nothing outside the match uses its intermediates, and replaces its
// result by one attn.sdpa. The ops it replaces are then erased.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "Match.h"
#include "Sizes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-raise-sdpa"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISESDPA
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

namespace {

LogicalResult reject(const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] not raised: " << why << "\n");
  return failure();
}

/// Every intermediate the match consumed is used only inside the match (the
/// root's users are what the attn.sdpa takes over).
LogicalResult checkUses(const SdpaMatch &m) {
  const llvm::SetVector<Operation *> &ops = m.tracer.consumed();
  Operation *rootOp = m.root.getDefiningOp();
  for (Operation *op : ops) {
    if (op == rootOp)
      continue;
    for (Operation *user : op->getUsers())
      if (!llvm::any_of(ops, [&](Operation *matched) {
            return matched->isAncestor(user); // in a matched op's body too
          }))
        return reject("an intermediate has a user outside the attention: " +
                      op->getName().getStringRef() + " used by " +
                      user->getName().getStringRef());
  }
  return success();
}

/// The types attn.sdpa requires of what was matched.
RankedTensorType permutedType(Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  if (perm.empty())
    return type;
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return RankedTensorType::get(shape, type.getElementType());
}

/// `v` transposed by `perm` (a linalg.transpose), or `v` itself.
Value transposed(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> perm) {
  if (perm.empty())
    return v;
  SmallVector<OpFoldResult> sizes;
  for (int64_t p : perm)
    sizes.push_back(tensor::getMixedSize(b, loc, v, p));
  Value init =
      tensor::EmptyOp::create(b, loc, sizes, getElementTypeOrSelf(v.getType()));
  return linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
}

LogicalResult checkTypes(const SdpaMatch &m, bool boolMask) {
  RankedTensorType q = permutedType(m.query, m.queryPerm);
  RankedTensorType k = permutedType(m.key, m.keyPerm);
  RankedTensorType v = permutedType(m.value, m.valuePerm);
  auto out = dyn_cast<RankedTensorType>(m.root.getType());
  Type elem = q.getElementType();
  if (!elem.isF32() && !elem.isF16() && !elem.isBF16())
    return reject("query element type is not f32, f16 or bf16");
  if (k.getElementType() != elem || v.getElementType() != elem)
    return reject("query, key and value element types differ");
  if (!out || out.getElementType() != elem)
    return reject("the result's element type is not the query's (an f16/bf16 "
                  "attention must round its f32 result once, at the end)");
  if (q.isDynamicDim(1) || k.isDynamicDim(1) || v.isDynamicDim(1) ||
      q.getDimSize(1) != m.kvGroup * k.getDimSize(1) ||
      k.getDimSize(1) != v.getDimSize(1))
    return reject("head counts are not Hq = group * Hkv with the group the "
                  "program reads K/V with");
  // What the element-wise walk took as the same extent must be one.
  auto sameDim = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!sameDim(q.getDimSize(0), k.getDimSize(0)) ||
      !sameDim(k.getDimSize(0), v.getDimSize(0)) ||
      !sameDim(k.getDimSize(2), v.getDimSize(2)) ||
      !sameDim(q.getDimSize(3), k.getDimSize(3)))
    return reject("Q, K and V extents disagree");
  SmallVector<int64_t> expected = {q.getDimSize(0), q.getDimSize(1),
                                   q.getDimSize(2), v.getDimSize(3)};
  if (!m.outPerm.empty()) {
    SmallVector<int64_t> permuted;
    for (int64_t p : m.outPerm)
      permuted.push_back(expected[p]);
    expected = permuted;
  }
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return reject("the result is not [B, Hq, Lq, Dv] (or its transpose)");
  if (Value slopes = m.alibiSlopes) {
    auto type = cast<RankedTensorType>(slopes.getType());
    if (type.getDimSize(type.getRank() - 1) != q.getDimSize(1) ||
        (type.getRank() == 2 && type.getDimSize(0) != q.getDimSize(0)))
      return reject("ALiBi slopes that are not [Hq] or [B, Hq]");
  }
  if (m.mask && !boolMask) {
    Type me = getElementTypeOrSelf(m.mask.getType());
    if (me != elem && !me.isF32())
      return reject("a float mask of neither the query's type nor f32");
  }
  return success();
}

/// The mask as a rank-4 tensor: dims the element read by (b, h, i, j) in
/// order, unit dims inserted for the missing ones.
FailureOr<Value> rank4Mask(OpBuilder &b, Location loc, Value mask,
                           ArrayRef<Idx> idx) {
  auto type = cast<RankedTensorType>(mask.getType());
  int64_t rank = type.getRank();
  if (rank == 4 && llvm::all_of(llvm::enumerate(idx), [](auto it) {
        return it.value().isZero() ||
               it.value().isPlain(static_cast<int>(it.index()));
      }))
    return mask;
  if (rank == 0 || rank > 4 ||
      llvm::any_of(idx, [](const Idx &i) { return i.isZero(); }))
    return reject("a mask layout that needs more than inserting unit dims");
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape(4, 1);
  SmallVector<OpFoldResult> sizes(4, b.getIndexAttr(1));
  int64_t next = 0;
  for (int64_t k = 0; k < rank; ++k) {
    int64_t root = idx[k].root;
    ReassociationIndices group;
    int64_t end = k + 1 == rank ? 3 : root;
    for (int64_t d = next; d <= end; ++d)
      group.push_back(d);
    next = end + 1;
    groups.push_back(group);
    shape[root] = type.getDimSize(k);
    sizes[root] = tensor::getMixedSize(b, loc, mask, k);
  }
  auto result = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, result, mask, groups, sizes)
      .getResult();
}

/// The sizes the match assumed equal (Tracer::assumedEqual) can be read
/// where the attn.sdpa goes: their tensors dominate it and stay.
LogicalResult checkAssumed(const SdpaMatch &m, DominanceInfo &dom) {
  Operation *rootOp = m.root.getDefiningOp();
  for (const auto &[a, b] : m.tracer.assumedEqual)
    for (const Size &s : {a, b}) {
      if (!s.base)
        continue;
      Operation *def = s.base.getDefiningOp();
      if (!dom.properlyDominates(s.base, rootOp) ||
          (def && m.tracer.consumed().contains(def)))
        return reject("a size the match assumes is not readable there");
    }
  return success();
}

/// cf.assert that each assumed equality holds: where it does not, the
/// program read a length-1 axis broadcast or a part of a tensor, which the
/// attn.sdpa does not; the raised program stops instead.
void assertAssumed(OpBuilder &b, Location loc, const SdpaMatch &m) {
  for (const auto &[x, y] : m.tracer.assumedEqual) {
    Value lhs = x.materialize(b, loc);
    Value rhs = y.materialize(b, loc);
    Value eq =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lhs, rhs);
    cf::AssertOp::create(b, loc, eq,
                         "attn-raise-sdpa: sizes the raised attention "
                         "assumes equal differ");
  }
}

/// Erases the matched ops (their users are all matched, the root's replaced)
/// and what only they used.
void eraseMatched(const SdpaMatch &m, DenseSet<Operation *> &erased) {
  SmallVector<Operation *> ops(m.tracer.consumed().begin(),
                               m.tracer.consumed().end());
  SmallVector<Operation *> worklist;
  bool progress = true;
  while (progress) {
    progress = false;
    for (Operation *&op : ops) {
      if (!op || !op->use_empty())
        continue;
      // Operands, and values a body captures from outside.
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && !op->isAncestor(def))
            worklist.push_back(def);
      });
      erased.insert(op);
      op->erase();
      op = nullptr;
      progress = true;
    }
  }
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
    erased.insert(op);
    op->erase();
  }
}

/// The ops a builder inserts, in order, so that a raise whose attn.sdpa does
/// not verify can take them all back.
struct InsertedOps : public OpBuilder::Listener {
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
  /// Erases the ops inserted, the last first (each only used by later
  /// ones).
  void eraseAll() {
    for (Operation *op : llvm::reverse(ops))
      op->erase();
    ops.clear();
  }
};

/// Whether `op` verifies, without reporting why not: a raise that would
/// build an op the verifier rejects (a producer's scale of 0, NaN or inf)
/// leaves the program as it is.
static bool verifiesQuietly(Operation *op) {
  ScopedDiagnosticHandler quiet(op->getContext(),
                                [](Diagnostic &) { return success(); });
  return succeeded(mlir::verify(op, /*verifyRecursively=*/false));
}

struct AttnRaiseSdpaPass
    : public attn::impl::AttnRaiseSdpaBase<AttnRaiseSdpaPass> {
  using AttnRaiseSdpaBase::AttnRaiseSdpaBase;

  void runOnOperation() override {
    SmallVector<Operation *> anchors;
    getOperation()->walk([&](Operation *op) {
      if (decomposed && isa<linalg::BatchMatmulOp>(op))
        anchors.push_back(op);
      else if (tmTensor &&
               op->getName().getStringRef() == "tm_tensor.attention")
        anchors.push_back(op);
    });
    // torch-mlir's dynamic reshapes, as expand/collapse where provable.
    if (decomposed)
      normalizeReshapes(getOperation());
    DominanceInfo dom(getOperation());
    DenseSet<Operation *> erased;
    for (Operation *anchor : anchors) {
      if (erased.contains(anchor))
        continue;
      // The forms, in order; each try starts from a fresh match.
      std::unique_ptr<SdpaMatch> found;
      for (int form = 0; form < 3 && !found; ++form) {
        auto candidate = std::make_unique<SdpaMatch>();
        Matcher matcher(*candidate);
        LogicalResult matched = failure();
        if (auto pv = dyn_cast<linalg::BatchMatmulOp>(anchor))
          matched = form == 0 ? matcher.matchDecomposed(pv)
                              : matcher.matchUnitBatch(pv, form == 2);
        else if (form == 0)
          matched = matcher.matchTmTensorAttention(anchor);
        if (succeeded(matched))
          found = std::move(candidate);
      }
      if (!found)
        continue;
      SdpaMatch &m = *found;
      if (requireEmptyRowGuard && !m.guarded && (m.causal || m.mask))
        continue;
      bool boolMask =
          m.mask && getElementTypeOrSelf(m.mask.getType()).isInteger(1);
      if (failed(checkTypes(m, boolMask)) || failed(checkUses(m)) ||
          failed(checkAssumed(m, dom)))
        continue;
      Operation *rootOp = m.root.getDefiningOp();
      InsertedOps inserted;
      OpBuilder b(rootOp, &inserted);
      Location loc = rootOp->getLoc();
      assertAssumed(b, loc, m);
      Value mask;
      if (m.mask) {
        FailureOr<Value> mask4 = rank4Mask(b, loc, m.mask, m.maskIdx);
        if (failed(mask4)) {
          inserted.eraseAll();
          continue;
        }
        mask = *mask4;
      }
      FloatAttr scale;
      if (m.scale)
        scale = b.getF32FloatAttr(static_cast<float>(*m.scale));
      CausalKindAttr causal;
      if (m.causal)
        causal = CausalKindAttr::get(&getContext(), *m.causal);
      Value query = transposed(b, loc, m.query, m.queryPerm);
      Value key = transposed(b, loc, m.key, m.keyPerm);
      Value value = transposed(b, loc, m.value, m.valuePerm);
      auto q = cast<RankedTensorType>(query.getType());
      auto v = cast<RankedTensorType>(value.getType());
      auto outType = RankedTensorType::get(
          {q.getDimSize(0), q.getDimSize(1), q.getDimSize(2), v.getDimSize(3)},
          q.getElementType());
      if (m.outPerm.empty())
        outType = cast<RankedTensorType>(m.root.getType());
      DenseI64ArrayAttr window;
      if (m.window)
        window = b.getDenseI64ArrayAttr({m.window->first, m.window->second});
      FloatAttr softcap;
      if (m.softcap)
        softcap = b.getF32FloatAttr(static_cast<float>(*m.softcap));
      auto sdpa = SdpaOp::create(b, loc, TypeRange{outType}, query, key, value,
                                 mask, /*key_lengths=*/Value(), m.alibiSlopes,
                                 scale, causal, window, softcap);
      if (!verifiesQuietly(sdpa)) {
        LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] not raised: " << sdpa
                                << " does not verify\n");
        inserted.eraseAll();
        continue;
      }
      LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] raised: " << sdpa << "\n");
      m.root.replaceAllUsesWith(transposed(b, loc, sdpa.getOut(), m.outPerm));
      eraseMatched(m, erased);
    }
  }
};

} // namespace
