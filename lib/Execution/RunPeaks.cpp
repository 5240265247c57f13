//===- RunPeaks.cpp - the peaks measured beside a run ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "RunPeaks.h"

#include "attn/Spec/Error.h"
#include "attn/Codegen/CPU/CpuFeatures.h"

#include <algorithm>
#include <chrono>
#include <optional>

using namespace mlir;
using namespace mlir::attn::exec;

llvm::Error mlir::attn::exec::detail::measureRunPeaks(MLIRContext &context,
                                                      RunReport &report) {
  llvm::Expected<double> peak = measureFmaPeakGflops(context, 1.0);
  if (!peak)
    return makeError("peak probe: " + toString(peak.takeError()));
  report.peakGflops = *peak;
  if (report.usedThreads > 1) {
    llvm::Expected<double> all =
        measureFmaPeakAllThreadsGflops(context, report.usedThreads, 1.0);
    if (!all)
      return makeError("all-threads peak probe: " + toString(all.takeError()));
    report.peakAllThreadsGflops = *all;
  }
  if (!hostHasBf16Dot())
    return llvm::Error::success();
  llvm::Expected<double> bf16 = measureBf16DotPeakGflops(context, 1.0);
  if (!bf16)
    return makeError("bf16 peak probe: " + toString(bf16.takeError()));
  report.bf16PeakGflops = *bf16;
  if (!attn::hostGrantsAmx())
    return llvm::Error::success();
  llvm::Expected<double> amx = measureAmxPeakGflops(context, 1.0);
  if (!amx)
    return makeError("AMX peak probe: " + toString(amx.takeError()));
  report.amxPeakGflops = *amx;
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<PeakProbe>>
mlir::attn::exec::detail::createProbeBeside(
    MLIRContext &context, llvm::function_ref<llvm::Error()> runOnce,
    double *burstSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  if (llvm::Error e = runOnce())
    return std::move(e);
  double call =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  double seconds = std::clamp(call, 0.02, 0.05);
  if (burstSeconds)
    *burstSeconds = seconds;
  return PeakProbe::create(context, seconds);
}

/// The median of the calls' shares of a rate measured around each call:
/// call i at `callRates[i]` against the mean of probes i and i + 1 (times
/// `threads`); nothing when a call ran below the clock's resolution or the
/// sizes do not fit.
static std::optional<double>
medianPairedShare(const RunReport &report, double workPerMs,
                  const std::vector<double> &probes, int threads) {
  std::vector<double> callRates;
  for (double ms : report.fused->runMs) {
    // A call below the clock's resolution has no rate to pair.
    if (!(ms > 0))
      return std::nullopt;
    callRates.push_back(workPerMs / ms);
  }
  std::vector<double> shares = pairedPeakShares(callRates, probes, threads);
  if (shares.empty())
    return std::nullopt;
  std::sort(shares.begin(), shares.end());
  size_t n = shares.size();
  return n % 2 ? shares[n / 2] : 0.5 * (shares[n / 2 - 1] + shares[n / 2]);
}

/// The calls' median paired share of the peak a probe's `bursts` measured
/// around them, and the bursts' range (untouched without a share).
static void setBurstShare(RunReport &report, const std::vector<double> &bursts,
                          std::optional<double> &share, double &minGflops,
                          double &maxGflops) {
  share =
      medianPairedShare(report, report.flops / 1e6, bursts, report.usedThreads);
  if (!share)
    return;
  minGflops = *std::min_element(bursts.begin(), bursts.end());
  maxGflops = *std::max_element(bursts.begin(), bursts.end());
}

void mlir::attn::exec::detail::setPairedPeakShare(
    RunReport &report, const std::vector<double> &bursts) {
  setBurstShare(report, bursts, report.pairedPeakShare, report.burstMinGflops,
                report.burstMaxGflops);
}

void mlir::attn::exec::detail::setPairedBf16PeakShare(
    RunReport &report, const std::vector<double> &bursts) {
  setBurstShare(report, bursts, report.pairedBf16PeakShare,
                report.bf16BurstMinGflops, report.bf16BurstMaxGflops);
}

void mlir::attn::exec::detail::setPairedRooflineShare(
    RunReport &report, const std::vector<double> &passes) {
  // The read probe runs on the run's threads already: one pass is all of
  // them.
  report.pairedRooflineShare =
      medianPairedShare(report, report.kvBytes / 1e6, passes, /*threads=*/1);
  if (!report.pairedRooflineShare)
    return;
  report.readPassMinGBs = *std::min_element(passes.begin(), passes.end());
  report.readPassMaxGBs = *std::max_element(passes.begin(), passes.end());
}
