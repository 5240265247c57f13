//===- GpuFlashKernel.cpp - FlashAttention-2 on mma.sync tensor cores -----===//
//
// Part of the attn project.
//
// The body of the gpu.launch for f16/bf16: one CTA of block-q / 16 warps per
// block of query rows, 16 rows per warp (at Dv = 256, two warps per 16 rows,
// each accumulating half of the value columns: FlashConfig::dvSplit). Per
// thread, with lane = 4 g + t, the m16n8k16 fragments hold (PTX ISA,
// "mma.m16n8k16"):
//   A (16x16): rows g, g+8 x cols 2t, 2t+1 and 2t+8, 2t+9 (4 x 2 elements),
//   B (16x8):  rows 2t, 2t+1 and 2t+8, 2t+9 x col g (2 x 2),
//   C (16x8):  rows g, g+8 x cols 2t, 2t+1 (2 x 2 f32).
// Two neighbouring C fragments of S (keys 16u..16u+15) are exactly the A
// fragment of P for the k-step u of P.V, so P never leaves registers.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

namespace {

using Accum = MmaAccum;

/// Builds the kernel; holds the thread's coordinates and the buffers.
class GpuFlashBuilder : GpuIrBuilder {
public:
  GpuFlashBuilder(OpBuilder &b, const GpuSdpa &sdpa, const FlashConfig &cfg,
                  gpu::LaunchOp launch)
      : GpuIrBuilder(b, sdpa.loc), sdpa(sdpa), cfg(cfg), launch(launch),
        foldScale(cfg.foldScale && sdpa.scaleLog2E > 0 &&
                  !sdpa.modifiesScores() && (!sdpa.mask || sdpa.boolMask)) {}

  void build();

private:
  Value addConst(Value x, int64_t c) { return c ? add(x, idx(c)) : x; }

  void copyRows(Value dst, std::optional<Value> slot, Value src, Value head,
                Value firstRow, Value rowLimit, int64_t rows, int64_t cols);
  void loadKeyValueTile(Value tile, Value slot);
  void commitGroup() { NVVM::CpAsyncCommitGroupOp::create(b, loc); }
  void waitGroups(int32_t pending) {
    NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
  }

  Value swizzledColumn(Value row, Value col, int64_t cols);
  Value ldmatrix(Value buffer, std::optional<Value> slot, Value row, Value col,
                 int64_t cols, int64_t tiles, bool transpose);
  Accum mma(Value a, Value bFrag, const Accum &c);
  Value packA(ArrayRef<Value> rowPairs);

  Value quadReduce(Value x, bool isMax);
  Value rowOf(int64_t r) {
    return add(add(qStart, warpRow), addConst(g, 8 * r));
  }
  Value keyOf(Value keyStart, int64_t n, int64_t c) {
    return add(keyStart, addConst(mul(t, idx(2)), 8 * n + c));
  }
  SmallVector<Value> modifyScores(ArrayRef<Value> scores, Value keyStart);
  SmallVector<Value> maskScores(ArrayRef<Value> scores, Value keyStart);
  SmallVector<Value> keyTileStep(Value tile, ValueRange state,
                                 const KeyTiles &tiles);
  void writeResults(ValueRange state);

  const GpuSdpa &sdpa;
  const FlashConfig &cfg;
  gpu::LaunchOp launch;

  Value batch, head, kvHead, qStart;
  Value lane, warpRow; // lane in the warp, first row of the warp's 16
  Value dvBase;        // the first value column the warp accumulates
  int64_t dvCols = 0;  // value columns per warp: Dv / dvSplit
  Value g, t;          // lane / 4, lane % 4
  Value laneMod8;      // lane % 8: the row of an 8x8 matrix it addresses
  Value qs, ks, vs;    // workgroup buffers
  GpuSequence seq;     // the key length, band diagonal and ALiBi slope
  SmallVector<Value> qFrags;
  bool needsMask = false; // some tile can need element masks
  /// Scores stay unscaled (the row max too); P = exp2(s * c - m * c) by
  /// one FMA per score, and the hidden scores (-inf) give 0 without a test
  /// of their own: see FlashConfig::foldScale.
  bool foldScale = false;
};

} // namespace

/// cp.async of rows [firstRow, firstRow + rows) x [0, cols) of
/// src[batch, head] into dst[slot], 16 bytes per copy; rows at or past
/// `rowLimit` are zero-filled and read nothing.
void GpuFlashBuilder::copyRows(Value dst, std::optional<Value> slot, Value src,
                               Value srcHead, Value firstRow, Value rowLimit,
                               int64_t rows, int64_t cols) {
  int64_t perCopy = 8; // 16 bytes of f16/bf16
  int64_t chunksPerRow = cols / perCopy;
  int64_t total = rows * chunksPerRow;
  Value tid = launch.getThreadIds().x;
  for (int64_t base = 0; base < total; base += cfg.threads()) {
    Value chunk = addConst(tid, base);
    auto emit = [&](OpBuilder &nb) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
      Value row = arith::DivUIOp::create(b, loc, chunk, idx(chunksPerRow));
      Value col = mul(arith::RemUIOp::create(b, loc, chunk, idx(chunksPerRow)),
                      idx(perCopy));
      Value srcRow = add(firstRow, row);
      Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             srcRow, rowLimit);
      Value srcElements =
          arith::SelectOp::create(b, loc, inBounds, idx(perCopy), idx(0));
      // An out-of-bounds row reads nothing (src-size 0); its address is
      // still kept inside the buffer's first row.
      srcRow = arith::SelectOp::create(b, loc, inBounds, srcRow, idx(0));
      SmallVector<Value> dstIndices;
      if (slot)
        dstIndices.push_back(*slot);
      dstIndices.append({row, swizzledColumn(row, col, cols)});
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
          dstIndices, src, ValueRange{batch, srcHead, srcRow, col},
          b.getIndexAttr(perCopy), srcElements, UnitAttr());
    };
    if (base + cfg.threads() <= total) {
      emit(b);
      continue;
    }
    Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, chunk,
                                       idx(total));
    auto ifLive = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    OpBuilder nb = OpBuilder::atBlockTerminator(ifLive.thenBlock());
    emit(nb);
  }
}

/// Starts the copies of key/value tile `tile` into buffer slot `slot`.
void GpuFlashBuilder::loadKeyValueTile(Value tile, Value slot) {
  Value first = mul(tile, idx(cfg.blockKV));
  copyRows(ks, slot, sdpa.key, kvHead, first, seq.keyLen, cfg.blockKV, sdpa.d);
  copyRows(vs, slot, sdpa.value, kvHead, first, seq.keyLen, cfg.blockKV,
           sdpa.dv);
}

/// Where column `col` (a multiple of 8) of row `row` (or of any row equal
/// to it mod 8) of a tile with `cols`
/// columns is stored: dense rows of 4, 8 or 16 chunks of 16 bytes swap
/// chunk c with c ^ (the row's line among 8 consecutive 128-byte lines), so
/// the 8 rows of one ldmatrix hit 8 distinct bank groups; padded rows
/// (sharedRowLength) are stored as they are. Every write (cp.async) and
/// read (ldmatrix) of a tile goes through here.
Value GpuFlashBuilder::swizzledColumn(Value row, Value col, int64_t cols) {
  int64_t chunks = cols / 8;
  if (sharedRowLength(cols, cfg) != cols)
    return col;
  // Rows of 4 chunks share a 128-byte line in pairs.
  int64_t rowsPerLine = chunks < 8 ? 8 / chunks : 1;
  Value line = arith::DivUIOp::create(b, loc, row, idx(rowsPerLine));
  Value key =
      arith::RemUIOp::create(b, loc, line, idx(std::min<int64_t>(chunks, 8)));
  Value chunk = arith::DivUIOp::create(b, loc, col, idx(8));
  return mul(arith::XOrIOp::create(b, loc, chunk, key), idx(8));
}

/// ldmatrix of `tiles` 8x8 matrices from buffer[slot], each lane giving the
/// (logical) row and column of one matrix row.
Value GpuFlashBuilder::ldmatrix(Value buffer, std::optional<Value> slot,
                                Value row, Value col, int64_t cols,
                                int64_t tiles, bool transpose) {
  auto type = VectorType::get(
      {tiles, 2}, cast<MemRefType>(buffer.getType()).getElementType());
  SmallVector<Value> indices;
  if (slot)
    indices.push_back(*slot);
  // Every row a lane addresses is lane % 8 plus a multiple of 8, and the
  // swizzle depends on the row mod 8 only: key it on lane % 8, so that the
  // addresses of one lane differ by constants (no per-load index math).
  indices.append({row, swizzledColumn(laneMod8, col, cols)});
  return nvgpu::LdMatrixOp::create(b, loc, type, buffer, indices, transpose,
                                   static_cast<uint32_t>(tiles));
}

Value gpu_kernels::packAFragment(OpBuilder &b, Location loc, Type elt,
                                 ArrayRef<Value> values) {
  auto type = VectorType::get({4, 2}, elt);
  Value frag = ub::PoisonOp::create(b, loc, type);
  for (int64_t k = 0; k < 8; ++k) {
    Value x = arith::TruncFOp::create(b, loc, elt, values[k]);
    frag = vector::InsertOp::create(b, loc, x, frag,
                                    ArrayRef<int64_t>{k / 2, k % 2});
  }
  return frag;
}

MmaAccum gpu_kernels::mmaSync(OpBuilder &b, Location loc, Type elt, Value a,
                              Value bFrag, const MmaAccum &c) {
  MmaAccum d;
  if (elt.isF16()) {
    auto cType = VectorType::get({2, 2}, b.getF32Type());
    Value cv = ub::PoisonOp::create(b, loc, cType);
    for (int64_t k = 0; k < 4; ++k)
      cv = vector::InsertOp::create(b, loc, c[k], cv,
                                    ArrayRef<int64_t>{k / 2, k % 2});
    Value r = nvgpu::MmaSyncOp::create(b, loc, a, bFrag, cv,
                                       ArrayRef<int64_t>{16, 8, 16});
    for (int64_t k = 0; k < 4; ++k)
      d[k] =
          vector::ExtractOp::create(b, loc, r, ArrayRef<int64_t>{k / 2, k % 2});
    return d;
  }
  // bf16: nvgpu.mma.sync cannot deduce the PTX types in MLIR 22; nvvm's op
  // takes the pairs as i32 with the multiplicand type spelled out.
  auto asI32 = [&](Value frag, int64_t rows) {
    SmallVector<Value> regs;
    for (int64_t r = 0; r < rows; ++r) {
      Value pair = vector::ExtractOp::create(b, loc, frag, r);
      regs.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair));
    }
    return regs;
  };
  Type f32 = b.getF32Type();
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, asI32(a, 4), asI32(bFrag, 2),
      ValueRange{c[0], c[1], c[2], c[3]}, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  for (int64_t k = 0; k < 4; ++k)
    d[k] = LLVM::ExtractValueOp::create(b, loc, op.getResult(), k);
  return d;
}

Value GpuFlashBuilder::packA(ArrayRef<Value> values) {
  return packAFragment(b, loc, sdpa.elt, values);
}

Accum GpuFlashBuilder::mma(Value a, Value bFrag, const Accum &c) {
  return mmaSync(b, loc, sdpa.elt, a, bFrag, c);
}

/// Reduces `x` over the four threads of a quad (lanes 4g .. 4g+3).
Value GpuFlashBuilder::quadReduce(Value x, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value other =
        gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, other).getResult()
              : arith::AddFOp::create(b, loc, x, other).getResult();
  }
  return x;
}

/// Softcap and ALiBi on every score of the tile (keys from `keyStart`), in
/// base-2 units, before any mask.
SmallVector<Value> GpuFlashBuilder::modifyScores(ArrayRef<Value> scores,
                                                 Value keyStart) {
  SmallVector<Value> out(scores);
  for (int64_t r = 0; r < 2; ++r) {
    // row + keyLen - Lq - key = base - (8 n + c): one conversion per row,
    // then f32 subtractions (exact: integers below 2^24).
    Value base;
    if (seq.alibiShift)
      base = indexToF32(b, loc,
                        arith::SubIOp::create(b, loc,
                                              add(rowOf(r), seq.alibiShift),
                                              add(keyStart, mul(t, idx(2)))));
    for (int64_t n = 0, e = cfg.blockKV / 8; n < e; ++n)
      for (int64_t c = 0; c < 2; ++c) {
        Value &s = out[4 * n + 2 * r + c];
        Value diagMinusKey =
            base ? arith::SubFOp::create(b, loc, base, f32(float(8 * n + c)))
                       .getResult()
                 : Value();
        s = modifyScore(b, sdpa, seq, s, diagMinusKey);
      }
  }
  return out;
}

/// Hides (-inf) the scores of keys past the key length, outside the causal
/// / window band or off the i1 mask, and adds the float mask. `scores`
/// holds the tile's C fragments, 4 values per 8 keys.
SmallVector<Value> GpuFlashBuilder::maskScores(ArrayRef<Value> scores,
                                               Value keyStart) {
  SmallVector<Value> out(scores);
  Value lastRow = arith::SubIOp::create(b, loc, sdpa.lq, idx(1));
  Value lastKey = arith::SubIOp::create(b, loc, sdpa.lk, idx(1));
  for (int64_t r = 0; r < 2; ++r) {
    Value row = rowOf(r);
    Value maskRow =
        sdpa.mask ? arith::MinUIOp::create(b, loc, row, lastRow) : Value();
    for (int64_t n = 0, e = cfg.blockKV / 8; n < e; ++n) {
      for (int64_t c = 0; c < 2; ++c) {
        Value &s = out[4 * n + 2 * r + c];
        s = maskScore(b, sdpa, seq, batch, head, s, row, maskRow,
                      keyOf(keyStart, n, c), lastKey);
      }
    }
  }
  return out;
}

/// One key/value tile: S = Q.K^T, masks, online softmax, O += P.V.
/// `state` is (m_g, m_g8, l_g, l_g8, acc...), acc in C fragments of 8
/// value columns each. Returns the new state.
SmallVector<Value> GpuFlashBuilder::keyTileStep(Value tile, ValueRange state,
                                                const KeyTiles &tiles) {
  // Tile+1 streams into the other slot while this one is computed; the
  // commit is unconditional (an empty group on the last tile) so that
  // "all but the newest group done" always means "this tile is here".
  Value slot = arith::RemUIOp::create(b, loc, tile, idx(2));
  Value next = addConst(tile, 1);
  Value hasNext =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next, tiles.end);
  auto ifNext = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifNext.thenBlock()->getTerminator());
    loadKeyValueTile(next, arith::RemUIOp::create(b, loc, next, idx(2)));
  }
  commitGroup();
  waitGroups(1);
  gpu::BarrierOp::create(b, loc);

  // S = Q.K^T in C fragments, 8 keys each, scaled to base 2.
  int64_t keyTiles = cfg.blockKV / 8;
  Value lane8 = arith::RemUIOp::create(b, loc, lane, idx(8));
  Value half8 =
      mul(arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, lane, idx(8)), idx(2)),
          idx(8)); // 8 * ((lane / 8) % 2)
  Value scale = f32(sdpa.scaleLog2E);
  SmallVector<Value> scores;
  for (int64_t n = 0; n < keyTiles; ++n) {
    Accum c = {f32(0), f32(0), f32(0), f32(0)};
    for (int64_t kk = 0, e = sdpa.d / 16; kk < e; ++kk) {
      Value kFrag = ldmatrix(ks, slot, addConst(lane8, 8 * n),
                             addConst(half8, 16 * kk), sdpa.d, 2,
                             /*transpose=*/false);
      c = mma(qFrags[kk], kFrag, c);
    }
    for (Value x : c)
      scores.push_back(
          foldScale ? x : arith::MulFOp::create(b, loc, x, scale).getResult());
  }

  // Softcap and ALiBi on every tile; element masks where a tile can need
  // them: every tile with a user mask, else only the tiles outside the
  // fully visible ones (band edges, key-length and Lk tails).
  Value keyStart = mul(tile, idx(cfg.blockKV));
  if (sdpa.modifiesScores())
    scores = modifyScores(scores, keyStart);
  if (sdpa.mask) {
    scores = maskScores(scores, keyStart);
  } else if (needsMask) {
    // Tiles below the first are never visited: the lower test only matters
    // with a window's left edge.
    Value masked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                         tile, tiles.unmaskedEnd);
    if (sdpa.band && sdpa.band->left)
      masked = arith::OrIOp::create(
          b, loc, masked,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, tile,
                                tiles.unmaskedBegin));
    SmallVector<Type> types(scores.size(), b.getF32Type());
    auto ifMasked = scf::IfOp::create(b, loc, types, masked,
                                      /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifMasked.thenBlock());
      scf::YieldOp::create(b, loc, maskScores(scores, keyStart));
      b.setInsertionPointToStart(ifMasked.elseBlock());
      scf::YieldOp::create(b, loc, scores);
    }
    scores = llvm::to_vector_of<Value>(ifMasked.getResults());
  }

  // Online softmax, per row r (g or g+8) of the thread: the tile's row max
  // over the quad, the rescale factor, P = exp2(S - m) and the thread's
  // part of the row sum (summed over the quad once, at the end).
  SmallVector<Value> updated(state.begin(), state.end());
  SmallVector<Value> probs(scores.size());
  Value alphas[2], unchanged[2];
  for (int64_t r = 0; r < 2; ++r) {
    Value tileMax = f32(kNegInf);
    for (int64_t n = 0; n < keyTiles; ++n)
      for (int64_t c = 0; c < 2; ++c)
        tileMax = arith::MaximumFOp::create(b, loc, tileMax,
                                            scores[4 * n + 2 * r + c]);
    tileMax = quadReduce(tileMax, /*isMax=*/true);
    // With foldScale the max is unscaled: alpha = exp2((m - m') c), and
    // P = exp2(fma(s, c, -m' c)), where -m' c is 0 while the row has no
    // visible key, so that a hidden score gives exp2(-inf) = 0.
    auto [mNew, alpha] =
        updateRowMax(b, loc, state[r], tileMax, foldScale ? scale : Value());
    Value negScaledMax;
    if (foldScale) {
      Value isEmpty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            mNew, f32(kNegInf));
      negScaledMax =
          select(isEmpty, f32(0),
                 arith::MulFOp::create(b, loc, mNew, f32(-sdpa.scaleLog2E)));
    }
    if (cfg.lazyRescale) {
      // An unchanged max rescales by exactly 1 (whatever exp2(0) rounds
      // to), so that the accumulators can skip it.
      unchanged[r] = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           mNew, state[r]);
      alpha = select(unchanged[r], f32(1), alpha);
    }
    alphas[r] = alpha;
    Value sum = arith::MulFOp::create(b, loc, state[2 + r], alpha);
    for (int64_t n = 0; n < keyTiles; ++n)
      for (int64_t c = 0; c < 2; ++c) {
        int64_t k = 4 * n + 2 * r + c;
        probs[k] =
            foldScale
                ? math::Exp2Op::create(b, loc,
                                       math::FmaOp::create(b, loc, scores[k],
                                                           scale, negScaledMax))
                      .getResult()
                : probability(b, loc, scores[k], mNew);
        sum = arith::AddFOp::create(b, loc, sum, probs[k]);
      }
    updated[r] = mNew;
    updated[2 + r] = sum;
    if (cfg.lazyRescale)
      continue;
    for (int64_t nd = 0, e = dvCols / 8; nd < e; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value &a = updated[4 + 4 * nd + 2 * r + c];
        a = arith::MulFOp::create(b, loc, a, alpha);
      }
  }
  if (cfg.lazyRescale) {
    // The accumulators times alpha only where a row max of the thread grew
    // (after the first tiles, rarely); the branch diverges per quad.
    Value grew = arith::XOrIOp::create(
        b, loc, arith::AndIOp::create(b, loc, unchanged[0], unchanged[1]),
        arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    SmallVector<Value> acc(updated.begin() + 4, updated.end());
    auto ifGrew = scf::IfOp::create(b, loc, ValueRange(acc).getTypes(), grew,
                                    /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifGrew.thenBlock());
      SmallVector<Value> scaled(acc);
      for (auto [i, a] : llvm::enumerate(scaled))
        a = arith::MulFOp::create(b, loc, a, alphas[(i % 4) / 2]);
      scf::YieldOp::create(b, loc, scaled);
      b.setInsertionPointToStart(ifGrew.elseBlock());
      scf::YieldOp::create(b, loc, acc);
    }
    llvm::copy(ifGrew.getResults(), updated.begin() + 4);
  }

  // O += P.V: the C fragments of keys 16u..16u+15 are the A fragment of
  // k-step u; V's B fragments come transposed from shared memory.
  for (int64_t u = 0, e = cfg.blockKV / 16; u < e; ++u) {
    Value pFrag = packA(ArrayRef<Value>(probs).slice(8 * u, 8));
    for (int64_t nd = 0, ed = dvCols / 8; nd < ed; ++nd) {
      Value vFrag = ldmatrix(vs, slot, add(addConst(lane8, 16 * u), half8),
                             addConst(dvBase, 8 * nd), sdpa.dv, 2,
                             /*transpose=*/true);
      Accum c;
      for (int64_t k = 0; k < 4; ++k)
        c[k] = updated[4 + 4 * nd + k];
      c = mma(pFrag, vFrag, c);
      for (int64_t k = 0; k < 4; ++k)
        updated[4 + 4 * nd + k] = c[k];
    }
  }
  // Every warp is done with this slot before it is refilled.
  gpu::BarrierOp::create(b, loc);
  return updated;
}

/// out = l == 0 ? 0 : acc / l rounded to the element type, lse = (m +
/// log2 l) ln 2 (-inf for an empty row), for the thread's rows in [0, Lq).
void GpuFlashBuilder::writeResults(ValueRange state) {
  Value twoT = add(dvBase, mul(t, idx(2)));
  Value zero = f32(0);
  for (int64_t r = 0; r < 2; ++r) {
    Value l = quadReduce(state[2 + r], /*isMax=*/false);
    Value row = rowOf(r);
    Value inRange =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, sdpa.lq);
    auto ifRow = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifRow.thenBlock()->getTerminator());
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value safeL = arith::SelectOp::create(b, loc, empty, f32(1), l);
    Value inv = arith::DivFOp::create(b, loc, f32(1), safeL);
    for (int64_t nd = 0, e = dvCols / 8; nd < e; ++nd)
      for (int64_t c = 0; c < 2; ++c) {
        Value o =
            arith::MulFOp::create(b, loc, state[4 + 4 * nd + 2 * r + c], inv);
        o = arith::SelectOp::create(b, loc, empty, zero, o);
        o = arith::TruncFOp::create(b, loc, sdpa.elt, o);
        memref::StoreOp::create(
            b, loc, o, sdpa.out,
            ValueRange{batch, head, row, addConst(twoT, 8 * nd + c)});
      }
    if (!sdpa.lse)
      continue;
    // One thread per row: t = 0 of the warp holding the first columns.
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        add(t, dvBase), idx(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    // The row max in base 2 (unscaled with foldScale; the lse of an
    // empty row is -inf either way).
    Value maxBase2 = foldScale ? arith::MulFOp::create(b, loc, state[r],
                                                       f32(sdpa.scaleLog2E))
                                     .getResult()
                               : state[r];
    Value lse = arith::MulFOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, maxBase2,
                              math::Log2Op::create(b, loc, safeL)),
        f32(float(kLn2)));
    lse = arith::SelectOp::create(b, loc, empty, f32(kNegInf), lse);
    memref::StoreOp::create(b, loc, lse, sdpa.lse,
                            ValueRange{batch, head, row});
  }
}

void GpuFlashBuilder::build() {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  Value tid = launch.getThreadIds().x;
  batch = blockIds.z;
  head = blockIds.y;
  kvHead = arith::DivUIOp::create(b, loc, head, idx(sdpa.group));
  qStart = mul(blockIds.x, idx(cfg.blockQ));
  lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  Value warp = arith::DivUIOp::create(b, loc, tid, idx(32));
  warpRow =
      mul(arith::DivUIOp::create(b, loc, warp, idx(cfg.dvSplit)), idx(16));
  dvCols = sdpa.dv / cfg.dvSplit;
  dvBase =
      mul(arith::RemUIOp::create(b, loc, warp, idx(cfg.dvSplit)), idx(dvCols));
  g = arith::DivUIOp::create(b, loc, lane, idx(4));
  t = arith::RemUIOp::create(b, loc, lane, idx(4));
  laneMod8 = arith::RemUIOp::create(b, loc, lane, idx(8));
  // K[2], V[2] and, where V[2] cannot hold it, Q one after the other in
  // dynamic shared memory (16-byte aligned base; every tile is a multiple
  // of 16 bytes).
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  int64_t offset = 0;
  auto view = [&](ArrayRef<int64_t> shape, int64_t at) {
    auto type = MemRefType::get(shape, sdpa.elt, AffineMap(), workgroup);
    Value tile =
        memref::ViewOp::create(b, loc, type, base, idx(at), ValueRange{});
    offset = std::max(offset, at + type.getNumElements() *
                                       sdpa.elt.getIntOrFloatBitWidth() / 8);
    return tile;
  };
  int64_t rowD = sharedRowLength(sdpa.d, cfg);
  int64_t rowDv = sharedRowLength(sdpa.dv, cfg);
  bool qInValueTiles = stagesQueryInValueTiles(sdpa, cfg);
  bool qInKeyValueTiles = cfg.queryInKeyValueTiles;
  ks = view({2, cfg.blockKV, rowD}, offset);
  int64_t valueOffset = offset;
  vs = view({2, cfg.blockKV, rowDv}, valueOffset);
  qs = view({cfg.blockQ, rowD}, qInValueTiles      ? valueOffset
                                : qInKeyValueTiles ? 0
                                                   : offset);

  // The key tiles this block visits and those it needs no element mask
  // for (GpuScoreModifiers.cpp): the key length, the causal rule and the
  // window skip every tile that no row of the block sees.
  seq = locateSequence(b, sdpa, batch, head);
  Value lastRow = arith::SubIOp::create(
      b, loc,
      arith::MinUIOp::create(b, loc, addConst(qStart, cfg.blockQ), sdpa.lq),
      idx(1));
  KeyTiles tiles = keyTiles(b, sdpa, seq, qStart, lastRow, cfg.blockKV);
  auto keyType = cast<MemRefType>(sdpa.key.getType());
  needsMask = sdpa.band || sdpa.keyLengths || keyType.isDynamicDim(2) ||
              keyType.getDimSize(2) % cfg.blockKV != 0;

  // Prologue: Q (waited for at once, its fragments kept in registers) and
  // the first K/V tile. Q staged in the V buffers: Q with the first K tile,
  // then the first V tile once every warp holds its Q fragments; Q staged
  // in the K and V tiles (D = 256): Q alone, then the first K/V tile. Tile
  // n lives in slot n % 2.
  Value first = tiles.first;
  Value firstSlot = arith::RemUIOp::create(b, loc, first, idx(2));
  Value firstKey = mul(first, idx(cfg.blockKV));
  copyRows(qs, std::nullopt, sdpa.query, head, qStart, sdpa.lq, cfg.blockQ,
           sdpa.d);
  if (qInValueTiles) {
    copyRows(ks, firstSlot, sdpa.key, kvHead, firstKey, seq.keyLen, cfg.blockKV,
             sdpa.d);
    commitGroup();
    waitGroups(0);
  } else if (qInKeyValueTiles) {
    commitGroup();
    waitGroups(0);
  } else {
    commitGroup();
    loadKeyValueTile(first, firstSlot);
    commitGroup();
    waitGroups(1);
  }
  gpu::BarrierOp::create(b, loc);
  Value lane8 = arith::RemUIOp::create(b, loc, lane, idx(8));
  Value half8 =
      mul(arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, lane, idx(8)), idx(2)),
          idx(8));
  Value quarter8 = mul(arith::DivUIOp::create(b, loc, lane, idx(16)), idx(8));
  Value fragRow = add(add(warpRow, lane8), half8);
  for (int64_t kk = 0, e = sdpa.d / 16; kk < e; ++kk)
    qFrags.push_back(ldmatrix(qs, std::nullopt, fragRow,
                              addConst(quarter8, 16 * kk), sdpa.d, 4,
                              /*transpose=*/false));
  if (qInValueTiles) {
    gpu::BarrierOp::create(b, loc);
    copyRows(vs, firstSlot, sdpa.value, kvHead, firstKey, seq.keyLen,
             cfg.blockKV, sdpa.dv);
    commitGroup();
  } else if (qInKeyValueTiles) {
    gpu::BarrierOp::create(b, loc);
    loadKeyValueTile(first, firstSlot);
    commitGroup();
  }

  SmallVector<Value> init = {f32(kNegInf), f32(kNegInf), f32(0), f32(0)};
  for (int64_t k = 0, e = dvCols / 2; k < e; ++k)
    init.push_back(f32(0));
  auto loop = scf::ForOp::create(
      b, loc, first, tiles.end, idx(1), init,
      [&](OpBuilder &nb, Location, Value tile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, keyTileStep(tile, state, tiles));
      });
  // No copy outlives the kernel (with no key tile, the first is in flight).
  waitGroups(0);
  writeResults(loop.getResults());
}

void gpu_kernels::buildFlashKernel(OpBuilder &b, const GpuSdpa &sdpa,
                                   const FlashConfig &config,
                                   gpu::LaunchOp launch) {
  GpuFlashBuilder(b, sdpa, config, launch).build();
}
