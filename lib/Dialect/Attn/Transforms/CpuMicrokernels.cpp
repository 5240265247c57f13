//===- CpuMicrokernels.cpp - vector microkernels for the tile ops ---------===//
//
// Part of the attn project.
//
// Replaces the tagged tile ops of attn-tile-online-softmax (after
// bufferization, on memrefs) with loops over vector<Wxf32> values. Query rows
// run along the vectors; the two products keep a register block of
// accumulators in loop-carried values for the whole reduction and feed
// vector.fma with one broadcast per key (or value column), which the LLVM
// backend turns into FMAs with embedded broadcasts.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUMICROKERNELS
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the vector code of one tile op in front of it.
class KernelBuilder {
public:
  KernelBuilder(OpBuilder &b, Location loc, int64_t width)
      : b(b), loc(loc), width(width),
        vecType(VectorType::get({width}, b.getF32Type())) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, int64_t c) {
    return c == 0 ? x : arith::AddIOp::create(b, loc, x, idx(c)).getResult();
  }
  Value splat(float v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(v)));
  }
  Value load(Value mem, ValueRange indices) {
    return vector::LoadOp::create(b, loc, vecType, mem, indices);
  }
  void store(Value v, Value mem, ValueRange indices) {
    vector::StoreOp::create(b, loc, v, mem, indices);
  }
  /// One element of `mem` (any float type), as f32, in every lane.
  Value broadcast(Value mem, ValueRange indices) {
    Value x = memref::LoadOp::create(b, loc, mem, indices);
    if (!x.getType().isF32())
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return vector::BroadcastOp::create(b, loc, vecType, x);
  }

  /// max(x, y) as a compare and a select, which x86 turns into one vmaxps.
  /// It may drop a NaN; that is harmless here because a NaN score also
  /// reaches exp2(s - m), the row sum and the output by itself.
  Value max(Value x, Value y) {
    Value gt = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::SelectOp::create(b, loc, gt, x, y);
  }

  /// An scf.for from lb to ub carrying `inits`: body(iv, carried) builds
  /// the iteration (with this builder) and returns the values it yields.
  /// Returns the loop's results.
  SmallVector<Value>
  loopCarrying(int64_t lb, int64_t ub, int64_t step, ValueRange inits,
               function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto loopOp = scf::ForOp::create(
        b, loc, idx(lb), idx(ub), idx(step), inits,
        [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(iv, carried));
        });
    return SmallVector<Value>(loopOp.getResults());
  }

  /// for (iv = lb; iv < ub; iv += step) body(iv), as scf.for.
  void loop(int64_t lb, int64_t ub, int64_t step,
            function_ref<void(Value)> body) {
    if (lb >= ub)
      return;
    loopCarrying(lb, ub, step, {}, [&](Value iv, ValueRange) {
      body(iv);
      return SmallVector<Value>();
    });
  }

  /// combine(init, element(0), ..., element(n - 1)), with four partial
  /// results carried through the loop so the combines do not wait on each
  /// other; `identity` starts the three extra ones.
  Value reduceChained(int64_t n, Value init, Value identity,
                      function_ref<Value(Value)> element,
                      function_ref<Value(Value, Value)> combine) {
    constexpr int64_t kChains = 4;
    SmallVector<Value> inits(kChains, identity);
    inits[0] = init;
    int64_t full = n / kChains * kChains;
    SmallVector<Value> partial =
        loopCarrying(0, full, kChains, inits, [&](Value j, ValueRange carried) {
          SmallVector<Value> next;
          for (int64_t c = 0; c < kChains; ++c)
            next.push_back(combine(carried[c], element(add(j, c))));
          return next;
        });
    Value total = combine(combine(partial[0], partial[1]),
                          combine(partial[2], partial[3]));
    for (int64_t j = full; j < n; ++j)
      total = combine(total, element(idx(j)));
    return total;
  }

  /// Covers [0, total) with blocks of `block` (a loop) and one last block of
  /// total % block, each handed to body(start, count) with a static count.
  void blocked(int64_t total, int64_t block,
               function_ref<void(Value, int64_t)> body) {
    int64_t full = total / block * block;
    loop(0, full, block, [&](Value start) { body(start, block); });
    if (full < total)
      body(idx(full), total - full);
  }

  /// 2^x for x <= 0 (or NaN): x = n + f with n = round(x), f in [-1/2, 1/2];
  /// 2^f by its degree-7 Taylor polynomial (relative error < 6e-9 before
  /// rounding), 2^n built in the exponent field. x is clamped at -127, where
  /// the exponent field is 0 and the result exactly 0 (so -inf gives 0). A
  /// NaN passes the clamp (a compare is false for it) and the polynomial,
  /// and the product stays NaN whatever its exponent bits are.
  Value exp2(Value x) {
    Value low = splat(-127.0f);
    Value below =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, low);
    Value clamped = arith::SelectOp::create(b, loc, below, low, x);
    Value n = math::RoundEvenOp::create(b, loc, clamped);
    Value f = arith::SubFOp::create(b, loc, clamped, n);
    // c_k = ln(2)^k / k!, highest first (Horner).
    static const double coeffs[] = {
        1.525273380405984e-05, 1.540353039338161e-04,
        1.333355814642844e-03, 9.618129107628477e-03,
        5.550410866482158e-02, 2.402265069591007e-01,
        6.931471805599453e-01, 1.0};
    Value p = splat(static_cast<float>(coeffs[0]));
    for (double coeff : ArrayRef<double>(coeffs).drop_front())
      p = vector::FMAOp::create(b, loc, p, f, splat(static_cast<float>(coeff)));
    auto intType = VectorType::get({width}, b.getI32Type());
    Value ni = arith::FPToSIOp::create(b, loc, intType, n);
    Value biased = arith::AddIOp::create(
        b, loc, ni,
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(intType, b.getI32IntegerAttr(127))));
    Value bits = arith::ShLIOp::create(
        b, loc, biased,
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(intType, b.getI32IntegerAttr(23))));
    Value pow2n = arith::BitcastOp::create(b, loc, vecType, bits);
    return arith::MulFOp::create(b, loc, p, pow2n);
  }

  OpBuilder &b;
  Location loc;
  int64_t width;
  VectorType vecType;
};

MemRefType memrefOf(Value v) { return dyn_cast<MemRefType>(v.getType()); }

/// True if `v` is a memref with a static shape whose innermost dim is
/// contiguous (vector loads along it are plain loads).
bool isStaticContiguous(Value v) {
  MemRefType type = memrefOf(v);
  if (!type || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         (strides.empty() || strides.back() == 1);
}

struct RegisterBlocking {
  int64_t width;    // f32 lanes per vector
  int64_t rowVecs;  // row vectors per block (1 or 2)
  int64_t regBlock; // keys / value columns per block
};

/// What the two products add to the shared contraction kernel.
struct ContractionExtras {
  /// `out` is known to hold zeros: accumulators start at 0, not loaded.
  bool fromZero = false;
  /// If set, out[c, i] is first multiplied by rowScale[i] as it is loaded.
  Value rowScale;
  /// If set, rowMax[i] = max(rowMax[i], out[c, i]) over all c, from the
  /// accumulators while they are in registers.
  Value rowMax;
};

/// out[c, i] += sum_t B(c, t) * A[t, i], the register-blocked kernel of both
/// products: A [T, BQ] is read as row vectors, B one element at a time (as
/// B[c, t], or as B[t, c] if `bIsTC`), broadcast. A block of regBlock c's
/// times rowVecs row vectors of accumulators is carried in registers through
/// the whole reduction over t and stored once.
///   scores: St[j, i] += sum_d K[j, d] * Qt[d, i]  (out St, A Qt, B K)
///   pv:     acct[e, i] += sum_j V[j, e] * Pt[j, i] (out acct, A Pt, B V^T)
void emitContraction(KernelBuilder &kernel, const RegisterBlocking &blocking,
                     Value a, Value bMat, bool bIsTC, Value out,
                     const ContractionExtras &extras) {
  int64_t numC = memrefOf(out).getDimSize(0), bq = memrefOf(out).getDimSize(1);
  int64_t numT = memrefOf(a).getDimSize(0);
  int64_t rowStep = blocking.width * blocking.rowVecs;
  kernel.blocked(numC, blocking.regBlock, [&](Value c0, int64_t count) {
    kernel.loop(0, bq, rowStep, [&](Value i0) {
      SmallVector<Value> rows, cIdx, acc, scale;
      for (int64_t r = 0; r < blocking.rowVecs; ++r)
        rows.push_back(kernel.add(i0, r * blocking.width));
      for (int64_t c = 0; c < count; ++c)
        cIdx.push_back(kernel.add(c0, c));
      if (extras.rowScale)
        for (int64_t r = 0; r < blocking.rowVecs; ++r)
          scale.push_back(kernel.load(extras.rowScale, {rows[r]}));
      for (int64_t c = 0; c < count; ++c)
        for (int64_t r = 0; r < blocking.rowVecs; ++r) {
          Value x = extras.fromZero ? kernel.splat(0.0f)
                                    : kernel.load(out, {cIdx[c], rows[r]});
          if (extras.rowScale)
            x = arith::MulFOp::create(kernel.b, kernel.loc, x, scale[r]);
          acc.push_back(x);
        }
      SmallVector<Value> red = kernel.loopCarrying(
          0, numT, 1, acc, [&](Value t, ValueRange carried) {
            SmallVector<Value> rowVec, next;
            for (int64_t r = 0; r < blocking.rowVecs; ++r)
              rowVec.push_back(kernel.load(a, {t, rows[r]}));
            for (int64_t c = 0; c < count; ++c) {
              Value bc = bIsTC ? kernel.broadcast(bMat, {t, cIdx[c]})
                               : kernel.broadcast(bMat, {cIdx[c], t});
              for (int64_t r = 0; r < blocking.rowVecs; ++r)
                next.push_back(
                    vector::FMAOp::create(kernel.b, kernel.loc, bc, rowVec[r],
                                          carried[c * blocking.rowVecs + r]));
            }
            return next;
          });
      for (int64_t c = 0; c < count; ++c)
        for (int64_t r = 0; r < blocking.rowVecs; ++r)
          kernel.store(red[c * blocking.rowVecs + r], out, {cIdx[c], rows[r]});
      if (!extras.rowMax)
        return;
      for (int64_t r = 0; r < blocking.rowVecs; ++r) {
        Value blockMax = kernel.load(extras.rowMax, {rows[r]});
        for (int64_t c = 0; c < count; ++c)
          blockMax = kernel.max(blockMax, red[c * blocking.rowVecs + r]);
        kernel.store(blockMax, extras.rowMax, {rows[r]});
      }
    });
  });
}

/// rowStat[i] = combine(rowStat[i], St[j, i]) over all keys j: the row max
/// or the row sum.
void emitKeyReduction(KernelBuilder &kernel, Value st, Value rowStat,
                      bool isMax) {
  int64_t bk = memrefOf(st).getDimSize(0), bq = memrefOf(st).getDimSize(1);
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value identity =
        kernel.splat(isMax ? -std::numeric_limits<float>::infinity() : 0.0f);
    Value total = kernel.reduceChained(
        bk, kernel.load(rowStat, {i0}), identity,
        [&](Value j) {
          return kernel.load(st, {j, i0});
        },
        [&](Value x, Value y) -> Value {
          if (isMax)
            return kernel.max(x, y);
          return arith::AddFOp::create(kernel.b, kernel.loc, x, y);
        });
    kernel.store(total, rowStat, {i0});
  });
}

/// m_new[i] = max(m[i], blockMax[i]); alpha[i] = m[i] == -inf ? 0 :
/// exp2(m[i] - m_new[i]). Operands: ins(blockMax), outs(m, alpha).
void emitRowMaxUpdate(KernelBuilder &kernel, Value blockMax, Value m,
                      Value alpha) {
  int64_t bq = memrefOf(m).getDimSize(0);
  float negInf = -std::numeric_limits<float>::infinity();
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value mOld = kernel.load(m, {i0});
    Value mNew = kernel.max(mOld, kernel.load(blockMax, {i0}));
    Value alphaVec =
        kernel.exp2(arith::SubFOp::create(kernel.b, kernel.loc, mOld, mNew));
    Value empty =
        arith::CmpFOp::create(kernel.b, kernel.loc, arith::CmpFPredicate::OEQ,
                              mOld, kernel.splat(negInf));
    alphaVec = arith::SelectOp::create(kernel.b, kernel.loc, empty,
                                       kernel.splat(0.0f), alphaVec);
    kernel.store(mNew, m, {i0});
    kernel.store(alphaVec, alpha, {i0});
  });
}

/// St[j, i] = St[j, i] == -inf ? 0 : exp2(St[j, i] - m[i]). With `rowSum`,
/// also rowSum[i] += sum_j St[j, i] on the new values, four partial sums per
/// row vector.
void emitProbabilities(KernelBuilder &kernel, Value m, Value st, Value rowSum) {
  int64_t bk = memrefOf(st).getDimSize(0), bq = memrefOf(st).getDimSize(1);
  float negInf = -std::numeric_limits<float>::infinity();
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value mv = kernel.load(m, {i0});
    Value ninf = kernel.splat(negInf), zero = kernel.splat(0.0f);
    // One probability: loaded, exponentiated, stored, returned.
    auto prob = [&](Value j) {
      Value s = kernel.load(st, {j, i0});
      Value x = arith::SubFOp::create(kernel.b, kernel.loc, s, mv);
      // x = -inf (a hidden key in a row that has seen a visible one) gives
      // exactly 0 through the clamp; NaN gives NaN. Only a row that has
      // seen nothing yet (m = -inf, x = NaN) needs the select.
      Value p = kernel.exp2(x);
      Value hidden = arith::CmpFOp::create(kernel.b, kernel.loc,
                                           arith::CmpFPredicate::OEQ, s, ninf);
      p = arith::SelectOp::create(kernel.b, kernel.loc, hidden, zero, p);
      kernel.store(p, st, {j, i0});
      return p;
    };
    if (!rowSum) {
      kernel.loop(0, bk, 1, [&](Value j) { prob(j); });
      return;
    }
    Value total = kernel.reduceChained(bk, kernel.load(rowSum, {i0}), zero,
                                       prob, [&](Value x, Value y) -> Value {
                                         return arith::AddFOp::create(
                                             kernel.b, kernel.loc, x, y);
                                       });
    kernel.store(total, rowSum, {i0});
  });
}

/// x[..., i] *= alpha[i] for x of rank 1 or 2.
void emitRescale(KernelBuilder &kernel, Value alpha, Value x) {
  MemRefType xType = memrefOf(x);
  int64_t bq = xType.getDimSize(xType.getRank() - 1);
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value alphaVec = kernel.load(alpha, {i0});
    auto scaleAt = [&](SmallVector<Value> indices) {
      Value y = kernel.load(x, indices);
      kernel.store(arith::MulFOp::create(kernel.b, kernel.loc, y, alphaVec), x,
                   indices);
    };
    if (xType.getRank() == 1)
      scaleAt({i0});
    else
      kernel.loop(0, xType.getDimSize(0), 1, [&](Value e) {
        scaleAt({e, i0});
      });
  });
}

/// Vectorizes a 2-D all-parallel tile op with only an output operand (the
/// element mask) along its contiguous dim, op by op: linalg.index 1 becomes
/// i0 + [0, 1, ..., W-1], an op with a vector operand gets its scalar
/// operands broadcast and vector result types. Only ops that are
/// elementwise-mappable (arith, math) can be vectorized this way; returns
/// false, building nothing, if the body holds anything else.
bool emitElementwise(KernelBuilder &kernel, linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 0 || op.getNumLoops() != 2 ||
      op.getNumReductionLoops() != 0 ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return false;
  Block &body = op.getRegion().front();
  for (Operation &inner : body.without_terminator())
    if (!isa<linalg::IndexOp>(inner) &&
        !(inner.hasTrait<OpTrait::Vectorizable>() &&
          inner.hasTrait<OpTrait::Elementwise>()))
      return false;
  Value out = op.getDpsInits()[0];
  int64_t numKeys = memrefOf(out).getDimSize(0);
  int64_t numRows = memrefOf(out).getDimSize(1);
  auto vectorOf = [&](Type elementType) {
    return VectorType::get({kernel.width}, elementType);
  };
  kernel.loop(0, numKeys, 1, [&](Value j) {
    kernel.loop(0, numRows, kernel.width, [&](Value i0) {
      IRMapping map;
      map.map(body.getArgument(0), kernel.load(out, {j, i0}));
      for (Operation &inner : body.without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
          Value v = j;
          if (index.getDim() == 1) {
            Value step = vector::StepOp::create(
                kernel.b, kernel.loc, vectorOf(kernel.b.getIndexType()));
            Value base = vector::BroadcastOp::create(
                kernel.b, kernel.loc, vectorOf(kernel.b.getIndexType()), i0);
            v = arith::AddIOp::create(kernel.b, kernel.loc, base, step);
          }
          map.map(index.getResult(), v);
          continue;
        }
        SmallVector<Value> operands;
        bool anyVector = false;
        for (Value v : inner.getOperands()) {
          operands.push_back(map.lookupOrDefault(v));
          anyVector |= isa<VectorType>(operands.back().getType());
        }
        if (!anyVector) {
          kernel.b.clone(inner, map);
          continue;
        }
        for (Value &v : operands)
          if (!isa<VectorType>(v.getType()))
            v = vector::BroadcastOp::create(kernel.b, kernel.loc,
                                            vectorOf(v.getType()), v);
        SmallVector<Type> resultTypes;
        for (Type type : inner.getResultTypes())
          resultTypes.push_back(vectorOf(type));
        OperationState state(inner.getLoc(), inner.getName(), operands,
                             resultTypes, inner.getAttrs());
        Operation *vec = kernel.b.create(state);
        map.map(inner.getResults(), vec->getResults());
      }
      Value result = map.lookupOrDefault(body.getTerminator()->getOperand(0));
      if (!isa<VectorType>(result.getType()))
        result = vector::BroadcastOp::create(kernel.b, kernel.loc,
                                             kernel.vecType, result);
      kernel.store(result, out, {j, i0});
    });
  });
  return true;
}

/// `op` as a tile op with `role` whose operands the kernels handle, or null.
linalg::GenericOp asTile(Operation *op, TileRole role) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      getTileRole(generic) != role)
    return {};
  for (Value v : generic->getOperands())
    if (!isStaticContiguous(v))
      return {};
  return generic;
}

/// What a per-role rewrite works on: the tile op, the kernel builder in
/// front of it, the register blocking, and the neighbours it folds into its
/// kernel (erased with the op).
struct TileRewrite {
  linalg::GenericOp op;
  KernelBuilder &kernel;
  const RegisterBlocking &blocking;
  SmallVector<Operation *> folded;

  Value input(unsigned i) { return op.getDpsInputs()[i]; }
  Value output(unsigned i = 0) { return op.getDpsInits()[i]; }
};

/// St[j, i] = sum_d K[j, d] * Qt[d, i]. The tile's zero fill right before it
/// is folded in (accumulators start at 0), and so is the row max right after
/// it (taken from the accumulators while they are in registers).
bool rewriteScores(TileRewrite &rewrite) {
  Value out = rewrite.output();
  ContractionExtras extras;
  auto zeroFill = dyn_cast_or_null<linalg::FillOp>(rewrite.op->getPrevNode());
  if (zeroFill && zeroFill.hasPureBufferSemantics() &&
      zeroFill.getDpsInits()[0] == out &&
      getTileRole(zeroFill) == TileRole::InitScores &&
      matchPattern(zeroFill.getDpsInputs()[0], m_AnyZeroFloat())) {
    extras.fromZero = true;
    rewrite.folded.push_back(zeroFill);
  }
  linalg::GenericOp rowMax =
      asTile(rewrite.op->getNextNode(), TileRole::RowMax);
  if (rowMax && rowMax.getDpsInputs()[0] == out) {
    extras.rowMax = rowMax.getDpsInits()[0];
    rewrite.folded.push_back(rowMax);
  }
  emitContraction(rewrite.kernel, rewrite.blocking, /*a=*/rewrite.input(0),
                  /*bMat=*/rewrite.input(1), /*bIsTC=*/false, out, extras);
  return true;
}

/// acct[e, i] += sum_j V[j, e] * Pt[j, i], with the rescale of the
/// accumulator right before it folded in (applied as it is loaded).
bool rewritePV(TileRewrite &rewrite) {
  Value out = rewrite.output();
  ContractionExtras extras;
  linalg::GenericOp rescale =
      asTile(rewrite.op->getPrevNode(), TileRole::Rescale);
  if (rescale && rescale.getDpsInits()[0] == out) {
    extras.rowScale = rescale.getDpsInputs()[0];
    rewrite.folded.push_back(rescale);
  }
  emitContraction(rewrite.kernel, rewrite.blocking, /*a=*/rewrite.input(0),
                  /*bMat=*/rewrite.input(1), /*bIsTC=*/true, out, extras);
  return true;
}

/// r[i] = max_j St[j, i], when the scores kernel did not take it.
bool rewriteRowMax(TileRewrite &rewrite) {
  emitKeyReduction(rewrite.kernel, rewrite.input(0), rewrite.output(),
                   /*isMax=*/true);
  return true;
}

/// l[i] += sum_j Pt[j, i], when the probabilities kernel did not take it.
bool rewriteRowSum(TileRewrite &rewrite) {
  emitKeyReduction(rewrite.kernel, rewrite.input(0), rewrite.output(),
                   /*isMax=*/false);
  return true;
}

bool rewriteMaxUpdate(TileRewrite &rewrite) {
  emitRowMaxUpdate(rewrite.kernel, rewrite.input(0), rewrite.output(0),
                   rewrite.output(1));
  return true;
}

/// Pt = exp2(St - m), with the row sum right after it folded in.
bool rewriteProbs(TileRewrite &rewrite) {
  Value out = rewrite.output();
  Value rowSum;
  linalg::GenericOp sum = asTile(rewrite.op->getNextNode(), TileRole::RowSum);
  if (sum && sum.getDpsInputs()[0] == out) {
    rowSum = sum.getDpsInits()[0];
    rewrite.folded.push_back(sum);
  }
  emitProbabilities(rewrite.kernel, rewrite.input(0), out, rowSum);
  return true;
}

/// x[..., i] *= alpha[i]; left to the P.V kernel that follows when that one
/// takes it.
bool rewriteRescale(TileRewrite &rewrite) {
  Value out = rewrite.output();
  linalg::GenericOp pv = asTile(rewrite.op->getNextNode(), TileRole::PV);
  if (pv && pv.getDpsInits()[0] == out &&
      memrefOf(pv.getDpsInits()[0]).getDimSize(1) % rewrite.kernel.width == 0)
    return false;
  emitRescale(rewrite.kernel, rewrite.input(0), out);
  return true;
}

bool rewriteElementMask(TileRewrite &rewrite) {
  return emitElementwise(rewrite.kernel, rewrite.op);
}

/// Builds the kernel of `rewrite.op`'s role; false (building nothing) if
/// the role has no kernel or the kernel does not take this op.
bool rewriteByRole(TileRole role, TileRewrite &rewrite) {
  switch (role) {
  case TileRole::Scores:
    return rewriteScores(rewrite);
  case TileRole::ElementMask:
    return rewriteElementMask(rewrite);
  case TileRole::RowMax:
    return rewriteRowMax(rewrite);
  case TileRole::MaxUpdate:
    return rewriteMaxUpdate(rewrite);
  case TileRole::Rescale:
    return rewriteRescale(rewrite);
  case TileRole::Probs:
    return rewriteProbs(rewrite);
  case TileRole::RowSum:
    return rewriteRowSum(rewrite);
  case TileRole::PV:
    return rewritePV(rewrite);
  // Fills are linalg.fill, not tile ops: a kernel folds the one it consumes.
  case TileRole::InitQuery:
  case TileRole::InitScores:
  case TileRole::InitRowMax:
  case TileRole::InitMax:
  case TileRole::InitSum:
  case TileRole::InitAcc:
    return false;
  }
  return false;
}

/// The products read K and V (or Pt) in any float type and extend each
/// element; every other kernel works on f32 tiles only.
bool readsAnyFloat(TileRole role) {
  return role == TileRole::Scores || role == TileRole::PV;
}

/// A register block of as many row vectors as asked for and the tile's
/// `bq` rows hold; with fewer, more keys per block instead, so the block
/// keeps about as many accumulators (at most 24 of the 32 registers).
RegisterBlocking chooseRegisterBlocking(int64_t bq, int64_t width,
                                        int64_t regBlock, int64_t rowVectors) {
  int64_t rowVecs = 1;
  for (int64_t count = rowVectors; count > 1; --count)
    if (bq % (count * width) == 0) {
      rowVecs = count;
      break;
    }
  int64_t keys = std::max<int64_t>(
      1, std::min(regBlock * rowVectors / rowVecs, 24 / rowVecs));
  return {width, rowVecs, std::max(regBlock, keys)};
}

/// Replaces one tagged tile op, if its shapes allow; returns true if it did.
/// Neighbours it fuses with (the row max after the scores, the row sum after
/// the probabilities, the rescale before P.V) are erased too and added to
/// `erased`.
bool rewriteTileOp(linalg::GenericOp op, int64_t width, int64_t regBlock,
                   int64_t rowVectors, DenseSet<Operation *> &erased) {
  std::optional<TileRole> role = getTileRole(op);
  if (!role || !asTile(op, *role))
    return false;
  // Query rows are the innermost dim of the output in every role.
  MemRefType outType = memrefOf(op.getDpsInits()[0]);
  int64_t bq = outType.getDimSize(outType.getRank() - 1);
  if (bq % width != 0 || !outType.getElementType().isF32())
    return false;
  if (!readsAnyFloat(*role))
    for (Value v : op.getDpsInputs())
      if (!memrefOf(v).getElementType().isF32())
        return false;
  RegisterBlocking blocking =
      chooseRegisterBlocking(bq, width, regBlock, rowVectors);

  OpBuilder builder(op);
  KernelBuilder kernel(builder, op.getLoc(), width);
  TileRewrite rewrite{op, kernel, blocking, {}};
  if (!rewriteByRole(*role, rewrite))
    return false;
  for (Operation *folded : rewrite.folded) {
    erased.insert(folded);
    folded->erase();
  }
  op->erase();
  return true;
}

struct AttnCpuMicrokernelsPass
    : public attn::impl::AttnCpuMicrokernelsBase<AttnCpuMicrokernelsPass> {
  using AttnCpuMicrokernelsBase::AttnCpuMicrokernelsBase;

  void runOnOperation() override {
    if (failed(verifyPositiveOptions(getOperation(), getArgument(),
                                     {{"vector-width", vectorWidth},
                                      {"reg-block", regBlock},
                                      {"row-vectors", rowVectors}})))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> tiles;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (getTileRole(op))
        tiles.push_back(op);
    });
    DenseSet<Operation *> erased;
    for (linalg::GenericOp op : tiles)
      if (!erased.contains(op))
        rewriteTileOp(op, vectorWidth, regBlock, rowVectors, erased);
  }
};

} // namespace
