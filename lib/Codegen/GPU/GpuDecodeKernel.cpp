//===- GpuDecodeKernel.cpp - split-K decode kernels of convert-attn-to-gpu ===//
//
// Part of the attn project.
//
// Few query rows (decoding: static Lq with Lq * group <= decode-rows): the
// rows of the query heads that share one K/V head are the rows of one CTA
// (row rho = i * group + g: query row i of head kvHead * group + g), so K and
// V are read once per group, and the keys are split across CTAs
// (flash-decoding) when B * Hkv alone would leave the chip idle (at most
// kMaxDecodeRowsPerCta rows per CTA):
//  - the split kernel: grid (splits, Hkv * row blocks, B), 128 threads,
//    walks its split's keys in chunks of keysPerChunk. One stage (default):
//    a chunk's K rows go to shared memory by cp.async (zero-filled past the
//    split); thread t scores key t; V rows are read coalesced from global
//    memory, valueUnroll keys per loop iteration. Two stages: the K and V
//    rows of chunk c + 1 are copied while chunk c is computed (wait_group
//    1), threadsPerKey threads share a key's dot product (summed by
//    shuffles), V is read from shared memory. Either way: 16-byte reads of
//    the K row and the scaled Q rows, row maxima by shuffles and shared
//    memory, probabilities in shared memory, thread t accumulates value
//    columns t, t + 128 of every row, row sums reduced once at the end. One
//    split writes out and lse itself; more write each row's normalized f32
//    output and base-2 lse of the split;
//  - the merge kernel (only with more than one split): grid (Lq, Hq, B),
//    one thread per value column: lse = log sum_s exp(lse_s), out =
//    sum_s exp(lse_s - lse) out_s; a split that saw no key weighs 0, a row
//    that saw none gives 0 and lse -inf.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

namespace {
/// Elements of one 16-byte copy or vector read.
int64_t perVector(Type elt) { return 128 / elt.getIntOrFloatBitWidth(); }
/// The shared row length of a K chunk: padded by 16 bytes, so that the 8
/// threads of one 16-byte-read phase hit distinct bank groups.
int64_t keyRowLength(const GpuSdpa &sdpa) {
  return sdpa.d + perVector(sdpa.elt);
}
/// Layout of the split kernel's dynamic shared memory (byte offsets).
struct DecodeShared {
  int64_t keys, values, query, probs, partials, total;
};
/// Threads that share one key's dot product (each a slice of D, summed by
/// shuffles): the CTA's threads over the chunk's keys, a power of two that
/// divides D's 16-byte vectors.
int64_t threadsPerKey(const GpuSdpa &sdpa, const DecodeConfig &cfg) {
  if (cfg.stages == 1)
    return 1;
  int64_t t = std::max<int64_t>(1, cfg.threads / cfg.keysPerChunk);
  t = int64_t(1) << llvm::Log2_64(t);
  while ((sdpa.d / perVector(sdpa.elt)) % t)
    t /= 2;
  return std::min<int64_t>(t, 32);
}
DecodeShared decodeShared(const GpuSdpa &sdpa, const DecodeConfig &cfg) {
  DecodeShared s;
  int64_t bytes = sdpa.elt.getIntOrFloatBitWidth() / 8;
  // stages = 1: one chunk of K (V read from global memory); 2: two chunks
  // of K and of V.
  int64_t rows = cfg.stages * cfg.keysPerChunk;
  s.keys = 0;
  s.values = s.keys + rows * keyRowLength(sdpa) * bytes;
  s.query = s.values + (cfg.stages == 2 ? rows * sdpa.dv * bytes : 0);
  s.probs = s.query + cfg.rowsPerCta * sdpa.d * 4;
  s.partials = s.probs + cfg.rowsPerCta * cfg.keysPerChunk * 4;
  s.total = s.partials + cfg.rowsPerCta * (cfg.threads / 32) * 4;
  return s;
}
} // namespace

int64_t gpu_kernels::decodeSharedBytes(const GpuSdpa &sdpa,
                                       const DecodeConfig &cfg) {
  return decodeShared(sdpa, cfg).total;
}

bool gpu_kernels::decodeTakes(const GpuSdpa &sdpa, int64_t stages) {
  return sdpa.d % perVector(sdpa.elt) == 0 &&
         (stages == 1 || sdpa.dv % perVector(sdpa.elt) == 0);
}

namespace {

/// Builds both kernels and the host code that launches them.
class GpuDecodeBuilder : GpuIrBuilder {
public:
  GpuDecodeBuilder(OpBuilder &b, const GpuSdpa &sdpa, const DecodeConfig &cfg)
      : GpuIrBuilder(b, sdpa.loc), sdpa(sdpa), cfg(cfg) {}

  void buildHost();

private:
  Value warpReduce(Value x, bool isMax);
  Value ctaReduce(Value x, int64_t r, bool isMax);

  /// Row `r` of the CTA: whether it exists, its head and query row.
  struct Row {
    Value valid, head, i;
    GpuSequence seq;
  };
  Row rowAt(Value rho);
  void buildSplitKernel(gpu::LaunchOp launch);
  void buildMergeKernel(gpu::LaunchOp launch);

  const GpuSdpa &sdpa;
  const DecodeConfig &cfg;

  // Host values the kernels read.
  Value splits, partOut, partLse;
  // Per-CTA values of the split kernel.
  Value batch, kvHead, tid, lane, warp, redBuf;
  /// Lq * group rows per K/V head, in blocks of rowsPerCta.
  Value rows, rowBlocks;
};

} // namespace

Value GpuDecodeBuilder::warpReduce(Value x, bool isMax) {
  for (int32_t offset : {16, 8, 4, 2, 1}) {
    Value other =
        gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, other).getResult()
              : arith::AddFOp::create(b, loc, x, other).getResult();
  }
  return x;
}

/// Reduces `x` over the CTA: each warp's lane 0 writes its warp's value to
/// row `r` of the partials buffer. The caller puts a barrier between the
/// writes (of every row) and ctaCombine's reads.
Value GpuDecodeBuilder::ctaReduce(Value x, int64_t r, bool isMax) {
  x = warpReduce(x, isMax);
  ifThen(cmp(arith::CmpIPredicate::eq, lane, idx(0)), [&] {
    memref::StoreOp::create(b, loc, x, redBuf, ValueRange{idx(r), warp});
  });
  return x;
}

GpuDecodeBuilder::Row GpuDecodeBuilder::rowAt(Value rho) {
  Row row;
  row.valid = cmp(arith::CmpIPredicate::ult, rho, rows);
  Value clamped = minU(rho, sub(rows, idx(1)));
  Value group = idx(sdpa.group);
  row.i = arith::DivUIOp::create(b, loc, clamped, group);
  row.head =
      add(mul(kvHead, group), arith::RemUIOp::create(b, loc, clamped, group));
  return row;
}

void GpuDecodeBuilder::buildSplitKernel(gpu::LaunchOp launch) {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  Value split = blockIds.x;
  batch = blockIds.z;
  Value rowBlock = arith::RemUIOp::create(b, loc, blockIds.y, rowBlocks);
  kvHead = arith::DivUIOp::create(b, loc, blockIds.y, rowBlocks);
  tid = launch.getThreadIds().x;
  lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  warp = arith::DivUIOp::create(b, loc, tid, idx(32));
  const int64_t rb = cfg.rowsPerCta, ck = cfg.keysPerChunk, nt = cfg.threads;
  const int64_t vec = perVector(sdpa.elt);
  const int64_t warps = nt / 32;
  const int64_t cols = llvm::divideCeil(sdpa.dv, nt);

  // Shared memory: the K chunk, the scaled Q rows (f32), the chunk's
  // probabilities (f32) and one value per (row, warp) for reductions.
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  DecodeShared layout = decodeShared(sdpa, cfg);
  auto view = [&](ArrayRef<int64_t> shape, Type elt, int64_t at) -> Value {
    auto type = MemRefType::get(shape, elt, AffineMap(), workgroup);
    return memref::ViewOp::create(b, loc, type, base, idx(at), ValueRange{});
  };
  Type f32Type = b.getF32Type();
  // `stages` chunks of ck K rows (and with two stages of V rows): stage s
  // holds rows [s ck, s ck + ck).
  const bool pipelined = cfg.stages == 2;
  const int64_t stageRows = cfg.stages * ck;
  Value ks = view({stageRows, keyRowLength(sdpa)}, sdpa.elt, layout.keys);
  Value vs =
      pipelined ? view({stageRows, sdpa.dv}, sdpa.elt, layout.values) : Value();
  Value qs = view({rb, sdpa.d}, f32Type, layout.query);
  // The same K and Q as 16-byte vectors, for the reads: memref.load of a
  // vector element lowers (with the workgroup address space) to one
  // 16-byte shared load.
  auto kVec = VectorType::get({vec}, sdpa.elt);
  auto qVec = VectorType::get({4}, f32Type);
  Value ksVec = view({stageRows, keyRowLength(sdpa) / vec}, kVec, layout.keys);
  Value qsVec = view({rb, sdpa.d / 4}, qVec, layout.query);
  Value ps = view({rb, ck}, f32Type, layout.probs);
  redBuf = view({rb, warps}, f32Type, layout.partials);

  // The CTA's rows.
  Value firstRho = mul(rowBlock, idx(rb));
  SmallVector<Row> rowList;
  for (int64_t r = 0; r < rb; ++r) {
    Row row = rowAt(add(firstRho, idx(r)));
    row.seq = locateSequence(b, sdpa, batch, row.head);
    rowList.push_back(row);
  }

  // Q rows, scaled into base-2 units (0 for rows past the last).
  Value scale = f32(sdpa.scaleLog2E);
  scf::ForOp::create(
      b, loc, tid, idx(rb * sdpa.d), idx(nt), ValueRange{},
      [&](OpBuilder &, Location, Value e, ValueRange) {
        Value r = arith::DivUIOp::create(b, loc, e, idx(sdpa.d));
        Value dd = arith::RemUIOp::create(b, loc, e, idx(sdpa.d));
        Row row = rowAt(add(firstRho, r));
        Value q = memref::LoadOp::create(
            b, loc, sdpa.query, ValueRange{batch, row.head, row.i, dd});
        q = arith::MulFOp::create(b, loc, toF32(q), scale);
        q = select(row.valid, q, f32(0));
        memref::StoreOp::create(b, loc, q, qs, ValueRange{r, dd});
        scf::YieldOp::create(b, loc);
      });

  // The keys some row of the CTA may see, cut into `splits` runs of whole
  // chunks: this CTA's run is [splitBegin, splitEnd).
  Value lastRho = minU(add(firstRho, idx(rb - 1)), sub(rows, idx(1)));
  Value lastI = arith::DivUIOp::create(b, loc, lastRho, idx(sdpa.group));
  const GpuSequence &seq = rowList.front().seq;
  KeySpan span = keySpan(b, sdpa, seq, rowList.front().i, lastI);
  Value spanLen = sub(span.end, span.begin);
  Value perSplit = mul(
      arith::CeilDivUIOp::create(
          b, loc, arith::CeilDivUIOp::create(b, loc, spanLen, splits), idx(ck)),
      idx(ck));
  Value splitBegin = minU(add(span.begin, mul(split, perSplit)), span.end);
  Value splitEnd = minU(add(splitBegin, perSplit), span.end);
  Value chunks =
      arith::CeilDivUIOp::create(b, loc, sub(splitEnd, splitBegin), idx(ck));

  // State: row max (uniform over the CTA), this thread's partial row sums,
  // and the accumulators of its value columns.
  SmallVector<Value> init;
  for (int64_t r = 0; r < rb; ++r)
    init.push_back(f32(kNegInf));
  for (int64_t r = 0; r < rb * (1 + cols); ++r)
    init.push_back(f32(0));
  auto colOf = [&](int64_t c) { return add(tid, idx(c * nt)); };
  auto clampedCol = [&](int64_t c) { return minU(colOf(c), idx(sdpa.dv - 1)); };
  auto accIndex = [&](int64_t r, int64_t c) { return 2 * rb + r * cols + c; };
  // cp.async of the K (and with two stages V) rows of the chunk at
  // `chunkStart` into stage `stage`, zero-filled past the split's keys (so
  // that a dead key's V row is 0, not whatever the buffer held).
  SmallVector<std::tuple<Value, Value, int64_t>> staged = {
      {ks, sdpa.key, sdpa.d}};
  if (pipelined)
    staged.push_back({vs, sdpa.value, sdpa.dv});
  auto issueChunk = [&](Value chunkStart, Value stage) {
    Value chunkKeys = minU(idx(ck), sub(splitEnd, chunkStart));
    Value rowBase = mul(stage, idx(ck));
    for (auto [dst, src, width] : staged) {
      int64_t perRow = width / vec, copies = ck * perRow;
      for (int64_t first = 0; first < copies; first += nt) {
        Value copy = add(tid, idx(first));
        auto emit = [&, dst = dst, src = src] {
          Value row = arith::DivUIOp::create(b, loc, copy, idx(perRow));
          Value col =
              mul(arith::RemUIOp::create(b, loc, copy, idx(perRow)), idx(vec));
          Value inBounds = cmp(arith::CmpIPredicate::ult, row, chunkKeys);
          Value key = select(inBounds, add(chunkStart, row), chunkStart);
          nvgpu::DeviceAsyncCopyOp::create(
              b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst,
              ValueRange{add(rowBase, row), col}, src,
              ValueRange{batch, kvHead, key, col}, b.getIndexAttr(vec),
              select(inBounds, idx(vec), idx(0)), UnitAttr());
        };
        if (first + nt <= copies)
          emit();
        else
          ifThen(cmp(arith::CmpIPredicate::ult, copy, idx(copies)), emit);
      }
    }
  };
  // Two stages: the first chunk's copies here; each iteration then issues
  // the next chunk's into the other stage before it waits for its own
  // (double buffering). One stage: each iteration copies its own chunk.
  if (pipelined) {
    ifThen(cmp(arith::CmpIPredicate::ugt, chunks, idx(0)),
           [&] { issueChunk(splitBegin, idx(0)); });
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  const int64_t tpk = threadsPerKey(sdpa, cfg);
  const int64_t dPart = sdpa.d / tpk;
  Value keyLocal = arith::DivUIOp::create(b, loc, tid, idx(tpk));
  Value part = arith::RemUIOp::create(b, loc, tid, idx(tpk));
  Value firstPart = cmp(arith::CmpIPredicate::eq, part, idx(0));
  auto loop = scf::ForOp::create(
      b, loc, idx(0), chunks, idx(1), init,
      [&](OpBuilder &, Location, Value chunk, ValueRange state) {
        Value chunkStart = add(splitBegin, mul(chunk, idx(ck)));
        Value chunkKeys = minU(idx(ck), sub(splitEnd, chunkStart));
        Value stage = idx(0);
        if (pipelined) {
          stage = arith::RemUIOp::create(b, loc, chunk, idx(2));
          Value nextChunk = add(chunk, idx(1));
          ifThen(cmp(arith::CmpIPredicate::ult, nextChunk, chunks), [&] {
            issueChunk(add(chunkStart, idx(ck)), sub(idx(1), stage));
          });
        } else {
          issueChunk(chunkStart, stage);
        }
        Value stageRow = mul(stage, idx(ck));
        NVVM::CpAsyncCommitGroupOp::create(b, loc);
        NVVM::CpAsyncWaitGroupOp::create(b, loc, pipelined ? 1 : 0);
        gpu::BarrierOp::create(b, loc);

        // Scores of key keyLocal against every row: tpk threads each take
        // a slice of D (16-byte vector reads), summed by shuffles.
        Value keyRow = add(stageRow, minU(keyLocal, idx(ck - 1)));
        Value key = add(chunkStart, keyLocal);
        Value live = cmp(arith::CmpIPredicate::ult, keyLocal, chunkKeys);
        SmallVector<Value> zeros(rb, f32(0));
        Value dBegin = mul(part, idx(dPart));
        auto dot = scf::ForOp::create(
            b, loc, dBegin, add(dBegin, idx(dPart)), idx(vec), zeros,
            [&](OpBuilder &, Location, Value dd, ValueRange acc) {
              Value k = memref::LoadOp::create(
                  b, loc, ksVec,
                  ValueRange{keyRow,
                             arith::DivUIOp::create(b, loc, dd, idx(vec))});
              if (!sdpa.elt.isF32())
                k = arith::ExtFOp::create(b, loc,
                                          VectorType::get({vec}, f32Type), k);
              SmallVector<Value> kElts;
              for (int64_t e = 0; e < vec; ++e)
                kElts.push_back(vector::ExtractOp::create(b, loc, k, e));
              SmallVector<Value> next;
              for (int64_t r = 0; r < rb; ++r) {
                Value s = acc[r];
                for (int64_t e0 = 0; e0 < vec; e0 += 4) {
                  Value q = memref::LoadOp::create(
                      b, loc, qsVec,
                      ValueRange{idx(r),
                                 arith::DivUIOp::create(
                                     b, loc, add(dd, idx(e0)), idx(4))});
                  for (int64_t e = 0; e < 4; ++e)
                    s = math::FmaOp::create(
                        b, loc, vector::ExtractOp::create(b, loc, q, e),
                        kElts[e0 + e], s);
                }
                next.push_back(s);
              }
              scf::YieldOp::create(b, loc, next);
            });
        Value safeKey = select(live, key, chunkStart);
        SmallVector<Value> scores;
        for (int64_t r = 0; r < rb; ++r) {
          const Row &row = rowList[r];
          Value s = dot.getResult(r);
          for (int32_t offset = tpk / 2; offset >= 1; offset /= 2)
            s = arith::AddFOp::create(
                b, loc, s,
                gpu::ShuffleOp::create(b, loc, s, offset, 32,
                                       gpu::ShuffleMode::XOR)
                    .getShuffleResult());
          if (sdpa.modifiesScores()) {
            Value diagMinusKey;
            if (row.seq.alibiShift)
              diagMinusKey = indexToF32(
                  b, loc, sub(add(row.i, row.seq.alibiShift), safeKey));
            s = modifyScore(b, sdpa, row.seq, s, diagMinusKey);
          }
          Value visible = live;
          if (sdpa.mask) {
            Value m = readMask(b, sdpa, batch, row.head, row.i, safeKey);
            if (sdpa.boolMask)
              visible = arith::AndIOp::create(b, loc, visible, m);
            else
              s = arith::AddFOp::create(b, loc, s, m);
          }
          visible = arith::AndIOp::create(
              b, loc, visible, keyVisible(b, sdpa, row.seq, row.i, safeKey));
          scores.push_back(select(visible, s, f32(kNegInf)));
        }

        // The chunk's row maxima, then the probabilities of key keyLocal
        // (counted in the row sum and stored by its first thread).
        for (int64_t r = 0; r < rb; ++r)
          ctaReduce(scores[r], r, /*isMax=*/true);
        gpu::BarrierOp::create(b, loc);
        SmallVector<Value> next(state.begin(), state.end());
        SmallVector<Value> alphas;
        for (int64_t r = 0; r < rb; ++r) {
          Value chunkMax = f32(kNegInf);
          for (int64_t w = 0; w < warps; ++w)
            chunkMax = arith::MaximumFOp::create(
                b, loc, chunkMax,
                memref::LoadOp::create(b, loc, redBuf,
                                       ValueRange{idx(r), idx(w)}));
          auto [mNew, alpha] = updateRowMax(b, loc, state[r], chunkMax);
          Value p = probability(b, loc, scores[r], mNew);
          next[r] = mNew;
          next[rb + r] = math::FmaOp::create(b, loc, state[rb + r], alpha,
                                             select(firstPart, p, f32(0)));
          alphas.push_back(alpha);
          Value owner = firstPart;
          if (ck * tpk < nt)
            owner = arith::AndIOp::create(
                b, loc, owner,
                cmp(arith::CmpIPredicate::ult, keyLocal, idx(ck)));
          ifThen(owner, [&] {
            memref::StoreOp::create(b, loc, p, ps,
                                    ValueRange{idx(r), keyLocal});
          });
        }
        gpu::BarrierOp::create(b, loc);

        // P.V: thread t's value columns, of the stage's V rows (two stages)
        // or of V's rows in global memory, read coalesced (one stage).
        SmallVector<Value> acc;
        for (int64_t r = 0; r < rb; ++r)
          for (int64_t c = 0; c < cols; ++c)
            acc.push_back(arith::MulFOp::create(b, loc, state[accIndex(r, c)],
                                                alphas[r]));
        SmallVector<Value> columns;
        for (int64_t c = 0; c < cols; ++c)
          columns.push_back(clampedCol(c));
        // Keys [j0, j0 + n): their V values first (n loads in flight per
        // thread), then the FMAs in key order.
        auto pvKeys = [&](Value j0, int64_t n, ValueRange a) {
          SmallVector<Value> keys, v, updated(a.begin(), a.end());
          for (int64_t u = 0; u < n; ++u)
            keys.push_back(u ? add(j0, idx(u)) : j0);
          for (Value j : keys) {
            Value row = add(pipelined ? stageRow : chunkStart, j);
            for (Value col : columns)
              v.push_back(toF32(memref::LoadOp::create(
                  b, loc, pipelined ? vs : sdpa.value,
                  pipelined ? ValueRange{row, col}
                            : ValueRange{batch, kvHead, row, col})));
          }
          for (int64_t u = 0; u < n; ++u)
            for (int64_t r = 0; r < rb; ++r) {
              Value p = memref::LoadOp::create(b, loc, ps,
                                               ValueRange{idx(r), keys[u]});
              for (int64_t c = 0; c < cols; ++c)
                updated[r * cols + c] = math::FmaOp::create(
                    b, loc, p, v[u * cols + c], updated[r * cols + c]);
            }
          return updated;
        };
        // One stage reads V from global memory: cfg.valueUnroll keys per
        // iteration, then the chunk's last keys one by one.
        const int64_t unroll = pipelined ? 1 : cfg.valueUnroll;
        Value mainEnd = idx(0); // where the one-by-one loop starts
        if (unroll > 1) {
          mainEnd = mul(arith::DivUIOp::create(b, loc, chunkKeys, idx(unroll)),
                        idx(unroll));
          auto unrolled = scf::ForOp::create(
              b, loc, idx(0), mainEnd, idx(unroll), acc,
              [&](OpBuilder &, Location, Value j0, ValueRange a) {
                scf::YieldOp::create(b, loc, pvKeys(j0, unroll, a));
              });
          acc = llvm::to_vector_of<Value>(unrolled.getResults());
        }
        auto pv = scf::ForOp::create(
            b, loc, mainEnd, chunkKeys, idx(1), acc,
            [&](OpBuilder &, Location, Value j, ValueRange a) {
              scf::YieldOp::create(b, loc, pvKeys(j, 1, a));
            });
        for (int64_t r = 0; r < rb * cols; ++r)
          next[2 * rb + r] = pv.getResult(r);
        // Every thread is done with the stage's K and V rows, the
        // probabilities and maxima before the next iteration's copies and
        // writes overwrite them.
        gpu::BarrierOp::create(b, loc);
        scf::YieldOp::create(b, loc, next);
      });

  // The row sums over the CTA, then out and lse (one split) or the split's
  // normalized output and base-2 lse.
  for (int64_t r = 0; r < rb; ++r)
    ctaReduce(loop.getResult(rb + r), r, /*isMax=*/false);
  gpu::BarrierOp::create(b, loc);
  Value single = cmp(arith::CmpIPredicate::eq, splits, idx(1));
  Type outElt = cast<MemRefType>(sdpa.out.getType()).getElementType();
  for (int64_t r = 0; r < rb; ++r) {
    const Row &row = rowList[r];
    ifThen(row.valid, [&] {
      Value l = f32(0);
      for (int64_t w = 0; w < warps; ++w)
        l = arith::AddFOp::create(
            b, loc, l,
            memref::LoadOp::create(b, loc, redBuf, ValueRange{idx(r), idx(w)}));
      Value m = loop.getResult(r);
      Value empty =
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, f32(0));
      Value safeL = select(empty, f32(1), l);
      Value inv = arith::DivFOp::create(b, loc, f32(1), safeL);
      Value lse2 = select(empty, f32(kNegInf),
                          arith::AddFOp::create(
                              b, loc, m, math::Log2Op::create(b, loc, safeL)));
      for (int64_t c = 0; c < cols; ++c) {
        Value col = colOf(c);
        auto write = [&] {
          Value o = select(empty, f32(0),
                           arith::MulFOp::create(
                               b, loc, loop.getResult(accIndex(r, c)), inv));
          auto ifSingle =
              scf::IfOp::create(b, loc, single, /*withElseRegion=*/true);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(ifSingle.thenBlock()->getTerminator());
            memref::StoreOp::create(
                b, loc, convertScalarToDtype(b, loc, o, outElt, false),
                sdpa.out, ValueRange{batch, row.head, row.i, col});
            b.setInsertionPoint(ifSingle.elseBlock()->getTerminator());
            memref::StoreOp::create(
                b, loc, o, partOut,
                ValueRange{batch, row.head, row.i, split, col});
          }
        };
        if ((c + 1) * nt <= sdpa.dv)
          write();
        else
          ifThen(cmp(arith::CmpIPredicate::ult, col, idx(sdpa.dv)), write);
      }
      ifThen(cmp(arith::CmpIPredicate::eq, tid, idx(0)), [&] {
        auto ifSingle =
            scf::IfOp::create(b, loc, single, /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        if (sdpa.lse) {
          b.setInsertionPoint(ifSingle.thenBlock()->getTerminator());
          memref::StoreOp::create(
              b, loc, arith::MulFOp::create(b, loc, lse2, f32(float(kLn2))),
              sdpa.lse, ValueRange{batch, row.head, row.i});
        }
        b.setInsertionPoint(ifSingle.elseBlock()->getTerminator());
        memref::StoreOp::create(b, loc, lse2, partLse,
                                ValueRange{batch, row.head, row.i, split});
      });
    });
  }
}

void GpuDecodeBuilder::buildMergeKernel(gpu::LaunchOp launch) {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  Value i = blockIds.x, head = blockIds.y, bIdx = blockIds.z;
  Value t = launch.getThreadIds().x;
  const int64_t nt = cfg.threads;
  const int64_t cols = llvm::divideCeil(sdpa.dv, nt);
  auto lseAt = [&](Value s) {
    return memref::LoadOp::create(b, loc, partLse,
                                  ValueRange{bIdx, head, i, s});
  };
  auto maxLoop = scf::ForOp::create(
      b, loc, idx(0), splits, idx(1), ValueRange{f32(kNegInf)},
      [&](OpBuilder &, Location, Value s, ValueRange m) {
        scf::YieldOp::create(
            b, loc,
            ValueRange{arith::MaximumFOp::create(b, loc, m[0], lseAt(s))});
      });
  Value m = maxLoop.getResult(0);
  Value noKey =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, f32(kNegInf));
  // With no key in any split every weight is 0 (not exp2(-inf - -inf)).
  Value safeM = select(noKey, f32(0), m);
  SmallVector<Value> columns, init = {f32(0)};
  for (int64_t c = 0; c < cols; ++c) {
    columns.push_back(minU(add(t, idx(c * nt)), idx(sdpa.dv - 1)));
    init.push_back(f32(0));
  }
  auto sumLoop = scf::ForOp::create(
      b, loc, idx(0), splits, idx(1), init,
      [&](OpBuilder &, Location, Value s, ValueRange acc) {
        Value w = math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, lseAt(s), safeM));
        SmallVector<Value> next = {arith::AddFOp::create(b, loc, acc[0], w)};
        for (int64_t c = 0; c < cols; ++c) {
          Value o = memref::LoadOp::create(
              b, loc, partOut, ValueRange{bIdx, head, i, s, columns[c]});
          next.push_back(math::FmaOp::create(b, loc, w, o, acc[1 + c]));
        }
        scf::YieldOp::create(b, loc, next);
      });
  Value l = sumLoop.getResult(0);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, f32(0));
  Value safeL = select(empty, f32(1), l);
  Value inv = arith::DivFOp::create(b, loc, f32(1), safeL);
  Type outElt = cast<MemRefType>(sdpa.out.getType()).getElementType();
  for (int64_t c = 0; c < cols; ++c) {
    Value col = add(t, idx(c * nt));
    auto write = [&] {
      Value o =
          select(empty, f32(0),
                 arith::MulFOp::create(b, loc, sumLoop.getResult(1 + c), inv));
      memref::StoreOp::create(b, loc,
                              convertScalarToDtype(b, loc, o, outElt, false),
                              sdpa.out, ValueRange{bIdx, head, i, col});
    };
    if ((c + 1) * nt <= sdpa.dv)
      write();
    else
      ifThen(cmp(arith::CmpIPredicate::ult, col, idx(sdpa.dv)), write);
  }
  if (!sdpa.lse)
    return;
  ifThen(cmp(arith::CmpIPredicate::eq, t, idx(0)), [&] {
    Value lse = arith::MulFOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, safeM,
                              math::Log2Op::create(b, loc, safeL)),
        f32(float(kLn2)));
    memref::StoreOp::create(b, loc, select(empty, f32(kNegInf), lse), sdpa.lse,
                            ValueRange{bIdx, head, i});
  });
}

void GpuDecodeBuilder::buildHost() {
  int64_t lq = cast<MemRefType>(sdpa.query.getType()).getDimSize(2);
  rows = mul(sdpa.lq, idx(sdpa.group));
  rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, idx(cfg.rowsPerCta));
  int64_t kvHeads = sdpa.hq / sdpa.group;
  Value one = idx(1);
  Value gridY = mul(rowBlocks, idx(kvHeads));

  // Splits: as asked, or (auto) enough CTAs for kSplitCtasPerSm per SM, each
  // split at least kMinSplitKeys keys.
  if (cfg.kvSplits > 0) {
    splits = idx(cfg.kvSplits);
  } else {
    Value ctas = mul(sdpa.batch, gridY);
    Value ctasWanted =
        cfg.smCountAtLaunch
            ? mul(smCountAtLaunch(b, loc, sdpa.op), idx(kSplitCtasPerSm))
            : idx(kSplitCtasPerSm * cfg.smCount);
    Value wanted = arith::CeilDivUIOp::create(b, loc, ctasWanted, ctas);
    Value byKeys = arith::MaxUIOp::create(
        b, loc, one,
        arith::CeilDivUIOp::create(b, loc, sdpa.lk, idx(kMinSplitKeys)));
    splits = minU(wanted, byKeys);
  }

  // The splits' outputs and lse: [B, Hq, Lq, splits, Dv] and [B, Hq, Lq,
  // splits], f32, device temporaries freed after the merge.
  int64_t dyn = ShapedType::kDynamic;
  auto partOutType =
      MemRefType::get({dyn, sdpa.hq, lq, dyn, sdpa.dv}, b.getF32Type());
  auto partLseType = MemRefType::get({dyn, sdpa.hq, lq, dyn}, b.getF32Type());
  SmallVector<Value> sizes = {sdpa.batch};
  if (ShapedType::isDynamic(lq))
    sizes.push_back(sdpa.lq);
  sizes.push_back(splits);
  partOut = memref::AllocOp::create(b, loc, partOutType, sizes);
  partLse = memref::AllocOp::create(b, loc, partLseType, sizes);

  Value sharedBytes = arith::ConstantIntOp::create(
      b, loc, b.getI32Type(), decodeSharedBytes(sdpa, cfg));
  Value threads = idx(cfg.threads);
  auto split = gpu::LaunchOp::create(b, loc, splits, gridY, sdpa.batch, threads,
                                     one, one, sharedBytes);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&split.getBody().front());
    buildSplitKernel(split);
    gpu::TerminatorOp::create(b, loc);
  }
  ifThen(cmp(arith::CmpIPredicate::ugt, splits, one), [&] {
    auto merge = gpu::LaunchOp::create(b, loc, sdpa.lq, idx(sdpa.hq),
                                       sdpa.batch, threads, one, one);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&merge.getBody().front());
    buildMergeKernel(merge);
    gpu::TerminatorOp::create(b, loc);
  });
  memref::DeallocOp::create(b, loc, partOut);
  memref::DeallocOp::create(b, loc, partLse);
}

void gpu_kernels::buildDecodeKernels(OpBuilder &b, const GpuSdpa &sdpa,
                                     const DecodeConfig &cfg) {
  GpuDecodeBuilder(b, sdpa, cfg).buildHost();
}
