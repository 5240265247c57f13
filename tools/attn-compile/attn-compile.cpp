//===- attn-compile.cpp - compile attn.sdpa ahead of time -----------------===//
//
// Part of the attn project.
//
// A thin main over lib/Compile: parses the command line (docs/c-abi.md) and
// calls compileLibrary(). Exit status 0 on success, 2 on bad input or a
// failed compilation, with one line on stderr.
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Aot.h"
#include "attn/Execution/Engine.h"
#include "attn/Tuning/ToolFlags.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::attn;
namespace cl = llvm::cl;

static cl::OptionCategory category("attn-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[FILE.mlir]"),
                                      cl::init(""), cl::cat(category));
static cl::list<std::string>
    sdpa("sdpa",
         cl::desc("Compile one attn.sdpa of a spec (attn-run's --sdpa); "
                  "repeatable"),
         cl::cat(category));
static cl::list<std::string>
    names("name",
          cl::desc("Exported name of the i-th --sdpa (default sdpa, sdpa1, "
                   "...), or of FILE's entry (default: its name)"),
          cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("FILE's function (default: the first that calls "
                   "attn.sdpa)"),
          cl::init(""), cl::cat(category));
static cl::opt<std::string> target("target", cl::desc("cpu | cuda"),
                                   cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    lowering("lowering",
             cl::desc("fused (default) | naive: the naive oracle lowering"),
             cl::init("fused"), cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("cuda: sm_80 | sm_90 | ..."),
                                 cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("cpu: native (default), generic, or an LLVM CPU name "
                 "(x86-64-v3, x86-64-v4, ...)"),
        cl::init("native"), cl::cat(category));
static cl::opt<std::string>
    cudaToolkit("cuda-toolkit", cl::desc("cuda: the CUDA toolkit's root"),
                cl::init("/usr/local/cuda"), cl::cat(category));
static cl::list<std::string>
    emit("emit",
         cl::desc("cuda: also write the kernels' code beside the library: "
                  "ptx (LIB.ptx) or sass (LIB.sass, the PTX assembled by "
                  "ptxas for --chip and disassembled by nvdisasm); "
                  "repeatable or comma-separated"),
         cl::CommaSeparated, cl::cat(category));
static cl::opt<std::string>
    nvdisasm("nvdisasm",
             cl::desc("cuda, --emit sass: nvdisasm (default: the toolkit's, "
                      "one on PATH, or python3's nvidia-cuda-nvdisasm)"),
             cl::init(""), cl::cat(category));
static cl::opt<std::string> output("o", cl::desc("The library, e.g. libfoo.so"),
                                   cl::init(""), cl::cat(category));
static cl::opt<bool> printKnobs(
    "print-knobs",
    cl::desc("Print the tuning knobs (include/attn/Tuning/Tuning.td) as JSON "
             "and exit: each with its flag, Python name, values and "
             "defaults"),
    cl::init(false), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The tuning knobs' flags (Tuning.td), with a library's defaults.
  tuning::ToolFlags tuningFlags(category, tuning::ToolDefaults::Library);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "attn-compile: compile attn.sdpa into a shared library with a C "
          "ABI\n",
          &llvm::errs()))
    return 2;
  if (printKnobs) {
    llvm::outs() << tuning::knobsJson();
    return 0;
  }

  compile::AotOptions options;
  if (target == "cpu")
    options.target = compile::Target::Cpu;
  else if (target == "cuda")
    options.target = compile::Target::Cuda;
  else
    return fail("--target must be cpu or cuda, got '" + target + "'");
  if (output.empty())
    return fail("give the library to write with -o");
  if (sdpa.empty() == inputFile.empty())
    return fail("give FILE.mlir or one or more --sdpa SPEC");
  if (!inputFile.empty() && names.size() > 1)
    return fail("--name: FILE.mlir gives one function");
  if (!sdpa.empty() && names.size() > sdpa.size())
    return fail("more --name than --sdpa");
  if (!sdpa.empty() && !entry.empty())
    return fail("--entry names a function of FILE.mlir, not of --sdpa");
  if (options.target == compile::Target::Cuda && cpu.getNumOccurrences())
    return fail("--cpu is for --target cpu");
  if (lowering == "fused")
    options.lowering = compile::Lowering::Fused;
  else if (lowering == "naive")
    options.lowering = compile::Lowering::Naive;
  else
    return fail("--lowering must be fused or naive, got '" + lowering + "'");
  llvm::Expected<tuning::KnobValues> knobs = tuningFlags.given(
      options.target == compile::Target::Cuda ? tuning::Pipeline::Gpu
                                              : tuning::Pipeline::Cpu,
      options.lowering == compile::Lowering::Fused);
  if (!knobs)
    return fail(toString(knobs.takeError()));
  if (knobs->has(tuning::KnobId::CpuOmpSchedule) &&
      !knobs->getBool(tuning::KnobId::CpuOpenmp).value_or(false))
    return fail("--omp-schedule is an option of --openmp");
  if (knobs->lookup(tuning::KnobId::GpuKernels) == "wgmma" && chip != "sm_90a")
    return fail("--kernels wgmma needs --chip sm_90a, got '" + chip + "'");
  options.tuning = std::move(*knobs);
  options.chip = chip;
  options.cpu = cpu;
  options.cudaToolkit = cudaToolkit;
  for (const std::string &what : emit) {
    if (options.target != compile::Target::Cuda)
      return fail("--emit is for --target cuda");
    if (what == "ptx")
      options.emitPtx = true;
    else if (what == "sass")
      options.emitSass = true;
    else
      return fail("--emit must be ptx or sass, got '" + what + "'");
  }
  options.nvdisasm = nvdisasm;

  std::unique_ptr<mlir::MLIRContext> context = exec::createEngineContext();
  llvm::SourceMgr sourceMgr;
  std::vector<compile::AotFunction> functions;
  if (!inputFile.empty()) {
    auto f = compile::functionFromFile(*context, sourceMgr, inputFile, entry,
                                       names.empty() ? "" : names[0]);
    if (!f)
      return fail(toString(f.takeError()));
    functions.push_back(std::move(*f));
  }
  for (auto [i, text] : llvm::enumerate(sdpa)) {
    llvm::Expected<exec::SdpaSpec> spec = exec::parseSdpaSpec(text);
    if (!spec)
      return fail("--sdpa: " + toString(spec.takeError()));
    std::string name = i < names.size() ? names[i]
                       : i == 0         ? std::string("sdpa")
                                        : "sdpa" + std::to_string(i);
    auto f = compile::functionFromSpec(*context, *spec, name);
    if (!f)
      return fail(toString(f.takeError()));
    functions.push_back(std::move(*f));
  }
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, context.get());
  if (llvm::Error e =
          compile::compileLibrary(*context, functions, options, output))
    return fail(toString(std::move(e)));
  return 0;
}
