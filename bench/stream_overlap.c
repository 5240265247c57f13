/*
 * How well one core overlaps streaming reads with arithmetic: the bound on
 * attn's one-thread decode (journal/round-03.md, "Decode on one core").
 *
 * Two 128 MiB streams (K and V of hq=32 hkv=8 Lk=32k d=128 f32: 256 MiB in
 * all) are read row by row (512 bytes of each per key), and per key F
 * rounds of 8 independent FMAs use the loaded values (the decode kernel
 * does 64 FMAs per key at 4 query rows per K/V head). Each row count is
 * timed from memory and with the rows wrapped into a 64-row window that
 * stays in L1 (the arithmetic alone); a core that overlapped the two would
 * take max(stream, arithmetic), one that does not takes their sum.
 *
 * An argument N prefetches (prefetcht0) both rows N keys ahead. A second
 * argument 16 spreads the FMAs over 16 accumulators (K's into 8, V's into
 * the other 8) instead of 8, so that they are not one dependent chain per
 * accumulator and key: arithmetic that the core can overlap
 * (journal/round-06.md). A third argument 2 reads each block of 16 keys
 * in two passes, the first over the first 4 cache lines of every row, the
 * second over the other 4 (as the decode kernel's two P.V groups of 4 query
 * rows at d=128 do), the prefetches too: with the prefetches the hardware's
 * leave to them, without either the streams starve
 * (journal/round-31.md).
 *
 *   cc -O2 -mavx512f -mfma bench/stream_overlap.c -o /tmp/so && /tmp/so [N
 * [16 [2]]]
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROWS (8L * 32768)
#define D 128

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static volatile float sink;
static long PF = 0;
static int ACCS = 8, PASSES = 1;

static double pass(const float *k, const float *v, int rounds, long mask) {
  __m512 acc[16], q = _mm512_set1_ps(1e-9f);
  int vAcc = ACCS == 16 ? 8 : 0;
  for (int c = 0; c < 16; ++c)
    acc[c] = _mm512_setzero_ps();
  // Each pass takes chunks [c0, c0 + chunks) of the block's rows: the
  // whole row in one pass, or half of it in each of two.
  int chunks = 8 / PASSES;
  double t = now();
  for (long r0 = 0; r0 < ROWS; r0 += 16)
    for (int c0 = 0; c0 < 8; c0 += chunks)
      for (long r = r0; r < r0 + 16; ++r) {
        const float *kr = k + (r & mask) * D + 16 * c0,
                    *vr = v + (r & mask) * D + 16 * c0;
        if (PF)
          for (int o = 0; o < 64 * chunks; o += 64) {
            _mm_prefetch((const char *)(kr + PF * D) + o, _MM_HINT_T0);
            _mm_prefetch((const char *)(vr + PF * D) + o, _MM_HINT_T0);
          }
        __m512 kk[8], vv[8];
        for (int c = 0; c < chunks; ++c) {
          kk[c] = _mm512_loadu_ps(kr + 16 * c);
          vv[c] = _mm512_loadu_ps(vr + 16 * c);
        }
        for (int f = 0; f < rounds; f += 2)
          for (int c = 0; c < chunks; ++c) {
            acc[c0 + c] = _mm512_fmadd_ps(kk[c], q, acc[c0 + c]);
            acc[vAcc + c0 + c] = _mm512_fmadd_ps(vv[c], q, acc[vAcc + c0 + c]);
          }
      }
  t = now() - t;
  __m512 s = acc[0];
  for (int c = 1; c < 16; ++c)
    s = _mm512_add_ps(s, acc[c]);
  sink = _mm512_reduce_add_ps(s);
  return t;
}

static double best(const float *k, const float *v, int rounds, long mask) {
  double b = 1e9;
  for (int i = 0; i < 3; ++i) {
    double t = pass(k, v, rounds, mask);
    b = t < b ? t : b;
  }
  return b;
}

int main(int argc, char **argv) {
  if (argc > 1)
    PF = atol(argv[1]);
  if (argc > 2)
    ACCS = atoi(argv[2]) == 16 ? 16 : 8;
  if (argc > 3)
    PASSES = atoi(argv[3]) == 2 ? 2 : 1;
  size_t n = (size_t)ROWS * D;
  float *k = aligned_alloc(4096, n * 4), *v = aligned_alloc(4096, n * 4);
  if (!k || !v)
    return 1;
  for (size_t i = 0; i < n; ++i) {
    k[i] = (float)(i % 7);
    v[i] = (float)(i % 5);
  }
  double bytes = 2.0 * n * 4;
  printf("FMAs/key | memory ms | L1 ms | memory GB/s | memory / (L1 + "
         "stream alone)\n");
  double stream = 0;
  for (int rounds = 0; rounds <= 8; rounds += 2) {
    double mem = best(k, v, rounds, -1), l1 = best(k, v, rounds, 63);
    if (rounds == 0)
      stream = mem;
    printf("%8d | %9.2f | %5.2f | %11.1f | %.2f\n", 8 * rounds, mem * 1e3,
           l1 * 1e3, bytes / mem / 1e9, mem / (l1 + stream));
  }
  return 0;
}
