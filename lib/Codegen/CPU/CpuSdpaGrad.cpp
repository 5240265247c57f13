//===- CpuSdpaGrad.cpp - fused attn.sdpa_grad for the CPU
//------------------===//
//
// Part of the attn project.
//
// FlashAttention-2's backward on the CPU: key/value blocks outside, query
// blocks inside, the probabilities recomputed per tile from the forward's
// lse and never stored whole. Every product runs on f32 tiles through the
// register-blocked contraction kernel of the forward's microkernels
// (CpuKernels.h), the probabilities through its polynomial exp2.
//
// dQ without races: the parallel loop runs over (batch, key/value head), and
// a query head belongs to exactly one key/value head, so each dQ row is
// accumulated by one thread only, in an f32 buffer, across the key blocks
// walked in order. No second pass over the query blocks (which would
// recompute P and dP once more) and no per-thread partial dQ to sum.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"

#include "CpuKernels.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"
#include "attn/Dialect/Attn/Utils/Utils.h"
#include "llvm/Support/CheckedArithmetic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUSDPAGRAD
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// The static shape of the problem and the tiling.
struct GradPlan {
  int64_t bq, bk, width;
  int64_t hq, hkv, group, d, dv;
  /// Head dims rounded up to whole vectors (the tiles are zero-padded).
  int64_t dp, dvp;
  float scale;
  /// The causal rule: a band with a right edge only (no window).
  std::optional<VisibleBand> band;
  bool boolMask;
  Type elt;
};

/// Register blocking of the contraction kernel for an output tile whose
/// vector dim holds `cols` elements: as many row vectors as divide it (up to
/// 4), and up to 24 accumulators.
static RegisterBlocking blockingFor(int64_t cols, int64_t width) {
  int64_t vecs = cols / width, rowVecs = 1;
  for (int64_t r = 4; r >= 1; --r)
    if (vecs % r == 0) {
      rowVecs = r;
      break;
    }
  return {width, rowVecs, std::max<int64_t>(1, 24 / rowVecs)};
}

/// Builds the loops of one sdpa_grad in front of it.
class GradEmitter : public IrBuilder {
public:
  GradEmitter(OpBuilder &b, Location loc, const GradPlan &plan)
      : IrBuilder(b, loc), plan(plan), kernel(b, loc, plan.width) {}

  /// A dim of a buffer, as a constant when static.
  Value dimOf(Value buffer, int64_t i) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.isDynamicDim(i))
      return idx(type.getDimSize(i));
    return memref::DimOp::create(b, loc, buffer, i);
  }

  /// One element as f32.
  Value loadF32(Value mem, ValueRange indices) {
    Value x = memref::LoadOp::create(b, loc, mem, indices);
    if (!x.getType().isF32())
      x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return x;
  }
  /// Stores an f32, rounded once to the buffer's element type.
  void storeRounded(Value x, Value mem, ValueRange indices) {
    Type elt = cast<MemRefType>(mem.getType()).getElementType();
    if (elt != x.getType())
      x = arith::TruncFOp::create(b, loc, elt, x);
    memref::StoreOp::create(b, loc, x, mem, indices);
  }

  /// for (iv = lb; iv < ub; iv += step) body(iv), bounds as values.
  void forLoop(Value lb, Value ub, Value step, function_ref<void(Value)> body) {
    scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nb.getInsertionBlock(),
                                             nb.getInsertionPoint());
                         body(iv);
                         scf::YieldOp::create(b, loc);
                       });
  }
  void forLoop(Value ub, function_ref<void(Value)> body) {
    forLoop(idx(0), ub, idx(1), body);
  }

  /// scf.parallel over [0, ub0) x [0, ub1) (OpenMP threads later).
  void parallel2(Value ub0, Value ub1, function_ref<void(Value, Value)> body) {
    scf::ParallelOp::create(b, loc, ValueRange{idx(0), idx(0)},
                            ValueRange{ub0, ub1}, ValueRange{idx(1), idx(1)},
                            [&](OpBuilder &nb, Location, ValueRange ivs) {
                              OpBuilder::InsertionGuard guard(b);
                              b.setInsertionPoint(nb.getInsertionBlock(),
                                                  nb.getInsertionPoint());
                              body(ivs[0], ivs[1]);
                            });
  }

  /// A static f32 tile of the thread that uses it. On the heap, once per
  /// (batch, key/value head): an alloca in the parallel body would be put
  /// in a memref.alloca_scope by convert-scf-to-openmp, which cannot hold the
  /// blocks that convert-scf-to-cf then makes of the loops inside.
  Value tile(ArrayRef<int64_t> shape) {
    return memref::AllocOp::create(b, loc,
                                   MemRefType::get(shape, b.getF32Type()));
  }

  /// Every element of a static rank-1 or rank-2 f32 tile (last dim a
  /// multiple of the width) set to `value`.
  void fill(Value t, float value) {
    auto type = cast<MemRefType>(t.getType());
    Value v = kernel.splat(value);
    int64_t cols = type.getShape().back();
    if (type.getRank() == 1) {
      kernel.loop(0, cols, plan.width,
                  [&](Value c) { kernel.store(v, t, {c}); });
      return;
    }
    kernel.loop(0, type.getDimSize(0), 1, [&](Value r) {
      kernel.loop(0, cols, plan.width, [&](Value c) {
        kernel.store(v, t, {r, c});
      });
    });
  }

  const GradPlan &plan;
  KernelBuilder kernel;
};

/// The buffers of one sdpa_grad and its run-time sizes.
struct GradBuffers {
  Value q, k, v, o, lse, dO, mask;
  Value dq, dk, dv;
  /// f32 scratch: Di = rowsum(dO o O) [B, Hq, Lq] and the dQ accumulator
  /// [B * Hq * (Lq + bq), dp] (bq rows of slack: a query block may run past
  /// Lq; its extra rows receive zeros).
  Value di, dqAcc;
  Value batch, lq, lk, lqPad;
};

/// The tiles of one thread.
struct GradTiles {
  Value kf, vf, dkAcc, dvAcc; // [bk, dp], [bk, dvp]
  Value qt, qf, dOt, dOf;     // [dp, bq], [bq, dp], [dvp, bq], [bq, dvp]
  Value st, dPt, maskT;       // [bk, bq]: scores then P; dP then dS
  Value lseT, diT;            // [bq]
};

/// The row of dqAcc for (b, h, i).
static Value dqAccRow(GradEmitter &e, const GradBuffers &buf, Value bIdx,
                      Value h, Value i) {
  Value bh = e.add(e.mul(bIdx, e.idx(e.plan.hq)), h);
  return e.add(e.mul(bh, buf.lqPad), i);
}

/// The mask element for (b, h, i, j) as an additive f32: the float mask's
/// value, or 0 / -inf for an i1 mask. Broadcast dims read index 0.
static Value loadMaskBias(GradEmitter &e, const GradBuffers &buf,
                          ArrayRef<Value> index) {
  auto type = cast<MemRefType>(buf.mask.getType());
  SmallVector<Value> at;
  for (int64_t k = 0; k < 4; ++k) {
    if (type.getDimSize(k) == 1)
      at.push_back(e.idx(0));
    else if (type.isDynamicDim(k))
      at.push_back(e.minS(index[k], e.sub(e.dimOf(buf.mask, k), e.idx(1))));
    else
      at.push_back(index[k]);
  }
  Value m = memref::LoadOp::create(e.b, e.loc, buf.mask, at);
  if (e.plan.boolMask)
    return arith::SelectOp::create(e.b, e.loc, m, e.f32(0.0f), e.f32(kNegInf));
  if (!m.getType().isF32())
    m = arith::ExtFOp::create(e.b, e.loc, e.b.getF32Type(), m);
  return m;
}

/// Di[b, h, i] = sum_e dO * O, and the dQ accumulator zeroed, for every row
/// of (b, h).
static void emitRowDotsAndClear(GradEmitter &e, const GradBuffers &buf,
                                Value bIdx, Value h) {
  e.forLoop(buf.lq, [&](Value i) {
    Value sum = e.kernel.loopCarrying(
        0, e.plan.dv, 1, {e.f32(0.0f)}, [&](Value c, ValueRange acc) {
          Value x = e.loadF32(buf.dO, {bIdx, h, i, c});
          Value y = e.loadF32(buf.o, {bIdx, h, i, c});
          return SmallVector<Value>{
              math::FmaOp::create(e.b, e.loc, x, y, acc[0])};
        })[0];
    memref::StoreOp::create(e.b, e.loc, sum, buf.di, ValueRange{bIdx, h, i});
  });
  Value zero = e.kernel.splat(0.0f);
  e.forLoop(buf.lqPad, [&](Value i) {
    Value row = dqAccRow(e, buf, bIdx, h, i);
    e.kernel.loop(0, e.plan.dp, e.plan.width, [&](Value c) {
      e.kernel.store(zero, buf.dqAcc, {row, c});
    });
  });
}

/// Kf, Vf <- rows [k0, k0 + kn) of K and V of head hk, as f32, zero-padded.
static void loadKeyBlock(GradEmitter &e, const GradBuffers &buf,
                         const GradTiles &t, Value bIdx, Value hk, Value k0,
                         Value kn) {
  e.fill(t.kf, 0.0f);
  e.fill(t.vf, 0.0f);
  e.forLoop(kn, [&](Value j) {
    Value row = e.add(k0, j);
    e.kernel.loop(0, e.plan.d, 1, [&](Value c) {
      memref::StoreOp::create(e.b, e.loc, e.loadF32(buf.k, {bIdx, hk, row, c}),
                              t.kf, ValueRange{j, c});
    });
    e.kernel.loop(0, e.plan.dv, 1, [&](Value c) {
      memref::StoreOp::create(e.b, e.loc, e.loadF32(buf.v, {bIdx, hk, row, c}),
                              t.vf, ValueRange{j, c});
    });
  });
}

/// The query-block tiles of rows [q0, q0 + rn) of head h: Q and dO both
/// transposed (rows along the vectors, for the scores and dP) and as rows
/// (for dK and dV), lse (-inf past the rows: those P are 0), Di and the mask.
static void loadQueryBlock(GradEmitter &e, const GradBuffers &buf,
                           const GradTiles &t, Value bIdx, Value h, Value q0,
                           Value rn, Value k0, Value kn) {
  for (Value tileValue : {t.qt, t.qf, t.dOt, t.dOf, t.diT})
    e.fill(tileValue, 0.0f);
  e.fill(t.lseT, kNegInf);
  e.forLoop(rn, [&](Value i) {
    Value row = e.add(q0, i);
    e.kernel.loop(0, e.plan.d, 1, [&](Value c) {
      Value x = e.loadF32(buf.q, {bIdx, h, row, c});
      memref::StoreOp::create(e.b, e.loc, x, t.qt, ValueRange{c, i});
      memref::StoreOp::create(e.b, e.loc, x, t.qf, ValueRange{i, c});
    });
    e.kernel.loop(0, e.plan.dv, 1, [&](Value c) {
      Value x = e.loadF32(buf.dO, {bIdx, h, row, c});
      memref::StoreOp::create(e.b, e.loc, x, t.dOt, ValueRange{c, i});
      memref::StoreOp::create(e.b, e.loc, x, t.dOf, ValueRange{i, c});
    });
    memref::StoreOp::create(
        e.b, e.loc,
        memref::LoadOp::create(e.b, e.loc, buf.lse, ValueRange{bIdx, h, row}),
        t.lseT, ValueRange{i});
    memref::StoreOp::create(
        e.b, e.loc,
        memref::LoadOp::create(e.b, e.loc, buf.di, ValueRange{bIdx, h, row}),
        t.diT, ValueRange{i});
    if (!buf.mask)
      return;
    e.forLoop(kn, [&](Value j) {
      Value bias = loadMaskBias(e, buf, {bIdx, h, row, e.add(k0, j)});
      memref::StoreOp::create(e.b, e.loc, bias, t.maskT, ValueRange{j, i});
    });
  });
}

/// St <- P and dPt <- dS, elementwise: P = exp(scale * S + mask - lse) where
/// visible (key inside the block, the causal rule, a row that sees
/// something), else 0; dS = P * (dP - Di).
static void emitProbsAndScoreGrad(GradEmitter &e, const GradTiles &t, Value q0,
                                  Value k0, Value kn, Value diagShift) {
  KernelBuilder &kb = e.kernel;
  OpBuilder &b = e.b;
  Location loc = e.loc;
  int64_t w = e.plan.width;
  auto i32Vec = VectorType::get({w}, b.getI32Type());
  SmallVector<int32_t> iota;
  for (int64_t l = 0; l < w; ++l)
    iota.push_back(static_cast<int32_t>(l));
  Value lanes = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(i32Vec, ArrayRef<int32_t>(iota)));
  auto toI32 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  };
  kb.loop(0, e.plan.bq, w, [&](Value i0) {
    Value lse = kb.load(t.lseT, {i0});
    Value lse2 = arith::MulFOp::create(b, loc, lse,
                                       kb.splat(static_cast<float>(kLog2E)));
    Value di = kb.load(t.diT, {i0});
    Value rowSees = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                          lse, kb.splat(kNegInf));
    // Key k0 + j is visible to row q0 + i iff i >= base + j, base the first
    // row that sees key k0 (both counted from q0).
    Value rowIds = arith::AddIOp::create(
        b, loc, lanes, vector::BroadcastOp::create(b, loc, i32Vec, toI32(i0)));
    Value base = e.sub(k0, q0);
    if (diagShift)
      base = buildFirstVisibleRow(b, loc, *e.plan.band, diagShift, base);
    kb.loop(0, e.plan.bk, 1, [&](Value j) {
      Value s = arith::MulFOp::create(
          b, loc, kb.load(t.st, {j, i0}),
          kb.splat(e.plan.scale * static_cast<float>(kLog2E)));
      if (t.maskT)
        s = vector::FMAOp::create(b, loc, kb.load(t.maskT, {j, i0}),
                                  kb.splat(static_cast<float>(kLog2E)), s);
      Value p = kb.exp2(arith::SubFOp::create(b, loc, s, lse2));
      Value inBlock =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, kn);
      Value visible = arith::AndIOp::create(
          b, loc, rowSees,
          vector::BroadcastOp::create(
              b, loc, VectorType::get({w}, b.getI1Type()), inBlock));
      if (e.plan.band) {
        Value threshold =
            vector::BroadcastOp::create(b, loc, i32Vec, toI32(e.add(base, j)));
        visible = arith::AndIOp::create(
            b, loc, visible,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, rowIds,
                                  threshold));
      }
      p = arith::SelectOp::create(b, loc, visible, p, kb.splat(0.0f));
      Value dP = kb.load(t.dPt, {j, i0});
      Value dS = arith::MulFOp::create(b, loc, p,
                                       arith::SubFOp::create(b, loc, dP, di));
      kb.store(p, t.st, {j, i0});
      kb.store(dS, t.dPt, {j, i0});
    });
  });
}

/// One query block of one head against the current key block.
static void emitQueryBlock(GradEmitter &e, const GradBuffers &buf,
                           const GradTiles &t, Value bIdx, Value h, Value q0,
                           Value k0, Value kn, Value diagShift) {
  const GradPlan &plan = e.plan;
  Value rn = e.minS(e.idx(plan.bq), e.sub(buf.lq, q0));
  loadQueryBlock(e, buf, t, bIdx, h, q0, rn, k0, kn);
  ContractionExtras fromZero;
  fromZero.fromZero = true;
  RegisterBlocking rows = blockingFor(plan.bq, plan.width);
  // St = K . Q^T, dPt = V . dO^T (keys down, query rows along the vectors).
  emitContraction(e.kernel, rows, t.qt, t.kf, /*bIsTC=*/false, t.st, fromZero);
  emitContraction(e.kernel, rows, t.dOt, t.vf, /*bIsTC=*/false, t.dPt,
                  fromZero);
  emitProbsAndScoreGrad(e, t, q0, k0, kn, diagShift);
  // dV += P^T . dO and dK += dS^T . Q (scale applied once, at the end).
  emitContraction(e.kernel, blockingFor(plan.dvp, plan.width), t.dOf, t.st,
                  /*bIsTC=*/false, t.dvAcc, {});
  RegisterBlocking headCols = blockingFor(plan.dp, plan.width);
  emitContraction(e.kernel, headCols, t.qf, t.dPt, /*bIsTC=*/false, t.dkAcc,
                  {});
  // dQ[q0 + i] += dS[i, :] . K: this head's rows, owned by this thread.
  Value row = dqAccRow(e, buf, bIdx, h, q0);
  Value dqTile = memref::SubViewOp::create(
      e.b, e.loc, buf.dqAcc, ArrayRef<OpFoldResult>{row, e.b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{e.b.getIndexAttr(plan.bq),
                             e.b.getIndexAttr(plan.dp)},
      ArrayRef<OpFoldResult>{e.b.getIndexAttr(1), e.b.getIndexAttr(1)});
  emitContraction(e.kernel, headCols, t.kf, t.dPt, /*bIsTC=*/true, dqTile, {});
}

/// The key blocks of (b, hk): dK and dV of each block accumulated over the
/// query heads of the group and the query blocks that can see it.
static void emitKeyBlocks(GradEmitter &e, const GradBuffers &buf, Value bIdx,
                          Value hk) {
  const GradPlan &plan = e.plan;
  GradTiles t;
  t.kf = e.tile({plan.bk, plan.dp});
  t.vf = e.tile({plan.bk, plan.dvp});
  t.dkAcc = e.tile({plan.bk, plan.dp});
  t.dvAcc = e.tile({plan.bk, plan.dvp});
  t.qt = e.tile({plan.dp, plan.bq});
  t.qf = e.tile({plan.bq, plan.dp});
  t.dOt = e.tile({plan.dvp, plan.bq});
  t.dOf = e.tile({plan.bq, plan.dvp});
  t.st = e.tile({plan.bk, plan.bq});
  t.dPt = e.tile({plan.bk, plan.bq});
  if (buf.mask)
    t.maskT = e.tile({plan.bk, plan.bq});
  t.lseT = e.tile({plan.bq});
  t.diT = e.tile({plan.bq});

  Value diagShift;
  if (plan.band)
    diagShift = buildDiagonalShift(e.b, e.loc, *plan.band, buf.lq, buf.lk);

  e.forLoop(e.idx(0), buf.lk, e.idx(plan.bk), [&](Value k0) {
    Value kn = e.minS(e.idx(plan.bk), e.sub(buf.lk, k0));
    loadKeyBlock(e, buf, t, bIdx, hk, k0, kn);
    e.fill(t.dkAcc, 0.0f);
    e.fill(t.dvAcc, 0.0f);
    // Rows before the first that sees key k0 see no key of this block:
    // their blocks are skipped, not computed and masked.
    Value qStart = e.idx(0);
    if (diagShift)
      qStart = e.maxS(
          e.idx(0), e.minS(buf.lq, buildFirstVisibleRow(e.b, e.loc, *plan.band,
                                                        diagShift, k0)));
    e.forLoop(e.idx(plan.group), [&](Value g) {
      Value h = e.add(e.mul(hk, e.idx(plan.group)), g);
      e.forLoop(qStart, buf.lq, e.idx(plan.bq), [&](Value q0) {
        emitQueryBlock(e, buf, t, bIdx, h, q0, k0, kn, diagShift);
      });
    });
    // dK = scale * dS^T . Q and dV, rounded once.
    e.forLoop(kn, [&](Value j) {
      Value row = e.add(k0, j);
      e.kernel.loop(0, plan.d, 1, [&](Value c) {
        Value x = memref::LoadOp::create(e.b, e.loc, t.dkAcc, ValueRange{j, c});
        x = arith::MulFOp::create(e.b, e.loc, x, e.f32(plan.scale));
        e.storeRounded(x, buf.dk, {bIdx, hk, row, c});
      });
      e.kernel.loop(0, plan.dv, 1, [&](Value c) {
        Value x = memref::LoadOp::create(e.b, e.loc, t.dvAcc, ValueRange{j, c});
        e.storeRounded(x, buf.dv, {bIdx, hk, row, c});
      });
    });
  });
}

/// A buffer shaped like the tensor type `type`, with the given run-time
/// sizes for its dynamic dims (all four sizes are given).
static Value allocLike(OpBuilder &b, Location loc, RankedTensorType type,
                       ArrayRef<Value> sizes) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<Value> dynamic;
  for (auto [i, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      dynamic.push_back(sizes[i]);
  return memref::AllocOp::create(b, loc, memrefType, dynamic);
}

static Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

static FailureOr<GradPlan> planFor(SdpaGradOp op, int64_t blockQ,
                                   int64_t blockKV, int64_t width) {
  if (blockQ % width != 0)
    return op.emitOpError("attn-cpu-sdpa-grad: expected block-q (")
           << blockQ << ") to be a multiple of vector-width (" << width << ")";
  GradPlan plan;
  plan.bq = blockQ;
  plan.bk = blockKV;
  plan.width = width;
  plan.hq = op.getQueryType().getDimSize(1);
  plan.hkv = op.getKeyType().getDimSize(1);
  plan.group = op.getGroupSize();
  plan.d = op.getQueryType().getDimSize(3);
  plan.dv = op.getValueType().getDimSize(3);
  plan.dp = llvm::divideCeil(plan.d, width) * width;
  plan.dvp = llvm::divideCeil(plan.dv, width) * width;
  // The tiles are allocated whole, whatever the sequence lengths (the
  // blocks are not shrunk to them): the largest must stay allocatable.
  constexpr int64_t kMaxTileElements = int64_t(1) << 24;
  int64_t rows = std::max(blockQ, blockKV);
  int64_t columns = std::max({rows, plan.dp, plan.dvp});
  std::optional<int64_t> elements = llvm::checkedMul(rows, columns);
  if (!elements || *elements > kMaxTileElements)
    return op.emitOpError("attn-cpu-sdpa-grad: expected a tile of "
                          "max(block-q, block-kv) (")
           << rows << ") rows by max(block-q, block-kv, D, Dv) (" << columns
           << ") columns to hold at most 2^24 elements (64 MiB of f32: the "
              "backward allocates its tiles whole)";
  plan.scale = op.getEffectiveScale();
  plan.band = getVisibleBand(op);
  plan.boolMask = op.hasBoolMask();
  plan.elt = op.getQueryType().getElementType();
  return plan;
}

/// Replaces `op` with the fused loops; fails with a diagnostic on `op` when
/// the options cannot tile it.
static LogicalResult lowerSdpaGrad(RewriterBase &rewriter, SdpaGradOp op,
                                   int64_t blockQ, int64_t blockKV,
                                   int64_t width) {
  FailureOr<GradPlan> plan = planFor(op, blockQ, blockKV, width);
  if (failed(plan))
    return failure();
  Location loc = op.getLoc();
  GradEmitter e(rewriter, loc, *plan);
  GradBuffers buf;
  buf.q = toBuffer(rewriter, loc, op.getQuery());
  buf.k = toBuffer(rewriter, loc, op.getKey());
  buf.v = toBuffer(rewriter, loc, op.getValue());
  buf.o = toBuffer(rewriter, loc, op.getOut());
  buf.lse = toBuffer(rewriter, loc, op.getLse());
  buf.dO = toBuffer(rewriter, loc, op.getDOut());
  if (op.getMask())
    buf.mask = toBuffer(rewriter, loc, op.getMask());
  buf.batch = e.dimOf(buf.q, 0);
  buf.lq = e.dimOf(buf.q, 2);
  buf.lk = e.dimOf(buf.k, 2);
  buf.lqPad = e.add(buf.lq, e.idx(plan->bq));

  Value hq = e.idx(plan->hq), hkv = e.idx(plan->hkv);
  buf.dq = allocLike(rewriter, loc, op.getQueryType(),
                     {buf.batch, hq, buf.lq, e.idx(plan->d)});
  buf.dk = allocLike(rewriter, loc, op.getKeyType(),
                     {buf.batch, hkv, buf.lk, e.idx(plan->d)});
  buf.dv = allocLike(rewriter, loc, op.getValueType(),
                     {buf.batch, hkv, buf.lk, e.idx(plan->dv)});
  Type f32 = rewriter.getF32Type();
  buf.di = memref::AllocOp::create(
      rewriter, loc,
      MemRefType::get({ShapedType::kDynamic, plan->hq, ShapedType::kDynamic},
                      f32),
      ValueRange{buf.batch, buf.lq});
  Value accRows = e.mul(e.mul(buf.batch, hq), buf.lqPad);
  buf.dqAcc = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({ShapedType::kDynamic, plan->dp}, f32),
      ValueRange{accRows});

  // Di once per row, and dQ's accumulator cleared.
  e.parallel2(buf.batch, hq, [&](Value bIdx, Value h) {
    emitRowDotsAndClear(e, buf, bIdx, h);
  });
  // The key blocks, one (batch, key/value head) per thread.
  e.parallel2(buf.batch, hkv,
              [&](Value bIdx, Value hk) { emitKeyBlocks(e, buf, bIdx, hk); });
  // dQ = scale * dS . K, rounded once.
  e.parallel2(buf.batch, hq, [&](Value bIdx, Value h) {
    e.forLoop(buf.lq, [&](Value i) {
      Value row = dqAccRow(e, buf, bIdx, h, i);
      e.kernel.loop(0, plan->d, 1, [&](Value c) {
        Value x = memref::LoadOp::create(rewriter, loc, buf.dqAcc,
                                         ValueRange{row, c});
        x = arith::MulFOp::create(rewriter, loc, x, e.f32(plan->scale));
        e.storeRounded(x, buf.dq, {bIdx, h, i, c});
      });
    });
  });
  // The scratch buffers are freed by the pipeline's ownership-based
  // deallocation, which wants no memref.dealloc in its input.

  SmallVector<Value> results;
  for (Value buffer : {buf.dq, buf.dk, buf.dv}) {
    auto type = cast<MemRefType>(buffer.getType());
    results.push_back(bufferization::ToTensorOp::create(
        rewriter, loc,
        RankedTensorType::get(type.getShape(), type.getElementType()), buffer,
        /*restrict=*/true, /*writable=*/true));
  }
  replaceOpWithCastValues(rewriter, op, results);
  return success();
}

struct AttnCpuSdpaGradPass
    : public attn::impl::AttnCpuSdpaGradBase<AttnCpuSdpaGradPass> {
  using AttnCpuSdpaGradBase::AttnCpuSdpaGradBase;

  void runOnOperation() override {
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            getOperation()->getLoc(), getArgument(),
            {{blockQ.ArgStr, blockQ, bounds::kGradBlockQ},
             {blockKV.ArgStr, blockKV, bounds::kGradBlockKV},
             {vectorWidth.ArgStr, vectorWidth, bounds::kCpuVectorWidth}})))
      return signalPassFailure();
    SmallVector<SdpaGradOp> ops;
    getOperation()->walk([&](SdpaGradOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (SdpaGradOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(lowerSdpaGrad(rewriter, op, blockQ, blockKV, vectorWidth)))
        return signalPassFailure();
    }
  }
};

} // namespace
