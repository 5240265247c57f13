//===- CudaRun.cpp - run an attn entry on a CUDA GPU ----------------------===//
//
// Part of the attn project.
//
// attn-run --target cuda: compile through the AOT path (compileLibrary,
// target cuda) into a temporary directory, dlopen the library, and drive it
// with device buffers from the CUDA runtime's host helpers.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/CudaRun.h"

#include "attn/Compile/Aot.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Spec/Error.h"

#ifdef ATTN_HAVE_CUDA_RUNTIME
#include "attn/Runtime/CudaRuntime.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

#ifdef ATTN_HAVE_CUDA_RUNTIME
/// The runtime's last message as an error, if `status` is not ATTN_OK (0).
static llvm::Error cudaError(int32_t status, const llvm::Twine &what) {
  if (status == 0)
    return llvm::Error::success();
  return makeError(what + attnCudaLastError());
}
#endif

llvm::Expected<std::string> mlir::attn::exec::probeCudaDevice() {
#ifdef ATTN_HAVE_CUDA_RUNTIME
  int32_t major = 0, minor = 0;
  if (llvm::Error e = cudaError(attnCudaHostInit(&major, &minor), ""))
    return std::move(e);
  return "sm_" + std::to_string(major) + std::to_string(minor);
#else
  return makeError("this attn was built without the CUDA runtime (no cuda.h "
                   "when it was configured)");
#endif
}

namespace {
/// Device buffers, freed on destruction.
struct DeviceBuffers {
  std::vector<void *> ptrs;
  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers &) = delete;
  ~DeviceBuffers() {
#ifdef ATTN_HAVE_CUDA_RUNTIME
    for (void *p : ptrs)
      (void)attnCudaHostFree(p);
#endif
  }
};
} // namespace

struct CudaKernel::Impl {
  llvm::SmallString<128> dir;
  void *handle = nullptr;
  int32_t (*entry)(void *const *, const int64_t *, void *) = nullptr;
  const char *(*lastError)() = nullptr;
  compile::FunctionAbi abi;

  ~Impl() {
    if (handle)
      dlclose(handle);
    if (!dir.empty())
      llvm::sys::fs::remove_directories(dir);
  }

  /// The values of the ABI's dynamic sizes, read off the tensors.
  std::vector<int64_t> dimsOf(const std::vector<HostTensor *> &inputs,
                              const std::vector<HostTensor *> &outputs) {
    std::vector<int64_t> values;
    for (const std::string &name : abi.dims) {
      int64_t value = 0;
      auto find = [&](const std::vector<compile::AbiTensor> &tensors,
                      const std::vector<HostTensor *> &host) {
        for (size_t t = 0; t < tensors.size() && t < host.size() && !value; ++t)
          for (size_t d = 0; d < tensors[t].shape.size(); ++d)
            if (tensors[t].shape[d].dim == name && d < host[t]->shape.size()) {
              value = host[t]->shape[d];
              break;
            }
      };
      find(abi.args, inputs);
      find(abi.results, outputs);
      values.push_back(value);
    }
    return values;
  }

  /// Allocates the device buffers (inputs, then outputs) and copies every
  /// tensor there.
  llvm::Error upload(const std::vector<HostTensor *> &inputs,
                     const std::vector<HostTensor *> &outputs,
                     DeviceBuffers &buffers) {
#ifdef ATTN_HAVE_CUDA_RUNTIME
    for (HostTensor *t : llvm::concat<HostTensor *const>(inputs, outputs)) {
      void *p = nullptr;
      // At least one byte, so that an empty tensor still has an address.
      if (llvm::Error e = cudaError(
              attnCudaHostAlloc(&p, std::max<size_t>(1, t->byteSize())),
              "device allocation: "))
        return e;
      buffers.ptrs.push_back(p);
      // Outputs too: they arrive NaN-poisoned, so that an element the
      // kernels do not write shows as NaN.
      if (llvm::Error e = cudaError(
              attnCudaHostCopyToDevice(p, t->data.data(), t->byteSize()),
              "copy to the device: "))
        return e;
    }
    return llvm::Error::success();
#else
    return makeError("built without the CUDA runtime");
#endif
  }

  /// Launches the entry on the legacy default stream without waiting.
  llvm::Error launch(DeviceBuffers &buffers, const std::vector<int64_t> &dims) {
    int32_t status = entry(buffers.ptrs.data(), dims.data(), nullptr);
    if (status != 0)
      return makeError("@" + abi.name + ": " + lastError());
    return llvm::Error::success();
  }

  /// Launches the entry and waits for it.
  llvm::Error call(DeviceBuffers &buffers, const std::vector<int64_t> &dims) {
    if (llvm::Error e = launch(buffers, dims))
      return e;
#ifdef ATTN_HAVE_CUDA_RUNTIME
    return cudaError(attnCudaHostSynchronize(), "running @" + abi.name + ": ");
#else
    return llvm::Error::success();
#endif
  }

  llvm::Error download(const std::vector<HostTensor *> &inputs,
                       const std::vector<HostTensor *> &outputs,
                       DeviceBuffers &buffers) {
#ifdef ATTN_HAVE_CUDA_RUNTIME
    for (auto [o, t] : llvm::enumerate(outputs))
      if (llvm::Error e =
              cudaError(attnCudaHostCopyToHost(t->data.data(),
                                               buffers.ptrs[inputs.size() + o],
                                               t->byteSize()),
                        "copy from the device: "))
        return e;
#endif
    return llvm::Error::success();
  }
};

CudaKernel::~CudaKernel() = default;

llvm::Expected<std::unique_ptr<CudaKernel>>
CudaKernel::compile(ModuleOp module, llvm::StringRef entry, bool naive,
                    llvm::StringRef chip,
                    const tuning::KnobValues &fusedKnobs) {
  std::unique_ptr<CudaKernel> kernel(new CudaKernel());
  kernel->impl = std::make_unique<Impl>();
  Impl &impl = *kernel->impl;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("attn-run-cuda", impl.dir))
    return makeError("cannot create a temporary directory: " + ec.message());

  compile::AotFunction function;
  function.name = naive ? "naive" : "fused";
  function.module = module.clone();
  function.entry = entry.str();
  auto entryOp = function.module->lookupSymbol<func::FuncOp>(entry);
  if (!entryOp)
    return makeError("no function @" + entry);
  auto abi = compile::analyzeAbi(entryOp, function.name);
  if (!abi)
    return abi.takeError();
  impl.abi = std::move(*abi);

  compile::AotOptions options;
  options.target = compile::Target::Cuda;
  options.lowering =
      naive ? compile::Lowering::Naive : compile::Lowering::Fused;
  options.chip = chip.str();
  if (!naive)
    options.tuning = fusedKnobs;
  if (llvm::StringRef toolkit = getDefaultCudaToolkitDir(); !toolkit.empty())
    options.cudaToolkit = toolkit.str();
  std::string library = (impl.dir + "/lib" + function.name + ".so").str();
  std::vector<compile::AotFunction> functions;
  functions.push_back(std::move(function));
  if (llvm::Error e = compile::compileLibrary(*module->getContext(), functions,
                                              options, library))
    return std::move(e);

  impl.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl.handle)
    return makeError(llvm::Twine("cannot load the compiled library: ") +
                     dlerror());
  impl.entry = reinterpret_cast<decltype(impl.entry)>(
      dlsym(impl.handle, impl.abi.name.c_str()));
  impl.lastError = reinterpret_cast<decltype(impl.lastError)>(
      dlsym(impl.handle, "attn_last_error"));
  if (!impl.entry || !impl.lastError)
    return makeError("the compiled library lacks @" + impl.abi.name);
  return std::move(kernel);
}

llvm::Error CudaKernel::run(const std::vector<HostTensor *> &inputs,
                            const std::vector<HostTensor *> &outputs) {
  DeviceBuffers buffers;
  if (llvm::Error e = impl->upload(inputs, outputs, buffers))
    return e;
  if (llvm::Error e = impl->call(buffers, impl->dimsOf(inputs, outputs)))
    return e;
  return impl->download(inputs, outputs, buffers);
}

#ifdef ATTN_HAVE_CUDA_RUNTIME
namespace {
/// Two timing events on the legacy default stream, destroyed on destruction.
struct EventPair {
  void *start = nullptr, *end = nullptr;
  EventPair() = default;
  EventPair(const EventPair &) = delete;
  ~EventPair() {
    (void)attnCudaHostEventDestroy(start);
    (void)attnCudaHostEventDestroy(end);
  }
};
} // namespace
#endif

llvm::Expected<Timing>
CudaKernel::benchmark(const std::vector<HostTensor *> &inputs,
                      const std::vector<HostTensor *> &outputs, int runs) {
#ifdef ATTN_HAVE_CUDA_RUNTIME
  DeviceBuffers buffers;
  if (llvm::Error e = impl->upload(inputs, outputs, buffers))
    return std::move(e);
  std::vector<int64_t> dims = impl->dimsOf(inputs, outputs);
  if (llvm::Error e = impl->call(buffers, dims))
    return std::move(e);
  EventPair events;
  if (llvm::Error e =
          cudaError(attnCudaHostEventCreate(&events.start), "timing events: "))
    return std::move(e);
  if (llvm::Error e =
          cudaError(attnCudaHostEventCreate(&events.end), "timing events: "))
    return std::move(e);
  // Each run alone between two events, so that a run's time is the GPU's
  // from its first launch to its last kernel's end (no host waiting in it).
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    if (llvm::Error e =
            cudaError(attnCudaHostEventRecord(events.start), "timing: "))
      return std::move(e);
    if (llvm::Error e = impl->launch(buffers, dims))
      return std::move(e);
    if (llvm::Error e =
            cudaError(attnCudaHostEventRecord(events.end), "timing: "))
      return std::move(e);
    float elapsed = 0;
    if (llvm::Error e = cudaError(
            attnCudaHostEventElapsed(events.start, events.end, &elapsed),
            "running @" + impl->abi.name + ": "))
      return std::move(e);
    ms.push_back(elapsed);
  }
  if (llvm::Error e = impl->download(inputs, outputs, buffers))
    return std::move(e);
  return medianTiming(std::move(ms));
#else
  return makeError("built without the CUDA runtime");
#endif
}
