//===- NpyTest.cpp - Tests for .npy reading and writing ---------*- C++ -*-===//

#include "attn/Execution/Npy.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <string>
#include <unistd.h>

using namespace mlir::attn::exec;

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
  HostTensor t;
  std::string error;
  EXPECT_FALSE(parseNpy(bytes, t, error));
  EXPECT_FALSE(error.empty());
  EXPECT_NE(error.find(needle), std::string::npos)
      << "message \"" << error << "\" does not mention \"" << needle << "\"";
}

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {5}, {1}, {2, 3}, {2, 3, 4, 5}, {3, 0}};
const DType kDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::Bool,
                         DType::F64};

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
      HostTensor back;
      std::string error;
      ASSERT_TRUE(parseNpy(bytes, back, error))
          << error << " for " << dtypeName(dtype) << " " << t.shapeString();
      EXPECT_TRUE(error.empty());
      expectSameTensor(back, t);
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
      std::string error;
      ASSERT_TRUE(writeNpy(path, t, error)) << error;
      HostTensor back;
      ASSERT_TRUE(readNpy(path, back, error)) << error;
      expectSameTensor(back, t);
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
  HostTensor t;
  std::string error;
  ASSERT_TRUE(parseNpy(bytes, t, error)) << error;
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
    HostTensor t;
    std::string error;
    ASSERT_TRUE(parseNpy(makeNpy(dict, six), t, error))
        << dict << ": " << error;
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3})) << dict;
    EXPECT_EQ(t.dtype, DType::F32);
  }
  HostTensor t;
  std::string error;
  ASSERT_TRUE(parseNpy(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                               "'shape': ()}",
                               std::vector<uint8_t>(8, 0)),
                       t, error))
      << error;
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.numel(), 1);
  ASSERT_TRUE(parseNpy(makeNpy("{'descr': '<f2', 'fortran_order': False, "
                               "'shape': (5,)}",
                               std::vector<uint8_t>(10, 0)),
                       t, error))
      << error;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(t.dtype, DType::F16);
}

TEST(NpyTest, U2ReadsAsBF16AndBoolsAreNormalized) {
  HostTensor t;
  std::string error;
  ASSERT_TRUE(parseNpy(makeNpy("{'descr': '<u2', 'fortran_order': False, "
                               "'shape': (1,), }",
                               {0x80, 0x3f}),
                       t, error))
      << error;
  EXPECT_EQ(t.dtype, DType::BF16);
  EXPECT_EQ(t.getAsDouble(0), 1.0);

  ASSERT_TRUE(parseNpy(makeNpy("{'descr': '|b1', 'fortran_order': False, "
                               "'shape': (3,), }",
                               {0, 1, 5}),
                       t, error))
      << error;
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
  for (const char *descr : {"<i4", "<c8", "|u1", "<U3", "|O"}) {
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
  HostTensor t;
  std::string error;
  EXPECT_FALSE(readNpy(missing, t, error));
  EXPECT_NE(error.find(missing), std::string::npos) << error;

  std::string bad = tempPath("big_endian");
  std::vector<uint8_t> bytes =
      makeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
              std::vector<uint8_t>(8, 0));
  std::FILE *f = std::fopen(bad.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  EXPECT_FALSE(readNpy(bad, t, error));
  EXPECT_NE(error.find(bad), std::string::npos) << error;
  EXPECT_NE(error.find(">f4"), std::string::npos) << error;
  std::remove(bad.c_str());
}

TEST(NpyTest, WriteErrors) {
  std::string error;
  HostTensor t = HostTensor::zeros(DType::F32, {2});
  EXPECT_FALSE(writeNpy("/nonexistent-dir/x/y.npy", t, error));
  EXPECT_NE(error.find("/nonexistent-dir/x/y.npy"), std::string::npos);
  t.data.pop_back();
  EXPECT_FALSE(writeNpy(tempPath("inconsistent"), t, error));
  EXPECT_NE(error.find("bytes"), std::string::npos) << error;
}

} // namespace
