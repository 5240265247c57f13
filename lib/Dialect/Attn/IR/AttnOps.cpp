//===- AttnOps.cpp - attn dialect operations ------------------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "VerifyShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

static bool isSupportedElementType(Type t) {
  return t.isF32() || t.isF16() || t.isBF16();
}

/// Checks that dim `lhsDim` of `lhsName` equals dim `rhsDim` of `rhsName`
/// when both are static.
static LogicalResult verifyDimsMatch(SdpaOp op, StringRef lhsName,
                                     ShapedType lhs, unsigned lhsDim,
                                     StringRef rhsName, ShapedType rhs,
                                     unsigned rhsDim) {
  int64_t a = lhs.getDimSize(lhsDim), b = rhs.getDimSize(rhsDim);
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
    return success();
  return op.emitOpError() << "expected " << lhsName << " dim " << lhsDim << " ("
                          << a << ") to equal " << rhsName << " dim " << rhsDim
                          << " (" << b << ")";
}

LogicalResult SdpaOp::verify() {
  if (failed(verify::denseTensors(*this)))
    return failure();
  RankedTensorType q = getQueryType(), k = getKeyType(), v = getValueType();
  RankedTensorType o = getOutType();

  struct Named {
    StringRef name;
    RankedTensorType type;
    int64_t rank;
  };
  for (const Named &n : {Named{"query", q, 4}, Named{"key", k, 4},
                         Named{"value", v, 4}, Named{"result out", o, 4}}) {
    if (n.type.getRank() != n.rank)
      return emitOpError() << "expected " << n.name << " to have rank "
                           << n.rank << ", but got rank " << n.type.getRank();
  }

  Type elt = q.getElementType();
  if (!isSupportedElementType(elt))
    return emitOpError() << "expected query element type to be f32, f16 or "
                            "bf16, but got "
                         << elt;
  if (k.getElementType() != elt)
    return emitOpError() << "expected key element type (" << k.getElementType()
                         << ") to equal query element type (" << elt << ")";
  if (v.getElementType() != elt)
    return emitOpError() << "expected value element type ("
                         << v.getElementType()
                         << ") to equal query element type (" << elt << ")";
  if (o.getElementType() != elt)
    return emitOpError() << "expected result out element type ("
                         << o.getElementType()
                         << ") to equal query element type (" << elt << ")";

  // Heads and head dims drive the GQA mapping, the default scale and the
  // tile shapes: they must be known at compile time.
  if (failed(verify::staticHeadDims(
          *this, {{"query", q}, {"key", k}, {"value", v}}, 1, 3)))
    return failure();

  if (failed(verifyDimsMatch(*this, "key", k, 0, "query", q, 0)) ||
      failed(verifyDimsMatch(*this, "key", k, 3, "query", q, 3)) ||
      failed(verifyDimsMatch(*this, "value", v, 0, "query", q, 0)) ||
      failed(verifyDimsMatch(*this, "value", v, 1, "key", k, 1)) ||
      failed(verifyDimsMatch(*this, "value", v, 2, "key", k, 2)))
    return failure();

  int64_t hq = q.getDimSize(1), hkv = k.getDimSize(1);
  if (failed(verify::heads(*this, hq, hkv)) ||
      failed(verify::positiveHeadDims(*this, q, v, 3)))
    return failure();

  // The result: [B, Hq, Lq, Dv].
  if (failed(verifyDimsMatch(*this, "result out", o, 0, "query", q, 0)) ||
      failed(verifyDimsMatch(*this, "result out", o, 1, "query", q, 1)) ||
      failed(verifyDimsMatch(*this, "result out", o, 2, "query", q, 2)) ||
      failed(verifyDimsMatch(*this, "result out", o, 3, "value", v, 3)))
    return failure();

  if (Value lse = getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (l.getRank() != 3)
      return emitOpError()
             << "expected result lse to have rank 3, but got rank "
             << l.getRank();
    if (!l.getElementType().isF32())
      return emitOpError() << "expected result lse element type to be f32, but "
                              "got "
                           << l.getElementType();
    for (unsigned i = 0; i < 3; ++i)
      if (failed(verifyDimsMatch(*this, "result lse", l, i, "query", q, i)))
        return failure();
  }

  // The dims a mask dim is matched against: [B, Hq, Lq, Lk].
  if (Value mask = getMask())
    if (failed(verify::mask(
            *this, cast<RankedTensorType>(mask.getType()), elt,
            {q.getDimSize(0), hq, q.getDimSize(2), k.getDimSize(2)})))
      return failure();

  if (Value lengths = getKeyLengths()) {
    auto t = cast<RankedTensorType>(lengths.getType());
    if (t.getRank() != 1 || !t.getElementType().isInteger(32))
      return emitOpError() << "expected key_lengths to be a rank-1 tensor of "
                              "i32, but got "
                           << t;
    if (failed(verifyDimsMatch(*this, "key_lengths", t, 0, "query", q, 0)))
      return failure();
  }

  if (Value slopes = getAlibiSlopes())
    if (failed(verify::alibiSlopes(*this,
                                   cast<RankedTensorType>(slopes.getType()), hq,
                                   q.getDimSize(0), "query dim 0 (")))
      return failure();

  return verify::scoreAttributes(*this, getWindow(), getSoftcapAttr(),
                                 getScaleAttr());
}

//===----------------------------------------------------------------------===//
// Shape reification
//===----------------------------------------------------------------------===//

LogicalResult
SdpaOp::reifyResultShapes(OpBuilder &b,
                          ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  Location loc = getLoc();
  auto dimOf = [&](Value t, int64_t i) -> OpFoldResult {
    auto type = cast<RankedTensorType>(t.getType());
    if (!type.isDynamicDim(i))
      return b.getIndexAttr(type.getDimSize(i));
    return tensor::DimOp::create(b, loc, t, i).getResult();
  };
  SmallVector<OpFoldResult> outShape = {
      dimOf(getQuery(), 0), dimOf(getQuery(), 1), dimOf(getQuery(), 2),
      dimOf(getValue(), 3)};
  reifiedReturnShapes.push_back(outShape);
  if (getLse())
    reifiedReturnShapes.push_back(
        SmallVector<OpFoldResult>(outShape.begin(), outShape.begin() + 3));
  return success();
}

//===----------------------------------------------------------------------===//
// Canonicalization
//===----------------------------------------------------------------------===//

namespace {

/// A mask that hides nothing and adds nothing (a splat constant `true` i1
/// mask, or a splat constant 0.0 float mask) is dropped.
struct DropTrivialMask : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    if (!mask)
      return rewriter.notifyMatchFailure(op, "no mask");
    DenseElementsAttr attr;
    if (!matchPattern(mask, m_Constant(&attr)) || !attr.isSplat())
      return rewriter.notifyMatchFailure(op, "mask is not a splat constant");
    bool trivial = false;
    if (attr.getElementType().isInteger(1))
      trivial = attr.getSplatValue<bool>();
    else if (isa<FloatType>(attr.getElementType()))
      trivial = attr.getSplatValue<APFloat>().isZero();
    if (!trivial)
      return rewriter.notifyMatchFailure(op, "mask hides or adds something");
    rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().clear(); });
    return success();
  }
};

/// An explicit `scale` equal (as f32) to the default 1/sqrt(D) is dropped,
/// so that equivalent ops print and compare the same.
struct DropDefaultScale : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<APFloat> s = op.getScale();
    if (!s || s->convertToFloat() != op.getDefaultScale())
      return rewriter.notifyMatchFailure(op, "no explicit default scale");
    rewriter.modifyOpInPlace(op, [&] { op.removeScaleAttr(); });
    return success();
  }
};

/// Key lengths that are a constant at least Lk (static) hide nothing and
/// move no diagonal: they are dropped.
struct DropFullKeyLengths : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value lengths = op.getKeyLengths();
    int64_t lk = op.getKeyType().getDimSize(2);
    DenseIntElementsAttr attr;
    if (!lengths || ShapedType::isDynamic(lk) ||
        !matchPattern(lengths, m_Constant(&attr)))
      return rewriter.notifyMatchFailure(op, "no constant key lengths");
    for (const APInt &length : attr.getValues<APInt>())
      if (length.getSExtValue() < lk)
        return rewriter.notifyMatchFailure(op, "a key length hides keys");
    rewriter.modifyOpInPlace(op, [&] { op.getKeyLengthsMutable().clear(); });
    return success();
  }
};

/// ALiBi slopes that are a constant 0 add nothing: dropped.
struct DropZeroAlibi : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    Value slopes = op.getAlibiSlopes();
    DenseFPElementsAttr attr;
    if (!slopes || !matchPattern(slopes, m_Constant(&attr)))
      return rewriter.notifyMatchFailure(op, "no constant slopes");
    if (!llvm::all_of(attr.getValues<APFloat>(),
                      [](const APFloat &x) { return x.isZero(); }))
      return rewriter.notifyMatchFailure(op, "a slope is not 0");
    rewriter.modifyOpInPlace(op, [&] { op.getAlibiSlopesMutable().clear(); });
    return success();
  }
};

/// A window side that bounds nothing becomes -1: the right side under
/// `causal` (which already hides every key past the shared diagonal). A
/// window left with both sides -1 is dropped.
struct SimplifyWindow : public OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ArrayRef<int64_t>> window = op.getWindow();
    if (!window || window->size() != 2)
      return rewriter.notifyMatchFailure(op, "no window");
    int64_t left = (*window)[0], right = (*window)[1];
    if (op.getCausalKind() && right > -1)
      right = -1;
    if (left == -1 && right == -1) {
      rewriter.modifyOpInPlace(op, [&] { op.removeWindowAttr(); });
      return success();
    }
    if (right == (*window)[1])
      return rewriter.notifyMatchFailure(op, "window bounds both sides");
    rewriter.modifyOpInPlace(op, [&] {
      op.setWindow(ArrayRef<int64_t>{left, right});
    });
    return success();
  }
};

} // namespace

void SdpaOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<DropTrivialMask, DropDefaultScale, SimplifyWindow,
              DropFullKeyLengths, DropZeroAlibi>(context);
}
