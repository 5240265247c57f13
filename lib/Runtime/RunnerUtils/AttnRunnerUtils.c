/*===- AttnRunnerUtils.c - allocation hooks for mlir-runner ---------------===//
 *
 * Part of the attn project.
 *
 * attn's CPU pipelines lower memref.alloc to MLIR's generic allocation
 * functions (finalize-memref-to-llvm use-generic-functions=true), which
 * attn-run's JIT and the AOT libraries define to check for failure. To run
 * the pipelines' output under mlir-runner, pass this library in
 * -shared-libs: a failed allocation prints one line and exits with status 2
 * instead of the kernel writing through NULL. Loading it also asks Linux for
 * the AMX tile state (the amx kernels' tiles), as attn-run and the AOT
 * libraries do before they run such code.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>

/* ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA: without it the first tile
   instruction raises SIGILL. Refused on a CPU without AMX, which then runs
   no amx kernels: nothing to report. */
__attribute__((constructor)) static void attnRequestAmxState(void) {
  (void)syscall(SYS_arch_prctl, 0x1023, 18);
}
#endif

static void attnOutOfMemory(uint64_t bytes) __attribute__((noreturn));
static void attnOutOfMemory(uint64_t bytes) {
  fprintf(stderr, "error: out of memory in the compiled code (%llu bytes)\n",
          (unsigned long long)bytes);
  fflush(stderr);
  _Exit(2);
}

void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  void *p = malloc(bytes);
  if (!p && bytes)
    attnOutOfMemory(bytes);
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  uint64_t rounded = bytes;
  void *p;
  if (alignment && bytes % alignment &&
      __builtin_add_overflow(bytes, alignment - bytes % alignment, &rounded))
    attnOutOfMemory(bytes);
  p = aligned_alloc(alignment, rounded);
  if (!p && bytes)
    attnOutOfMemory(bytes);
  return p;
}

void _mlir_memref_to_llvm_free(void *p) { free(p); }
