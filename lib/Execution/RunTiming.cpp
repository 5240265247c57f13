//===- RunTiming.cpp - the timing step of runAttn() -----------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "RunTiming.h"

#include "RunPeaks.h"

#include "attn/Execution/HugePages.h"
#include "attn/Execution/Peak.h"

using namespace mlir;
using namespace mlir::attn::exec;
using namespace mlir::attn::exec::detail;

llvm::Error mlir::attn::exec::detail::timeKernels(
    MLIRContext &context, const RunOptions &options, Kernel &fused,
    Kernel *naive, std::vector<HostTensor> &inputs, Results &fusedOut,
    Results &naiveOut, RunReport &report) {
  std::unique_ptr<ReadProbe> reads;
  if (options.peak) {
    if (llvm::Error e = measureRunPeaks(context, report))
      return e;
    reads = std::make_unique<ReadProbe>(options.threads, size_t(1) << 30,
                                        options.hugePages);
    report.readGBs = reads->measureBest();
    // Only a run bound by its reads, on one thread, pairs them with its
    // calls. With more, the kernel's other OpenMP threads spin for 200 ms
    // after each call on the cores the passes need: on a Zen 4, 2-thread
    // passes read at 13-22 GB/s between calls against 29 at best, and
    // the calls came out at 181% of that roofline. Letting them sleep at
    // once (libomp's blocktime 0) would make every call wake them, which
    // a decode loop that runs step after step does not do (hq=8 hkv=1
    // Lk=32k f32, 2 threads, paired so: 3.40 ms, against 1.73 in a
    // figures run without it; not kept).
    if (!report.kvReadBound() || report.usedThreads > 1)
      reads.reset();
  }
  std::vector<HostTensor *> ins = pointersTo(inputs);
  std::vector<HostTensor *> fusedPtrs = pointersTo(fusedOut);
  if (options.hugePages)
    report.thpMode = transparentHugePagesMode();
  std::vector<HugePageBuffer> fusedCopies;
  std::vector<HostTensor *> fusedAll = ins;
  fusedAll.insert(fusedAll.end(), fusedPtrs.begin(), fusedPtrs.end());
  int64_t copied = 0;
  llvm::Expected<std::vector<void *>> fusedData =
      options.hugePages ? copyOntoHugePages(fusedAll, fusedCopies, copied)
                        : std::vector<void *>();
  if (!fusedData)
    return fusedData.takeError();
  if (options.hugePages) {
    report.hugePageCopyBytes = copied;
    report.anonHugePageBytes = anonHugePagesBytes();
  }
  std::vector<double> bursts, bf16Bursts;
  std::unique_ptr<PeakProbe> probe, bf16Probe;
  if (options.peak && report.flops) {
    double burstSeconds = 0;
    llvm::Expected<std::unique_ptr<PeakProbe>> created = createProbeBeside(
        context, [&] { return fused.run(ins, fusedPtrs); }, &burstSeconds);
    if (!created)
      return created.takeError();
    probe = std::move(*created);
    if (report.bf16PeakGflops && report.hasBf16Inputs()) {
      created = PeakProbe::create(context, burstSeconds, /*bf16Dot=*/true);
      if (!created)
        return created.takeError();
      bf16Probe = std::move(*created);
    }
  }
  // Between the calls: a burst of the FMA probe (and of the bf16 one),
  // then a pass of the read probe (which leaves K and V out of the caches, as
  // the roofline assumes).
  std::vector<double> passes;
  auto between = [&]() -> llvm::Error {
    llvm::Expected<double> gflops = probe->burst();
    if (!gflops)
      return gflops.takeError();
    bursts.push_back(*gflops);
    if (bf16Probe) {
      gflops = bf16Probe->burst();
      if (!gflops)
        return gflops.takeError();
      bf16Bursts.push_back(*gflops);
    }
    if (reads)
      passes.push_back(reads->pass());
    return llvm::Error::success();
  };
  llvm::Expected<Timing> fusedTime =
      probe
          ? fused.time(ins, fusedPtrs, options.benchRuns, between, *fusedData)
          : fused.time(ins, fusedPtrs, options.benchRuns, nullptr, *fusedData);
  if (!fusedTime)
    return fusedTime.takeError();
  report.fused = *fusedTime;
  if (probe)
    setPairedPeakShare(report, bursts);
  if (bf16Probe)
    setPairedBf16PeakShare(report, bf16Bursts);
  if (probe && reads)
    setPairedRooflineShare(report, passes);
  if (naive) {
    std::vector<HostTensor *> naivePtrs = pointersTo(naiveOut);
    // The naive lowering's own copies, the fused ones' released first.
    fusedCopies.clear();
    std::vector<HugePageBuffer> naiveCopies;
    std::vector<HostTensor *> naiveAll = ins;
    naiveAll.insert(naiveAll.end(), naivePtrs.begin(), naivePtrs.end());
    llvm::Expected<std::vector<void *>> naiveData =
        options.hugePages ? copyOntoHugePages(naiveAll, naiveCopies, copied)
                          : std::vector<void *>();
    if (!naiveData)
      return naiveData.takeError();
    llvm::Expected<Timing> naiveTime =
        naive->time(ins, naivePtrs, options.benchRuns, nullptr, *naiveData);
    if (!naiveTime)
      return naiveTime.takeError();
    report.naive = *naiveTime;
  }
  return llvm::Error::success();
}
