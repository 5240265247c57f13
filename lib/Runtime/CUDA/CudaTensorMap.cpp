//===- CudaTensorMap.cpp - TMA tensor maps over the dlopen'ed driver ------===//
//
// Part of the attn project.
//
// attnCudaEncodeTensorMap (attn/Runtime/CudaRuntime.h), called by the host
// code of convert-attn-to-gpu's sm_90a kernel before its launch. An object
// of its own in the runtime archive, so that only the libraries whose
// kernels read tensor maps link it (every other library stays byte for byte
// what it was), with its own table of the driver calls it needs, resolved
// once from the libcuda.so.1 that attnCudaBeginCall loaded. Errors go to the
// call's error state (attnCudaSetError: the first one wins, and the launch
// that follows does nothing).
//
// Free of the C++ runtime, as CudaRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaRuntime.h"

#include "attn-c/attn.h"

#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define ATTN_EXPORT extern "C" __attribute__((visibility("hidden")))

/// The caller's stream of the current call (CudaRuntime.cpp).
extern "C" __attribute__((visibility("hidden"))) void *mgpuStreamCreate(void);

namespace {

#define ATTN_TENSOR_MAP_DRIVER_FUNCTIONS(X)                                    \
  X(cuGetErrorName, "cuGetErrorName")                                          \
  X(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled")                          \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")

struct TensorMapDriver {
#define ATTN_DECLARE(fn, symbol) decltype(&::fn) fn = nullptr;
  ATTN_TENSOR_MAP_DRIVER_FUNCTIONS(ATTN_DECLARE)
#undef ATTN_DECLARE
  const char *missing = nullptr;
};

TensorMapDriver driver;
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
  ATTN_TENSOR_MAP_DRIVER_FUNCTIONS(ATTN_RESOLVE)
#undef ATTN_RESOLVE
}

__attribute__((format(printf, 2, 3))) void fail(int32_t status,
                                                const char *format, ...) {
  char message[256];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  attnCudaSetError(status, message);
}

/// Records a failed driver call; true on success.
bool check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = "?";
  driver.cuGetErrorName(result, &name);
  fail(result == CUDA_ERROR_OUT_OF_MEMORY ? ATTN_ERROR_OUT_OF_MEMORY
                                          : ATTN_ERROR_LAUNCH,
       "%s failed: %s", what, name);
  return false;
}

} // namespace

ATTN_EXPORT void attnCudaEncodeTensorMap(void *deviceMap, const void *global,
                                         int32_t elementType, int64_t d0,
                                         int64_t d1, int64_t d2, int64_t d3,
                                         int32_t boxRows, int32_t boxCols) {
  // A step of this call failed already: nothing more runs.
  if (attnCudaLastError()[0] != '\0')
    return;
  pthread_once(&driverOnce, loadDriver);
  if (driver.missing) {
    fail(ATTN_ERROR_NO_DEVICE,
         "the CUDA driver (libcuda.so.1) lacks %s: too old for the sm_90a "
         "kernels' tensor maps",
         driver.missing);
    return;
  }
  if (elementType != ATTN_CUDA_TENSOR_MAP_F16 &&
      elementType != ATTN_CUDA_TENSOR_MAP_BF16) {
    fail(ATTN_ERROR_INTERNAL, "attnCudaEncodeTensorMap: element type %d",
         static_cast<int>(elementType));
    return;
  }
  // An empty tensor (Lk = 0, which the generated code encodes as one row)
  // may have no address; its map is never read (no key tile is visited).
  if (!global)
    return;
  // Innermost dim first; the byte strides of dims 1.. (dim 0's is the
  // element size).
  const cuuint64_t elementBytes = 2;
  cuuint64_t dims[4] = {
      static_cast<cuuint64_t>(d3), static_cast<cuuint64_t>(d2),
      static_cast<cuuint64_t>(d1), static_cast<cuuint64_t>(d0)};
  cuuint64_t strides[3] = {dims[0] * elementBytes,
                           dims[0] * dims[1] * elementBytes,
                           dims[0] * dims[1] * dims[2] * elementBytes};
  cuuint32_t box[4] = {static_cast<cuuint32_t>(boxCols),
                       static_cast<cuuint32_t>(boxRows), 1, 1};
  cuuint32_t elementStrides[4] = {1, 1, 1, 1};
  // The host copy: cuda.h declares CUtensorMap 128-byte aligned (the driver
  // needs 64). Zero fill past the tensor (FLOAT_OOB_FILL_NONE): rows past Lq
  // or Lk read as 0.
  CUtensorMap map;
  if (!check(driver.cuTensorMapEncodeTiled(
                 &map,
                 elementType == ATTN_CUDA_TENSOR_MAP_BF16
                     ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                     : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                 4, const_cast<void *>(global), dims, strides, box,
                 elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
             "cuTensorMapEncodeTiled"))
    return;
  // From pageable memory: the driver has taken the bytes when the call
  // returns, so `map` may go; the copy is ordered before the launch on the
  // call's stream.
  check(driver.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(deviceMap), &map,
                                 sizeof(map),
                                 static_cast<CUstream>(mgpuStreamCreate())),
        "cuMemcpyHtoDAsync");
}
