//===- NpyTest.cpp - Tests for .npy reading and writing ---------*- C++ -*-===//

#include "attn/Spec/Npy.h"

#include "ErrorHelpers.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <string>
#include <unistd.h>

using namespace mlir::attn::exec;
using namespace attn_test;

namespace {

std::vector<uint8_t> bytesOf(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// A .npy file with an arbitrary header dict, padded like NumPy's, followed by
/// `data`.
std::vector<uint8_t> makeNpy(const std::string &dict,
                             const std::vector<uint8_t> &data, int major = 1) {
  size_t preamble = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((preamble + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> bytes = bytesOf(std::string("\x93NUMPY", 6));
  bytes.push_back(static_cast<uint8_t>(major));
  bytes.push_back(0);
  for (size_t i = 0; i < preamble - 8; ++i)
    bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/attn_npy_" + std::to_string(getpid()) + "_" +
         name + ".npy";
}

HostTensor randomTensor(DType dtype, std::vector<int64_t> shape,
                        uint64_t seed) {
  HostTensor t = HostTensor::zeros(dtype, std::move(shape));
  fillRandomNormal(t, seed);
  return t;
}

void expectSameTensor(const HostTensor &a, const HostTensor &b) {
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.data, b.data);
}

/// Parses `bytes`, expecting failure with a message containing `needle`.
void expectRejected(const std::vector<uint8_t> &bytes,
                    const std::string &needle) {
  std::string error = errorOf(parseNpy(bytes));
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find(needle), std::string::npos)
      << "message \"" << error << "\" does not mention \"" << needle << "\"";
}

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {5}, {1}, {2, 3}, {2, 3, 4, 5}, {3, 0}};
const DType kDTypes[] = {DType::F32,  DType::F16, DType::BF16,
                         DType::Bool, DType::F64, DType::I32};

TEST(NpyTest, RoundTripInMemory) {
  uint64_t seed = 1;
  for (DType dtype : kDTypes) {
    for (const auto &shape : kShapes) {
      HostTensor t = randomTensor(dtype, shape, seed++);
      std::vector<uint8_t> bytes = serializeNpy(t);
      // Data starts at a multiple of 64 and the header ends in '\n'.
      size_t dataStart = bytes.size() - t.byteSize();
      EXPECT_EQ(dataStart % 64, 0u);
      EXPECT_EQ(bytes[dataStart - 1], '\n');
      llvm::Expected<HostTensor> back = parseNpy(bytes);
      ASSERT_TRUE(!!back) << llvm::toString(back.takeError()) << " for "
                          << dtypeName(dtype) << " " << t.shapeString();
      expectSameTensor(*back, t);
    }
  }
}

TEST(NpyTest, RoundTripThroughFile) {
  uint64_t seed = 100;
  for (DType dtype : kDTypes) {
    for (const auto &shape : kShapes) {
      HostTensor t = randomTensor(dtype, shape, seed++);
      std::string path = tempPath(std::string(dtypeName(dtype)) + "_" +
                                  std::to_string(shape.size()));
      llvm::Error written = writeNpy(path, t);
      ASSERT_FALSE(!!written) << llvm::toString(std::move(written));
      llvm::Expected<HostTensor> back = readNpy(path);
      ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
      expectSameTensor(*back, t);
      std::remove(path.c_str());
    }
  }
}

TEST(NpyTest, HeaderMatchesNumPyByteForByte) {
  // np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
  HostTensor t = HostTensor::zeros(DType::F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.setFromDouble(i, i);
  std::vector<uint8_t> bytes = serializeNpy(t);
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string expected("\x93NUMPY\x01\x00", 8);
  expected += static_cast<char>(118); // 128 - 10: header length, little-endian.
  expected += '\0';
  expected += dict;
  expected += std::string(128 - 10 - dict.size() - 1, ' ');
  expected += '\n';
  ASSERT_EQ(expected.size(), 128u);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 128), expected);
  // 1.0f is 0x3f800000, stored little-endian.
  EXPECT_EQ(bytes[128 + 4], 0x00);
  EXPECT_EQ(bytes[128 + 7], 0x3f);
}

TEST(NpyTest, ShapeReprFollowsPython) {
  auto headerOf = [](DType dtype, std::vector<int64_t> shape) {
    std::vector<uint8_t> bytes =
        serializeNpy(HostTensor::zeros(dtype, std::move(shape)));
    std::string all(bytes.begin(), bytes.end());
    return all.substr(10, all.find('\n') - 10);
  };
  EXPECT_NE(headerOf(DType::F32, {}).find("'shape': (), }"), std::string::npos);
  EXPECT_NE(headerOf(DType::F16, {5}).find("'descr': '<f2'"),
            std::string::npos);
  EXPECT_NE(headerOf(DType::F16, {5}).find("'shape': (5,), }"),
            std::string::npos);
  EXPECT_NE(headerOf(DType::BF16, {1}).find("'descr': '<u2'"),
            std::string::npos);
  EXPECT_NE(headerOf(DType::Bool, {1}).find("'descr': '|b1'"),
            std::string::npos);
  EXPECT_NE(headerOf(DType::F64, {1}).find("'descr': '<f8'"),
            std::string::npos);
}

TEST(NpyTest, ReadsVersion2) {
  std::vector<uint8_t> data = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}; // 1, -2
  std::vector<uint8_t> bytes = makeNpy(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, 2);
  ASSERT_EQ(bytes[6], 2);
  HostTensor t = valueOrFail(parseNpy(bytes));
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(t.getAsDouble(0), 1.0);
  EXPECT_EQ(t.getAsDouble(1), -2.0);
}

TEST(NpyTest, ParsesHeaderDictsRobustly) {
  std::vector<uint8_t> six(6 * 4, 0);
  const char *dicts[] = {
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
      "{ 'fortran_order' : False , 'descr' : '<f4' , 'shape' : ( 2 , 3 ) }",
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,3),}",
      "{'descr':'<f4','fortran_order':False,'shape':(2,3,),}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
  };
  for (const char *dict : dicts) {
    llvm::Expected<HostTensor> t = parseNpy(makeNpy(dict, six));
    ASSERT_TRUE(!!t) << dict << ": " << llvm::toString(t.takeError());
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3})) << dict;
    EXPECT_EQ(t->dtype, DType::F32);
  }
  HostTensor t =
      valueOrFail(parseNpy(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                                   "'shape': ()}",
                                   std::vector<uint8_t>(8, 0))));
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(t.dtype, DType::F64);
  t = valueOrFail(parseNpy(makeNpy("{'descr': '<f2', 'fortran_order': False, "
                                   "'shape': (5,)}",
                                   std::vector<uint8_t>(10, 0))));
  EXPECT_EQ(t.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(t.dtype, DType::F16);
}

TEST(NpyTest, U2ReadsAsBF16AndBoolsAreNormalized) {
  HostTensor t =
      valueOrFail(parseNpy(makeNpy("{'descr': '<u2', 'fortran_order': False, "
                                   "'shape': (1,), }",
                                   {0x80, 0x3f})));
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.getAsDouble(0), 1.0);

  t = valueOrFail(parseNpy(makeNpy("{'descr': '|b1', 'fortran_order': False, "
                                   "'shape': (3,), }",
                                   {0, 1, 5})));
  EXPECT_EQ(t.dtype, DType::Bool);
  EXPECT_EQ(t.data, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(NpyTest, RejectsBadMagic) {
  std::vector<uint8_t> bytes = serializeNpy(HostTensor::zeros(DType::F32, {2}));
  bytes[1] = 'X';
  expectRejected(bytes, "magic");
  expectRejected({}, "magic");
  expectRejected(bytesOf("PK\x03\x04 not numpy at all"), "magic");
}

TEST(NpyTest, RejectsTruncatedHeader) {
  std::vector<uint8_t> bytes = serializeNpy(HostTensor::zeros(DType::F32, {2}));
  expectRejected(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 7),
                 "truncated header");
  expectRejected(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 9),
                 "truncated header");
  expectRejected(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 40),
                 "truncated header");
  // A header that stops in the middle of the dict.
  std::vector<uint8_t> cut =
      makeNpy("{'descr': '<f4', 'fortran_order': Fa", {});
  expectRejected(cut, "header");
}

TEST(NpyTest, RejectsTruncatedOrOversizedData) {
  std::vector<uint8_t> bytes =
      serializeNpy(HostTensor::zeros(DType::F32, {2, 3}));
  std::vector<uint8_t> shorter(bytes.begin(), bytes.end() - 1);
  expectRejected(shorter, "truncated data");
  expectRejected(shorter, "24 bytes");
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  expectRejected(longer, "data size");
}

TEST(NpyTest, MessagesAreExact) {
  // attn-run prints these after "path: "; the lit tests match the wording.
  EXPECT_EQ(errorOf(parseNpy(bytesOf("PK\x03\x04"))),
            "bad magic: not a .npy file (expected \\x93NUMPY)");
  std::vector<uint8_t> bytes =
      serializeNpy(HostTensor::zeros(DType::F32, {2, 3}));
  bytes.pop_back();
  EXPECT_EQ(errorOf(parseNpy(bytes)),
            "truncated data: shape (2, 3) of '<f4' needs 24 bytes but the "
            "file has 23");
  EXPECT_EQ(errorOf(parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': "
                                     "True, 'shape': (2,), }",
                                     std::vector<uint8_t>(8, 0)))),
            "fortran_order: True is not supported (only C order)");
}

TEST(NpyTest, RejectsFortranOrder) {
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': True, "
                         "'shape': (2, 3), }",
                         std::vector<uint8_t>(24, 0)),
                 "fortran_order");
}

TEST(NpyTest, RejectsBigEndianAndUnknownDTypes) {
  expectRejected(makeNpy("{'descr': '>f4', 'fortran_order': False, "
                         "'shape': (2,), }",
                         std::vector<uint8_t>(8, 0)),
                 "'>f4'");
  expectRejected(makeNpy("{'descr': '>f4', 'fortran_order': False, "
                         "'shape': (2,), }",
                         std::vector<uint8_t>(8, 0)),
                 "big-endian");
  for (const char *descr : {"<i8", "<c8", "|u1", "<U3", "|O"}) {
    expectRejected(makeNpy(std::string("{'descr': '") + descr +
                               "', 'fortran_order': False, 'shape': (2,), }",
                           std::vector<uint8_t>(8, 0)),
                   std::string("'") + descr + "'");
  }
  // Structured dtypes have a list as their descr.
  expectRejected(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                         "'shape': (2,), }",
                         std::vector<uint8_t>(8, 0)),
                 "descr");
}

TEST(NpyTest, RejectsMalformedHeaders) {
  std::vector<uint8_t> eight(8, 0);
  expectRejected(makeNpy("{'descr': '<f4', 'shape': (2,), }", eight),
                 "fortran_order");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False}", eight),
                 "shape");
  expectRejected(makeNpy("{'fortran_order': False, 'shape': (2,)}", eight),
                 "descr");
  expectRejected(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
              eight),
      "shape");
  expectRejected(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': 2}", eight),
      "shape");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2,), 'extra': 1}",
                         eight),
                 "extra");
  expectRejected(makeNpy("'descr': '<f4'", eight), "{");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (99999999999, 99999999999)}",
                         eight),
                 "too large");
  std::vector<uint8_t> v9 =
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", eight);
  v9[6] = 9;
  expectRejected(v9, "version 9.0");
}

TEST(NpyTest, ReadErrorsNameTheFile) {
  std::string missing = tempPath("does_not_exist");
  std::string error = errorOf(readNpy(missing));
  EXPECT_EQ(error, missing + ": cannot open for reading: No such file or "
                             "directory");

  std::string bad = tempPath("big_endian");
  std::vector<uint8_t> bytes =
      makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
              std::vector<uint8_t>(8, 0));
  std::FILE *f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  error = errorOf(readNpy(bad));
  EXPECT_EQ(error.rfind(bad + ": ", 0), 0u) << error;
  EXPECT_NE(error.find(">f4"), std::string::npos) << error;
  std::remove(bad.c_str());
}

TEST(NpyTest, WriteErrors) {
  HostTensor t = HostTensor::zeros(DType::F32, {2});
  std::string error = errorOf(writeNpy("/nonexistent-dir/x/y.npy", t));
  EXPECT_EQ(error.rfind("/nonexistent-dir/x/y.npy: cannot open for writing", 0),
            0u)
      << error;
  t.data.pop_back();
  std::string path = tempPath("inconsistent");
  error = errorOf(writeNpy(path, t));
  EXPECT_EQ(error, path + ": tensor of shape 2 and type f32 holds 7 bytes, "
                          "expected 8");
  HostTensor negative;
  negative.shape = {-1};
  error = errorOf(writeNpy(path, negative));
  EXPECT_NE(error.find("negative dimension"), std::string::npos) << error;
}

} // namespace
