//===- attn-run.cpp - run attn.sdpa through both lowerings and check it ---===//
//
// Part of the attn project.
//
// attn-run FILE.mlir [--entry NAME] | --sdpa SPEC, with the options of
// SPEC.md section 3. Compiles the entry with the fused and the naive CPU
// pipelines, runs both on seeded random (or given) inputs with NaN-poisoned
// outputs, and checks them against each other and against an f64 reference
// computed by plain loops. Exit status: 0 pass, 1 a check failed, 2 bad
// input.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Execution/HostTensor.h"
#include "attn/Execution/Jit.h"
#include "attn/Execution/Npy.h"
#include "attn/Execution/Numerics.h"
#include "attn/Execution/Peak.h"
#include "attn/Execution/Reference.h"
#include "attn/Execution/SdpaSpec.h"
#include "attn/InitAttn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <thread>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;
namespace cl = llvm::cl;

static cl::OptionCategory attnRunCategory("attn-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[FILE.mlir]"),
                                      cl::init(""), cl::cat(attnRunCategory));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the first one "
                       "that calls attn.sdpa)"),
              cl::init(""), cl::cat(attnRunCategory));
static cl::opt<std::string>
    sdpaSpec("sdpa",
             cl::desc("Synthesize one attn.sdpa from a spec, e.g. "
                      "b=1,hq=8,lq=1024,d=64,causal=bottom_right"),
             cl::init(""), cl::cat(attnRunCategory));
static cl::opt<std::string> target("target", cl::desc("cpu | cuda"),
                                   cl::init("cpu"), cl::cat(attnRunCategory));
/// --threads, registered in main(): libLLVM already has an option of that
/// name, which attn-run's contract (SPEC.md section 3) takes over.
static int threads = 0;
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                              cl::init(0), cl::cat(attnRunCategory));
static cl::opt<std::string>
    inputsDir("inputs", cl::desc("Read arg0.npy, arg1.npy, ... from DIR"),
              cl::init(""), cl::cat(attnRunCategory));
static cl::opt<std::string>
    dumpDir("dump",
            cl::desc("Write the inputs and both results as .npy to "
                     "DIR"),
            cl::init(""), cl::cat(attnRunCategory));
static cl::opt<std::string> checkMode("check",
                                      cl::desc("f64 | naive | none | all "
                                               "(default: all that fit)"),
                                      cl::init("all"),
                                      cl::cat(attnRunCategory));
static cl::opt<int> benchRuns("bench",
                              cl::desc("Time N runs after a warm-up and "
                                       "report the median"),
                              cl::init(0), cl::cat(attnRunCategory));
static cl::opt<bool> json("json",
                          cl::desc("One JSON object with every figure on "
                                   "stdout (the summary goes to stderr)"),
                          cl::init(false), cl::cat(attnRunCategory));
static cl::opt<std::string>
    dimsOpt("dims",
            cl::desc("Sizes of dynamic dims of a FILE's attn.sdpa, "
                     "e.g. b=2,lq=77,lk=300"),
            cl::init(""), cl::cat(attnRunCategory));
static cl::opt<int64_t>
    blockQ("block-q",
           cl::desc("Query rows per block (fused; default: the pipeline's)"),
           cl::init(0), cl::cat(attnRunCategory));
static cl::opt<int64_t>
    blockKV("block-kv",
            cl::desc("Keys per block (fused; default: the pipeline's)"),
            cl::init(0), cl::cat(attnRunCategory));
static cl::opt<bool>
    peak("peak",
         cl::desc("Measure one core's f32 FMA peak in this process "
                  "and report GFLOP/s as a share of it"),
         cl::init(false), cl::cat(attnRunCategory));
static cl::opt<int64_t>
    regBlock("reg-block",
             cl::desc("Keys or value columns per register block (fused)"),
             cl::init(0), cl::cat(attnRunCategory));
static cl::opt<int64_t>
    rowVectors("row-vectors",
               cl::desc("Row vectors per register block (fused)"), cl::init(0),
               cl::cat(attnRunCategory));
static cl::opt<double> refLimitGflop(
    "ref-limit-gflop",
    cl::desc("Above this many GFLOP the f64 reference checks a sample "
             "of query rows"),
    cl::init(8.0), cl::cat(attnRunCategory));
static cl::opt<double>
    naiveLimitGib("naive-limit-gib",
                  cl::desc("Skip the naive lowering when its score table "
                           "would exceed this many GiB"),
                  cl::init(4.0), cl::cat(attnRunCategory));

namespace {

/// Bad input: print the message and leave with status 2.
[[noreturn]] void badInput(const std::string &msg) {
  llvm::errs() << "attn-run: error: " << msg << "\n";
  std::exit(2);
}

/// Where the human-readable summary goes: stdout, or stderr with --json.
llvm::raw_ostream &out() { return json ? llvm::errs() : llvm::outs(); }

/// A JSON number; null for NaN and infinities, which JSON cannot spell.
llvm::json::Value jsonNumber(double v) {
  if (!std::isfinite(v))
    return nullptr;
  return v;
}

std::optional<DType> dtypeOf(Type t) {
  if (t.isF32())
    return DType::F32;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(1))
    return DType::Bool;
  return std::nullopt;
}

/// The problem an entry computes when it is exactly one attn.sdpa on its
/// arguments (the f64 reference can check it), with the shapes to allocate.
struct EntryShape {
  std::vector<std::vector<int64_t>> args, results;
  std::vector<DType> argTypes, resultTypes;
  std::optional<SdpaProblem> problem; // set when the entry is one sdpa
};

/// Parses "b=2,lq=77,lk=300" into sizes for dynamic dims.
std::map<std::string, int64_t> parseDims(const std::string &text) {
  std::map<std::string, int64_t> dims;
  if (text.empty())
    return dims;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(text).split(items, ',');
  for (llvm::StringRef item : items) {
    auto [k, v] = item.split('=');
    int64_t n;
    k = k.trim();
    if ((k != "b" && k != "lq" && k != "lk") || v.trim().getAsInteger(10, n) ||
        n <= 0)
      badInput("--dims expects b=N,lq=N,lk=N with N > 0, got '" + item.str() +
               "'");
    dims[k.str()] = n;
  }
  return dims;
}

/// Works out the runtime shapes of an entry and, when it is one attn.sdpa
/// on its arguments, the SdpaProblem the f64 reference checks.
EntryShape analyzeEntry(func::FuncOp f,
                        const std::map<std::string, int64_t> &dims) {
  EntryShape shape;
  FunctionType type = f.getFunctionType();
  SmallVector<SdpaOp> ops;
  f.walk([&](SdpaOp op) { ops.push_back(op); });

  auto staticShape = [&](RankedTensorType t, const char *what, size_t i) {
    if (!t.hasStaticShape())
      badInput(std::string(what) + " " + std::to_string(i) + " of @" +
               f.getSymName().str() +
               " has dynamic dims that --dims cannot size (only an entry "
               "that is one attn.sdpa on its arguments can be sized)");
    return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
  };
  for (Type t : llvm::concat<const Type>(type.getInputs(), type.getResults())) {
    auto rt = dyn_cast<RankedTensorType>(t);
    if (!rt || !dtypeOf(rt.getElementType()))
      badInput("@" + f.getSymName().str() +
               " must take and return ranked tensors of f32, f16, bf16 or i1");
  }

  // Is the entry exactly `return attn.sdpa(args...)`?
  SdpaOp op = ops.size() == 1 ? ops.front() : SdpaOp();
  bool direct = op && op->getBlock() == &f.getBody().front();
  if (direct) {
    for (Value v : op->getOperands())
      direct &= isa<BlockArgument>(v) &&
                cast<BlockArgument>(v).getOwner() == &f.getBody().front();
    direct &= op->getNumOperands() == type.getNumInputs();
    for (auto [i, v] : llvm::enumerate(op->getOperands()))
      direct &=
          isa<BlockArgument>(v) && cast<BlockArgument>(v).getArgNumber() == i;
    auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
    direct &= ret.getOperands() == ValueRange(op->getResults());
  }

  if (!direct) {
    if (!dims.empty())
      badInput("--dims needs an entry that is one attn.sdpa on its arguments");
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      auto rt = cast<RankedTensorType>(t);
      shape.args.push_back(staticShape(rt, "argument", i));
      shape.argTypes.push_back(*dtypeOf(rt.getElementType()));
    }
    for (auto [i, t] : llvm::enumerate(type.getResults())) {
      auto rt = cast<RankedTensorType>(t);
      shape.results.push_back(staticShape(rt, "result", i));
      shape.resultTypes.push_back(*dtypeOf(rt.getElementType()));
    }
    return shape;
  }

  RankedTensorType q = op.getQueryType(), k = op.getKeyType();
  auto sizeOf = [&](int64_t staticSize, const char *name) -> int64_t {
    auto it = dims.find(name);
    if (!ShapedType::isDynamic(staticSize)) {
      if (it != dims.end() && it->second != staticSize)
        badInput(std::string("--dims ") + name + "=" +
                 std::to_string(it->second) + " contradicts the static size " +
                 std::to_string(staticSize));
      return staticSize;
    }
    if (it == dims.end())
      badInput(std::string("dim ") + name +
               " is dynamic: give its size with --dims " + name + "=N");
    return it->second;
  };
  SdpaProblem p;
  p.b = sizeOf(ShapedType::isDynamic(q.getDimSize(0)) ? k.getDimSize(0)
                                                      : q.getDimSize(0),
               "b");
  p.hq = q.getDimSize(1);
  p.hkv = k.getDimSize(1);
  p.lq = sizeOf(q.getDimSize(2), "lq");
  p.lk = sizeOf(k.getDimSize(2), "lk");
  p.d = q.getDimSize(3);
  p.dv = op.getValueType().getDimSize(3);
  p.scale = op.getEffectiveScale();
  if (auto c = op.getCausalKind())
    p.causal =
        *c == CausalKind::TopLeft ? Causal::TopLeft : Causal::BottomRight;
  p.lse = static_cast<bool>(op.getLse());
  int64_t full[4] = {p.b, p.hq, p.lq, p.lk};
  if (Value m = op.getMask()) {
    auto mt = cast<RankedTensorType>(m.getType());
    p.mask = op.hasBoolMask() ? MaskKind::Bool : MaskKind::Float;
    for (int64_t i = 0; i < 4; ++i)
      p.maskShape.push_back(mt.isDynamicDim(i) ? full[i] : mt.getDimSize(i));
  }
  shape.args = {{p.b, p.hq, p.lq, p.d},
                {p.b, p.hkv, p.lk, p.d},
                {p.b, p.hkv, p.lk, p.dv}};
  for (Value v : op->getOperands())
    shape.argTypes.push_back(
        *dtypeOf(cast<RankedTensorType>(v.getType()).getElementType()));
  if (op.getMask())
    shape.args.push_back(p.maskShape);
  shape.results = {{p.b, p.hq, p.lq, p.dv}};
  shape.resultTypes = {*dtypeOf(q.getElementType())};
  if (p.lse) {
    shape.results.push_back({p.b, p.hq, p.lq});
    shape.resultTypes.push_back(DType::F32);
  }
  if (llvm::Error err = p.validate())
    badInput(llvm::toString(std::move(err)));
  shape.problem = p;
  return shape;
}

struct CheckResult {
  std::string result, oracle, rule;
  ErrorStats stats;
  bool pass = false;
};

/// The numerics contract of SPEC.md section 2 (no sens measured here).
CheckResult judge(const std::string &result, const std::string &oracle,
                  DType dtype, const ErrorStats &s,
                  std::optional<double> naiveRelL2) {
  Verdict v = judgeNumerics(s, dtype, /*lowPrecisionOut=*/result == "out",
                            naiveRelL2, /*sensRel=*/0, /*sensAbs=*/0);
  return {result, oracle, v.rule, s, v.pass};
}

struct Timing {
  double medianMs = 0;
  int runs = 0;
};

/// Runs `kernel` once to warm up, then `runs` times; returns the median.
Timing bench(JitKernel &kernel, const std::vector<HostTensor *> &in,
             const std::vector<HostTensor *> &outs, int runs) {
  std::string err = kernel.run(in, outs);
  if (!err.empty())
    badInput(err);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    (void)kernel.run(in, outs);
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return {median, runs};
}

std::string joinPath(const std::string &dir, const std::string &file) {
  return dir + "/" + file;
}

void dumpTensor(const std::string &name, const HostTensor &t) {
  if (llvm::Error err = writeNpy(joinPath(dumpDir, name), t))
    badInput(llvm::toString(std::move(err)));
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->removeArgument();
  static cl::opt<int> threadsOpt(
      "threads", cl::desc("OpenMP threads (default: all cores)"), cl::init(0),
      cl::cat(attnRunCategory));
  cl::HideUnrelatedOptions(attnRunCategory);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "attn-run: run attn.sdpa through the fused "
                                   "and the naive lowering and check it\n",
                                   &llvm::errs()))
    return 2;
  threads = threadsOpt;
  if (target != "cpu" && target != "cuda")
    badInput("--target must be cpu or cuda, got '" + target + "'");
  if (target == "cuda")
    badInput("--target cuda: the GPU lowering is not built yet in this "
             "version of attn");
  if (checkMode != "all" && checkMode != "f64" && checkMode != "naive" &&
      checkMode != "none")
    badInput("--check must be f64, naive, none or all, got '" + checkMode +
             "'");
  bool peakOnly = peak && inputFile.empty() && sdpaSpec.empty();
  if (!peakOnly && inputFile.empty() == sdpaSpec.empty())
    badInput("give exactly one of FILE.mlir and --sdpa SPEC");
  if (benchRuns < 0 || threads < 0 ||
      (blockQ.getNumOccurrences() && blockQ <= 0) ||
      (blockKV.getNumOccurrences() && blockKV <= 0) ||
      (regBlock.getNumOccurrences() && regBlock <= 0) ||
      (rowVectors.getNumOccurrences() && rowVectors <= 0))
    badInput("--bench, --threads, --block-q, --block-kv, --reg-block and "
             "--row-vectors must be positive");

  DialectRegistry registry;
  registerAttnDialects(registry);
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::optional<double> peakGflops;
  auto measurePeak = [&]() {
    std::string err;
    double g = measureFmaPeakGflops(context, 1.0, err);
    if (g <= 0)
      badInput("peak probe: " + err);
    peakGflops = g;
  };
  if (peakOnly) {
    measurePeak();
    char line[160];
    std::snprintf(line, sizeof(line),
                  "f32 FMA peak of one core: %.2f GFLOP/s (16 chains of "
                  "vector<16xf32> FMAs)\n",
                  *peakGflops);
    out() << line;
    if (json)
      llvm::outs() << llvm::formatv(
                          "{0}", llvm::json::Value(llvm::json::Object{
                                     {"peak_gflops", jsonNumber(*peakGflops)}}))
                   << "\n";
    return 0;
  }

  // The module and the entry function.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  std::map<std::string, int64_t> dims = parseDims(dimsOpt);
  std::string specText;
  if (!sdpaSpec.empty()) {
    llvm::Expected<SdpaSpec> parsed = parseSdpaSpec(sdpaSpec);
    if (!parsed)
      badInput("--sdpa: " + llvm::toString(parsed.takeError()));
    SdpaSpec spec = std::move(*parsed);
    if (!dims.empty())
      badInput("--dims goes with FILE.mlir; --sdpa sizes come from the spec");
    specText = spec.toString();
    if (spec.dynamic)
      dims = {{"b", spec.b}, {"lq", spec.lq}, {"lk", spec.lk}};
    module = parseSourceString<ModuleOp>(buildSdpaModuleText(spec, "sdpa"),
                                         &context, "sdpa-spec");
    entryName = "sdpa";
  } else {
    std::string err;
    auto file = openInputFile(inputFile, &err);
    if (!file)
      badInput(err);
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    badInput("could not parse the input (see the diagnostics above)");

  func::FuncOp entry;
  if (!entryName.empty()) {
    entry = module->lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isDeclaration())
      badInput("no function @" + entryName + " with a body");
  } else {
    for (auto f : module->getOps<func::FuncOp>()) {
      if (!f.isDeclaration() && f.walk([](SdpaOp) {
                                   return WalkResult::interrupt();
                                 }).wasInterrupted()) {
        entry = f;
        break;
      }
    }
    if (!entry)
      badInput("no function in " + inputFile + " calls attn.sdpa");
    entryName = entry.getSymName().str();
  }
  EntryShape shape = analyzeEntry(entry, dims);

  // Inputs: read, or fresh seeded normals (masks: random, mostly true).
  std::vector<HostTensor> inputs(shape.args.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputsDir.empty()) {
      std::string path =
          joinPath(inputsDir, "arg" + std::to_string(i) + ".npy");
      llvm::Expected<HostTensor> read = readNpy(path);
      if (!read)
        badInput(llvm::toString(read.takeError()));
      inputs[i] = std::move(*read);
      if (inputs[i].dtype != shape.argTypes[i] ||
          inputs[i].shape != shape.args[i]) {
        HostTensor expected =
            HostTensor::zeros(shape.argTypes[i], shape.args[i]);
        badInput(path + ": expected " + dtypeName(shape.argTypes[i]) + " " +
                 expected.shapeString() + ", got " +
                 dtypeName(inputs[i].dtype) + " " + inputs[i].shapeString());
      }
      continue;
    }
    inputs[i] = HostTensor::zeros(shape.argTypes[i], shape.args[i]);
    if (shape.argTypes[i] == DType::Bool)
      fillRandomBool(inputs[i], seed * 1000003 + i, 0.8);
    else
      fillRandomNormal(inputs[i], seed * 1000003 + i);
  }
  std::vector<HostTensor *> inPtrs;
  for (HostTensor &t : inputs)
    inPtrs.push_back(&t);

  auto makeOutputs = [&]() {
    std::vector<HostTensor> outs;
    for (size_t i = 0; i < shape.results.size(); ++i)
      outs.push_back(HostTensor::zeros(shape.resultTypes[i], shape.results[i]));
    return outs;
  };

  setJitThreads(threads);
  const SdpaProblem *problem = shape.problem ? &*shape.problem : nullptr;
  int64_t flops = problem ? problem->flops() : 0;
  // The bytes of K and V, read once: the memory roofline of a decode step.
  double kvBytes = 0;
  if (problem && inputs.size() >= 3)
    kvBytes = static_cast<double>(inputs[1].byteSize() + inputs[2].byteSize());

  // Which oracles run.
  bool wantNaive = checkMode == "all" || checkMode == "naive";
  bool wantRef = (checkMode == "all" || checkMode == "f64") && problem;
  std::string naiveSkip, refSkip;
  if (problem && wantNaive) {
    double gib = 4.0 * problem->b * problem->hq * double(problem->lq) *
                 double(problem->lk) / (1024.0 * 1024.0 * 1024.0);
    if (gib > naiveLimitGib) {
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "naive lowering skipped: its score table needs %.1f GiB "
                    "(limit %.1f, --naive-limit-gib)",
                    gib, double(naiveLimitGib));
      naiveSkip = buf;
      wantNaive = false;
    }
  }
  // Above the limit the reference computes every rowStride-th query row
  // only, and the checks compare those rows.
  int64_t rowStride = 1;
  std::string refNote;
  double refLimit = std::max(1e-3, double(refLimitGflop));
  if (wantRef && flops / 1e9 > refLimit) {
    rowStride = static_cast<int64_t>(std::ceil(flops / 1e9 / refLimit));
    if (rowStride >= problem->lq) {
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "f64 reference skipped: %.1f GFLOP per query row set is "
                    "over the limit (%.1f, --ref-limit-gflop)",
                    flops / 1e9, double(refLimitGflop));
      refSkip = buf;
      wantRef = false;
    } else {
      char buf[200];
      std::snprintf(buf, sizeof(buf),
                    "f64 reference on one query row in %lld (%.1f GFLOP in "
                    "all; limit %.1f, --ref-limit-gflop)",
                    static_cast<long long>(rowStride), flops / 1e9,
                    double(refLimitGflop));
      refNote = buf;
    }
  }
  if ((checkMode == "all" || checkMode == "f64") && !problem)
    refSkip = "f64 reference skipped: the entry is not one attn.sdpa on its "
              "arguments";

  // Compile.
  std::string err;
  CpuPipelineOptions cpuOptions;
  // Options given on the command line override the pipeline's defaults.
  if (blockQ.getNumOccurrences())
    cpuOptions.blockQ = blockQ;
  if (blockKV.getNumOccurrences())
    cpuOptions.blockKV = blockKV;
  if (regBlock.getNumOccurrences())
    cpuOptions.regBlock = regBlock;
  if (rowVectors.getNumOccurrences())
    cpuOptions.rowVectors = rowVectors;
  auto fused = JitKernel::compile(
      *module, entryName,
      [&](OpPassManager &pm) { buildCpuPipeline(pm, cpuOptions); }, err);
  if (!fused)
    badInput("fused lowering: " + err);
  std::unique_ptr<JitKernel> naive;
  if (wantNaive) {
    naive = JitKernel::compile(
        *module, entryName,
        [](OpPassManager &pm) { buildNaiveCpuPipeline(pm); }, err);
    if (!naive)
      badInput("naive lowering: " + err);
  }

  // Run, on NaN-poisoned outputs.
  std::vector<HostTensor> fusedOut = makeOutputs(), naiveOut;
  if (naive)
    naiveOut = makeOutputs();
  auto runOnce = [&](JitKernel &k, std::vector<HostTensor> &outs) {
    std::vector<HostTensor *> ptrs;
    for (HostTensor &t : outs) {
      t.fillNaN();
      ptrs.push_back(&t);
    }
    std::string e = k.run(inPtrs, ptrs);
    if (!e.empty())
      badInput(e);
    return ptrs;
  };
  std::vector<HostTensor *> fusedPtrs = runOnce(*fused, fusedOut);
  std::vector<HostTensor *> naivePtrs;
  if (naive)
    naivePtrs = runOnce(*naive, naiveOut);

  std::vector<double> refOut, refLse, refOutHiddenNaN;
  bool inputsHaveNaN =
      std::any_of(inputs.begin(), inputs.end(), [](const HostTensor &t) {
        for (int64_t i = 0, n = t.numel(); i < n; ++i)
          if (std::isnan(t.getAsDouble(i)))
            return true;
        return false;
      });
  if (wantRef) {
    const HostTensor *mask = inputs.size() > 3 ? &inputs[3] : nullptr;
    referenceSdpa(*problem, inputs[0], inputs[1], inputs[2], mask, refOut,
                  problem->lse ? &refLse : nullptr, rowStride);
    // SPEC 1.8: a NaN stored in a hidden value row may reach the output (it
    // is multiplied by 0). Where it does, the reference that multiplies
    // hidden rows by 0 is NaN too, and a NaN there is accepted.
    if (inputsHaveNaN)
      referenceSdpa(*problem, inputs[0], inputs[1], inputs[2], mask,
                    refOutHiddenNaN, nullptr, rowStride,
                    /*hiddenValuesTimesZero=*/true);
  }
  // The reference for `got`: NaN wherever got and the hidden-NaN reference
  // both are (the comparison then skips the element).
  auto refFor = [&](const HostTensor &got, const std::vector<double> &ref,
                    bool isOut) {
    if (!isOut || refOutHiddenNaN.empty())
      return ref;
    std::vector<double> adjusted = ref;
    for (size_t i = 0; i < adjusted.size(); ++i)
      if (std::isnan(got.getAsDouble(static_cast<int64_t>(i))) &&
          std::isnan(refOutHiddenNaN[i]))
        adjusted[i] = std::numeric_limits<double>::quiet_NaN();
    return adjusted;
  };

  // Checks.
  std::vector<CheckResult> checks;
  const char *resultNames[2] = {"out", "lse"};
  for (size_t r = 0; r < fusedOut.size(); ++r) {
    std::string name =
        r < 2 && problem ? resultNames[r] : "result" + std::to_string(r);
    DType dt = shape.resultTypes[r];
    std::optional<double> naiveRel;
    if (wantRef) {
      const std::vector<double> &ref = r == 0 ? refOut : refLse;
      if (naive) {
        ErrorStats ns = compareSampled(
            naiveOut[r], refFor(naiveOut[r], ref, r == 0), rowStride);
        naiveRel = ns.relL2;
        checks.push_back(judge(name, "f64 (naive)", dt, ns, std::nullopt));
      }
      checks.push_back(
          judge(name, "f64", dt,
                compareSampled(fusedOut[r], refFor(fusedOut[r], ref, r == 0),
                               rowStride),
                naiveRel));
    }
    if (naive) {
      checks.push_back(judge(name, "naive", dt,
                             compareTensors(fusedOut[r], naiveOut[r]),
                             std::nullopt));
    }
  }
  // Finite inputs give results without NaN (hidden rows give 0; a float
  // mask may hold -inf): a NaN there is an element the kernel did not write
  // (outputs start poisoned) or a numerical failure, even where both
  // lowerings agree on it.
  bool inputsFinite =
      !inputsHaveNaN &&
      std::none_of(inputs.begin(), inputs.end(), [](const HostTensor &t) {
        for (int64_t i = 0, n = t.numel(); i < n; ++i) {
          double x = t.getAsDouble(i);
          if (std::isinf(x) && x > 0)
            return true;
        }
        return false;
      });
  if (inputsFinite) {
    auto nanCheck = [&](const std::string &name, const std::string &which,
                        const HostTensor &t) {
      int64_t nans = 0;
      for (int64_t i = 0, n = t.numel(); i < n; ++i)
        nans += std::isnan(t.getAsDouble(i));
      CheckResult c{name, which, "no NaN from finite inputs", {}, nans == 0};
      c.stats.hasNaN = nans > 0;
      c.stats.count = t.numel();
      if (nans)
        c.rule = std::to_string(nans) + " NaN from finite inputs";
      checks.push_back(c);
    };
    for (size_t r = 0; r < fusedOut.size(); ++r) {
      std::string name =
          r < 2 && problem ? resultNames[r] : "result" + std::to_string(r);
      nanCheck(name, "no-NaN", fusedOut[r]);
      if (naive)
        nanCheck(name, "no-NaN naive", naiveOut[r]);
    }
  }
  bool allPass = std::all_of(checks.begin(), checks.end(),
                             [](const CheckResult &c) { return c.pass; });

  // Timing.
  std::optional<Timing> fusedTime, naiveTime;
  std::optional<double> bandwidthGBs;
  if (benchRuns > 0) {
    if (peak) {
      measurePeak();
      bandwidthGBs = measureReadBandwidthGBs(threads, size_t(1) << 30);
    }
    fusedTime = bench(*fused, inPtrs, fusedPtrs, benchRuns);
    if (naive)
      naiveTime = bench(*naive, inPtrs, naivePtrs, benchRuns);
  }

  if (!dumpDir.empty()) {
    llvm::sys::fs::create_directories(dumpDir);
    for (size_t i = 0; i < inputs.size(); ++i)
      dumpTensor("arg" + std::to_string(i) + ".npy", inputs[i]);
    for (size_t r = 0; r < fusedOut.size(); ++r) {
      std::string suffix = r == 0              ? ""
                           : r == 1 && problem ? "_lse"
                                               : "_" + std::to_string(r);
      dumpTensor("fused" + suffix + ".npy", fusedOut[r]);
      if (naive)
        dumpTensor("naive" + suffix + ".npy", naiveOut[r]);
    }
  }

  // The summary.
  llvm::raw_ostream &os = out();
  os << "attn-run: @" << entryName;
  if (!specText.empty())
    os << " [" << specText << "]";
  os << "\n  inputs:";
  for (const HostTensor &t : inputs)
    os << " " << dtypeName(t.dtype) << "[" << t.shapeString() << "]";
  os << "  ("
     << (inputsDir.empty() ? "seed " + std::to_string(seed)
                           : "from " + inputsDir)
     << ")\n";
  if (!naiveSkip.empty())
    os << "  " << naiveSkip << "\n";
  if (!refSkip.empty())
    os << "  " << refSkip << "\n";
  if (!refNote.empty())
    os << "  " << refNote << "\n";
  for (const CheckResult &c : checks) {
    char line[320];
    if (c.oracle.rfind("no-NaN", 0) == 0) {
      std::snprintf(line, sizeof(line), "  %-4s %-12s %s  %s\n",
                    c.result.c_str(), c.oracle.c_str(),
                    c.pass ? "PASS" : "FAIL", c.rule.c_str());
      os << line;
      continue;
    }
    std::snprintf(line, sizeof(line),
                  "  %-4s %-12s max_abs %-10.3e rel_l2 %-10.3e %s  (%s)\n",
                  c.result.c_str(), c.oracle.c_str(), c.stats.maxAbs,
                  c.stats.relL2, c.pass ? "PASS" : "FAIL", c.rule.c_str());
    os << line;
  }
  if (checks.empty())
    os << "  no numerics check ran\n";
  auto gflops = [&](const Timing &t) { return flops / (t.medianMs * 1e6); };
  // The threads the run used: --threads, or every core (OpenMP's default).
  int usedThreads =
      threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  if (fusedTime) {
    char line[320];
    std::snprintf(line, sizeof(line), "  fused  %10.3f ms",
                  fusedTime->medianMs);
    os << line;
    if (flops) {
      std::snprintf(line, sizeof(line), "  %8.2f GFLOP/s", gflops(*fusedTime));
      os << line;
      if (peakGflops) {
        std::snprintf(line, sizeof(line), "  %5.1f%% of peak (%d x one core's)",
                      100 * gflops(*fusedTime) / (*peakGflops * usedThreads),
                      usedThreads);
        os << line;
      }
    }
    os << "  (median of " << fusedTime->runs << ", threads "
       << (threads ? std::to_string(threads) : std::string("all")) << ")\n";
    if (naiveTime) {
      std::snprintf(line, sizeof(line), "  naive  %10.3f ms",
                    naiveTime->medianMs);
      os << line;
      if (flops) {
        std::snprintf(line, sizeof(line), "  %8.2f GFLOP/s",
                      gflops(*naiveTime));
        os << line;
      }
      std::snprintf(line, sizeof(line), "  fused speed-up %.2fx\n",
                    naiveTime->medianMs / fusedTime->medianMs);
      os << line;
    }
    if (peakGflops) {
      std::snprintf(line, sizeof(line),
                    "  peak   %10.2f GFLOP/s  (one core, f32 FMA, measured "
                    "in this run)\n",
                    *peakGflops);
      os << line;
    }
    // The memory roofline matters where reading K and V takes longer than
    // the FLOPs at peak would (a decode step); elsewhere it is not shown.
    bool memoryBound = bandwidthGBs && kvBytes && peakGflops &&
                       kvBytes / (*bandwidthGBs * 1e6) >=
                           flops / (*peakGflops * usedThreads * 1e6);
    if (memoryBound) {
      double rooflineMs = kvBytes / (*bandwidthGBs * 1e6);
      std::snprintf(line, sizeof(line),
                    "  memory %10.2f GB/s read (%s threads); reading K and V "
                    "once takes %.3f ms: fused at %.1f%% of that roofline\n",
                    *bandwidthGBs,
                    threads ? std::to_string(threads).c_str() : "all",
                    rooflineMs, 100 * rooflineMs / fusedTime->medianMs);
      os << line;
    }
  }
  os << (allPass ? "PASS" : "FAIL") << "\n";

  if (json) {
    // llvm::json prints an object's keys sorted, whatever the order here.
    llvm::json::Object j;
    j["entry"] = entryName;
    if (!specText.empty())
      j["spec"] = specText;
    j["seed"] = static_cast<int64_t>(seed);
    j["threads"] = static_cast<int64_t>(threads);
    j["block_q"] = static_cast<int64_t>(cpuOptions.blockQ);
    j["block_kv"] = static_cast<int64_t>(cpuOptions.blockKV);
    if (flops)
      j["flops"] = flops;
    j["naive_skipped"] = naiveSkip;
    j["f64_skipped"] = refSkip;
    j["f64_row_stride"] = rowStride;
    llvm::json::Array checkList;
    for (const CheckResult &c : checks)
      checkList.push_back(
          llvm::json::Object{{"result", c.result},
                             {"oracle", c.oracle},
                             {"max_abs", jsonNumber(c.stats.maxAbs)},
                             {"rel_l2", jsonNumber(c.stats.relL2)},
                             {"ref_max_abs", jsonNumber(c.stats.refMaxAbs)},
                             {"has_nan", c.stats.hasNaN},
                             {"rule", c.rule},
                             {"pass", c.pass}});
    j["checks"] = std::move(checkList);
    if (fusedTime) {
      j["fused_ms"] = jsonNumber(fusedTime->medianMs);
      if (flops)
        j["fused_gflops"] = jsonNumber(gflops(*fusedTime));
      j["bench_runs"] = static_cast<int64_t>(fusedTime->runs);
    }
    if (bandwidthGBs) {
      j["read_gbs"] = jsonNumber(*bandwidthGBs);
      if (kvBytes && fusedTime)
        j["fused_pct_kv_roofline"] = jsonNumber(
            100 * kvBytes / (*bandwidthGBs * 1e6) / fusedTime->medianMs);
    }
    if (peakGflops) {
      j["peak_gflops"] = jsonNumber(*peakGflops);
      if (fusedTime && flops)
        j["fused_pct_peak"] =
            jsonNumber(100 * gflops(*fusedTime) / (*peakGflops * usedThreads));
    }
    if (naiveTime) {
      j["naive_ms"] = jsonNumber(naiveTime->medianMs);
      if (flops)
        j["naive_gflops"] = jsonNumber(gflops(*naiveTime));
      j["speedup"] = jsonNumber(naiveTime->medianMs / fusedTime->medianMs);
    }
    j["pass"] = allPass;
    llvm::outs() << llvm::formatv("{0}", llvm::json::Value(std::move(j)))
                 << "\n";
  }
  return allPass ? 0 : 1;
}
