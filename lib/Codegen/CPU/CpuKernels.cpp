//===- CpuKernels.cpp - vector kernels for the CPU tile ops ---------------===//
//
// Part of the attn project.
//
// Loops over vector<Wxf32> values. The two products keep a register block
// of accumulators in loop-carried values for the whole reduction and feed
// vector.fma with one broadcast per key (or value column), which the LLVM
// backend turns into FMAs with embedded broadcasts.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "CpuKernelsBf16.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"

#include <cassert>
#include <functional>
#include <limits>

using namespace mlir;
using namespace mlir::attn::detail;

SmallVector<Value> KernelBuilder::loopCarrying(
    Value lb, Value ub, int64_t step, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loopOp = scf::ForOp::create(
      b, loc, lb, ub, idx(step), inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(iv, carried));
      });
  return SmallVector<Value>(loopOp.getResults());
}

Value KernelBuilder::reduceChained(int64_t numElements, Value init,
                                   Value identity,
                                   function_ref<Value(Value)> element,
                                   function_ref<Value(Value, Value)> combine,
                                   int64_t chains) {
  assert(chains >= 1 && "reduceChained needs a chain");
  SmallVector<Value> inits(chains, identity);
  inits[0] = init;
  int64_t full = numElements / chains * chains;
  SmallVector<Value> partial =
      loopCarrying(0, full, chains, inits, [&](Value j, ValueRange carried) {
        SmallVector<Value> next;
        for (int64_t c = 0; c < chains; ++c)
          next.push_back(combine(carried[c], element(add(j, c))));
        return next;
      });
  // Pairwise: with 4 chains, (0 + 1) + (2 + 3).
  while (partial.size() > 1) {
    SmallVector<Value> pairs;
    for (size_t c = 0; c + 1 < partial.size(); c += 2)
      pairs.push_back(combine(partial[c], partial[c + 1]));
    if (partial.size() % 2)
      pairs.push_back(partial.back());
    partial = std::move(pairs);
  }
  Value total = partial[0];
  for (int64_t j = full; j < numElements; ++j)
    total = combine(total, element(idx(j)));
  return total;
}

Value KernelBuilder::exp2(Value x, bool forBf16) {
  if (scalefExp && width == 16)
    return exp2ByScalef(x, forBf16);
  Value low = splat(-127.0f);
  Value below =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, low);
  Value clamped = arith::SelectOp::create(b, loc, below, low, x);
  Value n = math::RoundEvenOp::create(b, loc, clamped);
  Value f = arith::SubFOp::create(b, loc, clamped, n);
  // Degree 6, fitted to 2^f on [-1/2, 1/2] for the least maximum relative
  // error (2.6e-9), highest first (Horner).
  static const double coeffs[] = {1.53458117616986e-04,
                                  1.339993142181303e-03,
                                  9.618488959780236e-03,
                                  5.550328776467259e-02,
                                  2.402264689059286e-01,
                                  6.931472057374933e-01,
                                  1.0};
  // Degree 4 (2.9e-6 evaluated in f32), its constant term held at 1 like
  // degree 6's (see below; the unconstrained fit's 2.7e-6 had 0.99999926):
  // for probabilities that weigh bf16 values (rounded to bf16, relative
  // error up to 2^-9, before P.V on the dot products); their f32 row sum
  // still gives an lse within f32's bound.
  static const double coeffsBf16[] = {
      9.58281842162478e-03, 5.590637028830729e-02, 2.402409886628741e-01,
      6.931241998313427e-01, 1.0};
  Value p = horner(
      forBf16 ? ArrayRef<double>(coeffsBf16) : ArrayRef<double>(coeffs), f);
  auto intType = VectorType::get({width}, b.getI32Type());
  Value ni = arith::FPToSIOp::create(b, loc, intType, n);
  Value nBits = arith::ShLIOp::create(
      b, loc, ni,
      arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(intType, b.getI32IntegerAttr(23))));
  // p * 2^n as n added to p's exponent field: one integer add instead of a
  // bias add and a multiply on the FMA ports (hq=8 L=2048 d=64 f32, causal,
  // one thread: 0.993 of the time). The same bits wherever the product is a
  // normal float. n = -127 comes only from clamped x in [-127, -126.5),
  // where f >= 0 and p >= p(0) = 1 (both fits end in exactly 1 and have
  // positive coefficients): the exponent field goes to 0, not below. A
  // hidden key (x = -inf, clamped to -127, f = 0, p = 1) still gives exactly
  // 0. Where the field ends at 0 with p's mantissa left (n = -127 and f > 0,
  // or n = -126 and p < 1) the result is a subnormal that misses p's leading
  // bit, below 2^-126 as the true value is (where the product gave 0 or the
  // exact subnormal). NaN stays NaN.
  Value pBits = arith::BitcastOp::create(b, loc, intType, p);
  return arith::BitcastOp::create(b, loc, vecType,
                                  arith::AddIOp::create(b, loc, pBits, nBits));
}

Value KernelBuilder::maxMoves(Value m, Value blockMax, float slack) {
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT, blockMax,
                               arith::AddFOp::create(b, loc, m, splat(slack)));
}

Value KernelBuilder::rescaleFactor(Value mOld, Value mNew) {
  Value alpha = exp2(arith::SubFOp::create(b, loc, mOld, mNew));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mOld,
                            splat(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, empty, splat(0.0f), alpha);
}

Value KernelBuilder::horner(ArrayRef<double> poly, Value f) {
  Value p = splat(static_cast<float>(poly[0]));
  for (double coeff : poly.drop_front())
    p = vector::FMAOp::create(b, loc, p, f, splat(static_cast<float>(coeff)));
  return p;
}

Value KernelBuilder::exp2ByScalef(Value x, bool forBf16) {
  // f = x - floor(x) in [0, 1] by one vreduceps (AVX512DQ; imm 1: round
  // down, no fraction bits kept), every lane, the current rounding mode.
  // It is 0 for +-inf and NaN for NaN.
  auto i32 = [&](int32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  Value allLanes = arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(-1));
  Value f = LLVM::CallIntrinsicOp::create(
                b, loc, vecType,
                b.getStringAttr("llvm.x86.avx512.mask.reduce.ps.512"),
                ValueRange{x, i32(1), x, allLanes, i32(4)})
                .getResult(0);
  // The fits of exp2 above moved to [0, 1]: sqrt(2) * p(f - 1/2), the same
  // relative error (the degree-6 one evaluates in f32 to 6.2e-8 at most,
  // against 7.9e-8 for the [-1/2, 1/2] form).
  static const double coeffs[] = {2.170225511901872e-04, 1.243968821589176e-03,
                                  9.67884091552095e-03,  5.548334205010633e-02,
                                  2.402298362505947e-01, 6.931469838439476e-01,
                                  1.000000001071952};
  // Degree 4 with its constant term held at 1, as on the other path, so
  // that a row's max key weighs exactly 1 (2.97e-6 evaluated in f32). The
  // unconstrained fit (2.68e-6) had p(0) = 1.0000026: a one-hot row's lse
  // came out 2.6e-6 rather than 0, which failed exp2-underflow-edge.test on
  // a Zen 4 (lse rel_l2 3.3e-5 against 1e-5).
  static const double coeffsBf16[] = {
      1.3426700891529919e-02, 5.224244753988136e-02, 2.4128021722640075e-01,
      6.930448433286881e-01, 1.0};
  Value p = horner(
      forBf16 ? ArrayRef<double>(coeffsBf16) : ArrayRef<double>(coeffs), f);
  // p * 2^floor(x): vscalefps floors its exponent operand itself, so x goes
  // in unrounded; -inf gives exactly 0, +inf gives +inf, NaN stays NaN and
  // no clamp is needed (below -149 the product rounds to 0). MLIR 22 passes
  // the operands to llvm.x86.avx512.mask.scalef.ps.512 in the order
  // written, and the intrinsic's are (a, b, passthru, k, rounding): so
  // `src` holds the value scaled and `a` the exponents.
  return x86vector::MaskScaleFOp::create(b, loc, vecType, /*src=*/p,
                                         /*a=*/x, /*b=*/p, allLanes, i32(4));
}

/// The accumulators of one register block: outBlock[c, rowOffsets[r]] (a
/// window of out at the block's first c and row; or zeros with fromZero),
/// times rowScale[rows[r]] when set.
static SmallVector<Value> loadAccumulators(KernelBuilder &kernel,
                                           const RegisterBlocking &blocking,
                                           Value outBlock,
                                           const ContractionExtras &extras,
                                           const RegisterBlock &block) {
  SmallVector<Value> acc, scale;
  if (extras.rowScale)
    for (int64_t r = 0; r < blocking.rowVecs; ++r)
      scale.push_back(kernel.load(extras.rowScale, {block.rows[r]}));
  for (Value c : block.cOffsets)
    for (int64_t r = 0; r < blocking.rowVecs; ++r) {
      Value x = extras.fromZero
                    ? kernel.splat(0.0f)
                    : kernel.load(outBlock, {c, block.rowOffsets[r]});
      if (extras.rowScale)
        x = arith::MulFOp::create(kernel.b, kernel.loc, x, scale[r]);
      acc.push_back(x);
    }
  return acc;
}

/// Stores a register block's accumulators back into its window of out and,
/// with rowMax set, folds them into rowMax[rows].
static void storeAccumulators(KernelBuilder &kernel,
                              const RegisterBlocking &blocking,
                              ArrayRef<Value> acc, Value outBlock,
                              const ContractionExtras &extras,
                              const RegisterBlock &block) {
  int64_t count = block.cOffsets.size();
  for (int64_t c = 0; c < count; ++c)
    for (int64_t r = 0; r < blocking.rowVecs; ++r)
      kernel.store(acc[c * blocking.rowVecs + r], outBlock,
                   {block.cOffsets[c], block.rowOffsets[r]});
  if (!extras.rowMax)
    return;
  for (int64_t r = 0; r < blocking.rowVecs; ++r) {
    Value blockMax = kernel.load(extras.rowMax, {block.rows[r]});
    if (extras.rowMaxScale != 1.0f) {
      // max(s * c) = max(s) * c for c > 0, exactly (one of the products).
      Value unscaled = acc[r];
      for (int64_t c = 1; c < count; ++c)
        unscaled = kernel.max(unscaled, acc[c * blocking.rowVecs + r]);
      blockMax = kernel.max(
          blockMax, arith::MulFOp::create(kernel.b, kernel.loc, unscaled,
                                          kernel.splat(extras.rowMaxScale)));
    } else {
      for (int64_t c = 0; c < count; ++c)
        blockMax = kernel.max(blockMax, acc[c * blocking.rowVecs + r]);
    }
    // With one key column, a select of the loaded row max.
    kernel.storeBlended(blockMax, extras.rowMax, {block.rows[r]});
  }
}

void mlir::attn::detail::emitRegisterBlocks(
    KernelBuilder &kernel, const RegisterBlocking &blocking, Value out,
    const ContractionExtras &extras,
    function_ref<SmallVector<Value>(const RegisterBlock &, SmallVector<Value>)>
        body,
    function_ref<Value(const RegisterBlock &)> needed) {
  int64_t numC = memrefOf(out).getDimSize(0), bq = memrefOf(out).getDimSize(1);
  int64_t rowStep = blocking.width * blocking.rowVecs;
  kernel.blocked(numC, blocking.regBlock, [&](Value c0, int64_t count) {
    kernel.loop(0, bq, rowStep, [&](Value i0) {
      RegisterBlock block;
      block.c0 = c0;
      block.i0 = i0;
      for (int64_t r = 0; r < blocking.rowVecs; ++r) {
        block.rows.push_back(kernel.add(i0, r * blocking.width));
        block.rowOffsets.push_back(kernel.idx(r * blocking.width));
      }
      for (int64_t c = 0; c < count; ++c)
        block.cOffsets.push_back(kernel.idx(c));
      Value outBlock = kernel.window(out, {c0, i0}, {count, rowStep});
      auto run = [&] {
        SmallVector<Value> red = body(
            block, loadAccumulators(kernel, blocking, outBlock, extras, block));
        storeAccumulators(kernel, blocking, red, outBlock, extras, block);
      };
      if (!needed) {
        run();
        return;
      }
      auto ifOp = scf::IfOp::create(kernel.b, kernel.loc, needed(block),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(kernel.b);
      kernel.b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      run();
    });
  });
}

void mlir::attn::detail::emitContraction(KernelBuilder &kernel,
                                         const RegisterBlocking &blocking,
                                         Value a, Value bMat, bool bIsTC,
                                         Value out,
                                         const ContractionExtras &extras) {
  int64_t numT = memrefOf(a).getDimSize(0);
  int64_t numB = memrefOf(bMat).getDimSize(bIsTC ? 0 : 1);
  int64_t rowStep = blocking.width * blocking.rowVecs;
  ContractionPrefetch prefetch(kernel, blocking, out, numT, extras);
  emitRegisterBlocks(
      kernel, blocking, out, extras,
      [&](const RegisterBlock &block, SmallVector<Value> acc) {
        // The block's rows of A and its columns of B ([t, c] or [c, t]),
        // indexed with the block's constant offsets.
        Value zero = kernel.idx(0);
        int64_t count = block.cOffsets.size();
        Value aBlock = kernel.window(a, {zero, block.i0}, {numT, rowStep});
        Value bBlock =
            bIsTC ? kernel.window(bMat, {zero, block.c0}, {numB, count})
                  : kernel.window(bMat, {block.c0, zero}, {count, numB});
        SmallVector<Value> firstLines = prefetch.firstLines(block);
        int64_t spread = prefetch.spread();
        // P.V on a band's edge: no key before the first one a row of the
        // block sees (from a multiple of the spread), none past the last.
        auto [tStart, tEnd] =
            bIsTC && (extras.hiddenAbove || extras.hiddenBelow)
                ? edgeReductionRange(kernel, block, rowStep, extras, numT, 1,
                                     spread)
                : std::pair<Value, Value>(kernel.idx(0), kernel.idx(numT));
        auto step = [&](Value t, ValueRange carried, bool withPrefetch) {
          SmallVector<Value> rowVec, next;
          if (withPrefetch)
            prefetch.emit(firstLines, t);
          for (Value col : block.rowOffsets)
            rowVec.push_back(kernel.load(aBlock, {t, col}));
          for (int64_t c = 0; c < count; ++c) {
            Value cOff = block.cOffsets[c];
            Value bc = bIsTC ? kernel.broadcast(bBlock, {t, cOff})
                             : kernel.broadcast(bBlock, {cOff, t});
            for (int64_t r = 0; r < blocking.rowVecs; ++r)
              next.push_back(
                  vector::FMAOp::create(kernel.b, kernel.loc, bc, rowVec[r],
                                        carried[c * blocking.rowVecs + r]));
          }
          return next;
        };
        // spread steps per iteration, the first of them prefetching (with a
        // spread of 1, every step), from tStart (a multiple of the spread);
        // a dynamic end (P.V on the diagonal) finishes step by step,
        // without. tEnd = min(numT, i0 + rowStep + h) is a multiple of the
        // spread already when rowStep and h are (numT is, i0 one of
        // rowStep); on the lower edge it is numT. The tiling tags a block
        // with one edge only, so tStart <= tMain.
        Value tMain = tEnd;
        if (bIsTC && extras.hiddenAbove &&
            (rowStep % spread != 0 || *extras.hiddenAbove % spread != 0))
          tMain = arith::MulIOp::create(
              kernel.b, kernel.loc,
              arith::DivUIOp::create(kernel.b, kernel.loc, tEnd,
                                     kernel.idx(spread)),
              kernel.idx(spread));
        SmallVector<Value> red = kernel.loopCarrying(
            tStart, tMain, spread, acc, [&](Value t, ValueRange carried) {
              SmallVector<Value> cur(carried);
              for (int64_t k = 0; k < spread; ++k)
                cur = step(kernel.add(t, k), cur, /*withPrefetch=*/k == 0);
              return cur;
            });
        if (tMain == tEnd)
          return red;
        return kernel.loopCarrying(
            tMain, tEnd, 1, red, [&](Value t, ValueRange carried) {
              return step(t, carried, /*withPrefetch=*/false);
            });
      },
      // Scores on a band's edge: only the blocks with a key a row sees.
      !bIsTC && (extras.hiddenAbove || extras.hiddenBelow)
          ? function_ref<Value(const RegisterBlock &)>(
                [&](const RegisterBlock &block) -> Value {
                  return edgeScoresNeeded(kernel, block, rowStep, extras);
                })
          : function_ref<Value(const RegisterBlock &)>());
}

Value mlir::attn::detail::edgeScoresNeeded(KernelBuilder &kernel,
                                           const RegisterBlock &block,
                                           int64_t rowStep,
                                           const ContractionExtras &extras) {
  OpBuilder &b = kernel.b;
  Value needed;
  auto both = [&](Value cond) {
    needed =
        needed ? arith::AndIOp::create(b, kernel.loc, needed, cond).getResult()
               : cond;
  };
  if (extras.hiddenAbove)
    both(arith::CmpIOp::create(
        b, kernel.loc, arith::CmpIPredicate::sle, block.c0,
        kernel.add(block.i0, rowStep - 1 + *extras.hiddenAbove)));
  if (extras.hiddenBelow) {
    int64_t count = block.cOffsets.size();
    both(arith::CmpIOp::create(
        b, kernel.loc, arith::CmpIPredicate::sle, block.i0,
        kernel.add(block.c0, count - 1 + *extras.hiddenBelow)));
  }
  return needed;
}

std::pair<Value, Value> mlir::attn::detail::edgeReductionRange(
    KernelBuilder &kernel, const RegisterBlock &block, int64_t rowStep,
    const ContractionExtras &extras, int64_t numT, int64_t keysPerStep,
    int64_t align) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  // floor(keys / n), keys >= 0, as a multiple of `multiple` when set.
  auto steps = [&](Value keys, int64_t n, int64_t multiple) -> Value {
    int64_t unit = n * multiple;
    if (unit == 1)
      return keys;
    Value q = arith::DivUIOp::create(b, loc, keys, kernel.idx(unit));
    return multiple == 1
               ? q
               : arith::MulIOp::create(b, loc, q, kernel.idx(multiple))
                     .getResult();
  };
  Value start = kernel.idx(0), end = kernel.idx(numT);
  if (extras.hiddenBelow) {
    // i0 - h, at least 0.
    Value first = arith::MaxSIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, block.i0,
                              kernel.idx(*extras.hiddenBelow)),
        kernel.idx(0));
    start = steps(first, keysPerStep, align);
  }
  if (extras.hiddenAbove) {
    // h >= 0 here: at least one key, one step; ceil of the keys in steps.
    Value keys = kernel.add(block.i0, rowStep + *extras.hiddenAbove);
    end = arith::MinSIOp::create(
        b, loc, end, steps(kernel.add(keys, keysPerStep - 1), keysPerStep, 1));
  }
  return {start, end};
}

void mlir::attn::detail::emitKeyReduction(KernelBuilder &kernel, Value st,
                                          Value rowStat, bool isMax) {
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

void mlir::attn::detail::emitRowMaxUpdate(KernelBuilder &kernel, Value blockMax,
                                          Value m, Value alpha, float slack) {
  int64_t bq = memrefOf(m).getDimSize(0);
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value mOld = kernel.load(m, {i0});
    Value rowMax = kernel.load(blockMax, {i0});
    Value mNew = kernel.max(mOld, rowMax);
    // Kept where the block's max is within the slack.
    if (slack > 0.0f)
      mNew = arith::SelectOp::create(kernel.b, kernel.loc,
                                     kernel.maxMoves(mOld, rowMax, slack), mNew,
                                     mOld);
    Value alphaVec = kernel.rescaleFactor(mOld, mNew);
    // mNew is a select of mOld, loaded from m.
    kernel.storeBlended(mNew, m, {i0});
    kernel.store(alphaVec, alpha, {i0});
  });
}

void mlir::attn::detail::emitProbabilities(KernelBuilder &kernel, Value m,
                                           Value st, Value rowSum, bool forBf16,
                                           float scoreScale, Value pairs,
                                           Value pairsLo) {
  int64_t bk = memrefOf(st).getDimSize(0), bq = memrefOf(st).getDimSize(1);
  float negInf = -std::numeric_limits<float>::infinity();
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    Value ninf = kernel.splat(negInf), zero = kernel.splat(0.0f);
    // x = s - m = -inf (a hidden key) gives exactly 0 through exp2's clamp;
    // NaN gives NaN. A row that has seen no visible key yet has m = -inf
    // (and only hidden scores, -inf): it subtracts 0 instead, so that its
    // x is -inf too, not NaN; one select per row vector, none per key.
    Value mv = kernel.load(m, {i0});
    Value empty = arith::CmpFOp::create(kernel.b, kernel.loc,
                                        arith::CmpFPredicate::OEQ, mv, ninf);
    mv = arith::SelectOp::create(kernel.b, kernel.loc, empty, zero, mv);
    Value scale = scoreScale != 1.0f ? kernel.splat(scoreScale) : Value();
    Value negM =
        scale ? arith::NegFOp::create(kernel.b, kernel.loc, mv) : Value();
    // One probability: loaded, exponentiated, returned.
    auto exp = [&](Value j) {
      Value s = kernel.load(st, {j, i0});
      Value x =
          scale
              ? vector::FMAOp::create(kernel.b, kernel.loc, s, scale, negM)
                    .getResult()
              : arith::SubFOp::create(kernel.b, kernel.loc, s, mv).getResult();
      return kernel.exp2(x, forBf16);
    };
    // Stored in place, or with `pairs` two keys at a time into their pair
    // (one element of the row sum: the two keys' sum).
    std::function<Value(Value)> prob = [&](Value j) {
      Value p = exp(j);
      kernel.store(p, st, {j, i0});
      return p;
    };
    int64_t elements = bk;
    Value pairCol;
    if (pairs) {
      elements = bk / 2;
      pairCol = arith::MulIOp::create(kernel.b, kernel.loc, i0, kernel.idx(2));
      prob = [&](Value t) {
        Value j = arith::MulIOp::create(kernel.b, kernel.loc, t, kernel.idx(2));
        Value p0 = exp(j), p1 = exp(kernel.add(j, 1));
        if (pairsLo) {
          auto [hi0, lo0] = emitSplitF32(kernel, p0);
          auto [hi1, lo1] = emitSplitF32(kernel, p1);
          vector::StoreOp::create(
              kernel.b, kernel.loc,
              vector::InterleaveOp::create(kernel.b, kernel.loc, hi0, hi1),
              pairs, ValueRange{t, pairCol});
          vector::StoreOp::create(
              kernel.b, kernel.loc,
              vector::InterleaveOp::create(kernel.b, kernel.loc, lo0, lo1),
              pairsLo, ValueRange{t, pairCol});
        } else {
          vector::StoreOp::create(
              kernel.b, kernel.loc,
              emitPairF32(kernel, p0, p1, memrefOf(pairs).getElementType()),
              pairs, ValueRange{t, pairCol});
        }
        return arith::AddFOp::create(kernel.b, kernel.loc, p0, p1).getResult();
      };
    }
    if (!rowSum) {
      kernel.loop(0, elements, 1, [&](Value j) { prob(j); });
      return;
    }
    // Two sum chains where exp2's degree-6 form runs on 16 registers (8
    // lanes, no vscalefps): with four, its seven coefficients, m and the
    // chains do not fit, and LLVM spills the chains (a store and a reload
    // on every key's dependence path) and reloads the coefficients on every
    // iteration. llvm-mca -mcpu=znver3 on the loop LLVM builds for d=64:
    // 36 cycles per 4 keys with four chains, 22 with two.
    int64_t chains = kernel.width == 8 && !forBf16 ? 2 : 4;
    Value total = kernel.reduceChained(
        elements, kernel.load(rowSum, {i0}), zero, prob,
        [&](Value x, Value y) -> Value {
          return arith::AddFOp::create(kernel.b, kernel.loc, x, y);
        },
        chains);
    kernel.store(total, rowSum, {i0});
  });
}

void mlir::attn::detail::emitRescale(KernelBuilder &kernel, Value alpha,
                                     Value x) {
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

Value mlir::attn::detail::emitBodyOnVectors(KernelBuilder &kernel, Block &body,
                                            IRMapping &map) {
  OpBuilder &b = kernel.b;
  auto vectorOf = [&](Type t) { return VectorType::get({kernel.width}, t); };
  for (Operation &inner : body.without_terminator()) {
    if (inner.getNumResults() == 1 && map.contains(inner.getResult(0)))
      continue;
    SmallVector<Value> operands;
    bool anyVector = false;
    for (Value v : inner.getOperands()) {
      operands.push_back(map.lookupOrDefault(v));
      anyVector |= isa<VectorType>(operands.back().getType());
    }
    if (!anyVector) {
      b.clone(inner, map);
      continue;
    }
    for (Value &v : operands)
      if (!isa<VectorType>(v.getType()))
        v = vector::BroadcastOp::create(b, kernel.loc, vectorOf(v.getType()),
                                        v);
    SmallVector<Type> resultTypes;
    for (Type t : inner.getResultTypes())
      resultTypes.push_back(vectorOf(t));
    OperationState state(inner.getLoc(), inner.getName(), operands, resultTypes,
                         inner.getAttrs());
    map.map(inner.getResults(), b.create(state)->getResults());
  }
  Value result = map.lookupOrDefault(body.getTerminator()->getOperand(0));
  if (!isa<VectorType>(result.getType()))
    result = vector::BroadcastOp::create(b, kernel.loc,
                                         vectorOf(result.getType()), result);
  return result;
}

void KernelBuilder::storeBlended(Value v, Value mem, ValueRange indices) {
  if (!blendStores)
    return store(v, mem, indices);
  // "v": any vector register (ymm or zmm); "0": the same one in and out.
  Value opaque =
      LLVM::InlineAsmOp::create(b, loc, v.getType(), ValueRange{v}, "", "=v,0",
                                /*has_side_effects=*/false,
                                /*is_align_stack=*/false,
                                LLVM::tailcallkind::TailCallKind::None,
                                LLVM::AsmDialectAttr(), ArrayAttr())
          .getResult(0);
  store(opaque, mem, indices);
}

bool mlir::attn::detail::emitElementwise(KernelBuilder &kernel,
                                         linalg::GenericOp op) {
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
      for (auto index : body.getOps<linalg::IndexOp>()) {
        Value v = j;
        if (index.getDim() == 1) {
          Value step = vector::StepOp::create(
              kernel.b, kernel.loc, vectorOf(kernel.b.getIndexType()));
          Value base = vector::BroadcastOp::create(
              kernel.b, kernel.loc, vectorOf(kernel.b.getIndexType()), i0);
          v = arith::AddIOp::create(kernel.b, kernel.loc, base, step);
        }
        map.map(index.getResult(), v);
      }
      // The element mask is a select of the loaded scores (softcap and
      // ALiBi, also elementwise, are not; the asm costs them nothing).
      Value result = emitBodyOnVectors(kernel, body, map);
      kernel.storeBlended(result, out, {j, i0});
    });
  });
  return true;
}
