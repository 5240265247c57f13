//===- CpuRowTranspose.cpp - CPU kernels of the query and output tiles ----===//
//
// Part of the attn project.
//
// The two tile ops that run once per query block and change the layout
// between the operands (rows contiguous along D) and the tiles (query rows
// contiguous): `scale_query`, Qt[d, i] = Q[i, d] * scale * log2(e), and
// `output`, O[i, e] = acct[e, i] * inv[i] (0 where inv = 0), rounded to the
// element type. As scalar loops they cost two passes over bq * D elements
// per block, which two key blocks (L = 128) do not amortize. Here every W x W
// block is W vector loads along the source's contiguous dim, the op's body
// applied to the vectors (the body is elementwise), a transpose in registers
// (log2(W) stages of vector.shuffle) and W vector stores along the
// destination's contiguous dim (a bf16 output rounded in integer code is
// transposed as f32 and takes the body after the transpose, a row at a time
// with its 1/l broadcast: LLVM made a transpose of bf16 lanes scalar moves).
// Only whole groups of W rows take this path; the rows after the last group
// (a short last query block) keep a copy of the op, on views of those rows.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// True if `v` is a memref whose innermost dim has stride 1.
bool hasContiguousRows(Value v) {
  MemRefType type = memrefOf(v);
  return type && type.getRank() > 0 && hasContiguousInnerDim(type);
}

/// True if `dim` of `v` is static and a multiple of `width`.
bool isWholeVectors(Value v, unsigned dim, int64_t width) {
  MemRefType type = memrefOf(v);
  return !type.isDynamicDim(dim) && type.getDimSize(dim) % width == 0;
}

/// True if the body of `op` can be applied to vectors: only constants and
/// elementwise-mappable ops, and the output's block argument unused.
bool hasVectorizableBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  for (Operation &inner : body.without_terminator())
    if (!isa<arith::ConstantOp>(inner) &&
        !(inner.hasTrait<OpTrait::Vectorizable>() &&
          inner.hasTrait<OpTrait::Elementwise>()))
      return false;
  return body.getArguments().back().use_empty();
}

/// The op's body on W-lane vectors: `inputs[k]` stands for block argument
/// k (vector or scalar). Returns the yielded value as a vector.
Value applyBody(KernelBuilder &kernel, linalg::GenericOp op,
                ValueRange inputs) {
  Block &body = op.getRegion().front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(body.getArguments(), inputs))
    map.map(arg, v);
  return emitBodyOnVectors(kernel, body, map);
}

/// A vector of W elements of `mem` (of its element type) at `indices`.
Value loadRow(KernelBuilder &kernel, Value mem, ValueRange indices) {
  auto type = VectorType::get({kernel.width}, memrefOf(mem).getElementType());
  return vector::LoadOp::create(kernel.b, kernel.loc, type, mem, indices);
}

/// A view of `mem` that keeps dim `rowDim`'s entries [start, end) and every
/// entry of its other dims.
Value viewOfRows(KernelBuilder &kernel, Value mem, unsigned rowDim, Value start,
                 Value end) {
  MemRefType type = memrefOf(mem);
  OpBuilder &b = kernel.b;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t dim = 0, e = type.getRank(); dim < e; ++dim) {
    strides.push_back(b.getIndexAttr(1));
    if (dim == rowDim) {
      offsets.push_back(start);
      sizes.push_back(
          arith::SubIOp::create(b, kernel.loc, end, start).getResult());
      continue;
    }
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(memref::getMixedSize(b, kernel.loc, mem, dim));
  }
  return memref::SubViewOp::create(b, kernel.loc, mem, offsets, sizes, strides);
}

/// The op, on the rows [start, end) of each operand (`rowDims[k]` is the
/// row dim of operand k), untagged: a plain loop nest for the last rows.
void copyOpForRows(KernelBuilder &kernel, linalg::GenericOp op,
                   ArrayRef<unsigned> rowDims, Value start, Value end) {
  SmallVector<Value> operands;
  for (auto [operand, dim] : llvm::zip(op->getOperands(), rowDims))
    operands.push_back(viewOfRows(kernel, operand, dim, start, end));
  Operation *copy = kernel.b.clone(*op);
  copy->setOperands(operands);
  copy->removeAttr(AttnDialect::getTileRoleAttrName());
}

/// The number of rows covered by whole groups of W: n - n % W.
Value wholeGroups(KernelBuilder &kernel, Value n) {
  Value w = kernel.idx(kernel.width);
  Value groups = arith::DivUIOp::create(kernel.b, kernel.loc, n, w);
  return arith::MulIOp::create(kernel.b, kernel.loc, groups, w);
}

/// for (i0 = 0; i0 < ub; i0 += W) body(i0), with a dynamic `ub`.
void rowGroups(KernelBuilder &kernel, Value ub,
               function_ref<void(Value)> body) {
  scf::ForOp::create(kernel.b, kernel.loc, kernel.idx(0), ub,
                     kernel.idx(kernel.width), ValueRange{},
                     [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                       OpBuilder::InsertionGuard guard(kernel.b);
                       kernel.b.setInsertionPoint(nb.getInsertionBlock(),
                                                  nb.getInsertionPoint());
                       body(iv);
                       scf::YieldOp::create(kernel.b, kernel.loc);
                     });
}

bool hasMaps(linalg::GenericOp op, ArrayRef<AffineMap> maps) {
  return op.getIndexingMapsArray() == SmallVector<AffineMap>(maps);
}

AffineMap mapOf(MLIRContext *context, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(2, 0, exprs, context);
}

/// Prefetches, for each of the W rows from `i0`, the line at column `col`
/// of the same row of the block that follows `view` (the next query block's
/// rows: see CpuPrefetch.cpp); nothing if `after` is null.
void prefetchRows(KernelBuilder &kernel, Value view, Value after, Value i0,
                  Value col, bool forWrite) {
  if (!after)
    return;
  MemRefType type = memrefOf(view);
  int64_t eltBytes = type.getElementTypeBitWidth() / 8;
  int64_t rowBytes = type.getDimSize(1) * eltBytes;
  OpBuilder &b = kernel.b;
  Location loc = kernel.loc;
  Value start = arith::AddIOp::create(
      b, loc, after,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, i0, kernel.idx(rowBytes)),
          arith::MulIOp::create(b, loc, col, kernel.idx(eltBytes))));
  for (int64_t r = 0; r < kernel.width; ++r)
    prefetchAt(kernel,
               arith::AddIOp::create(b, loc, start, kernel.idx(r * rowBytes)),
               forWrite);
}

/// Qt[d, i] = body(Q[i, d]): ins(Q [n, D]) outs(Qt [D, n]).
bool emitScaleQuery(KernelBuilder &kernel, linalg::GenericOp op) {
  MLIRContext *context = op.getContext();
  if (op.getNumDpsInputs() != 1 ||
      !hasMaps(op, {mapOf(context, {1, 0}), mapOf(context, {0, 1})}))
    return false;
  Value q = op.getDpsInputs()[0], qt = op.getDpsInits()[0];
  if (!isWholeVectors(q, 1, kernel.width))
    return false;
  int64_t d = memrefOf(q).getDimSize(1);
  Value n = memref::DimOp::create(kernel.b, kernel.loc, q, 0);
  Value whole = wholeGroups(kernel, n);
  Value after = contiguousRowStride(q) ? addressAfterView(kernel, q) : Value();
  rowGroups(kernel, whole, [&](Value i0) {
    kernel.loop(0, d, kernel.width, [&](Value d0) {
      prefetchRows(kernel, q, after, i0, d0, /*forWrite=*/false);
      SmallVector<Value> rows;
      for (int64_t r = 0; r < kernel.width; ++r)
        rows.push_back(applyBody(
            kernel, op, {loadRow(kernel, q, {kernel.add(i0, r), d0})}));
      SmallVector<Value> cols = transposeSquare(kernel, rows);
      for (int64_t c = 0; c < kernel.width; ++c)
        kernel.store(cols[c], qt, {kernel.add(d0, c), i0});
    });
  });
  copyOpForRows(kernel, op, {0, 1}, whole, n);
  return true;
}

/// O[i, e] = body(acct[e, i], inv[i]): ins(acct [Dv, n], inv [n])
/// outs(O [n, Dv]).
bool emitOutput(KernelBuilder &kernel, linalg::GenericOp op) {
  MLIRContext *context = op.getContext();
  if (op.getNumDpsInputs() != 2 ||
      !hasMaps(op, {mapOf(context, {1, 0}), mapOf(context, {0}),
                    mapOf(context, {0, 1})}))
    return false;
  Value acc = op.getDpsInputs()[0], inv = op.getDpsInputs()[1];
  Value out = op.getDpsInits()[0];
  if (!isWholeVectors(acc, 0, kernel.width) ||
      !memrefOf(acc).getElementType().isF32() ||
      !memrefOf(inv).getElementType().isF32())
    return false;
  int64_t dv = memrefOf(acc).getDimSize(0);
  Value n = memref::DimOp::create(kernel.b, kernel.loc, out, 0);
  Value whole = wholeGroups(kernel, n);
  Value after =
      contiguousRowStride(out) ? addressAfterView(kernel, out) : Value();
  // The body before the transpose (one inv vector per row group), except
  // for a bf16 output rounded in integer code: after it, on f32 rows with
  // each row's inv broadcast, so that the transpose moves f32 lanes and the
  // rounding runs on whole rows (LLVM made the bf16 transpose and the
  // rounding's select scalar moves and cmovs, on AVX2 and on AVX-512
  // without AVX512-BF16 alike).
  bool bodyFirst =
      !(kernel.bf16RoundInIntegers && memrefOf(out).getElementType().isBF16());
  rowGroups(kernel, whole, [&](Value i0) {
    Value invRows = bodyFirst ? kernel.load(inv, {i0}) : Value();
    kernel.loop(0, dv, kernel.width, [&](Value e0) {
      prefetchRows(kernel, out, after, i0, e0, /*forWrite=*/true);
      SmallVector<Value> cols;
      for (int64_t c = 0; c < kernel.width; ++c) {
        Value col = kernel.load(acc, {kernel.add(e0, c), i0});
        cols.push_back(
            bodyFirst ? applyBody(kernel, op, {col, invRows, Value()}) : col);
      }
      SmallVector<Value> rows = transposeSquare(kernel, cols);
      for (int64_t r = 0; r < kernel.width; ++r) {
        Value i = kernel.add(i0, r);
        Value row =
            bodyFirst
                ? rows[r]
                : applyBody(kernel, op,
                            {rows[r], kernel.broadcast(inv, {i}), Value()});
        kernel.store(row, out, {i, e0});
      }
    });
  });
  copyOpForRows(kernel, op, {1, 0, 0}, whole, n);
  return true;
}

} // namespace

bool mlir::attn::detail::emitRowTranspose(KernelBuilder &kernel,
                                          linalg::GenericOp op, TileRole role) {
  if (!op.hasPureBufferSemantics() || !hasVectorizableBody(op) ||
      !llvm::all_of(op->getOperands(), hasContiguousRows) ||
      !llvm::isPowerOf2_64(kernel.width))
    return false;
  if (role == TileRole::ScaleQuery)
    return emitScaleQuery(kernel, op);
  if (role == TileRole::Output)
    return emitOutput(kernel, op);
  return false;
}
