/* The driver of bench/timer.py: times one attn-compile library's entry
 * without Python in the loop. bench/timer.py builds the library and this,
 * writes the inputs and reads what this prints; run it through that.
 *
 *   timer LIB ENTRY ITERS ROUNDS THREADS PAGES PROBE_MIB BUF...
 *
 * BUF, in the entry's buffer order: i:PATH (an input, PATH's raw bytes) or
 * o:BYTES (an output). PAGES: malloc (aligned_alloc), small (2 MiB-aligned,
 * madvise(MADV_NOHUGEPAGE)) or huge (madvise(MADV_HUGEPAGE)). One untimed
 * call, then ROUNDS rounds of ITERS calls; per round one line
 *   round CPU WALL
 * the seconds per call: process CPU time (CLOCK_PROCESS_CPUTIME_ID) over
 * THREADS, and CLOCK_MONOTONIC. With PROBE_MIB > 0, first a read of that
 * many MiB on THREADS threads (one stream and 2, 4, 8 side by side, with
 * and without software prefetching, as attn-run --peak reads; the best of
 * 3 passes of each),
 *   probe CPU_GBS WALL_GBS
 * CPU_GBS timed by the slowest thread's CLOCK_THREAD_CPUTIME_ID.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef int32_t (*Entry)(void *const *, const int64_t *, void *);

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static const char *pages = "malloc";

/* `bytes` (at least 1) on the pages `pages` names. */
static void *bigAlloc(size_t bytes) {
  size_t huge = (size_t)2 << 20;
  if (!strcmp(pages, "malloc"))
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
  size_t rounded = (bytes + huge - 1) / huge * huge;
  void *p = aligned_alloc(huge, rounded);
  if (p && madvise(p, rounded,
                   !strcmp(pages, "huge") ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
    perror("timer: madvise");
  return p;
}

static void *readInput(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END)) {
    perror(path);
    exit(2);
  }
  long size = ftell(f);
  rewind(f);
  char *p = bigAlloc(size > 0 ? size : 1);
  if (!p || fread(p, 1, size, f) != (size_t)size) {
    fprintf(stderr, "timer: cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  return p;
}

/* The read probe: each thread reads its share of `words`. */
typedef struct {
  const uint64_t *buf;
  size_t begin, end;
  int streams;
  size_t prefetch;
  double cpu;
  uint64_t sum;
} Share;

static void *readShare(void *arg) {
  Share *s = arg;
  size_t part = (s->end - s->begin) / s->streams / 8 * 8;
  uint64_t acc[8] = {0}, total = 0;
  double c0 = now(CLOCK_THREAD_CPUTIME_ID);
  for (size_t i = 0; i < part; i += 8)
    for (int j = 0; j < s->streams; ++j) {
      const uint64_t *line = s->buf + s->begin + j * part + i;
      if (s->prefetch)
        __builtin_prefetch((const char *)line + s->prefetch, 0, 3);
      acc[j] += line[0] + line[1] + line[2] + line[3] + line[4] + line[5] +
                line[6] + line[7];
    }
  for (size_t i = s->begin + s->streams * part; i < s->end; ++i)
    total += s->buf[i];
  s->cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
  for (int j = 0; j < 8; ++j)
    total += acc[j];
  s->sum = total;
  return NULL;
}

static void probe(int threads, size_t mib) {
  size_t words = (mib << 20) / 8;
  uint64_t *buf = bigAlloc(words * 8);
  for (size_t i = 0; i < words; ++i)
    buf[i] = i;
  static const int patStreams[] = {1, 2, 4, 8, 2, 4, 8};
  static const size_t patPrefetch[] = {0, 0, 0, 0, 2048, 2048, 2048};
  Share *shares = calloc(threads, sizeof(Share));
  pthread_t *ids = calloc(threads, sizeof(pthread_t));
  double bw = 0, bwWall = 0;
  volatile uint64_t sink = 0;
  for (int pat = 0; pat < 7; ++pat)
    for (int rep = 0; rep < 3; ++rep) {
      double w0 = now(CLOCK_MONOTONIC), slowest = 0;
      for (int t = 0; t < threads; ++t) {
        shares[t] = (Share){buf, words * t / threads, words * (t + 1) / threads,
                            patStreams[pat], patPrefetch[pat], 0, 0};
        pthread_create(&ids[t], NULL, readShare, &shares[t]);
      }
      for (int t = 0; t < threads; ++t) {
        pthread_join(ids[t], NULL);
        slowest = shares[t].cpu > slowest ? shares[t].cpu : slowest;
        sink += shares[t].sum;
      }
      double w = now(CLOCK_MONOTONIC) - w0;
      if (words * 8 / slowest / 1e9 > bw)
        bw = words * 8 / slowest / 1e9;
      if (words * 8 / w / 1e9 > bwWall)
        bwWall = words * 8 / w / 1e9;
    }
  free(buf);
  printf("probe %.6g %.6g\n", bw, bwWall);
}

int main(int argc, char **argv) {
  if (argc < 9) {
    fprintf(stderr, "usage: %s LIB ENTRY ITERS ROUNDS THREADS PAGES PROBE_MIB "
                    "BUF... (run it through bench/timer.py)\n",
            argv[0]);
    return 2;
  }
  int iters = atoi(argv[3]), rounds = atoi(argv[4]), threads = atoi(argv[5]);
  pages = argv[6];
  long probeMib = atol(argv[7]);
  if (iters < 1 || rounds < 1 || threads < 1 || probeMib < 0 ||
      (strcmp(pages, "malloc") && strcmp(pages, "small") &&
       strcmp(pages, "huge"))) {
    fprintf(stderr, "timer: bad ITERS, ROUNDS, THREADS, PAGES or PROBE_MIB\n");
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "timer: %s\n", dlerror());
    return 2;
  }
  Entry entry = (Entry)dlsym(lib, argv[2]);
  if (!entry) {
    fprintf(stderr, "timer: no %s in %s\n", argv[2], argv[1]);
    return 2;
  }
  int nbufs = argc - 8;
  void **bufs = calloc(nbufs, sizeof(void *));
  for (int i = 0; i < nbufs; ++i) {
    const char *b = argv[8 + i];
    if (!strncmp(b, "i:", 2)) {
      bufs[i] = readInput(b + 2);
    } else if (!strncmp(b, "o:", 2)) {
      size_t bytes = strtoull(b + 2, NULL, 10);
      bufs[i] = bigAlloc(bytes ? bytes : 1);
      if (bufs[i])
        memset(bufs[i], 0xFF, bytes);
    } else {
      fprintf(stderr, "timer: a buffer is i:PATH or o:BYTES, not '%s'\n", b);
      return 2;
    }
    if (!bufs[i]) {
      fprintf(stderr, "timer: out of memory\n");
      return 2;
    }
  }
  if (probeMib)
    probe(threads, probeMib);
  int32_t status = entry(bufs, NULL, NULL);
  if (status) {
    fprintf(stderr, "timer: %s returned %d\n", argv[2], status);
    return 1;
  }
  for (int r = 0; r < rounds; ++r) {
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    for (int i = 0; i < iters; ++i)
      if (entry(bufs, NULL, NULL))
        return 1;
    double w = now(CLOCK_MONOTONIC) - w0;
    double c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    printf("round %.9g %.9g\n", c / iters / threads, w / iters);
  }
  return 0;
}
