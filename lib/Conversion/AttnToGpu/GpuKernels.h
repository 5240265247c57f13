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

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>

namespace mlir::attn::gpu_kernels {

/// log2(e) and ln(2): scores run in base 2 inside the kernels.
inline constexpr double kLog2E = 1.4426950408889634;
inline constexpr double kLn2 = 0.6931471805599453;

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
  std::optional<CausalKind> causal;
  bool boolMask = false;
};

/// The tensor-core kernel's tile sizes, chosen by the pass.
struct FlashConfig {
  int64_t blockQ = 64;  // query rows per CTA (16 per warp)
  int64_t blockKV = 64; // keys per shared-memory tile
  /// Rows padded by 16 bytes (else, where the row is 4, 8 or 16 chunks of
  /// 16 bytes, stored densely with swizzled chunks): see sharedRowLength.
  bool padRows = true;
  int64_t warps() const { return blockQ / 16; }
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

/// Bytes of workgroup memory the tensor-core kernel uses for `config`: two K
/// and two V tiles, and the Q block where the V tiles cannot hold it.
int64_t flashSharedBytes(const GpuSdpa &sdpa, const FlashConfig &config);

/// The index of the last key that query row `row` may see under the causal
/// rule (row, or row + Lk - Lq bottom-right), as a signed index.
Value causalLastKey(OpBuilder &b, const GpuSdpa &sdpa, Value row);

/// Reads the mask at (batch, head, row, key), clamping broadcast dims
/// (size 1, statically or at run time) to 0. `row` and `key` must be in
/// range. Returns the i1 value, or the additive value as f32 in base-2 units
/// (times log2(e)).
Value readMask(OpBuilder &b, const GpuSdpa &sdpa, Value batch, Value head,
               Value row, Value key);

/// Applies the online-softmax update to one row: returns (m_new, alpha) for
/// the old max `m` and the block max `blockMax`, alpha = 0 while the row has
/// seen nothing (m = -inf) so that -inf - -inf never makes a NaN.
std::pair<Value, Value> updateRowMax(OpBuilder &b, Location loc, Value m,
                                     Value blockMax);

/// exp2(s - m), 0 for a hidden score (s = -inf).
Value probability(OpBuilder &b, Location loc, Value s, Value m);

/// The f32 kernel (one thread per query row) in `launch`'s body.
void buildRowKernelF32(OpBuilder &b, const GpuSdpa &sdpa, gpu::LaunchOp launch,
                       int64_t blockQ);

/// The FlashAttention-2 tensor-core kernel in `launch`'s body (f16/bf16).
void buildFlashKernel(OpBuilder &b, const GpuSdpa &sdpa,
                      const FlashConfig &config, gpu::LaunchOp launch);

} // namespace mlir::attn::gpu_kernels

#endif // ATTN_LIB_CONVERSION_ATTNTOGPU_GPUKERNELS_H
