//===- Aot.cpp - ahead-of-time compilation into a shared library ----------===//
//
// Part of the attn project.
//
// For each function: clone its module, rename the entry to an internal name,
// wrap it (tensor entries) into a destination-passing entry with a C
// interface, lower it with the target's pipeline, translate to LLVM IR,
// internalize everything but the C interface, optimize and emit an object.
// Then generate the C entry points (Shim.cpp) and link all of it with the
// system C compiler into one shared library; write the JSON beside it
// (AotAbi.cpp: the entries' ABI and that JSON).
//
//===----------------------------------------------------------------------===//

#include "attn/Compile/Aot.h"

#include "Shim.h"

#include "attn-c/attn.h"

#include "attn/Pipelines/Pipelines.h"
#include "attn/Spec/EntryWrapper.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/Problem.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::compile;
using exec::makeError;

//===----------------------------------------------------------------------===//
// Lowering.
//===----------------------------------------------------------------------===//

/// `pipeline`'s knobs of `values` set on `options` (its own parser, as
/// attn-opt would read them).
static llvm::Error setKnobs(mlir::detail::PassOptions &options,
                            tuning::Pipeline pipeline,
                            const tuning::KnobValues &values) {
  std::string text = values.pipelineOptions(pipeline), errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(options.parseFromString(text, errorStream)))
    return makeError("bad pipeline options '" + text +
                     "': " + StringRef(errors).trim());
  return llvm::Error::success();
}

llvm::Error
mlir::attn::compile::buildCudaPipelineFor(OpPassManager &pm,
                                          const CudaPipelineOptions &options) {
  GpuPipelineOptions gpu;
  gpu.chip = options.chip;
  gpu.toolkit = options.toolkit;
  gpu.format = options.format;
  if (options.lowering == Lowering::Naive) {
    buildNaiveGpuPipeline(pm, gpu);
    return llvm::Error::success();
  }
  // The knobs given; the pipeline's defaults for the others.
  if (llvm::Error e = setKnobs(gpu, tuning::Pipeline::Gpu, options.tuning))
    return e;
  buildGpuPipeline(pm, gpu);
  return llvm::Error::success();
}

static CudaPipelineOptions cudaPipelineOptions(const AotOptions &options,
                                               StringRef format) {
  CudaPipelineOptions cuda;
  cuda.format = format.str();
  cuda.chip = options.chip;
  cuda.toolkit = options.cudaToolkit;
  cuda.lowering = options.lowering;
  cuda.tuning = options.tuning;
  return cuda;
}

bool AotOptions::openmp() const {
  return target == Target::Cpu &&
         tuning.withLibraryDefaults(tuning::Pipeline::Cpu)
             .getBool(tuning::KnobId::CpuOpenmp)
             .value_or(true);
}

/// Makes @`impl` a destination-passing wrapper (results written into the
/// caller's buffers) around the tensor entry, renamed `<impl>_tensors`, and
/// adds the inlining that folds the entry into it.
static llvm::Error wrapInDestinationPassingEntry(ModuleOp module,
                                                 func::FuncOp entry,
                                                 StringRef impl,
                                                 OpPassManager &pm) {
  SymbolTable::setSymbolName(entry, (impl + "_tensors").str());
  if (llvm::Error e = exec::buildDestinationPassingEntry(module, entry, impl))
    return e;
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  return llvm::Error::success();
}

/// The kernels of the fused cpu lowering: --kernels, with auto resolved from
/// the features of --cpu (this machine's for native); a forced path --cpu
/// cannot run is an error. `amxFp16`: whether --cpu has AMX-FP16.
/// `blendStores`: blend-stores' default for them on
/// --cpu.
static llvm::Expected<CpuKernels>
cpuKernelsFor(const AotOptions &options, bool &blendStores, bool &amxFp16) {
  using tuning::KnobId;
  // Checked against Tuning.td's paths (the kernels knob's choices).
  CpuKernels kernels = CpuKernels::Auto;
  if (std::optional<StringRef> given =
          options.tuning.lookup(KnobId::CpuKernels))
    kernels = *parseCpuKernels(*given);
  llvm::StringMap<bool> hostFeatures;
  std::unique_ptr<llvm::MCSubtargetInfo> info;
  if (options.cpu == "native") {
    hostFeatures = llvm::sys::getHostCPUFeatures();
  } else {
    llvm::InitializeNativeTarget();
    llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
    std::string error;
    if (const llvm::Target *target =
            llvm::TargetRegistry::lookupTarget(triple, error))
      info.reset(target->createMCSubtargetInfo(triple, options.cpu, ""));
  }
  auto hasFeature = [&](llvm::StringRef name) {
    if (!info)
      return hostFeatures.lookup(name);
    return info->checkFeatures(("+" + name).str());
  };
  CpuKernels resolved = resolveCpuKernels(kernels, hasFeature);
  bool emulated = options.tuning.getBool(KnobId::CpuEmulateAmx).value_or(false);
  if (emulated && resolved != CpuKernels::Amx)
    return makeError("--emulate-amx goes with --kernels amx (the other "
                     "kernels have no tiles to emulate)");
  // Emulated, the amx kernels need no more than the avx512-bf16 ones.
  if (!canRunCpuKernels(emulated ? CpuKernels::Avx512Bf16 : kernels,
                        hasFeature))
    return makeError("--kernels " + stringifyCpuKernels(kernels) +
                     (emulated ? " --emulate-amx" : "") +
                     " needs CPU features that --cpu " + options.cpu +
                     " does not have");
  blendStores = blendStoresByDefault(resolved, hasFeature);
  amxFp16 =
      resolved == CpuKernels::Amx && options.tuning.getBool(KnobId::CpuAmxFp16)
                                         .value_or(hasFeature("amx-fp16"));
  if (amxFp16 && !emulated && !hasFeature("amx-fp16"))
    return makeError("--amx-fp16 needs AMX-FP16, which --cpu " + options.cpu +
                     " does not have (or --emulate-amx)");
  return resolved;
}

/// Whether the lowered `module` calls AMX tile intrinsics (the amx kernels'
/// products): its library must then ask the OS for the AMX state.
static bool runsAmxTiles(ModuleOp module) {
  WalkResult found = module.walk([](LLVM::CallIntrinsicOp call) {
    StringRef name = call.getIntrin();
    return name.starts_with("llvm.x86.tile") || name.starts_with("llvm.x86.tdp")
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// Clones the function's module, gives its entry the internal name and
/// lowers it to the LLVM dialect for `options.target` (cuda: its kernels in
/// gpu.binary ops of `gpuFormat`).
static llvm::Expected<OwningOpRef<ModuleOp>>
lowerFunction(AotFunction &function, const AotOptions &options,
              StringRef gpuFormat = "fatbin") {
  OwningOpRef<ModuleOp> module = function.module->clone();
  auto entry = module->lookupSymbol<func::FuncOp>(function.entry);
  if (!entry || entry.isDeclaration())
    return makeError("no function @" + function.entry + " with a body");
  std::string impl = implName(function.name);
  if (failed(SymbolTable::replaceAllSymbolUses(
          entry, StringAttr::get(module->getContext(), impl), *module)))
    return makeError("cannot rename @" + function.entry);
  SymbolTable::setSymbolName(entry, impl);

  FunctionType type = entry.getFunctionType();
  bool overTensors =
      llvm::all_of(type.getInputs(), llvm::IsaPred<RankedTensorType>) &&
      llvm::all_of(type.getResults(), llvm::IsaPred<RankedTensorType>);
  PassManager pm(module->getContext());
  if (options.target == Target::Cpu) {
    if (!overTensors)
      return makeError("@" + function.entry +
                       ": the cpu target needs a function over tensors");
    if (llvm::Error e = wrapInDestinationPassingEntry(*module, entry, impl, pm))
      return std::move(e);
    if (options.lowering == Lowering::Naive) {
      buildNaiveCpuPipeline(pm);
    } else {
      CpuPipelineOptions cpu;
      tuning::KnobValues knobs =
          options.tuning.withLibraryDefaults(tuning::Pipeline::Cpu);
      if (llvm::Error e = setKnobs(cpu, tuning::Pipeline::Cpu, knobs))
        return std::move(e);
      bool blendStores = false, amxFp16 = false;
      llvm::Expected<CpuKernels> kernels =
          cpuKernelsFor(options, blendStores, amxFp16);
      if (!kernels)
        return kernels.takeError();
      cpu.kernels = *kernels;
      // --cpu's defaults, not the host's, unless given.
      cpu.blendStores =
          knobs.getBool(tuning::KnobId::CpuBlendStores).value_or(blendStores);
      cpu.amxFp16 = amxFp16;
      buildCpuPipeline(pm, cpu);
    }
  } else if (overTensors) {
    // As on the cpu: a destination-passing wrapper over device buffers. The
    // results the GPU function would allocate are materialized in the
    // caller's buffers: bufferization writes the kernels' results there
    // directly, or copies them on the device (attn-gpu-device-buffers turns
    // a memref.copy into a linalg.copy kernel).
    if (llvm::Error e = wrapInDestinationPassingEntry(*module, entry, impl, pm))
      return std::move(e);
    if (llvm::Error e =
            buildCudaPipelineFor(pm, cudaPipelineOptions(options, gpuFormat)))
      return std::move(e);
  } else {
    if (!type.getResults().empty() ||
        !llvm::all_of(type.getInputs(), llvm::IsaPred<MemRefType>))
      return makeError(
          "@" + function.entry +
          ": the cuda target needs a function over tensors, or one over "
          "memrefs with no results");
    entry->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   UnitAttr::get(module->getContext()));
    for (auto f : module->getOps<func::FuncOp>())
      if (f != entry && !f.isDeclaration())
        f.setPrivate();
    if (llvm::Error e =
            buildCudaPipelineFor(pm, cudaPipelineOptions(options, gpuFormat)))
      return std::move(e);
  }
  if (failed(pm.run(*module)))
    return makeError("lowering @" + function.entry +
                     " failed (see the diagnostics above)");
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// LLVM IR, object file, link.
//===----------------------------------------------------------------------===//

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const AotOptions &options) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for " + triple.str() + ": " + error);
  std::string cpu = options.cpu, features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures f;
    for (auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      f.AddFeature(name, enabled);
    features = f.getString();
  } else if (std::unique_ptr<llvm::MCSubtargetInfo> info(
                 target->createMCSubtargetInfo(triple, cpu, ""));
             cpu != "generic" && !info->isCPUStringValid(cpu)) {
    return makeError("--cpu " + options.cpu + " is not a CPU LLVM knows for " +
                     triple.str());
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return makeError("cannot create a target machine for " + cpu);
  return std::move(tm);
}

/// Translates `module` to LLVM IR, keeps only the C interface of `function`
/// external (hidden: the shim calls it), optimizes at -O3 and writes an
/// object file.
static llvm::Error emitObject(ModuleOp module, const AotFunction &function,
                              llvm::TargetMachine &tm,
                              llvm::StringRef objectPath) {
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module->getContext()->appendDialectRegistry(registry);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, function.name);
  if (!llvmModule)
    return makeError("translating @" + function.entry +
                     " to LLVM IR failed (see the diagnostics above)");
  llvmModule->setDataLayout(tm.createDataLayout());
  llvmModule->setTargetTriple(tm.getTargetTriple());
  std::string keep = "_mlir_ciface_" + implName(function.name);
  for (llvm::Function &f : *llvmModule) {
    if (f.isDeclaration())
      continue;
    if (f.getName() == keep)
      f.setVisibility(llvm::GlobalValue::HiddenVisibility);
    else
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  for (llvm::GlobalVariable &g : llvmModule->globals())
    if (!g.isDeclaration() && !g.getName().starts_with("llvm."))
      g.setLinkage(llvm::GlobalValue::InternalLinkage);

  auto optimize = makeOptimizingTransformer(3, 0, &tm);
  if (llvm::Error e = optimize(llvmModule.get()))
    return makeError("optimizing @" + function.entry +
                     " failed: " + toString(std::move(e)));

  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write " + objectPath + ": " + ec.message());
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return makeError("the target machine cannot emit an object file");
  codegen.run(*llvmModule);
  return llvm::Error::success();
}

static llvm::Expected<std::string> findCCompiler(const AotOptions &options) {
  std::string cc = options.cCompiler;
  if (cc.empty())
    if (const char *env = getenv("CC"); env && *env)
      cc = env;
  if (cc.empty())
    cc = ATTN_C_COMPILER;
  if (llvm::sys::path::is_absolute(cc))
    return cc;
  auto found = llvm::sys::findProgramByName(cc);
  if (!found)
    return makeError("C compiler '" + cc + "' not found (set CC)");
  return *found;
}

#ifdef ATTN_CUDA_RUNTIME_ARCHIVE
/// The CUDA runtime archive that cuda libraries link: the one beside an
/// installed executable (PREFIX/bin and PREFIX/lib, as `cmake --install` and
/// the Python package lay them out), else the build's.
static std::string findCudaRuntimeArchive() {
  static int anchor;
  std::string self = llvm::sys::fs::getMainExecutable("attn-compile", &anchor);
  llvm::SmallString<256> installed(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(self)));
  llvm::sys::path::append(installed, "lib",
                          llvm::sys::path::filename(ATTN_CUDA_RUNTIME_ARCHIVE));
  if (!self.empty() && llvm::sys::fs::exists(installed))
    return std::string(installed);
  return ATTN_CUDA_RUNTIME_ARCHIVE;
}
#endif

/// Runs `args` and fails with its captured output.
static llvm::Error run(llvm::ArrayRef<std::string> args,
                       llvm::StringRef logPath) {
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(logPath), llvm::StringRef(logPath)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(argv[0], argv, std::nullopt, redirects, 0,
                                     0, &error);
  if (rc == 0)
    return llvm::Error::success();
  std::string log;
  if (auto buffer = llvm::MemoryBuffer::getFile(logPath))
    log = (*buffer)->getBuffer().trim().str();
  std::replace(log.begin(), log.end(), '\n', ' ');
  if (log.size() > 600)
    log = log.substr(0, 600) + "...";
  return makeError("linking with " + args[0] + " failed" +
                   (error.empty() ? "" : ": " + error) +
                   (log.empty() ? "" : ": " + log));
}

/// nvdisasm for --emit sass: the given one, the toolkit's, one on PATH, or
/// the one of PyPI's nvidia-cuda-nvdisasm wheel in python3.
static llvm::Expected<std::string> findNvdisasm(const AotOptions &options,
                                                StringRef tmpDir) {
  if (!options.nvdisasm.empty())
    return options.nvdisasm;
  std::string inToolkit = options.cudaToolkit + "/bin/nvdisasm";
  if (llvm::sys::fs::can_execute(inToolkit))
    return inToolkit;
  if (auto onPath = llvm::sys::findProgramByName("nvdisasm"))
    return *onPath;
  if (auto python = llvm::sys::findProgramByName("python3")) {
    std::string out = (tmpDir + "/nvdisasm-path.txt").str();
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out),
                                            StringRef(out)};
    StringRef argv[] = {
        *python, "-c",
        "import importlib.metadata as m; print([str(f.locate()) "
        "for f in m.files('nvidia-cuda-nvdisasm') if f.name "
        "== 'nvdisasm'][0])"};
    if (llvm::sys::ExecuteAndWait(*python, argv, std::nullopt, redirects) == 0)
      if (auto buffer = llvm::MemoryBuffer::getFile(out)) {
        std::string path = (*buffer)->getBuffer().trim().str();
        if (llvm::sys::fs::can_execute(path))
          return path;
      }
  }
  return makeError("--emit sass needs nvdisasm: not in " + options.cudaToolkit +
                   "/bin, on PATH or in python3's nvidia-cuda-nvdisasm "
                   "(scripts/setup.sh installs it; or give --nvdisasm)");
}

/// Writes the PTX of every kernel of `functions` beside the library
/// (LIB.ptx) and, with emitSass, their SASS (LIB.sass): the functions
/// lowered again with the kernels as PTX (the same pipeline, format=isa),
/// each kernel assembled by the toolkit's ptxas for the chip and
/// disassembled.
static llvm::Error emitKernelCode(std::vector<AotFunction> &functions,
                                  const AotOptions &options,
                                  StringRef outputPath, StringRef tmpDir) {
  std::string nvdisasm;
  if (options.emitSass) {
    auto found = findNvdisasm(options, tmpDir);
    if (!found)
      return found.takeError();
    nvdisasm = *found;
  }
  std::string ptxText, sassText, failure;
  for (AotFunction &f : functions) {
    auto lowered = lowerFunction(f, options, "isa");
    if (!lowered)
      return lowered.takeError();
    WalkResult walk = (*lowered)->walk([&](gpu::BinaryOp binary) {
      for (Attribute object : binary.getObjects()) {
        auto ptx = cast<gpu::ObjectAttr>(object).getObject().getValue();
        std::string header = "// attn-compile: @" + f.name + ", kernel @" +
                             binary.getSymName().str() + " (" + options.chip +
                             ")\n";
        ptxText += header + ptx.str() + "\n";
        if (!options.emitSass)
          continue;
        std::string base = (tmpDir + "/" + binary.getSymName()).str();
        {
          std::error_code ec;
          llvm::raw_fd_ostream os(base + ".ptx", ec);
          if (ec) {
            failure = "cannot write " + base + ".ptx";
            return WalkResult::interrupt();
          }
          os << ptx;
        }
        std::string ptxas = options.cudaToolkit + "/bin/ptxas";
        if (llvm::Error e = run({ptxas, "-arch=" + options.chip, base + ".ptx",
                                 "-o", base + ".cubin"},
                                base + ".ptxas.log")) {
          failure = toString(std::move(e));
          return WalkResult::interrupt();
        }
        std::string sass = base + ".sass";
        std::optional<StringRef> redirects[] = {std::nullopt, StringRef(sass),
                                                StringRef(sass)};
        std::string cubin = base + ".cubin";
        StringRef argv[] = {nvdisasm, "-c", cubin};
        if (llvm::sys::ExecuteAndWait(nvdisasm, argv, std::nullopt,
                                      redirects) != 0) {
          failure = nvdisasm + " failed";
          return WalkResult::interrupt();
        }
        if (auto buffer = llvm::MemoryBuffer::getFile(sass))
          sassText += header + (*buffer)->getBuffer().str() + "\n";
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return makeError("--emit sass: a kernel of @" + f.name + ": " + failure);
  }
  for (auto [enabled, extension, text] :
       {std::tuple{options.emitPtx, "ptx", &ptxText},
        std::tuple{options.emitSass, "sass", &sassText}}) {
    if (!enabled)
      continue;
    std::string path = sidePathFor(outputPath, extension);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return makeError("cannot write " + path + ": " + ec.message());
    os << *text;
  }
  return llvm::Error::success();
}

static bool isCIdentifier(llvm::StringRef s) {
  if (s.empty() || llvm::isDigit(s[0]))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

llvm::Error mlir::attn::compile::compileLibrary(
    MLIRContext &context, std::vector<AotFunction> &functions,
    const AotOptions &options, llvm::StringRef outputPath) {
  if (functions.empty())
    return makeError("nothing to compile");
  if (options.target == Target::Cuda) {
    GpuPipelineOptions gpu;
    gpu.chip = options.chip;
    if (llvm::Error e = verifyGpuPipelineOptions(gpu))
      return makeError("--chip: " + toString(std::move(e)));
  }
  std::vector<FunctionAbi> abis;
  for (AotFunction &f : functions) {
    if (!isCIdentifier(f.name) ||
        llvm::StringRef(f.name).starts_with("attn_") ||
        llvm::StringRef(f.name).starts_with("__attn") ||
        llvm::StringRef(f.name).starts_with("mgpu"))
      return makeError("function name '" + f.name +
                       "' must be a C identifier not starting with attn_, "
                       "__attn or mgpu");
    for (const FunctionAbi &other : abis)
      if (other.name == f.name)
        return makeError("two functions named '" + f.name + "'");
    auto entry = f.module->lookupSymbol<func::FuncOp>(f.entry);
    if (!entry || entry.isDeclaration())
      return makeError("no function @" + f.entry + " with a body");
    auto abi = analyzeAbi(entry, f.name);
    if (!abi)
      return abi.takeError();
    if (f.spec) {
      abi->spec = f.spec->toString();
      if (abi->dims.empty())
        abi->flops = f.spec->toProblem().flops();
    }
    abis.push_back(std::move(*abi));
  }

  auto tm = createTargetMachine(options);
  if (!tm)
    return tm.takeError();
  auto cc = findCCompiler(options);
  if (!cc)
    return cc.takeError();

  llvm::SmallString<128> tmpDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-compile", tmpDir))
    return makeError("cannot create a temporary directory: " + ec.message());
  auto cleanup =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(tmpDir); });

  std::vector<std::string> linkArgs = {
      *cc,          "-shared", "-fPIC",         "-O2", "-fvisibility=hidden",
      "-std=gnu11", "-o",      outputPath.str()};
  bool amx = false;
  for (auto [i, f] : llvm::enumerate(functions)) {
    auto lowered = lowerFunction(f, options);
    if (!lowered)
      return lowered.takeError();
    amx |= runsAmxTiles(**lowered);
    std::string object = (tmpDir + "/f" + Twine(i) + ".o").str();
    if (llvm::Error e = emitObject(**lowered, f, **tm, object))
      return e;
    linkArgs.push_back(object);
  }
  std::string shim = (tmpDir + "/entries.c").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(shim, ec);
    if (ec)
      return makeError("cannot write " + shim + ": " + ec.message());
    os << generateShim(abis, options.target, amx);
  }
  linkArgs.push_back(shim);
  if (options.target == Target::Cuda) {
#ifdef ATTN_CUDA_RUNTIME_ARCHIVE
    linkArgs.push_back(findCudaRuntimeArchive());
#else
    return makeError("this attn-compile was built without the CUDA runtime "
                     "(no cuda.h when attn was configured)");
#endif
  }
  if (options.openmp()) {
    linkArgs.push_back(ATTN_OMP_LIBRARY);
    linkArgs.push_back(
        ("-Wl,-rpath," + llvm::sys::path::parent_path(ATTN_OMP_LIBRARY)).str());
  }
  // --as-needed before -lm: the linker applies it to the libraries after it,
  // so libm is NEEDED only by a library that calls it (Debian's gcc driver
  // passes --as-needed itself; with clang-22 as the C compiler an unused
  // libm was NEEDED).
  for (const char *flag : {"-Wl,--as-needed", "-lm", "-Wl,--no-undefined",
                           "-Wl,-Bsymbolic", "-static-libgcc"})
    linkArgs.push_back(flag);
  if (llvm::Error e = run(linkArgs, (tmpDir + "/link.log").str()))
    return e;
  if (options.target == Target::Cuda && (options.emitPtx || options.emitSass))
    if (llvm::Error e = emitKernelCode(functions, options, outputPath, tmpDir))
      return e;

  std::string jsonPath = jsonPathFor(outputPath);
  std::error_code ec;
  llvm::raw_fd_ostream json(jsonPath, ec);
  if (ec)
    return makeError("cannot write " + jsonPath + ": " + ec.message());
  json << llvm::formatv("{0:2}", describeLibrary(abis, options)) << "\n";
  return llvm::Error::success();
}

llvm::Expected<AotFunction> mlir::attn::compile::functionFromSpec(
    MLIRContext &context, const exec::SdpaSpec &spec, llvm::StringRef name) {
  AotFunction f;
  f.name = name.str();
  f.entry = "sdpa";
  f.module = exec::buildSdpaModule(context, spec, f.entry);
  if (!f.module)
    return makeError("cannot build the module of --sdpa " + spec.toString());
  f.spec = spec;
  return std::move(f);
}

llvm::Expected<AotFunction> mlir::attn::compile::functionFromFile(
    MLIRContext &context, llvm::SourceMgr &sourceMgr, llvm::StringRef path,
    llvm::StringRef entry, llvm::StringRef name) {
  std::string error;
  auto file = openInputFile(path, &error);
  if (!file)
    return makeError(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  AotFunction f;
  {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    f.module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!f.module)
    return makeError("could not parse " + path +
                     " (see the diagnostics above)");
  func::FuncOp found;
  if (entry.empty()) {
    // The first function with a body: an attn.sdpa caller if there is one.
    llvm::Expected<func::FuncOp> sdpaEntry =
        exec::findEntry(*f.module, "", path);
    if (sdpaEntry) {
      found = *sdpaEntry;
    } else {
      llvm::consumeError(sdpaEntry.takeError());
      for (auto fn : f.module->getOps<func::FuncOp>())
        if (!fn.isDeclaration() && !found)
          found = fn;
    }
    if (!found)
      return makeError(path + ": no function with a body");
  } else {
    llvm::Expected<func::FuncOp> named =
        exec::findEntry(*f.module, entry, path);
    if (!named)
      return named.takeError();
    found = *named;
  }
  f.entry = found.getSymName().str();
  f.name = name.empty() ? f.entry : name.str();
  return std::move(f);
}
