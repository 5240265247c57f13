//===- CudaDeviceInfo.cpp - device attributes read at launch --------------===//
//
// Part of the attn project.
//
// attnCudaSmCount (attn/Runtime/CudaRuntime.h), called by the host code of
// convert-attn-to-gpu's kernels=wgmma lowering before its launches: the
// persistent sm_90a kernel's grid and the decode kernels' automatic key
// splits are sized from the SMs of the device the call runs on, not from a
// table (an H100 SXM has 132, an H100 PCIe 114). An object of its own in the
// runtime archive, as CudaTensorMap.cpp, so that only the libraries that
// call it link it, with its own table of the two driver calls it needs,
// resolved once from the libcuda.so.1 that attnCudaBeginCall loaded. The
// count is cached per device ordinal.
//
// Free of the C++ runtime, as CudaRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaRuntime.h"

#include "attn-c/attn.h"

#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define ATTN_EXPORT extern "C" __attribute__((visibility("hidden")))

namespace {

#define ATTN_DEVICE_INFO_DRIVER_FUNCTIONS(X)                                   \
  X(cuGetErrorName, "cuGetErrorName")                                          \
  X(cuCtxGetDevice, "cuCtxGetDevice")                                          \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute")

struct DeviceInfoDriver {
#define ATTN_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  ATTN_DEVICE_INFO_DRIVER_FUNCTIONS(ATTN_DECLARE)
#undef ATTN_DECLARE
  const char *missing = nullptr;
};

DeviceInfoDriver driver;
pthread_once_t driverOnce = PTHREAD_ONCE_INIT;

void loadDriver() {
  // Already loaded by attnCudaBeginCall: RTLD_NOLOAD finds it.
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle) {
    driver.missing = "libcuda.so.1";
    return;
  }
#define ATTN_RESOLVE(fn, symbol)                                               \
  driver.fn = reinterpret_cast<decltype(&::fn)>(dlsym(handle, symbol));        \
  if (!driver.fn && !driver.missing)                                           \
    driver.missing = symbol;
  ATTN_DEVICE_INFO_DRIVER_FUNCTIONS(ATTN_RESOLVE)
#undef ATTN_RESOLVE
}

/// SM counts by device ordinal (0: not read yet).
constexpr int kMaxDevices = 64;
int smCounts[kMaxDevices];

/// Records a failed driver call; true on success.
bool check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = "?";
  driver.cuGetErrorName(result, &name);
  char message[256];
  snprintf(message, sizeof(message), "%s failed: %s", what, name);
  attnCudaSetError(ATTN_ERROR_NO_DEVICE, message);
  return false;
}

} // namespace

ATTN_EXPORT int32_t attnCudaSmCount(void) {
  // A step of this call failed already: nothing runs, any grid will do.
  if (attnCudaLastError()[0] != '\0')
    return 1;
  pthread_once(&driverOnce, loadDriver);
  if (driver.missing) {
    char message[256];
    snprintf(message, sizeof(message),
             "the CUDA driver (libcuda.so.1) lacks %s", driver.missing);
    attnCudaSetError(ATTN_ERROR_NO_DEVICE, message);
    return 1;
  }
  CUdevice device = 0;
  if (!check(driver.cuCtxGetDevice(&device), "cuCtxGetDevice"))
    return 1;
  bool cached = device >= 0 && device < kMaxDevices;
  if (cached) {
    int count = __atomic_load_n(&smCounts[device], __ATOMIC_RELAXED);
    if (count > 0)
      return count;
  }
  int count = 0;
  if (!check(driver.cuDeviceGetAttribute(
                 &count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
             "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"))
    return 1;
  if (count < 1) {
    attnCudaSetError(ATTN_ERROR_NO_DEVICE,
                     "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT) gave no SM");
    return 1;
  }
  if (cached)
    __atomic_store_n(&smCounts[device], count, __ATOMIC_RELAXED);
  return count;
}
