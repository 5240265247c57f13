//===- GuardedBuffer.cpp - buffers between PROT_NONE guard pages ----------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/GuardedBuffer.h"

#include "attn/Spec/Error.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

using namespace mlir::attn::exec;

namespace {
/// One live buffer, as the fault handler reads it: lock-free atomics only.
/// `base` is written last on registration and cleared first on release, so
/// a handler that sees it non-zero sees the other fields of that buffer.
struct Slot {
  std::atomic<uintptr_t> base{0};
  std::atomic<uintptr_t> mapped{0}, data{0}, bytes{0};
  /// Set by makeReadOnly(): a fault in the data pages is a write into it.
  std::atomic<bool> readOnly{false};
};
constexpr int kSlots = 1024;
Slot slots[kSlots];

std::atomic<const char *> faultPrefix{"error: "};
std::atomic<int> faultStatus{1};
struct sigaction previousSegv, previousBus;
std::atomic<bool> installed{false};

size_t pageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

/// Appends `value` in decimal at `out`; returns the end.
char *appendDecimal(char *out, uint64_t value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  while (n)
    *out++ = digits[--n];
  return out;
}

char *appendText(char *out, const char *text) {
  while (*text)
    *out++ = *text++;
  return out;
}

/// Async-signal-safe: no allocation, no locks, write(2) and _exit(2) only.
void onFault(int sig, siginfo_t *info, void *context) {
  uintptr_t addr = reinterpret_cast<uintptr_t>(info->si_addr);
  size_t page = pageSize();
  for (Slot &s : slots) {
    uintptr_t base = s.base.load(std::memory_order_acquire);
    if (!base)
      continue;
    uintptr_t mapped = s.mapped.load(std::memory_order_relaxed);
    bool inStartGuard = addr >= base && addr < base + page;
    bool inEndGuard = addr >= base + mapped - page && addr < base + mapped;
    bool inReadOnlyData = s.readOnly.load(std::memory_order_relaxed) &&
                          addr >= base + page && addr < base + mapped - page;
    if (!inStartGuard && !inEndGuard && !inReadOnlyData)
      continue;
    uintptr_t data = s.data.load(std::memory_order_relaxed);
    uintptr_t bytes = s.bytes.load(std::memory_order_relaxed);
    char line[512];
    char *p = appendText(line, faultPrefix.load());
    p = appendText(p, inReadOnlyData
                          ? "write into an input by the generated code (a "
                          : "out-of-bounds access by the generated code (a ");
    const char *kind = inReadOnlyData ? "write" : "read or write";
#if defined(__x86_64__) && defined(__linux__)
    // Bit 1 of the page-fault error code: the access was a write.
    if (context && !inReadOnlyData) {
      auto *uc = static_cast<ucontext_t *>(context);
      kind = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? "write" : "read";
    }
#else
    (void)context;
#endif
    p = appendText(p, kind);
    // The offset of the faulting byte from the buffer's first byte.
    p = appendText(p, " at byte ");
    if (addr < data) {
      *p++ = '-';
      p = appendDecimal(p, data - addr);
    } else {
      p = appendDecimal(p, addr - data);
    }
    p = appendText(p, " of a ");
    p = appendDecimal(p, bytes);
    p = appendText(p, inReadOnlyData ? "-byte read-only buffer)\n"
                                     : "-byte buffer)\n");
    ssize_t ignored = write(STDERR_FILENO, line, p - line);
    (void)ignored;
    _exit(faultStatus.load());
  }
  // Not ours: put back whatever handled the signal before (LLVM's stack
  // dump, or the default action) and let the faulting access run again. A
  // signal sent by kill() does not recur by itself: send it again.
  sigaction(sig, sig == SIGBUS ? &previousBus : &previousSegv, nullptr);
  if (info->si_code <= 0)
    raise(sig);
}
} // namespace

void mlir::attn::exec::installGuardFaultHandler(const char *prefix,
                                                int exitStatus) {
  faultPrefix.store(prefix);
  faultStatus.store(exitStatus);
  if (installed.exchange(true))
    return;
  pageSize();
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = onFault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previousSegv);
  sigaction(SIGBUS, &action, &previousBus);
}

llvm::Expected<GuardedBuffer> GuardedBuffer::create(size_t bytes,
                                                    GuardPlacement placement) {
  size_t page = pageSize();
  size_t dataPages = bytes / page + (bytes % page != 0);
  if (dataPages > (SIZE_MAX / page) - 2)
    return makeError("a guarded buffer of " + std::to_string(bytes) +
                     " bytes is too large");
  size_t mapped = (dataPages + 2) * page;
  void *base =
      mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    return makeError("cannot map a guarded buffer of " + std::to_string(bytes) +
                     " bytes: " + strerror(errno));
  auto *b = static_cast<char *>(base);
  if (dataPages &&
      mprotect(b + page, dataPages * page, PROT_READ | PROT_WRITE)) {
    int err = errno;
    munmap(base, mapped);
    return makeError("cannot map a guarded buffer of " + std::to_string(bytes) +
                     " bytes: " + strerror(err));
  }
  GuardedBuffer buffer;
  buffer.base = base;
  buffer.mapped = mapped;
  buffer.bytes = bytes;
  buffer.dataPtr = placement == GuardPlacement::AgainstStart
                       ? b + page
                       : b + mapped - page - bytes;
  for (int i = 0; i < kSlots; ++i) {
    uintptr_t expected = 0;
    // Claim the slot with a placeholder, fill it, then publish the base.
    if (!slots[i].base.compare_exchange_strong(expected, 1))
      continue;
    slots[i].mapped.store(mapped, std::memory_order_relaxed);
    slots[i].data.store(reinterpret_cast<uintptr_t>(buffer.dataPtr),
                        std::memory_order_relaxed);
    slots[i].bytes.store(bytes, std::memory_order_relaxed);
    slots[i].readOnly.store(false, std::memory_order_relaxed);
    slots[i].base.store(reinterpret_cast<uintptr_t>(base),
                        std::memory_order_release);
    buffer.slot = i;
    return std::move(buffer);
  }
  return makeError("more than 1024 guarded buffers at once");
}

llvm::Error GuardedBuffer::makeReadOnly() {
  size_t page = pageSize();
  size_t dataBytes = mapped - 2 * page;
  if (!dataBytes)
    return llvm::Error::success();
  if (mprotect(static_cast<char *>(base) + page, dataBytes, PROT_READ))
    return makeError(std::string("cannot make a guarded buffer read-only: ") +
                     strerror(errno));
  slots[slot].readOnly.store(true, std::memory_order_release);
  return llvm::Error::success();
}

GuardedBuffer::GuardedBuffer(GuardedBuffer &&other) noexcept {
  *this = std::move(other);
}

GuardedBuffer &GuardedBuffer::operator=(GuardedBuffer &&other) noexcept {
  if (this != &other) {
    release();
    base = other.base;
    mapped = other.mapped;
    dataPtr = other.dataPtr;
    bytes = other.bytes;
    slot = other.slot;
    other.base = nullptr;
    other.slot = -1;
  }
  return *this;
}

GuardedBuffer::~GuardedBuffer() { release(); }

void GuardedBuffer::release() {
  if (slot >= 0)
    slots[slot].base.store(0, std::memory_order_release);
  if (base)
    munmap(base, mapped);
  base = nullptr;
  slot = -1;
}
