//===- ReadProbe.cpp - the machine's memory read bandwidth, measured ------===//
//
// Part of the attn project.
//
// The read probe behind a decode step's roofline (attn-run --peak): threads
// summing their shares of a buffer far larger than the caches, in the ways
// of reading it that sumForReadProbe offers; the best of them, and single
// passes of that best way to pair with the timed calls of a kernel.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Peak.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <thread>

using namespace mlir::attn::exec;

uint64_t mlir::attn::exec::sumForReadProbe(const uint64_t *buffer, size_t begin,
                                           size_t end, int streams,
                                           size_t prefetchBytes) {
  assert(streams >= 1 && streams <= 8 && "1 to 8 streams");
  constexpr size_t kLineWords = 8;
  size_t part = (end - begin) / streams / kLineWords * kLineWords;
  uint64_t sums[8] = {0};
  for (size_t i = 0; i < part; i += kLineWords)
    for (int s = 0; s < streams; ++s) {
      const uint64_t *line = buffer + begin + s * part + i;
      if (prefetchBytes)
        __builtin_prefetch(reinterpret_cast<const char *>(line) + prefetchBytes,
                           /*rw=*/0, /*locality=*/3);
      // Independent sums per stream keep several loads in flight.
      sums[s] += line[0] + line[1] + line[2] + line[3] + line[4] + line[5] +
                 line[6] + line[7];
    }
  uint64_t total = 0;
  for (uint64_t x : sums)
    total += x;
  // What the parts leave over, one word at a time.
  for (size_t i = begin + streams * part; i < end; ++i)
    total += buffer[i];
  return total;
}

ReadProbe::ReadProbe(int threads, size_t bytes, bool hugePages)
    : threads(threads > 0 ? threads
                          : std::max(1u, std::thread::hardware_concurrency())),
      words(std::max<size_t>(1, bytes / sizeof(uint64_t))),
      sums(this->threads) {
  if (hugePages) {
    llvm::Expected<HugePageBuffer> mapped =
        HugePageBuffer::create(words * sizeof(uint64_t));
    if (mapped) {
      huge = std::move(*mapped);
      buffer = static_cast<uint64_t *>(huge->data());
    } else {
      llvm::consumeError(mapped.takeError());
    }
  }
  if (!buffer) {
    owned.reset(new uint64_t[words]);
    buffer = owned.get();
  }
  for (size_t i = 0; i < words; ++i)
    buffer[i] = i;
}

ReadProbe::~ReadProbe() {
  // Keep the sums observable so the loads are not optimized away.
  volatile uint64_t sink = 0;
  for (uint64_t s : sums)
    sink = sink + s;
  (void)sink;
}

double ReadProbe::passOf(Pattern pattern) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t]() {
      sums[t] += sumForReadProbe(buffer, words * t / threads,
                                 words * (t + 1) / threads, pattern.streams,
                                 pattern.prefetch);
    });
  for (std::thread &w : workers)
    w.join();
  auto t1 = std::chrono::steady_clock::now();
  return static_cast<double>(words * sizeof(uint64_t)) /
         std::chrono::duration<double>(t1 - t0).count() / 1e9;
}

double ReadProbe::measureBest() {
  // A roofline is the best a core can read, and one sequential stream is not
  // it: on a Zen 5, 30-33 GB/s from one thread against 38-40 GB/s with 4
  // streams and prefetching (journal/round-06.md). The best of
  // three passes of each pattern.
  const Pattern patterns[] = {{1, 0},    {2, 0},    {4, 0},   {8, 0},
                              {2, 2048}, {4, 2048}, {8, 2048}};
  double best = 0;
  for (Pattern pattern : patterns)
    for (int k = 0; k < 3; ++k)
      if (double gbs = passOf(pattern); gbs > best) {
        best = gbs;
        bestPattern = pattern;
      }
  return best;
}

double ReadProbe::pass() { return passOf(bestPattern); }
