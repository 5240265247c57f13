//===- HugePages.h - buffers on transparent huge pages ----------*- C++ -*-===//
//
// Part of the attn project.
//
// attn-run --huge-pages times the compiled kernels on copies of their large
// inputs and outputs that sit on 2 MiB transparent huge pages, as NumPy puts
// its arrays of 4 MiB and more (madvise(MADV_HUGEPAGE)); a C or C++ caller's
// malloc gives 4 KiB pages where the kernel's THP setting is `madvise`. The
// decode kernels read K and V at a different rate on the two
// (journal/round-26.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_HUGEPAGES_H
#define ATTN_EXECUTION_HUGEPAGES_H

#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::attn::exec {

/// Bytes per huge page (x86-64's 2 MiB).
constexpr size_t kHugePageBytes = size_t(2) << 20;
/// NumPy's threshold: arrays of this many bytes and more go on huge pages.
constexpr size_t kHugePagesFromBytes = size_t(4) << 20;

/// The kernel's transparent-huge-page setting (the bracketed word of
/// /sys/kernel/mm/transparent_hugepage/enabled): "always", "madvise",
/// "never", or "" where the file is missing or unreadable.
std::string transparentHugePagesMode();

/// The AnonHugePages of this process (/proc/self/smaps_rollup) in bytes; -1
/// where that file is missing or has no such line.
int64_t anonHugePagesBytes();

/// `bytes` of zeroed, read-write memory whose first byte is 2 MiB aligned,
/// madvise(MADV_HUGEPAGE)d before any page is touched, so that its pages
/// are huge ones where the kernel has them free.
class HugePageBuffer {
public:
  static llvm::Expected<HugePageBuffer> create(size_t bytes);
  HugePageBuffer(HugePageBuffer &&other) noexcept;
  HugePageBuffer &operator=(HugePageBuffer &&other) noexcept;
  HugePageBuffer(const HugePageBuffer &) = delete;
  HugePageBuffer &operator=(const HugePageBuffer &) = delete;
  ~HugePageBuffer();

  void *data() const { return dataPtr; }
  size_t size() const { return bytes; }

private:
  HugePageBuffer() = default;
  void release();

  void *dataPtr = nullptr;
  size_t bytes = 0, mapped = 0;
};

struct HostTensor;

/// Each tensor of `tensors` of kHugePagesFromBytes and more copied into a
/// HugePageBuffer appended to `buffers` (`copiedBytes` their sum); returns
/// one data pointer per tensor for JitKernel::run: the copy's, or a smaller
/// tensor's own bytes.
llvm::Expected<std::vector<void *>>
copyOntoHugePages(const std::vector<HostTensor *> &tensors,
                  std::vector<HugePageBuffer> &buffers, int64_t &copiedBytes);

} // namespace mlir::attn::exec

#endif // ATTN_EXECUTION_HUGEPAGES_H
