//===- GpuKernels.h - kernel builders of convert-attn-to-gpu ----*- C++ -*-===//
//
// Part of the attn project.
//
// Private to lib/Conversion/AttnToGpu: what the pass hands its two kernel
// builders (the f32 FMA kernel and the FlashAttention-2 tensor-core kernel),
// and the index helpers both use.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTOGPU_GPUKERNELS_H
#define ATTN_LIB_CONVERSION_ATTNTOGPU_GPUKERNELS_H

#include "attn/Codegen/GPU/Passes.h"
#include "attn/Dialect/Attn/IR/AttnGradOps.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Dialect/Attn/Utils/Geometry.h"
#include "attn/Dialect/Attn/Utils/IrBuilder.h"
#include "attn/Dialect/Attn/Utils/ScoreModifiers.h"
#include "attn/Dialect/Attn/Utils/TileConventions.h"
#include "attn/Dialect/Attn/Utils/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <cstdint>
#include <optional>

namespace mlir::attn::gpu_kernels {

/// The base of the GPU kernel builders (GpuFlashBuilder, GpuDecodeBuilder).
using GpuIrBuilder = IrBuilder;

/// One attn.sdpa on buffers: what every kernel builder reads.
struct GpuSdpa {
  SdpaOp op;
  Location loc;
  /// Identity-layout buffers: query, key, value, mask (or null), out, lse
  /// (or null).
  Value query, key, value, mask, out, lse;
  /// The last index (size - 1) of every dynamic mask dim, null for static
  /// dims: computed before the launch (a dynamic dim may be 1 at run time).
  SmallVector<Value, 4> maskLast;
  /// Run-time sizes (index values, defined before the launch).
  Value batch, lq, lk;
  int64_t hq = 0, group = 1, d = 0, dv = 0;
  Type elt;
  /// scale * log2(e): the factor that puts the scores in base 2.
  float scaleLog2E = 0;
  bool boolMask = false;
  /// The causal and window rules as one band of visible keys (nullopt when
  /// neither bounds anything).
  std::optional<VisibleBand> band;
  /// Buffers of the key_lengths (i32 [B]) and alibi_slopes (f32 [Hq] or
  /// [B, Hq]) operands, or null.
  Value keyLengths, alibiSlopes;
  /// The softcap in base-2 units (cap * log2(e)), if any.
  std::optional<float> softcap;
  /// Whether softcap or ALiBi change the scores (modifyScore).
  bool modifiesScores() const { return softcap || alibiSlopes; }
};

/// The tensor-core kernel's tile sizes, chosen by the pass.
struct FlashConfig {
  int64_t blockQ = 64;  // query rows per CTA (16 per warp)
  int64_t blockKV = 64; // keys per shared-memory tile
  /// Rows padded by 16 bytes (else, where the row is 4, 8 or 16 chunks of
  /// 16 bytes, stored densely with swizzled chunks): see sharedRowLength.
  bool padRows = true;
  /// Q staged in the K and V tiles together (before the first K/V tile is
  /// loaded) where neither its own buffer nor the V tiles fit: D = 256.
  bool queryInKeyValueTiles = false;
  /// Warps that share 16 query rows, each accumulating Dv / dvSplit of the
  /// value columns (and each computing the rows' scores): 2 at D or Dv =
  /// 256, where one warp's accumulator (128 registers at Dv = 256) and Q
  /// fragments (64 at D = 256) leave too few registers.
  int64_t dvSplit = 1;
  /// The score scale folded into exp2's argument (convert-attn-to-gpu's
  /// fold-scale) where the scores need no scaled value of their own (no
  /// softcap, ALiBi or float mask; a positive scale).
  bool foldScale = false;
  /// The accumulators rescaled only in tiles where one of the thread's row
  /// maxima grew (convert-attn-to-gpu's lazy-rescale; exact).
  bool lazyRescale = false;
  int64_t warps() const { return blockQ / 16 * dvSplit; }
  int64_t threads() const { return 32 * warps(); }
};

/// The row length (in elements) of a workgroup tile of `cols` columns: rows
/// padded by one 16-byte chunk, or, without padRows and where a row is 4, 8
/// or 16 chunks, dense rows whose chunks are XOR-swizzled (FlashKernel's
/// swizzledColumn). Either way the 8 rows an ldmatrix reads fall in 8
/// distinct 16-byte bank groups: no bank conflicts. Padding keeps the
/// fragment addresses of a lane a constant apart (fewer registers);
/// swizzling saves the shared memory.
int64_t sharedRowLength(int64_t cols, const FlashConfig &config);

/// Whether the Q block is staged in the (not yet used) V buffers: they hold
/// it whenever they are as large. Q is read once, into registers, before
/// the first V tile is loaded.
bool stagesQueryInValueTiles(const GpuSdpa &sdpa, const FlashConfig &config);

/// Whether the K and V tiles together can hold the Q block (for
/// FlashConfig::queryInKeyValueTiles).
bool keyValueTilesHoldQuery(const GpuSdpa &sdpa, const FlashConfig &config);

/// Bytes of workgroup memory the tensor-core kernel uses for `config`: two K
/// and two V tiles, and the Q block where they do not hold it.
int64_t flashSharedBytes(const GpuSdpa &sdpa, const FlashConfig &config);

/// What a CTA reads once of the variants for its (batch, head)
/// (GpuScoreModifiers.cpp).
struct GpuSequence {
  /// The keys the batch has: Lk, or key_lengths[batch] clamped to [0, Lk].
  Value keyLen;
  /// The band's diagonal minus the row: 0 (top_left) or keyLen - Lq; null
  /// without a band.
  Value diagShift;
  /// ALiBi: the slope in base-2 units and keyLen - Lq; null without.
  Value alibiSlope, alibiShift;
};
GpuSequence locateSequence(OpBuilder &b, const GpuSdpa &sdpa, Value batch,
                           Value head);

/// The keys [begin, end) that some row of [firstRow, lastRow] may see.
struct KeySpan {
  Value begin, end;
};
KeySpan keySpan(OpBuilder &b, const GpuSdpa &sdpa, const GpuSequence &seq,
                Value firstRow, Value lastRow);

/// The key tiles of `blockKV` keys that rows [firstRow, lastRow] visit:
/// [first, end); those in [unmaskedBegin, unmaskedEnd) are seen whole by
/// every row (no element mask).
struct KeyTiles {
  Value first, unmaskedBegin, unmaskedEnd, end;
};
KeyTiles keyTiles(OpBuilder &b, const GpuSdpa &sdpa, const GpuSequence &seq,
                  Value firstRow, Value lastRow, int64_t blockKV);

/// i1: whether `key` (< Lk) is visible to `row` under the key length and
/// the band.
Value keyVisible(OpBuilder &b, const GpuSdpa &sdpa, const GpuSequence &seq,
                 Value row, Value key);

/// The score `s` of `row` against `key` with the masks applied: -inf where
/// the key length, the band or the i1 mask hide the key, the float mask
/// (base-2 units) added otherwise. `maskRow` is `row` clamped to Lq - 1 and
/// `lastKey` is Lk - 1 (read only with a mask: a tile's rows and keys may run
/// past the tensors). Both tensor-core kernels call it on their C fragments.
Value maskScore(OpBuilder &b, const GpuSdpa &sdpa, const GpuSequence &seq,
                Value batch, Value head, Value s, Value row, Value maskRow,
                Value key, Value lastKey);

/// A signed index as f32 (through i32).
Value indexToF32(OpBuilder &b, Location loc, Value index);

/// The base-2 score `s` with softcap (c tanh(s / c)) and then ALiBi
/// (s - slope |diagMinusKey|, diagMinusKey = row + alibiShift - key as an
/// f32, null without ALiBi) applied.
Value modifyScore(OpBuilder &b, const GpuSdpa &sdpa, const GpuSequence &seq,
                  Value s, Value diagMinusKey);

/// Reads the mask at (batch, head, row, key), clamping broadcast dims
/// (size 1, statically or at run time) to 0. `row` and `key` must be in
/// range. Returns the i1 value, or the additive value as f32 in base-2 units
/// (times log2(e)).
Value readMask(OpBuilder &b, const GpuSdpa &sdpa, Value batch, Value head,
               Value row, Value key);

/// Applies the online-softmax update to one row: returns (m_new, alpha) for
/// the old max `m` and the block max `blockMax`, alpha = 0 while the row has
/// seen nothing (m = -inf) so that -inf - -inf never makes a NaN. With
/// `scale`, m and blockMax are unscaled scores and alpha = exp2((m - m_new)
/// * scale) (the tensor-core kernel's fold-scale).
std::pair<Value, Value> updateRowMax(OpBuilder &b, Location loc, Value m,
                                     Value blockMax, Value scale = Value());

/// exp2(s - m), 0 for a hidden score (s = -inf).
Value probability(OpBuilder &b, Location loc, Value s, Value m);

/// Four f32 of one m16n8k16 C fragment: (row g: col 2t, 2t+1), (row g+8:
/// same), lane = 4 g + t.
using MmaAccum = std::array<Value, 4>;

/// D = A.B + C on mma.sync m16n8k16 with f32 accumulation, for f16 or bf16
/// (`elt`) A (vector<4x2xelt>) and B (vector<2x2xelt>) fragments.
MmaAccum mmaSync(OpBuilder &b, Location loc, Type elt, Value a, Value bFrag,
                 const MmaAccum &c);

/// An A fragment (vector<4x2xelt>) from the 8 f32 of two neighbouring C
/// fragments (columns 0-7, then 8-15; each in MmaAccum order), rounded to
/// `elt`: a C tile of 16x16 reused as the A operand of the next product.
Value packAFragment(OpBuilder &b, Location loc, Type elt,
                    ArrayRef<Value> values);

/// The compute capability of a chip sm_XX (or sm_90a), XX >= 80; nullopt
/// for any other spelling.
std::optional<unsigned> smOfChip(StringRef chip);

/// Shared memory one CTA may have with the driver's opt-in on chip `sm`.
int64_t chipSharedMemory(unsigned sm);

/// The f32 kernel (one thread per query row) in `launch`'s body.
void buildRowKernelF32(OpBuilder &b, const GpuSdpa &sdpa, gpu::LaunchOp launch,
                       int64_t blockQ);

/// The FlashAttention-2 tensor-core kernel in `launch`'s body (f16/bf16).
void buildFlashKernel(OpBuilder &b, const GpuSdpa &sdpa,
                      const FlashConfig &config, gpu::LaunchOp launch);

/// The warp-specialized sm_90a kernel (GpuHopperKernel.cpp): a CTA of three
/// warpgroups over 128 query rows, one producer issuing TMA loads into a
/// ring of shared-memory stages and two consumers of 64 rows each on wgmma.
struct HopperConfig {
  /// Keys per K/V tile: the N of Q.K^T's wgmma and the K of P.V's.
  int64_t blockKV = 128;
  /// K/V tiles in flight (the ring's stages).
  int64_t stages = 2;
  /// As FlashConfig::foldScale.
  bool foldScale = false;
  /// Persistent CTAs (convert-attn-to-gpu's persistent): a grid of
  /// kHopperCtasPerSm CTAs per SM, each looping over work items.
  bool persistent = false;
  /// The softmax of tile j overlapped with P.V of tile j - 1 inside each
  /// consumer (softmax-overlap).
  bool softmaxOverlap = false;
  /// Registers per thread after setmaxnreg: the producer gives up most of
  /// the 168 each thread starts with and the consumers take them (24 + 2 *
  /// 240 = 504 of the 512 = 65536 / 128 the three warpgroups share).
  int64_t producerRegisters = 24, consumerRegisters = 240;
  static constexpr int64_t kConsumers = 2;
  static constexpr int64_t kConsumerRows = 64; // the M of wgmma
  static constexpr int64_t kWarpgroupThreads = 128;
  int64_t blockQ() const { return kConsumers * kConsumerRows; }
  int64_t threads() const { return (kConsumers + 1) * kWarpgroupThreads; }
};

/// CTAs per SM of the persistent sm_90a kernel: one, as 384 threads of 168
/// registers (the launch bounds' minimum of one CTA per SM) take the whole
/// 64K-register file.
inline constexpr int64_t kHopperCtasPerSm = 1;

/// Host code before a kernels=wgmma launch: the SMs of the device the call
/// runs on (index), read by the runtime (attnCudaSmCount, over the driver's
/// cuDeviceGetAttribute).
Value smCountAtLaunch(OpBuilder &b, Location loc, Operation *op);

/// The runtime function that gives the SM count (lib/Runtime/CUDA).
inline constexpr llvm::StringLiteral kSmCountFunction = "attnCudaSmCount";

/// Head dims the sm_90a kernel takes: multiples of the 64 16-bit columns of
/// a 128-byte swizzled row (one TMA box, one wgmma swizzle atom).
inline constexpr int64_t kHopperHeadDims[] = {64, 128, 256};

/// Whether the sm_90a kernel takes an op of element type `elt` and head
/// dims `d`, `dv`; and the tile sizes it then uses. `scoreWork`: whether the
/// op reads a user mask or modifies its scores (softcap, ALiBi), code that
/// keeps more values live per score.
std::optional<HopperConfig> planHopperKernel(Type elt, int64_t d, int64_t dv,
                                             bool scoreWork);

/// Bytes of dynamic shared memory the sm_90a kernel asks for (with the 1 KiB
/// it may skip to align its tiles to the 128-byte swizzle's 1024-byte
/// period).
int64_t hopperSharedBytes(const GpuSdpa &sdpa, const HopperConfig &config);

/// Bytes of the TMA tensor maps the sm_90a kernel reads (query, key, value;
/// 128 each, in device memory).
inline constexpr int64_t kHopperTensorMapBytes = 3 * 128;

/// Host code before the sm_90a kernel's launch: encodes the query, key and
/// value tensor maps (the runtime's attnCudaEncodeTensorMap, over the
/// driver's cuTensorMapEncodeTiled) into `tensorMaps`, a device buffer of
/// kHopperTensorMapBytes, on the launch's stream.
void encodeHopperTensorMaps(OpBuilder &b, const GpuSdpa &sdpa,
                            const HopperConfig &config, Value tensorMaps);

/// The sm_90a kernel in `launch`'s body (f16/bf16), reading its tensor maps
/// from `tensorMaps`.
void buildHopperKernel(OpBuilder &b, const GpuSdpa &sdpa,
                       const HopperConfig &config, gpu::LaunchOp launch,
                       Value tensorMaps);

/// The runtime function that encodes one tensor map (lib/Runtime/CUDA).
inline constexpr llvm::StringLiteral kEncodeTensorMapFunction =
    "attnCudaEncodeTensorMap";

/// The split-K decode kernels' sizes (DecodeKernel.cpp), chosen by the pass.
struct DecodeConfig {
  int64_t rowsPerCta = 1;     // query rows (of the heads of one K/V head)
  int64_t keysPerChunk = 128; // keys per chunk staged in shared memory
  /// 1: the K chunk staged, V read from global memory (the kernel checked on
  /// an H200); 2: K and V chunks double-buffered, several threads per key
  /// (checked on an H200 too, no faster there).
  int64_t stages = 1;
  int64_t threads = 128;
  /// Keys per iteration of the one-stage kernel's P.V loop, whose V loads
  /// (from global memory) are issued together.
  int64_t valueUnroll = 2;
  int64_t kvSplits = 0;  // key splits; 0: chosen at run time
  int64_t smCount = 132; // for the run-time choice
  /// The run-time choice counts the device's SMs at launch (attnCudaSmCount)
  /// instead of smCount: kernels=wgmma without sm-count.
  bool smCountAtLaunch = false;
};

/// Most query rows per CTA of the split kernel: each row keeps its score,
/// max, sum and accumulators in registers (8 rows spill with a mask).
inline constexpr int64_t kMaxDecodeRowsPerCta = 4;

/// The automatic key splits of the decode kernels: enough CTAs for
/// kSplitCtasPerSm per SM, each split at least kMinSplitKeys keys: 64 splits
/// for Lk = 32k. On an H200 (bf16, Hq 32, Hkv 8, D 128) 64 was the fastest of
/// 5 to 256 splits at B = 1 in every run, within 3% of 128 at B = 8, and
/// 1.2x to 1.5x faster than the earlier rule's 33 and 5 (two CTAs per SM, 256
/// keys): docs/gpu-check.md.
inline constexpr int64_t kSplitCtasPerSm = 32;
inline constexpr int64_t kMinSplitKeys = 512;

/// Whether the decode kernels take the op's D (whole 16-byte vectors), and
/// with two stages its Dv (V rows copied by cp.async too).
bool decodeTakes(const GpuSdpa &sdpa, int64_t stages);

/// Bytes of dynamic shared memory the split kernel uses for `config`.
int64_t decodeSharedBytes(const GpuSdpa &sdpa, const DecodeConfig &config);

/// The split-K decode lowering at `b` (inside the non-empty guard): the
/// split count, the partial buffers, the split kernel's launch and, with
/// more than one split, the merge kernel's.
void buildDecodeKernels(OpBuilder &b, const GpuSdpa &sdpa,
                        const DecodeConfig &config);

/// The GPU backward's tiles (GpuSdpaGrad.cpp): a CTA of `warps` warps owns
/// 16 keys per warp and walks query blocks of `blockQ` rows.
struct GpuGradConfig {
  int64_t blockQ = 64;
  int64_t warps = 4;
  int64_t blockKV = 64; // 16 * warps
  /// Partial dQ per key block, summed in order (convert-attn-to-gpu's
  /// deterministic), instead of f32 atomics.
  bool deterministic = false;
  int64_t threads() const { return 32 * warps; }
};

/// Head dims the GPU backward takes (multiples of 16, dK and dV in
/// registers).
inline constexpr int64_t kGradHeadDims[] = {32, 64, 80, 96, 128};

/// Bytes of dynamic shared memory of the backward's main kernel: K, V
/// (block-kv rows), Q, dO (block-q rows) and dS (block-q x block-kv), rows
/// padded by 16 bytes.
int64_t gradSharedBytes(int64_t d, int64_t dv, Type elt,
                        const GpuGradConfig &cfg);

/// Checks an attn.sdpa_grad against what the GPU backward takes and picks
/// its tiles; emits the diagnostic on `op` and fails otherwise.
FailureOr<GpuGradConfig> planSdpaGrad(SdpaGradOp op,
                                      const ConvertAttnToGpuOptions &options);

/// The pattern lowering attn.sdpa_grad (GpuSdpaGrad.cpp).
void populateSdpaGradToGpuPatterns(RewritePatternSet &patterns,
                                   const ConvertAttnToGpuOptions &options);

} // namespace mlir::attn::gpu_kernels

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_GPUKERNELS_H
