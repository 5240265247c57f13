//===- CpuUserMask.cpp - CPU kernel of the user-mask tile op --------------===//
//
// Part of the attn project.
//
// The vector kernel that attn-cpu-microkernels puts in place of the
// `user_mask` tile op (TileUserMask.cpp): St[j, i] = M[i, j] ? St : -inf
// (i1) or St + M[i, j] * log2 e (float), with M the view [1, 1, rows, keys]
// of the mask the op's body reads at (min(i, rows - 1), min(j, keys - 1)).
// Query rows run along the vectors, as in every kernel; the mask's
// contiguous dim is the keys, so a full mask is read as W rows of W keys
// (plain loads; masked ones only in the view's partial last block, past its
// last key) and transposed in registers with log2(W) stages of
// vector.shuffle. A mask broadcast along the queries
// (key padding) is one scalar per key, broadcast; one broadcast along the
// keys is one vector per row vector, built once. i1 masks are bytes in
// memory: their vectors are loaded as i8 through the view's pointer (an i1
// vector in memory is bit-packed), compared with 0.
//
// The row max that follows the op is folded in: taken from the masked
// scores while they are in registers.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// The mask view that the tile op's body reads: the one memref.load in the
/// body of a memref defined outside it (rank 4), or null.
Value findMaskView(linalg::GenericOp op) {
  Value view;
  int count = 0;
  op.getRegion().walk([&](memref::LoadOp load) {
    if (op.getRegion().isAncestor(load.getMemRef().getParentRegion()))
      return;
    view = load.getMemRef();
    ++count;
  });
  if (count != 1 || memrefOf(view).getRank() != 4)
    return {};
  return view;
}

} // namespace

SmallVector<Value> mlir::attn::detail::transposeSquare(KernelBuilder &kernel,
                                                       ArrayRef<Value> rows) {
  int64_t w = kernel.width;
  SmallVector<Value> r(rows);
  for (int64_t k = w / 2; k >= 1; k /= 2) {
    SmallVector<int64_t> lowMask(w), highMask(w);
    for (int64_t x = 0; x < w; ++x) {
      lowMask[x] = (x & k) ? w + x - k : x;
      highMask[x] = (x & k) ? w + x : x + k;
    }
    for (int64_t a = 0; a < w; ++a) {
      if (a & k)
        continue;
      Value low = vector::ShuffleOp::create(kernel.b, kernel.loc, r[a],
                                            r[a + k], lowMask);
      Value high = vector::ShuffleOp::create(kernel.b, kernel.loc, r[a],
                                             r[a + k], highMask);
      r[a] = low;
      r[a + k] = high;
    }
  }
  return r;
}

namespace {

/// The kernel, for one tile op.
struct UserMaskKernel {
  KernelBuilder &kernel;
  Value st, view, rowMax;
  bool isBool;
  Value lastRow, keys, lastKey; // null where the view's dim is a static 1
  // The view's aligned pointer plus its offset in bytes, its row stride in
  // elements and its element size (raw loads and prefetches of a full mask).
  Value byteBase, rowStride;
  int64_t eltBytes = 1;

  OpBuilder &b() { return kernel.b; }
  Location loc() { return kernel.loc; }
  int64_t bk() { return memrefOf(st).getDimSize(0); }

  Value toF32(Value x) {
    Type elt = getElementTypeOrSelf(x.getType());
    if (elt.isF32())
      return x;
    Type f32 = b().getF32Type();
    if (auto vec = dyn_cast<VectorType>(x.getType()))
      return arith::ExtFOp::create(b(), loc(), vec.clone(f32), x);
    return arith::ExtFOp::create(b(), loc(), f32, x);
  }

  /// What a mask value does to a score: the keep condition (i1) or the
  /// addend M * log2 e (f32), scalar or vector.
  Value prepare(Value m) {
    if (isBool)
      return m;
    Value x = toF32(m);
    Value log2e = isa<VectorType>(x.getType())
                      ? kernel.splat(static_cast<float>(kLog2E))
                      : createF32Constant(b(), loc(), kLog2E);
    return arith::MulFOp::create(b(), loc(), x, log2e);
  }

  /// St[j, i0 : i0 + W] with the prepared mask value applied (a scalar is
  /// the same for every lane); returns the masked scores.
  Value applyOnly(Value j, Value i0, Value prepared) {
    Value s = kernel.load(st, {j, i0});
    if (isBool) {
      s = arith::SelectOp::create(
          b(), loc(), prepared, s,
          kernel.splat(-std::numeric_limits<float>::infinity()));
    } else {
      Value add = prepared;
      if (!isa<VectorType>(add.getType()))
        add = vector::BroadcastOp::create(b(), loc(), kernel.vecType, add);
      s = arith::AddFOp::create(b(), loc(), s, add);
    }
    kernel.storeBlended(s, st, {j, i0});
    return s;
  }

  /// applyOnly, returning the running max updated with the masked scores.
  Value apply(Value j, Value i0, Value prepared, Value curMax) {
    Value s = applyOnly(j, i0, prepared);
    return rowMax ? kernel.max(curMax, s) : curMax;
  }

  Value clampIndex(Value idx, Value last) {
    return last ? arith::MinUIOp::create(b(), loc(), idx, last).getResult()
                : kernel.idx(0);
  }

  /// Runs body(j, carried max) over the keys [0, bk) in steps of `step`.
  Value overKeys(int64_t step, Value initMax,
                 function_ref<Value(Value, Value)> body) {
    SmallVector<Value> inits;
    if (initMax)
      inits.push_back(initMax);
    SmallVector<Value> results = kernel.loopCarrying(
        0, bk(), step, inits, [&](Value j, ValueRange carried) {
          Value next = body(j, carried.empty() ? Value() : carried[0]);
          return next ? SmallVector<Value>{next} : SmallVector<Value>();
        });
    return results.empty() ? Value() : results[0];
  }

  /// A mask broadcast along the queries: one scalar per key.
  Value perKey(Value i0, Value initMax) {
    return overKeys(1, initMax, [&](Value j, Value curMax) {
      Value zero = kernel.idx(0);
      Value m = memref::LoadOp::create(
          b(), loc(), view,
          ValueRange{zero, zero, zero, clampIndex(j, lastKey)});
      return apply(j, i0, prepare(m), curMax);
    });
  }

  /// A mask that is the same for every key of the view (broadcast along the
  /// keys, or a view of one key): one vector per row vector, built once.
  Value perRow(Value i0, Value initMax) {
    SmallVector<Value> elements;
    Value zero = kernel.idx(0);
    for (int64_t t = 0; t < kernel.width; ++t)
      elements.push_back(memref::LoadOp::create(
          b(), loc(), view,
          ValueRange{zero, zero, clampIndex(kernel.add(i0, t), lastRow),
                     zero}));
    Type elt = memrefOf(view).getElementType();
    Value vec = vector::FromElementsOp::create(
        b(), loc(), VectorType::get({kernel.width}, elt), elements);
    Value prepared = prepare(vec);
    return overKeys(1, initMax, [&](Value j, Value curMax) {
      return apply(j, i0, prepared, curMax);
    });
  }

  /// The address (an index) of element (row, col) of the view (col may lie
  /// past it: prefetches only).
  Value addressOf(Value row, Value col) {
    Value element = arith::AddIOp::create(
        b(), loc(), arith::MulIOp::create(b(), loc(), row, rowStride), col);
    Value bytes =
        arith::MulIOp::create(b(), loc(), element, kernel.idx(eltBytes));
    return arith::AddIOp::create(b(), loc(), byteBase, bytes);
  }

  /// The same as an LLVM pointer.
  Value pointerTo(Value row, Value col) {
    Value address = addressOf(row, col);
    Value address64 =
        arith::IndexCastOp::create(b(), loc(), b().getI64Type(), address);
    return LLVM::IntToPtrOp::create(
        b(), loc(), LLVM::LLVMPointerType::get(b().getContext()), address64);
  }

  /// W keys from jb of mask row `row`, as f32 (i1: 0 or 1). With `lanes`
  /// (the tail block) a masked load, 0 past the view's last key; without, a
  /// plain load (every key of the block lies in the view).
  Value loadKeys(Value row, Value jb, Value lanes) {
    int64_t w = kernel.width;
    if (!isBool) {
      Type elt = memrefOf(view).getElementType();
      auto type = VectorType::get({w}, elt);
      Value zero = kernel.idx(0);
      SmallVector<Value> at = {zero, zero, row, jb};
      if (!lanes)
        return toF32(vector::LoadOp::create(b(), loc(), type, view, at));
      Value pass = arith::ConstantOp::create(
          b(), loc(), DenseElementsAttr::get(type, b().getZeroAttr(elt)));
      return toF32(vector::MaskedLoadOp::create(b(), loc(), type, view, at,
                                                lanes, pass));
    }
    Value ptr = pointerTo(row, jb);
    auto bytesType = VectorType::get({w}, b().getI8Type());
    Value bytes;
    if (!lanes) {
      bytes = LLVM::LoadOp::create(b(), loc(), bytesType, ptr,
                                   /*alignment=*/1);
    } else {
      Value pass = arith::ConstantOp::create(
          b(), loc(),
          DenseElementsAttr::get(bytesType, b().getI8IntegerAttr(0)));
      bytes = LLVM::MaskedLoadOp::create(b(), loc(), bytesType, ptr, lanes,
                                         pass, /*alignment=*/1);
    }
    return arith::UIToFPOp::create(b(), loc(), kernel.vecType, bytes);
  }

  /// An scf.for from lb to ub (index values) in steps of `step`, carrying
  /// the running max (if any): body(j, carried max) returns the next one.
  Value loopFrom(Value lb, Value ub, int64_t step, Value initMax,
                 function_ref<Value(Value, Value)> body) {
    SmallVector<Value> inits;
    if (initMax)
      inits.push_back(initMax);
    auto loop = scf::ForOp::create(
        b(), loc(), lb, ub, kernel.idx(step), inits,
        [&](OpBuilder &nb, Location, Value j, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b());
          b().setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
          Value next = body(j, carried.empty() ? Value() : carried[0]);
          scf::YieldOp::create(b(), loc(),
                               next ? ValueRange(next) : ValueRange());
        });
    return initMax ? loop.getResult(0) : Value();
  }

  /// One W x W block of a full mask: W rows of W keys from jb, transposed,
  /// applied to St[jb : jb + W, i0 : i0 + W]. `lanes` is set for the tail
  /// block (keys past the view's last one read as 0); the other blocks
  /// prefetch the same keys of the next key block.
  Value fullBlock(Value i0, Value jb, Value lanes, Value curMax) {
    int64_t w = kernel.width;
    SmallVector<Value> rows;
    for (int64_t t = 0; t < w; ++t) {
      Value row = clampIndex(kernel.add(i0, t), lastRow);
      rows.push_back(loadKeys(row, jb, lanes));
      if (lanes)
        continue;
      // The same keys of the next key block: a full mask's rows are far
      // apart (Lk elements), too many streams for the hardware prefetcher.
      // Into L2, as the products' prefetches (prefetchAt): into L1, the key
      // block's K, V and score tiles evicted the lines before they were
      // read (Zen 4, one thread, paired CPU time, hq=8 Lq=1000 Lk=3001
      // d=80, L2 against L1: float mask [1, 1, Lq, Lk] 0.954x, [1, 8, Lq,
      // Lk] 0.955x, bool 0.996-0.997x; journal/round-27.md).
      Value ahead = kernel.add(jb, bk());
      prefetchAt(kernel, addressOf(row, ahead), /*forWrite=*/false);
      // W keys of 2 or 4 bytes may span two cache lines (one prefetch per
      // row, the next block's taking the second line, was 1.024x).
      if (eltBytes > 1)
        prefetchAt(kernel, addressOf(row, kernel.add(ahead, w - 1)),
                   /*forWrite=*/false);
    }
    SmallVector<Value> cols = transposeSquare(kernel, rows);
    SmallVector<Value> masked;
    for (int64_t c = 0; c < w; ++c) {
      Value prepared =
          isBool
              ? arith::CmpFOp::create(b(), loc(), arith::CmpFPredicate::UNE,
                                      cols[c], kernel.splat(0.0f))
                    .getResult()
              : arith::MulFOp::create(b(), loc(), cols[c],
                                      kernel.splat(static_cast<float>(kLog2E)))
                    .getResult();
      masked.push_back(applyOnly(kernel.add(jb, c), i0, prepared));
    }
    if (!rowMax)
      return curMax;
    // The block's max as a tree, so the running max waits on one max per
    // block, not on W in a chain.
    while (masked.size() > 1) {
      SmallVector<Value> next;
      for (size_t x = 0; x + 1 < masked.size(); x += 2)
        next.push_back(kernel.max(masked[x], masked[x + 1]));
      if (masked.size() % 2)
        next.push_back(masked.back());
      masked = std::move(next);
    }
    return kernel.max(curMax, masked[0]);
  }

  /// A full mask: the blocks of W keys that lie in the view with plain
  /// loads, then the rest of the tile (the view's last, partial block and
  /// blocks past it, in the tile's last key block only) with masked loads.
  Value full(Value i0, Value initMax) {
    int64_t w = kernel.width;
    Value whole = arith::MulIOp::create(
        b(), loc(), arith::DivUIOp::create(b(), loc(), keys, kernel.idx(w)),
        kernel.idx(w));
    Value curMax = loopFrom(kernel.idx(0), whole, w, initMax,
                            [&](Value jb, Value carried) {
                              return fullBlock(i0, jb, Value(), carried);
                            });
    return loopFrom(
        whole, kernel.idx(bk()), w, curMax, [&](Value jb, Value carried) {
          Value left = arith::MaxSIOp::create(
              b(), loc(), arith::SubIOp::create(b(), loc(), keys, jb),
              kernel.idx(0));
          Value lanes = vector::CreateMaskOp::create(
              b(), loc(), VectorType::get({w}, b().getI1Type()),
              ValueRange{left});
          return fullBlock(i0, jb, lanes, carried);
        });
  }
};

} // namespace

bool mlir::attn::detail::emitUserMask(KernelBuilder &kernel,
                                      linalg::GenericOp op, Value rowMax) {
  Value st = op.getDpsInits()[0];
  Value view = findMaskView(op);
  if (!view)
    return false;
  MemRefType viewType = memrefOf(view);
  Type elt = viewType.getElementType();
  bool isBool = elt.isInteger(1);
  if (!isBool && !isa<FloatType>(elt))
    return false;
  int64_t w = kernel.width;
  bool rowsBroadcast = viewType.getDimSize(2) == 1;
  bool keysBroadcast = viewType.getDimSize(3) == 1;
  SmallVector<int64_t> strides;
  int64_t offset;
  bool unitKeyStride =
      succeeded(viewType.getStridesAndOffset(strides, offset)) &&
      strides.back() == 1;
  bool isFull = !rowsBroadcast && !keysBroadcast;
  // A full mask needs whole blocks of W keys and contiguous keys; otherwise
  // the op stays a loop.
  if (isFull && (!llvm::isPowerOf2_64(w) || memrefOf(st).getDimSize(0) % w ||
                 !unitKeyStride))
    return false;

  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  UserMaskKernel k{kernel, st, view, rowMax, isBool, {}, {}, {}, {}, {}};
  Value one = kernel.idx(1);
  if (!rowsBroadcast)
    k.lastRow = arith::SubIOp::create(
        b, loc, memref::DimOp::create(b, loc, view, 2), one);
  if (!keysBroadcast) {
    k.keys = memref::DimOp::create(b, loc, view, 3);
    k.lastKey = arith::SubIOp::create(b, loc, k.keys, one);
  }
  if (isFull) {
    // i1 is one byte in memory.
    k.eltBytes = isBool ? 1 : elt.getIntOrFloatBitWidth() / 8;
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, view);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view);
    k.byteBase =
        arith::AddIOp::create(b, loc, base,
                              arith::MulIOp::create(b, loc, meta.getOffset(),
                                                    kernel.idx(k.eltBytes)));
    k.rowStride = meta.getStrides()[2];
  }

  int64_t bq = memrefOf(st).getDimSize(1);
  kernel.loop(0, bq, w, [&](Value i0) {
    Value initMax = rowMax ? kernel.load(rowMax, {i0}) : Value();
    Value result;
    if (rowsBroadcast) {
      result = k.perKey(i0, initMax);
    } else if (keysBroadcast) {
      result = k.perRow(i0, initMax);
    } else {
      // A view of one key (the mask's key dim is 1 at run time, or the
      // block's last key) reads that key for every j: the per-row kernel.
      Value oneKey =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k.keys, one);
      auto branch = [&](bool perRow) {
        return [&, perRow](OpBuilder &nb, Location nloc) {
          Value r = perRow ? k.perRow(i0, initMax) : k.full(i0, initMax);
          scf::YieldOp::create(nb, nloc, r ? ValueRange(r) : ValueRange());
        };
      };
      auto ifOp =
          scf::IfOp::create(b, loc, oneKey, branch(true), branch(false));
      result = initMax ? ifOp.getResult(0) : Value();
    }
    if (rowMax)
      kernel.store(result, rowMax, {i0});
  });
  return true;
}
