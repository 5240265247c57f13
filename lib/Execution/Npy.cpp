//===- Npy.cpp - .npy reading and writing -----------------------*- C++ -*-===//
//
// The header is a Python dict literal. NumPy's own writer always emits the
// same layout, but files written by other tools (or by hand) differ in key
// order, spacing and trailing commas, so the header is parsed as a small
// grammar rather than matched as a string.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace mlir::attn::exec {

static const char kMagic[] = "\x93NUMPY";
static const size_t kMagicSize = 6;
/// NumPy aligns the start of the data to this many bytes so that the file can
/// be memory-mapped with aligned loads.
static const size_t kAlignment = 64;

namespace {

/// The three keys NumPy requires, as parsed from the header dict.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser over the header text, just rich enough for the
/// dict literals NumPy and other writers produce.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  bool parse(NpyHeader &header, std::string &error) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{' at the start of the header dict", error);
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key in the header dict", error);
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + key + "'", error);
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'", error);
        haveDescr = true;
        if (!parseString(header.descr))
          return fail("expected a string value for 'descr' (structured "
                      "dtypes are not supported)",
                      error);
      } else if (key == "fortran_order") {
        if (haveFortran)
          return fail("duplicate key 'fortran_order'", error);
        haveFortran = true;
        if (!parseBool(header.fortranOrder))
          return fail("expected True or False for 'fortran_order'", error);
      } else if (key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'", error);
        haveShape = true;
        if (!parseShape(header.shape, error))
          return false;
      } else {
        return fail("unexpected key '" + key + "' in the header dict", error);
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail("expected ',' or '}' after the value of '" + key + "'",
                  error);
    }
    // NumPy pads with spaces and ends with '\n'; some writers pad with NULs.
    while (pos < text.size() && (isSpace(text[pos]) || text[pos] == '\0'))
      ++pos;
    if (pos != text.size())
      return fail("unexpected text after the header dict", error);
    if (!haveDescr)
      return fail("the header dict has no 'descr'", error);
    if (!haveFortran)
      return fail("the header dict has no 'fortran_order'", error);
    if (!haveShape)
      return fail("the header dict has no 'shape'", error);
    return true;
  }

private:
  static bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool fail(const std::string &message, std::string &error) {
    error = "malformed header: " + message + " (at offset " +
            std::to_string(pos) + " of \"" + text + "\")";
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && isSpace(text[pos]))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool consumeWord(const char *word) {
    size_t n = std::strlen(word);
    if (text.compare(pos, n, word) != 0)
      return false;
    pos += n;
    return true;
  }

  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos++];
    out.clear();
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      out += text[pos++];
    }
    return consume(quote);
  }

  bool parseBool(bool &out) {
    if (consumeWord("True")) {
      out = true;
      return true;
    }
    if (consumeWord("False")) {
      out = false;
      return true;
    }
    return false;
  }

  bool parseShape(std::vector<int64_t> &shape, std::string &error) {
    shape.clear();
    if (!consume('('))
      return fail("expected a tuple for 'shape'", error);
    skipSpace();
    if (consume(')'))
      return true; // () is a scalar.
    while (true) {
      if (pos >= text.size() || !isDigit(text[pos]))
        return fail("expected a non-negative integer in 'shape'", error);
      int64_t dim = 0;
      while (pos < text.size() && isDigit(text[pos])) {
        int digit = text[pos++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("dimension too large in 'shape'", error);
        dim = dim * 10 + digit;
      }
      consume('L'); // Python 2 long literals.
      shape.push_back(dim);
      skipSpace();
      if (consume(')'))
        break;
      if (!consume(','))
        return fail("expected ',' or ')' in 'shape'", error);
      skipSpace();
      if (consume(')')) // (5,) and trailing commas.
        break;
    }
    return true;
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

static bool descrToDType(const std::string &descr, DType &dtype,
                         std::string &error) {
  if (descr == "<f4")
    dtype = DType::F32;
  else if (descr == "<f2")
    dtype = DType::F16;
  else if (descr == "<u2")
    dtype = DType::BF16;
  else if (descr == "|b1" || descr == "<b1" || descr == ">b1" || descr == "=b1")
    dtype = DType::Bool;
  else if (descr == "<f8")
    dtype = DType::F64;
  else if (!descr.empty() && descr[0] == '>')
    error = "big-endian dtype '" + descr +
            "' is not supported (only little-endian '<f4', '<f2', '<u2', "
            "'|b1', '<f8')";
  else
    error = "unsupported dtype '" + descr +
            "' (expected '<f4', '<f2', '<u2' for bf16, '|b1' or '<f8')";
  return error.empty();
}

static const char *dtypeToDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::Bool:
    return "|b1";
  case DType::F64:
    return "<f8";
  }
  return "?";
}

/// Python's repr of a shape tuple: "()", "(5,)", "(2, 3)".
static std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    s += ',';
  return s + ")";
}

bool parseNpy(const std::vector<uint8_t> &bytes, HostTensor &out,
              std::string &error) {
  error.clear();
  size_t size = bytes.size();
  size_t magicLen = size < kMagicSize ? size : kMagicSize;
  if (size == 0 || std::memcmp(bytes.data(), kMagic, magicLen) != 0) {
    error = "bad magic: not a .npy file (expected \\x93NUMPY)";
    return false;
  }
  if (size < kMagicSize + 2) {
    error = "truncated header: the file ends inside the preamble";
    return false;
  }
  unsigned major = bytes[6], minor = bytes[7];
  size_t lenBytes;
  if (major == 1)
    lenBytes = 2;
  else if (major == 2 || major == 3)
    lenBytes = 4;
  else {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)";
    return false;
  }
  if (size < 8 + lenBytes) {
    error = "truncated header: the file ends inside the header length";
    return false;
  }
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
  size_t headerStart = 8 + lenBytes;
  if (headerLen > size - headerStart) {
    error = "truncated header: header length is " + std::to_string(headerLen) +
            " bytes but only " + std::to_string(size - headerStart) +
            " follow the preamble";
    return false;
  }
  std::string text(reinterpret_cast<const char *>(bytes.data()) + headerStart,
                   headerLen);
  NpyHeader header;
  if (!HeaderParser(text).parse(header, error))
    return false;
  if (header.fortranOrder) {
    error = "fortran_order: True is not supported (only C order)";
    return false;
  }
  DType dtype = DType::F32;
  if (!descrToDType(header.descr, dtype, error))
    return false;

  size_t elemSize = dtypeSize(dtype);
  uint64_t numel = 1;
  const uint64_t maxBytes = std::numeric_limits<int64_t>::max();
  for (int64_t dim : header.shape) {
    if (dim != 0 && numel > maxBytes / elemSize / static_cast<uint64_t>(dim)) {
      error = "shape " + shapeRepr(header.shape) + " is too large";
      return false;
    }
    numel *= static_cast<uint64_t>(dim);
  }
  uint64_t expected = numel * elemSize;
  size_t dataStart = headerStart + headerLen;
  uint64_t available = size - dataStart;
  if (available != expected) {
    error = std::string(available < expected ? "truncated data"
                                             : "data size mismatch") +
            ": shape " + shapeRepr(header.shape) + " of '" + header.descr +
            "' needs " + std::to_string(expected) + " bytes but the file has " +
            std::to_string(available);
    return false;
  }

  out.dtype = dtype;
  out.shape = header.shape;
  out.data.assign(bytes.begin() + dataStart, bytes.end());
  // NumPy only writes 0/1, but other writers may not; normalize so that raw
  // byte comparisons of masks are meaningful.
  if (dtype == DType::Bool)
    for (uint8_t &b : out.data)
      b = b != 0;
  return true;
}

std::vector<uint8_t> serializeNpy(const HostTensor &t) {
  std::string dict =
      std::string("{'descr': '") + dtypeToDescr(t.dtype) +
      "', 'fortran_order': False, 'shape': " + shapeRepr(t.shape) + ", }";
  // Version 1.0 stores the header length in 16 bits; fall back to 2.0 for
  // the (absurdly high-rank) shapes that do not fit, as NumPy does.
  size_t preamble = kMagicSize + 2 + 2;
  size_t total =
      (preamble + dict.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
  unsigned major = 1;
  if (total - preamble > 0xffff) {
    major = 2;
    preamble += 2;
    total =
        (preamble + dict.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
  }
  size_t headerLen = total - preamble;
  dict.append(headerLen - dict.size() - 1, ' ');
  dict += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(static_cast<uint8_t>(major));
  bytes.push_back(0);
  size_t lenBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lenBytes; ++i)
    bytes.push_back(static_cast<uint8_t>(headerLen >> (8 * i)));
  bytes.insert(bytes.end(), dict.begin(), dict.end());

  // Always emit exactly the bytes the shape calls for, so that the file is
  // readable even if `t.data` was sized inconsistently.
  size_t dataBytes = t.byteSize();
  size_t copied = t.data.size() < dataBytes ? t.data.size() : dataBytes;
  bytes.insert(bytes.end(), t.data.begin(), t.data.begin() + copied);
  bytes.resize(total + dataBytes, 0);
  if (t.dtype == DType::Bool)
    for (size_t i = total; i < bytes.size(); ++i)
      bytes[i] = bytes[i] != 0;
  return bytes;
}

bool readNpy(const std::string &path, HostTensor &out, std::string &error) {
  error.clear();
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": cannot open for reading: " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  bool readFailed = std::ferror(f) != 0;
  std::fclose(f);
  if (readFailed) {
    error = path + ": read error";
    return false;
  }
  if (!parseNpy(bytes, out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

bool writeNpy(const std::string &path, const HostTensor &t,
              std::string &error) {
  error.clear();
  for (int64_t dim : t.shape) {
    if (dim < 0) {
      error = path + ": cannot write a tensor with a negative dimension (" +
              t.shapeString() + ")";
      return false;
    }
  }
  if (t.data.size() != t.byteSize()) {
    error = path + ": tensor of shape " + t.shapeString() + " and type " +
            dtypeName(t.dtype) + " holds " + std::to_string(t.data.size()) +
            " bytes, expected " + std::to_string(t.byteSize());
    return false;
  }
  std::vector<uint8_t> bytes = serializeNpy(t);
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = path + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  bool closeFailed = std::fclose(f) != 0;
  if (written != bytes.size() || closeFailed) {
    error = path + ": write failed: " + std::strerror(errno);
    return false;
  }
  return true;
}

} // namespace mlir::attn::exec
