//===- Peak.h - the machine's f32 FMA peak, measured ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_PEAK_H
#define ATTN_EXECUTION_PEAK_H

#include "llvm/Support/Error.h"

#include <cstddef>

namespace mlir {
class MLIRContext;
namespace attn::exec {

/// One core's f32 FMA rate in GFLOP/s: a JIT-compiled loop of 16 independent
/// vector<16xf32> FMA chains (enough to cover the FMA latency on two ports),
/// timed for about `seconds`.
llvm::Expected<double> measureFmaPeakGflops(MLIRContext &context,
                                            double seconds);

/// Memory read bandwidth in GB/s: `threads` threads (0 = all cores) each
/// sum their share of a buffer of `bytes` (far larger than the caches),
/// best of three passes.
double measureReadBandwidthGBs(int threads, size_t bytes);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_PEAK_H
