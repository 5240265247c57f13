//===- Trace.h - element-wise tracing of attention written in linalg ------===//
//
// Part of the attn project.
//
// attn-raise-sdpa matches attention by following one element of a tensor
// through the ops that compute it: the element of the score table at the
// point (b, h, i, j), the element of Q at (b, h, i, d), and so on. A Term is
// such an element: a scalar SSA value inside a linalg.generic's body, with
// the generic's iteration dims expressed in the matcher's root dims, or a
// leaf (a tensor element the walk does not look into). Element-wise generics,
// fills, splat constants, transposes, broadcasts, unit-dim reshapes and
// copies that tensor.extract their source (torch-mlir's dynamic broadcasts)
// are looked through, so it does not matter whether the producer fused its
// element-wise ops into one generic or emitted one generic per op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_TRACE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_TRACE_H

#include "Sizes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace mlir::attn::raise {

/// Root dims of the matcher's iteration space.
enum RootDim : int { kB = 0, kH = 1, kI = 2, kJ = 3, kD = 4, kE = 5 };

/// One index of a tensor element in terms of the root point: the constant 0
/// (root < 0), or `(x_root / div) % mod` (no `% mod` when mod == 0). div/mod
/// appear when a head dim is split into [kv head, group] by a reshape (GQA).
struct Idx {
  int root = -1;
  int64_t div = 1;
  int64_t mod = 0;

  static Idx zero() { return Idx(); }
  static Idx of(int r) { return Idx{r, 1, 0}; }
  bool isZero() const { return root < 0; }
  bool isPlain(int r) const { return root == r && div == 1 && mod == 0; }
  bool operator==(const Idx &o) const {
    return root == o.root && div == o.div && mod == o.mod;
  }
};

/// A scalar at the root point.
struct Term {
  /// A scalar SSA value (in `generic`'s body, or defined outside any body).
  Value value;
  linalg::GenericOp generic;
  SmallVector<Idx> iter; // `generic`'s iteration dims
  /// Or a splat constant (from a fill of a constant or a splat tensor).
  TypedAttr constant;
  /// Or a leaf: the element of `leaf` at `leafIdx`.
  Value leaf;
  SmallVector<Idx> leafIdx;
  /// For a leaf: the tensor nearest to it on the walk whose element was read
  /// at plain root dims in increasing order (a transposed or reshaped leaf
  /// is read in that layout through it).
  Value plain;
  SmallVector<Idx> plainIdx;

  bool isLeaf() const { return static_cast<bool>(leaf); }
  bool isValid() const { return value || constant || leaf; }
  /// The op defining `value` (null for leaves, constants, block arguments).
  Operation *op() const { return value ? value.getDefiningOp() : nullptr; }
  Type getType() const;
};

/// Follows elements through producers and remembers every op it went
/// through (the ops a raise replaces).
class Tracer {
public:
  /// The element of `tensor` at `idx` (one Idx per dim of `tensor`).
  Term element(Value tensor, ArrayRef<Idx> idx);
  /// A leaf read through `plain` instead, when it has one.
  static Term viaPlain(const Term &t);
  /// Steps from a block argument of a generic to the element it reads.
  Term resolve(Term t);
  /// The operands of `t`'s op, resolved (empty if `t` is not an op).
  SmallVector<Term> operands(const Term &t);
  /// `t`'s op if it is an OpTy (null otherwise).
  template <typename OpTy> OpTy opOf(const Term &t) {
    return t.value ? t.value.getDefiningOp<OpTy>() : OpTy();
  }
  /// The value of a float (or integer / i1) constant term.
  std::optional<double> constantValue(const Term &t);
  /// `t` as an integer index expression ci*x_i + cj*x_j + c0 over the root
  /// dims i and j (from linalg.index, index_cast, addi, subi, constants).
  struct Linear {
    int64_t ci = 0, cj = 0, c0 = 0;
  };
  std::optional<Linear> linear(const Term &t);
  /// Whether two terms compute the same thing at the same point.
  bool equivalent(const Term &a, const Term &b, unsigned depth = 0);

  /// Follow expand_shapes of contraction results too (by default the
  /// reshaped result of a matmul or reduction is a leaf).
  bool throughContractionReshapes = false;

  /// Size equalities the walk relied on but could not prove: each is a
  /// broadcast-or-identity copy's extent and its source's, read as an
  /// identity. The raise asserts them at run time (cf.assert).
  SmallVector<std::pair<Size, Size>> assumedEqual;

  /// Records an op the match consumed (reductions, matmuls, reshapes).
  void consume(Operation *op) { ops.insert(op); }
  const llvm::SetVector<Operation *> &consumed() const { return ops; }

private:
  Term elementImpl(Value tensor, ArrayRef<Idx> idx);
  Term throughExtract(const Term &t, tensor::ExtractOp extract);
  llvm::SetVector<Operation *> ops;
};

/// The indices of an expand_shape's source from those of its result, when
/// each group has at most one dim that is not a static 1 or its dims read
/// one index split as a collapse_shape splits it ((x / n) and x % n).
std::optional<SmallVector<Idx>>
collapseGroups(ShapedType expanded, ArrayRef<ReassociationIndices> groups,
               ArrayRef<Idx> idx);

/// True if `op` is a linalg.generic whose iterators are all parallel.
bool isElementwiseGeneric(Operation *op);

} // namespace mlir::attn::raise

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_RAISE_TRACE_H
