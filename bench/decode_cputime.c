/* Decode timing by CPU time, for a machine that other jobs share.
 *
 * Loads an attn-compile --openmp library whose entry `sdpa` is
 * hq=HQ,hkv=HKV,lq=1,lk=LK,d=128 (f32: ELT=4, bf16: ELT=2), and reports, in
 * one process, the read bandwidth of a 1 GiB read (each thread's share timed
 * by its own CLOCK_THREAD_CPUTIME_ID; the best of 3 passes of each of the
 * read patterns of attn-run --peak) and the
 * median over ITERS calls of the process CPU time divided by the threads
 * (OMP_WAIT_POLICY=passive keeps idle threads from spinning), so the share
 * of the read-K/V-once roofline: (bytes of K and V / bandwidth) / time.
 * Wall-time figures of the same runs follow the '|'.
 *
 * With ATTN_HUGEPAGES=1 in the environment, K, V and the probe's buffer
 * are 2 MiB aligned and madvise(MADV_HUGEPAGE)d (transparent huge pages where
 * the kernel's setting is "madvise"); without it, plain malloc as before.
 * With ATTN_HUGEPAGES=paired, no probe: the same call alternated on two
 * copies of Q, K and V, malloc's (4 KiB pages) and 2 MiB pages, and the
 * median of the pairs' time ratio.
 * With ATTN_KV_GAPS=G1,G2,... (bytes, up to 8), no probe: for each gap a
 * copy of K and V in one 2 MiB-aligned madvise(MADV_HUGEPAGE) buffer, V
 * starting G bytes after K's end; the copies called in turn, each call after
 * an untimed 256 MiB read, and each gap's median and best CPU time: how the
 * decode's time depends on where V lies from K (journal/round-30.md).
 *
 *   bench/decode-cputime.sh dtype threads [iters]   (builds and runs this)
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static float value(size_t i) {
  return (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
}

/* `bytes` for a large buffer, on 2 MiB pages when `huge`. */
static void *bigAllocAs(size_t bytes, int onHuge) {
  if (!onHuge)
    return malloc(bytes);
  size_t huge = (size_t)2 << 20, rounded = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, rounded);
  if (p && madvise(p, rounded, MADV_HUGEPAGE) != 0)
    perror("madvise");
  return p;
}

/* See ATTN_HUGEPAGES above. */
static int hugeMode(void) {
  const char *env = getenv("ATTN_HUGEPAGES");
  return !env ? 0 : !strcmp(env, "1") ? 1 : !strcmp(env, "paired") ? 2 : 0;
}

static void *bigAlloc(size_t bytes) {
  return bigAllocAs(bytes, hugeMode() == 1);
}

/* The kB of AnonHugePages this process has mapped. */
static long anonHugeKb(void) {
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
      break;
  if (f)
    fclose(f);
  return kb;
}

/* Fills Q, K and V (the first three of bufs). */
static void fill(void **bufs, const size_t *n, int elt) {
  for (int t = 0; t < 3; ++t)
    for (size_t i = 0; i < n[t]; ++i) {
      float f = value(i);
      if (elt == 4) {
        ((float *)bufs[t])[i] = f;
      } else {
        uint32_t u;
        memcpy(&u, &f, 4);
        ((uint16_t *)bufs[t])[i] = (uint16_t)(u >> 16);
      }
    }
}

/* See ATTN_KV_GAPS above: q is Q, qn its elements (and the output's), kn
 * those of K (and of V). */
static int kvGaps(int32_t (*sdpa)(void *const *, const int64_t *, void *),
                  void *q, size_t qn, size_t kn, int elt, int threads,
                  int iters, const char *list) {
  enum { kMaxGaps = 8 };
  size_t gaps[kMaxGaps], bytes = kn * elt;
  int n = 0;
  for (const char *c = list; *c && n < kMaxGaps; ++n) {
    char *end;
    gaps[n] = strtoull(c, &end, 0);
    if (end == c)
      break;
    c = *end == ',' ? end + 1 : end;
  }
  if (n == 0) {
    fprintf(stderr, "ATTN_KV_GAPS: no gap in '%s'\n", list);
    return 2;
  }
  void *bufs[kMaxGaps][4];
  size_t kvn[3] = {0, kn, kn};
  for (int g = 0; g < n; ++g) {
    char *kv = bigAllocAs(2 * bytes + gaps[g], 1);
    void *fillBufs[3] = {NULL, kv, kv + bytes + gaps[g]};
    fill(fillBufs, kvn, elt);
    bufs[g][0] = q;
    bufs[g][1] = kv;
    bufs[g][2] = kv + bytes + gaps[g];
    bufs[g][3] = malloc(qn * elt);
  }
  size_t coldWords = ((size_t)256 << 20) / 8;
  uint64_t *cold = bigAllocAs(coldWords * 8, 1);
  for (size_t i = 0; i < coldWords; ++i)
    cold[i] = i;
  volatile uint64_t sink = 0;
  double *t = malloc(sizeof(double) * n * iters);
  for (int g = 0; g < n; ++g)
    sdpa(bufs[g], NULL, NULL);
  for (int i = 0; i < iters; ++i)
    for (int k = 0; k < n; ++k) {
      int g = (i + k) % n; /* each gap first in turn */
      uint64_t sum = 0;
      for (size_t w = 0; w < coldWords; w += 8)
        sum += cold[w];
      sink += sum;
      double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
      sdpa(bufs[g], NULL, NULL);
      t[g * iters + i] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / threads;
    }
  for (int g = 0; g < n; ++g) {
    double *tg = t + g * iters;
    qsort(tg, iters, sizeof(double), cmp);
    printf("V %zu bytes after K's end: median %.2f ms, best %.2f ms (%d "
           "calls)\n",
           gaps[g], tg[iters / 2] * 1e3, tg[0] * 1e3, iters);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s LIB ELT THREADS ITERS [HQ HKV LK]\n", argv[0]);
    return 2;
  }
  int elt = atoi(argv[2]), threads = atoi(argv[3]), iters = atoi(argv[4]);
  size_t hq = argc > 5 ? atoi(argv[5]) : 32, hkv = argc > 6 ? atoi(argv[6]) : 8;
  size_t lk = argc > 7 ? atoi(argv[7]) : 32768, d = 128;
  omp_set_num_threads(threads);
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int32_t (*sdpa)(void *const *, const int64_t *, void *) =
      (int32_t(*)(void *const *, const int64_t *, void *))dlsym(lib, "sdpa");
  size_t qn = hq * d, kn = hkv * lk * d, n[3] = {qn, kn, kn};
  void *bufs[4];
  for (int t = 0; t < 4; ++t)
    bufs[t] = bigAlloc((t == 3 ? qn : n[t]) * elt);
  fill(bufs, n, elt);
  double kvBytes = 2.0 * kn * elt;
  if (getenv("ATTN_KV_GAPS"))
    return kvGaps(sdpa, bufs[0], qn, kn, elt, threads, iters,
                  getenv("ATTN_KV_GAPS"));
  if (hugeMode() == 2) {
    /* The same call on the same values, Q, K and V on 4 KiB pages (A) and on
     * 2 MiB pages (B), alternated A B B A ...: the median of the pairs' B/A
     * CPU time. */
    long before = anonHugeKb();
    void *huge[4];
    for (int t = 0; t < 4; ++t)
      huge[t] = bigAllocAs((t == 3 ? qn : n[t]) * elt, 1);
    fill(huge, n, elt);
    printf("AnonHugePages: %ld kB with the 4 KiB copies, %ld kB with both\n",
           before, anonHugeKb());
    double *ratio = malloc(iters * sizeof(double)), t[2], bestA = 1e9,
           bestB = 1e9;
    sdpa(bufs, NULL, NULL);
    sdpa(huge, NULL, NULL);
    for (int i = 0; i < iters; ++i) {
      for (int k = 0; k < 2; ++k) {
        int side = (i + k) % 2; /* 0: A first on even pairs */
        double c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        sdpa(side ? huge : bufs, NULL, NULL);
        t[side] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / threads;
      }
      ratio[i] = t[1] / t[0];
      bestA = t[0] < bestA ? t[0] : bestA;
      bestB = t[1] < bestB ? t[1] : bestB;
    }
    qsort(ratio, iters, sizeof(double), cmp);
    printf("paired, %d pairs: 4 KiB pages best %.2f ms, 2 MiB pages best %.2f "
           "ms; median B/A %.3f (quartiles %.3f-%.3f)\n",
           iters, bestA * 1e3, bestB * 1e3, ratio[iters / 2], ratio[iters / 4],
           ratio[3 * iters / 4]);
    return 0;
  }

  size_t words = (1ul << 30) / 8;
  uint64_t *buf = bigAlloc(words * 8);
  for (size_t i = 0; i < words; ++i)
    buf[i] = i;
  double bw = 0, bwWall = 0;
  volatile uint64_t sink = 0;
  /* One sequential stream, and 2, 4, 8 streams side by side, with and
   * without prefetching, as attn-run --peak measures it (lib/Execution/
   * Peak.cpp): the best of 3 passes of each. */
  static const int patStreams[] = {1, 2, 4, 8, 2, 4, 8};
  static const size_t patPrefetch[] = {0, 0, 0, 0, 2048, 2048, 2048};
  for (int pat = 0; pat < 7; ++pat)
    for (int rep = 0; rep < 3; ++rep) {
      int k = patStreams[pat];
      size_t dist = patPrefetch[pat];
      double slowest = 0, w0 = now(CLOCK_MONOTONIC);
#pragma omp parallel num_threads(threads)
      {
        int t = omp_get_thread_num();
        size_t b = words * t / threads, e = words * (t + 1) / threads;
        size_t part = (e - b) / k / 8 * 8;
        uint64_t s[8] = {0}, total = 0;
        double c0 = now(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < part; i += 8)
          for (int j = 0; j < k; ++j) {
            const uint64_t *line = buf + b + j * part + i;
            if (dist)
              __builtin_prefetch((const char *)line + dist, 0, 3);
            s[j] += line[0] + line[1] + line[2] + line[3] + line[4] + line[5] +
                    line[6] + line[7];
          }
        for (size_t i = b + k * part; i < e; ++i)
          total += buf[i];
        double c = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        for (int j = 0; j < 8; ++j)
          total += s[j];
#pragma omp critical
        {
          if (c > slowest)
            slowest = c;
          sink += total;
        }
      }
      double w = now(CLOCK_MONOTONIC) - w0;
      if (words * 8 / slowest / 1e9 > bw)
        bw = words * 8 / slowest / 1e9;
      if (words * 8 / w / 1e9 > bwWall)
        bwWall = words * 8 / w / 1e9;
    }
  free(buf);

  sdpa(bufs, NULL, NULL);
  double *cpu = malloc(iters * sizeof(double)),
         *wall = malloc(iters * sizeof(double));
  for (int i = 0; i < iters; ++i) {
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    sdpa(bufs, NULL, NULL);
    wall[i] = now(CLOCK_MONOTONIC) - w0;
    cpu[i] = (now(CLOCK_PROCESS_CPUTIME_ID) - c0) / threads;
  }
  qsort(cpu, iters, sizeof(double), cmp);
  qsort(wall, iters, sizeof(double), cmp);
  double c = cpu[iters / 2], w = wall[iters / 2];
  double roof = kvBytes / (bw * 1e9), roofWall = kvBytes / (bwWall * 1e9);
  printf("cpu time: read %.1f GB/s, K/V once %.2f ms, kernel %.2f ms "
         "(median of %d; %.1f ns per key and K/V head): %.1f%% of the "
         "roofline | wall: read %.1f GB/s, kernel %.2f ms: %.1f%%\n",
         bw, roof * 1e3, c * 1e3, iters, c * 1e9 / (hkv * lk), 100 * roof / c,
         bwWall, w * 1e3, 100 * roofWall / w);
  return 0;
}
