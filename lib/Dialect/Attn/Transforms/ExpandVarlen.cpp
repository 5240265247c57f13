//===- ExpandVarlen.cpp - attn.sdpa_varlen as one attn.sdpa per sequence --===//
//
// Part of the attn project.
//
// Packed variable-length attention becomes a sequential scf.for over the
// sequences; each iteration slices the sequence's own rows out of the packed
// query, key and value, transposes them to attn.sdpa's [1, H, L, D] layout,
// runs one attn.sdpa with dynamic Lq and Lk (which both CPU lowerings handle
// with their own parallel loops) and writes the result back into the packed
// output. No row outside a sequence is read or computed: the transposes cost
// O(total) extra traffic, no padding. attn.sdpa_varlen_grad likewise becomes
// one attn.sdpa_grad per sequence.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/IR/AttnVarlenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDVARLEN
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `cu[i]` as an index.
static Value offsetAt(OpBuilder &b, Location loc, Value cu, Value i) {
  Value v = tensor::ExtractOp::create(b, loc, cu, ValueRange{i});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// Rows [start, start + len) of a packed [total, H, D] tensor as the
/// [1, H, len, D] tensor attn.sdpa takes (a copy of those rows).
static Value sliceSequence(OpBuilder &b, Location loc, Value packed,
                           Value start, Value len) {
  auto type = cast<RankedTensorType>(packed.getType());
  int64_t h = type.getDimSize(1), d = type.getDimSize(2);
  Type elt = type.getElementType();
  SmallVector<OpFoldResult> offsets = {start, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {len, b.getIndexAttr(h), b.getIndexAttr(d)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  auto sliceType = RankedTensorType::get({ShapedType::kDynamic, h, d}, elt);
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, packed,
                                               offsets, sizes, strides);
  auto expandedType =
      RankedTensorType::get({1, ShapedType::kDynamic, h, d}, elt);
  SmallVector<ReassociationIndices> groups = {{0, 1}, {2}, {3}};
  SmallVector<OpFoldResult> expandedSizes = {
      b.getIndexAttr(1), len, b.getIndexAttr(h), b.getIndexAttr(d)};
  Value expanded = tensor::ExpandShapeOp::create(b, loc, expandedType, slice,
                                                 groups, expandedSizes);
  Value init = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(h), len,
                                b.getIndexAttr(d)},
      elt);
  return linalg::TransposeOp::create(b, loc, expanded, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      ->getResult(0);
}

/// The inverse of sliceSequence: a sequence's [1, H, len, D] result written
/// back as rows [start, start + len) of the packed [total, H, D] `into`.
static Value insertSequence(OpBuilder &b, Location loc, Value result,
                            Value into, Value start, Value len) {
  auto type = cast<RankedTensorType>(into.getType());
  int64_t h = type.getDimSize(1), d = type.getDimSize(2);
  Type elt = type.getElementType();
  auto seqType = RankedTensorType::get({h, ShapedType::kDynamic, d}, elt);
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, seqType, result,
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  Value rowsInit = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{len, b.getIndexAttr(h), b.getIndexAttr(d)},
      elt);
  Value rows = linalg::TransposeOp::create(b, loc, collapsed, rowsInit,
                                           ArrayRef<int64_t>{1, 0, 2})
                   ->getResult(0);
  return tensor::InsertSliceOp::create(
      b, loc, rows, into,
      SmallVector<OpFoldResult>{start, b.getIndexAttr(0), b.getIndexAttr(0)},
      SmallVector<OpFoldResult>{len, b.getIndexAttr(h), b.getIndexAttr(d)},
      SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
}

/// A zero-filled tensor of `like`'s type (its dynamic dims from `like`).
static Value zerosLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(tensor::getMixedSize(b, loc, like, d));
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty)->getResult(0);
}

/// Sequence `seq`'s offsets: [q0, q0 + lq) and [k0, k0 + lk).
struct SequenceRows {
  Value q0, lq, k0, lk;
};
static SequenceRows sequenceRows(OpBuilder &b, Location loc, Value cuQ,
                                 Value cuK, Value seq, Value c1) {
  Value next = arith::AddIOp::create(b, loc, seq, c1);
  SequenceRows r;
  r.q0 = offsetAt(b, loc, cuQ, seq);
  Value q1 = offsetAt(b, loc, cuQ, next);
  r.k0 = offsetAt(b, loc, cuK, seq);
  Value k1 = offsetAt(b, loc, cuK, next);
  r.lq = arith::SubIOp::create(b, loc, q1, r.q0);
  r.lk = arith::SubIOp::create(b, loc, k1, r.k0);
  return r;
}

/// The sequential scf.for over the B = dim(cuQ) - 1 sequences, carrying
/// `inits`; `body` gets each sequence's rows and the carried values and
/// returns what the iteration yields.
static scf::ForOp
forEachSequence(OpBuilder &b, Location loc, Value cuQ, Value cuK,
                ValueRange inits,
                function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                                SequenceRows, ValueRange)>
                    body) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value offsets = tensor::DimOp::create(b, loc, cuQ, 0);
  Value numSeqs = arith::SubIOp::create(b, loc, offsets, c1);
  return scf::ForOp::create(
      b, loc, c0, numSeqs, c1, inits,
      [&](OpBuilder &b, Location loc, Value seq, ValueRange iter) {
        SequenceRows rows = sequenceRows(b, loc, cuQ, cuK, seq, c1);
        scf::YieldOp::create(b, loc, body(b, loc, seq, rows, iter));
      });
}

/// Replaces `op` by the loop's results (cast to the op's result types where
/// the loop's are more dynamic).
static void replaceWithResults(IRRewriter &rewriter, Operation *op,
                               scf::ForOp loop) {
  SmallVector<Value> replacements;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    Value r = loop.getResult(i);
    if (r.getType() != result.getType())
      r = tensor::CastOp::create(rewriter, op->getLoc(), result.getType(), r);
    replacements.push_back(r);
  }
  rewriter.replaceOp(op, replacements);
}

static void expand(IRRewriter &rewriter, SdpaVarlenOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  auto qType = op.getQuery().getType();
  auto vType = op.getValue().getType();
  Type elt = qType.getElementType();
  int64_t hq = qType.getDimSize(1), dv = vType.getDimSize(2);
  bool withLse = static_cast<bool>(op.getLse());

  // Rows of no sequence (past cu_seqlens_q[B]) see nothing: out 0, lse
  // -inf, the empty-row rule. The fills are one write of each result.
  OpFoldResult totalQ = tensor::getMixedSize(b, loc, op.getQuery(), 0);
  Value out = tensor::EmptyOp::create(
      b, loc,
      SmallVector<OpFoldResult>{totalQ, b.getIndexAttr(hq), b.getIndexAttr(dv)},
      elt);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
  out = linalg::FillOp::create(b, loc, zero, out)->getResult(0);
  SmallVector<Value> inits = {out};
  if (withLse) {
    Value lse = tensor::EmptyOp::create(
        b, loc, SmallVector<OpFoldResult>{b.getIndexAttr(hq), totalQ},
        b.getF32Type());
    Value ninf = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    inits.push_back(linalg::FillOp::create(b, loc, ninf, lse)->getResult(0));
  }

  auto loop = forEachSequence(
      b, loc, op.getCuSeqlensQ(), op.getCuSeqlensK(), inits,
      [&](OpBuilder &b, Location loc, Value seq, SequenceRows rows,
          ValueRange iter) -> SmallVector<Value> {
        auto [q0, lq, k0, lk] = rows;
        Value q = sliceSequence(b, loc, op.getQuery(), q0, lq);
        Value k = sliceSequence(b, loc, op.getKey(), k0, lk);
        Value v = sliceSequence(b, loc, op.getValue(), k0, lk);

        // ALiBi slopes: [Hq] as they are, [B, Hq] as this sequence's row
        // ([1, Hq], the inner attn.sdpa's batch of one).
        Value slopes = op.getAlibiSlopes();
        if (slopes && cast<RankedTensorType>(slopes.getType()).getRank() == 2)
          slopes = tensor::ExtractSliceOp::create(
              b, loc, RankedTensorType::get({1, hq}, b.getF32Type()), slopes,
              SmallVector<OpFoldResult>{seq, b.getIndexAttr(0)},
              SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(hq)},
              SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));

        SmallVector<Type> types = {
            RankedTensorType::get({1, hq, ShapedType::kDynamic, dv}, elt)};
        if (withLse)
          types.push_back(RankedTensorType::get({1, hq, ShapedType::kDynamic},
                                                b.getF32Type()));
        auto sdpa = SdpaOp::create(b, loc, types, q, k, v, /*mask=*/Value(),
                                   /*key_lengths=*/Value(), slopes,
                                   op.getScaleAttr(), op.getCausalAttr(),
                                   op.getWindowAttr(), op.getSoftcapAttr());

        // [1, Hq, Lq_b, Dv] -> [Lq_b, Hq, Dv] rows of the packed out.
        SmallVector<Value> results = {
            insertSequence(b, loc, sdpa.getOut(), iter[0], q0, lq)};
        if (withLse) {
          // [1, Hq, Lq_b] -> columns [q0, q1) of lse [Hq, total_q].
          Value lse = tensor::CollapseShapeOp::create(
              b, loc,
              RankedTensorType::get({hq, ShapedType::kDynamic}, b.getF32Type()),
              sdpa.getLse(), SmallVector<ReassociationIndices>{{0, 1}, {2}});
          results.push_back(tensor::InsertSliceOp::create(
              b, loc, lse, iter[1],
              SmallVector<OpFoldResult>{b.getIndexAttr(0), q0},
              SmallVector<OpFoldResult>{b.getIndexAttr(hq), lq},
              SmallVector<OpFoldResult>(2, b.getIndexAttr(1))));
        }
        return results;
      });

  replaceWithResults(rewriter, op, loop);
}

/// attn.sdpa_varlen_grad: one attn.sdpa_grad per sequence, on the rows the
/// forward's expansion gives it, its gradients written back into zero-filled
/// packed results (rows of no sequence keep their zeros).
static void expand(IRRewriter &rewriter, SdpaVarlenGradOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  int64_t hq = op.getQuery().getType().getDimSize(1);
  SmallVector<Value> inits = {zerosLike(b, loc, op.getQuery()),
                              zerosLike(b, loc, op.getKey()),
                              zerosLike(b, loc, op.getValue())};

  auto loop = forEachSequence(
      b, loc, op.getCuSeqlensQ(), op.getCuSeqlensK(), inits,
      [&](OpBuilder &b, Location loc, Value seq, SequenceRows rows,
          ValueRange iter) -> SmallVector<Value> {
        auto [q0, lq, k0, lk] = rows;
        Value q = sliceSequence(b, loc, op.getQuery(), q0, lq);
        Value k = sliceSequence(b, loc, op.getKey(), k0, lk);
        Value v = sliceSequence(b, loc, op.getValue(), k0, lk);
        Value o = sliceSequence(b, loc, op.getOut(), q0, lq);
        Value dO = sliceSequence(b, loc, op.getDOut(), q0, lq);
        // Columns [q0, q0 + lq) of lse [Hq, total_q] as [1, Hq, Lq_b].
        Type f32 = b.getF32Type();
        Value lseCols = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({hq, ShapedType::kDynamic}, f32),
            op.getLse(), SmallVector<OpFoldResult>{b.getIndexAttr(0), q0},
            SmallVector<OpFoldResult>{b.getIndexAttr(hq), lq},
            SmallVector<OpFoldResult>(2, b.getIndexAttr(1)));
        Value lse = tensor::ExpandShapeOp::create(
            b, loc, RankedTensorType::get({1, hq, ShapedType::kDynamic}, f32),
            lseCols, SmallVector<ReassociationIndices>{{0, 1}, {2}},
            SmallVector<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(hq),
                                      lq});

        SmallVector<Type> types = {q.getType(), k.getType(), v.getType()};
        auto grad = SdpaGradOp::create(b, loc, types, q, k, v, o, lse, dO,
                                       /*mask=*/Value(), op.getScaleAttr(),
                                       op.getCausalAttr());
        return SmallVector<Value>{
            insertSequence(b, loc, grad.getDQuery(), iter[0], q0, lq),
            insertSequence(b, loc, grad.getDKey(), iter[1], k0, lk),
            insertSequence(b, loc, grad.getDValue(), iter[2], k0, lk)};
      });

  replaceWithResults(rewriter, op, loop);
}

struct AttnExpandVarlenPass
    : public attn::impl::AttnExpandVarlenBase<AttnExpandVarlenPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<SdpaVarlenOp, SdpaVarlenGradOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (auto fwd = dyn_cast<SdpaVarlenOp>(op))
        expand(rewriter, fwd);
      else
        expand(rewriter, cast<SdpaVarlenGradOp>(op));
    }
  }
};

} // namespace
