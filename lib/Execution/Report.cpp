//===- Report.cpp - attn-run's text and JSON reports ----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Report.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir::attn::exec;
using llvm::format;

static std::string threadsText(int threads) {
  return threads ? std::to_string(threads) : std::string("all");
}

static void printPeakOnly(llvm::raw_ostream &os, const RunReport &report) {
  os << format("f32 FMA peak of one core: %.2f GFLOP/s (16 chains of "
               "vector<16xf32> FMAs)\n",
               *report.peakGflops);
  if (report.peakAllThreadsGflops)
    os << format("f32 FMA peak of %d cores at once: %.2f GFLOP/s (%.2fx one "
                 "core's)\n",
                 report.usedThreads, *report.peakAllThreadsGflops,
                 *report.peakAllThreadsGflops / *report.peakGflops);
  if (report.bf16PeakGflops)
    os << format("bf16 dot-product peak of one core: %.2f GFLOP/s (16 chains "
                 "of vdpbf16ps on vector<32xbf16>)\n",
                 *report.bf16PeakGflops);
  if (report.amxPeakGflops)
    os << format("bf16 AMX tile peak of one core: %.2f GFLOP/s (tdpbf16ps "
                 "into 4 C tiles)\n",
                 *report.amxPeakGflops);
}

/// Whether the run's inputs are bf16 (its rate is then also a share of the
/// bf16 dot-product peak).
static void printCheck(llvm::raw_ostream &os, const CheckRecord &c) {
  const char *verdict = c.verdict.pass ? "PASS" : "FAIL";
  if (c.isNaNCheck()) {
    os << format("  %-4s %-12s %s  %s\n", c.result.c_str(), c.oracle.c_str(),
                 verdict, c.verdict.rule.c_str());
    return;
  }
  os << format("  %-4s %-12s max_abs %-10.3e rel_l2 %-10.3e %s  (%s)",
               c.result.c_str(), c.oracle.c_str(), c.stats.maxAbs,
               c.stats.relL2, verdict, c.verdict.rule.c_str());
  os << "\n";
}

static void printTimings(llvm::raw_ostream &os, const RunReport &report) {
  const Timing &fused = *report.fused;
  if (report.grad)
    os << "  backward only; FLOPs = 2.5 x the forward's (FlashAttention's "
          "convention)\n";
  os << format("  fused  %10.3f ms", fused.medianMs);
  if (report.flops) {
    os << format("  %8.2f GFLOP/s", report.gflops(fused));
    if (report.peakGflops)
      os << format("  %5.1f%% of peak (%d x one core's)",
                   100 * report.gflops(fused) /
                       (*report.peakGflops * report.usedThreads),
                   report.usedThreads);
    if (report.peakAllThreadsGflops)
      os << format("  %5.1f%% of the %d-thread peak",
                   100 * report.gflops(fused) / *report.peakAllThreadsGflops,
                   report.usedThreads);
    if (report.bf16PeakGflops && report.hasBf16Inputs())
      os << format("  %5.1f%% of bf16 peak",
                   100 * report.gflops(fused) /
                       (*report.bf16PeakGflops * report.usedThreads));
    if (report.amxPeakGflops && report.hasBf16Inputs())
      os << format("  %5.1f%% of AMX peak",
                   100 * report.gflops(fused) /
                       (*report.amxPeakGflops * report.usedThreads));
  }
  if (report.target == "cuda")
    os << "  (median of " << fused.runs << ", " << report.chip
       << ", CUDA events around each run)\n";
  else
    os << "  (median of " << fused.runs << ", threads "
       << threadsText(report.threads) << ")\n";
  if (report.pairedPeakShare)
    os << format("  paired %9.1f%% of peak: the median of the %d calls, "
                 "each against the f32 FMA probe run just before and after "
                 "it (%.2f-%.2f GFLOP/s); best call %.3f ms, %.2f GFLOP/s\n",
                 100 * *report.pairedPeakShare, fused.runs,
                 report.burstMinGflops, report.burstMaxGflops, fused.bestMs,
                 report.flops / (fused.bestMs * 1e6));
  if (report.pairedBf16PeakShare)
    os << format("  paired %9.1f%% of the bf16 peak: the median of the %d "
                 "calls, each against the bf16 dot-product probe run just "
                 "before and after it (%.2f-%.2f GFLOP/s)\n",
                 100 * *report.pairedBf16PeakShare, fused.runs,
                 report.bf16BurstMinGflops, report.bf16BurstMaxGflops);
  if (report.naive) {
    os << format("  naive  %10.3f ms", report.naive->medianMs);
    if (report.flops)
      os << format("  %8.2f GFLOP/s", report.gflops(*report.naive));
    os << format("  fused speed-up %.2fx\n",
                 report.naive->medianMs / fused.medianMs);
  }
  if (report.peakGflops)
    os << format("  peak   %10.2f GFLOP/s  (one core, f32 FMA, measured in "
                 "this run)\n",
                 *report.peakGflops);
  if (report.peakAllThreadsGflops)
    os << format("  peak   %10.2f GFLOP/s  (%d cores at once, f32 FMA, "
                 "measured in this run: %.2fx one core's)\n",
                 *report.peakAllThreadsGflops, report.usedThreads,
                 *report.peakAllThreadsGflops / *report.peakGflops);
  if (report.bf16PeakGflops)
    os << format("  peak   %10.2f GFLOP/s  (one core, bf16 dot products, "
                 "measured in this run)\n",
                 *report.bf16PeakGflops);
  if (report.amxPeakGflops)
    os << format("  peak   %10.2f GFLOP/s  (one core, bf16 on AMX tiles, "
                 "measured in this run)\n",
                 *report.amxPeakGflops);
  // The memory roofline matters where reading K and V takes longer than the
  // FLOPs at peak would (a decode step); elsewhere it is not shown.
  if (std::optional<double> share = report.kvRooflineShare())
    os << format("  memory %10.2f GB/s read (%s threads); reading K and V "
                 "once takes %.3f ms: fused at %.1f%% of that roofline\n",
                 *report.readGBs, threadsText(report.threads).c_str(),
                 report.kvBytes / (*report.readGBs * 1e6), 100 * *share);
  if (report.pairedRooflineShare)
    os << format("  paired %9.1f%% of the roofline: the median of the %d "
                 "calls, each against the read probe run just before and "
                 "after it (%.2f-%.2f GB/s)\n",
                 100 * *report.pairedRooflineShare, report.fused->runs,
                 report.readPassMinGBs, report.readPassMaxGBs);
  if (report.hugePageCopyBytes) {
    os << format("  pages  the timed calls on %.1f MB of copies on 2 MiB "
                 "pages (--huge-pages; THP %s): ",
                 *report.hugePageCopyBytes / 1e6,
                 report.thpMode.empty() ? "unknown" : report.thpMode.c_str());
    if (report.anonHugePageBytes >= 0)
      os << format("%.1f MB of AnonHugePages in this process\n",
                   report.anonHugePageBytes / 1e6);
    else
      os << "AnonHugePages unknown\n";
  }
}

void mlir::attn::exec::printReport(llvm::raw_ostream &os,
                                   const RunReport &report) {
  if (report.peakOnly) {
    printPeakOnly(os, report);
    return;
  }
  os << "attn-run: @" << report.entry;
  if (!report.specText.empty())
    os << " [" << report.specText << "]";
  os << "\n  inputs:";
  for (const TensorSpec &t : report.inputs)
    os << " " << dtypeName(t.dtype) << "["
       << llvm::join(llvm::map_range(
                         t.shape, [](int64_t d) { return std::to_string(d); }),
                     "x")
       << "]";
  os << "  ("
     << (report.inputsDir.empty() ? "seed " + std::to_string(report.seed)
                                  : "from " + report.inputsDir)
     << ")\n";
  if (report.emulatedAmx)
    os << "  amx tiles emulated (emulate-amx): its timings are not AMX's\n";
  for (const std::string *note :
       {&report.naiveSkipped, &report.refSkipped, &report.refNote})
    if (!note->empty())
      os << "  " << *note << "\n";
  for (const CheckRecord &c : report.checks)
    printCheck(os, c);
  if (report.checks.empty())
    os << "  no numerics check ran\n";
  if (report.fused)
    printTimings(os, report);
  os << (report.pass ? "PASS" : "FAIL") << "\n";
}

/// A JSON number, or null for NaN and the infinities (JSON has neither).
static llvm::json::Value number(double x) {
  if (!std::isfinite(x))
    return nullptr;
  return x;
}

llvm::json::Value mlir::attn::exec::reportToJson(const RunReport &report) {
  using llvm::json::Array;
  using llvm::json::Object;
  if (report.peakOnly) {
    Object peaks{{"peak_gflops", number(*report.peakGflops)}};
    if (report.peakAllThreadsGflops)
      peaks["peak_all_threads_gflops"] = number(*report.peakAllThreadsGflops);
    if (report.bf16PeakGflops)
      peaks["bf16_peak_gflops"] = number(*report.bf16PeakGflops);
    if (report.amxPeakGflops)
      peaks["amx_peak_gflops"] = number(*report.amxPeakGflops);
    return peaks;
  }
  Object root{
      {"entry", report.entry},
      {"seed", static_cast<int64_t>(report.seed)},
      {"threads", report.threads},
      {"block_q", report.blockQ},
      {"block_kv", report.blockKV},
      {"narrow_block_q", report.narrowBlockQ},
      {"wide_block_kv", report.wideBlockKV},
      {"decode_rows", report.decodeRows},
      {"omp_schedule", report.ompSchedule},
      {"naive_skipped", report.naiveSkipped},
      {"f64_skipped", report.refSkipped},
      {"f64_row_stride", report.refRowStride},
      {"pass", report.pass},
  };
  if (report.emulatedAmx)
    root["emulated_amx"] = true;
  root["target"] = report.target;
  if (!report.chip.empty())
    root["chip"] = report.chip;
  if (!report.specText.empty())
    root["spec"] = report.specText;
  if (report.flops)
    root["flops"] = report.flops;
  if (report.grad)
    root["grad"] = true;
  Array checks;
  for (const CheckRecord &c : report.checks) {
    Object check{{"result", c.result},
                 {"oracle", c.oracle},
                 {"max_abs", number(c.stats.maxAbs)},
                 {"rel_l2", number(c.stats.relL2)},
                 {"ref_max_abs", number(c.stats.refMaxAbs)},
                 {"has_nan", c.stats.hasNaN},
                 {"rule", c.verdict.rule},
                 {"pass", c.verdict.pass}};
    if (c.sensRel) {
      check["sens_rel"] = number(*c.sensRel);
      check["sens_abs"] = number(*c.sensAbs);
    }
    if (c.sensOutRel)
      check["sens_out"] = number(*c.sensOutRel);
    checks.push_back(std::move(check));
  }
  root["checks"] = std::move(checks);
  if (const std::optional<Timing> &fused = report.fused) {
    root["fused_ms"] = number(fused->medianMs);
    if (report.flops)
      root["fused_gflops"] = number(report.gflops(*fused));
    root["bench_runs"] = fused->runs;
    root["fused_best_ms"] = number(fused->bestMs);
  }
  if (report.pairedPeakShare) {
    root["fused_pct_peak_paired"] = number(100 * *report.pairedPeakShare);
    root["probe_burst_gflops_min"] = number(report.burstMinGflops);
    if (report.pairedBf16PeakShare) {
      root["fused_pct_bf16_peak_paired"] =
          number(100 * *report.pairedBf16PeakShare);
      root["bf16_burst_gflops_min"] = number(report.bf16BurstMinGflops);
      root["bf16_burst_gflops_max"] = number(report.bf16BurstMaxGflops);
    }
    root["probe_burst_gflops_max"] = number(report.burstMaxGflops);
  }
  if (report.readGBs) {
    root["read_gbs"] = number(*report.readGBs);
    if (report.kvBytes && report.fused)
      root["fused_pct_kv_roofline"] =
          number(100 * report.kvBytes / (*report.readGBs * 1e6) /
                 report.fused->medianMs);
  }
  if (report.hugePageCopyBytes) {
    root["huge_page_copy_bytes"] = *report.hugePageCopyBytes;
    root["anon_huge_page_bytes"] = report.anonHugePageBytes;
    root["thp"] = report.thpMode;
  }
  if (report.pairedRooflineShare) {
    root["fused_pct_kv_roofline_paired"] =
        number(100 * *report.pairedRooflineShare);
    root["read_pass_gbs_min"] = number(report.readPassMinGBs);
    root["read_pass_gbs_max"] = number(report.readPassMaxGBs);
  }
  if (report.peakGflops) {
    root["peak_gflops"] = number(*report.peakGflops);
    if (report.fused && report.flops)
      root["fused_pct_peak"] =
          number(100 * report.gflops(*report.fused) /
                 (*report.peakGflops * report.usedThreads));
  }
  if (report.peakAllThreadsGflops) {
    root["peak_all_threads_gflops"] = number(*report.peakAllThreadsGflops);
    if (report.fused && report.flops)
      root["fused_pct_peak_all_threads"] = number(
          100 * report.gflops(*report.fused) / *report.peakAllThreadsGflops);
  }
  if (report.bf16PeakGflops) {
    root["bf16_peak_gflops"] = number(*report.bf16PeakGflops);
    if (report.fused && report.flops && report.hasBf16Inputs())
      root["fused_pct_bf16_peak"] =
          number(100 * report.gflops(*report.fused) /
                 (*report.bf16PeakGflops * report.usedThreads));
  }
  if (report.amxPeakGflops) {
    root["amx_peak_gflops"] = number(*report.amxPeakGflops);
    if (report.fused && report.flops && report.hasBf16Inputs())
      root["fused_pct_amx_peak"] =
          number(100 * report.gflops(*report.fused) /
                 (*report.amxPeakGflops * report.usedThreads));
  }
  if (report.naive) {
    root["naive_ms"] = number(report.naive->medianMs);
    if (report.flops)
      root["naive_gflops"] = number(report.gflops(*report.naive));
    root["speedup"] = number(report.naive->medianMs / report.fused->medianMs);
  }
  return root;
}
