//===- Peak.h - the machine's f32 FMA peak, measured ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_PEAK_H
#define ATTN_EXECUTION_PEAK_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>

namespace mlir {
class MLIRContext;
namespace attn::exec {

/// One core's f32 FMA rate in GFLOP/s: a JIT-compiled loop of 16 independent
/// vector<16xf32> FMA chains (enough to cover the FMA latency on two ports),
/// timed for about `seconds`.
llvm::Expected<double> measureFmaPeakGflops(MLIRContext &context,
                                            double seconds);

/// One core's bf16 dot-product rate in GFLOP/s (each of the 32 bf16
/// products of a vdpbf16ps and its add count as 2 FLOP): the same loop on
/// x86vector.avx512.dot. Only for a CPU with avx512_bf16 (hostHasBf16Dot).
llvm::Expected<double> measureBf16DotPeakGflops(MLIRContext &context,
                                                double seconds);

/// Whether this machine's CPU has AVX512-BF16's vdpbf16ps.
bool hostHasBf16Dot();

/// Memory read bandwidth in GB/s: `threads` threads (0 = all cores) each
/// sum their share of a buffer of `bytes` (far larger than the caches), in
/// one sequential stream and in 2, 4 and 8 streams side by side, with and
/// without software prefetching; the best of three passes of each.
double measureReadBandwidthGBs(int threads, size_t bytes);

/// The read of measureReadBandwidthGBs: words [begin, end) of `buffer` as
/// `streams` (1 to 8) equal parts read side by side a cache line at a time,
/// each line's `prefetchBytes` ahead prefetched (0: none), what the parts
/// leave over one word at a time; the sum of the words, each read once.
uint64_t sumForReadProbe(const uint64_t *buffer, size_t begin, size_t end,
                         int streams, size_t prefetchBytes);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_PEAK_H
