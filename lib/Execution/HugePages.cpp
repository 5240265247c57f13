//===- HugePages.cpp - buffers on transparent huge pages ------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HugePages.h"

#include "attn/Spec/Error.h"
#include "attn/Spec/HostTensor.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sys/mman.h>
#include <utility>

using namespace mlir::attn::exec;

std::string mlir::attn::exec::transparentHugePagesMode() {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(file, line))
    return "";
  size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return "";
  return line.substr(open + 1, close - open - 1);
}

int64_t mlir::attn::exec::anonHugePagesBytes() {
  std::ifstream file("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(file, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "AnonHugePages: %lld kB", &kb) == 1)
      return static_cast<int64_t>(kb) * 1024;
  }
  return -1;
}

llvm::Expected<HugePageBuffer> HugePageBuffer::create(size_t bytes) {
  HugePageBuffer buffer;
  buffer.bytes = bytes;
  if (!bytes)
    return std::move(buffer);
  size_t rounded =
      (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  // One huge page more than the data, so that a 2 MiB boundary lies within
  // the first; the unaligned head and the tail are unmapped again.
  size_t over = rounded + kHugePageBytes;
  void *base = mmap(nullptr, over, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return makeError("cannot map " + std::to_string(bytes) +
                     " bytes for huge pages: " + std::strerror(errno));
  auto start = reinterpret_cast<uintptr_t>(base);
  uintptr_t aligned =
      (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > start)
    munmap(base, aligned - start);
  size_t tail = start + over - (aligned + rounded);
  if (tail)
    munmap(reinterpret_cast<void *>(aligned + rounded), tail);
  buffer.dataPtr = reinterpret_cast<void *>(aligned);
  buffer.mapped = rounded;
  // Advice only: where THP is off (or the kernel has none) the pages stay
  // 4 KiB ones, which the caller sees in anonHugePagesBytes().
  madvise(buffer.dataPtr, rounded, MADV_HUGEPAGE);
  return std::move(buffer);
}

HugePageBuffer::HugePageBuffer(HugePageBuffer &&other) noexcept {
  *this = std::move(other);
}

HugePageBuffer &HugePageBuffer::operator=(HugePageBuffer &&other) noexcept {
  if (this != &other) {
    release();
    dataPtr = std::exchange(other.dataPtr, nullptr);
    bytes = std::exchange(other.bytes, 0);
    mapped = std::exchange(other.mapped, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() { release(); }

void HugePageBuffer::release() {
  if (mapped)
    munmap(dataPtr, mapped);
  dataPtr = nullptr;
  mapped = 0;
}

llvm::Expected<std::vector<void *>>
mlir::attn::exec::copyOntoHugePages(const std::vector<HostTensor *> &tensors,
                                    std::vector<HugePageBuffer> &buffers,
                                    int64_t &copiedBytes) {
  std::vector<void *> data;
  copiedBytes = 0;
  for (HostTensor *t : tensors) {
    if (t->byteSize() < kHugePagesFromBytes) {
      data.push_back(t->raw());
      continue;
    }
    llvm::Expected<HugePageBuffer> b = HugePageBuffer::create(t->byteSize());
    if (!b)
      return b.takeError();
    std::memcpy(b->data(), t->raw(), b->size());
    data.push_back(b->data());
    copiedBytes += static_cast<int64_t>(b->size());
    buffers.push_back(std::move(*b));
  }
  return data;
}
