//===- CpuMicrokernels.cpp - vector microkernels for the tile ops ---------===//
//
// Part of the attn project.
//
// Replaces the tagged tile ops of attn-tile-online-softmax (after
// bufferization, on memrefs) with the vector kernels of CpuKernels.h: reads
// each op's TileRole, checks that the kernel can take its operands (static,
// contiguous, rows a multiple of the vector width), picks the register
// blocking, and folds the neighbours a kernel takes over (the zero fill and
// the row max of the scores, the row sum of the probabilities, the rescale
// before P.V).
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/Passes.h"

#include "CpuKernels.h"
#include "CpuKernelsAmx.h"
#include "CpuKernelsBf16.h"
#include "CpuKernelsWiden.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCPUMICROKERNELS
#include "attn/Codegen/CPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {

/// True if `v` is a memref with a static shape whose innermost dim is
/// contiguous (vector loads along it are plain loads).
bool isStaticContiguous(Value v) {
  MemRefType type = memrefOf(v);
  return type && type.hasStaticShape() && hasContiguousInnerDim(type);
}

/// `op` as a tile op with `role` whose operands the kernels handle, or null.
linalg::GenericOp asTile(Operation *op, TileRole role) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      getTileRole(generic) != role)
    return {};
  for (Value v : generic->getOperands())
    if (!isStaticContiguous(v))
      return {};
  return generic;
}

/// The products read K and V (or Pt) in any float type and extend each
/// element; every other kernel works on f32 tiles only.
bool readsAnyFloat(TileRole role) {
  return role == TileRole::Scores || role == TileRole::PV;
}

/// True if the kernels take `op` as a tile op of `role` (ScaleQuery and
/// Output aside): static contiguous operands, query rows (the innermost dim
/// of the output) in whole vectors of `width`, f32 tiles but for what the
/// products read.
bool kernelTakes(linalg::GenericOp op, TileRole role, int64_t width) {
  if (!asTile(op, role))
    return false;
  MemRefType outType = memrefOf(op.getDpsInits()[0]);
  int64_t bq = outType.getDimSize(outType.getRank() - 1);
  if (bq % width != 0 || !outType.getElementType().isF32())
    return false;
  return readsAnyFloat(role) || llvm::all_of(op.getDpsInputs(), [](Value v) {
           return memrefOf(v).getElementType().isF32();
         });
}

/// What a per-role rewrite works on: the tile op, the kernel builder in
/// front of it, the register blocking, and the neighbours it folds into its
/// kernel (erased with the op).
struct TileRewrite {
  linalg::GenericOp op;
  KernelBuilder &kernel;
  const RegisterBlocking &blocking;
  SmallVector<Operation *> folded;
  /// bf16 products on vdpbf16ps where the operands allow (bf16-dot).
  bool bf16Dot = false;
  /// bf16 products on AMX tiles where the operands allow (amx), before
  /// bf16Dot.
  bool amx = false;
  /// With amx: f16 products on AMX-FP16's tdpfp16ps (amx-fp16).
  bool amxFp16 = false;
  /// The P.V ops (amx, bf16Dot) whose probabilities their probs kernel wrote
  /// packed into key pairs, and the buffer it wrote them to.
  DenseMap<Operation *, ProbPairs> *probPairs = nullptr;
  /// This query block's query rows (the scale_query tile's input) and
  /// output rows (the output tile's init), for the products to prefetch the
  /// next block's (NextBlockRows).
  const struct NextBlockRows *nextRows = nullptr;
  /// The f32 products' most reduction steps per prefetch (prefetch-spread).
  int64_t prefetchSpread = 1;

  Value input(unsigned i) { return op.getDpsInputs()[i]; }
  Value output(unsigned i = 0) { return op.getDpsInits()[i]; }
};

/// The query and output rows of each query block, found before any tile op
/// is rewritten: the transposed query tile's buffer -> the query rows it is
/// read from; the accumulator's buffer -> the output rows it is written to.
struct NextBlockRows {
  DenseMap<Value, Value> queryOf, outputOf;

  explicit NextBlockRows(ArrayRef<linalg::GenericOp> tiles) {
    for (linalg::GenericOp op : tiles) {
      std::optional<TileRole> role = getTileRole(op);
      if (role == TileRole::ScaleQuery && op.getNumDpsInputs() == 1)
        queryOf[op.getDpsInits()[0]] = op.getDpsInputs()[0];
      if (role != TileRole::Output || op.getNumDpsInputs() < 1)
        continue;
      // The accumulator as P.V sees it: the key loop's iter_arg where the
      // loop still carries it.
      Value acc = op.getDpsInputs()[0], rows = op.getDpsInits()[0];
      outputOf[acc] = rows;
      if (auto result = dyn_cast<OpResult>(acc))
        if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
          outputOf[loop.getRegionIterArgs()[result.getResultNumber()]] = rows;
    }
  }

  /// `rows` (a static view whose rows are contiguous: ContractionPrefetch
  /// takes no other) usable at `user`: itself where it dominates `user`,
  /// else a copy of its memref.subview in front of the op of the subview's
  /// block that holds `user` (the key loop: the copy is made once per query
  /// block), when the subview's operands dominate that op; null otherwise.
  static Value viewAt(Value rows, Operation *user) {
    if (!rows || !contiguousRowStride(rows) || !memrefOf(rows).hasStaticShape())
      return {};
    DominanceInfo dom;
    if (dom.properlyDominates(rows, user))
      return rows;
    auto subview = rows.getDefiningOp<memref::SubViewOp>();
    Operation *anchor =
        subview ? subview->getBlock()->findAncestorOpInBlock(*user) : nullptr;
    if (!anchor || !llvm::all_of(subview->getOperands(), [&](Value v) {
          return dom.properlyDominates(v, anchor);
        }))
      return {};
    OpBuilder b(anchor);
    return b.clone(*subview)->getResult(0);
  }
};

/// The row reduction of `role` (the row max, the row sum) right after
/// `rewrite.op` that reduces its output, for the op's kernel to fold in
/// (taken while the values are in registers), or null.
linalg::GenericOp foldableReduction(TileRewrite &rewrite, TileRole role) {
  linalg::GenericOp next = asTile(rewrite.op->getNextNode(), role);
  if (!next || next.getDpsInputs()[0] != rewrite.output())
    return {};
  return next;
}

/// Set by the bf16 scores kernel on the probabilities op when it leaves the
/// scores unscaled: the scale the probabilities apply (an f32 attribute).
constexpr llvm::StringLiteral kProbsScoreScaleAttrName =
    "attn.probs_score_scale";

/// The probabilities op that comes after `after` and is the first op from
/// there on to touch the score tile `st` (nothing between reads the scaled
/// scores: no mask, softcap or ALiBi), if the kernels take it (so that it
/// is sure to be rewritten with the scale), or null.
linalg::GenericOp probsAfter(Operation *after, Value st, int64_t width) {
  for (Operation *next = after->getNextNode(); next;
       next = next->getNextNode()) {
    WalkResult uses = next->walk([&](Operation *inner) {
      return llvm::is_contained(inner->getOperands(), st)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (!uses.wasInterrupted())
      continue;
    auto probs = dyn_cast<linalg::GenericOp>(next);
    return probs && kernelTakes(probs, TileRole::Probs, width) &&
                   probs.getDpsInits()[0] == st
               ? probs
               : linalg::GenericOp();
  }
  return {};
}

/// The tile op's `attrName` (kHiddenAboveAttrName: a block on the causal
/// diagonal; kHiddenBelowAttrName: on a window's lower edge), if any: the
/// f32 and bf16-dot kernels leave out the pairs it hides. Only what the
/// tiling sets is taken (a signless i64 in [0, 2^30]: no index sums of the
/// kernels overflow); anything else is ignored, and the whole tile is
/// computed.
std::optional<int64_t> hiddenPairs(linalg::GenericOp op,
                                   llvm::StringLiteral attrName) {
  auto attr = op->getAttrOfType<IntegerAttr>(attrName);
  if (!attr || !attr.getType().isSignlessInteger(64))
    return std::nullopt;
  int64_t h = attr.getInt();
  if (h < 0 || h > (int64_t(1) << 30))
    return std::nullopt;
  return h;
}

/// The register blocking of a product (f32, or bf16 on the dot products) on
/// a band's edge (extras.hiddenAbove or hiddenBelow set): its kernel skips
/// the register blocks of scores the edge hides and shortens each P.V
/// block's reduction to the keys its rows see, so the fewer rows a block
/// spans, the less of the hidden half it computes. On 16 lanes one row
/// vector (16 rows) and 16 keys or value columns (16 accumulators): a
/// 64-row diagonal block computes 5/8 of its products where four row
/// vectors (the default) computed all of them. hq=8 d=64 causal, one
/// thread, paired CPU time against four row vectors (bench/ab.py,
/// Zen 4): L=512 0.92x (12 keys 0.92x, 8 0.94x, 24 0.95x; two row vectors
/// of 12 keys 0.97x), L=2048 0.98x; d=128 L=512 0.93x, L=2048 0.97x; bf16
/// L=512 0.92x, d=128 0.94x (against the kernels that computed the bf16
/// diagonal whole) (journal/round-25.md). The avx2
/// kernels' two 8-lane row vectors span 16 rows already (one row vector of
/// 12 or 8 keys took 1.04x and 1.03x there, forced on the same host): kept.
RegisterBlocking edgeBlocking(const RegisterBlocking &blocking,
                              const ContractionExtras &extras) {
  bool hidden = extras.hiddenAbove || extras.hiddenBelow;
  if (!hidden || blocking.width != 16 || blocking.rowVecs == 1)
    return blocking;
  return {blocking.width, /*rowVecs=*/1, /*regBlock=*/16};
}

/// St[j, i] = sum_d K[j, d] * Qt[d, i]. The tile's zero fill right before it
/// is folded in (accumulators start at 0), and so is the row max right after
/// it (taken from the accumulators while they are in registers).
bool rewriteScores(TileRewrite &rewrite) {
  Value out = rewrite.output();
  ContractionExtras extras;
  auto zeroFill = dyn_cast_or_null<linalg::FillOp>(rewrite.op->getPrevNode());
  if (zeroFill && zeroFill.hasPureBufferSemantics() &&
      zeroFill.getDpsInits()[0] == out &&
      getTileRole(zeroFill) == TileRole::InitScores &&
      matchPattern(zeroFill.getDpsInputs()[0], m_AnyZeroFloat())) {
    extras.fromZero = true;
    rewrite.folded.push_back(zeroFill);
  }
  linalg::GenericOp rowMax = foldableReduction(rewrite, TileRole::RowMax);
  if (rowMax) {
    extras.rowMax = rowMax.getDpsInits()[0];
    rewrite.folded.push_back(rowMax);
  }
  Value k = rewrite.input(1);
  if (contiguousRowStride(k))
    extras.prefetchAfter = k;
  if (rewrite.nextRows)
    extras.nextRows = NextBlockRows::viewAt(
        rewrite.nextRows->queryOf.lookup(rewrite.input(0)), rewrite.op);
  if (rewrite.amx && amxTakesScores(rewrite.op, rewrite.amxFp16)) {
    // As with bf16-dot below: the probabilities take the scale where they
    // can; the row max is taken from the stored tile.
    auto scale = rewrite.op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
    linalg::GenericOp probs =
        rowMax && scale.getValueAsDouble() > 0.0
            ? probsAfter(rowMax, out, rewrite.kernel.width)
            : linalg::GenericOp();
    emitScoresAmx(rewrite.kernel, rewrite.op, extras.rowMax,
                  /*unscaled=*/bool(probs), extras.fromZero);
    if (probs)
      probs->setAttr(kProbsScoreScaleAttrName,
                     rewrite.kernel.b.getF32FloatAttr(
                         static_cast<float>(scale.getValueAsDouble())));
    return true;
  }
  // Every other kernel reads one K tile: split-f16's stay a generic.
  if (isSplitF16(rewrite.op))
    return false;
  extras.hiddenAbove = hiddenPairs(rewrite.op, kHiddenAboveAttrName);
  extras.hiddenBelow = hiddenPairs(rewrite.op, kHiddenBelowAttrName);
  RegisterBlocking blocking = edgeBlocking(rewrite.blocking, extras);
  if (rewrite.bf16Dot) {
    // The probabilities take the scale (in the FMA they start with) instead
    // of a multiply per score, where nothing between reads scaled scores;
    // the row max scales each row vector's block maximum.
    auto scale = rewrite.op->getAttrOfType<FloatAttr>(kScoreScaleAttrName);
    linalg::GenericOp probs =
        rowMax && scale && scale.getValueAsDouble() > 0.0
            ? probsAfter(rowMax, out, rewrite.kernel.width)
            : linalg::GenericOp();
    if (probs)
      extras.rowMaxScale = static_cast<float>(scale.getValueAsDouble());
    if (emitScoresBf16(rewrite.kernel, blocking, rewrite.op, extras,
                       /*unscaled=*/bool(probs))) {
      if (probs)
        probs->setAttr(kProbsScoreScaleAttrName,
                       rewrite.kernel.b.getF32FloatAttr(extras.rowMaxScale));
      return true;
    }
    extras.rowMaxScale = 1.0f;
  }
  // f16 (or bf16 off the dot products) K: widened to f32 once per tile.
  if (Value wide = widenTileToF32(rewrite.kernel, rewrite.op, k))
    k = wide;
  extras.prefetchSpread = rewrite.prefetchSpread;
  emitContraction(rewrite.kernel, blocking, /*a=*/rewrite.input(0),
                  /*bMat=*/k, /*bIsTC=*/false, out, extras);
  return true;
}

/// Whether rewritePV builds `pv` on vdpbf16ps (emitPVBf16): not on AMX
/// tiles, V read as [bk, dv] or in key pairs, no split-f16 parts.
bool pvOnBf16Dot(const TileRewrite &rewrite, linalg::GenericOp pv) {
  if (!rewrite.bf16Dot || readsTransposedValues(pv) || isSplitF16(pv))
    return false;
  if (rewrite.amx && amxTakesPV(pv, rewrite.amxFp16))
    return false;
  return bf16DotTakesPV(rewrite.kernel, pv);
}

/// acct[e, i] += sum_j V[j, e] * Pt[j, i], with the rescale of the
/// accumulator right before it folded in (applied as it is loaded).
bool rewritePV(TileRewrite &rewrite) {
  Value out = rewrite.output();
  ContractionExtras extras;
  linalg::GenericOp rescale =
      asTile(rewrite.op->getPrevNode(), TileRole::Rescale);
  if (rescale && rescale.getDpsInits()[0] == out) {
    extras.rowScale = rescale.getDpsInputs()[0];
    rewrite.folded.push_back(rescale);
  }
  Value v = rewrite.input(1);
  if (contiguousRowStride(v))
    extras.prefetchAfter = v;
  if (rewrite.nextRows) {
    extras.nextRows = NextBlockRows::viewAt(
        rewrite.nextRows->outputOf.lookup(out), rewrite.op);
    extras.nextRowsForWrite = true;
  }
  if (rewrite.amx && amxTakesPV(rewrite.op, rewrite.amxFp16)) {
    emitPVAmx(rewrite.kernel, rewrite.op, extras.rowScale,
              rewrite.probPairs ? rewrite.probPairs->lookup(rewrite.op)
                                : ProbPairs());
    return true;
  }
  // Every other kernel reads V [bk, dv]: Vt stays a generic (loops), and
  // so does Vp off the bf16 dot products.
  if (readsTransposedValues(rewrite.op) || isSplitF16(rewrite.op) ||
      (readsPairedValues(rewrite.op) && !pvOnBf16Dot(rewrite, rewrite.op)))
    return false;
  extras.hiddenAbove = hiddenPairs(rewrite.op, kHiddenAboveAttrName);
  extras.hiddenBelow = hiddenPairs(rewrite.op, kHiddenBelowAttrName);
  RegisterBlocking blocking = edgeBlocking(rewrite.blocking, extras);
  if (pvOnBf16Dot(rewrite, rewrite.op)) {
    emitPVBf16(rewrite.kernel, blocking, rewrite.op, extras,
               rewrite.probPairs ? rewrite.probPairs->lookup(rewrite.op).hi
                                 : Value());
    return true;
  }
  if (Value wide = widenTileToF32(rewrite.kernel, rewrite.op, v))
    v = wide;
  extras.prefetchSpread = rewrite.prefetchSpread;
  emitContraction(rewrite.kernel, blocking, /*a=*/rewrite.input(0),
                  /*bMat=*/v, /*bIsTC=*/true, out, extras);
  return true;
}

/// r[i] = max_j St[j, i], when the scores kernel did not take it.
bool rewriteRowMax(TileRewrite &rewrite) {
  emitKeyReduction(rewrite.kernel, rewrite.input(0), rewrite.output(),
                   /*isMax=*/true);
  return true;
}

/// l[i] += sum_j Pt[j, i], when the probabilities kernel did not take it.
bool rewriteRowSum(TileRewrite &rewrite) {
  emitKeyReduction(rewrite.kernel, rewrite.input(0), rewrite.output(),
                   /*isMax=*/false);
  return true;
}

/// The P.V op that comes after `op` in its block (the key loop's body),
/// or null.
linalg::GenericOp pvAfter(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (linalg::GenericOp pv = asTile(next, TileRole::PV))
      return pv;
  return {};
}

/// Where the accumulator's rescale is a pass of its own (the P.V on AMX
/// tiles, which skips factors of 1), the running max moves only when a
/// block's max passes it by more than 2^8: probabilities up to 256, as
/// exact once normalized, and most blocks need no rescale.
constexpr float kAmxMaxSlack = 8.0f;

bool rewriteMaxUpdate(TileRewrite &rewrite) {
  linalg::GenericOp pv = pvAfter(rewrite.op);
  bool lazy = rewrite.amx && pv && amxTakesPV(pv, rewrite.amxFp16);
  emitRowMaxUpdate(rewrite.kernel, rewrite.input(0), rewrite.output(0),
                   rewrite.output(1), lazy ? kAmxMaxSlack : 0.0f);
  return true;
}

/// Pt = exp2(St - m), with the row sum right after it folded in.
bool rewriteProbs(TileRewrite &rewrite) {
  Value out = rewrite.output();
  Value rowSum;
  if (linalg::GenericOp sum = foldableReduction(rewrite, TileRole::RowSum)) {
    rowSum = sum.getDpsInits()[0];
    rewrite.folded.push_back(sum);
  }
  // The P.V that reads these probabilities (a few ops further): with bf16
  // values the result is bf16 and, on the dot products, P itself is rounded
  // to bf16, so exp2's degree-4 polynomial is enough.
  bool forBf16 = false;
  linalg::GenericOp pv;
  for (Operation *next = rewrite.op->getNextNode(); next;
       next = next->getNextNode())
    if ((pv = asTile(next, TileRole::PV))) {
      // Not for split-f16's parts: that P is kept to 2^-17.
      forBf16 = pv.getDpsInputs()[0] == out && !isSplitF16(pv) &&
                memrefOf(pv.getDpsInputs()[1]).getElementType().isBF16();
      break;
    }
  // A P.V on AMX tiles or on vdpbf16ps reads P in bf16 key pairs
  // (split-f16: its hi and lo parts): written so here rather than stored in
  // f32 and packed again (on Zen 4 a 512-bit store takes two FMA slots).
  ProbPairs pairs;
  if (rewrite.probPairs && pv && pv.getDpsInputs()[0] == out) {
    MemRefType type = memrefOf(out);
    int64_t rows = type.getDimSize(0) / 2, cols = 2 * type.getDimSize(1);
    if (rewrite.amx && amxTakesPV(pv, rewrite.amxFp16)) {
      // In V's type (bf16, or f16 on AMX-FP16 tiles); split parts are bf16.
      pairs.hi = bf16Scratch(
          pv, rows, cols,
          isSplitF16(pv) ? Type()
                         : memrefOf(pv.getDpsInputs()[1]).getElementType());
      if (isSplitF16(pv))
        pairs.lo = bf16Scratch(pv, rows, cols);
    } else if (pvOnBf16Dot(rewrite, pv)) {
      pairs.hi = bf16Scratch(pv, rows, cols);
    }
    if (pairs.hi)
      (*rewrite.probPairs)[pv] = pairs;
  }
  auto scale = rewrite.op->getAttrOfType<FloatAttr>(kProbsScoreScaleAttrName);
  emitProbabilities(rewrite.kernel, rewrite.input(0), out, rowSum, forBf16,
                    scale ? static_cast<float>(scale.getValueAsDouble()) : 1.0f,
                    pairs.hi, pairs.lo);
  return true;
}

/// x[..., i] *= alpha[i]; left to the P.V kernel that follows when that one
/// takes it.
bool rewriteRescale(TileRewrite &rewrite) {
  Value out = rewrite.output();
  linalg::GenericOp pv = asTile(rewrite.op->getNextNode(), TileRole::PV);
  if (pv && pv.getDpsInits()[0] == out &&
      memrefOf(pv.getDpsInits()[0]).getDimSize(1) % rewrite.kernel.width == 0)
    return false;
  emitRescale(rewrite.kernel, rewrite.input(0), out);
  return true;
}

bool rewriteElementMask(TileRewrite &rewrite) {
  return emitElementwise(rewrite.kernel, rewrite.op);
}

/// The user's mask, with the row max right after it folded in.
bool rewriteUserMask(TileRewrite &rewrite) {
  linalg::GenericOp next = foldableReduction(rewrite, TileRole::RowMax);
  if (!emitUserMask(rewrite.kernel, rewrite.op,
                    next ? next.getDpsInits()[0] : Value()))
    return false;
  if (next)
    rewrite.folded.push_back(next);
  return true;
}

/// Builds the kernel of `rewrite.op`'s role; false (building nothing) if
/// the role has no kernel or the kernel does not take this op.
bool rewriteByRole(TileRole role, TileRewrite &rewrite) {
  switch (role) {
  case TileRole::Scores:
    return rewriteScores(rewrite);
  case TileRole::ElementMask:
    return rewriteElementMask(rewrite);
  case TileRole::RowMax:
    return rewriteRowMax(rewrite);
  case TileRole::MaxUpdate:
    return rewriteMaxUpdate(rewrite);
  case TileRole::Rescale:
    return rewriteRescale(rewrite);
  case TileRole::Probs:
    return rewriteProbs(rewrite);
  case TileRole::RowSum:
    return rewriteRowSum(rewrite);
  case TileRole::PV:
    return rewritePV(rewrite);
  case TileRole::Softcap:
    return emitSoftcap(rewrite.kernel, rewrite.op);
  case TileRole::Alibi:
    return emitElementwise(rewrite.kernel, rewrite.op);
  case TileRole::UserMask:
    return rewriteUserMask(rewrite);
  // Their rows may be dynamic (a short last query block): rewriteTileOp hands
  // them to emitRowTranspose before the static checks.
  case TileRole::ScaleQuery:
  case TileRole::Output:
  // Their outputs are bf16: rewriteTileOp hands them to emitTransposeBf16
  // and emitSplitF16.
  case TileRole::TransposeValues:
  case TileRole::Bf16Keys:
  // Its output is bf16: rewriteTileOp hands it to emitPackRowPairsBf16.
  case TileRole::PairValues:
    return false;
  // Fills are linalg.fill, not tile ops: a kernel folds the one it consumes.
  case TileRole::InitQuery:
  case TileRole::InitScores:
  case TileRole::InitRowMax:
  case TileRole::InitMax:
  case TileRole::InitSum:
  case TileRole::InitAcc:
    return false;
  }
  return false;
}

/// A register block of as many row vectors as asked for and the tile's
/// `bq` rows hold; with fewer, more keys per block instead, so the block
/// keeps about as many accumulators (at most 24 of the 32 registers).
RegisterBlocking chooseRegisterBlocking(int64_t bq, int64_t width,
                                        int64_t regBlock, int64_t rowVectors) {
  int64_t rowVecs = 1;
  for (int64_t count = rowVectors; count > 1; --count)
    if (bq % (count * width) == 0) {
      rowVecs = count;
      break;
    }
  int64_t keys = std::max<int64_t>(
      1, std::min(regBlock * rowVectors / rowVecs, 24 / rowVecs));
  return {width, rowVecs, std::max(regBlock, keys)};
}

/// Replaces one tagged tile op, if its shapes allow; returns true if it did.
/// Neighbours it fuses with (the row max after the scores, the row sum after
/// the probabilities, the rescale before P.V) are erased too and added to
/// `erased`.
bool rewriteTileOp(linalg::GenericOp op, int64_t width, int64_t regBlock,
                   int64_t rowVectors, bool bf16Dot, bool amx, bool amxFp16,
                   bool scalefExp, bool blendStores, bool bf16RoundInIntegers,
                   int64_t prefetchSpread, const NextBlockRows &nextRows,
                   DenseMap<Operation *, ProbPairs> &probPairs,
                   DenseSet<Operation *> &erased) {
  std::optional<TileRole> role = getTileRole(op);
  if (role == TileRole::TransposeValues || role == TileRole::Bf16Keys) {
    // V [bk, dv] -> [dv, bk] (bf16, or f16 into bf16 hi and lo), or K
    // [bk, d] f16 into bf16 hi and lo; both dims multiples of the width.
    if (!asTile(op, *role) || op.getNumDpsInputs() != 1 || width != 16)
      return false;
    MemRefType src = memrefOf(op.getDpsInputs()[0]);
    // Split: one [rows, 2, cols] output, hi then lo.
    bool split = memrefOf(op.getDpsInits()[0]).getRank() == 3;
    // Not split: bf16 V, or f16 V for AMX-FP16 tiles.
    bool sourceType = split ? src.getElementType().isF16()
                            : src.getElementType().isBF16() ||
                                  (amxFp16 && src.getElementType().isF16());
    if (!sourceType || (!split && role == TileRole::Bf16Keys) ||
        src.getDimSize(0) % width != 0 || src.getDimSize(1) % width != 0)
      return false;
    OpBuilder builder(op);
    KernelBuilder kernel(builder, op.getLoc(), width);
    if (split)
      emitSplitF16(kernel, op.getDpsInputs()[0], op.getDpsInits()[0],
                   /*transpose=*/role == TileRole::TransposeValues);
    else
      emitTransposeBf16(kernel, op.getDpsInputs()[0], op.getDpsInits()[0]);
    op->erase();
    return true;
  }
  if (role == TileRole::PairValues)
    return asTile(op, *role) && rewritePairValues(op, width);
  if (role == TileRole::ScaleQuery || role == TileRole::Output) {
    OpBuilder builder(op);
    KernelBuilder kernel(builder, op.getLoc(), width);
    kernel.scalefExp = scalefExp;
    kernel.blendStores = blendStores;
    kernel.bf16RoundInIntegers = bf16RoundInIntegers;
    if (!emitRowTranspose(kernel, op, *role))
      return false;
    op->erase();
    return true;
  }
  if (!role || !kernelTakes(op, *role, width))
    return false;
  MemRefType outType = memrefOf(op.getDpsInits()[0]);
  int64_t bq = outType.getDimSize(outType.getRank() - 1);
  RegisterBlocking blocking =
      chooseRegisterBlocking(bq, width, regBlock, rowVectors);

  OpBuilder builder(op);
  KernelBuilder kernel(builder, op.getLoc(), width);
  kernel.scalefExp = scalefExp;
  kernel.blendStores = blendStores;
  TileRewrite rewrite{op,  kernel,  blocking,   {},        bf16Dot,
                      amx, amxFp16, &probPairs, &nextRows, prefetchSpread};
  if (!rewriteByRole(*role, rewrite))
    return false;
  for (Operation *folded : rewrite.folded) {
    erased.insert(folded);
    folded->erase();
  }
  op->erase();
  return true;
}

struct AttnCpuMicrokernelsPass
    : public attn::impl::AttnCpuMicrokernelsBase<AttnCpuMicrokernelsPass> {
  using AttnCpuMicrokernelsBase::AttnCpuMicrokernelsBase;

  /// A query block whose rows are not whole vectors keeps every tile op on
  /// the generic scalar loops: hq=8 Lq=1024 d=64, block of 120 rows, 6.0
  /// GFLOP/s against 198 with 112 (journal/round-06.md). Said
  /// once per query-block size, on the first scores tile of that size.
  void warnOffWidth(ArrayRef<linalg::GenericOp> tiles) {
    llvm::SmallDenseSet<int64_t> warned;
    for (linalg::GenericOp op : tiles) {
      if (!asTile(op, TileRole::Scores))
        continue;
      MemRefType outType = memrefOf(op.getDpsInits()[0]);
      int64_t bq = outType.getDimSize(outType.getRank() - 1);
      if (bq % vectorWidth == 0 || !warned.insert(bq).second)
        continue;
      int64_t width = vectorWidth;
      mlir::emitWarning(op.getLoc())
          << "attn-cpu-microkernels: query blocks of " << bq
          << " rows are not whole vectors of " << width
          << ": their tile ops take the generic scalar loops, many times "
             "slower (a block-q or narrow-block-q that is a multiple of "
          << width << " keeps the vector kernels)";
    }
  }

  void runOnOperation() override {
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            getOperation()->getLoc(), getArgument(),
            {{vectorWidth.ArgStr, vectorWidth, bounds::kCpuVectorWidth},
             {regBlock.ArgStr, regBlock, bounds::kCpuRegBlock},
             {rowVectors.ArgStr, rowVectors, bounds::kCpuRowVectors},
             {prefetchSpread.ArgStr, prefetchSpread,
              bounds::kCpuPrefetchSpread}})))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> tiles;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (getTileRole(op))
        tiles.push_back(op);
    });
    if (!targetFeatures.empty())
      getOperation()->setAttr(
          "target_features",
          LLVM::TargetFeaturesAttr::get(&getContext(), targetFeatures));
    warnOffWidth(tiles);
    NextBlockRows nextRows(tiles);
    DenseSet<Operation *> erased;
    DenseMap<Operation *, ProbPairs> probPairs;
    for (linalg::GenericOp op : tiles)
      if (!erased.contains(op))
        rewriteTileOp(op, vectorWidth, regBlock, rowVectors, bf16Dot, amx,
                      amxFp16, avx512Exp, blendStores, bf16RoundInIntegers,
                      prefetchSpread, nextRows, probPairs, erased);
  }
};

} // namespace
