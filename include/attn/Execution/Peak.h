//===- Peak.h - the machine's f32 FMA peak, measured ------------*- C++ -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_PEAK_H
#define ATTN_EXECUTION_PEAK_H

#include "attn/Execution/HugePages.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
class MLIRContext;
namespace attn::exec {

/// The peak loop's shape: `chains` independent FMA chains of `lanes` f32.
struct PeakShape {
  int lanes;
  int chains;
};

/// The shape whose chains all stay in registers: 16 chains of 16 lanes on
/// AVX-512 (32 registers), 12 of 8 otherwise (16 registers).
PeakShape peakShapeFor(bool avx512);
/// peakShapeFor this machine's CPU (avx512f or not).
PeakShape hostPeakShape();

/// The peak loop's MLIR text (`@peak(%n, %out)`: %n iterations, the chains'
/// sum stored to %out): vector.fma chains, or x86vector.avx512.dot chains
/// with `bf16Dot` (16 lanes only).
std::string peakKernelText(const PeakShape &shape, bool bf16Dot);

/// The peak loop, JIT-compiled for this machine.
class PeakKernel {
public:
  static llvm::Expected<std::unique_ptr<PeakKernel>>
  compile(MLIRContext &context, const PeakShape &shape, bool bf16Dot);
  /// A kernel of `text` (an `@peak(%n, %out)` as peakKernelText's) doing
  /// `flopPerIteration` FLOP per iteration.
  static llvm::Expected<std::unique_ptr<PeakKernel>>
  compileText(MLIRContext &context, llvm::StringRef text,
              const PeakShape &shape, double flopPerIteration);
  ~PeakKernel();

  /// Runs `iterations` of the loop; returns the seconds it took. The sum of
  /// the chains is then in `out` (the first `shape.lanes` floats).
  llvm::Expected<double> run(int64_t iterations);
  /// The same, storing the sum into `sum` (16 floats): for runs on several
  /// threads at once, each with its own.
  llvm::Expected<double> run(int64_t iterations, float *sum);

  PeakShape shape{};
  double flopPerIteration = 0;
  alignas(64) float out[16] = {};

private:
  PeakKernel() = default;
  std::unique_ptr<ExecutionEngine> engine;
};

/// One core's f32 FMA rate in GFLOP/s: a JIT-compiled loop of independent
/// FMA chains (hostPeakShape: enough to cover the FMA latency on two ports,
/// few enough to stay in registers), timed for about `seconds`.
llvm::Expected<double> measureFmaPeakGflops(MLIRContext &context,
                                            double seconds);

/// The f32 FMA peak loop in short bursts, to run beside each timed call of
/// a kernel: on a shared machine one core's rate moves from second to
/// second, so a call is compared with the bursts just before and after it
/// (pairedPeakShares) rather than with one probe taken earlier.
class PeakProbe {
public:
  /// Compiles the loop (hostPeakShape; with `bf16Dot`, the bf16
  /// dot-product loop of measureBf16DotPeakGflops) and sizes a burst to
  /// about `burstSeconds`.
  static llvm::Expected<std::unique_ptr<PeakProbe>>
  create(MLIRContext &context, double burstSeconds, bool bf16Dot = false);
  ~PeakProbe();
  /// Runs one burst; returns its rate in GFLOP/s.
  llvm::Expected<double> burst();

private:
  PeakProbe() = default;
  std::unique_ptr<PeakKernel> kernel;
  int64_t iterations = 0;
};

/// Each call's share of the peak measured around it: call i ran at
/// `callGflops[i]` on `threads` threads between bursts i and i + 1 of
/// `burstGflops` (one more than the calls); its share is its rate over
/// `threads` x the mean of those two bursts. Empty when the sizes do not fit
/// or a burst is not positive.
std::vector<double> pairedPeakShares(llvm::ArrayRef<double> callGflops,
                                     llvm::ArrayRef<double> burstGflops,
                                     int threads);

/// The f32 FMA rate of `threads` cores at once in GFLOP/s, the sum over
/// them: measureFmaPeakGflops's loop run on `threads` threads side by side
/// (the best of five rounds of about seconds/5). Against threads x one
/// core's rate, what running every core costs in clock (turbo with one
/// core busy is faster than with all) and in anything else the cores share.
llvm::Expected<double> measureFmaPeakAllThreadsGflops(MLIRContext &context,
                                                      int threads,
                                                      double seconds);

/// One core's bf16 dot-product rate in GFLOP/s (each of the 32 bf16
/// products of a vdpbf16ps and its add count as 2 FLOP): the same loop on
/// x86vector.avx512.dot. Only for a CPU with avx512_bf16 (hostHasBf16Dot).
llvm::Expected<double> measureBf16DotPeakGflops(MLIRContext &context,
                                                double seconds);

/// Whether this machine's CPU has AVX512-BF16's vdpbf16ps.
bool hostHasBf16Dot();

/// The AMX peak loop's MLIR text (`@peak(%n, %out)`): per iteration, 4 C
/// tiles (16 x 16 f32) loaded, 8 tdpbf16ps into each from 2 A and 2 B tiles
/// (16 x 32 bf16), stored again; 32 x 16 x 16 x 32 x 2 FLOP.
std::string amxPeakKernelText();

/// One core's bf16 rate on AMX tiles in GFLOP/s (amxPeakKernelText's loop,
/// the best of five runs of about seconds/5). Only where hostGrantsAmx().
llvm::Expected<double> measureAmxPeakGflops(MLIRContext &context,
                                            double seconds);

/// The memory read probe: `threads` threads (0 = all cores) each sum their
/// share of a buffer far larger than the caches. measureBest() is the
/// machine's read bandwidth in GB/s: one sequential stream and 2, 4 and 8
/// streams side by side, with and without software prefetching, the best
/// of three passes of each. The probe keeps its buffer and threads to pair
/// single passes with the timed calls of a kernel whose roofline is its
/// reads (a decode step): the machine's bandwidth moves from moment to
/// moment as its FMA rate does (PeakProbe), so a call is compared with the
/// passes just before and after it (pairedPeakShares) rather than with one
/// probe taken earlier.
class ReadProbe {
public:
  /// A buffer of `bytes` (far larger than the caches) read by `threads`
  /// threads (0 = all cores); with `hugePages`, a HugePageBuffer (where one
  /// cannot be mapped, plain memory).
  ReadProbe(int threads, size_t bytes, bool hugePages = false);
  ~ReadProbe();
  ReadProbe(const ReadProbe &) = delete;
  ReadProbe &operator=(const ReadProbe &) = delete;
  /// The read bandwidth: the best of three passes of each way of reading;
  /// pass() reads the best way from then on.
  double measureBest();
  /// One pass over the buffer, the best way measureBest() found (one
  /// sequential stream before it ran); its rate in GB/s.
  double pass();

private:
  /// sumForReadProbe's streams side by side and prefetch distance.
  struct Pattern {
    int streams;
    size_t prefetch;
  };
  double passOf(Pattern pattern);

  int threads;
  size_t words;
  std::unique_ptr<uint64_t[]> owned;
  std::optional<HugePageBuffer> huge;
  uint64_t *buffer = nullptr;
  std::vector<uint64_t> sums;
  Pattern bestPattern{1, 0};
};

/// The read of ReadProbe's passes: words [begin, end) of `buffer` as
/// `streams` (1 to 8) equal parts read side by side a cache line at a time,
/// each line's `prefetchBytes` ahead prefetched (0: none), what the parts
/// leave over one word at a time; the sum of the words, each read once.
uint64_t sumForReadProbe(const uint64_t *buffer, size_t begin, size_t end,
                         int streams, size_t prefetchBytes);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_PEAK_H
