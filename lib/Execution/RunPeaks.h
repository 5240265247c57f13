//===- RunPeaks.h - the peaks measured beside a run (private) ---*- C++ -*-===//
//
// Part of the attn project.
//
// The peak step of runAttn() (Engine.cpp), with --peak: the machine's peaks
// measured in the run (one core's f32 FMA rate, the cores' at once, the
// bf16 dot-product and AMX rates where the CPU has them) and the probes
// paired with the timed calls. Private to lib/Execution.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_RUNPEAKS_H
#define ATTN_LIB_EXECUTION_RUNPEAKS_H

#include "attn/Execution/Engine.h"
#include "attn/Execution/Peak.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace mlir::attn::exec::detail {

/// Sets the report's peaks: one core's f32 FMA rate, with more than one
/// thread that many cores' at once, and the bf16 dot-product and AMX tile
/// rates where the CPU has them.
llvm::Error measureRunPeaks(MLIRContext &context, RunReport &report);

/// The f32 FMA probe to pair with the timed calls of a kernel: each burst
/// about as long as one call (`runOnce` runs one, timed here), within 20 to
/// 50 ms (shorter bursts ran slower: 113-140 GFLOP/s for 5 ms, 159-167 for
/// 50 ms, as the core came up to speed).
/// `burstSeconds`, when given, receives the bursts' length.
llvm::Expected<std::unique_ptr<PeakProbe>>
createProbeBeside(MLIRContext &context,
                  llvm::function_ref<llvm::Error()> runOnce,
                  double *burstSeconds = nullptr);

/// The fused calls' median paired share of the peak (pairedPeakShares) and
/// the bursts' range, from the report's fused run times and `bursts` (one
/// more than the calls).
void setPairedPeakShare(RunReport &report, const std::vector<double> &bursts);

/// The same against bursts of the bf16 dot-product probe (a run with bf16
/// inputs on a CPU that has the dot products).
void setPairedBf16PeakShare(RunReport &report,
                            const std::vector<double> &bursts);

/// The fused calls' median paired share of the read-K-and-V-once roofline
/// (each call's K and V bytes per second against the mean of the read
/// probe's `passes` just before and after it, in GB/s; one more than the
/// calls) and the passes' range.
void setPairedRooflineShare(RunReport &report,
                            const std::vector<double> &passes);

} // namespace mlir::attn::exec::detail

#endif // ATTN_LIB_EXECUTION_RUNPEAKS_H
