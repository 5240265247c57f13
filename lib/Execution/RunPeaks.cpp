//===- RunPeaks.cpp - the peaks measured beside a run ---------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "RunPeaks.h"

#include "attn/Execution/Error.h"
#include "attn/Pipelines/CpuFeatures.h"

#include <algorithm>
#include <chrono>

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
    MLIRContext &context, llvm::function_ref<llvm::Error()> runOnce) {
  auto t0 = std::chrono::steady_clock::now();
  if (llvm::Error e = runOnce())
    return std::move(e);
  double call =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return PeakProbe::create(context, std::clamp(call, 0.02, 0.05));
}

void mlir::attn::exec::detail::setPairedPeakShare(
    RunReport &report, const std::vector<double> &bursts) {
  std::vector<double> callGflops;
  for (double ms : report.fused->runMs) {
    // A call below the clock's resolution has no rate to pair.
    if (!(ms > 0))
      return;
    callGflops.push_back(report.flops / (ms * 1e6));
  }
  std::vector<double> shares =
      pairedPeakShares(callGflops, bursts, report.usedThreads);
  if (shares.empty())
    return;
  std::sort(shares.begin(), shares.end());
  size_t n = shares.size();
  report.pairedPeakShare =
      n % 2 ? shares[n / 2] : 0.5 * (shares[n / 2 - 1] + shares[n / 2]);
  report.burstMinGflops = *std::min_element(bursts.begin(), bursts.end());
  report.burstMaxGflops = *std::max_element(bursts.begin(), bursts.end());
}
