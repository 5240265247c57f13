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
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <tuple>

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
    kernels("kernels",
            cl::desc("cpu, fused: auto (default: the best --cpu has), "
                     "amx, avx512-bf16, avx512 or avx2"),
            cl::init("auto"), cl::cat(category));
static cl::opt<bool>
    openmp("openmp",
           cl::desc("cpu: run query blocks on OpenMP threads (links libomp)"),
           cl::init(false), cl::cat(category));
static cl::opt<std::string> ompSchedule(
    "omp-schedule",
    cl::desc("cpu, with --openmp: the query-block loops' schedule: guided "
             "(default), dynamic or static"),
    cl::init(AttnOmpScheduleOptions{}.kind), cl::cat(category));
static cl::opt<int64_t>
    blockQ("block-q",
           cl::desc("fused: query rows per block (cpu) or CTA (cuda)"),
           cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    blockKV("block-kv", cl::desc("fused: keys per block (cpu) or tile (cuda)"),
            cl::init(0), cl::cat(category));
static cl::opt<int64_t> decodeRows(
    "decode-rows",
    cl::desc("fused: the decode kernels for Lq * (Hq / Hkv) <= N (0: never; "
             "default: the pipeline's, cpu 8 on the 16-lane kernels, 7 on the "
             "avx2 kernels, cuda 32)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> kvSplits(
    "kv-splits",
    cl::desc("fused: key splits of the decode kernels (default 0: auto; cpu: "
             "where there are fewer than 16 query blocks and at least 2048 "
             "keys, 1: never; cuda: at run time from B * Hkv and the SMs)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> narrowBlockQ(
    "narrow-block-q",
    cl::desc("cpu, fused: query rows per block for ops whose D and Dv are at "
             "most 64 without a causal or window band (0: block-q; default: "
             "the pipeline's for the kernels)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t>
    regBlock("reg-block",
             cl::desc("cpu, fused: keys or value columns per register block "
                      "(default: the kernels')"),
             cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    rowVectors("row-vectors",
               cl::desc("cpu, fused: row vectors per register block "
                        "(default: the kernels')"),
               cl::init(0), cl::cat(category));
static cl::opt<int64_t> decodePrefetchLocality(
    "decode-prefetch-locality",
    cl::desc("cpu, fused: the decode kernel's prefetches of K and V ahead: 3 "
             "into L1 (prefetcht0), 2 into L2 (prefetcht1, the default), 1 "
             "prefetcht2, 0 prefetchnta"),
    cl::init(-1), cl::cat(category));
static cl::opt<std::string> decodePrefetch(
    "decode-prefetch",
    cl::desc("cpu, fused: which decode kernels prefetch K and V ahead: auto "
             "(all but the f32 ones whose P.V takes one group of "
             "accumulators; the default on the avx512 and avx512-bf16 "
             "kernels), all (the default on the amx and avx2 kernels) or "
             "none"),
    cl::init(""), cl::cat(category));
static cl::opt<int64_t> prefetchSpread(
    "prefetch-spread",
    cl::desc("cpu, fused: most reduction steps per prefetch in the f32 "
             "products, a power of two (default: the kernels')"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> blendStores(
    "blend-stores",
    cl::desc("cpu, fused: masked tiles stored by blends, never by masked "
             "stores (default: --cpu's, on for the avx2 kernels on x86; "
             "--blend-stores=false turns it off)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> emulateAmx(
    "emulate-amx",
    cl::desc("cpu, fused, with --kernels amx: the AMX tile ops as vector "
             "code (attn-emulate-amx), so that the library runs, slowly, on "
             "a CPU with AVX512-BF16 but no AMX; for tests"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> amxFp16(
    "amx-fp16",
    cl::desc("cpu, fused, on the amx kernels: f16 products on AMX-FP16 "
             "tiles rather than as bf16 parts (default: whether --cpu has "
             "AMX-FP16)"),
    cl::init(false), cl::cat(category));
static cl::opt<int64_t> decodeStages(
    "decode-stages",
    cl::desc("cuda, fused: shared-memory stages of the decode kernel: 1 "
             "(default) or 2 (K and V double-buffered)"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> decodeUnroll(
    "decode-unroll",
    cl::desc("cuda, fused: keys per iteration of the one-stage decode "
             "kernel's P.V loop: 1, 2 (default), 4 or 8"),
    cl::init(-1), cl::cat(category));
static cl::opt<int64_t> sharedMemory(
    "shared-memory",
    cl::desc("cuda, fused: dynamic shared memory per CTA in bytes, up to the "
             "chip's limit: larger tiles (default 0: 48 KiB without opt-in)"),
    cl::init(-1), cl::cat(category));
static cl::opt<bool> foldScale(
    "fold-scale",
    cl::desc("cuda, fused: the score scale folded into exp2's argument in the "
             "tensor-core kernel (one FMA per score; default on, "
             "--fold-scale=false for the scaled path)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> lazyRescale(
    "lazy-rescale",
    cl::desc("cuda, fused: the tensor-core kernel rescales its accumulators "
             "only where a row max grew (exact; default off)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string>
    cudaToolkit("cuda-toolkit", cl::desc("cuda: the CUDA toolkit's root"),
                cl::init("/usr/local/cuda"), cl::cat(category));
static cl::opt<std::string> output("o", cl::desc("The library, e.g. libfoo.so"),
                                   cl::init(""), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "attn-compile: error: " << message << "\n";
  return 2;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "attn-compile: compile attn.sdpa into a shared library with a C "
          "ABI\n",
          &llvm::errs()))
    return 2;

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
  if (options.target == compile::Target::Cuda &&
      (openmp || ompSchedule.getNumOccurrences() || cpu.getNumOccurrences() ||
       kernels.getNumOccurrences()))
    return fail("--openmp, --omp-schedule, --cpu and --kernels are for "
                "--target cpu");
  if (ompSchedule.getNumOccurrences() && !openmp)
    return fail("--omp-schedule is an option of --openmp");
  if (!isOmpScheduleKind(ompSchedule))
    return fail("--omp-schedule must be static, dynamic or guided, got '" +
                ompSchedule + "'");
  if (lowering == "fused")
    options.lowering = compile::Lowering::Fused;
  else if (lowering == "naive")
    options.lowering = compile::Lowering::Naive;
  else
    return fail("--lowering must be fused or naive, got '" + lowering + "'");
  if (options.lowering == compile::Lowering::Naive &&
      (blockQ.getNumOccurrences() || blockKV.getNumOccurrences() ||
       ompSchedule.getNumOccurrences()))
    return fail("--block-q, --block-kv and --omp-schedule are options of the "
                "fused lowering");
  for (auto [flag, value] :
       {std::pair{"block-q", &blockQ}, std::pair{"block-kv", &blockKV}})
    if (value->getNumOccurrences() && *value <= 0)
      return fail(llvm::Twine("--") + flag + " must be positive");
  // Options of --target cuda's fused lowering only.
  auto cudaFusedOnly = [&](const char *flag) {
    return fail(llvm::Twine("--") + flag +
                " is an option of --target cuda's fused lowering");
  };
  bool cudaFused = options.target == compile::Target::Cuda &&
                   options.lowering == compile::Lowering::Fused;
  compile::CudaKernelOptions &cudaKernels = options.cudaKernels;
  compile::CpuKernelOptions &cpuKernels = options.cpuKernels;
  bool cpuFused = options.target == compile::Target::Cpu &&
                  options.lowering == compile::Lowering::Fused;
  // Options of either target's fused lowering.
  for (auto [flag, value, cudaField, cpuField] :
       {std::tuple{"decode-rows", &decodeRows, &cudaKernels.decodeRows,
                   &cpuKernels.decodeRows},
        std::tuple{"kv-splits", &kvSplits, &cudaKernels.kvSplits,
                   &cpuKernels.kvSplits}}) {
    if (!value->getNumOccurrences())
      continue;
    if (!cudaFused && !cpuFused)
      return fail(llvm::Twine("--") + flag +
                  " is an option of the fused lowering");
    if (*value < 0)
      return fail(llvm::Twine("--") + flag + " must be >= 0");
    *(cudaFused ? cudaField : cpuField) = *value;
  }
  // Options of --target cpu's fused lowering only.
  auto cpuFusedOnly = [&](const char *flag) {
    return fail(llvm::Twine("--") + flag +
                " is an option of --target cpu's fused lowering");
  };
  for (auto [flag, value, field, least] :
       {std::tuple{"narrow-block-q", &narrowBlockQ, &cpuKernels.narrowBlockQ,
                   0},
        std::tuple{"reg-block", &regBlock, &cpuKernels.regBlock, 1},
        std::tuple{"row-vectors", &rowVectors, &cpuKernels.rowVectors, 1},
        std::tuple{"prefetch-spread", &prefetchSpread,
                   &cpuKernels.prefetchSpread, 1},
        std::tuple{"decode-prefetch-locality", &decodePrefetchLocality,
                   &cpuKernels.decodePrefetchLocality, 0}}) {
    if (!value->getNumOccurrences())
      continue;
    if (!cpuFused)
      return cpuFusedOnly(flag);
    if (*value < least)
      return fail(llvm::Twine("--") + flag +
                  (least ? " must be positive" : " must be >= 0"));
    *field = *value;
  }
  if (prefetchSpread.getNumOccurrences() &&
      !llvm::isPowerOf2_64(prefetchSpread))
    return fail("--prefetch-spread must be a power of two");
  if (decodePrefetchLocality.getNumOccurrences() && decodePrefetchLocality > 3)
    return fail("--decode-prefetch-locality must be 0, 1, 2 or 3");
  if (decodePrefetch.getNumOccurrences()) {
    if (!cpuFused)
      return cpuFusedOnly("decode-prefetch");
    if (decodePrefetch != "auto" && decodePrefetch != "all" &&
        decodePrefetch != "none")
      return fail("--decode-prefetch must be auto, all or none");
    cpuKernels.decodePrefetch = decodePrefetch;
  }
  for (auto [flag, value, field] :
       {std::tuple{"blend-stores", &blendStores, &cpuKernels.blendStores},
        std::tuple{"emulate-amx", &emulateAmx, &cpuKernels.emulateAmx},
        std::tuple{"amx-fp16", &amxFp16, &cpuKernels.amxFp16}}) {
    if (!value->getNumOccurrences())
      continue;
    if (!cpuFused)
      return cpuFusedOnly(flag);
    *field = *value;
  }
  for (auto [flag, value, field] :
       {std::tuple{"decode-stages", &decodeStages, &cudaKernels.decodeStages},
        std::tuple{"decode-unroll", &decodeUnroll, &cudaKernels.decodeUnroll},
        std::tuple{"shared-memory", &sharedMemory,
                   &cudaKernels.sharedMemory}}) {
    if (!value->getNumOccurrences())
      continue;
    if (!cudaFused)
      return cudaFusedOnly(flag);
    if (*value < 0)
      return fail(llvm::Twine("--") + flag + " must be >= 0");
    *field = *value;
  }
  for (auto [flag, value, field] :
       {std::tuple{"fold-scale", &foldScale, &cudaKernels.foldScale},
        std::tuple{"lazy-rescale", &lazyRescale, &cudaKernels.lazyRescale}}) {
    if (!value->getNumOccurrences())
      continue;
    if (!cudaFused)
      return cudaFusedOnly(flag);
    *field = *value;
  }
  options.chip = chip;
  options.cpu = cpu;
  options.kernels = kernels;
  options.openmp = openmp;
  if (ompSchedule.getNumOccurrences())
    options.ompSchedule = ompSchedule;
  if (blockQ)
    options.blockQ = blockQ;
  if (blockKV)
    options.blockKV = blockKV;
  options.cudaToolkit = cudaToolkit;

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
