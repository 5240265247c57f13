/*===- attn.h - the C ABI of libraries made by attn-compile -------*- C -*-===*\
|*                                                                            *|
|* Part of the attn project.                                                  *|
|*                                                                            *|
|* A library that attn-compile makes exports, for each compiled function     *|
|* NAME, the entry point below, plus attn_status_string() and                *|
|* attn_last_error(). The JSON file beside the library (libX.so -> libX.json)*|
|* says what each entry takes; docs/c-abi.md documents both.                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_ATTN_H
#define ATTN_C_ATTN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version, the JSON's "abi" key. */
#define ATTN_ABI_VERSION 1

typedef enum {
  ATTN_OK = 0,
  /* No CUDA driver, no device, or the device cannot run the kernels. */
  ATTN_ERROR_NO_DEVICE = 1,
  /* A NULL buffer, a non-positive dynamic size, NULL dims when some needed. */
  ATTN_ERROR_INVALID_ARGUMENT = 2,
  ATTN_ERROR_OUT_OF_MEMORY = 3,
  /* A kernel could not be launched (or the module could not be loaded). */
  ATTN_ERROR_LAUNCH = 4,
  ATTN_ERROR_INTERNAL = 5
} attn_status;

/* One entry per compiled function NAME:

     int32_t NAME(void *const *buffers, const int64_t *dims, void *stream);

   buffers: the function's arguments in order, then its results in order:
     pointers to dense C-order data (device pointers for a cuda library, host
     pointers for a cpu one); results are written in place.
   dims: the values of the dynamic sizes named in the JSON's "dims" list, in
     that order (may be NULL when the list is empty).
   stream: a CUstream for cuda (NULL: the default stream), ignored on cpu.
     A cuda entry only enqueues work on the stream: synchronize it before
     reading the results.
   Returns an attn_status; on failure attn_last_error() says why. */
typedef int32_t (*attn_entry_fn)(void *const *buffers, const int64_t *dims,
                                 void *stream);

/* A fixed English name of a status ("ATTN_OK", ...); "unknown status" for a
   value outside the enum. */
const char *attn_status_string(int32_t status);

/* The message of this thread's last failed call into the library, "" if none
   has failed. Valid until this thread's next call into the library. */
const char *attn_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_ATTN_H */
