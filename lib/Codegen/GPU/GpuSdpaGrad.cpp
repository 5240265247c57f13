//===- GpuSdpaGrad.cpp - attn.sdpa_grad on mma.sync tensor cores ----------===//
//
// Part of the attn project.
//
// The backward pass on the GPU (convert-attn-to-gpu), FlashAttention-2's
// algorithm on mma.sync m16n8k16 (f16/bf16, f32 accumulators), as three or
// four launches on the caller's stream:
//   1. preprocess (grid (ceil(Lq / block-q), Hq, B), one thread per row):
//      Di = rowsum(dO o O) in f32, the lse in base 2 (+inf for a row past Lq
//      or with nothing visible, so that its P is exp2(-inf) = 0), and the
//      f32 dQ accumulator zeroed (without `deterministic`);
//   2. main (grid (ceil(Lk / 64), Hkv, B), 4 warps): a CTA owns 64 keys of
//      one K/V head, 16 per warp, and loops over the query heads of the
//      group and their query blocks that see any of its keys (causal blocks
//      skipped); per block: S^T = K.Q^T, P^T = exp2(S^T * c - lse2), dV +=
//      P^T.dO, dP^T = V.dO^T, dS^T = P^T o (dP^T - Di), dK += dS^T.Q (dK and
//      dV in registers, the C fragments of P^T and dS^T reused as A
//      fragments), dS written to shared memory and dQ += dS.K added to the
//      f32 accumulator by atomics (`deterministic`: stored as the key
//      block's own partial dQ);
//   3. dQ (grid (ceil(Lq / block-q), Hq, B)): scale * the accumulator (or
//      the sum, in key-block order, of the partials of the key blocks that
//      visit the row's block), rounded to the element type.
// Fragment layouts as in GpuFlashKernel.cpp (lane = 4 g + t).
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

namespace {

/// One attn.sdpa_grad on buffers.
struct GpuGrad {
  Location loc;
  Value query, key, value, out, lse, dOut;
  Value dQuery, dKey, dValue;
  /// Scratch: Di and the base-2 lse [B, Hq, rowBlocks * blockQ], the f32 dQ
  /// accumulator [B, Hq, Lq, D] or the partials [keyBlocks, B, Hq, Lq, D].
  Value di, lse2, dqAccum;
  Value batch, lq, lk, rowBlocks, keyBlocks;
  int64_t hq = 0, group = 1, d = 0, dv = 0;
  Type elt;
  float scale = 0, scaleLog2E = 0;
  /// Causal: the diagonal's shift (0 or Lk - Lq), null without.
  Value diagShift;
  GpuGradConfig cfg;
};

/// Builds the three kernels' bodies.
class GradBuilder : GpuIrBuilder {
public:
  GradBuilder(OpBuilder &b, const GpuGrad &g) : GpuIrBuilder(b, g.loc), g(g) {}

  void buildPreprocess(gpu::LaunchOp launch);
  void buildMain(gpu::LaunchOp launch);
  void buildConvert(gpu::LaunchOp launch);

private:
  Value addConst(Value x, int64_t c) { return c ? add(x, idx(c)) : x; }
  Value divU(Value x, int64_t c) {
    return arith::DivUIOp::create(b, loc, x, idx(c));
  }
  Value remU(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, idx(c));
  }
  Value lt(Value x, Value y) { return cmp(arith::CmpIPredicate::ult, x, y); }
  Value toF32Elt(Value x) {
    return arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }

  /// Builds `for (iv = lo; iv < hi; iv += step)` carrying `init`.
  SmallVector<Value>
  loop(Value lo, Value hi, int64_t step, ValueRange init,
       function_ref<SmallVector<Value>(Value, ValueRange)> body);

  void copyRows(Value dst, Value src, Value srcHead, Value firstRow,
                Value rowLimit, int64_t rows, int64_t cols);
  Value ldmatrix(Value buffer, Value row, Value col, int64_t tiles,
                 bool transpose);
  MmaAccum mma(Value a, Value bFrag, const MmaAccum &c) {
    return mmaSync(b, loc, g.elt, a, bFrag, c);
  }
  SmallVector<Value> queryBlockStep(Value head, Value qBlock, ValueRange acc);
  Value firstQueryBlock(Value keyStart);

  const GpuGrad &g;
  gpu::LaunchOp launch;
  // Main kernel state.
  Value batch, kvHead, keyStart, tid, lane, warp, gq, tq, lane8, half8,
      quarter8, warpKey;
  Value ks, vs, qs, dos, dss;
  Value keyValid[2]; // whether the thread's keys g, g + 8 are < Lk
};

} // namespace

SmallVector<Value>
GradBuilder::loop(Value lo, Value hi, int64_t step, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto op = scf::ForOp::create(
      b, loc, lo, hi, idx(step), init,
      [&](OpBuilder &nb, Location, Value iv, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        scf::YieldOp::create(b, loc, body(iv, state));
      });
  return llvm::to_vector_of<Value>(op.getResults());
}

/// cp.async of rows [firstRow, firstRow + rows) x [0, cols) of
/// src[batch, srcHead] into dst (padded rows), 16 bytes per copy; rows at
/// or past `rowLimit` are zero-filled and read nothing.
void GradBuilder::copyRows(Value dst, Value src, Value srcHead, Value firstRow,
                           Value rowLimit, int64_t rows, int64_t cols) {
  int64_t perCopy = 8, chunksPerRow = cols / perCopy,
          total = rows * chunksPerRow;
  int64_t threads = g.cfg.threads();
  for (int64_t base = 0; base < total; base += threads) {
    Value chunk = addConst(tid, base);
    auto emit = [&] {
      Value row = divU(chunk, chunksPerRow);
      Value col = mul(remU(chunk, chunksPerRow), idx(perCopy));
      Value srcRow = add(firstRow, row);
      Value inBounds = lt(srcRow, rowLimit);
      Value srcElements = select(inBounds, idx(perCopy), idx(0));
      srcRow = select(inBounds, srcRow, idx(0));
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
          ValueRange{row, col}, src, ValueRange{batch, srcHead, srcRow, col},
          b.getIndexAttr(perCopy), srcElements, UnitAttr());
    };
    if (base + threads <= total)
      emit();
    else
      ifThen(lt(chunk, idx(total)), emit);
  }
}

Value GradBuilder::ldmatrix(Value buffer, Value row, Value col, int64_t tiles,
                            bool transpose) {
  auto type = VectorType::get(
      {tiles, 2}, cast<MemRefType>(buffer.getType()).getElementType());
  return nvgpu::LdMatrixOp::create(b, loc, type, buffer, ValueRange{row, col},
                                   transpose, static_cast<uint32_t>(tiles));
}

/// The first query block that sees a key of the block starting at
/// `keyStart`: 0 without causality, else max(0, keyStart - shift) / block-q.
Value GradBuilder::firstQueryBlock(Value keyStart) {
  if (!g.diagShift)
    return idx(0);
  return divU(maxS(sub(keyStart, g.diagShift), idx(0)), g.cfg.blockQ);
}

//===----------------------------------------------------------------------===//
// 1. Preprocess: Di, the base-2 lse, dQ's accumulator zeroed
//===----------------------------------------------------------------------===//

void GradBuilder::buildPreprocess(gpu::LaunchOp launch) {
  gpu::KernelDim3 ids = launch.getBlockIds();
  Value bIdx = ids.z, head = ids.y;
  Value row = add(mul(ids.x, idx(g.cfg.blockQ)), launch.getThreadIds().x);
  Value inRange = lt(row, g.lq);
  auto ifRow =
      scf::IfOp::create(b, loc, TypeRange{b.getF32Type(), b.getF32Type()},
                        inRange, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifRow.thenBlock());
    SmallVector<Value> sum =
        loop(idx(0), idx(g.dv), 1, ValueRange{f32(0)},
             [&](Value e, ValueRange acc) -> SmallVector<Value> {
               SmallVector<Value> at = {bIdx, head, row, e};
               Value o = toF32Elt(memref::LoadOp::create(b, loc, g.out, at));
               Value dO = toF32Elt(memref::LoadOp::create(b, loc, g.dOut, at));
               return {math::FmaOp::create(b, loc, o, dO, acc[0])};
             });
    Value l =
        memref::LoadOp::create(b, loc, g.lse, ValueRange{bIdx, head, row});
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l,
                                        f32(kNegInf));
    Value l2 = select(empty, f32(-kNegInf), fmul(l, f32(float(kLog2E))));
    if (!g.cfg.deterministic)
      loop(idx(0), idx(g.d), 1, {}, [&](Value e, ValueRange) {
        memref::StoreOp::create(b, loc, f32(0), g.dqAccum,
                                ValueRange{bIdx, head, row, e});
        return SmallVector<Value>{};
      });
    scf::YieldOp::create(b, loc, ValueRange{sum[0], l2});
    b.setInsertionPointToStart(ifRow.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{f32(0), f32(-kNegInf)});
  }
  memref::StoreOp::create(b, loc, ifRow.getResult(0), g.di,
                          ValueRange{bIdx, head, row});
  memref::StoreOp::create(b, loc, ifRow.getResult(1), g.lse2,
                          ValueRange{bIdx, head, row});
}

//===----------------------------------------------------------------------===//
// 2. The main kernel: one key block per CTA
//===----------------------------------------------------------------------===//

/// One query block of `head` against the CTA's keys; `acc` is dK's C
/// fragments (D / 8 of them, 4 values each) then dV's (Dv / 8).
SmallVector<Value> GradBuilder::queryBlockStep(Value head, Value qBlock,
                                               ValueRange acc) {
  const GpuGradConfig &cfg = g.cfg;
  int64_t br = cfg.blockQ;
  Value qStart = mul(qBlock, idx(br));
  copyRows(qs, g.query, head, qStart, g.lq, br, g.d);
  copyRows(dos, g.dOut, head, qStart, g.lq, br, g.dv);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);

  // The thread's query columns 8 n + 2 t + c: their base-2 lse and Di (the
  // buffers are padded to whole blocks).
  int64_t cols = br / 8;
  SmallVector<Value> lse2(2 * cols), di(2 * cols);
  Value twoT = mul(tq, idx(2));
  for (int64_t n = 0; n < cols; ++n)
    for (int64_t c = 0; c < 2; ++c) {
      Value q = add(qStart, addConst(twoT, 8 * n + c));
      lse2[2 * n + c] =
          memref::LoadOp::create(b, loc, g.lse2, ValueRange{batch, head, q});
      di[2 * n + c] =
          memref::LoadOp::create(b, loc, g.di, ValueRange{batch, head, q});
    }

  // S^T = K.Q^T (rows: the warp's 16 keys; columns: the block's queries).
  Value aRow = add(add(warpKey, lane8), half8);
  SmallVector<Value> kFrags;
  for (int64_t kk = 0; kk < g.d / 16; ++kk)
    kFrags.push_back(ldmatrix(ks, aRow, addConst(quarter8, 16 * kk), 4,
                              /*transpose=*/false));
  SmallVector<Value> p(4 * cols);
  Value scale = f32(g.scaleLog2E);
  for (int64_t n = 0; n < cols; ++n) {
    MmaAccum c = {f32(0), f32(0), f32(0), f32(0)};
    for (int64_t kk = 0; kk < g.d / 16; ++kk)
      c = mma(kFrags[kk],
              ldmatrix(qs, addConst(lane8, 8 * n), addConst(half8, 16 * kk), 2,
                       /*transpose=*/false),
              c);
    // P^T = exp2(s c - lse2): 0 past Lq and for empty rows (lse2 = +inf),
    // for keys past Lk and, with causality, above the diagonal.
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        Value x = math::Exp2Op::create(
            b, loc,
            math::FmaOp::create(
                b, loc, c[2 * r + e], scale,
                arith::NegFOp::create(b, loc, lse2[2 * n + e])));
        Value visible = keyValid[r];
        if (g.diagShift) {
          Value key = add(keyStart, addConst(add(warpKey, gq), 8 * r));
          Value q = add(qStart, addConst(twoT, 8 * n + e));
          visible = arith::AndIOp::create(
              b, loc, visible,
              cmp(arith::CmpIPredicate::sle, key, add(q, g.diagShift)));
        }
        p[4 * n + 2 * r + e] = select(visible, x, f32(0));
      }
  }

  SmallVector<Value> updated(acc.begin(), acc.end());
  int64_t dkFrags = g.d / 8, dvFrags = g.dv / 8;
  // dV += P^T.dO: P^T's C fragments of queries 16u..16u+15 are the A
  // fragment of k-step u; dO's B fragments come transposed.
  for (int64_t u = 0; u < br / 16; ++u) {
    Value pFrag =
        packAFragment(b, loc, g.elt, ArrayRef<Value>(p).slice(8 * u, 8));
    Value bRow = add(addConst(lane8, 16 * u), half8);
    for (int64_t nd = 0; nd < dvFrags; ++nd) {
      MmaAccum c;
      for (int64_t k = 0; k < 4; ++k)
        c[k] = updated[4 * (dkFrags + nd) + k];
      c = mma(pFrag, ldmatrix(dos, bRow, idx(8 * nd), 2, /*transpose=*/true),
              c);
      for (int64_t k = 0; k < 4; ++k)
        updated[4 * (dkFrags + nd) + k] = c[k];
    }
  }

  // dP^T = V.dO^T, then dS^T = P^T o (dP^T - Di).
  SmallVector<Value> vFrags;
  for (int64_t kk = 0; kk < g.dv / 16; ++kk)
    vFrags.push_back(ldmatrix(vs, aRow, addConst(quarter8, 16 * kk), 4,
                              /*transpose=*/false));
  SmallVector<Value> ds(4 * cols);
  for (int64_t n = 0; n < cols; ++n) {
    MmaAccum c = {f32(0), f32(0), f32(0), f32(0)};
    for (int64_t kk = 0; kk < g.dv / 16; ++kk)
      c = mma(vFrags[kk],
              ldmatrix(dos, addConst(lane8, 8 * n), addConst(half8, 16 * kk), 2,
                       /*transpose=*/false),
              c);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        int64_t k = 4 * n + 2 * r + e;
        ds[k] = fmul(p[k], fsub(c[2 * r + e], di[2 * n + e]));
      }
  }

  // dK += dS^T.Q (scaled once, at the end).
  for (int64_t u = 0; u < br / 16; ++u) {
    Value dsFrag =
        packAFragment(b, loc, g.elt, ArrayRef<Value>(ds).slice(8 * u, 8));
    Value bRow = add(addConst(lane8, 16 * u), half8);
    for (int64_t nd = 0; nd < dkFrags; ++nd) {
      MmaAccum c;
      for (int64_t k = 0; k < 4; ++k)
        c[k] = updated[4 * nd + k];
      c = mma(dsFrag, ldmatrix(qs, bRow, idx(8 * nd), 2, /*transpose=*/true),
              c);
      for (int64_t k = 0; k < 4; ++k)
        updated[4 * nd + k] = c[k];
    }
  }

  // dS (queries x keys) to shared memory, rounded to the element type.
  for (int64_t n = 0; n < cols; ++n)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        Value x = arith::TruncFOp::create(b, loc, g.elt, ds[4 * n + 2 * r + e]);
        memref::StoreOp::create(b, loc, x, dss,
                                ValueRange{addConst(twoT, 8 * n + e),
                                           addConst(add(warpKey, gq), 8 * r)});
      }
  gpu::BarrierOp::create(b, loc);

  // dQ += dS.K: warp w takes rows 16 (w / split) .. + 15 of the block and
  // D / split of the columns, split = warps / (block-q / 16).
  int64_t rowGroups = br / 16, split = cfg.warps / rowGroups;
  int64_t dCols = g.d / split;
  Value qRow0 = mul(divU(warp, split), idx(16));
  Value dBase = mul(remU(warp, split), idx(dCols));
  SmallVector<Value> dsFrags;
  for (int64_t kk = 0; kk < cfg.blockKV / 16; ++kk)
    dsFrags.push_back(ldmatrix(dss, add(add(qRow0, lane8), half8),
                               addConst(quarter8, 16 * kk), 4,
                               /*transpose=*/false));
  for (int64_t nd = 0; nd < dCols / 8; ++nd) {
    MmaAccum c = {f32(0), f32(0), f32(0), f32(0)};
    for (int64_t kk = 0; kk < cfg.blockKV / 16; ++kk)
      c = mma(dsFrags[kk],
              ldmatrix(ks, add(addConst(lane8, 16 * kk), half8),
                       addConst(dBase, 8 * nd), 2, /*transpose=*/true),
              c);
    for (int64_t r = 0; r < 2; ++r) {
      Value q = add(qStart, addConst(add(qRow0, gq), 8 * r));
      ifThen(lt(q, g.lq), [&] {
        for (int64_t e = 0; e < 2; ++e) {
          Value col = add(dBase, addConst(twoT, 8 * nd + e));
          if (cfg.deterministic) {
            Value kb = launch.getBlockIds().x;
            memref::StoreOp::create(b, loc, c[2 * r + e], g.dqAccum,
                                    ValueRange{kb, batch, head, q, col});
          } else {
            memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf,
                                        c[2 * r + e], g.dqAccum,
                                        ValueRange{batch, head, q, col});
          }
        }
      });
    }
  }
  // Every warp is done with Q, dO and dS before the next block's copies.
  gpu::BarrierOp::create(b, loc);
  return updated;
}

void GradBuilder::buildMain(gpu::LaunchOp l) {
  launch = l;
  const GpuGradConfig &cfg = g.cfg;
  gpu::KernelDim3 ids = launch.getBlockIds();
  batch = ids.z;
  kvHead = ids.y;
  keyStart = mul(ids.x, idx(cfg.blockKV));
  tid = launch.getThreadIds().x;
  lane = remU(tid, 32);
  warp = divU(tid, 32);
  gq = divU(lane, 4);
  tq = remU(lane, 4);
  lane8 = remU(lane, 8);
  half8 = mul(remU(divU(lane, 8), 2), idx(8));
  quarter8 = mul(divU(lane, 16), idx(8));
  warpKey = mul(warp, idx(16));
  for (int64_t r = 0; r < 2; ++r)
    keyValid[r] = lt(add(keyStart, addConst(add(warpKey, gq), 8 * r)), g.lk);

  // K, V, Q, dO and dS in dynamic shared memory, rows padded by 16 bytes
  // (ldmatrix's 8 rows in distinct bank groups; every row 16-byte aligned).
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  int64_t offset = 0;
  auto view = [&](int64_t rows, int64_t cols) {
    auto type =
        MemRefType::get({rows, cols + 8}, g.elt, AffineMap(), workgroup);
    Value tile =
        memref::ViewOp::create(b, loc, type, base, idx(offset), ValueRange{});
    offset += type.getNumElements() * g.elt.getIntOrFloatBitWidth() / 8;
    return tile;
  };
  ks = view(cfg.blockKV, g.d);
  vs = view(cfg.blockKV, g.dv);
  qs = view(cfg.blockQ, g.d);
  dos = view(cfg.blockQ, g.dv);
  dss = view(cfg.blockQ, cfg.blockKV);

  copyRows(ks, g.key, kvHead, keyStart, g.lk, cfg.blockKV, g.d);
  copyRows(vs, g.value, kvHead, keyStart, g.lk, cfg.blockKV, g.dv);
  NVVM::CpAsyncCommitGroupOp::create(b, loc);

  SmallVector<Value> init(4 * (g.d / 8 + g.dv / 8), f32(0));
  Value firstBlock = firstQueryBlock(keyStart);
  SmallVector<Value> acc =
      loop(idx(0), idx(g.group), 1, init, [&](Value h, ValueRange state) {
        Value head = add(mul(kvHead, idx(g.group)), h);
        return loop(firstBlock, g.rowBlocks, 1, state,
                    [&](Value qBlock, ValueRange s) {
                      return queryBlockStep(head, qBlock, s);
                    });
      });
  // No copy outlives the kernel (with no query block, K and V are in flight).
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);

  // dK (times the scale) and dV, for the thread's keys below Lk.
  Value twoT = mul(tq, idx(2));
  int64_t dkFrags = g.d / 8;
  for (int64_t r = 0; r < 2; ++r) {
    Value key = add(keyStart, addConst(add(warpKey, gq), 8 * r));
    ifThen(keyValid[r], [&] {
      for (int64_t nd = 0; nd < dkFrags + g.dv / 8; ++nd)
        for (int64_t e = 0; e < 2; ++e) {
          bool isK = nd < dkFrags;
          Value x = acc[4 * nd + 2 * r + e];
          if (isK)
            x = fmul(x, f32(g.scale));
          x = arith::TruncFOp::create(b, loc, g.elt, x);
          Value col = addConst(twoT, 8 * (isK ? nd : nd - dkFrags) + e);
          memref::StoreOp::create(b, loc, x, isK ? g.dKey : g.dValue,
                                  ValueRange{batch, kvHead, key, col});
        }
    });
  }
}

//===----------------------------------------------------------------------===//
// 3. dQ: scaled and rounded
//===----------------------------------------------------------------------===//

void GradBuilder::buildConvert(gpu::LaunchOp launch) {
  const GpuGradConfig &cfg = g.cfg;
  gpu::KernelDim3 ids = launch.getBlockIds();
  Value bIdx = ids.z, head = ids.y, qBlock = ids.x;
  Value qStart = mul(qBlock, idx(cfg.blockQ));
  Value tid = launch.getThreadIds().x;
  // The key blocks whose partials hold this block's rows: those whose first
  // query block (firstQueryBlock) is at most qBlock: kb * block-kv <
  // (qBlock + 1) * block-q + shift.
  Value keyBlockEnd = g.keyBlocks;
  if (cfg.deterministic && g.diagShift) {
    Value end = arith::CeilDivSIOp::create(
        b, loc, add(mul(addConst(qBlock, 1), idx(cfg.blockQ)), g.diagShift),
        idx(cfg.blockKV));
    keyBlockEnd = minS(maxS(end, idx(0)), g.keyBlocks);
  }
  int64_t threads = cfg.threads();
  loop(idx(0), idx(cfg.blockQ * g.d), threads, {}, [&](Value base, ValueRange) {
    Value e = add(base, tid);
    Value q = add(qStart, divU(e, g.d));
    Value col = remU(e, g.d);
    ifThen(lt(q, g.lq), [&] {
      Value sum;
      if (cfg.deterministic) {
        sum = loop(idx(0), keyBlockEnd, 1, ValueRange{f32(0)},
                   [&](Value kb, ValueRange s) -> SmallVector<Value> {
                     Value x = memref::LoadOp::create(
                         b, loc, g.dqAccum, ValueRange{kb, bIdx, head, q, col});
                     return {arith::AddFOp::create(b, loc, s[0], x)};
                   })[0];
      } else {
        sum = memref::LoadOp::create(b, loc, g.dqAccum,
                                     ValueRange{bIdx, head, q, col});
      }
      Value x = arith::TruncFOp::create(b, loc, g.elt, fmul(sum, f32(g.scale)));
      memref::StoreOp::create(b, loc, x, g.dQuery,
                              ValueRange{bIdx, head, q, col});
    });
    return SmallVector<Value>{};
  });
}

//===----------------------------------------------------------------------===//
// The plan and the pattern
//===----------------------------------------------------------------------===//

int64_t gpu_kernels::gradSharedBytes(int64_t d, int64_t dv, Type elt,
                                     const GpuGradConfig &cfg) {
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  return bytes * (cfg.blockKV * (d + 8) + cfg.blockKV * (dv + 8) +
                  cfg.blockQ * (d + 8) + cfg.blockQ * (dv + 8) +
                  cfg.blockQ * (cfg.blockKV + 8));
}

FailureOr<GpuGradConfig>
gpu_kernels::planSdpaGrad(SdpaGradOp op,
                          const ConvertAttnToGpuOptions &options) {
  std::optional<unsigned> sm = smOfChip(options.chip);
  if (!sm)
    return op.emitOpError("convert-attn-to-gpu: expected chip sm_XX with XX "
                          ">= 80 (mma.sync, ldmatrix, cp.async), got '")
           << options.chip << "'";
  if (op.getMask())
    return op.emitOpError(
        "convert-attn-to-gpu: the GPU backward takes no mask yet (attn.sdpa_"
        "grad with a mask runs on the CPU pipelines)");
  auto qType = cast<RankedTensorType>(op.getQuery().getType());
  auto vType = cast<RankedTensorType>(op.getValue().getType());
  Type elt = qType.getElementType();
  if (!elt.isF16() && !elt.isBF16())
    return op.emitOpError("convert-attn-to-gpu: the GPU backward takes f16 "
                          "and bf16 (tensor cores), got ")
           << elt << " (f32 attn.sdpa_grad runs on the CPU pipelines)";
  int64_t d = qType.getDimSize(3), dv = vType.getDimSize(3);
  for (auto [name, size] : {std::pair<StringRef, int64_t>{"D", d}, {"Dv", dv}})
    if (!llvm::is_contained(kGradHeadDims, size))
      return op.emitOpError("convert-attn-to-gpu: head dim ")
             << name << " (" << size
             << ") is not supported by the GPU backward: expected 32, 64, 80, "
                "96 or 128";
  GpuGradConfig cfg;
  // dK and dV stay in registers (D / 2 + Dv / 2 per thread) beside P^T and
  // dS^T (block-q / 2 each): 32 query rows per block past 64 columns.
  // ptxas -v: no spills on sm_80 or sm_90 (sdpa-grad-to-ptx.mlir).
  cfg.blockQ = std::max(d, dv) > 64 ? 32 : 64;
  cfg.deterministic = options.deterministic;
  if (int64_t bytes = gradSharedBytes(d, dv, elt, cfg);
      bytes > chipSharedMemory(*sm) - 16)
    return op.emitOpError("convert-attn-to-gpu: the backward's tiles need ")
           << bytes << " bytes of shared memory, more than " << options.chip
           << " has";
  return cfg;
}

namespace {

Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor);
}

/// A buffer like the tensor type `like` (its dynamic dims from `buffer`).
Value allocLike(OpBuilder &b, Location loc, Value like) {
  auto type = cast<MemRefType>(like.getType());
  SmallVector<Value> sizes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(memref::DimOp::create(b, loc, like, dim));
  return memref::AllocOp::create(b, loc, type, sizes);
}

struct SdpaGradToGpu : public OpRewritePattern<SdpaGradOp> {
  SdpaGradToGpu(MLIRContext *context, const ConvertAttnToGpuOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(SdpaGradOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<GpuGradConfig> cfg = planSdpaGrad(op, options);
    if (failed(cfg))
      return rewriter.notifyMatchFailure(op, "not supported by the kernels");
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    GpuGrad g{loc};
    g.cfg = *cfg;
    g.query = toBuffer(b, loc, op.getQuery());
    g.key = toBuffer(b, loc, op.getKey());
    g.value = toBuffer(b, loc, op.getValue());
    g.out = toBuffer(b, loc, op.getOut());
    g.lse = toBuffer(b, loc, op.getLse());
    g.dOut = toBuffer(b, loc, op.getDOut());
    auto qType = cast<RankedTensorType>(op.getQuery().getType());
    g.hq = qType.getDimSize(1);
    g.group = op.getGroupSize();
    g.d = qType.getDimSize(3);
    g.dv = cast<RankedTensorType>(op.getValue().getType()).getDimSize(3);
    g.elt = qType.getElementType();
    g.scale = op.getEffectiveScale();
    g.scaleLog2E = static_cast<float>(static_cast<double>(g.scale) * kLog2E);
    auto c = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    g.batch = memref::DimOp::create(b, loc, g.query, 0);
    g.lq = memref::DimOp::create(b, loc, g.query, 2);
    g.lk = memref::DimOp::create(b, loc, g.key, 2);
    g.rowBlocks = arith::CeilDivUIOp::create(b, loc, g.lq, c(g.cfg.blockQ));
    g.keyBlocks = arith::CeilDivUIOp::create(b, loc, g.lk, c(g.cfg.blockKV));
    // The causal rule (attn.sdpa_grad has no window): a band with a right
    // edge at 0 from the diagonal.
    if (std::optional<VisibleBand> band = getVisibleBand(op))
      g.diagShift = band->isBottomRight()
                        ? arith::SubIOp::create(b, loc, g.lk, g.lq).getResult()
                        : c(0);
    g.dQuery = allocLike(b, loc, g.query);
    g.dKey = allocLike(b, loc, g.key);
    g.dValue = allocLike(b, loc, g.value);
    Type f32 = b.getF32Type();
    int64_t dyn = ShapedType::kDynamic;
    Value paddedRows =
        arith::MulIOp::create(b, loc, g.rowBlocks, c(g.cfg.blockQ));
    auto rowsType = MemRefType::get({dyn, g.hq, dyn}, f32);
    g.di = memref::AllocOp::create(b, loc, rowsType,
                                   ValueRange{g.batch, paddedRows});
    g.lse2 = memref::AllocOp::create(b, loc, rowsType,
                                     ValueRange{g.batch, paddedRows});
    if (g.cfg.deterministic)
      g.dqAccum = memref::AllocOp::create(
          b, loc, MemRefType::get({dyn, dyn, g.hq, dyn, g.d}, f32),
          ValueRange{g.keyBlocks, g.batch, g.lq});
    else
      g.dqAccum = memref::AllocOp::create(
          b, loc, MemRefType::get({dyn, g.hq, dyn, g.d}, f32),
          ValueRange{g.batch, g.lq});

    // A grid with no block is an invalid launch: each kernel runs only where
    // its grid has one (no batch, no query row or no key).
    Value zero = c(0), one = c(1);
    auto nonEmpty = [&](Value blocks) {
      return arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, blocks,
                                zero),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, g.batch,
                                zero));
    };
    auto launchIf = [&](Value blocks, Value heads, int64_t threads,
                        Value sharedBytes,
                        function_ref<void(GradBuilder &, gpu::LaunchOp)> body) {
      auto ifOp = scf::IfOp::create(b, loc, nonEmpty(blocks),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      auto launch = gpu::LaunchOp::create(b, loc, blocks, heads, g.batch,
                                          c(threads), one, one, sharedBytes);
      b.setInsertionPointToStart(&launch.getBody().front());
      GradBuilder builder(b, g);
      body(builder, launch);
      gpu::TerminatorOp::create(b, loc);
    };
    Value hq = c(g.hq), hkv = c(g.hq / g.group);
    launchIf(g.rowBlocks, hq, g.cfg.blockQ, nullptr,
             [](GradBuilder &gb, gpu::LaunchOp l) { gb.buildPreprocess(l); });
    Value shared = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(), gradSharedBytes(g.d, g.dv, g.elt, g.cfg));
    launchIf(g.keyBlocks, hkv, g.cfg.threads(), shared,
             [](GradBuilder &gb, gpu::LaunchOp l) { gb.buildMain(l); });
    launchIf(g.rowBlocks, hq, g.cfg.threads(), nullptr,
             [](GradBuilder &gb, gpu::LaunchOp l) { gb.buildConvert(l); });
    for (Value scratch : {g.di, g.lse2, g.dqAccum})
      memref::DeallocOp::create(b, loc, scratch);

    SmallVector<Value> results;
    for (auto [buffer, tensor] : {std::pair{g.dQuery, op.getQuery()},
                                  {g.dKey, op.getKey()},
                                  {g.dValue, op.getValue()}})
      results.push_back(bufferization::ToTensorOp::create(
          b, loc, tensor.getType(), buffer, /*restrict=*/true,
          /*writable=*/true));
    replaceOpWithCastValues(rewriter, op, results);
    return success();
  }

  ConvertAttnToGpuOptions options;
};

} // namespace

void gpu_kernels::populateSdpaGradToGpuPatterns(
    RewritePatternSet &patterns, const ConvertAttnToGpuOptions &options) {
  patterns.add<SdpaGradToGpu>(patterns.getContext(), options);
}
