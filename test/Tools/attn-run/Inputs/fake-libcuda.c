/* A stand-in for the NVIDIA driver (libcuda.so.1) for attn-run's tests on
 * machines without a GPU: device memory is host memory, copies are memcpy,
 * device 0 is an sm_90, and a kernel launch does nothing (so results stay
 * NaN-poisoned). It exercises everything around the kernels: compiling both
 * lowerings, loading the libraries, allocations, copies, sizes, the checks
 * and the report. Signatures follow cuda.h loosely (C ABI only).
 * cuTensorMapEncodeTiled checks its arguments as the driver documents
 * (CUDA 13 cuda.h) and, with FAKE_CUDA_LOG set, prints each call to stderr
 * so that tests can check the tensor maps the generated code asks for.
 * cuDeviceGetAttribute answers MULTIPROCESSOR_COUNT with FAKE_CUDA_SMS (else
 * 132); with FAKE_CUDA_LOG_LAUNCH set every launch prints its grid. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static void *current;
CUresult cuInit(unsigned flags) { return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) { *s = "FAKE"; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) { *s = "fake"; return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  /* COMPUTE_CAPABILITY_MAJOR = 75, MINOR = 76; MULTIPROCESSOR_COUNT = 16:
   * FAKE_CUDA_SMS, else an H100 SXM's 132. */
  const char *sms = getenv("FAKE_CUDA_SMS");
  *v = attr == 75 ? 9 : attr == 16 ? (sms ? atoi(sms) : 132) : 0;
  if (attr == 16 && getenv("FAKE_CUDA_LOG"))
    fprintf(stderr, "cuDeviceGetAttribute MULTIPROCESSOR_COUNT=%d\n", *v);
  return 0;
}
CUresult cuCtxGetDevice(int *d) { *d = 0; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)16; return 0; }
CUresult cuCtxGetCurrent(void **c) { *c = current; return 0; }
CUresult cuCtxSetCurrent(void *c) { current = c; return 0; }
CUresult cuModuleLoadData(void **m, const void *image) { *m = (void *)16; return 0; }
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o,
                            void **v) { *m = (void *)16; return 0; }
CUresult cuModuleUnload(void *m) { return 0; }
CUresult cuFuncSetAttribute(void *f, int attr, int value) { return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  *f = (void *)16;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  if (getenv("FAKE_CUDA_LOG_LAUNCH"))
    fprintf(stderr, "cuLaunchKernel grid=%u,%u,%u block=%u,%u,%u smem=%u\n",
            gx, gy, gz, bx, by, bz, smem);
  return 0;
}
CUresult cuStreamSynchronize(void *s) { return 0; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { return 0; }
CUresult cuEventCreate(void **e, unsigned f) { *e = (void *)16; return 0; }
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  *ms = 0.25f; /* what a run "takes": the report shows it */
  return 0;
}
static CUresult alloc(CUdeviceptr *p, size_t n) {
  *p = (CUdeviceptr)malloc(n ? n : 1);
  return *p ? 0 : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) { return alloc(p, n); }
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s) { return alloc(p, n); }
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned f) { return alloc(p, n); }
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) { free((void *)p); return 0; }
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
  memcpy((void *)d, (void *)s, n);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)d, s, n);
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (void *)s, n);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) {
  for (size_t i = 0; i < n; ++i)
    ((unsigned *)d)[i] = v;
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) {
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)d)[i] = v;
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *st) {
  memcpy((void *)d, s, n);
  return 0;
}
/* CUtensorMapDataType FLOAT16 = 6, BFLOAT16 = 9; swizzle 128B = 3. */
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank,
                                void *global, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box,
                                const unsigned *elementStrides, int interleave,
                                int swizzle, int l2, int oob) {
  const int invalid = 1; /* CUDA_ERROR_INVALID_VALUE */
  unsigned elementBytes = type == 6 || type == 9 ? 2 : 0;
  if (getenv("FAKE_CUDA_LOG")) {
    fprintf(stderr, "cuTensorMapEncodeTiled type=%d rank=%u dims=", type, rank);
    for (unsigned i = 0; i < rank && i < 5; ++i)
      fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)dims[i]);
    fprintf(stderr, " strides=");
    for (unsigned i = 0; i + 1 < rank && i < 4; ++i)
      fprintf(stderr, "%s%llu", i ? "," : "", (unsigned long long)strides[i]);
    fprintf(stderr, " box=");
    for (unsigned i = 0; i < rank && i < 5; ++i)
      fprintf(stderr, "%s%u", i ? "," : "", box[i]);
    fprintf(stderr, " swizzle=%d oob=%d\n", swizzle, oob);
  }
  if (!map || ((uintptr_t)map & 63) || !elementBytes || rank < 1 ||
      rank > 5 || ((uintptr_t)global & 15) || interleave != 0)
    return invalid;
  for (unsigned i = 0; i < rank; ++i) {
    if (dims[i] == 0 || dims[i] > ((uint64_t)1 << 32) || box[i] == 0 ||
        box[i] > 256 || elementStrides[i] == 0 || elementStrides[i] > 8)
      return invalid;
    if (i + 1 < rank && (strides[i] % 16 || strides[i] >= ((uint64_t)1 << 40)))
      return invalid;
  }
  /* The inner box dim in bytes: a multiple of 16, at most the swizzle span. */
  unsigned innerBytes = box[0] * elementBytes;
  unsigned span = swizzle == 3 ? 128 : swizzle == 2 ? 64 : swizzle == 1 ? 32 : 0;
  if (innerBytes % 16 || (span && innerBytes > span))
    return invalid;
  memset(map, 0x5a, 128);
  return 0;
}
