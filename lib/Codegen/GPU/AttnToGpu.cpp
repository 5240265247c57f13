//===- AttnToGpu.cpp - attn.sdpa to a fused GPU kernel --------------------===//
//
// Part of the attn project.
//
// The pass and its pattern: checks what the kernels can take, bufferizes the
// operands at the op (to_buffer / alloc / to_tensor), opens the gpu.launch
// and hands its body to a kernel builder: the FlashAttention-2 tensor-core
// kernel (GpuFlashKernel.cpp) or, with kernels=wgmma on sm_90a, the
// warp-specialized one (GpuHopperKernel.cpp) for f16/bf16, the split-K
// decode kernels (GpuDecodeKernel.cpp) for decoding steps, the FMA kernel
// below for f32.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/GPU/AttnToGpu.h"

#include "GpuKernels.h"
#include "attn/Codegen/GPU/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Utils.h"
#include "attn/Tuning/Tuning.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn/Codegen/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

/// Dynamic shared memory a launch may ask for without the driver opt-in
/// (cuFuncSetAttribute): 48 KiB for static and dynamic together, less the
/// 16-byte-aligned symbol that the NVVM lowering of gpu.dynamic_shared_memory
/// declares statically.
static constexpr int64_t kSharedLimit = 48 * 1024 - 16;

/// Shared memory one CTA may have with the opt-in, by compute capability
/// (CUDA's "Maximum amount of shared memory per thread block").
std::optional<unsigned> gpu_kernels::smOfChip(StringRef chip) {
  unsigned sm = 0;
  // sm_90a: sm_90 with its architecture-specific features (wgmma).
  if (!chip.consume_front("sm_") || (chip.consume_back("a") && chip != "90") ||
      chip.getAsInteger(10, sm) || sm < 80)
    return std::nullopt;
  return sm;
}

int64_t gpu_kernels::chipSharedMemory(unsigned sm) {
  if (sm == 80 || sm == 87)
    return 163 * 1024;
  if (sm >= 90 && sm < 120)
    return 227 * 1024;
  return 99 * 1024; // sm_86, sm_89, sm_120+
}

/// Dynamic shared memory the kernels may use: 48 KiB without the opt-in,
/// `shared-memory` bytes with it (attn's CUDA runtime raises the function's
/// limit with cuFuncSetAttribute when a launch asks for more than 48 KiB).
static int64_t sharedLimit(const ConvertAttnToGpuOptions &options) {
  return options.sharedMemory > 0 ? options.sharedMemory - 16 : kSharedLimit;
}
/// Head dims the tensor-core kernel takes.
static constexpr int64_t kTensorCoreHeadDims[] = {32, 64, 80, 96, 128, 256};

//===----------------------------------------------------------------------===//
// Helpers shared by the kernels
//===----------------------------------------------------------------------===//

int64_t gpu_kernels::sharedRowLength(int64_t cols, const FlashConfig &config) {
  int64_t chunks = cols / 8;
  bool swizzle = chunks == 4 || chunks == 8 || chunks == 16;
  return swizzle && !config.padRows ? cols : cols + 8;
}

bool gpu_kernels::stagesQueryInValueTiles(const GpuSdpa &sdpa,
                                          const FlashConfig &config) {
  return !config.queryInKeyValueTiles &&
         2 * config.blockKV * sharedRowLength(sdpa.dv, config) >=
             config.blockQ * sharedRowLength(sdpa.d, config);
}

bool gpu_kernels::keyValueTilesHoldQuery(const GpuSdpa &sdpa,
                                         const FlashConfig &config) {
  return 2 * config.blockKV *
             (sharedRowLength(sdpa.d, config) +
              sharedRowLength(sdpa.dv, config)) >=
         config.blockQ * sharedRowLength(sdpa.d, config);
}

int64_t gpu_kernels::flashSharedBytes(const GpuSdpa &sdpa,
                                      const FlashConfig &config) {
  int64_t bytes = sdpa.elt.getIntOrFloatBitWidth() / 8;
  int64_t d = sharedRowLength(sdpa.d, config);
  int64_t dv = sharedRowLength(sdpa.dv, config);
  int64_t q = stagesQueryInValueTiles(sdpa, config) ||
                      (config.queryInKeyValueTiles &&
                       keyValueTilesHoldQuery(sdpa, config))
                  ? 0
                  : config.blockQ * d;
  return bytes * (q + 2 * config.blockKV * d + 2 * config.blockKV * dv);
}

Value gpu_kernels::smCountAtLaunch(OpBuilder &b, Location loc, Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, b.getStringAttr(kSmCountFunction));
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    callee = func::FuncOp::create(b, loc, kSmCountFunction,
                                  b.getFunctionType({}, {b.getI32Type()}));
    callee.setPrivate();
  }
  Value count = func::CallOp::create(b, loc, callee, ValueRange{}).getResult(0);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), count);
}

Value gpu_kernels::readMask(OpBuilder &b, const GpuSdpa &sdpa, Value batch,
                            Value head, Value row, Value key) {
  Location loc = sdpa.loc;
  auto maskType = cast<MemRefType>(sdpa.mask.getType());
  SmallVector<Value> indices = {batch, head, row, key};
  for (auto [dim, index] : llvm::enumerate(indices)) {
    if (maskType.getDimSize(dim) == 1) {
      index = arith::ConstantIndexOp::create(b, loc, 0);
    } else if (Value last = sdpa.maskLast[dim]) {
      // A dynamic dim that is 1 at run time broadcasts: min(index, size-1).
      index = arith::MinUIOp::create(b, loc, index, last);
    }
  }
  Value m = memref::LoadOp::create(b, loc, sdpa.mask, indices);
  if (sdpa.boolMask)
    return m;
  Value f = convertScalarToDtype(b, loc, m, b.getF32Type(),
                                 /*isUnsignedCast=*/false);
  return arith::MulFOp::create(b, loc, f,
                               createF32Constant(b, loc, float(kLog2E)));
}

std::pair<Value, Value> gpu_kernels::updateRowMax(OpBuilder &b, Location loc,
                                                  Value m, Value blockMax,
                                                  Value scale) {
  Value mNew = arith::MaximumFOp::create(b, loc, m, blockMax);
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                      createF32Constant(b, loc, kNegInf));
  Value diff = arith::SubFOp::create(b, loc, m, mNew);
  if (scale)
    diff = arith::MulFOp::create(b, loc, diff, scale);
  Value a = math::Exp2Op::create(b, loc, diff);
  Value alpha = arith::SelectOp::create(b, loc, empty,
                                        createF32Constant(b, loc, 0.0f), a);
  return {mNew, alpha};
}

Value gpu_kernels::probability(OpBuilder &b, Location loc, Value s, Value m) {
  Value hidden = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, s,
                                       createF32Constant(b, loc, kNegInf));
  Value p = math::Exp2Op::create(b, loc, arith::SubFOp::create(b, loc, s, m));
  return arith::SelectOp::create(b, loc, hidden,
                                 createF32Constant(b, loc, 0.0f), p);
}

//===----------------------------------------------------------------------===//
// The f32 kernel: one thread per query row, plain FMAs
//===----------------------------------------------------------------------===//

/// Builds `for (iv = 0; iv < n; ++iv) body(iv)` without results.
static void buildLoop(OpBuilder &b, Location loc, Value n,
                      function_ref<void(OpBuilder &, Value)> body) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(b, loc, c0, n, c1, ValueRange{},
                     [&](OpBuilder &nb, Location, Value iv, ValueRange) {
                       body(nb, iv);
                       scf::YieldOp::create(nb, loc);
                     });
}

/// The scaled score of row `i` against key `j` (base 2), with the mask
/// applied: -inf where the i1 mask hides it.
static Value scoreOneKey(OpBuilder &b, const GpuSdpa &sdpa,
                         const GpuSequence &seq, Value qRow, Value batch,
                         Value head, Value kvHead, Value i, Value j) {
  Location loc = sdpa.loc;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value d = arith::ConstantIndexOp::create(b, loc, sdpa.d);
  auto dot = scf::ForOp::create(
      b, loc, c0, d, c1, ValueRange{createF32Constant(b, loc, 0.0f)},
      [&](OpBuilder &nb, Location, Value dd, ValueRange acc) {
        Value q = memref::LoadOp::create(nb, loc, qRow, dd);
        Value k = memref::LoadOp::create(nb, loc, sdpa.key,
                                         ValueRange{batch, kvHead, j, dd});
        k = convertScalarToDtype(nb, loc, k, nb.getF32Type(), false);
        Value s = math::FmaOp::create(nb, loc, q, k, acc[0]);
        scf::YieldOp::create(nb, loc, s);
      });
  Value s = dot.getResult(0);
  if (sdpa.modifiesScores()) {
    Value diagMinusKey;
    if (seq.alibiShift)
      diagMinusKey = indexToF32(
          b, loc,
          arith::SubIOp::create(
              b, loc, arith::AddIOp::create(b, loc, i, seq.alibiShift), j));
    s = modifyScore(b, sdpa, seq, s, diagMinusKey);
  }
  if (!sdpa.mask)
    return s;
  Value m = readMask(b, sdpa, batch, head, i, j);
  if (sdpa.boolMask)
    return arith::SelectOp::create(b, loc, m, s,
                                   createF32Constant(b, loc, kNegInf));
  return arith::AddFOp::create(b, loc, s, m);
}

void gpu_kernels::buildRowKernelF32(OpBuilder &b, const GpuSdpa &sdpa,
                                    gpu::LaunchOp launch, int64_t blockQ) {
  Location loc = sdpa.loc;
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  Value qRow = launch.getPrivateAttributions()[0];
  Value acc = launch.getPrivateAttributions()[1];
  Value batch = blockIds.z, head = blockIds.y;
  Value group = arith::ConstantIndexOp::create(b, loc, sdpa.group);
  Value kvHead = arith::DivUIOp::create(b, loc, head, group);
  Value i = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, blockIds.x,
                            arith::ConstantIndexOp::create(b, loc, blockQ)),
      threadIds.x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, sdpa.lq);
  auto ifRow = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifRow.thenBlock());

  // The query row, scaled once into base-2 units; the accumulator at 0.
  Value scale = createF32Constant(b, loc, sdpa.scaleLog2E);
  buildLoop(b, loc, arith::ConstantIndexOp::create(b, loc, sdpa.d),
            [&](OpBuilder &nb, Value dd) {
              Value q = memref::LoadOp::create(nb, loc, sdpa.query,
                                               ValueRange{batch, head, i, dd});
              q = convertScalarToDtype(nb, loc, q, nb.getF32Type(), false);
              memref::StoreOp::create(
                  nb, loc, arith::MulFOp::create(nb, loc, q, scale), qRow, dd);
            });
  Value dv = arith::ConstantIndexOp::create(b, loc, sdpa.dv);
  buildLoop(b, loc, dv, [&](OpBuilder &nb, Value e) {
    memref::StoreOp::create(nb, loc, createF32Constant(nb, loc, 0.0f), acc, e);
  });

  // Keys the key length, the causal rule or the window hide are not
  // visited: the loop walks the row's span of visible keys only.
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  GpuSequence seq = locateSequence(b, sdpa, batch, head);
  KeySpan span = keySpan(b, sdpa, seq, i, i);
  auto keys = scf::ForOp::create(
      b, loc, span.begin, span.end, c1,
      ValueRange{createF32Constant(b, loc, kNegInf),
                 createF32Constant(b, loc, 0.0f)},
      [&](OpBuilder &nb, Location, Value j, ValueRange state) {
        Value s = scoreOneKey(nb, sdpa, seq, qRow, batch, head, kvHead, i, j);
        auto [mNew, alpha] = updateRowMax(nb, loc, state[0], s);
        Value p = probability(nb, loc, s, mNew);
        Value l = math::FmaOp::create(nb, loc, state[1], alpha, p);
        buildLoop(nb, loc, dv, [&](OpBuilder &ib, Value e) {
          Value v = memref::LoadOp::create(ib, loc, sdpa.value,
                                           ValueRange{batch, kvHead, j, e});
          v = convertScalarToDtype(ib, loc, v, ib.getF32Type(), false);
          Value a = memref::LoadOp::create(ib, loc, acc, e);
          a = arith::MulFOp::create(ib, loc, a, alpha);
          memref::StoreOp::create(
              ib, loc, math::FmaOp::create(ib, loc, p, v, a), acc, e);
        });
        scf::YieldOp::create(nb, loc, ValueRange{mNew, l});
      });
  Value m = keys.getResult(0), l = keys.getResult(1);

  // out = l == 0 ? 0 : acc / l; lse = l == 0 ? -inf : (m + log2 l) ln 2.
  Value zero = createF32Constant(b, loc, 0.0f);
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
  Type outElt = cast<MemRefType>(sdpa.out.getType()).getElementType();
  buildLoop(b, loc, dv, [&](OpBuilder &nb, Value e) {
    Value a = memref::LoadOp::create(nb, loc, acc, e);
    Value o = arith::SelectOp::create(nb, loc, empty, zero,
                                      arith::DivFOp::create(nb, loc, a, l));
    o = convertScalarToDtype(nb, loc, o, outElt, false);
    memref::StoreOp::create(nb, loc, o, sdpa.out,
                            ValueRange{batch, head, i, e});
  });
  if (sdpa.lse) {
    Value lse = arith::MulFOp::create(
        b, loc,
        arith::AddFOp::create(b, loc, m, math::Log2Op::create(b, loc, l)),
        createF32Constant(b, loc, float(kLn2)));
    lse = arith::SelectOp::create(b, loc, empty,
                                  createF32Constant(b, loc, kNegInf), lse);
    memref::StoreOp::create(b, loc, lse, sdpa.lse, ValueRange{batch, head, i});
  }
}

//===----------------------------------------------------------------------===//
// The pattern and the pass
//===----------------------------------------------------------------------===//

namespace {

/// What the pass decided for one op: the kernel and its tile sizes.
struct KernelPlan {
  bool tensorCores = false;
  FlashConfig flash;
  /// The warp-specialized sm_90a kernel instead of the mma.sync one
  /// (kernels=wgmma, for the ops it takes).
  bool hopper = false;
  HopperConfig hopperConfig;
  /// The split-K decode kernels instead (DecodeKernel.cpp).
  bool decode = false;
  DecodeConfig decodeConfig;
};

/// Routes an op with few query rows (Lq * group <= decode-rows; a dynamic
/// Lq is checked at run time) to the split-K decode kernels where their
/// shared memory fits; `plan` otherwise.
KernelPlan planDecode(SdpaOp op, const ConvertAttnToGpuOptions &options,
                      KernelPlan plan) {
  RankedTensorType qType = op.getQueryType();
  // A dynamic Lq is taken as 1 here (the choice is made again at run time).
  int64_t lq = qType.getDimSize(2);
  if (ShapedType::isDynamic(lq))
    lq = 1;
  if (options.decodeRows <= 0 || lq == 0 ||
      lq * op.getGroupSize() > options.decodeRows)
    return plan;
  GpuSdpa sizes{op, op.getLoc()};
  sizes.d = qType.getDimSize(3);
  sizes.dv = op.getValueType().getDimSize(3);
  sizes.elt = qType.getElementType();
  if (!decodeTakes(sizes, options.decodeStages))
    return plan;
  DecodeConfig config;
  config.rowsPerCta =
      std::min<int64_t>(lq * op.getGroupSize(), kMaxDecodeRowsPerCta);
  config.kvSplits = options.kvSplits;
  config.stages = options.decodeStages;
  config.valueUnroll = options.decodeUnroll;
  // sm-count 0: the chip's (Tuning.td's GpuChip records; a chip they do not
  // list counts as sm_80).
  const tuning::GpuChipInfo *chip = tuning::lookupGpuChip(options.chip);
  config.smCount = options.smCount > 0 ? options.smCount
                   : chip              ? chip->smCount
                                       : tuning::kGpuChips[0].smCount;
  // kernels=wgmma (chip sm_90a, whose parts range from 114 to 132 SMs):
  // the device's own count, read at launch.
  config.smCountAtLaunch =
      options.smCount <= 0 && StringRef(options.kernels) == "wgmma";
  // One stage: 32 keys less until it fits; two: half (down to 8 keys).
  while (decodeSharedBytes(sizes, config) > sharedLimit(options) &&
         config.keysPerChunk > (config.stages == 2 ? 8 : 32))
    config.keysPerChunk =
        config.stages == 2 ? config.keysPerChunk / 2 : config.keysPerChunk - 32;
  if (decodeSharedBytes(sizes, config) > sharedLimit(options))
    return plan;
  plan.decode = true;
  plan.decodeConfig = config;
  return plan;
}

/// Checks the options and the op against what the kernels can take; emits
/// the diagnostic on `op` and fails otherwise.
FailureOr<KernelPlan> planKernel(SdpaOp op,
                                 const ConvertAttnToGpuOptions &options) {
  std::optional<unsigned> chipSm = smOfChip(options.chip);
  if (!chipSm)
    return op.emitOpError("convert-attn-to-gpu: expected chip sm_XX with XX "
                          ">= 80 (mma.sync, ldmatrix, cp.async), got '")
           << options.chip << "'";
  unsigned sm = *chipSm;
  if (options.sharedMemory != 0 &&
      (options.sharedMemory <= 48 * 1024 ||
       options.sharedMemory > chipSharedMemory(sm)))
    return op.emitOpError("convert-attn-to-gpu: expected shared-memory 0 (48 "
                          "KiB, no opt-in) or in (49152, ")
           << chipSharedMemory(sm) << "] bytes for " << options.chip << ", got "
           << options.sharedMemory;
  // The integer options' bounds (Tuning.td's) were checked by the pass.
  StringRef kernels = options.kernels;
  if (!llvm::is_contained({"auto", "mma-sync", "wgmma"}, kernels))
    return op.emitOpError("convert-attn-to-gpu: expected kernels auto, "
                          "mma-sync or wgmma, got '")
           << kernels << "'";
  if (kernels == "wgmma" && options.chip != "sm_90a")
    return op.emitOpError("convert-attn-to-gpu: kernels=wgmma needs "
                          "chip=sm_90a (wgmma and setmaxnreg), got '")
           << options.chip << "'";
  if ((options.persistent || options.softmaxOverlap) && kernels != "wgmma")
    return op.emitOpError("convert-attn-to-gpu: ")
           << (options.persistent ? "persistent" : "softmax-overlap")
           << " is an option of kernels=wgmma, got kernels '" << kernels << "'";
  Type elt = op.getQueryType().getElementType();
  KernelPlan plan;
  plan.flash.blockQ = options.blockQ;
  plan.flash.blockKV = options.blockKV;
  plan.flash.foldScale = options.foldScale;
  plan.flash.lazyRescale = options.lazyRescale;
  if (elt.isF32())
    return planDecode(op, options, plan);

  plan.tensorCores = true;
  int64_t d = op.getQueryType().getDimSize(3);
  int64_t dv = op.getValueType().getDimSize(3);
  // The sm_90a kernel where asked for and it takes the op; the mma.sync
  // kernel, without a diagnostic, for the other ops.
  if (kernels == "wgmma") {
    bool scoreWork = op.getMask() || op.getSoftcap() || op.getAlibiSlopes();
    if (std::optional<HopperConfig> hopper =
            planHopperKernel(elt, d, dv, scoreWork)) {
      plan.hopper = true;
      plan.hopperConfig = *hopper;
      plan.hopperConfig.foldScale = options.foldScale;
      plan.hopperConfig.persistent = options.persistent;
      plan.hopperConfig.softmaxOverlap = options.softmaxOverlap;
      // The persistent producer keeps its work item's coordinates and the
      // ring's count across its loops: 24 registers spilled (ptxas), 40 do
      // not; the consumers give up 8 (still 504 of the 512).
      if (options.persistent) {
        plan.hopperConfig.producerRegisters = 40;
        plan.hopperConfig.consumerRegisters = 232;
      }
      return planDecode(op, options, plan);
    }
  }
  if (d == 256 || dv == 256)
    plan.flash.dvSplit = 2;
  for (auto [name, size] :
       {std::pair<StringRef, int64_t>{"D", d}, {"Dv", dv}}) {
    if (llvm::is_contained(kTensorCoreHeadDims, size))
      continue;
    auto diag = op.emitOpError("convert-attn-to-gpu: head dim ")
                << name << " (" << size << ") is not supported by the " << elt
                << " tensor-core kernel: expected 32, 64, 80, 96, 128 or 256";
    return diag;
  }
  if (plan.flash.dvSplit == 2 && plan.flash.blockQ > 64)
    return op.emitOpError("convert-attn-to-gpu: D or Dv = 256 takes block-q "
                          "<= 64 (two warps per 16 rows: at block-q = ")
           << plan.flash.blockQ << ", " << plan.flash.blockQ * 4
           << " threads get at most " << 65536 / (plan.flash.blockQ * 4)
           << " registers each, and the kernel spills)";
  // Shrink the K/V tiles until the buffers fit static shared memory.
  GpuSdpa sizes{op, op.getLoc()};
  sizes.d = d;
  sizes.dv = dv;
  sizes.elt = elt;
  // Padded rows while the tiles keep at least 32 keys, else swizzled rows
  // down to 16 keys.
  auto fits = [&] {
    return flashSharedBytes(sizes, plan.flash) <= sharedLimit(options);
  };
  // At D or Dv = 256 tiles of more than 32 keys spill (ptxas), whatever
  // shared memory allows.
  const int64_t maxKV = plan.flash.dvSplit == 2
                            ? std::min<int64_t>(options.blockKV, 32)
                            : options.blockKV;
  plan.flash.blockKV = maxKV;
  while (!fits() && plan.flash.blockKV > 32)
    plan.flash.blockKV -= 16;
  if (!fits()) {
    plan.flash.padRows = false;
    plan.flash.blockKV = maxKV;
    while (!fits() && plan.flash.blockKV > 16)
      plan.flash.blockKV -= 16;
  }
  if (!fits()) {
    // D = 256: Q staged in the K and V tiles before the first of them is
    // loaded (its fragments then live in registers), in the largest tiles
    // that fit and hold it.
    plan.flash.padRows = true;
    plan.flash.queryInKeyValueTiles = true;
    plan.flash.blockKV = maxKV;
    while ((!fits() || !keyValueTilesHoldQuery(sizes, plan.flash)) &&
           plan.flash.blockKV > 16)
      plan.flash.blockKV -= 16;
    if (!keyValueTilesHoldQuery(sizes, plan.flash))
      plan.flash.queryInKeyValueTiles = false;
  }
  if (int64_t bytes = flashSharedBytes(sizes, plan.flash);
      bytes > sharedLimit(options)) {
    InFlightDiagnostic diag =
        op.emitOpError("convert-attn-to-gpu: the shared-memory tiles for D = ")
        << d << ", Dv = " << dv << ", block-q = " << plan.flash.blockQ
        << " need " << bytes << " bytes, more than the " << sharedLimit(options)
        << " bytes ";
    if (options.sharedMemory)
      diag << "that shared-memory=" << options.sharedMemory << " leaves";
    else
      diag << "of shared memory a launch gets without opt-in (see "
              "shared-memory)";
    return diag;
  }
  return planDecode(op, options, plan);
}

/// The identity-layout buffer of a tensor operand.
Value toBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor);
}

/// A new buffer shaped like `type` with the dynamic sizes of `like`'s dims.
Value allocLike(OpBuilder &b, Location loc, RankedTensorType type,
                ArrayRef<Value> dynamicSizes) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<Value> sizes;
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(dynamicSizes[dim]);
  return memref::AllocOp::create(b, loc, memrefType, sizes);
}

struct SdpaToGpu : public OpRewritePattern<SdpaOp> {
  SdpaToGpu(MLIRContext *context, const ConvertAttnToGpuOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rewriter) const override {
    // The pass has checked every op and reported those that fail.
    FailureOr<KernelPlan> plan = planKernel(op, options);
    if (failed(plan))
      return rewriter.notifyMatchFailure(op, "not supported by the kernels");
    Location loc = op.getLoc();
    GpuSdpa sdpa{op, loc};
    sdpa.query = toBuffer(rewriter, loc, op.getQuery());
    sdpa.key = toBuffer(rewriter, loc, op.getKey());
    sdpa.value = toBuffer(rewriter, loc, op.getValue());
    if (op.getMask()) {
      sdpa.mask = toBuffer(rewriter, loc, op.getMask());
      auto maskType = cast<MemRefType>(sdpa.mask.getType());
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      for (int64_t d = 0; d < 4; ++d)
        sdpa.maskLast.push_back(
            maskType.isDynamicDim(d)
                ? arith::SubIOp::create(
                      rewriter, loc,
                      memref::DimOp::create(rewriter, loc, sdpa.mask, d), one)
                      .getResult()
                : Value());
    }
    auto dim = [&](Value buffer, int64_t d) -> Value {
      return memref::DimOp::create(rewriter, loc, buffer, d);
    };
    sdpa.batch = dim(sdpa.query, 0);
    sdpa.lq = dim(sdpa.query, 2);
    sdpa.lk = dim(sdpa.key, 2);
    RankedTensorType qType = op.getQueryType();
    sdpa.hq = qType.getDimSize(1);
    sdpa.group = op.getGroupSize();
    sdpa.d = qType.getDimSize(3);
    sdpa.dv = op.getValueType().getDimSize(3);
    sdpa.elt = qType.getElementType();
    sdpa.scaleLog2E = static_cast<float>(
        static_cast<double>(op.getEffectiveScale()) * kLog2E);
    sdpa.boolMask = op.getMask() && op.hasBoolMask();
    sdpa.band = getVisibleBand(op);
    if (op.getKeyLengths())
      sdpa.keyLengths = toBuffer(rewriter, loc, op.getKeyLengths());
    if (op.getAlibiSlopes())
      sdpa.alibiSlopes = toBuffer(rewriter, loc, op.getAlibiSlopes());
    if (std::optional<APFloat> cap = op.getSoftcap())
      sdpa.softcap = static_cast<float>(
          static_cast<double>(cap->convertToFloat()) * kLog2E);

    // Results in new buffers, shaped like the operands (the op's result
    // types may be more static; replaceOpWithCastValues reconciles them).
    SmallVector<Value> outSizes = {sdpa.batch, Value(), sdpa.lq, Value()};
    auto outType = RankedTensorType::get(
        {qType.getDimSize(0), sdpa.hq, qType.getDimSize(2), sdpa.dv}, sdpa.elt);
    sdpa.out = allocLike(rewriter, loc, outType, outSizes);
    RankedTensorType lseType;
    if (op.getLse()) {
      lseType = RankedTensorType::get(outType.getShape().drop_back(),
                                      rewriter.getF32Type());
      sdpa.lse = allocLike(rewriter, loc, lseType, outSizes);
    }

    int64_t blockQ =
        plan->hopper ? plan->hopperConfig.blockQ() : plan->flash.blockQ;
    Value rowBlocks = arith::CeilDivUIOp::create(
        rewriter, loc, sdpa.lq,
        arith::ConstantIndexOp::create(rewriter, loc, blockQ));
    Value heads = arith::ConstantIndexOp::create(rewriter, loc, sdpa.hq);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Attribute priv = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                                gpu::AddressSpace::Private);
    // A grid with no block is an invalid launch: with no query row or no
    // batch (possible for dynamic sizes) there is nothing to compute.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value nonEmpty = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                              rowBlocks, zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                              sdpa.batch, zero));
    // The sm_90a kernel's tensor maps: a device buffer (gpu.alloc once
    // attn-gpu-device-buffers has run), freed after the launch.
    Value tensorMaps;
    if (plan->hopper)
      tensorMaps = memref::AllocOp::create(
          rewriter, loc,
          MemRefType::get({kHopperTensorMapBytes}, rewriter.getI8Type()));
    auto ifNonEmpty =
        scf::IfOp::create(rewriter, loc, nonEmpty, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard launchGuard(rewriter);
    rewriter.setInsertionPoint(ifNonEmpty.thenBlock()->getTerminator());
    // A dynamic Lq: the other kernel when Lq * group > decode-rows at run
    // time (first, so that outlining names it as without decoding), the
    // decode kernels otherwise.
    bool decodeAtRunTime =
        plan->decode && ShapedType::isDynamic(qType.getDimSize(2));
    if (decodeAtRunTime) {
      Value manyRows = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ugt,
          arith::MulIOp::create(
              rewriter, loc, sdpa.lq,
              arith::ConstantIndexOp::create(rewriter, loc, sdpa.group)),
          arith::ConstantIndexOp::create(rewriter, loc, options.decodeRows));
      auto ifManyRows =
          scf::IfOp::create(rewriter, loc, manyRows, /*withElseRegion=*/true);
      rewriter.setInsertionPoint(ifManyRows.elseBlock()->getTerminator());
      buildDecodeKernels(rewriter, sdpa, plan->decodeConfig);
      rewriter.setInsertionPoint(ifManyRows.thenBlock()->getTerminator());
    }
    if (plan->decode && !decodeAtRunTime) {
      buildDecodeKernels(rewriter, sdpa, plan->decodeConfig);
    } else if (plan->hopper) {
      const HopperConfig &cfg = plan->hopperConfig;
      encodeHopperTensorMaps(rewriter, sdpa, cfg, tensorMaps);
      Value sharedBytes = arith::ConstantIntOp::create(
          rewriter, loc, rewriter.getI32Type(), hopperSharedBytes(sdpa, cfg));
      Value threads =
          arith::ConstantIndexOp::create(rewriter, loc, cfg.threads());
      // Persistent: min(tiles, CTAs the device holds at once), one
      // dimension; each CTA finds its tiles.
      gpu::LaunchOp launch;
      if (cfg.persistent) {
        Value tiles = arith::MulIOp::create(
            rewriter, loc,
            arith::MulIOp::create(rewriter, loc, rowBlocks, heads), sdpa.batch);
        Value resident = arith::MulIOp::create(
            rewriter, loc, smCountAtLaunch(rewriter, loc, op),
            arith::ConstantIndexOp::create(rewriter, loc, kHopperCtasPerSm));
        Value grid = arith::MinUIOp::create(rewriter, loc, tiles, resident);
        launch = gpu::LaunchOp::create(rewriter, loc, grid, one, one, threads,
                                       one, one, sharedBytes);
      } else {
        launch =
            gpu::LaunchOp::create(rewriter, loc, rowBlocks, heads, sdpa.batch,
                                  threads, one, one, sharedBytes);
      }
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      buildHopperKernel(rewriter, sdpa, cfg, launch, tensorMaps);
      gpu::TerminatorOp::create(rewriter, loc);
    } else if (plan->tensorCores) {
      const FlashConfig &cfg = plan->flash;
      // The tiles live in dynamic shared memory: its base is 16-byte
      // aligned, as cp.async and ldmatrix need (workgroup attributions are
      // only aligned to their element type).
      Value sharedBytes = arith::ConstantIntOp::create(
          rewriter, loc, rewriter.getI32Type(), flashSharedBytes(sdpa, cfg));
      Value threads =
          arith::ConstantIndexOp::create(rewriter, loc, cfg.threads());
      auto launch =
          gpu::LaunchOp::create(rewriter, loc, rowBlocks, heads, sdpa.batch,
                                threads, one, one, sharedBytes);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      buildFlashKernel(rewriter, sdpa, cfg, launch);
      gpu::TerminatorOp::create(rewriter, loc);
    } else {
      SmallVector<Type> privates = {
          MemRefType::get({sdpa.d}, rewriter.getF32Type(), AffineMap(), priv),
          MemRefType::get({sdpa.dv}, rewriter.getF32Type(), AffineMap(), priv)};
      Value threads = arith::ConstantIndexOp::create(rewriter, loc, blockQ);
      auto launch = gpu::LaunchOp::create(
          rewriter, loc, rowBlocks, heads, sdpa.batch, threads, one, one,
          /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
          ValueRange{}, TypeRange{}, privates);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      buildRowKernelF32(rewriter, sdpa, launch, blockQ);
      gpu::TerminatorOp::create(rewriter, loc);
    }

    rewriter.setInsertionPointAfter(ifNonEmpty);
    if (tensorMaps)
      memref::DeallocOp::create(rewriter, loc, tensorMaps);
    SmallVector<Value> results = {bufferization::ToTensorOp::create(
        rewriter, loc, outType, sdpa.out, /*restrict=*/true,
        /*writable=*/true)};
    if (sdpa.lse)
      results.push_back(bufferization::ToTensorOp::create(
          rewriter, loc, lseType, sdpa.lse, /*restrict=*/true,
          /*writable=*/true));
    replaceOpWithCastValues(rewriter, op, results);
    return success();
  }

  ConvertAttnToGpuOptions options;
};

struct ConvertAttnToGpuPass
    : public attn::impl::ConvertAttnToGpuBase<ConvertAttnToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ConvertAttnToGpuOptions options{
        chip,        blockQ,       blockKV,       decodeRows,   kvSplits,
        smCount,     decodeStages, decodeUnroll,  sharedMemory, foldScale,
        lazyRescale, kernels,      deterministic, persistent,   softmaxOverlap};
    namespace bounds = tuning::bounds;
    if (failed(verifyOptionBounds(
            getOperation()->getLoc(), getArgument(),
            {{blockQ.ArgStr, blockQ, bounds::kGpuBlockQ},
             {blockKV.ArgStr, blockKV, bounds::kGpuBlockKV},
             {decodeRows.ArgStr, decodeRows, bounds::kGpuDecodeRows},
             {kvSplits.ArgStr, kvSplits, bounds::kGpuKvSplits},
             {smCount.ArgStr, smCount, bounds::kGpuSmCount},
             {decodeStages.ArgStr, decodeStages, bounds::kGpuDecodeStages},
             {decodeUnroll.ArgStr, decodeUnroll, bounds::kGpuDecodeUnroll},
             {sharedMemory.ArgStr, sharedMemory, bounds::kGpuSharedMemory}})))
      return signalPassFailure();
    // Every op the kernels cannot take is reported, not skipped.
    bool supported = true;
    getOperation()->walk([&](SdpaOp op) {
      if (failed(planKernel(op, options)))
        supported = false;
    });
    getOperation()->walk([&](SdpaGradOp op) {
      if (failed(planSdpaGrad(op, options)))
        supported = false;
    });
    if (!supported)
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateAttnToGpuPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (failed(reportSdpaLeft(getOperation(), "could not be lowered to gpu")))
      signalPassFailure();
  }
};

} // namespace

void mlir::attn::populateAttnToGpuPatterns(
    RewritePatternSet &patterns, const ConvertAttnToGpuOptions &options) {
  patterns.add<SdpaToGpu>(patterns.getContext(), options);
  populateSdpaGradToGpuPatterns(patterns, options);
}
