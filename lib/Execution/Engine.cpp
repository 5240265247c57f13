//===- Engine.cpp - compile, run, check and time one attn entry -----------===//
//
// Part of the attn project.
//
// runAttn() in named steps: load the module, size the entry, make the
// inputs, decide which oracles fit, compile, run on poisoned outputs,
// compute the f64 reference and the input's conditioning, judge, time,
// dump. The check step lives in Checks.cpp, the timing step in
// RunTiming.cpp, the peaks measured beside the timing (and the probes
// paired with the timed calls) in RunPeaks.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Engine.h"

#include "Checks.h"
#include "Grad.h"
#include "OperandValues.h"
#include "RunPeaks.h"
#include "RunTiming.h"

#include "attn/Execution/CudaRun.h"
#include "attn/Execution/GuardedBuffer.h"
#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/Npy.h"
#include "attn/Spec/ReferencePaged.h"
#include "attn/Spec/ReferenceVarlen.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;
using namespace mlir::attn::exec::detail;

std::optional<CheckMode> mlir::attn::exec::parseCheckMode(StringRef text) {
  return llvm::StringSwitch<std::optional<CheckMode>>(text)
      .Case("all", CheckMode::All)
      .Case("f64", CheckMode::F64)
      .Case("naive", CheckMode::Naive)
      .Case("none", CheckMode::None)
      .Default(std::nullopt);
}

double RunReport::gflops(const Timing &t) const {
  return flops && t.medianMs > 0 ? flops / (t.medianMs * 1e6) : 0;
}

bool RunReport::hasBf16Inputs() const {
  return llvm::any_of(
      inputs, [](const TensorSpec &t) { return t.dtype == DType::BF16; });
}

bool RunReport::kvReadBound() const {
  if (!readGBs || !kvBytes || !peakGflops || !flops)
    return false;
  // bf16 at the dot products' rate where it was measured: with the f32 one,
  // hq=32 hkv=8 Lk=32k d=128 bf16 on a Zen 4 came out compute-bound (4.67
  // ms of FLOPs) whenever the read probe reached 28.7 GB/s, at twice the
  // FLOPs' time of the dot products.
  double peak = *peakGflops;
  if (bf16PeakGflops && hasBf16Inputs())
    peak = std::max(peak, *bf16PeakGflops);
  double readMs = kvBytes / (*readGBs * 1e6);
  double computeMs = flops / (peak * usedThreads * 1e6);
  return readMs >= computeMs;
}

std::optional<double> RunReport::kvRooflineShare() const {
  if (!fused || !kvReadBound())
    return std::nullopt;
  return kvBytes / (*readGBs * 1e6) / fused->medianMs;
}

std::unique_ptr<MLIRContext> mlir::attn::exec::createEngineContext() {
  DialectRegistry registry;
  registerAttnDialects(registry);
  registerAllToLLVMIRTranslations(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

namespace {

/// The module to run and where its diagnostics point.
struct LoadedModule {
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  OwningOpRef<ModuleOp> module;
  func::FuncOp entry;
  EntrySignature signature;
};

} // namespace

llvm::Error
mlir::attn::exec::detail::parsePipelineOptions(const RunOptions &options,
                                               CpuPipelineOptions &pipeline) {
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(pipeline.parseFromString(options.pipelineOptions, errorStream))) {
    StringRef why = StringRef(parseErrors).trim();
    return makeError("bad pipeline options '" +
                     StringRef(options.pipelineOptions).trim() + "'" +
                     (why.empty() ? StringRef(" (see above)") : ": " + why));
  }
  if (!isOmpScheduleKind(pipeline.ompSchedule))
    return makeError("--omp-schedule must be static, dynamic or guided, got '" +
                     pipeline.ompSchedule + "'");
  return llvm::Error::success();
}

static llvm::Error checkOptions(const RunOptions &options,
                                CpuPipelineOptions &pipeline) {
  if (options.threads < 0 || options.benchRuns < 0)
    return makeError("--bench and --threads must not be negative");
  if (llvm::Error e = exec::detail::parsePipelineOptions(options, pipeline))
    return e;
  // The path the kernels take here (auto resolved by the host's features).
  bool amxPath = resolveCpuKernelsForHost(pipeline.kernels) == CpuKernels::Amx;
  if (pipeline.emulateAmx && !amxPath)
    return makeError("emulate-amx goes with kernels=amx (the other kernels "
                     "have no tiles to emulate)");
  // Emulated, the amx kernels need no more than the avx512-bf16 ones.
  bool emulatedAmx = pipeline.emulateAmx && amxPath;
  if (!hostCanRun(emulatedAmx ? CpuKernels::Avx512Bf16 : pipeline.kernels))
    return makeError("kernels=" + stringifyCpuKernels(pipeline.kernels) +
                     (emulatedAmx ? " with emulate-amx" : "") +
                     " needs CPU features this machine does not have");
  // f16 tiles the CPU would not run (SIGILL): only where they are emulated.
  if (amxPath && pipeline.amxFp16.hasValue() && pipeline.amxFp16 &&
      !emulatedAmx && !hostHasAmxFp16())
    return makeError("amx-fp16 needs a CPU with AMX-FP16 (or emulate-amx)");
  // Values the pipeline cannot use (block-q=0) are its passes' to diagnose.
  if (!options.inputFile.empty() == options.spec.has_value())
    return makeError("give exactly one of FILE.mlir and --sdpa SPEC");
  if (options.spec && !options.dims.empty())
    return makeError(
        "--dims goes with FILE.mlir; --sdpa sizes come from the spec");
  if (options.spec && !options.entry.empty() && options.entry != "sdpa")
    return makeError("--entry goes with FILE.mlir; the --sdpa function is "
                     "@sdpa");
  if (!(options.naiveLimitGib >= 0) || !(options.refLimitGflop >= 0))
    return makeError("--naive-limit-gib and --ref-limit-gflop must be "
                     "non-negative numbers");
  if (options.cuda && options.hugePages)
    return makeError("--huge-pages goes with --target cpu (it places host "
                     "buffers)");
  if (options.cuda && options.guardPages)
    return makeError("--guard-pages goes with --target cpu (device buffers "
                     "have no host guard pages)");
  return llvm::Error::success();
}

static llvm::Expected<LoadedModule> loadModule(MLIRContext &context,
                                               const RunOptions &options,
                                               std::string &specText) {
  LoadedModule loaded;
  loaded.sourceMgr = std::make_shared<llvm::SourceMgr>();
  if (options.spec) {
    specText = options.spec->toString();
    loaded.module = buildSdpaModule(context, *options.spec, "sdpa");
    loaded.entry = *loaded.module->getOps<func::FuncOp>().begin();
    loaded.signature = signatureOf(*options.spec);
    return std::move(loaded);
  }
  std::string error;
  auto file = openInputFile(options.inputFile, &error);
  if (!file)
    return makeError(error);
  loaded.sourceMgr->AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  {
    SourceMgrDiagnosticHandler handler(*loaded.sourceMgr, &context);
    loaded.module = parseSourceFile<ModuleOp>(*loaded.sourceMgr, &context);
  }
  if (!loaded.module)
    return makeError("could not parse the input (see the diagnostics above)");
  llvm::Expected<func::FuncOp> entry =
      findEntry(*loaded.module, options.entry, options.inputFile);
  if (!entry)
    return entry.takeError();
  loaded.entry = *entry;
  llvm::Expected<EntrySignature> signature =
      analyzeEntry(loaded.entry, options.dims);
  if (!signature)
    return signature.takeError();
  loaded.signature = std::move(*signature);
  return std::move(loaded);
}

/// Reads arg<i>.npy from `options.inputsDir`, or draws fresh seeded inputs
/// (normals; masks random and mostly true).
static llvm::Expected<std::vector<HostTensor>>
makeInputs(const RunOptions &options, const EntrySignature &signature) {
  std::vector<HostTensor> inputs;
  for (auto [i, spec] : llvm::enumerate(signature.args)) {
    if (!options.inputsDir.empty()) {
      SmallString<256> path(options.inputsDir);
      llvm::sys::path::append(path, "arg" + std::to_string(i) + ".npy");
      llvm::Expected<HostTensor> tensor = readNpy(path.str());
      if (!tensor)
        return tensor.takeError();
      if (tensor->dtype != spec.dtype || tensor->shape != spec.shape)
        return makeError(path + ": expected " + dtypeName(spec.dtype) + " " +
                         HostTensor::zeros(spec).shapeString() + ", got " +
                         dtypeName(tensor->dtype) + " " +
                         tensor->shapeString());
      inputs.push_back(std::move(*tensor));
      continue;
    }
    HostTensor tensor = HostTensor::zeros(spec);
    uint64_t seed = options.seed * 1000003 + i;
    if (spec.dtype == DType::Bool)
      fillRandomBool(tensor, seed, 0.8);
    else if (spec.dtype == DType::I32) // Key lengths, in [0, Lk].
      fillRandomInt(tensor, seed, 0, signature.args[1].shape[2]);
    else
      fillRandomNormal(tensor, seed);
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

/// Which oracles run.
struct OraclePlan {
  bool naive = false, ref = false;
  /// --check naive: the f64 reference runs only for the input's
  /// sensitivity, which the fused-against-naive bound carries (as the f64
  /// checks do); its own checks are not recorded.
  bool refForSensOnly = false;
};

/// Decides which oracles fit: the naive lowering's score table against
/// --naive-limit-gib, the f64 reference's FLOPs against --ref-limit-gflop
/// (above it, every refRowStride-th query row only). Says why in `report`.
static OraclePlan planOracles(const RunOptions &options,
                              const std::optional<SdpaProblem> &problem,
                              RunReport &report) {
  OraclePlan plan;
  plan.naive =
      options.check == CheckMode::All || options.check == CheckMode::Naive;
  bool refAsked =
      options.check == CheckMode::All || options.check == CheckMode::F64;
  plan.ref = refAsked && problem;
  // Fused against naive needs sens as much as against f64: two f32
  // lowerings of an ill-conditioned input differ by what f32 rounding of
  // the inputs' products moves (docs/numerics.md).
  if (options.check == CheckMode::Naive && problem)
    plan.ref = plan.refForSensOnly = true;
  if (refAsked && !problem)
    report.refSkipped = "f64 reference skipped: the entry is not one "
                        "attn.sdpa on its arguments";
  if (!problem)
    return plan;
  if (plan.naive) {
    double gib = 4.0 * problem->b * problem->hq * double(problem->lq) *
                 double(problem->lk) / (1024.0 * 1024.0 * 1024.0);
    if (gib > options.naiveLimitGib) {
      report.naiveSkipped = llvm::formatv(
          "naive lowering skipped: its score table needs {0:f1} GiB (limit "
          "{1:f1}, --naive-limit-gib)",
          gib, options.naiveLimitGib);
      plan.naive = false;
    }
  }
  if (plan.refForSensOnly && !plan.naive) // No bound for sens to widen.
    plan.ref = plan.refForSensOnly = false;
  double gflop = report.flops / 1e9;
  double refLimit = std::max(1e-3, options.refLimitGflop);
  if (plan.ref && gflop > refLimit) {
    int64_t stride = static_cast<int64_t>(std::ceil(gflop / refLimit));
    if (stride >= problem->lq || problem->varlen) { // Varlen: every row.
      report.refSkipped = llvm::formatv(
          plan.refForSensOnly
              ? "sens not measured: the f64 reference that measures it, "
                "{0:f1} GFLOP per query row set, is over the limit ({1:f1}, "
                "--ref-limit-gflop); fused against naive is judged without "
                "the input's conditioning"
              : "f64 reference skipped: {0:f1} GFLOP per query row set is "
                "over the limit ({1:f1}, --ref-limit-gflop)",
          gflop, options.refLimitGflop);
      plan.ref = plan.refForSensOnly = false;
    } else {
      report.refRowStride = stride;
      report.refNote = llvm::formatv(
          "f64 reference on one query row in {0} ({1:f1} GFLOP in all; limit "
          "{2:f1}, --ref-limit-gflop)",
          stride, gflop, options.refLimitGflop);
    }
  }
  return plan;
}

static double toGiB(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

/// Refuses, before anything is allocated, a run whose tensors cannot be
/// represented or do not fit in host memory (hostMemoryLimit: the physical
/// memory or what ulimit -v leaves): the inputs, the fused outputs and the
/// f64 reference must fit; the naive lowering is skipped when its outputs and
/// score table do not fit beside them (its kernel would get a null buffer).
static llvm::Error checkHostMemory(const EntrySignature &signature,
                                   const std::optional<SdpaProblem> &problem,
                                   OraclePlan &plan, RunReport &report) {
  auto bytesOf = [](const std::vector<TensorSpec> &specs, const char *what,
                    double &total) -> llvm::Error {
    for (auto [i, spec] : llvm::enumerate(specs)) {
      std::optional<int64_t> bytes = byteSizeOf(spec);
      if (!bytes)
        return makeError(llvm::Twine(what) + " " + llvm::Twine(i) + " (" +
                         HostTensor{spec.dtype, spec.shape, {}}.shapeString() +
                         "x" + dtypeName(spec.dtype) +
                         ") is too large to address");
      total += static_cast<double>(*bytes);
    }
    return llvm::Error::success();
  };
  double inputs = 0, outputs = 0;
  if (llvm::Error e = bytesOf(signature.args, "argument", inputs))
    return e;
  if (llvm::Error e = bytesOf(signature.results, "result", outputs))
    return e;
  double needed = inputs + outputs;
  if (plan.ref && !signature.results.empty()) // The reference's doubles.
    needed +=
        8.0 * HostTensor{DType::F64, signature.results[0].shape, {}}.numel();
  std::string why;
  double limit = static_cast<double>(hostMemoryLimit(&why));
  if (needed > limit)
    return makeError(llvm::formatv(
        "the inputs and outputs need {0:f1} GiB of host memory, more than the "
        "{1:f1} GiB available ({2})",
        toGiB(needed), toGiB(limit), why));
  if (plan.naive && problem) {
    double table = 4.0 * problem->b * problem->hq * double(problem->lq) *
                   double(problem->lk);
    if (needed + outputs + table > limit) {
      report.naiveSkipped = llvm::formatv(
          "naive lowering skipped: its score table and outputs need {0:f1} "
          "GiB, more than the {1:f1} GiB of host memory left ({2})",
          toGiB(table + outputs), toGiB(limit - needed), why);
      plan.naive = false;
    }
  }
  return llvm::Error::success();
}

static Results makeOutputs(const EntrySignature &signature) {
  Results outs;
  for (const TensorSpec &spec : signature.results)
    outs.push_back(HostTensor::zeros(spec));
  return outs;
}

/// Compiles the fused or the naive lowering of the entry for the CPU (JIT)
/// or, with options.cuda, for the GPU (CudaRun.h).
static llvm::Expected<Kernel> compileKernel(const RunOptions &options,
                                            const RunReport &report,
                                            ModuleOp module, bool naive,
                                            const CpuPipelineOptions &cpu) {
  Kernel kernel;
  if (options.cuda) {
    auto compiled = CudaKernel::compile(module, report.entry, naive,
                                        report.chip, options.cudaKnobs);
    if (!compiled)
      return compiled.takeError();
    kernel.cuda = std::move(*compiled);
    return std::move(kernel);
  }
  auto compiled =
      JitKernel::compile(module, report.entry, [&](OpPassManager &pm) {
        if (naive)
          buildNaiveCpuPipeline(pm);
        else
          buildCpuPipeline(pm, cpu);
      });
  if (!compiled)
    return compiled.takeError();
  kernel.jit = std::move(*compiled);
  return std::move(kernel);
}

/// Runs `kernel` once into freshly NaN-poisoned outputs; with `guardPages`
/// (CPU only), twice, on copies of the inputs and outputs in guarded buffers
/// (flush against the end guard, then against the start guard; the inputs
/// read-only), copying the results back after each run.
static llvm::Error runPoisoned(Kernel &kernel, std::vector<HostTensor> &inputs,
                               Results &outs, bool guardPages) {
  std::vector<HostTensor *> ins = pointersTo(inputs),
                            outPtrs = pointersTo(outs);
  if (!guardPages || !kernel.jit) {
    for (HostTensor &t : outs)
      t.fillNaN();
    return kernel.run(ins, outPtrs);
  }
  for (GuardPlacement placement :
       {GuardPlacement::AgainstEnd, GuardPlacement::AgainstStart}) {
    std::vector<GuardedBuffer> buffers;
    std::vector<void *> data;
    for (HostTensor &t : outs)
      t.fillNaN();
    std::vector<HostTensor *> all = ins;
    all.insert(all.end(), outPtrs.begin(), outPtrs.end());
    for (HostTensor *t : all) {
      llvm::Expected<GuardedBuffer> b =
          GuardedBuffer::create(t->byteSize(), placement);
      if (!b)
        return b.takeError();
      if (b->size())
        std::memcpy(b->data(), t->raw(), b->size());
      if (data.size() < ins.size())
        if (llvm::Error e = b->makeReadOnly())
          return e;
      data.push_back(b->data());
      buffers.push_back(std::move(*b));
    }
    if (llvm::Error e = kernel.jit->run(ins, outPtrs, data))
      return e;
    for (size_t i = 0; i < outs.size(); ++i) {
      const GuardedBuffer &b = buffers[ins.size() + i];
      if (b.size())
        std::memcpy(outs[i].raw(), b.data(), b.size());
    }
  }
  return llvm::Error::success();
}

static llvm::Error dumpTensors(StringRef dir,
                               const std::vector<HostTensor> &inputs,
                               const Results &fusedOut, const Results *naiveOut,
                               bool isSdpa) {
  auto write = [&](const std::string &name,
                   const HostTensor &t) -> llvm::Error {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    return writeNpy(path.str(), t);
  };
  for (auto [i, t] : llvm::enumerate(inputs))
    if (llvm::Error e = write("arg" + std::to_string(i) + ".npy", t))
      return e;
  // No fused results where the op has no fused lowering (attn.sdpa_paged
  // outside the decode kernel's reach).
  size_t results = std::max(fusedOut.size(), naiveOut ? naiveOut->size() : 0);
  for (size_t r = 0; r < results; ++r) {
    std::string suffix = r == 0             ? ""
                         : r == 1 && isSdpa ? "_lse"
                                            : "_" + std::to_string(r);
    if (r < fusedOut.size())
      if (llvm::Error e = write("fused" + suffix + ".npy", fusedOut[r]))
        return e;
    if (naiveOut)
      if (llvm::Error e = write("naive" + suffix + ".npy", (*naiveOut)[r]))
        return e;
  }
  return llvm::Error::success();
}

llvm::Expected<RunReport> mlir::attn::exec::runAttn(MLIRContext &context,
                                                    const RunOptions &options) {
  RunReport report;
  report.seed = options.seed;
  report.threads = options.threads;
  report.usedThreads =
      options.threads > 0
          ? options.threads
          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  report.inputsDir = options.inputsDir;

  if (options.peak && options.inputFile.empty() && !options.spec) {
    report.peakOnly = true;
    if (llvm::Error e = measureRunPeaks(context, report))
      return std::move(e);
    report.pass = true;
    return report;
  }

  if (options.grad)
    return runAttnGrad(context, options);

  CpuPipelineOptions pipeline;
  if (llvm::Error e = checkOptions(options, pipeline))
    return std::move(e);
  report.blockQ = pipeline.blockQ;
  report.blockKV = pipeline.blockKV;
  report.narrowBlockQ = narrowBlockQFor(pipeline);
  report.wideBlockKV = wideBlockKVFor(pipeline);
  report.decodeRows = decodeRowsFor(pipeline);
  report.ompSchedule = pipeline.ompSchedule;
  report.emulatedAmx = pipeline.emulateAmx;
  if (options.cuda) {
    if (options.peak)
      return makeError("--peak measures the CPU; not with --target cuda");
    if (!StringRef(options.pipelineOptions).trim().empty())
      return makeError("--block-q, --block-kv, --reg-block, --row-vectors, "
                       "--omp-schedule and the other fused-pipeline options "
                       "are options of the CPU pipeline");
    report.target = "cuda";
    report.blockQ = report.blockKV = report.narrowBlockQ = 0;
    report.wideBlockKV = report.decodeRows = 0;
    report.ompSchedule.clear();
    // No driver or no GPU: one line, before anything is compiled.
    llvm::Expected<std::string> chip = probeCudaDevice();
    if (!chip)
      return makeError("--target cuda: " + toString(chip.takeError()));
    report.chip = options.chip.empty() ? *chip : options.chip;
  }
  // A --dump directory that cannot be made fails now, not after the run.
  if (!options.dumpDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpDir))
      return makeError("--dump " + options.dumpDir + ": " + ec.message());

  llvm::Expected<LoadedModule> loaded =
      loadModule(context, options, report.specText);
  if (!loaded)
    return loaded.takeError();
  SourceMgrDiagnosticHandler diagnostics(*loaded->sourceMgr, &context);
  const EntrySignature &signature = loaded->signature;
  std::optional<SdpaProblem> problem = signature.problem;
  report.entry = loaded->entry.getSymName().str();
  report.inputs = signature.args;
  report.flops = problem ? problem->flops() : 0;

  OraclePlan plan = planOracles(options, problem, report);
  // attn.sdpa_paged runs fused on the CPU where its query blocks are decode
  // groups (the decode kernel reads the caches in place); elsewhere its runs
  // check the naive lowering against the f64 reference.
  std::string noFused;
  if (problem && problem->paged)
    noFused = options.cuda ? "the GPU pipelines have no lowering of it"
                           : whyNoFusedPagedLowering(*loaded->module, pipeline);
  bool withFused = noFused.empty();
  if (!withFused) {
    if (options.benchRuns > 0)
      return makeError("--bench: attn.sdpa_paged (page_size) has no fused "
                       "lowering for this problem to time: " +
                       noFused);
    plan.naive = report.naiveSkipped.empty();
    if (!plan.naive || !plan.ref || plan.refForSensOnly)
      return makeError("attn.sdpa_paged (page_size) has no fused lowering "
                       "for this problem (" +
                       noFused +
                       "): a run checks its naive lowering against the f64 "
                       "reference (--check all or f64, within "
                       "--naive-limit-gib and --ref-limit-gflop)");
  }
  if (llvm::Error e = checkHostMemory(signature, problem, plan, report))
    return std::move(e);
  if (!withFused && !plan.naive)
    return makeError("attn.sdpa_paged (page_size) has no fused lowering for "
                     "this problem, and its naive lowering does not fit: " +
                     report.naiveSkipped);

  llvm::Expected<std::vector<HostTensor>> inputs =
      makeInputs(options, signature);
  if (!inputs)
    return inputs.takeError();
  if (problem && problem->alibi != SdpaProblem::Alibi::None &&
      options.inputsDir.empty()) {
    // Generated ALiBi slopes are positive, as ALiBi's are: |N(0, 1)| / 4.
    HostTensor &slopes = (*inputs)[alibiArgIndex(*problem)];
    for (int64_t i = 0, n = slopes.numel(); i < n; ++i)
      slopes.setFromDouble(i, std::fabs(slopes.getAsDouble(i)) / 4);
  }
  if (problem && problem->paged) {
    if (options.inputsDir.empty())
      fillPagedTables(*problem, *inputs, options.seed);
    if (llvm::Error e = setPagedValues(*problem, *inputs))
      return std::move(e);
    report.flops = problem->flops();
  } else if (problem && problem->varlen) {
    if (options.inputsDir.empty())
      fillVarlenOffsets(*problem, *inputs);
    if (llvm::Error e = setVarlenValues(*problem, *inputs))
      return std::move(e);
    report.flops = problem->flops();
  } else if (problem && (problem->keyLengths ||
                         problem->alibi != SdpaProblem::Alibi::None)) {
    setKeyLengthValues(*problem, *inputs);
    report.flops = problem->flops();
  }
  // Values the ops constrain: FILE mode's varlen offsets made valid by
  // construction or checked, and given ALiBi slopes checked (a --sdpa
  // problem's offsets and page tables were made and checked above).
  if (llvm::Error e = prepareOperandValues(
          loaded->entry, *inputs,
          /*generated=*/options.inputsDir.empty() && !problem))
    return std::move(e);
  if (problem && inputs->size() >= 3)
    report.kvBytes =
        static_cast<double>((*inputs)[1].byteSize() + (*inputs)[2].byteSize());

  // Compile.
  setJitThreads(options.threads);
  std::optional<Kernel> fused;
  if (withFused) {
    auto compiled =
        compileKernel(options, report, *loaded->module, false, pipeline);
    if (!compiled)
      return makeError("fused lowering: " + toString(compiled.takeError()));
    fused = std::move(*compiled);
  }
  std::optional<Kernel> naive;
  if (plan.naive) {
    auto compiled =
        compileKernel(options, report, *loaded->module, true, pipeline);
    if (!compiled)
      return makeError("naive lowering: " + toString(compiled.takeError()));
    naive = std::move(*compiled);
  }

  // Run, on NaN-poisoned outputs.
  Results fusedOut, naiveOut;
  if (fused) {
    fusedOut = makeOutputs(signature);
    if (llvm::Error e =
            runPoisoned(*fused, *inputs, fusedOut, options.guardPages))
      return std::move(e);
  }
  if (naive) {
    naiveOut = makeOutputs(signature);
    if (llvm::Error e =
            runPoisoned(*naive, *inputs, naiveOut, options.guardPages))
      return std::move(e);
  }

  // Check.
  // A NaN or an infinity in a value row reaches the output through 0 * x.
  bool inputsNonFinite =
      anyElement(*inputs, [](double x) { return !std::isfinite(x); });
  std::optional<Reference> ref;
  if (plan.ref) {
    bool lowPrecision = signature.results[0].dtype == DType::F16 ||
                        signature.results[0].dtype == DType::BF16;
    bool needSens = !lowPrecision || problem->lse;
    // Without naive results (skipped: too large) there is nothing for sens
    // to widen.
    if (!plan.refForSensOnly || (needSens && naive))
      ref = computeReference(options, *problem, *inputs, report.refRowStride,
                             needSens, inputsNonFinite);
  }
  const Results *naivePtr = naive ? &naiveOut : nullptr;
  judgeResults(report, signature, fusedOut, naivePtr, ref ? &*ref : nullptr,
               /*refChecks=*/!plan.refForSensOnly);
  if (noNaNExpected(*inputs, problem.has_value()))
    checkNoNaN(report, problem.has_value(), fusedOut, naivePtr);
  report.pass = allChecksPass(report);

  if (options.benchRuns > 0 && fused)
    if (llvm::Error e =
            timeKernels(context, options, *fused, naive ? &*naive : nullptr,
                        *inputs, fusedOut, naiveOut, report))
      return e;

  if (!options.dumpDir.empty())
    if (llvm::Error e = dumpTensors(options.dumpDir, *inputs, fusedOut,
                                    naivePtr, problem.has_value()))
      return std::move(e);
  return report;
}
