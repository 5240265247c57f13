//===- GpuHopperKernel.cpp - warp-specialized wgmma kernel for sm_90a -----===//
//
// Part of the attn project.
//
// The body of the gpu.launch for f16/bf16 on sm_90a (convert-attn-to-gpu's
// kernels=wgmma), FlashAttention-3's structure: one CTA of three warpgroups
// per 128 query rows.
//  - Warpgroup 0 is the producer (setmaxnreg down): one thread issues the TMA
//    loads (cp.async.bulk.tensor) of the Q block, once, and of the K and V
//    tiles into a ring of `stages` shared-memory slots. Each slot has a
//    "full" mbarrier per operand (arrive.expect_tx by the producer; the copy
//    completes its bytes) and an "empty" one (every consumer thread arrives
//    once it is done reading the slot).
//  - Warpgroups 1 and 2 are the consumers (setmaxnreg up), 64 query rows
//    each. S = Q.K^T runs on wgmma.mma_async with both operands in shared
//    memory, as TMA wrote them (128-byte swizzled rows); the online softmax
//    stays in registers; O += P.V runs on wgmma with P in registers as the A
//    operand (inline PTX: MLIR 22 has no op for that form) and V read
//    transposed (N-major) from shared memory.
//  - Ping-pong: two named barriers pass the tensor cores from one consumer to
//    the other, so that one's softmax overlaps the other's GEMMs: a consumer
//    issues P.V of tile j and Q.K^T of tile j+1 in its turn, then hands over.
// Per warp, a wgmma accumulator is laid out as mma.sync's C fragments (value
// 4 n + 2 r + c of lane 4 g + t: row g + 8 r, column 8 n + 2 t + c of the
// warp's 16 rows), so that two neighbouring fragments of S are the A
// fragment of P.V's k-step (as in GpuFlashKernel.cpp), and the masks, score
// modifiers and softmax read like the mma.sync kernel's.
//
//===----------------------------------------------------------------------===//

#include "GpuKernels.h"

#include "attn/Dialect/Attn/Utils/Utils.h"
#include "attn/Runtime/CudaRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::gpu_kernels;

namespace {

/// 16-bit elements per 128-byte row: the width of one TMA box with 128-byte
/// swizzling and of one wgmma swizzle atom.
constexpr int64_t kAtomCols = 64;
constexpr int64_t kRowBytes = 128;
/// The 128-byte swizzle repeats every 8 rows (1024 bytes): tiles start at
/// multiples of it, and 8-row groups of every operand lie that far apart.
constexpr int64_t kSwizzleBytes = 1024;
/// Threads of the two consumer warpgroups: the empty barriers' arrival count
/// and the named barriers' thread count.
constexpr int64_t kConsumerThreads =
    HopperConfig::kConsumers * HopperConfig::kWarpgroupThreads;
/// mbarrier.try_wait's suspend-time hint (ns), CUTLASS's.
constexpr int64_t kWaitHintNs = 10000000;

/// Where the kernel's buffers sit in shared memory, in bytes from its
/// 1024-byte aligned base: the Q block, then `stages` K tiles, `stages` V
/// tiles and the mbarriers. Each tile is stored as blocks of 64 columns
/// (one TMA box each), a block as rows of 128 bytes.
struct HopperLayout {
  HopperLayout(const GpuSdpa &sdpa, const HopperConfig &cfg)
      : queryBlock(cfg.blockQ() * kRowBytes), keyBlock(cfg.blockKV * kRowBytes),
        valueBlock(cfg.blockKV * kRowBytes),
        keyTile(sdpa.d / kAtomCols * keyBlock),
        valueTile(sdpa.dv / kAtomCols * valueBlock) {
    keys = sdpa.d / kAtomCols * queryBlock;
    values = keys + cfg.stages * keyTile;
    barriers = values + cfg.stages * valueTile;
    // fullQ, then fullK, fullV, emptyK and emptyV per stage; persistent
    // CTAs also emptyQ.
    end = barriers + 8 * (1 + 4 * cfg.stages + (cfg.persistent ? 1 : 0));
  }
  int64_t queryBlock, keyBlock, valueBlock, keyTile, valueTile;
  int64_t keys = 0, values = 0, barriers = 0, end = 0;
};

/// Builds the kernel; holds the thread's coordinates and the buffers.
class GpuHopperBuilder : GpuIrBuilder {
public:
  GpuHopperBuilder(OpBuilder &b, const GpuSdpa &sdpa, const HopperConfig &cfg,
                   gpu::LaunchOp launch, Value tensorMaps)
      : GpuIrBuilder(b, sdpa.loc), sdpa(sdpa), cfg(cfg), launch(launch),
        tensorMaps(tensorMaps), layout(sdpa, cfg),
        foldScale(cfg.foldScale && sdpa.scaleLog2E > 0 &&
                  !sdpa.modifiesScores() && (!sdpa.mask || sdpa.boolMask)) {}

  void build();

private:
  Value addConst(Value x, int64_t c) { return c ? add(x, idx(c)) : x; }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  /// A shared-memory address (i32) `offset` bytes past `address`.
  Value offsetBy(Value address, int64_t offset) {
    return offset
               ? arith::AddIOp::create(b, loc, address, i32(offset)).getResult()
               : address;
  }
  Value sharedPtr(Value address);

  // mbarriers, named barriers and TMA.
  Value barrierAt(int64_t first, Value slot);
  void initBarrier(Value address, int64_t count);
  void waitBarrier(Value address, Value parity);
  void arriveBarrier(Value address);
  void expectBytes(Value address, int64_t bytes);
  void loadTile(Value map, Value dst, int64_t blockBytes, int64_t cols,
                Value row, Value tensorHead, Value barrier);
  void syncNamed(Value id);
  void arriveNamed(Value id);

  // wgmma.
  Value descriptor(Value address, int64_t leadingBytes, int64_t strideBytes);
  Value advance(Value descriptor, int64_t bytes) {
    return bytes ? arith::AddIOp::create(b, loc, descriptor, i64(bytes >> 4))
                       .getResult()
                 : descriptor;
  }
  SmallVector<Value> fenceOperands(ValueRange values);
  SmallVector<Value> scoreTile(Value keyDesc);
  SmallVector<Value> accumulateValues(ArrayRef<Value> acc,
                                      ArrayRef<Value> pRegs, Value valueDesc);
  Value packPair(Value x, Value y);

  Value quadReduce(Value x, bool isMax);
  Value rowOf(int64_t r) { return add(rowBase, addConst(g, 8 * r)); }
  Value keyOf(Value keyStart, int64_t n, int64_t c) {
    return add(keyStart, addConst(mul(t, idx(2)), 8 * n + c));
  }
  SmallVector<Value> modifyScores(ArrayRef<Value> scores, Value keyStart);
  SmallVector<Value> maskScores(ArrayRef<Value> scores, Value keyStart);

  /// A tile's ring slot: its index, its barriers' phase parity and its K
  /// and V addresses in shared memory.
  struct RingSlot {
    Value slot, parity, keyAddr, valueAddr;
  };
  RingSlot ringSlot(Value iteration);
  SmallVector<Value> scaleAndMask(SmallVector<Value> scores, Value tile,
                                  Value scale, const KeyTiles &tiles);
  SmallVector<Value> softmaxTile(ArrayRef<Value> scores, ValueRange state,
                                 Value scale, SmallVectorImpl<Value> &updated,
                                 SmallVectorImpl<Value> *alphas);
  void rescaleRow(SmallVectorImpl<Value> &state, int64_t r, Value alpha);
  void packProbabilities(ArrayRef<Value> probs,
                         SmallVectorImpl<Value> &operands);
  SmallVector<Value> issueValues(SmallVector<Value> operands, Value valueAddr);

  /// The persistent kernel's barrier that the consumers arrive on once
  /// they are done with an item's Q block (after fullQ and the ring's).
  int64_t emptyQueryBarrier() const { return 1 + 4 * cfg.stages; }
  KeyTiles locateItem();
  void
  forEachItem(function_ref<KeyTiles(Value, Value, function_ref<Value()>)> body);
  void buildProducer(const KeyTiles *tiles);
  void loadItem(const KeyTiles &tiles, Value ringBase, Value itemCount);
  void buildConsumer(const KeyTiles *tiles);
  SmallVector<Value> consumeTiles(const KeyTiles &tiles, Value ringBase);
  SmallVector<Value> keyTileStep(Value tile, Value iteration, ValueRange state,
                                 const KeyTiles &tiles);
  SmallVector<Value> overlappedTiles(const KeyTiles &tiles, Value ringBase,
                                     ValueRange init);
  void writeResults(ValueRange state);

  const GpuSdpa &sdpa;
  const HopperConfig &cfg;
  gpu::LaunchOp launch;
  Value tensorMaps;
  HopperLayout layout;
  bool foldScale = false;

  Value batch, head, kvHead, qStart;
  Value base;                       // the aligned shared-memory base (i32)
  Value queryMap, keyMap, valueMap; // tensor maps (generic pointers)
  GpuSequence seq;
  bool needsMask = false;
  // Consumers only.
  Value consumer;    // 0 or 1
  Value rowBase;     // the first row of the thread's warp
  Value g, t;        // lane / 4, lane % 4
  Value mine, other; // named barrier ids: this consumer's, the other's
  Value queryDesc;   // Q's descriptor for the consumer's 64 rows
  /// The accumulator struct Q.K^T's first wgmma takes (and ignores: scale-d
  /// 0): zeros inserted once, not an undef constant, which canonicalization
  /// would hoist out of the launch and outlining pass as a kernel argument.
  Value scoreInit;
};

} // namespace

//===----------------------------------------------------------------------===//
// Plan and host side
//===----------------------------------------------------------------------===//

std::optional<HopperConfig>
gpu_kernels::planHopperKernel(Type elt, int64_t d, int64_t dv, bool scoreWork) {
  if (!elt.isF16() && !elt.isBF16())
    return std::nullopt;
  if (!llvm::is_contained(kHopperHeadDims, d) ||
      !llvm::is_contained(kHopperHeadDims, dv))
    return std::nullopt;
  HopperConfig config;
  // A consumer holds S (blockKV / 2 registers), P (blockKV / 4) and O (Dv /
  // 2): 64-key tiles where a head dim is 256, whose tiles would also not
  // fit two stages of 128 keys in shared memory, and where masks or score
  // modifiers keep more values live per score (128-key tiles spilled with
  // all of them at once in 240 registers).
  if (d == 256 || dv == 256 || scoreWork)
    config.blockKV = 64;
  return config;
}

int64_t gpu_kernels::hopperSharedBytes(const GpuSdpa &sdpa,
                                       const HopperConfig &config) {
  return kSwizzleBytes + HopperLayout(sdpa, config).end;
}

void gpu_kernels::encodeHopperTensorMaps(OpBuilder &b, const GpuSdpa &sdpa,
                                         const HopperConfig &config,
                                         Value tensorMaps) {
  Location loc = sdpa.loc;
  Type index = b.getIndexType(), i32 = b.getI32Type();
  auto module = sdpa.op->getParentOfType<ModuleOp>();
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, b.getStringAttr(kEncodeTensorMapFunction));
  if (!callee) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    // (map, tensor, element type, dims outermost first, box rows, box
    // columns): attnCudaEncodeTensorMap in attn/Runtime/CudaRuntime.h.
    auto type = b.getFunctionType(
        {index, index, i32, index, index, index, index, i32, i32}, {});
    callee = func::FuncOp::create(b, loc, kEncodeTensorMapFunction, type);
    callee.setPrivate();
  }
  auto pointer = [&](Value buffer) -> Value {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  };
  auto c = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  // The driver takes no empty dimension: a map of Lk = 0 keys is never read
  // (no key tile is visited), so it describes one row.
  auto atLeastOne = [&](Value size) -> Value {
    return arith::MaxUIOp::create(b, loc, size, c(1));
  };
  Value maps = pointer(tensorMaps);
  Value elementType = c32(sdpa.elt.isBF16() ? ATTN_CUDA_TENSOR_MAP_BF16
                                            : ATTN_CUDA_TENSOR_MAP_F16);
  int64_t hkv = sdpa.hq / sdpa.group;
  struct Operand {
    Value buffer;
    int64_t heads;
    Value rows;
    int64_t cols, boxRows;
  } operands[] = {
      {sdpa.query, sdpa.hq, atLeastOne(sdpa.lq), sdpa.d, config.blockQ()},
      {sdpa.key, hkv, atLeastOne(sdpa.lk), sdpa.d, config.blockKV},
      {sdpa.value, hkv, atLeastOne(sdpa.lk), sdpa.dv, config.blockKV}};
  for (auto [i, operand] : llvm::enumerate(operands)) {
    Value map = arith::AddIOp::create(b, loc, maps, c(128 * i));
    func::CallOp::create(b, loc, callee,
                         ValueRange{map, pointer(operand.buffer), elementType,
                                    atLeastOne(sdpa.batch), c(operand.heads),
                                    operand.rows, c(operand.cols),
                                    c32(operand.boxRows), c32(kAtomCols)});
  }
}

//===----------------------------------------------------------------------===//
// Barriers and copies
//===----------------------------------------------------------------------===//

Value GpuHopperBuilder::sharedPtr(Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

/// The mbarrier `first + slot` (index `slot`, null for 0) of the barrier
/// array: fullQ is 0, fullK 1.., fullV 1 + stages.., emptyK 1 + 2 stages..,
/// emptyV 1 + 3 stages...
Value GpuHopperBuilder::barrierAt(int64_t first, Value slot) {
  Value address = offsetBy(base, layout.barriers + 8 * first);
  if (!slot)
    return address;
  return arith::AddIOp::create(
      b, loc, address, arith::MulIOp::create(b, loc, toI32(slot), i32(8)));
}

void GpuHopperBuilder::initBarrier(Value address, int64_t count) {
  NVVM::MBarrierInitOp::create(b, loc, sharedPtr(address), i32(count), Value());
}

void GpuHopperBuilder::waitBarrier(Value address, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(b, loc, sharedPtr(address), parity,
                                        i32(kWaitHintNs));
}

void GpuHopperBuilder::arriveBarrier(Value address) {
  NVVM::MBarrierArriveOp::create(b, loc, Type(), sharedPtr(address), Value());
}

void GpuHopperBuilder::expectBytes(Value address, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), sharedPtr(address),
                                         i32(bytes), NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false, Value());
}

/// TMA loads of rows [row, row + box rows) x [0, cols) of head `tensorHead`
/// of the batch into `dst`, one box of 64 columns per `blockBytes`;
/// completes on `barrier`. Rows past the tensor are filled with zeros.
void GpuHopperBuilder::loadTile(Value map, Value dst, int64_t blockBytes,
                                int64_t cols, Value row, Value tensorHead,
                                Value barrier) {
  auto cluster = LLVM::LLVMPointerType::get(b.getContext(), 7);
  Value rowI32 = toI32(row), headI32 = toI32(tensorHead),
        batchI32 = toI32(batch);
  for (int64_t block = 0; block < cols / kAtomCols; ++block) {
    // shared::cluster is where TMA writes; this CTA's shared window is part
    // of it.
    Value to = LLVM::AddrSpaceCastOp::create(
        b, loc, cluster, sharedPtr(offsetBy(dst, block * blockBytes)));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, to, map,
        ValueRange{i32(block * kAtomCols), rowI32, headI32, batchI32},
        sharedPtr(barrier), ValueRange{}, Value(), Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false, nullptr, Value());
  }
}

void GpuHopperBuilder::syncNamed(Value id) {
  NVVM::BarrierOp::create(b, loc, Type(), id, i32(kConsumerThreads), nullptr,
                          Value());
}

void GpuHopperBuilder::arriveNamed(Value id) {
  NVVM::BarrierArriveOp::create(b, loc, id, i32(kConsumerThreads));
}

//===----------------------------------------------------------------------===//
// wgmma
//===----------------------------------------------------------------------===//

/// The wgmma shared-memory descriptor of a 128-byte swizzled operand at
/// `address` (PTX ISA, "Matrix Descriptor Format"): the address and the two
/// byte offsets in 16-byte units, swizzle mode 1 (128 bytes) in bits 62-63.
/// K-major operands (Q, K) step through K by moving the address inside the
/// 128-byte row; their leading offset is unused (1) and 8-row groups lie
/// 1024 bytes apart. The N-major V has 8-key groups 1024 bytes apart and its
/// 64-column blocks `leadingBytes` apart.
Value GpuHopperBuilder::descriptor(Value address, int64_t leadingBytes,
                                   int64_t strideBytes) {
  int64_t fixed = ((leadingBytes >> 4) << 16) | ((strideBytes >> 4) << 32) |
                  (int64_t(1) << 62);
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, address, i32(4)), i32(0x3FFF));
  return arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), start),
      i64(fixed));
}

/// Keeps LLVM from moving the computations of `values` across the wgmma
/// fence, wait and commit around them (CUTLASS's warpgroup_fence_operand):
/// an empty asm statement with side effects that takes and returns them.
SmallVector<Value> GpuHopperBuilder::fenceOperands(ValueRange values) {
  std::string constraints;
  for (Value v : values)
    constraints += v.getType().isF32() ? "=f," : "=r,";
  for (size_t i = 0; i < values.size(); ++i)
    constraints += std::to_string(i) + (i + 1 < values.size() ? "," : "");
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), llvm::to_vector(values.getTypes()));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, loc, type, values, "", constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i));
  return out;
}

/// S = Q.K^T of the consumer's 64 rows against the K tile at `keyDesc`:
/// D / 16 wgmma (m64 n blockKV k16) with both operands in shared memory,
/// committed as one group (not waited for).
SmallVector<Value> GpuHopperBuilder::scoreTile(Value keyDesc) {
  MLIRContext *ctx = b.getContext();
  int64_t n = cfg.blockKV;
  SmallVector<Type> fields(n / 2, b.getF32Type());
  auto type = LLVM::LLVMStructType::getLiteral(ctx, fields);
  Value acc = scoreInit;
  NVVM::WGMMATypes operandType =
      sdpa.elt.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0, e = sdpa.d / 16; kk < e; ++kk) {
    // Column block kk / 4, 32 bytes (16 columns) per step inside its rows.
    int64_t inRow = (kk % 4) * 32;
    Value a = advance(queryDesc, (kk / 4) * layout.queryBlock + inRow);
    Value bDesc = advance(keyDesc, (kk / 4) * layout.keyBlock + inRow);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, type, acc, a, bDesc, NVVM::MMAShapeAttr::get(ctx, 64, n, 16),
        operandType, operandType, NVVM::WGMMATypes::f32,
        kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  SmallVector<Value> scores;
  for (int64_t k = 0; k < n / 2; ++k)
    scores.push_back(LLVM::ExtractValueOp::create(b, loc, acc, k));
  return scores;
}

/// Two probabilities rounded to the element type, as the i32 of one A
/// register.
Value GpuHopperBuilder::packPair(Value x, Value y) {
  auto pairType = VectorType::get({2}, sdpa.elt);
  Value pair = vector::FromElementsOp::create(
      b, loc, pairType,
      ValueRange{arith::TruncFOp::create(b, loc, sdpa.elt, x),
                 arith::TruncFOp::create(b, loc, sdpa.elt, y)});
  return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
}

/// O += P.V over the tile: one wgmma (m64 n Dv k16) per 16 keys, P from
/// registers (`pRegs`: the four A registers of each k-step, packed and
/// fenced by the caller), V from shared memory, transposed (imm-trans-b =
/// 1). Inline PTX with the accumulators tied: outputs $0 .. $(n-1), their
/// tied inputs $n .. $(2n-1), then the four A registers and the descriptor.
/// Issued and committed, not waited for.
SmallVector<Value> GpuHopperBuilder::accumulateValues(ArrayRef<Value> acc,
                                                      ArrayRef<Value> pRegs,
                                                      Value valueDesc) {
  int64_t n = acc.size();
  std::string typeName = sdpa.elt.isBF16() ? "bf16" : "f16";
  std::string constraints;
  for (int64_t i = 0; i < n; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < n; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "r,r,r,r,l";
  std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                    "wgmma.mma_async.sync.aligned.m64n" +
                    std::to_string(sdpa.dv) + "k16.f32." + typeName + "." +
                    typeName + " {";
  for (int64_t i = 0; i < n; ++i)
    ptx += (i ? ", $" : "$") + std::to_string(i);
  ptx += "}, {";
  for (int64_t i = 0; i < 4; ++i)
    ptx += (i ? ", $" : "$") + std::to_string(2 * n + i);
  ptx += "}, $" + std::to_string(2 * n + 4) + ", p, 1, 1, 1;\n}";
  auto type = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(n, b.getF32Type()));
  auto dialect =
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT);

  SmallVector<Value> out(acc);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t u = 0, e = cfg.blockKV / 16; u < e; ++u) {
    SmallVector<Value> operands(out);
    llvm::append_range(operands, pRegs.slice(4 * u, 4));
    // 16 keys are 16 rows of 128 bytes in every 64-column block.
    operands.push_back(advance(valueDesc, u * 16 * kRowBytes));
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, type, operands, ptx, constraints, /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        dialect, ArrayAttr());
    for (int64_t i = 0; i < n; ++i)
      out[i] = LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0), i);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return out;
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Reduces `x` over the four threads of a quad (lanes 4g .. 4g+3).
Value GpuHopperBuilder::quadReduce(Value x, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value o =
        gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, o).getResult()
              : arith::AddFOp::create(b, loc, x, o).getResult();
  }
  return x;
}

/// Softcap and ALiBi on every score of the tile (keys from `keyStart`), in
/// base-2 units, before any mask.
SmallVector<Value> GpuHopperBuilder::modifyScores(ArrayRef<Value> scores,
                                                  Value keyStart) {
  SmallVector<Value> out(scores);
  for (int64_t r = 0; r < 2; ++r) {
    Value diagBase;
    if (seq.alibiShift)
      diagBase = indexToF32(
          b, loc,
          arith::SubIOp::create(b, loc, add(rowOf(r), seq.alibiShift),
                                add(keyStart, mul(t, idx(2)))));
    for (int64_t n = 0, e = cfg.blockKV / 8; n < e; ++n)
      for (int64_t c = 0; c < 2; ++c) {
        Value &s = out[4 * n + 2 * r + c];
        Value diagMinusKey =
            diagBase
                ? arith::SubFOp::create(b, loc, diagBase, f32(float(8 * n + c)))
                      .getResult()
                : Value();
        s = modifyScore(b, sdpa, seq, s, diagMinusKey);
      }
  }
  return out;
}

/// The key length, band and user masks on every score of the tile.
SmallVector<Value> GpuHopperBuilder::maskScores(ArrayRef<Value> scores,
                                                Value keyStart) {
  SmallVector<Value> out(scores);
  Value lastRow = arith::SubIOp::create(b, loc, sdpa.lq, idx(1));
  Value lastKey = arith::SubIOp::create(b, loc, sdpa.lk, idx(1));
  for (int64_t r = 0; r < 2; ++r) {
    Value row = rowOf(r);
    Value maskRow =
        sdpa.mask ? arith::MinUIOp::create(b, loc, row, lastRow) : Value();
    for (int64_t n = 0, e = cfg.blockKV / 8; n < e; ++n)
      for (int64_t c = 0; c < 2; ++c) {
        Value &s = out[4 * n + 2 * r + c];
        s = maskScore(b, sdpa, seq, batch, head, s, row, maskRow,
                      keyOf(keyStart, n, c), lastKey);
      }
  }
  return out;
}

/// The ring slot of a consumer's `iteration`-th tile (iteration % stages),
/// the parity of its barriers' phase and its K and V tiles' addresses.
GpuHopperBuilder::RingSlot GpuHopperBuilder::ringSlot(Value iteration) {
  RingSlot r;
  Value stages = idx(cfg.stages);
  r.slot = arith::RemUIOp::create(b, loc, iteration, stages);
  r.parity = toI32(arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, iteration, stages), idx(2)));
  Value slotI32 = toI32(r.slot);
  r.keyAddr = arith::AddIOp::create(
      b, loc, offsetBy(base, layout.keys),
      arith::MulIOp::create(b, loc, slotI32, i32(layout.keyTile)));
  r.valueAddr = arith::AddIOp::create(
      b, loc, offsetBy(base, layout.values),
      arith::MulIOp::create(b, loc, slotI32, i32(layout.valueTile)));
  return r;
}

/// The scores of key tile `tile` in base-2 units (unless the scale is
/// folded into exp2), with softcap, ALiBi and the masks applied.
SmallVector<Value> GpuHopperBuilder::scaleAndMask(SmallVector<Value> scores,
                                                  Value tile, Value scale,
                                                  const KeyTiles &tiles) {
  if (!foldScale)
    for (Value &s : scores)
      s = arith::MulFOp::create(b, loc, s, scale);
  Value keyStart = mul(tile, idx(cfg.blockKV));
  if (sdpa.modifiesScores())
    scores = modifyScores(scores, keyStart);
  if (sdpa.mask) {
    scores = maskScores(scores, keyStart);
  } else if (needsMask) {
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
  return scores;
}

/// Online softmax per row r (g or g+8) of the thread, as in the mma.sync
/// kernel: the tile's row max over the quad, the rescale factor, P and the
/// thread's part of the row sum. `updated` starts as `state` and gets the
/// new maxima and sums, and the accumulators rescaled unless `alphas` is
/// given (the factors go there instead, for the overlapped kernel, whose
/// accumulators are still being written by P.V). Returns P.
SmallVector<Value>
GpuHopperBuilder::softmaxTile(ArrayRef<Value> scores, ValueRange state,
                              Value scale, SmallVectorImpl<Value> &updated,
                              SmallVectorImpl<Value> *alphas) {
  int64_t keyFrags = cfg.blockKV / 8;
  updated.assign(state.begin(), state.end());
  SmallVector<Value> probs(scores.size());
  for (int64_t r = 0; r < 2; ++r) {
    Value tileMax = f32(kNegInf);
    for (int64_t n = 0; n < keyFrags; ++n)
      for (int64_t c = 0; c < 2; ++c)
        tileMax = arith::MaximumFOp::create(b, loc, tileMax,
                                            scores[4 * n + 2 * r + c]);
    tileMax = quadReduce(tileMax, /*isMax=*/true);
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
    Value sum = arith::MulFOp::create(b, loc, state[2 + r], alpha);
    for (int64_t n = 0; n < keyFrags; ++n)
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
    if (alphas)
      alphas->push_back(alpha);
    else
      rescaleRow(updated, r, alpha);
  }
  return probs;
}

/// The accumulators of row r (g or g+8) of the thread in `state` times
/// `alpha`.
void GpuHopperBuilder::rescaleRow(SmallVectorImpl<Value> &state, int64_t r,
                                  Value alpha) {
  for (int64_t nd = 0, e = sdpa.dv / 8; nd < e; ++nd)
    for (int64_t c = 0; c < 2; ++c) {
      Value &a = state[4 + 4 * nd + 2 * r + c];
      a = arith::MulFOp::create(b, loc, a, alpha);
    }
}

/// P as the A registers of P.V: k-step u takes probabilities 8 u .. 8 u +
/// 7 (two neighbouring C fragments of S), appended to `operands`.
void GpuHopperBuilder::packProbabilities(ArrayRef<Value> probs,
                                         SmallVectorImpl<Value> &operands) {
  for (int64_t k = 0, e = cfg.blockKV / 4; k < e; ++k)
    operands.push_back(packPair(probs[2 * k], probs[2 * k + 1]));
}

/// O += P.V on the V tile at `valueAddr`: the accumulators and P (the
/// first Dv / 2 and the rest of `operands`) fenced, issued, committed; not
/// waited for.
SmallVector<Value> GpuHopperBuilder::issueValues(SmallVector<Value> operands,
                                                 Value valueAddr) {
  operands = fenceOperands(operands);
  int64_t accCount = sdpa.dv / 2;
  return accumulateValues(
      ArrayRef<Value>(operands).take_front(accCount),
      ArrayRef<Value>(operands).drop_front(accCount),
      descriptor(valueAddr, layout.valueBlock, kSwizzleBytes));
}

/// One key/value tile of a consumer (its `iteration`-th, in ring slot
/// iteration % stages): S = Q.K^T, masks, online softmax, O += P.V.
/// `state` is (m_g, m_g8, l_g, l_g8, acc...).
SmallVector<Value> GpuHopperBuilder::keyTileStep(Value tile, Value iteration,
                                                 ValueRange state,
                                                 const KeyTiles &tiles) {
  RingSlot ring = ringSlot(iteration);

  // S = Q.K^T in this consumer's turn; the other consumer's GEMMs may go
  // once it is issued.
  waitBarrier(barrierAt(1, ring.slot), ring.parity);
  SmallVector<Value> scores =
      scoreTile(descriptor(ring.keyAddr, 16, kSwizzleBytes));
  arriveNamed(other);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  scores = fenceOperands(scores);
  arriveBarrier(barrierAt(1 + 2 * cfg.stages, ring.slot));

  Value scale = f32(sdpa.scaleLog2E);
  scores = scaleAndMask(scores, tile, scale, tiles);
  SmallVector<Value> updated;
  SmallVector<Value> probs =
      softmaxTile(scores, state, scale, updated, /*alphas=*/nullptr);

  SmallVector<Value> operands(ArrayRef<Value>(updated).drop_front(4));
  packProbabilities(probs, operands);

  // O += P.V in this consumer's next turn, once V is here. The accumulators
  // and P are written before wgmma.fence, never after.
  waitBarrier(barrierAt(1 + cfg.stages, ring.slot), ring.parity);
  syncNamed(mine);
  SmallVector<Value> acc = issueValues(operands, ring.valueAddr);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  acc = fenceOperands(acc);
  arriveBarrier(barrierAt(1 + 3 * cfg.stages, ring.slot));
  llvm::copy(acc, updated.begin() + 4);
  return updated;
}

/// The consumer's tiles with the intra-warpgroup overlap (softmax-overlap):
/// a prologue computes S and P of the first tile; each step then issues
/// Q.K^T of tile j and P.V of tile j - 1 in one turn, waits for Q.K^T only
/// (wait_group 1) and computes the softmax of tile j while P.V runs, then
/// waits for P.V and rescales the accumulators; an epilogue issues the last
/// P.V. The state is (m, l, acc) as keyTileStep's, P of the previous tile
/// carried beside it. Returns the final state.
SmallVector<Value> GpuHopperBuilder::overlappedTiles(const KeyTiles &tiles,
                                                     Value ringBase,
                                                     ValueRange init) {
  auto iterationOf = [&](Value tile) {
    Value iteration = sub(tile, tiles.first);
    return ringBase ? add(ringBase, iteration) : iteration;
  };
  int64_t pCount = cfg.blockKV / 4;
  SmallVector<Type> stateTypes(init.getTypes());
  SmallVector<Type> carriedTypes(stateTypes);
  carriedTypes.append(pCount, b.getI32Type());
  Value hasTiles = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         tiles.end, tiles.first);

  // Prologue: S and P of the first tile (the accumulators are still 0).
  auto prologue = scf::IfOp::create(b, loc, carriedTypes, hasTiles,
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(prologue.thenBlock());
    RingSlot ring = ringSlot(iterationOf(tiles.first));
    waitBarrier(barrierAt(1, ring.slot), ring.parity);
    SmallVector<Value> scores =
        scoreTile(descriptor(ring.keyAddr, 16, kSwizzleBytes));
    arriveNamed(other);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    scores = fenceOperands(scores);
    arriveBarrier(barrierAt(1 + 2 * cfg.stages, ring.slot));
    Value scale = f32(sdpa.scaleLog2E);
    scores = scaleAndMask(scores, tiles.first, scale, tiles);
    SmallVector<Value> updated, alphas;
    SmallVector<Value> probs =
        softmaxTile(scores, init, scale, updated, &alphas);
    packProbabilities(probs, updated);
    scf::YieldOp::create(b, loc, updated);
    b.setInsertionPointToStart(prologue.elseBlock());
    SmallVector<Value> passed(init.begin(), init.end());
    passed.append(pCount, i32(0));
    scf::YieldOp::create(b, loc, passed);
  }

  int64_t stateCount = init.size();
  auto loop = scf::ForOp::create(
      b, loc, addConst(tiles.first, 1), tiles.end, idx(1),
      prologue.getResults(),
      [&](OpBuilder &nb, Location, Value tile, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value iteration = iterationOf(tile);
        RingSlot ring = ringSlot(iteration);
        RingSlot prev = ringSlot(sub(iteration, idx(1)));
        ValueRange state = carried.take_front(stateCount);
        // One turn: Q.K^T of this tile, then P.V of the previous one.
        waitBarrier(barrierAt(1, ring.slot), ring.parity);
        waitBarrier(barrierAt(1 + cfg.stages, prev.slot), prev.parity);
        syncNamed(mine);
        SmallVector<Value> scores =
            scoreTile(descriptor(ring.keyAddr, 16, kSwizzleBytes));
        SmallVector<Value> operands(state.drop_front(4));
        llvm::append_range(operands, carried.drop_front(stateCount));
        SmallVector<Value> acc = issueValues(operands, prev.valueAddr);
        arriveNamed(other);
        // S is ready once one group (P.V's) is left in flight.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
        scores = fenceOperands(scores);
        arriveBarrier(barrierAt(1 + 2 * cfg.stages, ring.slot));
        Value scale = f32(sdpa.scaleLog2E);
        scores = scaleAndMask(scores, tile, scale, tiles);
        SmallVector<Value> updated, alphas;
        SmallVector<Value> probs =
            softmaxTile(scores, state, scale, updated, &alphas);
        // P.V of the previous tile done: its V slot is free, and the
        // accumulators take this tile's factors.
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        acc = fenceOperands(acc);
        arriveBarrier(barrierAt(1 + 3 * cfg.stages, prev.slot));
        llvm::copy(acc, updated.begin() + 4);
        for (int64_t r = 0; r < 2; ++r)
          rescaleRow(updated, r, alphas[r]);
        packProbabilities(probs, updated);
        scf::YieldOp::create(b, loc, updated);
      });

  // Epilogue: P.V of the last tile.
  auto epilogue = scf::IfOp::create(b, loc, stateTypes, hasTiles,
                                    /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(epilogue.thenBlock());
  ValueRange carried = loop.getResults();
  RingSlot last = ringSlot(iterationOf(sub(tiles.end, idx(1))));
  waitBarrier(barrierAt(1 + cfg.stages, last.slot), last.parity);
  syncNamed(mine);
  SmallVector<Value> acc =
      issueValues(llvm::to_vector(carried.drop_front(4)), last.valueAddr);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  acc = fenceOperands(acc);
  arriveBarrier(barrierAt(1 + 3 * cfg.stages, last.slot));
  SmallVector<Value> finalState(carried.take_front(4));
  llvm::append_range(finalState, acc);
  scf::YieldOp::create(b, loc, finalState);
  b.setInsertionPointToStart(epilogue.elseBlock());
  scf::YieldOp::create(b, loc, carried.take_front(stateCount));
  return llvm::to_vector_of<Value>(epilogue.getResults());
}

/// out = l == 0 ? 0 : acc / l rounded to the element type, lse = (m +
/// log2 l) ln 2 (-inf for an empty row), for the thread's rows in [0, Lq).
void GpuHopperBuilder::writeResults(ValueRange state) {
  Value twoT = mul(t, idx(2));
  Value zero = f32(0);
  int64_t eltBytes = sdpa.elt.getIntOrFloatBitWidth() / 8;
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
    for (int64_t nd = 0, e = sdpa.dv / 8; nd < e; ++nd) {
      SmallVector<Value, 2> pair;
      for (int64_t c = 0; c < 2; ++c) {
        Value o =
            arith::MulFOp::create(b, loc, state[4 + 4 * nd + 2 * r + c], inv);
        o = arith::SelectOp::create(b, loc, empty, zero, o);
        pair.push_back(arith::TruncFOp::create(b, loc, sdpa.elt, o));
      }
      // Columns 2t, 2t+1 of the fragment: one 4-byte store.
      Value v = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, sdpa.elt), pair);
      vector::StoreOp::create(
          b, loc, v, sdpa.out,
          ValueRange{batch, head, row, addConst(twoT, 8 * nd)},
          /*nontemporal=*/false, llvm::MaybeAlign(2 * eltBytes));
    }
    if (!sdpa.lse)
      continue;
    // One thread per row: t = 0.
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, idx(0));
    auto ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
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

//===----------------------------------------------------------------------===//
// The two roles
//===----------------------------------------------------------------------===//

/// One thread of warpgroup 0 loads Q, then every K and V tile the CTA visits
/// into the ring, waiting for a slot to be released before refilling it.
void GpuHopperBuilder::buildProducer(const KeyTiles *tiles) {
  NVVM::SetMaxRegisterOp::create(b, loc, cfg.producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value tid = launch.getThreadIds().x;
  Value leader =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0));
  ifThen(leader, [&] {
    if (!cfg.persistent)
      return loadItem(*tiles, Value(), Value());
    forEachItem([&](Value ringBase, Value itemCount, function_ref<Value()>) {
      KeyTiles itemTiles = locateItem();
      loadItem(itemTiles, ringBase, itemCount);
      return itemTiles;
    });
  });
}

/// The producer's loads of one work item: Q (persistent CTAs first wait
/// for the consumers to release the previous item's), then the K and V
/// tiles; the ring's iterations count on from `ringBase` (null: 0).
void GpuHopperBuilder::loadItem(const KeyTiles &tiles, Value ringBase,
                                Value itemCount) {
  if (itemCount)
    waitBarrier(
        barrierAt(emptyQueryBarrier(), Value()),
        toI32(arith::RemUIOp::create(b, loc, addConst(itemCount, 1), idx(2))));
  Value fullQ = barrierAt(0, Value());
  expectBytes(fullQ, sdpa.d / kAtomCols * layout.queryBlock);
  loadTile(queryMap, base, layout.queryBlock, sdpa.d, qStart, head, fullQ);
  Value stages = idx(cfg.stages);
  scf::ForOp::create(
      b, loc, tiles.first, tiles.end, idx(1), ValueRange{},
      [&](OpBuilder &nb, Location, Value tile, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value iteration = sub(tile, tiles.first);
        if (ringBase)
          iteration = add(ringBase, iteration);
        Value slot = arith::RemUIOp::create(b, loc, iteration, stages);
        // The slot's previous use (one pass of the ring earlier) must be
        // released; the first pass waits for the parity before phase 0,
        // which a fresh barrier counts as complete.
        Value parity = toI32(arith::RemUIOp::create(
            b, loc,
            addConst(arith::DivUIOp::create(b, loc, iteration, stages), 1),
            idx(2)));
        Value slotI32 = toI32(slot);
        Value row = mul(tile, idx(cfg.blockKV));
        waitBarrier(barrierAt(1 + 2 * cfg.stages, slot), parity);
        Value fullK = barrierAt(1, slot);
        expectBytes(fullK, layout.keyTile);
        loadTile(
            keyMap,
            arith::AddIOp::create(
                b, loc, offsetBy(base, layout.keys),
                arith::MulIOp::create(b, loc, slotI32, i32(layout.keyTile))),
            layout.keyBlock, sdpa.d, row, kvHead, fullK);
        waitBarrier(barrierAt(1 + 3 * cfg.stages, slot), parity);
        Value fullV = barrierAt(1 + cfg.stages, slot);
        expectBytes(fullV, layout.valueTile);
        loadTile(
            valueMap,
            arith::AddIOp::create(
                b, loc, offsetBy(base, layout.values),
                arith::MulIOp::create(b, loc, slotI32, i32(layout.valueTile))),
            layout.valueBlock, sdpa.dv, row, kvHead, fullV);
        scf::YieldOp::create(b, loc);
      });
}

/// A consumer warpgroup: its 64 rows over every tile the producer loads.
void GpuHopperBuilder::buildConsumer(const KeyTiles *tiles) {
  NVVM::SetMaxRegisterOp::create(b, loc, cfg.consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  Value tid = launch.getThreadIds().x;
  Value local =
      arith::RemUIOp::create(b, loc, tid, idx(HopperConfig::kWarpgroupThreads));
  consumer = sub(
      arith::DivUIOp::create(b, loc, tid, idx(HopperConfig::kWarpgroupThreads)),
      idx(1));
  Value warp = arith::DivUIOp::create(b, loc, local, idx(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, idx(32));
  g = arith::DivUIOp::create(b, loc, lane, idx(4));
  t = arith::RemUIOp::create(b, loc, lane, idx(4));
  // The first row of the warp inside the CTA's 128.
  Value warpRows;
  if (cfg.persistent)
    warpRows = add(mul(consumer, idx(HopperConfig::kConsumerRows)),
                   mul(warp, idx(16)));
  else
    rowBase = add(add(qStart, mul(consumer, idx(HopperConfig::kConsumerRows))),
                  mul(warp, idx(16)));
  // Named barriers 1 and 2 (0 is bar.sync's): consumer c waits on 1 + c.
  Value consumerI32 = toI32(consumer);
  mine = arith::AddIOp::create(b, loc, consumerI32, i32(1));
  other = arith::SubIOp::create(b, loc, i32(2), consumerI32);
  // The consumer's 64 rows of Q: 64 rows of 128 bytes into each block.
  queryDesc = descriptor(
      arith::AddIOp::create(
          b, loc, base,
          arith::MulIOp::create(b, loc, consumerI32,
                                i32(HopperConfig::kConsumerRows * kRowBytes))),
      16, kSwizzleBytes);

  auto scoreType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(cfg.blockKV / 2, b.getF32Type()));
  scoreInit = LLVM::UndefOp::create(b, loc, scoreType);
  for (int64_t k = 0; k < cfg.blockKV / 2; ++k)
    scoreInit = LLVM::InsertValueOp::create(b, loc, scoreInit, f32(0), k);

  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, consumer, idx(0));
  if (!cfg.persistent) {
    // Consumer 0 takes the first turn.
    ifThen(first, [&] { arriveNamed(mine); });
    syncNamed(mine);
    waitBarrier(barrierAt(0, Value()), i32(0));
    SmallVector<Value> state = consumeTiles(*tiles, Value());
    // Consumer 1's last turn (its P.V of the last tile) comes from here.
    ifThen(first, [&] { arriveNamed(other); });
    writeResults(state);
    return;
  }

  // Persistent: the turns run on across the CTA's items. Consumer 0 takes
  // the first turn of its first item; the first turn of every later item
  // is handed over by consumer 1 once it has issued its last P.V, so that
  // neither named barrier ever holds two arrivals of one consumer.
  forEachItem([&](Value ringBase, Value itemCount,
                  function_ref<Value()> hasNext) {
    KeyTiles itemTiles = locateItem();
    rowBase = add(qStart, warpRows);
    Value firstItem = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            itemCount, idx(0));
    ifThen(arith::AndIOp::create(b, loc, first, firstItem),
           [&] { arriveNamed(mine); });
    syncNamed(mine);
    waitBarrier(barrierAt(0, Value()),
                toI32(arith::RemUIOp::create(b, loc, itemCount, idx(2))));
    SmallVector<Value> state = consumeTiles(itemTiles, ringBase);
    // Every Q.K^T of the item is done: the producer may load the next Q.
    arriveBarrier(barrierAt(emptyQueryBarrier(), Value()));
    ifThen(arith::OrIOp::create(b, loc, first, hasNext()),
           [&] { arriveNamed(other); });
    writeResults(state);
    return itemTiles;
  });
}

/// The consumer's walk over the item's key tiles; returns (m, l, acc).
SmallVector<Value> GpuHopperBuilder::consumeTiles(const KeyTiles &tiles,
                                                  Value ringBase) {
  SmallVector<Value> init = {f32(kNegInf), f32(kNegInf), f32(0), f32(0)};
  for (int64_t k = 0, e = sdpa.dv / 2; k < e; ++k)
    init.push_back(f32(0));
  if (cfg.softmaxOverlap)
    return overlappedTiles(tiles, ringBase, init);
  auto loop = scf::ForOp::create(
      b, loc, tiles.first, tiles.end, idx(1), init,
      [&](OpBuilder &nb, Location, Value tile, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value iteration = sub(tile, tiles.first);
        if (ringBase)
          iteration = add(ringBase, iteration);
        scf::YieldOp::create(b, loc,
                             keyTileStep(tile, iteration, state, tiles));
      });
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// The key tiles the CTA's 128 rows from qStart visit (both consumers walk
/// all of them, so that they take the same turns), and those that need no
/// element mask for any of its rows; sets `seq`.
KeyTiles GpuHopperBuilder::locateItem() {
  seq = locateSequence(b, sdpa, batch, head);
  Value lastRow = arith::SubIOp::create(
      b, loc,
      arith::MinUIOp::create(b, loc, addConst(qStart, cfg.blockQ()), sdpa.lq),
      idx(1));
  return keyTiles(b, sdpa, seq, qStart, lastRow, cfg.blockKV);
}

/// Persistent CTAs: `body(ringBase, itemCount, hasNext)` for each work item
/// of the CTA, blockIdx.x, + gridDim.x, ... below B * Hq * ceil(Lq / 128),
/// with batch, head, kvHead and qStart set; ringBase counts the K/V tiles of
/// the CTA's earlier items (the ring's iterations go on across items),
/// itemCount the items, hasNext() builds whether another item follows. The body
/// returns the item's key tiles. Items are numbered with the query block
/// innermost (neighbouring CTAs share K and V in L2); with a causal band,
/// the query block outermost and reversed, so that the longest items (the
/// last query blocks, which see the most keys) are taken first and the
/// short ones fill in at the end.
void GpuHopperBuilder::forEachItem(
    function_ref<KeyTiles(Value, Value, function_ref<Value()>)> body) {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 grid = launch.getGridSize();
  Value rowBlocks =
      arith::CeilDivUIOp::create(b, loc, sdpa.lq, idx(cfg.blockQ()));
  Value heads = idx(sdpa.hq);
  Value items = mul(mul(rowBlocks, heads), sdpa.batch);
  bool longestFirst = sdpa.band && sdpa.band->right;
  auto loop = scf::ForOp::create(
      b, loc, blockIds.x, items, grid.x, ValueRange{idx(0), idx(0)},
      [&](OpBuilder &nb, Location, Value item, ValueRange counts) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
        Value rowBlock, rest;
        if (longestFirst) {
          Value sequences = mul(heads, sdpa.batch);
          rowBlock = sub(sub(rowBlocks, idx(1)),
                         arith::DivUIOp::create(b, loc, item, sequences));
          rest = arith::RemUIOp::create(b, loc, item, sequences);
        } else {
          rowBlock = arith::RemUIOp::create(b, loc, item, rowBlocks);
          rest = arith::DivUIOp::create(b, loc, item, rowBlocks);
        }
        head = arith::RemUIOp::create(b, loc, rest, heads);
        batch = arith::DivUIOp::create(b, loc, rest, heads);
        kvHead = arith::DivUIOp::create(b, loc, head, idx(sdpa.group));
        qStart = mul(rowBlock, idx(cfg.blockQ()));
        // Whether another item follows: built where the body asks, so that
        // it is not live across the item's tiles.
        auto hasNext = [&]() -> Value {
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       add(item, grid.x), items);
        };
        KeyTiles tiles = body(counts[0], counts[1], hasNext);
        // The item's tiles: end - first, or none.
        Value visited =
            sub(arith::MaxSIOp::create(b, loc, tiles.end, tiles.first),
                tiles.first);
        scf::YieldOp::create(
            b, loc,
            ValueRange{add(counts[0], visited), addConst(counts[1], 1)});
      });
  (void)loop;
}

void GpuHopperBuilder::build() {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  Value tid = launch.getThreadIds().x;
  if (!cfg.persistent) {
    batch = blockIds.z;
    head = blockIds.y;
    kvHead = arith::DivUIOp::create(b, loc, head, idx(sdpa.group));
    qStart = mul(blockIds.x, idx(cfg.blockQ()));
  }

  // The dynamic shared memory, aligned up to the swizzle's period (the
  // launch asks for that much more).
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), AffineMap(),
                      workgroup));
  Value raw =
      toI32(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem));
  base = arith::AndIOp::create(b, loc, offsetBy(raw, kSwizzleBytes - 1),
                               i32(~(kSwizzleBytes - 1)));
  // The tensor maps: 128 bytes each in device memory.
  auto generic = LLVM::LLVMPointerType::get(b.getContext());
  Value maps = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, tensorMaps));
  auto mapAt = [&](int64_t i) -> Value {
    return LLVM::IntToPtrOp::create(
        b, loc, generic,
        i ? arith::AddIOp::create(b, loc, maps, i64(128 * i)).getResult()
          : maps);
  };
  queryMap = mapAt(0);
  keyMap = mapAt(1);
  valueMap = mapAt(2);

  ifThen(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, idx(0)),
      [&] {
        initBarrier(barrierAt(0, Value()), 1);
        for (int64_t s = 0; s < cfg.stages; ++s) {
          initBarrier(offsetBy(barrierAt(1, Value()), 8 * s), 1);
          initBarrier(offsetBy(barrierAt(1 + cfg.stages, Value()), 8 * s), 1);
          initBarrier(offsetBy(barrierAt(1 + 2 * cfg.stages, Value()), 8 * s),
                      kConsumerThreads);
          initBarrier(offsetBy(barrierAt(1 + 3 * cfg.stages, Value()), 8 * s),
                      kConsumerThreads);
        }
        if (cfg.persistent)
          initBarrier(barrierAt(emptyQueryBarrier(), Value()),
                      kConsumerThreads);
        NVVM::FenceMbarrierInitOp::create(b, loc);
      });
  gpu::BarrierOp::create(b, loc);

  // One CTA per tile: its key tiles, found once for both roles. Persistent
  // CTAs find each item's in the roles' loops.
  std::optional<KeyTiles> tiles;
  if (!cfg.persistent)
    tiles = locateItem();
  auto keyType = cast<MemRefType>(sdpa.key.getType());
  needsMask = sdpa.band || sdpa.keyLengths || keyType.isDynamicDim(2) ||
              keyType.getDimSize(2) % cfg.blockKV != 0;

  // Each warpgroup's role is one branch of one if/else, as setmaxnreg
  // needs.
  Value producer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                         idx(HopperConfig::kWarpgroupThreads));
  auto role = scf::IfOp::create(b, loc, producer, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(role.thenBlock()->getTerminator());
  buildProducer(tiles ? &*tiles : nullptr);
  b.setInsertionPoint(role.elseBlock()->getTerminator());
  buildConsumer(tiles ? &*tiles : nullptr);
}

void gpu_kernels::buildHopperKernel(OpBuilder &b, const GpuSdpa &sdpa,
                                    const HopperConfig &config,
                                    gpu::LaunchOp launch, Value tensorMaps) {
  GpuHopperBuilder(b, sdpa, config, launch, tensorMaps).build();
}
