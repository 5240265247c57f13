//===- Match.h - the attention forms attn-raise-sdpa recognizes -----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_MATCH_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_MATCH_H

#include "Trace.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn::raise {

/// What one recognized attention becomes: the operands and attributes of an
/// attn.sdpa, the value it replaces and the ops that computed that value.
struct SdpaMatch {
  Value query, key, value; // [B, Hq, Lq, D], [B, Hkv, Lk, D], [B, Hkv, Lk, Dv]
  /// Non-empty: the operand is read transposed, as linalg.transpose of the
  /// leaf with this permutation gives it.
  SmallVector<int64_t> queryPerm, keyPerm, valuePerm;
  /// Non-empty: `root` is the attn.sdpa result transposed by this.
  SmallVector<int64_t> outPerm;
  Value mask; // a leaf tensor, see maskIdx
  SmallVector<Idx> maskIdx;
  std::optional<double> scale; // none: the op's default 1/sqrt(D)
  std::optional<CausalKind> causal;
  std::optional<std::pair<int64_t, int64_t>> window; // [left, right]
  std::optional<double> softcap;
  Value alibiSlopes;    // f32 [Hq] or [B, Hq], read at (h) or (b, h)
  bool guarded = false; // the softmax had the empty-row guard
  int64_t kvGroup = 1;  // query heads per key/value head, as read
  Value root;           // the [B, Hq, Lq, Dv] result the attn.sdpa replaces
  Tracer tracer;
};

/// The matcher's parts that the pass and the tm_tensor form share.
class Matcher {
public:
  explicit Matcher(SdpaMatch &m) : m(m), tr(m.tracer) {}

  /// torch-mlir's decomposition: P.V as a linalg.batch_matmul over [B*H]
  /// (collapse_shape/expand_shape around it), softmax written out in
  /// generics, Q.K^T as another batch_matmul.
  LogicalResult matchDecomposed(linalg::BatchMatmulOp pv);
  /// The generic form of torch-mlir's `tm_tensor.attention` on [B*H, L, D].
  LogicalResult matchTmTensorAttention(Operation *op);
  /// The products on [B*H, L, D] operands traced element-wise whatever the
  /// reshapes and transposes around them (JAX's form through IREE; with
  /// B > 1 the reshapes must split B*H exactly); `transposedProduct`: the
  /// P.V product computed as V^T.P^T.
  LogicalResult matchUnitBatch(linalg::BatchMatmulOp pv,
                               bool transposedProduct);

private:
  LogicalResult matchSoftmax(Term p, Term &scores);
  std::optional<Term> rowReduction(const Term &reduced, StringRef combiner,
                                   double init);
  LogicalResult matchScores(Term x);
  LogicalResult matchAdditiveMask(Term mask);
  LogicalResult matchCondition(Term cond, bool negated = false);
  LogicalResult matchCausal(arith::CmpIOp cmp, const Term &t, bool negated);
  LogicalResult matchSoftcap(Term &x, double cap);
  LogicalResult matchAlibi(Term bias, double sign);
  LogicalResult finishBand();
  LogicalResult matchQK(Term s);
  LogicalResult matchQKUnitBatch(Term s);
  bool unitBatchRead(Term &t, ArrayRef<int> roots, SmallVector<int64_t> &perm,
                     int64_t &kvGroup);
  LogicalResult findOutput(Value product, bool transposedProduct);
  LogicalResult checkFiniteHidden();
  LogicalResult setMask(const Term &leaf);
  Term stripScale(Term t, double &scale);
  Term stripExt(Term t);
  bool permutedRead(Term &t, ArrayRef<int> roots, SmallVector<int64_t> &perm);
  bool reachesScoresMatmul(Term t);
  LogicalResult fail(const Twine &why);

  SdpaMatch &m;
  Tracer &tr;
  int64_t lq = ShapedType::kDynamic, lk = ShapedType::kDynamic;
  bool unitBatch = false; // the unit-batch form (matchUnitBatch)
  int64_t flatExtent = ShapedType::kDynamic; // its products' [B*H] extent
  bool finiteHidden = false; // hidden scores set to a finite -1e30 or less
  int64_t group = 1;         // Hq / Hkv
  bool haveCondition = false;
  // Key bounds j - i <= bandUpper and j - i >= bandLower other than the
  // causal rules (a sliding window), made into m.window by finishBand.
  std::optional<int64_t> bandUpper, bandLower;
};

/// Whether `tensor` is linalg.fill of 0 or a splat zero constant.
bool isZeroInit(Value tensor);
/// A collapse_shape [[0, 1], [2], [3]] of a 4-D tensor with static B, H.
tensor::CollapseShapeOp batchCollapse(Value v);
/// The only user of `v` if it is an expand_shape [[0, 1], [2], [3]] to 4-D.
tensor::ExpandShapeOp batchExpand(Value v);
/// Whether dims 0 and 1 (B and H) of two types are equal.
bool sameBatchHeads(ShapedType a, ShapedType b);
/// Whether `idx` is exactly the root dims `roots`.
bool isPlain(ArrayRef<Idx> idx, ArrayRef<int> roots);
/// Whether a constant is -inf.
bool isNegInf(std::optional<double> v);

} // namespace mlir::attn::raise

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_MATCH_H
