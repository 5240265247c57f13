//===- CpuDecodeKernel.h - the memory-bound decode kernel -------*- C++ -*-===//
//
// Part of the attn project.
//
// A query block of few rows (a decode step: Lq = 1, or Lq times the group
// size with grouped-query attention) gains nothing from the tile ops, whose
// vectors run along the query rows: most lanes would idle. The decode kernel
// runs its vectors along D instead and streams K and V once: per block of W
// keys (W = the vector width) it takes the W x rows dot products (each K row
// loaded once and used by every row of the block, a group of keys at a time,
// summed across lanes by a shuffle tree that leaves the W scores of a row in
// one vector), the online softmax along the keys (one vector per row), and
// P.V with each V row loaded once into rows x Dv/W accumulators (16 or more
// of them kept in a tensor, a buffer once bufferized, rather than in
// vectors). The blocks overlap: the P.V loops of a block also take the dot
// products of the next block (key j with value row j; their partial sums in
// a small tensor, folded after the loops), so that the K and V streams are
// read side by side through the block rather than in turns, and they
// prefetch the V rows of the next block and the K rows of the one after
// (memref.prefetch on read-only to_buffer views of K and V). With
// decode-phased, where K and V are f32, the block has at least 4 rows and
// each key enough Q.K work (CpuDecodeBuilder.h: kPhasedMinWork and the bounds
// beside it), a block runs in two phases instead: its
// dot products by a loop over its keys that prefetches the K rows ahead,
// then its softmax and P.V loops, which prefetch V. bf16/f16 K and
// V are read as they are and widened in registers, or, with bf16 K and V
// where decode-bf16-dot and decode-bf16-value-dot say, taken by the bf16
// dot products as they are (P then rounded to bf16). The loops are built on
// tensors (vector transfer ops) in place of an attn.decode_keys, inside
// attn-tile-online-softmax's scf.forall, so split-K and the writing of
// results are the tiling's own (attn-cpu-decode, CpuDecode.cpp). Private to
// the CPU code generation library.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CODEGEN_CPU_CPUDECODEKERNEL_H
#define ATTN_LIB_CODEGEN_CPU_CPUDECODEKERNEL_H

#include "attn/Dialect/Attn/IR/AttnTileOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

#include <optional>

namespace mlir::attn::detail {

/// Which decode kernels prefetch their K and V rows ahead (decode-prefetch).
enum class DecodePrefetch {
  /// All but the one-group f32 kernels (CpuDecodeBuilder::prefetches).
  Auto,
  All,
  None,
};

/// decode-prefetch's value by its name (auto, all, none); nullopt for
/// another.
inline std::optional<DecodePrefetch> parseDecodePrefetch(StringRef name) {
  return llvm::StringSwitch<std::optional<DecodePrefetch>>(name)
      .Case("auto", DecodePrefetch::Auto)
      .Case("all", DecodePrefetch::All)
      .Case("none", DecodePrefetch::None)
      .Default(std::nullopt);
}

/// How the kernel is built: attn-cpu-decode's options.
struct DecodeOptions {
  /// f32 lanes per vector along D (decode-width; a power of 2 dividing D
  /// and Dv).
  int64_t width = 16;
  /// Q.K on bf16 dot products (decode-bf16-dot).
  bool bf16Dot = false;
  /// P.V on bf16 dot products (decode-bf16-value-dot).
  bool bf16ValueDot = false;
  /// The locality of the prefetches (decode-prefetch-locality: 3 L1, 2 L2,
  /// ...).
  int64_t prefetchLocality = 2;
  /// The loads past the prefetched rows, in bytes (decode-page-touch;
  /// 16-bit K and V only), 0: none.
  int64_t pageTouch = 0;
  /// The blocks in two phases where it pays (decode-phased;
  /// CpuDecodeBuilder.h).
  bool phased = false;
  /// Which kernels prefetch (decode-prefetch).
  DecodePrefetch prefetch = DecodePrefetch::Auto;
};

/// The group of query rows the kernel computes, read off an
/// attn.decode_keys: its rows, head dims, score scale (log2 units),
/// operands and where the group is.
struct DecodeGroup {
  Location loc;
  int64_t rows, d, dv;
  float qScale;
  /// Lq of each query head where the rows span the heads of a key/value
  /// head (row r is head + r / rowsPerHead, query r % rowsPerHead); 0
  /// where they are rows [qStart, qStart + rows) of one head.
  int64_t rowsPerHead = 0;
  Value query, key, value;
  Value batch, head, kvHead, qStart;
  /// K and V read in place from a paged cache (attn.paged_view operands,
  /// attn.sdpa_paged): `key` and `value` are then the caches, [num_pages,
  /// page_size, Hkv, D] (NHD) or [num_pages, Hkv, page_size, D] (HND), and
  /// key t of the group is slot t mod page_size of page pageTable[batch, t
  /// floordiv page_size] (i32 [B, max_pages]), its index clamped into the
  /// cache. Null for dense K and V.
  Value pageTable;
  /// The caches' page slot dim: 1 (NHD) or 2 (HND).
  unsigned pageSlotDim = 1;

  static DecodeGroup of(DecodeKeysOp op);
};

/// The online softmax of the group by the decode kernel over the keys
/// [begin, end), as attn.decode_keys's results: m, l [rows] and acc [Dv,
/// rows], f32.
struct DecodeResult {
  Value m, l, acc;
};
DecodeResult emitDecodeKeys(OpBuilder &b, const DecodeGroup &group,
                            const DecodeOptions &options, Value begin,
                            Value end);

} // namespace mlir::attn::detail

#endif // ATTN_LIB_CODEGEN_CPU_CPUDECODEKERNEL_H
