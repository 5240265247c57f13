//===- Jit.cpp - compile and run an attn entry point with the JIT ---------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Jit.h"

#include "attn/Spec/EntryWrapper.h"
#include "attn/Spec/Error.h"
#include "attn/Spec/Problem.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <unistd.h>

// From libomp (the LLVM OpenMP runtime the generated code calls into); its
// omp.h sits among clang's builtin headers, which the host compiler must not
// see.
extern "C" void omp_set_num_threads(int);

using namespace mlir;
using namespace mlir::attn::exec;

static constexpr const char *kEntryName = "__attn_entry";

JitKernel::~JitKernel() = default;

//===----------------------------------------------------------------------===//
// The generated code's allocations
//===----------------------------------------------------------------------===//

static std::atomic<const char *> allocFailurePrefix{"error: "};
static std::atomic<int> allocFailureStatus{2};

void mlir::attn::exec::setJitAllocFailure(const char *prefix, int status) {
  allocFailurePrefix.store(prefix);
  allocFailureStatus.store(status);
}

/// ATTN_FAIL_ALLOC_ABOVE=N (tests only): an allocation by the generated code
/// of more than N bytes fails as if malloc had returned NULL.
static uint64_t failAllocAbove() {
  static const uint64_t limit = [] {
    const char *text = std::getenv("ATTN_FAIL_ALLOC_ABOVE");
    uint64_t value;
    if (!text || llvm::StringRef(text).getAsInteger(10, value))
      return std::numeric_limits<uint64_t>::max();
    return value;
  }();
  return limit;
}

/// One line and _exit: the kernel cannot go on, and it may be on an OpenMP
/// worker thread, so the host cannot unwind it. Async-signal-safe.
/// Several OpenMP threads may fail at once: the first reports and exits, the
/// others wait for the exit, so the line is printed exactly once.
[[noreturn]] static void allocationFailed(uint64_t bytes) {
  static std::atomic_flag reported = ATOMIC_FLAG_INIT;
  if (reported.test_and_set())
    for (;;)
      pause();
  char line[256];
  char *p = line;
  for (const char *s = allocFailurePrefix.load(); *s;)
    *p++ = *s++;
  for (const char *s = "out of memory in the compiled code ("; *s;)
    *p++ = *s++;
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + bytes % 10);
    bytes /= 10;
  } while (bytes);
  while (n)
    *p++ = digits[--n];
  for (const char *s = " bytes)\n"; *s;)
    *p++ = *s++;
  ssize_t ignored = write(STDERR_FILENO, line, p - line);
  (void)ignored;
  _exit(allocFailureStatus.load());
}

static void *jitAlloc(uint64_t bytes) {
  void *p = bytes > failAllocAbove() ? nullptr : std::malloc(bytes);
  if (!p && bytes)
    allocationFailed(bytes);
  return p;
}

static void *jitAlignedAlloc(uint64_t alignment, uint64_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  uint64_t rounded = bytes;
  if (alignment && bytes % alignment)
    if (__builtin_add_overflow(bytes, alignment - bytes % alignment, &rounded))
      allocationFailed(bytes);
  void *p = bytes > failAllocAbove() ? nullptr
                                     : std::aligned_alloc(alignment, rounded);
  if (!p && bytes)
    allocationFailed(bytes);
  return p;
}

static void jitFree(void *p) { std::free(p); }

void mlir::attn::exec::setJitThreads(int threads) {
  if (threads > 0)
    omp_set_num_threads(threads);
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
mlir::attn::exec::createHostEngine(ModuleOp llvmModule) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Compile for this CPU and its features (AVX-512 where present).
  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return makeError("cannot detect the host CPU: " +
                     toString(tmBuilder.takeError()));
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return makeError("cannot create a target machine: " +
                     toString(tm.takeError()));
  auto transformer = makeOptimizingTransformer(3, 0, tm->get());
  ExecutionEngineOptions options;
  options.transformer = transformer;
  // memref.copy between strided views lowers to a call to memrefCopy.
  SmallVector<StringRef> libs = {ATTN_C_RUNNER_UTILS};
  options.sharedLibPaths = libs;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  // Both listeners default to on: perf's writes a jitdump file (under
  // $JITDUMPDIR, $HOME or /tmp/.debug/jit) for every compile, and gdb's
  // registers every object with the debugger. attn writes nothing the user
  // did not ask for.
  options.enablePerfNotificationListener = false;
  options.enableGDBNotificationListener = false;
  auto engine = ExecutionEngine::create(llvmModule, options, std::move(*tm));
  if (!engine)
    return makeError("JIT compilation failed: " + toString(engine.takeError()));
  // The pipelines lower memref.alloc to these (use-generic-functions).
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto add = [&](const char *name, auto *fn) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
    };
    add("_mlir_memref_to_llvm_alloc", &jitAlloc);
    add("_mlir_memref_to_llvm_aligned_alloc", &jitAlignedAlloc);
    add("_mlir_memref_to_llvm_free", &jitFree);
    return symbols;
  });
  return std::move(*engine);
}

llvm::Expected<std::unique_ptr<JitKernel>>
JitKernel::compile(ModuleOp module, StringRef entryName,
                   const std::function<void(OpPassManager &)> &buildPipeline) {
  OwningOpRef<ModuleOp> clone = module.clone();
  auto entry = clone->lookupSymbol<func::FuncOp>(entryName);
  if (!entry || entry.isDeclaration())
    return makeError("no function @" + entryName.str() + " with a body");
  std::unique_ptr<JitKernel> kernel(new JitKernel());
  for (Type t : entry.getFunctionType().getInputs())
    kernel->argTypes.push_back(dyn_cast<RankedTensorType>(t));
  for (Type t : entry.getFunctionType().getResults())
    kernel->resultTypes.push_back(dyn_cast<RankedTensorType>(t));
  if (llvm::Error e = buildDestinationPassingEntry(*clone, entry, kEntryName))
    return std::move(e);

  PassManager pm(module.getContext());
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  buildPipeline(pm);
  if (failed(pm.run(*clone)))
    return makeError("lowering failed (see the diagnostics above)");
  llvm::raw_string_ostream os(kernel->loweredText);
  clone->print(os);

  auto engine = createHostEngine(*clone);
  if (!engine)
    return engine.takeError();
  kernel->engine = std::move(*engine);
  return std::move(kernel);
}

namespace {
/// A memref descriptor of any rank, laid out as the LLVM lowering expects:
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct Descriptor {
  std::vector<int64_t> words;
  Descriptor(void *data, ArrayRef<int64_t> shape) {
    size_t rank = shape.size();
    words.resize(3 + 2 * rank);
    words[0] = reinterpret_cast<int64_t>(data);
    words[1] = reinterpret_cast<int64_t>(data);
    words[2] = 0;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + rank + i] = stride;
      stride *= shape[i];
    }
  }
};
} // namespace

static llvm::Error checkTensor(const char *what, size_t i, RankedTensorType t,
                               const HostTensor &h) {
  std::string prefix = std::string(what) + " " + std::to_string(i) + ": ";
  if (dtypeOf(t.getElementType()) != h.dtype)
    return makeError(prefix +
                     "expected element type matching the function's, got " +
                     dtypeName(h.dtype));
  if (static_cast<int64_t>(h.shape.size()) != t.getRank())
    return makeError(prefix + "expected rank " + std::to_string(t.getRank()) +
                     ", got shape " + h.shapeString());
  for (int64_t d = 0; d < t.getRank(); ++d)
    if (!t.isDynamicDim(d) && t.getDimSize(d) != h.shape[d])
      return makeError(prefix + "expected dim " + std::to_string(d) +
                       " to be " + std::to_string(t.getDimSize(d)) +
                       ", got shape " + h.shapeString());
  return llvm::Error::success();
}

llvm::Error JitKernel::run(const std::vector<HostTensor *> &inputs,
                           const std::vector<HostTensor *> &outputs,
                           ArrayRef<void *> data) {
  if (inputs.size() != argTypes.size() || outputs.size() != resultTypes.size())
    return makeError("expected " + std::to_string(argTypes.size()) +
                     " inputs and " + std::to_string(resultTypes.size()) +
                     " outputs");
  if (!data.empty() && data.size() != inputs.size() + outputs.size())
    return makeError("expected one data pointer per input and output");
  std::vector<Descriptor> descs;
  descs.reserve(inputs.size() + outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (llvm::Error e = checkTensor("input", i, argTypes[i], *inputs[i]))
      return e;
    descs.emplace_back(data.empty() ? inputs[i]->raw() : data[i],
                       inputs[i]->shape);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (llvm::Error e = checkTensor("output", i, resultTypes[i], *outputs[i]))
      return e;
    descs.emplace_back(data.empty() ? outputs[i]->raw()
                                    : data[inputs.size() + i],
                       outputs[i]->shape);
  }
  // The C interface takes a pointer to each descriptor; the packed call
  // takes a pointer to each of those pointers.
  std::vector<void *> descPtrs, args;
  for (Descriptor &d : descs)
    descPtrs.push_back(d.words.data());
  for (void *&p : descPtrs)
    args.push_back(&p);
  if (llvm::Error e =
          engine->invokePacked(std::string("_mlir_ciface_") + kEntryName, args))
    return makeError("JIT call failed: " + toString(std::move(e)));
  return llvm::Error::success();
}

llvm::Expected<Timing> mlir::attn::exec::benchmark(
    JitKernel &kernel, const std::vector<HostTensor *> &inputs,
    const std::vector<HostTensor *> &outputs, int runs,
    llvm::function_ref<llvm::Error()> between, ArrayRef<void *> data) {
  if (llvm::Error e = kernel.run(inputs, outputs, data))
    return std::move(e);
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    if (between)
      if (llvm::Error e = between())
        return std::move(e);
    if (i == runs)
      break;
    auto t0 = std::chrono::steady_clock::now();
    if (llvm::Error e = kernel.run(inputs, outputs, data))
      return std::move(e);
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return medianTiming(std::move(ms));
}

Timing mlir::attn::exec::medianTiming(std::vector<double> ms) {
  Timing timing;
  timing.runs = static_cast<int>(ms.size());
  timing.runMs = ms;
  if (ms.empty())
    return timing;
  std::sort(ms.begin(), ms.end());
  timing.bestMs = ms.front();
  size_t n = ms.size();
  timing.medianMs = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return timing;
}
