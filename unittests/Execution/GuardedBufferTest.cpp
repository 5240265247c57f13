//===- GuardedBufferTest.cpp - guard pages catch out-of-bounds access -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/GuardedBuffer.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <sys/wait.h>

using namespace mlir::attn::exec;

namespace {

// The out-of-bounds accesses go through volatile pointers so that the
// compiler keeps them.
void writeAt(void *base, std::ptrdiff_t offset) {
  volatile uint8_t *p = static_cast<uint8_t *>(base) + offset;
  *p = 42;
}
uint8_t readAt(void *base, std::ptrdiff_t offset) {
  volatile uint8_t *p = static_cast<uint8_t *>(base) + offset;
  return *p;
}

GuardedBuffer make(size_t bytes, GuardPlacement placement) {
  llvm::Expected<GuardedBuffer> b = GuardedBuffer::create(bytes, placement);
  if (!b) {
    ADD_FAILURE() << llvm::toString(b.takeError());
    std::abort();
  }
  return std::move(*b);
}

TEST(GuardedBufferTest, InBoundsAccessIsFine) {
  for (GuardPlacement p :
       {GuardPlacement::AgainstEnd, GuardPlacement::AgainstStart}) {
    for (size_t bytes : {size_t(1), size_t(100), size_t(4096), size_t(12345)}) {
      GuardedBuffer b = make(bytes, p);
      ASSERT_EQ(b.size(), bytes);
      auto *data = static_cast<uint8_t *>(b.data());
      EXPECT_EQ(data[0], 0);
      EXPECT_EQ(data[bytes - 1], 0);
      std::memset(data, 7, bytes);
      EXPECT_EQ(readAt(data, bytes - 1), 7);
    }
  }
}

TEST(GuardedBufferTest, DataTouchesTheGuard) {
  GuardedBuffer end = make(100, GuardPlacement::AgainstEnd);
  uintptr_t endOfData = reinterpret_cast<uintptr_t>(end.data()) + 100;
  EXPECT_EQ(endOfData % 4096, 0u);
  GuardedBuffer start = make(100, GuardPlacement::AgainstStart);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(start.data()) % 4096, 0u);
}

using GuardedBufferDeathTest = ::testing::Test;

TEST_F(GuardedBufferDeathTest, WritePastTheEndIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installGuardFaultHandler("test: error: ", 1);
        GuardedBuffer b = make(100, GuardPlacement::AgainstEnd);
        writeAt(b.data(), 100);
      },
      ::testing::ExitedWithCode(1),
      "^test: error: out-of-bounds access by the generated code \\(a write at "
      "byte 100 of a 100-byte buffer\\)\n$");
}

TEST_F(GuardedBufferDeathTest, ReadBeforeTheStartIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installGuardFaultHandler("test: error: ", 1);
        GuardedBuffer b = make(100, GuardPlacement::AgainstStart);
        readAt(b.data(), -8);
      },
      ::testing::ExitedWithCode(1),
      "out-of-bounds access by the generated code \\(a read at byte -8 of a "
      "100-byte buffer\\)");
}

TEST_F(GuardedBufferDeathTest, EmptyBufferFaultsOnAnyAccess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        installGuardFaultHandler("test: error: ", 1);
        GuardedBuffer b = make(0, GuardPlacement::AgainstEnd);
        writeAt(b.data(), 0);
      },
      ::testing::ExitedWithCode(1), "a write at byte 0 of a 0-byte buffer");
}

/// A fault the guard handler does not claim: the process dies by the
/// signal, or (under ASan, whose handler the guard handler hands back to)
/// exits with ASan's report; never with the guard handler's status (42).
bool diedOfUnclaimedFault(int status) {
  if (WIFSIGNALED(status))
    return true;
  return WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
         WEXITSTATUS(status) != 42;
}

TEST_F(GuardedBufferDeathTest, OtherFaultsStillKill) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // A fault outside every guard page is not reported as out-of-bounds: it
  // goes to whatever handled SIGSEGV before, as without the handler.
  EXPECT_EXIT(
      {
        installGuardFaultHandler("test: error: ", 42);
        GuardedBuffer b = make(100, GuardPlacement::AgainstEnd);
        writeAt(nullptr, 16);
      },
      diedOfUnclaimedFault, "");
}

TEST_F(GuardedBufferDeathTest, ReleasedBufferIsNotReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The guard of a buffer that is gone no longer counts (its pages are
  // unmapped; a stale pointer into them is not this buffer's overrun).
  EXPECT_EXIT(
      {
        installGuardFaultHandler("test: error: ", 42);
        void *stale;
        {
          GuardedBuffer b = make(100, GuardPlacement::AgainstEnd);
          stale = b.data();
        }
        writeAt(stale, 100);
      },
      diedOfUnclaimedFault, "");
}

} // namespace
