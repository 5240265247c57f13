//===- CudaRuntime.cpp - mgpu* over the dlopen'ed CUDA driver API ---------===//
//
// Part of the attn project.
//
// The host code that MLIR's gpu-to-llvm emits calls mgpu* functions; this
// file implements them over the CUDA driver API, which it loads at run time
// with dlopen("libcuda.so.1") so that a library linking this archive needs
// no CUDA library to link or to load (only the NVIDIA driver to run).
//
// What differs from upstream's CudaRuntimeWrappers (which prints and aborts
// on errors and links libcuda):
//  - mgpuModuleLoad (called from a global constructor at dlopen time) only
//    remembers the image; the module is loaded on first use, in the calling
//    thread and context, so that its errors reach the caller. Loaded once.
//  - mgpuModuleGetFunction caches the function per (module, name).
//  - mgpuStreamCreate returns the caller's stream (attnCudaBeginCall) and
//    mgpuStreamDestroy leaves it alone; mgpuStreamSynchronize of that stream
//    does nothing: an entry only enqueues work, like any CUDA library call.
//  - Errors are recorded per thread (first one wins within a call); once
//    one is recorded the following mgpu* calls of the call do nothing.
//
// Free of the C++ runtime on purpose (no exceptions, RTTI, new, static
// guards or std:: containers): the archive goes into shared libraries linked
// by the C compiler that must need only libc.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaRuntime.h"

#include "attn-c/attn.h"

#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ATTN_EXPORT extern "C" __attribute__((visibility("hidden")))

namespace {

//===----------------------------------------------------------------------===//
// The driver API, resolved once with dlsym.
//===----------------------------------------------------------------------===//

#define ATTN_DRIVER_FUNCTIONS(X)                                               \
  X(cuInit, "cuInit")                                                          \
  X(cuGetErrorName, "cuGetErrorName")                                          \
  X(cuGetErrorString, "cuGetErrorString")                                      \
  X(cuDeviceGet, "cuDeviceGet")                                                \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                              \
  X(cuCtxSynchronize, "cuCtxSynchronize")                                      \
  X(cuMemAlloc, "cuMemAlloc_v2")                                               \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                           \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                           \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                      \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")                                        \
  X(cuCtxSetCurrent, "cuCtxSetCurrent")                                        \
  X(cuModuleLoadData, "cuModuleLoadData")                                      \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx")                                  \
  X(cuModuleUnload, "cuModuleUnload")                                          \
  X(cuModuleGetFunction, "cuModuleGetFunction")                                \
  X(cuLaunchKernel, "cuLaunchKernel")                                          \
  X(cuFuncSetAttribute, "cuFuncSetAttribute")                                  \
  X(cuStreamSynchronize, "cuStreamSynchronize")                                \
  X(cuStreamWaitEvent, "cuStreamWaitEvent")                                    \
  X(cuEventCreate, "cuEventCreate")                                            \
  X(cuEventDestroy, "cuEventDestroy_v2")                                       \
  X(cuEventRecord, "cuEventRecord")                                            \
  X(cuEventSynchronize, "cuEventSynchronize")                                  \
  X(cuEventElapsedTime, "cuEventElapsedTime")                                  \
  X(cuMemAllocAsync, "cuMemAllocAsync")                                        \
  X(cuMemFreeAsync, "cuMemFreeAsync")                                          \
  X(cuMemAllocManaged, "cuMemAllocManaged")                                    \
  X(cuMemFree, "cuMemFree_v2")                                                 \
  X(cuMemcpyAsync, "cuMemcpyAsync")                                            \
  X(cuMemsetD32Async, "cuMemsetD32Async")                                      \
  X(cuMemsetD16Async, "cuMemsetD16Async")

struct Driver {
#define ATTN_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  ATTN_DRIVER_FUNCTIONS(ATTN_DECLARE)
#undef ATTN_DECLARE
  /// ATTN_OK once loaded and initialized; else why not.
  int32_t status = ATTN_ERROR_INTERNAL;
  char message[256] = "";
  CUcontext primary = nullptr;
};

Driver driver;
pthread_once_t driverOnce = PTHREAD_ONCE_INIT;
pthread_mutex_t driverMutex = PTHREAD_MUTEX_INITIALIZER;

void loadDriver() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    driver.status = ATTN_ERROR_NO_DEVICE;
    snprintf(driver.message, sizeof(driver.message),
             "no CUDA driver (libcuda.so.1 not found)");
    return;
  }
#define ATTN_RESOLVE(fn, symbol)                                               \
  driver.fn = reinterpret_cast<decltype(&::fn)>(dlsym(handle, symbol));        \
  if (!driver.fn) {                                                            \
    driver.status = ATTN_ERROR_NO_DEVICE;                                      \
    snprintf(driver.message, sizeof(driver.message),                           \
             "the CUDA driver (libcuda.so.1) lacks %s: too old", symbol);      \
    return;                                                                    \
  }
  ATTN_DRIVER_FUNCTIONS(ATTN_RESOLVE)
#undef ATTN_RESOLVE
  CUresult result = driver.cuInit(0);
  if (result != CUDA_SUCCESS) {
    const char *name = "?";
    driver.cuGetErrorName(result, &name);
    driver.status = ATTN_ERROR_NO_DEVICE;
    snprintf(driver.message, sizeof(driver.message),
             "cuInit failed: %s (no usable CUDA device)", name);
    return;
  }
  driver.status = ATTN_OK;
}

//===----------------------------------------------------------------------===//
// Per-thread call state.
//===----------------------------------------------------------------------===//

thread_local int32_t callStatus = ATTN_OK;
thread_local char lastError[512] = "";
thread_local CUstream currentStream = nullptr;

__attribute__((format(printf, 2, 3))) void setError(int32_t status,
                                                    const char *format, ...) {
  if (callStatus != ATTN_OK)
    return;
  callStatus = status;
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof(lastError), format, args);
  va_end(args);
}

/// False (and an error recorded, unless one is already) if the driver is not
/// usable or a previous step of this call failed.
bool ready() {
  if (callStatus != ATTN_OK)
    return false;
  pthread_once(&driverOnce, loadDriver);
  if (driver.status != ATTN_OK) {
    setError(driver.status, "%s", driver.message);
    return false;
  }
  return true;
}

/// Records a failed driver call as `status` (ATTN_ERROR_OUT_OF_MEMORY for
/// CUDA_ERROR_OUT_OF_MEMORY whatever `status`). True on success.
bool check(CUresult result, int32_t status, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = "?", *text = "";
  driver.cuGetErrorName(result, &name);
  driver.cuGetErrorString(result, &text);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    status = ATTN_ERROR_OUT_OF_MEMORY;
  else if (result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
           result == CUDA_ERROR_NO_DEVICE)
    status = ATTN_ERROR_NO_DEVICE;
  setError(status, "%s failed: %s (%s)", what, name, text ? text : "");
  return false;
}

//===----------------------------------------------------------------------===//
// Modules: registered at dlopen time, loaded on first use.
//===----------------------------------------------------------------------===//

constexpr int kMaxFunctions = 32;

struct Module {
  const void *image = nullptr;
  bool jit = false;
  int optLevel = 2;
  CUmodule module = nullptr;
  CUcontext context = nullptr;
  struct {
    const char *name;
    CUfunction function;
  } functions[kMaxFunctions] = {};
  int numFunctions = 0;
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
};

constexpr int kMaxModules = 16;
Module modules[kMaxModules];
int numModules = 0;

Module *registerModule(const void *image, bool jit, int optLevel) {
  pthread_mutex_lock(&driverMutex);
  Module *m = numModules < kMaxModules ? &modules[numModules++] : nullptr;
  pthread_mutex_unlock(&driverMutex);
  if (!m)
    return nullptr;
  m->image = image;
  m->jit = jit;
  m->optLevel = optLevel;
  return m;
}

/// Loads `m` into the current context if not yet loaded. Called with
/// m->mutex held.
bool ensureLoaded(Module *m) {
  CUcontext context = nullptr;
  if (!check(driver.cuCtxGetCurrent(&context), ATTN_ERROR_INTERNAL,
             "cuCtxGetCurrent"))
    return false;
  if (m->module) {
    if (m->context != context) {
      setError(ATTN_ERROR_LAUNCH,
               "the kernels were loaded in another CUDA context than the "
               "current one");
      return false;
    }
    return true;
  }
  CUresult result;
  if (m->jit) {
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        reinterpret_cast<void *>(static_cast<intptr_t>(m->optLevel))};
    result =
        driver.cuModuleLoadDataEx(&m->module, m->image, 1, options, values);
  } else {
    result = driver.cuModuleLoadData(&m->module, m->image);
  }
  if (!check(result, ATTN_ERROR_LAUNCH,
             "loading the kernels (cuModuleLoadData)"))
    return false;
  m->context = context;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// The calls of the generated entry points.
//===----------------------------------------------------------------------===//

ATTN_EXPORT int32_t attnCudaBeginCall(void *stream) {
  callStatus = ATTN_OK;
  lastError[0] = '\0';
  currentStream = nullptr;
  if (!ready())
    return callStatus;
  CUcontext context = nullptr;
  if (!check(driver.cuCtxGetCurrent(&context), ATTN_ERROR_INTERNAL,
             "cuCtxGetCurrent"))
    return callStatus;
  if (!context) {
    // No context on this thread (a caller that uses the runtime API has
    // one): use device 0's primary context, as the runtime API would.
    pthread_mutex_lock(&driverMutex);
    if (!driver.primary) {
      CUdevice device;
      if (check(driver.cuDeviceGet(&device, 0), ATTN_ERROR_NO_DEVICE,
                "cuDeviceGet"))
        check(driver.cuDevicePrimaryCtxRetain(&driver.primary, device),
              ATTN_ERROR_NO_DEVICE, "cuDevicePrimaryCtxRetain");
    }
    context = driver.primary;
    pthread_mutex_unlock(&driverMutex);
    if (!context || !check(driver.cuCtxSetCurrent(context), ATTN_ERROR_INTERNAL,
                           "cuCtxSetCurrent"))
      return callStatus;
  }
  currentStream = static_cast<CUstream>(stream);
  return ATTN_OK;
}

ATTN_EXPORT int32_t attnCudaEndCall(void) {
  currentStream = nullptr;
  return callStatus;
}

ATTN_EXPORT void attnCudaSetError(int32_t status, const char *message) {
  setError(status, "%s", message);
}

ATTN_EXPORT const char *attnCudaLastError(void) { return lastError; }

//===----------------------------------------------------------------------===//
// The mgpu* functions (signatures as MLIR 22's gpu-to-llvm declares them).
//===----------------------------------------------------------------------===//

ATTN_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return registerModule(data, /*jit=*/false, 0);
}

ATTN_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return registerModule(data, /*jit=*/true, optLevel);
}

ATTN_EXPORT void mgpuModuleUnload(void *module) {
  auto *m = static_cast<Module *>(module);
  if (!m)
    return;
  pthread_mutex_lock(&m->mutex);
  // Only a driver that was loaded can hold the module; at process exit the
  // driver may already be shut down, which cuModuleUnload reports: ignored.
  if (m->module && driver.status == ATTN_OK)
    driver.cuModuleUnload(m->module);
  m->module = nullptr;
  m->numFunctions = 0;
  pthread_mutex_unlock(&m->mutex);
}

ATTN_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  auto *m = static_cast<Module *>(module);
  if (!ready())
    return nullptr;
  if (!m) {
    setError(ATTN_ERROR_INTERNAL, "too many GPU modules in one process");
    return nullptr;
  }
  CUfunction function = nullptr;
  pthread_mutex_lock(&m->mutex);
  if (ensureLoaded(m)) {
    for (int i = 0; i < m->numFunctions && !function; ++i)
      if (m->functions[i].name == name ||
          strcmp(m->functions[i].name, name) == 0)
        function = m->functions[i].function;
    if (!function &&
        check(driver.cuModuleGetFunction(&function, m->module, name),
              ATTN_ERROR_LAUNCH, "cuModuleGetFunction") &&
        m->numFunctions < kMaxFunctions)
      m->functions[m->numFunctions++] = {name, function};
  }
  pthread_mutex_unlock(&m->mutex);
  return function;
}

ATTN_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                  intptr_t gridY, intptr_t gridZ,
                                  intptr_t blockX, intptr_t blockY,
                                  intptr_t blockZ, int32_t smem, void *stream,
                                  void **params, void ** /*extra*/,
                                  size_t /*paramsCount*/) {
  if (!ready() || !function)
    return;
  // An empty grid (a dynamic size of a kernel's range is 0) launches nothing.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0)
    return;
  // More than 48 KiB of shared memory (convert-attn-to-gpu's shared-memory
  // option) needs the function's limit raised first: the dynamic bytes and
  // the (up to 16) static bytes of gpu.dynamic_shared_memory's symbol.
  if (smem > 48 * 1024 - 16 &&
      !check(driver.cuFuncSetAttribute(
                 static_cast<CUfunction>(function),
                 CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
             ATTN_ERROR_LAUNCH,
             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"))
    return;
  check(driver.cuLaunchKernel(static_cast<CUfunction>(function), gridX, gridY,
                              gridZ, blockX, blockY, blockZ, smem,
                              static_cast<CUstream>(stream), params, nullptr),
        ATTN_ERROR_LAUNCH, "cuLaunchKernel");
}

ATTN_EXPORT void *mgpuStreamCreate(void) { return currentStream; }

ATTN_EXPORT void mgpuStreamDestroy(void * /*stream*/) {}

ATTN_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (!ready() || stream == currentStream)
    return;
  check(driver.cuStreamSynchronize(static_cast<CUstream>(stream)),
        ATTN_ERROR_LAUNCH, "cuStreamSynchronize");
}

ATTN_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  if (!ready() || !event)
    return;
  check(driver.cuStreamWaitEvent(static_cast<CUstream>(stream),
                                 static_cast<CUevent>(event), 0),
        ATTN_ERROR_LAUNCH, "cuStreamWaitEvent");
}

ATTN_EXPORT void *mgpuEventCreate(void) {
  CUevent event = nullptr;
  if (ready())
    check(driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          ATTN_ERROR_INTERNAL, "cuEventCreate");
  return event;
}

ATTN_EXPORT void mgpuEventDestroy(void *event) {
  if (event && driver.status == ATTN_OK)
    driver.cuEventDestroy(static_cast<CUevent>(event));
}

ATTN_EXPORT void mgpuEventSynchronize(void *event) {
  if (!ready() || !event)
    return;
  check(driver.cuEventSynchronize(static_cast<CUevent>(event)),
        ATTN_ERROR_LAUNCH, "cuEventSynchronize");
}

ATTN_EXPORT void mgpuEventRecord(void *event, void *stream) {
  if (!ready() || !event)
    return;
  check(driver.cuEventRecord(static_cast<CUevent>(event),
                             static_cast<CUstream>(stream)),
        ATTN_ERROR_LAUNCH, "cuEventRecord");
}

ATTN_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                               bool isHostShared) {
  CUdeviceptr ptr = 0;
  if (!ready() || sizeBytes == 0)
    return nullptr;
  if (isHostShared)
    check(driver.cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL),
          ATTN_ERROR_OUT_OF_MEMORY, "cuMemAllocManaged");
  else
    check(
        driver.cuMemAllocAsync(&ptr, sizeBytes, static_cast<CUstream>(stream)),
        ATTN_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync");
  return reinterpret_cast<void *>(ptr);
}

ATTN_EXPORT void mgpuMemFree(void *ptr, void *stream) {
  // Freed even after an error, so that a failed call leaks nothing.
  if (!ptr || driver.status != ATTN_OK)
    return;
  CUresult result = driver.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr),
                                          static_cast<CUstream>(stream));
  if (result == CUDA_ERROR_INVALID_VALUE) // managed memory
    result = driver.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  if (callStatus == ATTN_OK)
    check(result, ATTN_ERROR_INTERNAL, "cuMemFree");
}

ATTN_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                            void *stream) {
  if (!ready() || sizeBytes == 0)
    return;
  check(driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                             static_cast<CUstream>(stream)),
        ATTN_ERROR_LAUNCH, "cuMemcpyAsync");
}

ATTN_EXPORT void mgpuMemset32(void *dst, unsigned int value, size_t count,
                              void *stream) {
  if (!ready() || count == 0)
    return;
  check(driver.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)),
        ATTN_ERROR_LAUNCH, "cuMemsetD32Async");
}

ATTN_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                              void *stream) {
  if (!ready() || count == 0)
    return;
  check(driver.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, static_cast<CUstream>(stream)),
        ATTN_ERROR_LAUNCH, "cuMemsetD16Async");
}

ATTN_EXPORT void mgpuSetDefaultDevice(int32_t /*device*/) {
  // The device is the caller's current context's (or device 0's).
}

//===----------------------------------------------------------------------===//
// Host-side helpers for tools that drive a cuda library (attn-run).
//===----------------------------------------------------------------------===//

ATTN_EXPORT int32_t attnCudaHostInit(int32_t *major, int32_t *minor) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK)
    return status;
  CUdevice device;
  if (check(driver.cuDeviceGet(&device, 0), ATTN_ERROR_NO_DEVICE,
            "cuDeviceGet") &&
      check(driver.cuDeviceGetAttribute(
                major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            ATTN_ERROR_NO_DEVICE, "cuDeviceGetAttribute"))
    check(driver.cuDeviceGetAttribute(
              minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
          ATTN_ERROR_NO_DEVICE, "cuDeviceGetAttribute");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostAlloc(void **ptr, uint64_t sizeBytes) {
  *ptr = nullptr;
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK || sizeBytes == 0)
    return status;
  CUdeviceptr p = 0;
  if (check(driver.cuMemAlloc(&p, sizeBytes), ATTN_ERROR_OUT_OF_MEMORY,
            "cuMemAlloc"))
    *ptr = reinterpret_cast<void *>(p);
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostFree(void *ptr) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK || !ptr)
    return status;
  check(driver.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)),
        ATTN_ERROR_INTERNAL, "cuMemFree");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostCopyToDevice(void *dst, const void *src,
                                             uint64_t sizeBytes) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK || sizeBytes == 0)
    return status;
  check(driver.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, sizeBytes),
        ATTN_ERROR_LAUNCH, "cuMemcpyHtoD");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostCopyToHost(void *dst, const void *src,
                                           uint64_t sizeBytes) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK || sizeBytes == 0)
    return status;
  check(driver.cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), sizeBytes),
        ATTN_ERROR_LAUNCH, "cuMemcpyDtoH");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostSynchronize(void) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK)
    return status;
  check(driver.cuCtxSynchronize(), ATTN_ERROR_LAUNCH, "cuCtxSynchronize");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostEventCreate(void **event) {
  *event = nullptr;
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK)
    return status;
  CUevent e = nullptr;
  if (check(driver.cuEventCreate(&e, CU_EVENT_DEFAULT), ATTN_ERROR_INTERNAL,
            "cuEventCreate"))
    *event = e;
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostEventRecord(void *event) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK)
    return status;
  check(driver.cuEventRecord(static_cast<CUevent>(event), nullptr),
        ATTN_ERROR_LAUNCH, "cuEventRecord");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostEventElapsed(void *start, void *end,
                                             float *ms) {
  *ms = 0;
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK)
    return status;
  if (check(driver.cuEventSynchronize(static_cast<CUevent>(end)),
            ATTN_ERROR_LAUNCH, "cuEventSynchronize"))
    check(driver.cuEventElapsedTime(ms, static_cast<CUevent>(start),
                                    static_cast<CUevent>(end)),
          ATTN_ERROR_LAUNCH, "cuEventElapsedTime");
  return attnCudaEndCall();
}

ATTN_EXPORT int32_t attnCudaHostEventDestroy(void *event) {
  int32_t status = attnCudaBeginCall(nullptr);
  if (status != ATTN_OK || !event)
    return status;
  check(driver.cuEventDestroy(static_cast<CUevent>(event)), ATTN_ERROR_INTERNAL,
        "cuEventDestroy");
  return attnCudaEndCall();
}
