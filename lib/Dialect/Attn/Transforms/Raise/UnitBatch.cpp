//===- UnitBatch.cpp - attention traced through its [B*H, L, D] products --===//
//
// Part of the attn project.
//
// The products are traced element by element in (h, i, j, d, e), h the
// index of their [B*H] dim, whatever the reshapes and transposes around
// them: this is how JAX's form, converted to linalg by IREE, reads (5-D
// tensors with unit dims, P.V computed as V^T.P^T, the output transposed to
// [B, L, H, D]). With one batch h is the head; with more, the reshapes split
// it into (h / H, h % H), which the reads of Q, K, V and the output must do
// exactly. Q, K, V and the output may be read through a transpose (a
// linalg.transpose is inserted).
//
//===----------------------------------------------------------------------===//

#include "Match.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "attn-raise-sdpa"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::raise;

/// A 4-D leaf whose dims are a batch dim, a head dim and `roots` = (h, x, y)'s
/// x and y in some order: `perm` puts them in [B, H, X, Y] order (empty when
/// they already are). The products' batch index h is either the head (a unit
/// batch dim read at 0, the head at h / group) or, with B > 1, the flat
/// index n = b * M + h' split by a reshape: the batch dim read at n / (g * M)
/// and the head at (n / g) % M, g the group (1 for Q), M the head count.
bool Matcher::unitBatchRead(Term &t, ArrayRef<int> roots,
                            SmallVector<int64_t> &perm, int64_t &kvGroup) {
  if (!t.isLeaf() || t.leafIdx.size() != 4)
    return false;
  auto type = cast<ShapedType>(t.leaf.getType());
  auto find = [&](auto pred) -> int64_t {
    auto it = llvm::find_if(t.leafIdx, pred);
    return it == t.leafIdx.end() ? -1 : it - t.leafIdx.begin();
  };
  // The head is the read of h with a modulus (B > 1), else the read of h.
  int64_t head = find([](const Idx &i) { return i.root == kH && i.mod != 0; });
  if (head < 0)
    head = find([](const Idx &i) { return i.root == kH; });
  int64_t x = find([&](const Idx &i) { return i.isPlain(roots[1]); });
  int64_t y = find([&](const Idx &i) { return i.isPlain(roots[2]); });
  if (head < 0 || x < 0 || y < 0)
    return false;
  int64_t batch = 0 + 1 + 2 + 3 - head - x - y;
  if (batch == head || batch == x || batch == y || batch < 0 || batch > 3)
    return false;
  const Idx &h = t.leafIdx[head], &b = t.leafIdx[batch];
  if (h.mod == 0) {
    // One batch: the head is h / group.
    if (!b.isZero() || type.getDimSize(batch) != 1)
      return false;
  } else {
    // The flat [B * M] index: n / (g * M) and (n / g) % M, the batch extent
    // times g * M covering the products' batch dim exactly.
    if (b.root != kH || b.mod != 0 || b.div != h.div * h.mod ||
        type.getDimSize(head) != h.mod || type.isDynamicDim(batch) ||
        ShapedType::isDynamic(flatExtent) ||
        type.getDimSize(batch) * b.div != flatExtent)
      return false;
  }
  kvGroup = h.div;
  perm = {batch, head, x, y};
  if (llvm::equal(perm, ArrayRef<int64_t>{0, 1, 2, 3}))
    perm.clear();
  t.leafIdx = {b, h, Idx::of(roots[1]), Idx::of(roots[2])};
  return true;
}

LogicalResult Matcher::matchQKUnitBatch(Term s) {
  if (!s.isLeaf())
    return fail("the scores are not a matmul result");
  Value t = s.leaf;
  SmallVector<Idx> idx = s.leafIdx;
  if (auto expand = t.getDefiningOp<tensor::ExpandShapeOp>()) {
    std::optional<SmallVector<Idx>> src = collapseGroups(
        expand.getResultType(), expand.getReassociationIndices(), idx);
    if (!src)
      return fail("the scores are an expand_shape that merges dims");
    tr.consume(expand);
    t = expand.getSrc();
    idx = *src;
  }
  auto mm = t.getDefiningOp<linalg::BatchMatmulOp>();
  if (!mm || !isPlain(idx, {kH, kI, kJ}))
    return fail("the scores are not a batch_matmul read at (h, i, j)");
  if (mm.hasUserDefinedMaps() || !isZeroInit(mm.getDpsInits()[0]) ||
      !getElementTypeOrSelf(mm.getResult(0).getType()).isF32())
    return fail("Q.K^T batch_matmul with custom maps, a non-zero init or "
                "not in f32");
  tr.consume(mm);
  double scale = 1.0;
  Term q = stripExt(stripScale(
      tr.element(mm.getDpsInputs()[0], {Idx::of(kH), Idx::of(kI), Idx::of(kD)}),
      scale));
  Term k = stripExt(stripScale(
      tr.element(mm.getDpsInputs()[1], {Idx::of(kH), Idx::of(kD), Idx::of(kJ)}),
      scale));
  int64_t qGroup, kGroup;
  if (!unitBatchRead(q, {kH, kI, kD}, m.queryPerm, qGroup) || qGroup != 1)
    return fail("Q is not a read of a [B, H, L, D] tensor (any order)");
  if (!unitBatchRead(k, {kH, kJ, kD}, m.keyPerm, kGroup) || kGroup != group)
    return fail("K is not a read of a [B, Hkv, L, D] tensor grouped as V");
  m.query = q.leaf;
  m.key = k.leaf;
  if (scale != 1.0)
    m.scale = m.scale.value_or(1.0) * scale;
  return success();
}

static bool isCopy(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !isElementwiseGeneric(generic) ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1)
    return false;
  Block *body = generic.getBody();
  return body->getTerminator()->getOperand(0) == body->getArgument(0);
}

/// The output: the last 4-D value on the chain of single-use reshapes,
/// transposes and copies after the P.V product, and how its dims map to
/// attn.sdpa's [B, H, L, Dv].
LogicalResult Matcher::findOutput(Value product, bool transposedProduct) {
  Value current = product, root;
  SmallVector<Operation *> chain;
  size_t rootLength = 0;
  while (current.hasOneUse()) {
    Operation *user = *current.getUsers().begin();
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             linalg::TransposeOp>(user) &&
        !isCopy(user))
      break;
    chain.push_back(user);
    current = user->getResult(0);
    if (cast<ShapedType>(current.getType()).getRank() == 4) {
      root = current;
      rootLength = chain.size();
    }
  }
  if (!root || !cast<ShapedType>(root.getType()).hasStaticShape())
    return fail("no static 4-D value on the reshapes after the P.V product");
  // Trace the output back with placeholder roots 10..13 for its dims.
  Tracer back;
  back.throughContractionReshapes = true;
  Term t =
      back.element(root, {Idx::of(10), Idx::of(11), Idx::of(12), Idx::of(13)});
  // The product is (h, i, e), or (h, e, i) when transposed.
  SmallVector<int64_t> sdpaDimOf = transposedProduct
                                       ? SmallVector<int64_t>{1, 3, 2}
                                       : SmallVector<int64_t>{1, 2, 3};
  SmallVector<int64_t> perm(4, 0);
  SmallVector<bool> used(4, false);
  auto place = [&](const Idx &i, int64_t sdpaDim) {
    if (i.root < 10 || i.div != 1 || i.mod != 0 || used[i.root - 10])
      return false;
    perm[i.root - 10] = sdpaDim;
    used[i.root - 10] = true;
    return true;
  };
  // With B > 1: the product's [B * H] dim split into [B, H] by its
  // expand_shape, each read at an output dim of its own.
  if (auto expand = t.isLeaf() ? t.leaf.getDefiningOp<tensor::ExpandShapeOp>()
                               : tensor::ExpandShapeOp()) {
    SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
    ShapedType type = expand.getResultType();
    SmallVector<int64_t> batchHeads;
    for (int64_t d : groups[0])
      if (type.getDimSize(d) != 1)
        batchHeads.push_back(d);
    std::optional<SmallVector<Idx>> rest =
        collapseGroups(type, ArrayRef(groups).drop_front(), t.leafIdx);
    if (expand.getSrc() != product || batchHeads.size() != 2 || !rest ||
        type.isDynamicDim(batchHeads[0]) || type.isDynamicDim(batchHeads[1]) ||
        !place(t.leafIdx[batchHeads[0]], 0) ||
        !place(t.leafIdx[batchHeads[1]], 1))
      return fail("the output is not the P.V product's [B * H] split in two");
    for (auto [k, i] : llvm::enumerate(*rest))
      if (!place(i, sdpaDimOf[k + 1]))
        return fail("the output reads the P.V product in another way");
  } else {
    if (!t.isLeaf() || t.leaf != product || t.leafIdx.size() != 3)
      return fail("the output is not a reshape/transpose of the P.V product");
    for (auto [k, i] : llvm::enumerate(t.leafIdx))
      if (!place(i, sdpaDimOf[k]))
        return fail("the output reads the P.V product in another way");
  }
  auto type = cast<ShapedType>(root.getType());
  for (int64_t d = 0; d < 4; ++d)
    if (!used[d] && type.getDimSize(d) != 1)
      return fail("the output has a dim that is neither 1 nor of the product");
  for (Operation *op : ArrayRef(chain).take_front(rootLength))
    tr.consume(op);
  m.root = root;
  m.outPerm = perm;
  if (llvm::equal(perm, ArrayRef<int64_t>{0, 1, 2, 3}))
    m.outPerm.clear();
  return success();
}

LogicalResult Matcher::matchUnitBatch(linalg::BatchMatmulOp pv,
                                      bool transposedProduct) {
  LLVM_DEBUG(llvm::dbgs() << "[attn-raise-sdpa] trying (unit batch"
                          << (transposedProduct ? ", V^T.P^T" : "") << ") "
                          << pv << "\n");
  unitBatch = true;
  if (pv.hasUserDefinedMaps() || !isZeroInit(pv.getDpsInits()[0]))
    return fail("P.V batch_matmul with custom maps or a non-zero init");
  Value a = pv.getDpsInputs()[0], b = pv.getDpsInputs()[1];
  Value pOperand = transposedProduct ? b : a;
  auto pType = cast<ShapedType>(pOperand.getType());
  lq = pType.getDimSize(transposedProduct ? 2 : 1);
  lk = pType.getDimSize(transposedProduct ? 1 : 2);
  flatExtent = pType.getDimSize(0);
  tr.consume(pv);
  if (failed(findOutput(pv.getResult(0), transposedProduct)))
    return failure();

  Term v =
      stripExt(transposedProduct
                   ? tr.element(a, {Idx::of(kH), Idx::of(kE), Idx::of(kJ)})
                   : tr.element(b, {Idx::of(kH), Idx::of(kJ), Idx::of(kE)}));
  if (!unitBatchRead(v, {kH, kJ, kE}, m.valuePerm, group))
    return fail("V is not a read of a [B, Hkv, L, Dv] tensor (any order)");
  m.kvGroup = group;
  m.value = v.leaf;

  Term p = transposedProduct
               ? tr.element(b, {Idx::of(kH), Idx::of(kJ), Idx::of(kI)})
               : tr.element(a, {Idx::of(kH), Idx::of(kI), Idx::of(kJ)});
  Term x;
  if (failed(matchSoftmax(p, x)) || failed(matchScores(x)) ||
      failed(checkFiniteHidden()))
    return failure();
  if (!m.scale)
    m.scale = 1.0;
  return success();
}
