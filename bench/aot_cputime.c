/* Prefill timing by CPU time, for a machine that other jobs share.
 *
 * Loads an attn-compile library whose entry `sdpa` takes Q, K, V and the
 * output (no mask, no lse; f32 or 16-bit elements), fills the inputs with
 * small finite values, calls it once, then reports the best of 5 rounds of
 * ITERS calls by process CPU time (CLOCK_PROCESS_CPUTIME_ID): ms per call and
 * GFLOP/s for the FLOP count given.
 *
 *   aot_cputime LIB ITERS Q_ELEMS KV_ELEMS ELT_BYTES GFLOP
 *   (bench/aot-cputime.sh builds the library and this, and does the sums)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpuSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Small values of the element type: f32 in [-0.5, 0.5), or the bit
 * patterns 0x3c00-0x3c7f: bf16 in [2^-7, 2^-6), f16 in [1, 1.124). */
static void *filled(size_t elems, int eltBytes, unsigned seed) {
  void *p = aligned_alloc(64, (elems * eltBytes + 63) / 64 * 64);
  if (!p)
    return NULL;
  for (size_t i = 0; i < elems; ++i) {
    unsigned x = (unsigned)(i * 2654435761u + seed) >> 24;
    if (eltBytes == 4)
      ((float *)p)[i] = (float)x / 256.0f - 0.5f;
    else
      ((uint16_t *)p)[i] = (uint16_t)(0x3c00u + (x & 0x7f));
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s LIB ITERS Q_ELEMS KV_ELEMS ELT_BYTES GFLOP\n",
            argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  int32_t (*sdpa)(void *const *, const int64_t *, void *) =
      (int32_t(*)(void *const *, const int64_t *, void *))dlsym(lib, "sdpa");
  int iters = atoi(argv[2]);
  size_t qElems = strtoull(argv[3], NULL, 10);
  size_t kvElems = strtoull(argv[4], NULL, 10);
  int elt = atoi(argv[5]);
  double gflop = atof(argv[6]);
  void *bufs[4] = {filled(qElems, elt, 1), filled(kvElems, elt, 2),
                   filled(kvElems, elt, 3), filled(qElems, elt, 4)};
  if (!sdpa || !bufs[0] || !bufs[1] || !bufs[2] || !bufs[3] || iters < 1)
    return 2;
  if (sdpa(bufs, NULL, NULL))
    return 1;
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    double t0 = cpuSeconds();
    for (int i = 0; i < iters; ++i)
      if (sdpa(bufs, NULL, NULL))
        return 1;
    double t = (cpuSeconds() - t0) / iters;
    if (t < best)
      best = t;
  }
  printf("%.4f ms per call (best of 5 x %d, CPU time)  %.1f GFLOP/s\n",
         best * 1e3, iters, gflop / best);
  return 0;
}
