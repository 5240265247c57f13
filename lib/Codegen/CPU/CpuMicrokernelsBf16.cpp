//===- CpuMicrokernelsBf16.cpp - the bf16 products on vdpbf16ps -----------===//
//
// Part of the attn project.
//
// Decides whether a `scores` or `pv` tile op can run on the bf16 dot-product
// kernels of CpuKernelsBf16.h and builds them: the packed operands live in
// scratch buffers of the query block (CpuScratch.h).
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsBf16.h"
#include "CpuScratch.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn::detail;

namespace {

/// The ancestor of `op` right inside its scf.forall: the key loop (or tail
/// branch) it is in.
Operation *keyLoopOf(Operation *op) {
  auto forall = op->getParentOfType<scf::ForallOp>();
  Operation *anchor = op;
  while (anchor->getParentOp() != forall.getOperation())
    anchor = anchor->getParentOp();
  return anchor;
}

bool isBf16(Value v) { return memrefOf(v).getElementType().isBF16(); }

} // namespace

Value mlir::attn::detail::bf16Scratch(Operation *op, int64_t rows, int64_t cols,
                                      Type elt) {
  Builder b(op->getContext());
  return queryBlockScratch(
      op, MemRefType::get({rows, cols}, elt ? elt : b.getBF16Type()),
      "bf16-pairs", /*shared=*/false);
}

bool mlir::attn::detail::scoresTakePackedQuery(linalg::GenericOp op,
                                               bool f16Pairs) {
  Value qt = op.getDpsInputs()[0], k = op.getDpsInputs()[1];
  auto scale = op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
  int64_t d = memrefOf(qt).getDimSize(0);
  bool pairable =
      isBf16(k) || (f16Pairs && memrefOf(k).getElementType().isF16());
  if (!pairable || !scale || scale.getValueAsDouble() == 0.0 || d % 2 != 0 ||
      !op->getParentOfType<scf::ForallOp>())
    return false;
  // The query tile must be complete before the key loop starts.
  Operation *qtDef = qt.getDefiningOp();
  return qtDef && !keyLoopOf(op)->isAncestor(qtDef);
}

std::pair<Value, Value>
mlir::attn::detail::emitQueryPairs(KernelBuilder &kernel, linalg::GenericOp op,
                                   bool split) {
  Value qt = op.getDpsInputs()[0];
  auto scale = op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
  int64_t d = memrefOf(qt).getDimSize(0), bq = memrefOf(qt).getDimSize(1);
  float unscale = 1.0f / static_cast<float>(scale.getValueAsDouble());
  // The keys' type: bf16, or f16 on AMX-FP16 tiles.
  Type elt = memrefOf(op.getDpsInputs()[1]).getElementType();
  Value qPairs = bf16Scratch(op, d / 2, 2 * bq, elt);
  Value qLo = split ? bf16Scratch(op, d / 2, 2 * bq) : Value();
  OpBuilder::InsertionGuard guard(kernel.b);
  kernel.b.setInsertionPoint(keyLoopOf(op));
  if (split)
    emitPackRowPairsF32Split(kernel, qt, qPairs, qLo, unscale);
  else
    emitPackRowPairsF32(kernel, qt, qPairs, unscale);
  return {qPairs, qLo};
}

bool mlir::attn::detail::emitScoresBf16(KernelBuilder &kernel,
                                        const RegisterBlocking &blocking,
                                        linalg::GenericOp op,
                                        const ContractionExtras &extras,
                                        bool unscaled) {
  if (!scoresTakePackedQuery(op))
    return false;
  auto scale = op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
  float qScale = static_cast<float>(scale.getValueAsDouble());
  Value qPairs = emitQueryPairs(kernel, op).first;
  emitBf16Contraction(
      kernel, blocking, qPairs, op.getDpsInputs()[1],
      [&](Value j, Value t) -> SmallVector<Value> {
        return {j,
                arith::MulIOp::create(kernel.b, kernel.loc, t, kernel.idx(2))};
      },
      op.getDpsInits()[0], extras, unscaled ? 1.0f : qScale);
  return true;
}

bool mlir::attn::detail::rewritePairValues(linalg::GenericOp op,
                                           int64_t width) {
  if (op.getNumDpsInputs() != 1)
    return false;
  MemRefType src = memrefOf(op.getDpsInputs()[0]);
  MemRefType dst = memrefOf(op.getDpsInits()[0]);
  if (!src.getElementType().isBF16() || !dst.getElementType().isBF16() ||
      src.getDimSize(0) % 2 != 0 || src.getDimSize(1) % width != 0 ||
      dst.getDimSize(0) * 2 != src.getDimSize(0) ||
      dst.getDimSize(1) != 2 * src.getDimSize(1))
    return false;
  OpBuilder builder(op);
  KernelBuilder kernel(builder, op.getLoc(), width);
  emitPackRowPairsBf16(kernel, op.getDpsInputs()[0], op.getDpsInits()[0]);
  op->erase();
  return true;
}

bool mlir::attn::detail::readsPairedValues(linalg::GenericOp op) {
  return op.getNumDpsInputs() == 2 &&
         op.getIndexingMapsArray()[1] == pairedValuesMap(op.getContext());
}

bool mlir::attn::detail::bf16DotTakesPV(const KernelBuilder &kernel,
                                        linalg::GenericOp op) {
  Value pt = op.getDpsInputs()[0], v = op.getDpsInputs()[1];
  int64_t bk = memrefOf(pt).getDimSize(0);
  int64_t dv = memrefOf(op.getDpsInits()[0]).getDimSize(0);
  // V [bk, dv], or in key pairs [bk / 2, 2 dv].
  bool paired = readsPairedValues(op);
  int64_t rows = paired ? bk / 2 : bk;
  int64_t cols = paired ? 2 * dv : dv;
  return isBf16(v) && memrefOf(pt).getElementType().isF32() && bk % 2 == 0 &&
         memrefOf(v).getDimSize(0) == rows &&
         memrefOf(v).getDimSize(1) == cols && dv % kernel.width == 0 &&
         op->getParentOfType<scf::ForallOp>();
}

bool mlir::attn::detail::emitPVBf16(KernelBuilder &kernel,
                                    const RegisterBlocking &blocking,
                                    linalg::GenericOp op,
                                    const ContractionExtras &extras,
                                    Value pPairs) {
  if (!bf16DotTakesPV(kernel, op))
    return false;
  Value pt = op.getDpsInputs()[0], v = op.getDpsInputs()[1];
  int64_t bk = memrefOf(pt).getDimSize(0), bq = memrefOf(pt).getDimSize(1);
  int64_t dv = memrefOf(op.getDpsInits()[0]).getDimSize(0);
  if (!pPairs) {
    pPairs = bf16Scratch(op, bk / 2, 2 * bq);
    emitPackRowPairsF32(kernel, pt, pPairs, std::nullopt);
  }
  Value vPairs = v;
  if (!readsPairedValues(op)) {
    vPairs = bf16Scratch(op, bk / 2, 2 * dv);
    emitPackRowPairsBf16(kernel, v, vPairs);
  }
  emitBf16Contraction(
      kernel, blocking, pPairs, vPairs,
      [&](Value e, Value t) -> SmallVector<Value> {
        return {t,
                arith::MulIOp::create(kernel.b, kernel.loc, e, kernel.idx(2))};
      },
      op.getDpsInits()[0], extras, 1.0f, /*reducesKeyPairs=*/true);
  return true;
}
