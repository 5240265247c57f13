//===- attn-run.cpp - run attn.sdpa through both lowerings and check it ---===//
//
// Part of the attn project.
//
// attn-run FILE.mlir [--entry NAME] | --sdpa SPEC, with the options of
// docs/attn-run.md. Parses the options and calls the execution engine
// (attn/Execution/Engine.h); exit status 0 pass, 1 a check failed, 2 bad
// input.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Engine.h"
#include "attn/Execution/GuardedBuffer.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/Report.h"
#include "attn/Tuning/ToolFlags.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <new>
#include <unistd.h>

using namespace mlir::attn;
using namespace mlir::attn::exec;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-run options");
template <typename T, typename... Mods>
static cl::opt<T> opt(const char *name, const char *desc, T init,
                      Mods &&...mods) {
  return cl::opt<T>(llvm::StringRef(name), cl::desc(desc), cl::init(init),
                    cl::cat(category), std::forward<Mods>(mods)...);
}

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[FILE.mlir]"),
                                      cl::init(""), cl::cat(category));
static auto entry = opt<std::string>(
    "entry", "Function to run (default: the first that calls attn.sdpa)", "");
static auto sdpa =
    opt<std::string>("sdpa",
                     "Synthesize one attn.sdpa from a spec, e.g. "
                     "b=1,hq=8,lq=1024,d=64,causal=bottom_right",
                     "");
static auto target = opt<std::string>("target", "cpu | cuda", "cpu");
static auto chip = opt<std::string>(
    "chip", "cuda: sm_80 | sm_90 | ... (default: device 0's)", "");
static auto seed = opt<uint64_t>("seed", "Seed of the random inputs", 0);
static auto inputs =
    opt<std::string>("inputs", "Read arg0.npy, arg1.npy, ... from DIR", "");
static auto dump = opt<std::string>(
    "dump", "Write the inputs and both results as .npy to DIR", "");
static auto check = opt<std::string>(
    "check", "f64 | naive | none | all (default: all that fit)", "all");
static auto bench =
    opt<int>("bench", "Time N runs after a warm-up and report the median", 0);
static auto json = opt<bool>(
    "json", "One JSON object on stdout (the summary goes to stderr)", false);
static auto dims = opt<std::string>(
    "dims", "Sizes of dynamic dims of a FILE's attn.sdpa, e.g. b=2,lq=77", "");
static auto peak = opt<bool>(
    "peak", "Measure one core's f32 FMA peak and report GFLOP/s against it",
    false);
static auto grad = opt<bool>(
    "grad",
    "With --sdpa: run the forward, then attn.sdpa_grad on a random d_out, and "
    "check (and with --bench time) the backward",
    false);
static auto refLimit = opt<double>(
    "ref-limit-gflop",
    "Above this many GFLOP the f64 reference checks a sample of query rows",
    8.0);
static auto naiveLimit = opt<double>(
    "naive-limit-gib",
    "Skip the naive lowering when its score table exceeds this many GiB", 4.0);
static auto guardPages = opt<bool>(
    "guard-pages",
    "Run each lowering twice with every input and output against PROT_NONE "
    "guard pages (after its end, then before its start); an out-of-bounds "
    "access is an error",
    false);
static auto hugePages = opt<bool>(
    "huge-pages",
    "cpu, --bench: time the calls on copies of the inputs and outputs of 4 "
    "MiB and more on 2 MiB transparent huge pages (madvise, as NumPy "
    "allocates), the read probe's buffer too",
    false);

static int badInput(const llvm::Twine &message) {
  llvm::errs() << "attn-run: error: " << message << "\n";
  return 2;
}

/// A host allocation that fails (past runAttn's own size checks) is bad
/// input too: one line and status 2 rather than LLVM's abort with a stack
/// dump. Nothing here may allocate.
static void outOfHostMemory() {
  static const char message[] = "attn-run: error: out of host memory (the "
                                "problem does not fit in this machine)\n";
  ssize_t ignored = write(STDERR_FILENO, message, sizeof(message) - 1);
  (void)ignored;
  _exit(2);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::set_new_handler(outOfHostMemory);
  setJitAllocFailure("attn-run: error: ", 2);
  // libLLVM already registers a --threads; attn-run's contract takes it over.
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->removeArgument();
  static auto threads = opt<int>("threads", "OpenMP threads (default: all)", 0);
  // The tuning knobs' flags (Tuning.td), for the fused lowering.
  tuning::ToolFlags tuningFlags(category, tuning::ToolDefaults::Pipeline);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "attn-run: run attn.sdpa through the fused "
                                   "and the naive lowering and check it\n",
                                   &llvm::errs()))
    return 2;

  if (target != "cpu" && target != "cuda")
    return badInput("--target must be cpu or cuda, got '" + target + "'");
  RunOptions options;
  options.cuda = target == "cuda";
  if (!chip.empty() && !options.cuda)
    return badInput("--chip goes with --target cuda");
  options.chip = chip;
  std::optional<CheckMode> mode = parseCheckMode(check);
  if (!mode)
    return badInput("--check must be f64, naive, none or all, got '" + check +
                    "'");
  options.check = *mode;
  options.inputFile = inputFile;
  options.entry = entry;
  if (!sdpa.empty()) {
    llvm::Expected<SdpaSpec> spec = parseSdpaSpec(sdpa);
    if (!spec)
      return badInput("--sdpa: " + toString(spec.takeError()));
    options.spec = *spec;
  } else if (inputFile.empty() && !peak) {
    return badInput("give exactly one of FILE.mlir and --sdpa SPEC");
  }
  llvm::Expected<DimSizes> dimSizes = parseDimSizes(dims);
  if (!dimSizes)
    return badInput(toString(dimSizes.takeError()));
  options.dims = *dimSizes;
  options.threads = threads;
  options.seed = seed;
  options.inputsDir = inputs;
  options.dumpDir = dump;
  options.benchRuns = bench;
  options.peak = peak;
  options.refLimitGflop = refLimit;
  options.naiveLimitGib = naiveLimit;
  options.guardPages = guardPages;
  options.hugePages = hugePages;
  options.grad = grad;
  // An out-of-bounds access is wrong generated code, like a failed numerics
  // check: status 1, not 2 (the input was fine).
  if (guardPages)
    installGuardFaultHandler("attn-run: error: ", 1);
  // The tuning knobs given, for the fused lowering of the target.
  llvm::Expected<tuning::KnobValues> knobs = tuningFlags.given(
      options.cuda ? tuning::Pipeline::Gpu : tuning::Pipeline::Cpu,
      /*fused=*/true);
  if (!knobs)
    return badInput(toString(knobs.takeError()));
  if (options.cuda)
    options.cudaKnobs = std::move(*knobs);
  else
    options.pipelineOptions = knobs->pipelineOptions(tuning::Pipeline::Cpu);

  std::unique_ptr<mlir::MLIRContext> context = createEngineContext();
  llvm::Expected<RunReport> report = runAttn(*context, options);
  if (!report)
    return badInput(toString(report.takeError()));
  printReport(json ? llvm::errs() : llvm::outs(), *report);
  if (json)
    llvm::outs() << reportToJson(*report) << "\n";
  return report->pass ? 0 : 1;
}
