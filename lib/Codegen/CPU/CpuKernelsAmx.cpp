//===- CpuKernelsAmx.cpp - the bf16 and f16 products on AMX tiles ---------===//
//
// Part of the attn project.
//
// One tile product serves both ops: out [M, N] (+)= A [M, K] . B, with A's
// rows contiguous along K and B the [K / 2, 2 * N] pairs layout of
// CpuKernelsBf16.h's packers. Blocks of up to 2 x 2 C tiles (16 x 16 f32
// each) take 2 A and 2 B tiles per 32 reduction elements: the 8 tile
// registers. The reduction is unrolled (amx.tile values are not carried
// through scf.for: LLVM's AMX passes configure the tiles from constant
// shapes), so each C tile lives from its zero (or load) to its store inside
// one block, and LLVM's tile configuration (ldtilecfg) happens once per
// function. The tiles are bf16 (tdpbf16ps) or, on AMX-FP16, f16
// (tdpfp16ps); split-f16's f16 inputs are sums of two bf16 parts, three
// products of parts per chunk.
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsAmx.h"
#include "CpuKernelsBf16.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn::detail;

namespace {

/// Rows of every tile, and the f32 columns of a C tile.
constexpr int64_t kTileRows = 16;
/// bf16 elements of the reduction per A tile row (64 bytes); a B tile holds
/// half as many rows of pairs.
constexpr int64_t kChunk = 32;

bool isBf16(Value v) { return memrefOf(v).getElementType().isBF16(); }

/// bf16, or with `fp16` (AMX-FP16's tdpfp16ps) f16 too: what a tile
/// product takes as it is.
bool isTileType(Value v, bool fp16) {
  Type elt = memrefOf(v).getElementType();
  return elt.isBF16() || (fp16 && elt.isF16());
}

amx::TileType tileOf(OpBuilder &b, int64_t rows, int64_t cols, Type elt) {
  return amx::TileType::get({rows, cols}, elt);
}

/// One term of a tile product: a [M, K] and pairs [K / 2, 2 * N], both bf16
/// or both f16.
struct TileTerm {
  Value a, pairs;
};

/// out[m, n] (+)= sum over `terms` of sum_k a[m, k] * pairs[k / 2, 2 * n +
/// k % 2] for out [M, N] f32 (M, N, K multiples of 16): from zero with
/// `fromZero`, else onto what out holds. Every term loads its own A and B
/// tiles for each chunk (so that 2 x 2 C tiles and one term's 2 + 2 fill
/// the 8 registers).
void emitTileProduct(KernelBuilder &kernel, ArrayRef<TileTerm> terms, Value out,
                     bool fromZero) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  int64_t m = memrefOf(out).getDimSize(0), n = memrefOf(out).getDimSize(1);
  int64_t k = memrefOf(terms.front().a).getDimSize(1);
  // bf16 (tdpbf16ps) or f16 (tdpfp16ps): every term's operands are one type.
  Type elt = memrefOf(terms.front().a).getElementType();
  amx::TileType cType = tileOf(b, kTileRows, kTileRows, b.getF32Type());
  // Full chunks of 32, then one of 16 if K is an odd multiple of 16.
  SmallVector<int64_t> chunks;
  for (int64_t k0 = 0; k0 < k; k0 += kChunk)
    chunks.push_back(std::min(kChunk, k - k0));
  // A tile register has one shape for the whole function (the tile
  // configuration): 2 x 2 C tiles and the 2 + 2 full A and B tiles fill
  // all 8, so a half chunk's two other shapes need a block of 1 x 2 (2 C,
  // 1 + 2 full, 1 + 2 half tiles).
  bool halfChunk = k % kChunk != 0;
  int64_t mStep =
      m % (2 * kTileRows) == 0 && !halfChunk ? 2 * kTileRows : kTileRows;
  int64_t nStep = n % (2 * kTileRows) == 0 ? 2 * kTileRows : kTileRows;
  kernel.loop(0, m, mStep, [&](Value m0) {
    kernel.loop(0, n, nStep, [&](Value n0) {
      SmallVector<Value> rowsM, colsN, pairCols;
      for (int64_t r = 0; r < mStep; r += kTileRows)
        rowsM.push_back(kernel.add(m0, r));
      for (int64_t c = 0; c < nStep; c += kTileRows) {
        colsN.push_back(kernel.add(n0, c));
        pairCols.push_back(
            arith::MulIOp::create(b, loc, colsN.back(), kernel.idx(2)));
      }
      SmallVector<Value> acc;
      for (Value row : rowsM)
        for (Value col : colsN)
          acc.push_back(fromZero
                            ? amx::TileZeroOp::create(b, loc, cType).getResult()
                            : amx::TileLoadOp::create(b, loc, cType, out,
                                                      ValueRange{row, col})
                                  .getResult());
      int64_t k0 = 0;
      for (int64_t width : chunks) {
        amx::TileType aType = tileOf(b, kTileRows, width, elt);
        amx::TileType bType = tileOf(b, width / 2, 2 * kTileRows, elt);
        for (const TileTerm &term : terms) {
          SmallVector<Value> aTiles, bTiles;
          for (Value row : rowsM)
            aTiles.push_back(amx::TileLoadOp::create(
                b, loc, aType, term.a, ValueRange{row, kernel.idx(k0)}));
          for (Value col : pairCols)
            bTiles.push_back(
                amx::TileLoadOp::create(b, loc, bType, term.pairs,
                                        ValueRange{kernel.idx(k0 / 2), col}));
          for (size_t r = 0; r < aTiles.size(); ++r)
            for (size_t c = 0; c < bTiles.size(); ++c) {
              Value &x = acc[r * bTiles.size() + c];
              x = amx::TileMulFOp::create(b, loc, cType, aTiles[r], bTiles[c],
                                          x);
            }
        }
        k0 += width;
      }
      for (size_t r = 0; r < rowsM.size(); ++r)
        for (size_t c = 0; c < colsN.size(); ++c)
          amx::TileStoreOp::create(b, loc, out, ValueRange{rowsM[r], colsN[c]},
                                   acc[r * colsN.size() + c]);
    });
  });
}

/// After the tile product of the scores: St *= scale unless `unscaled`,
/// and rowMax[i] = max(rowMax[i], scale * max_j St[j, i]) if rowMax is set.
void finishScores(KernelBuilder &kernel, Value st, float scale, bool unscaled,
                  Value rowMax) {
  if (unscaled && !rowMax)
    return;
  int64_t bk = memrefOf(st).getDimSize(0), bq = memrefOf(st).getDimSize(1);
  Value factor = kernel.splat(scale);
  Value lowest = kernel.splat(-std::numeric_limits<float>::infinity());
  kernel.loop(0, bq, kernel.width, [&](Value i0) {
    auto element = [&](Value j) -> Value {
      Value s = kernel.load(st, {j, i0});
      if (unscaled)
        return s;
      s = arith::MulFOp::create(kernel.b, kernel.loc, s, factor);
      kernel.store(s, st, {j, i0});
      return s;
    };
    if (!rowMax) {
      kernel.loop(0, bk, 1, [&](Value j) { element(j); });
      return;
    }
    Value blockMax = kernel.reduceChained(
        bk, lowest, lowest, element,
        [&](Value x, Value y) { return kernel.max(x, y); });
    // max(s * c) = max(s) * c for c > 0, exactly (one of the products).
    if (unscaled)
      blockMax = arith::MulFOp::create(kernel.b, kernel.loc, blockMax, factor);
    kernel.store(kernel.max(kernel.load(rowMax, {i0}), blockMax), rowMax, {i0});
  });
}

bool multipleOfTile(int64_t size) { return size > 0 && size % kTileRows == 0; }

} // namespace

void mlir::attn::detail::emitTransposeBf16(KernelBuilder &kernel, Value src,
                                           Value dst) {
  int64_t rows = memrefOf(src).getDimSize(0),
          cols = memrefOf(src).getDimSize(1);
  VectorType rowType =
      VectorType::get({kernel.width}, memrefOf(src).getElementType());
  kernel.loop(0, rows, kernel.width, [&](Value r0) {
    kernel.loop(0, cols, kernel.width, [&](Value c0) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < kernel.width; ++r)
        block.push_back(
            vector::LoadOp::create(kernel.b, kernel.loc, rowType, src,
                                   ValueRange{kernel.add(r0, r), c0}));
      SmallVector<Value> transposed = transposeSquare(kernel, block);
      for (int64_t c = 0; c < kernel.width; ++c)
        vector::StoreOp::create(kernel.b, kernel.loc, transposed[c], dst,
                                ValueRange{kernel.add(c0, c), r0});
    });
  });
}

namespace {

/// x *= alpha (emitRescale) inside an scf.if that skips it when every
/// alpha[i] is 1.
void emitRescaleUnlessOne(KernelBuilder &kernel, Value alpha, Value x) {
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  int64_t bq = memrefOf(alpha).getDimSize(0);
  Value one = kernel.splat(1.0f);
  // Any lane not 1 (NaN included: une is true for it).
  Value notOne;
  for (int64_t i0 = 0; i0 < bq; i0 += kernel.width) {
    Value differs =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                              kernel.load(alpha, {kernel.idx(i0)}), one);
    notOne = notOne ? arith::OrIOp::create(b, loc, notOne, differs).getResult()
                    : differs;
  }
  Value any =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, notOne);
  auto ifOp = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  emitRescale(kernel, alpha, x);
}

} // namespace

void mlir::attn::detail::emitSplitF16(KernelBuilder &kernel, Value src,
                                      Value dst, bool transpose) {
  int64_t rows = memrefOf(src).getDimSize(0),
          cols = memrefOf(src).getDimSize(1);
  MemRefType dstType = memrefOf(dst);
  auto part = [&](int64_t p) -> Value {
    OpBuilder &b = kernel.b;
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(p),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(dstType.getDimSize(0)),
                                       b.getIndexAttr(1),
                                       b.getIndexAttr(dstType.getDimSize(2))};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    auto type = memref::SubViewOp::inferRankReducedResultType(
        {dstType.getDimSize(0), dstType.getDimSize(2)}, dstType, offsets, sizes,
        strides);
    return memref::SubViewOp::create(b, kernel.loc, cast<MemRefType>(type), dst,
                                     offsets, sizes, strides);
  };
  Value hi = part(0), lo = part(1);
  VectorType rowType = VectorType::get({kernel.width}, kernel.b.getF16Type());
  auto store = [&](Value x, Value r, Value c) {
    auto [h, l] = emitSplitF32(
        kernel, arith::ExtFOp::create(kernel.b, kernel.loc, kernel.vecType, x));
    vector::StoreOp::create(kernel.b, kernel.loc, h, hi, ValueRange{r, c});
    vector::StoreOp::create(kernel.b, kernel.loc, l, lo, ValueRange{r, c});
  };
  kernel.loop(0, rows, kernel.width, [&](Value r0) {
    kernel.loop(0, cols, kernel.width, [&](Value c0) {
      SmallVector<Value> block;
      for (int64_t r = 0; r < kernel.width; ++r)
        block.push_back(
            vector::LoadOp::create(kernel.b, kernel.loc, rowType, src,
                                   ValueRange{kernel.add(r0, r), c0}));
      if (!transpose) {
        for (int64_t r = 0; r < kernel.width; ++r)
          store(block[r], kernel.add(r0, r), c0);
        return;
      }
      SmallVector<Value> transposed = transposeSquare(kernel, block);
      for (int64_t c = 0; c < kernel.width; ++c)
        store(transposed[c], kernel.add(c0, c), r0);
    });
  });
}

bool mlir::attn::detail::readsTransposedValues(linalg::GenericOp op) {
  // (c, i, t) -> (c, t): Vt [e, j]; V [j, e] reads (t, c).
  // (Vp's map, pair-values, has results that are not dims.)
  AffineMap map = op.getIndexingMapsArray()[1];
  return map.getNumResults() == 2 &&
         map.getResult(0) == getAffineDimExpr(0, op.getContext()) &&
         map.getResult(1) == getAffineDimExpr(2, op.getContext());
}

bool mlir::attn::detail::isSplitF16(linalg::GenericOp op) {
  return op.getNumDpsInputs() == 3;
}

bool mlir::attn::detail::amxTakesScores(linalg::GenericOp op, bool fp16) {
  // Two inputs (bf16 K, or f16 with fp16) or three (split-f16: bf16 hi and
  // lo parts of f16 K).
  if (op.getNumDpsInputs() > 3 ||
      !scoresTakePackedQuery(op, fp16 && !isSplitF16(op)) ||
      (isSplitF16(op) && !isBf16(op.getDpsInputs()[2])))
    return false;
  MemRefType qt = memrefOf(op.getDpsInputs()[0]);
  MemRefType st = memrefOf(op.getDpsInits()[0]);
  return multipleOfTile(qt.getDimSize(0)) && multipleOfTile(st.getDimSize(0)) &&
         multipleOfTile(st.getDimSize(1));
}

bool mlir::attn::detail::amxTakesPV(linalg::GenericOp op, bool fp16) {
  Value pt = op.getDpsInputs()[0], v = op.getDpsInputs()[1];
  MemRefType acc = memrefOf(op.getDpsInits()[0]);
  int64_t dvDim = readsTransposedValues(op) ? 0 : 1;
  // Split parts only come transposed (split-f16 implies transpose-values);
  // V in key pairs is the bf16 dot products' (pair-values).
  if (op.getNumDpsInputs() > 3 || readsPairedValues(op) ||
      (isSplitF16(op) &&
       (!readsTransposedValues(op) || !isBf16(op.getDpsInputs()[2]))))
    return false;
  return isTileType(v, fp16 && !isSplitF16(op)) &&
         memrefOf(pt).getElementType().isF32() &&
         memrefOf(v).getDimSize(dvDim) == acc.getDimSize(0) &&
         multipleOfTile(memrefOf(pt).getDimSize(0)) &&
         multipleOfTile(acc.getDimSize(0)) &&
         multipleOfTile(acc.getDimSize(1)) &&
         op->getParentOfType<scf::ForallOp>();
}

void mlir::attn::detail::emitScoresAmx(KernelBuilder &kernel,
                                       linalg::GenericOp op, Value rowMax,
                                       bool unscaled, bool fromZero) {
  auto scale = op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
  bool split = isSplitF16(op);
  auto [qHi, qLo] = emitQueryPairs(kernel, op, split);
  Value st = op.getDpsInits()[0];
  Value kHi = op.getDpsInputs()[1];
  SmallVector<TileTerm> terms = {{kHi, qHi}};
  if (split) {
    // K Q = Kh Qh + Kh Ql + Kl Qh, to 2^-17 (Kl Ql, below 2^-18, left out).
    terms.push_back({kHi, qLo});
    terms.push_back({op.getDpsInputs()[2], qHi});
  }
  emitTileProduct(kernel, terms, st, fromZero);
  finishScores(kernel, st, static_cast<float>(scale.getValueAsDouble()),
               unscaled, rowMax);
}

void mlir::attn::detail::emitPVAmx(KernelBuilder &kernel, linalg::GenericOp op,
                                   Value rowScale, ProbPairs probPairs) {
  Value pt = op.getDpsInputs()[0], v = op.getDpsInputs()[1];
  Value acc = op.getDpsInits()[0];
  int64_t bk = memrefOf(pt).getDimSize(0), bq = memrefOf(pt).getDimSize(1);
  int64_t dv = memrefOf(acc).getDimSize(0);
  bool split = isSplitF16(op);
  if (rowScale)
    emitRescaleUnlessOne(kernel, rowScale, acc);
  if (!probPairs.hi) {
    // P in V's type: bf16, or f16 on AMX-FP16 tiles.
    probPairs.hi = bf16Scratch(op, bk / 2, 2 * bq,
                               split ? Type() : memrefOf(v).getElementType());
    if (split) {
      probPairs.lo = bf16Scratch(op, bk / 2, 2 * bq);
      emitPackRowPairsF32Split(kernel, pt, probPairs.hi, probPairs.lo,
                               std::nullopt);
    } else {
      emitPackRowPairsF32(kernel, pt, probPairs.hi, std::nullopt);
    }
  }
  // V is transposed already (transpose-values), or here, once per key block
  // of every query block.
  Value vt = v;
  if (!readsTransposedValues(op)) {
    vt = bf16Scratch(op, dv, bk, memrefOf(v).getElementType());
    emitTransposeBf16(kernel, v, vt);
  }
  SmallVector<TileTerm> terms = {{vt, probPairs.hi}};
  if (split) {
    // V P = Vh Ph + Vh Pl + Vl Ph.
    terms.push_back({vt, probPairs.lo});
    terms.push_back({op.getDpsInputs()[2], probPairs.hi});
  }
  emitTileProduct(kernel, terms, acc, /*fromZero=*/false);
}
