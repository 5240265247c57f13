/* A stand-in for the NVIDIA driver (libcuda.so.1) for attn-run's tests on
 * machines without a GPU: device memory is host memory, copies are memcpy,
 * device 0 is an sm_90, and a kernel launch does nothing (so results stay
 * NaN-poisoned). It exercises everything around the kernels: compiling both
 * lowerings, loading the libraries, allocations, copies, sizes, the checks
 * and the report. Signatures follow cuda.h loosely (C ABI only). */
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
  *v = attr == 75 ? 9 : 0; /* COMPUTE_CAPABILITY_MAJOR = 75, MINOR = 76 */
  return 0;
}
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
