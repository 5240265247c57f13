//===- HugePagesTest.cpp - buffers on transparent huge pages --------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/HugePages.h"
#include "attn/Spec/HostTensor.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <fstream>

using namespace mlir::attn::exec;

namespace {

HugePageBuffer make(size_t bytes) {
  llvm::Expected<HugePageBuffer> b = HugePageBuffer::create(bytes);
  if (!b) {
    ADD_FAILURE() << llvm::toString(b.takeError());
    std::abort();
  }
  return std::move(*b);
}

TEST(HugePagesTest, AlignedZeroedAndWritable) {
  // Not a multiple of the huge page: the last one is partly used.
  size_t bytes = 3 * kHugePageBytes + 12345;
  HugePageBuffer b = make(bytes);
  ASSERT_NE(nullptr, b.data());
  EXPECT_EQ(bytes, b.size());
  EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(b.data()) % kHugePageBytes);
  auto *p = static_cast<uint8_t *>(b.data());
  EXPECT_EQ(0, p[0]);
  EXPECT_EQ(0, p[bytes / 2]);
  EXPECT_EQ(0, p[bytes - 1]);
  std::memset(p, 0x5a, bytes);
  EXPECT_EQ(0x5a, p[bytes - 1]);
}

TEST(HugePagesTest, MovesOwnership) {
  HugePageBuffer a = make(kHugePageBytes);
  void *data = a.data();
  HugePageBuffer b = std::move(a);
  EXPECT_EQ(data, b.data());
  EXPECT_EQ(nullptr, a.data());
  EXPECT_EQ(0u, a.size());
  HugePageBuffer c = make(16);
  c = std::move(b);
  EXPECT_EQ(data, c.data());
  static_cast<uint8_t *>(c.data())[kHugePageBytes - 1] = 1;
}

TEST(HugePagesTest, CopiesOnlyLargeTensors) {
  // 4 MiB of f32 (copied) and 4 MiB less one element (not).
  int64_t n = static_cast<int64_t>(kHugePagesFromBytes / 4);
  HostTensor large = HostTensor::zeros(DType::F32, {n});
  HostTensor small = HostTensor::zeros(DType::F32, {n - 1});
  static_cast<float *>(large.raw())[n - 1] = 3.5f;
  std::vector<HugePageBuffer> buffers;
  int64_t copied = -1;
  llvm::Expected<std::vector<void *>> data =
      copyOntoHugePages({&small, &large}, buffers, copied);
  ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
  ASSERT_EQ(2u, data->size());
  EXPECT_EQ(small.raw(), (*data)[0]);
  ASSERT_EQ(1u, buffers.size());
  EXPECT_EQ(buffers[0].data(), (*data)[1]);
  EXPECT_EQ(static_cast<int64_t>(kHugePagesFromBytes), copied);
  EXPECT_EQ(3.5f, static_cast<float *>((*data)[1])[n - 1]);
}

TEST(HugePagesTest, ZeroBytes) {
  HugePageBuffer b = make(0);
  EXPECT_EQ(0u, b.size());
}

TEST(HugePagesTest, ReadsTheKernelsSettingAndTheProcesssPages) {
  // Where the files exist (Linux with THP; /proc/self/smaps_rollup since
  // 4.14) each reader must parse them; elsewhere "" and -1.
  std::string mode = transparentHugePagesMode();
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never")
        << mode;
  else
    EXPECT_EQ("", mode);
  if (std::ifstream("/proc/self/smaps_rollup"))
    EXPECT_GE(anonHugePagesBytes(), 0);
  else
    EXPECT_EQ(-1, anonHugePagesBytes());
}

} // namespace
