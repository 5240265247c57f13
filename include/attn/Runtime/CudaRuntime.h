//===- CudaRuntime.h - the CUDA runtime of AOT libraries --------*- C++ -*-===//
//
// Part of the attn project.
//
// AttnCudaRuntime (lib/Runtime/CUDA) implements the mgpu* functions that
// MLIR's gpu-to-llvm host code calls, over the CUDA driver API loaded at run
// time with dlopen("libcuda.so.1"), and the calls below that the entry
// points of an attn-compile cuda library (the generated shim) make around
// the generated code. Errors are recorded per thread (first one wins within
// a call), never printed; nothing aborts.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDARUNTIME_H
#define ATTN_RUNTIME_CUDARUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Starts a call: clears this thread's error, loads the driver (once), makes
/// sure a context is current (the caller's, else device 0's primary context)
/// and makes `stream` the stream that mgpuStreamCreate() returns. Returns an
/// attn_status; on failure the call must not run the generated code.
int32_t attnCudaBeginCall(void *stream);
/// Ends a call: returns the first error recorded since attnCudaBeginCall()
/// (ATTN_OK if none) and forgets the stream.
int32_t attnCudaEndCall(void);
/// Records `status` and `message` unless an error is already recorded.
void attnCudaSetError(int32_t status, const char *message);
/// This thread's last error message ("" if none).
const char *attnCudaLastError(void);

/// Element types of attnCudaEncodeTensorMap.
enum { ATTN_CUDA_TENSOR_MAP_F16 = 0, ATTN_CUDA_TENSOR_MAP_BF16 = 1 };

/// Called by generated host code (the sm_90a kernel of convert-attn-to-gpu)
/// before a launch: encodes the TMA tensor map of the dense row-major
/// tensor `global` of dims [d0, d1, d2, d3] (outermost first) of 16-bit
/// `elementType`, read in boxes of `boxRows` x `boxCols` (dims 2 and 3;
/// one along 0 and 1) with 128-byte swizzling and zero fill past the
/// tensor, by the driver's cuTensorMapEncodeTiled, and copies its 128 bytes
/// to `deviceMap` (device memory) on the call's stream. Errors are recorded
/// as for the mgpu* functions (the launch that follows then does nothing).
void attnCudaEncodeTensorMap(void *deviceMap, const void *global,
                             int32_t elementType, int64_t d0, int64_t d1,
                             int64_t d2, int64_t d3, int32_t boxRows,
                             int32_t boxCols);

/// Called by generated host code (convert-attn-to-gpu's kernels=wgmma
/// lowering) before a launch: the number of SMs of the current context's
/// device (cuDeviceGetAttribute's MULTIPROCESSOR_COUNT, read once per
/// device). On failure records the error as the mgpu* functions do (the
/// launch that follows then does nothing) and returns 1.
int32_t attnCudaSmCount(void);

/// Host-side helpers for a tool that drives cuda libraries (attn-run), over
/// the same dlopen'ed driver, in the current context (else device 0's
/// primary context, made current). Each returns an attn_status, with the
/// message in attnCudaLastError(). The compute capability of device 0:
int32_t attnCudaHostInit(int32_t *major, int32_t *minor);
/// Device memory (cuMemAlloc/cuMemFree), synchronous copies and a context
/// synchronization.
int32_t attnCudaHostAlloc(void **ptr, uint64_t sizeBytes);
int32_t attnCudaHostFree(void *ptr);
int32_t attnCudaHostCopyToDevice(void *dst, const void *src,
                                 uint64_t sizeBytes);
int32_t attnCudaHostCopyToHost(void *dst, const void *src, uint64_t sizeBytes);
int32_t attnCudaHostSynchronize(void);
/// Timing events (cuEventCreate with timing) recorded on the legacy default
/// stream, the one attn-run's calls launch on; attnCudaHostEventElapsed waits
/// for `end` and gives the GPU time from `start` to `end` in milliseconds.
int32_t attnCudaHostEventCreate(void **event);
int32_t attnCudaHostEventRecord(void *event);
int32_t attnCudaHostEventElapsed(void *start, void *end, float *ms);
int32_t attnCudaHostEventDestroy(void *event);

#ifdef __cplusplus
}
#endif

#endif // ATTN_RUNTIME_CUDARUNTIME_H
