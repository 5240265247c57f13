//===- CpuDecodeKernel.cpp - the memory-bound decode kernel ---------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "CpuDecodeKernel.h"

#include "CpuDecodeBuilder.h"
#include "CpuDecodeScores.h"
#include "CpuKernels.h"

#include "attn/Dialect/Attn/IR/AttnPagedOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

DecodeGroup DecodeGroup::of(DecodeKeysOp op) {
  DecodeGroup group{op.getLoc()};
  group.rows = op.getRows();
  group.d = op.getQueryType().getDimSize(3);
  group.dv = op.getValueType().getDimSize(3);
  group.qScale = op.getScoreScale().convertToFloat();
  group.rowsPerHead = op.getRowsPerHead().value_or(0);
  group.query = op.getQuery();
  group.key = op.getKey();
  group.value = op.getValue();
  group.batch = op.getBatch();
  group.head = op.getHead();
  group.kvHead = op.getKvHead();
  group.qStart = op.getQStart();
  // Paged caches: the views' caches and page table, read in place.
  auto keyView = group.key.getDefiningOp<PagedViewOp>();
  auto valueView = group.value.getDefiningOp<PagedViewOp>();
  if (keyView && valueView) {
    group.key = keyView.getCache();
    group.value = valueView.getCache();
    group.pageTable = keyView.getPageTable();
    group.pageSlotDim = keyView.getPageSlotDim();
  }
  return group;
}

SmallVector<Value> CpuDecodeBuilder::kvAt(Value head, Value row, Value col) {
  if (!decode.pageTable)
    return {decode.batch, head, row, col};
  // The key's page and its slot in it. Rows are never negative.
  Value pageCol = arith::DivUIOp::create(b, loc, row, pageSize);
  Value slot = arith::RemUIOp::create(b, loc, row, pageSize);
  Value entry = tensor::ExtractOp::create(b, loc, decode.pageTable,
                                          ValueRange{decode.batch, pageCol});
  Value page =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), entry).getResult();
  // A page outside the cache is never read: clamped into it (such keys are
  // undefined; attn-run refuses such tables before running).
  page = maxIndex(minIndex(page, lastPage), kernel.idx(0));
  if (decode.pageSlotDim == 1)
    return {page, slot, head, col};
  return {page, head, slot, col};
}

Value CpuDecodeBuilder::readPairChunk(Value src, Value head, Value row,
                                      int64_t p) {
  auto eltType = cast<RankedTensorType>(src.getType()).getElementType();
  Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(eltType, 0.0));
  Value col = kernel.idx(p * 2 * width);
  SmallVector<Value> at = src == decode.query
                              ? SmallVector<Value>{decode.batch, head, row, col}
                              : kvAt(head, row, col);
  return vector::TransferReadOp::create(b, loc,
                                        VectorType::get({2 * width}, eltType),
                                        src, at, pad, ArrayRef<bool>{true});
}

Value CpuDecodeBuilder::readRow(Value src, Value head, Value row, int64_t c,
                                bool paired) {
  auto eltType = cast<RankedTensorType>(src.getType()).getElementType();
  if (!paired) {
    auto type = VectorType::get({width}, eltType);
    Value pad = arith::ConstantOp::create(b, loc, b.getFloatAttr(eltType, 0.0));
    Value col = kernel.idx(c * width);
    SmallVector<Value> at =
        src == decode.query ? SmallVector<Value>{decode.batch, head, row, col}
                            : kvAt(head, row, col);
    Value x = vector::TransferReadOp::create(b, loc, type, src, at, pad,
                                             ArrayRef<bool>{true});
    if (!eltType.isF32())
      x = arith::ExtFOp::create(b, loc, kernel.vecType, x);
    return x;
  }
  // Pair layout: vectors 2p and 2p + 1 hold the even and the odd columns of
  // columns [2pW, 2(p + 1)W). One load of 2W elements serves both (the
  // second read folds into the first).
  bool odd = c % 2;
  Value x = readPairChunk(src, head, row, c / 2);
  if (eltType.isBF16()) {
    // A bf16 is the high half of an f32: the even element of each 32-bit
    // word shifted up, the odd one masked; one integer op per vector.
    auto intType = VectorType::get({width}, b.getI32Type());
    Value words = vector::BitCastOp::create(b, loc, intType, x);
    Value bits =
        odd ? arith::AndIOp::create(
                  b, loc, words,
                  arith::ConstantOp::create(
                      b, loc,
                      DenseElementsAttr::get(
                          intType, b.getI32IntegerAttr(
                                       static_cast<int32_t>(0xFFFF0000u)))))
                  .getResult()
            : arith::ShLIOp::create(
                  b, loc, words,
                  arith::ConstantOp::create(
                      b, loc,
                      DenseElementsAttr::get(intType, b.getI32IntegerAttr(16))))
                  .getResult();
    return arith::BitcastOp::create(b, loc, kernel.vecType, bits);
  }
  if (!eltType.isF32())
    x = arith::ExtFOp::create(b, loc,
                              VectorType::get({2 * width}, b.getF32Type()), x);
  SmallVector<int64_t> lanes;
  for (int64_t i = 0; i < width; ++i)
    lanes.push_back(2 * i + (odd ? 1 : 0));
  return vector::ShuffleOp::create(b, loc, x, x, lanes);
}

void CpuDecodeBuilder::prefetchRow(Value buf, Value row, int64_t c0,
                                   int64_t c1) {
  auto type = cast<MemRefType>(buf.getType());
  int64_t perLine =
      std::max<int64_t>(1, 8 * kCacheLineBytes / type.getElementTypeBitWidth());
  auto locality = static_cast<uint32_t>(options.prefetchLocality);
  // The lines that start in the columns: a line that a group of value
  // columns shares with the group before it (bf16: 32 columns a line, 16 a
  // group of 2 vectors on 8 lanes) is that group's, not prefetched twice.
  // With an unaligned row the line that straddles into the next row is
  // prefetched as the next row's first where rows are contiguous (row
  // stride D); with strided rows, or past the prefetch window, it is not (a
  // hint: only the time can change). bf16 hq=32 hkv=8 Lk=32k
  // d=128 on a Zen 3, 1 thread: 16 -> 8 prefetches per key, 0.990
  // (0.989-0.990) of the time (journal/round-19.md).
  for (int64_t col = llvm::alignTo(c0 * width, perLine); col < c1 * width;
       col += perLine)
    memref::PrefetchOp::create(b, loc, buf,
                               kvAt(decode.kvHead, row, kernel.idx(col)),
                               /*isWrite=*/false, locality,
                               /*isDataCache=*/true);
}

void CpuDecodeBuilder::readQueries() {
  Value scale = kernel.splat(decode.qScale);
  // pairedNextDots' query halves: a 2W-value chunk's low (high) W values
  // in both halves.
  bool halves = pairedNextDots();
  SmallVector<int64_t> lowTwice, highTwice;
  for (int64_t half = 0; halves && half < 2; ++half)
    for (int64_t i = 0; i < width; ++i) {
      lowTwice.push_back(i);
      highTwice.push_back(width + i);
    }
  for (int64_t r = 0; r < rows; ++r) {
    Value head = decode.head, query = kernel.add(decode.qStart, r);
    if (decode.rowsPerHead > 0) {
      head = kernel.add(decode.head, r / decode.rowsPerHead);
      query = kernel.idx(r % decode.rowsPerHead);
    }
    if (keyDots) {
      for (int64_t p = 0; p < keyChunks(); ++p) {
        queries.push_back(readPairChunk(decode.query, head, query, p));
        if (!halves)
          continue;
        for (ArrayRef<int64_t> half : {lowTwice, highTwice})
          halfQueries.push_back(vector::ShuffleOp::create(
              b, loc, queries.back(), queries.back(), half));
      }
      continue;
    }
    for (int64_t c = 0; c < dChunks; ++c)
      queries.push_back(arith::MulFOp::create(
          b, loc, readRow(decode.query, head, query, c, keysPaired), scale));
  }
}

SmallVector<Value> CpuDecodeBuilder::readKeyChunks(Value row, int64_t c0,
                                                   int64_t c1) {
  SmallVector<Value> k;
  for (int64_t c = c0; c < c1; ++c)
    k.push_back(keyDots
                    ? readPairChunk(decode.key, decode.kvHead, row, c)
                    : readRow(decode.key, decode.kvHead, row, c, keysPaired));
  return k;
}

Value CpuDecodeBuilder::accVector(const DecodeState &state, int64_t r,
                                  int64_t c) {
  if (!accBuffer)
    return state.acc[r * vChunks + c];
  return vector::LoadOp::create(
      b, loc, kernel.vecType, accBuffer,
      ValueRange{kernel.idx(r), kernel.idx(c * width)});
}

void CpuDecodeBuilder::setAccVector(DecodeState &state, int64_t r, int64_t c,
                                    Value v) {
  if (!accBuffer) {
    state.acc[r * vChunks + c] = v;
    return;
  }
  vector::StoreOp::create(b, loc, v, accBuffer,
                          ValueRange{kernel.idx(r), kernel.idx(c * width)});
}

DecodeState CpuDecodeBuilder::block(Value j0, Value tailLen, Value lastKey,
                                    const DecodeState &state,
                                    ArrayRef<Value> given, NextDots *nextDots) {
  Value value = decode.value;
  SmallVector<Value> scores(given);
  if (given.empty() && phased && !tailLen) {
    assert(phasedTile && "phased full blocks come from phasedBlocks");
    scores = phasedScores(j0, phasedTile);
  } else if (given.empty())
    scores = scoresOf([&](int64_t j) {
      Value k = kernel.add(j0, j);
      return lastKey ? minIndex(k, lastKey) : k;
    });

  Value negInf = kernel.splat(kNegInf), zero = kernel.splat(0.0f);
  Value validLanes;
  if (tailLen)
    validLanes = vector::CreateMaskOp::create(
        b, loc, VectorType::get({width}, b.getI1Type()), ValueRange{tailLen});
  // The running max moves lazily (maxUpdate): most blocks keep it, and
  // their sums and accumulators are not rescaled; the probabilities then
  // reach up to 2^kDecodeMaxSlack.
  SmallVector<Value> blockMax;
  for (int64_t r = 0; r < rows; ++r) {
    if (validLanes)
      scores[r] =
          arith::SelectOp::create(b, loc, validLanes, scores[r], negInf);
    blockMax.push_back(laneMax(scores[r]));
  }
  DecodeState next = maxUpdate(state, blockMax);
  SmallVector<Value> probs;
  for (int64_t r = 0; r < rows; ++r) {
    Value s = scores[r];
    Value sEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, s, negInf);
    Value p = arith::SelectOp::create(
        b, loc, sEmpty, zero,
        kernel.exp2(arith::SubFOp::create(b, loc, s, next.m[r])));
    next.l[r] = arith::AddFOp::create(b, loc, next.l[r], p);
    probs.push_back(p);
  }

  // P.V: value columns in groups of accumulators that fit the registers;
  // each V row is read once per group (each cache line once in all).
  int64_t group = valueGroupChunks();
  // The probabilities in the [rows, W] buffer probTile, read back one at a
  // time (a broadcast load; with valueDots two keys' bf16 pair) by a loop
  // over the block's keys, so that only one group of accumulators is live
  // at a time.
  for (int64_t r = 0; r < rows; ++r) {
    Value p = probs[r];
    if (valueDots)
      p = vector::BitCastOp::create(
          b, loc, VectorType::get({width / 2}, b.getI32Type()),
          arith::TruncFOp::create(
              b, loc, VectorType::get({width}, b.getBF16Type()), p));
    vector::StoreOp::create(b, loc, p, probTile,
                            ValueRange{kernel.idx(r), kernel.idx(0)});
  }
  for (int64_t c0 = 0; c0 < vChunks; c0 += group) {
    int64_t c1 = std::min(vChunks, c0 + group);
    SmallVector<Value> inits;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = c0; c < c1; ++c)
        inits.push_back(accVector(next, r, c));
    // Group g of `groups` prefetches its share of the next K rows' columns,
    // [n0, n1) in chunks. dotGroups of the groups (g = 0, every, 2 * every,
    // ...) also take a share of the next block's dot products, chunks
    // [d0, d1), in order from chunk 0: the first stores the sums, the
    // later ones (in later group loops) load and add to them. With
    // `groups` not a multiple of dotGroups the groups past the last share
    // take none (5 groups, 2 shares: groups 0 and 2).
    int64_t groups = llvm::divideCeil(vChunks, group);
    int64_t g = c0 / group;
    int64_t n0 = keyChunks() * g / groups, n1 = keyChunks() * (g + 1) / groups;
    int64_t chunkWidths = keyDots ? 2 : 1;
    int64_t dotGroups =
        dotGroupsFor(groups, width, keyChunks(), rows, keysWidened(), keyDots);
    int64_t every = groups / dotGroups, d0 = 0, d1 = 0;
    if (g % every == 0 && g / every < dotGroups) {
      d0 = keyChunks() * (g / every) / dotGroups;
      d1 = keyChunks() * (g / every + 1) / dotGroups;
    }
    bool dotsHere = nextDots && d1 > d0;
    // Key j's V row and its lines ahead.
    auto valueRow = [&](Value j) {
      Value vRow = arith::AddIOp::create(b, loc, j0, j);
      return lastKey ? minIndex(vRow, lastKey) : vRow;
    };
    auto prefetchAhead = [&](Value j) {
      if (!prefetchBase)
        return;
      // The lines of this group's columns, ahead.
      prefetchRow(valueBuffer, arith::AddIOp::create(b, loc, prefetchBase, j),
                  c0, c1);
      // A K row ahead too (keyPrefetchBase), its lines shared out among the
      // value-column groups: one or two lines per key and group, spread
      // through the block, rather than a burst of all the block's K lines
      // before the scores (which LLVM schedules together): bf16 hq=32 hkv=8
      // Lk=32k d=128, 1 thread, 7.8-8.8 -> 6.9-7.8 ms (journal/round-05.md).
      // Phased blocks prefetch K from their scores loop instead
      // (phasedScores).
      if (n1 > n0 && !phased)
        prefetchRow(keyBuffer,
                    arith::AddIOp::create(b, loc, keyPrefetchBase, j),
                    n0 * chunkWidths, n1 * chunkWidths);
    };
    // With valueDots two keys per iteration, each key's prefetches and dot
    // products as one key's.
    SmallVector<Value> accs = kernel.loopCarrying(
        0, width, valueDots ? 2 : 1, inits, [&](Value j, ValueRange carried) {
          SmallVector<Value> keys{j};
          if (valueDots)
            keys.push_back(kernel.add(j, 1));
          SmallVector<Value> vRows;
          for (Value key : keys)
            vRows.push_back(valueRow(key));
          for (Value key : keys)
            prefetchAhead(key);
          SmallVector<Value> out(carried);
          if (valueDots) {
            pairedValueStep(out, j, vRows[0], vRows[1], c0, c1);
          } else {
            SmallVector<Value> pj;
            for (int64_t r = 0; r < rows; ++r)
              pj.push_back(vector::BroadcastOp::create(
                  b, loc, kernel.vecType,
                  memref::LoadOp::create(b, loc, probTile,
                                         ValueRange{kernel.idx(r), j})));
            for (int64_t c = c0; c < c1; ++c) {
              Value v =
                  readRow(value, decode.kvHead, vRows[0], c, valuesPaired);
              for (int64_t r = 0; r < rows; ++r) {
                Value &acc = out[r * (c1 - c0) + (c - c0)];
                acc = vector::FMAOp::create(b, loc, pj[r], v, acc);
              }
            }
          }
          if (dotsHere && pairedNextDots())
            takeNextDotPair(*nextDots, j, d0, d1);
          else if (dotsHere)
            for (Value key : keys)
              takeNextDots(*nextDots, key, d0, d1);
          return out;
        });
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = c0; c < c1; ++c)
        setAccVector(next, r, c, accs[r * (c1 - c0) + (c - c0)]);
  }
  return next;
}

DecodeState CpuDecodeBuilder::maxUpdate(const DecodeState &state,
                                        ArrayRef<Value> blockMax) {
  // Row r's max moves where its block's max passes it by more than the
  // slack (or is NaN, which goes on into the max as before).
  SmallVector<Value> grows;
  Value any;
  for (int64_t r = 0; r < rows; ++r) {
    grows.push_back(kernel.maxMoves(state.m[r], blockMax[r], kDecodeMaxSlack));
    any = any ? arith::OrIOp::create(b, loc, any, grows.back()).getResult()
              : grows.back();
  }
  // Every lane of a row's max (and so of `any`) is the same.
  Value cond = vector::ExtractOp::create(b, loc, any, ArrayRef<int64_t>{0});
  SmallVector<Value> values = state.asValues();
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(values).getTypes(), cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  DecodeState next;
  next.acc.assign(state.acc.begin(), state.acc.end());
  SmallVector<Value> alphas;
  for (int64_t r = 0; r < rows; ++r) {
    Value mNew = arith::SelectOp::create(
        b, loc, grows[r], kernel.max(state.m[r], blockMax[r]), state.m[r]);
    // Exactly 1 for the rows that keep their max: they keep their sums.
    Value alpha = kernel.rescaleFactor(state.m[r], mNew);
    next.m.push_back(mNew);
    next.l.push_back(arith::MulFOp::create(b, loc, state.l[r], alpha));
    alphas.push_back(alpha);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < vChunks; ++c)
      setAccVector(
          next, r, c,
          arith::MulFOp::create(b, loc, accVector(next, r, c), alphas[r]));
  scf::YieldOp::create(b, loc, next.asValues());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, values);
  return DecodeState::from(ifOp.getResults(), rows);
}

Value CpuDecodeBuilder::laneMax(Value s) {
  for (int64_t shift = width / 2; shift >= 1; shift /= 2) {
    SmallVector<int64_t> lanes;
    for (int64_t i = 0; i < width; ++i)
      lanes.push_back(i ^ shift);
    s = kernel.max(s, vector::ShuffleOp::create(b, loc, s, s, lanes));
  }
  return s;
}

Value CpuDecodeBuilder::scratch(ArrayRef<int64_t> shape, Type elementType) {
  return memref::AllocOp::create(
      b, loc,
      MemRefType::get(shape, elementType ? elementType : b.getF32Type()));
}

DecodeState CpuDecodeBuilder::initialState() {
  DecodeState s;
  for (int64_t r = 0; r < rows; ++r) {
    s.m.push_back(kernel.splat(kNegInf));
    s.l.push_back(kernel.splat(0.0f));
  }
  if (rows * vChunks < maxAccumulators(width)) {
    for (int64_t i = 0; i < rows * vChunks; ++i)
      s.acc.push_back(kernel.splat(0.0f));
    return s;
  }
  accBuffer = scratch({rows, decode.dv});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < vChunks; ++c)
      setAccVector(s, r, c, kernel.splat(0.0f));
  return s;
}

DecodeResult CpuDecodeBuilder::finish(const DecodeState &state) {
  SmallVector<Value> m, l;
  for (int64_t r = 0; r < rows; ++r) {
    m.push_back(vector::ExtractOp::create(b, loc, state.m[r], 0));
    l.push_back(vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                            state.l[r]));
  }
  auto rowType = RankedTensorType::get({rows}, b.getF32Type());
  Value mT = tensor::FromElementsOp::create(b, loc, rowType, m);
  Value lT = tensor::FromElementsOp::create(b, loc, rowType, l);
  // The rows, in the order of V's columns, into a [rows, Dv] buffer (the
  // accumulators' own where they are in memory: each pair is read before it
  // is written back), taken as a tensor: a chain of rows * Dv / W tensor
  // writes costs bufferization seconds (hq=8 hkv=1 d=128 on 8 lanes: 10 s).
  Value rowsBuffer = accBuffer ? accBuffer : scratch({rows, decode.dv});
  SmallVector<int64_t> interleave = accPairColumns();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < vChunks; c += valuesPaired ? 2 : 1) {
      Value x = accVector(state, r, c);
      if (valuesPaired)
        x = vector::ShuffleOp::create(b, loc, x, accVector(state, r, c + 1),
                                      interleave);
      vector::StoreOp::create(b, loc, x, rowsBuffer,
                              ValueRange{kernel.idx(r), kernel.idx(c * width)});
    }
  auto rowsType = RankedTensorType::get({rows, decode.dv}, b.getF32Type());
  // restrict: nothing else reads or writes the buffer from here on.
  Value accRows = bufferization::ToTensorOp::create(
      b, loc, rowsType, rowsBuffer, /*restrict=*/true, /*writable=*/false);
  Value accInit = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{decode.dv, rows}, b.getF32Type());
  Value acc = linalg::TransposeOp::create(b, loc, accRows, accInit,
                                          ArrayRef<int64_t>{1, 0})
                  .getResult()[0];
  return {mT, lT, acc};
}

Value CpuDecodeBuilder::startFullBlock(Value begin, Value end, Value iv,
                                       Value w) {
  Value j0 = arith::AddIOp::create(b, loc, begin,
                                   arith::MulIOp::create(b, loc, iv, w));
  if (!prefetches)
    return j0;
  // Rows past the end are not prefetched: the last blocks prefetch the last
  // W keys again.
  Value last = arith::SubIOp::create(b, loc, end, w);
  int64_t ahead = prefetchBlocks();
  prefetchBase = minIndex(kernel.add(j0, ahead * width), last);
  keyPrefetchBase = minIndex(kernel.add(j0, (ahead + 1) * width), last);
  touchPagesAhead(last);
  return j0;
}

void CpuDecodeBuilder::touchPagesAhead(Value last) {
  auto bits = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementTypeBitWidth();
  };
  if (options.pageTouch <= 0 || bits(decode.key) != 16 ||
      bits(decode.value) != 16)
    return;
  // On 4 KiB pages a prefetch into a page whose translation is not cached
  // stalls the core while the page is walked (a nested walk in a virtual
  // machine); a load further ahead walks it first. Zen 4 VM, hq=32 hkv=8
  // Lk=32k d=128 bf16, one thread, paired CPU time, 8 KiB past the
  // prefetches: 4 KiB pages 0.942x (4 KiB past 0.958x, 12 KiB 0.936x, 16
  // KiB 0.941x), two threads 0.973x, huge pages 1.006x; f16 0.965x and
  // 1.016x; f32 K and V, whose blocks take twice as long, gained 0.949x on
  // 4 KiB pages but took 1.087x the time on huge pages (journal/round-27.md).
  auto touch = [&](Value buf, Value base) {
    auto type = cast<MemRefType>(buf.getType());
    int64_t rowBytes = type.getDimSize(3) * 2;
    Value row = minIndex(
        kernel.add(base, std::max<int64_t>(1, options.pageTouch / rowBytes)),
        last);
    Value x = memref::LoadOp::create(b, loc, buf,
                                     kvAt(decode.kvHead, row, kernel.idx(0)));
    // The loaded value only has to reach a register: an empty asm that
    // takes it keeps the load.
    Value word = arith::BitcastOp::create(b, loc, b.getI16Type(), x);
    LLVM::InlineAsmOp::create(b, loc, Type(), ValueRange{word}, "", "r",
                              /*has_side_effects=*/true,
                              /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None,
                              LLVM::AsmDialectAttr(), ArrayAttr());
  };
  touch(valueBuffer, prefetchBase);
  touch(keyBuffer, keyPrefetchBase);
}

DecodeState CpuDecodeBuilder::interleavedBlocks(Value begin, Value end,
                                                Value numFull,
                                                const DecodeState &init) {
  Value w = kernel.idx(width), zeroIdx = kernel.idx(0), one = kernel.idx(1);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, numFull,
                                    zeroIdx);
  // The first block's scores, before the loop (none without a full block).
  SmallVector<Type> scoreTypes(rows, kernel.vecType);
  auto first = scf::IfOp::create(b, loc, scoreTypes, any,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    SmallVector<Value> scores =
        scoresOf([&](int64_t j) { return kernel.add(begin, j); });
    scf::YieldOp::create(b, loc, scores);
    b.setInsertionPointToStart(first.elseBlock());
    scf::YieldOp::create(b, loc,
                         SmallVector<Value>(rows, kernel.splat(kNegInf)));
  }
  // The last full block's first key: the last iteration takes its dot
  // products again rather than read past the full blocks.
  Value lastFull = arith::AddIOp::create(
      b, loc, begin,
      arith::MulIOp::create(
          b, loc,
          maxIndex(arith::SubIOp::create(b, loc, numFull, one), zeroIdx), w));
  // The next block's dot products: a buffer, like the accumulators.
  Value tile = scratch({width, tileFoldsRows() ? 1 : rows, width});
  SmallVector<Value> inits = init.asValues();
  int64_t stateCount = static_cast<int64_t>(inits.size());
  llvm::append_range(inits, first.getResults());
  auto loop = scf::ForOp::create(
      b, loc, zeroIdx, numFull, one, inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        // K one block further than V, as this block's P.V loops read the
        // next block's K rows.
        Value j0 = startFullBlock(begin, end, iv, w);
        NextDots nd{minIndex(kernel.add(j0, width), lastFull), tile};
        SmallVector<Value> given(carried.slice(stateCount, rows).begin(),
                                 carried.slice(stateCount, rows).end());
        DecodeState next =
            block(j0, Value(), Value(),
                  DecodeState::from(carried.take_front(stateCount), rows),
                  given, &nd);
        SmallVector<Value> yields = next.asValues();
        llvm::append_range(yields, scoresFromTile(nd.tile));
        scf::YieldOp::create(b, loc, yields);
      });
  return DecodeState::from(loop.getResults().take_front(stateCount), rows);
}

SmallVector<Value> CpuDecodeBuilder::phasedScores(Value j0, Value tile) {
  assert(!keyDots && "phased blocks have f32 K");
  int64_t n = keysPerGroup();
  scf::ForOp::create(
      b, loc, kernel.idx(0), kernel.idx(width), kernel.idx(n), ValueRange{},
      [&](OpBuilder &nb, Location, Value jp, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value first = arith::AddIOp::create(b, loc, j0, jp);
        // The same keys two blocks ahead, every line of their K rows.
        if (keyPrefetchBase) {
          Value ahead = arith::AddIOp::create(b, loc, keyPrefetchBase, jp);
          for (int64_t g = 0; g < n; ++g)
            prefetchRow(keyBuffer, kernel.add(ahead, g), 0, dChunks);
        }
        SmallVector<SmallVector<Value>> dots =
            keyGroupDots([&](int64_t g) { return kernel.add(first, g); }, 0, n);
        for (int64_t g = 0; g < n; ++g)
          for (int64_t r = 0; r < rows; ++r)
            vector::StoreOp::create(
                b, loc, dots[g][r], tile,
                ValueRange{kernel.add(jp, g), kernel.idx(r), kernel.idx(0)});
        scf::YieldOp::create(b, loc);
      });
  return scoresFromTile(tile);
}

DecodeState CpuDecodeBuilder::phasedBlocks(Value begin, Value end,
                                           Value numFull,
                                           const DecodeState &init) {
  Value w = kernel.idx(width), one = kernel.idx(1);
  phasedTile = scratch({width, rows, width});
  SmallVector<Value> inits = init.asValues();
  auto loop = scf::ForOp::create(
      b, loc, kernel.idx(0), numFull, one, inits,
      [&](OpBuilder &nb, Location, Value iv, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        // The distances of interleavedBlocks: the K prefetches of a block's
        // scores loop reach the block after next, like theirs.
        Value j0 = startFullBlock(begin, end, iv, w);
        DecodeState next =
            block(j0, Value(), Value(), DecodeState::from(carried, rows));
        scf::YieldOp::create(b, loc, next.asValues());
      });
  return DecodeState::from(loop.getResults(), rows);
}

DecodeResult CpuDecodeBuilder::build(Value begin, Value end) {
  readQueries();
  end = maxIndex(end, begin);
  if (decode.pageTable) {
    pageSize = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, decode.key, decode.pageSlotDim));
    Value numPages = tensor::DimOp::create(b, loc, decode.key, 0);
    lastPage = arith::SubIOp::create(b, loc, numPages, kernel.idx(1));
    // An empty cache has no key to read.
    Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        numPages, kernel.idx(0));
    end = arith::SelectOp::create(b, loc, empty, begin, end);
  }
  Value w = kernel.idx(width);
  Value numFull = arith::DivUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, begin), w);
  DecodeState init = initialState();
  probTile = valueDots ? scratch({rows, width / 2}, b.getI32Type())
                       : scratch({rows, width});
  auto asBuffer = [&](Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    return bufferization::ToBufferOp::create(
        b, loc,
        MemRefType::get(
            type.getShape(), type.getElementType(),
            StridedLayoutAttr::get(
                b.getContext(), ShapedType::kDynamic,
                SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic))),
        tensor, /*read_only=*/true);
  };
  keyBuffer = asBuffer(decode.key);
  valueBuffer = asBuffer(decode.value);
  DecodeState state = phased ? phasedBlocks(begin, end, numFull, init)
                             : interleavedBlocks(begin, end, numFull, init);
  prefetchBase = keyPrefetchBase = Value();

  // The last keys, fewer than W: rows past the end read the last key (their
  // scores are -inf, their probabilities 0).
  Value tailStart = arith::AddIOp::create(
      b, loc, begin, arith::MulIOp::create(b, loc, numFull, w));
  Value tailLen = arith::SubIOp::create(b, loc, end, tailStart);
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, tailLen,
                                    kernel.idx(0));
  SmallVector<Value> values = state.asValues();
  auto ifOp = scf::IfOp::create(b, loc, ValueRange(values).getTypes(), any,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value lastKey = arith::SubIOp::create(b, loc, end, kernel.idx(1));
    DecodeState next = block(tailStart, tailLen, lastKey, state);
    scf::YieldOp::create(b, loc, next.asValues());
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, values);
  }
  return finish(DecodeState::from(ifOp.getResults(), rows));
}

DecodeResult mlir::attn::detail::emitDecodeKeys(OpBuilder &b,
                                                const DecodeGroup &group,
                                                const DecodeOptions &options,
                                                Value begin, Value end) {
  return CpuDecodeBuilder(b, group, options).build(begin, end);
}
