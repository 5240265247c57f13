//===- Engine.h - compile, run, check and time one attn entry ---*- C++ -*-===//
//
// Part of the attn project.
//
// The execution engine behind `attn-run` (docs/attn-run.md) and, later, the
// AOT compiler and the Python package: one call, runAttn(), takes a module
// (a file, or an `--sdpa` spec built straight into IR), compiles its entry
// with the fused and the naive pipelines, runs both on seeded random (or
// given) inputs with NaN-poisoned outputs, checks them against each other
// and an f64 reference under the numerics contract (docs/numerics.md),
// optionally times them, and returns everything it measured as a RunReport.
// Reporting (text, JSON) is in Report.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_ENGINE_H
#define ATTN_EXECUTION_ENGINE_H

#include "attn/Execution/Jit.h"
#include "attn/Spec/HostTensor.h"
#include "attn/Spec/Numerics.h"
#include "attn/Spec/Problem.h"
#include "attn/Spec/Reference.h"
#include "attn/Spec/SdpaSpec.h"
#include "attn/Tuning/Tuning.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
namespace attn::exec {

/// Which oracles check the fused lowering.
enum class CheckMode { All, F64, Naive, None };

/// Parses "all", "f64", "naive", "none".
std::optional<CheckMode> parseCheckMode(llvm::StringRef text);

/// Everything runAttn() is asked to do; the defaults are attn-run's.
struct RunOptions {
  /// Exactly one of `inputFile` (a .mlir file, "-" for stdin) and `spec`;
  /// neither with `peak` alone measures the peak and nothing else.
  std::string inputFile;
  std::optional<SdpaSpec> spec;
  /// The function to run; "" takes the first that calls attn.sdpa. With a
  /// spec the function is always @sdpa.
  std::string entry;
  /// Sizes of the dynamic dims of a FILE's one-sdpa entry.
  DimSizes dims;
  /// OpenMP threads (0: all cores).
  int threads = 0;
  uint64_t seed = 0;
  /// Read arg<i>.npy from here instead of generating inputs.
  std::string inputsDir;
  /// Write the inputs and both lowerings' results as .npy here.
  std::string dumpDir;
  CheckMode check = CheckMode::All;
  /// Timed runs after a warm-up (0: no timing).
  int benchRuns = 0;
  /// Measure one core's f32 FMA peak (and, with benchRuns, the read
  /// bandwidth) in this process.
  bool peak = false;
  /// Options of the fused CPU pipeline, in its own syntax ("block-q=16
  /// block-kv=32"); "" keeps every default (attn-lower-cpu's).
  std::string pipelineOptions;
  /// Run on the GPU (attn-run --target cuda): both lowerings are compiled
  /// ahead of time for `chip` and run on device 0 (CudaRun.h).
  bool cuda = false;
  /// cuda: the knobs of the fused GPU lowering that were given (Tuning.td;
  /// attn-lower-gpu's options), checked.
  tuning::KnobValues cudaKnobs;
  /// cuda: the SM to compile for; "" takes device 0's.
  std::string chip;
  /// Above this many GFLOP the f64 reference checks a sample of query rows.
  double refLimitGflop = 8.0;
  /// Skip the naive lowering when its score table needs more GiB than this.
  double naiveLimitGib = 4.0;
  /// Run each lowering twice with every input and output in its own
  /// GuardedBuffer, flush against the guard page after its end, then
  /// against the one before its start (the caller installs the fault
  /// handler). Timing still uses the plain tensors.
  bool guardPages = false;
  /// attn-run --huge-pages (CPU): the timed calls read and write copies of
  /// the inputs and outputs of kHugePagesFromBytes and more in
  /// HugePageBuffers (2 MiB transparent huge pages, as NumPy allocates), and
  /// the read probe's buffer is one too.
  bool hugePages = false;
  /// attn-run --grad: forward, then attn.sdpa_grad on a random d_out; the
  /// gradients are checked and (with benchRuns) the backward is timed
  /// (lib/Execution/Grad.cpp).
  bool grad = false;
};

/// One numerics check: a result against an oracle, or the no-NaN rule.
struct CheckRecord {
  /// "out", "lse" or "result<N>".
  std::string result;
  /// "f64", "f64 (naive)", "naive", "no-NaN" or "no-NaN naive".
  std::string oracle;
  ErrorStats stats;
  Verdict verdict;
  /// The input's conditioning (docs/numerics.md), where the f32 rule used
  /// it.
  std::optional<double> sensRel, sensAbs;
  /// An f16/bf16 gradient's `sens_out` (docs/numerics.md), where measured.
  std::optional<double> sensOutRel;
  bool isNaNCheck() const { return oracle.rfind("no-NaN", 0) == 0; }
};

/// What runAttn() did and measured.
struct RunReport {
  /// Only the peak was measured (no entry ran).
  bool peakOnly = false;
  std::string entry;
  /// The spec's canonical spelling when the entry came from one.
  std::string specText;
  uint64_t seed = 0;
  /// --threads as given (0: all), and the threads that were used.
  int threads = 0, usedThreads = 1;
  /// The pipeline's block-q, block-kv and narrow-block-q (the rows per
  /// block of ops with D, Dv <= 64 and no band; 0: block-q).
  int64_t blockQ = 0, blockKV = 0, narrowBlockQ = 0;
  /// The pipeline's wide-block-kv (the keys per block of bf16 ops with D or
  /// Dv above 64 that take narrow-block-q; 0: block-kv).
  int64_t wideBlockKV = 0;
  /// The amx kernels with their tiles emulated (emulate-amx): correct, but
  /// their timings are not AMX's.
  bool emulatedAmx = false;
  /// The pipeline's decode-rows (blocks of at most this many rows take the
  /// decode kernel where the op allows it; 0: never).
  int64_t decodeRows = 0;
  /// The pipeline's omp-schedule (the query-block loops' OpenMP schedule).
  std::string ompSchedule;
  /// "cpu" or "cuda", and the SM the cuda run compiled for.
  std::string target = "cpu", chip;
  std::vector<TensorSpec> inputs;
  std::string inputsDir;
  /// 0 unless the entry is one sdpa (docs/op.md's FLOP count).
  int64_t flops = 0;
  /// Why an oracle did not run, and how the f64 reference was sampled.
  std::string naiveSkipped, refSkipped, refNote;
  int64_t refRowStride = 1;
  std::vector<CheckRecord> checks;
  std::optional<Timing> fused, naive;
  std::optional<double> peakGflops, readGBs;
  /// With more than one thread: the f32 FMA rate of usedThreads cores
  /// running at once (measureFmaPeakAllThreadsGflops), the fair ceiling of
  /// a multi-threaded run where one core alone clocks higher.
  std::optional<double> peakAllThreadsGflops;
  /// One core's bf16 dot-product peak (with the f32 one, on CPUs that have
  /// avx512_bf16): bf16 runs are also a share of this.
  std::optional<double> bf16PeakGflops;
  /// One core's bf16 rate on AMX tiles (where the CPU and OS run them):
  /// bf16 runs are also a share of this.
  std::optional<double> amxPeakGflops;
  /// With --peak on the CPU: the fused calls' median share of the f32 FMA
  /// peak, each call against the probe bursts run just before and after it
  /// (PeakProbe, pairedPeakShares), and the bursts' lowest and highest
  /// rates. Steadier than one probe taken before the calls when the
  /// machine's speed drifts.
  std::optional<double> pairedPeakShare;
  double burstMinGflops = 0, burstMaxGflops = 0;
  /// The same against bursts of the bf16 dot-product probe, for bf16
  /// inputs where bf16PeakGflops was measured (one more burst between
  /// calls).
  std::optional<double> pairedBf16PeakShare;
  double bf16BurstMinGflops = 0, bf16BurstMaxGflops = 0;
  /// Bytes of K and V: a decode step's memory roofline reads them once.
  double kvBytes = 0;
  /// With --peak on a run bound by reading K and V (kvReadBound): the fused
  /// calls' median share of that roofline, each call against the passes of
  /// the read probe run just before and after it (ReadProbe), and the
  /// passes' lowest and highest rates.
  std::optional<double> pairedRooflineShare;
  double readPassMinGBs = 0, readPassMaxGBs = 0;
  /// With --huge-pages: the bytes the timed calls' copies hold, the
  /// process's AnonHugePages while they are mapped (-1: unknown) and the
  /// kernel's THP setting (transparentHugePagesMode).
  std::optional<int64_t> hugePageCopyBytes;
  int64_t anonHugePageBytes = -1;
  std::string thpMode;
  /// The run was --grad: results are d_query, d_key, d_value and `flops` is
  /// the backward's (2.5x the forward's).
  bool grad = false;
  bool pass = false;

  /// GFLOP/s of a timing (0 without a FLOP count).
  double gflops(const Timing &t) const;
  /// Whether reading K and V once at the measured bandwidth takes longer
  /// than the FLOPs at the measured peak (a decode step; with bf16 inputs,
  /// the bf16 dot-product peak where it was measured and is the higher):
  /// false without both measured.
  bool kvReadBound() const;
  /// Whether an input is bf16 (such runs are also a share of the bf16
  /// peaks).
  bool hasBf16Inputs() const;
  /// The fused time as a share of the "read K and V once" roofline, when
  /// the run was memory-bound (kvReadBound).
  std::optional<double> kvRooflineShare() const;
};

/// A context that runAttn() can use: the attn dialects, every upstream
/// dialect the pipelines need, and the LLVM IR translations, all loaded.
std::unique_ptr<MLIRContext> createEngineContext();

/// Compiles, runs, checks and (with benchRuns) times the entry. Bad input
/// (a file that does not parse, a bad spec or option, an entry it cannot
/// size, an unreadable .npy, a lowering that fails) is an error; a failed
/// numerics check is not: it is a report with pass == false.
llvm::Expected<RunReport> runAttn(MLIRContext &context,
                                  const RunOptions &options);

} // namespace attn::exec
} // namespace mlir

#endif // ATTN_EXECUTION_ENGINE_H
