//===- Npy.cpp - .npy reading and writing -----------------------*- C++ -*-===//
//
// The header is a Python dict literal. NumPy's own writer always emits the
// same layout, but files written by other tools (or by hand) differ in key
// order, spacing and trailing commas, so the header is parsed as a small
// grammar rather than matched as a string.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Npy.h"

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

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

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

  llvm::Expected<NpyHeader> parse() {
    NpyHeader header;
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{' at the start of the header dict");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key in the header dict");
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (haveDescr)
          return fail("duplicate key 'descr'");
        haveDescr = true;
        if (!parseString(header.descr))
          return fail("expected a string value for 'descr' (structured "
                      "dtypes are not supported)");
      } else if (key == "fortran_order") {
        if (haveFortran)
          return fail("duplicate key 'fortran_order'");
        haveFortran = true;
        if (!parseBool(header.fortranOrder))
          return fail("expected True or False for 'fortran_order'");
      } else if (key == "shape") {
        if (haveShape)
          return fail("duplicate key 'shape'");
        haveShape = true;
        if (llvm::Error err = parseShape(header.shape))
          return std::move(err);
      } else {
        return fail("unexpected key '" + key + "' in the header dict");
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail("expected ',' or '}' after the value of '" + key + "'");
    }
    // NumPy pads with spaces and ends with '\n'; some writers pad with NULs.
    while (pos < text.size() && (isSpace(text[pos]) || text[pos] == '\0'))
      ++pos;
    if (pos != text.size())
      return fail("unexpected text after the header dict");
    if (!haveDescr)
      return fail("the header dict has no 'descr'");
    if (!haveFortran)
      return fail("the header dict has no 'fortran_order'");
    if (!haveShape)
      return fail("the header dict has no 'shape'");
    return header;
  }

private:
  static bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  llvm::Error fail(const std::string &message) const {
    return makeError("malformed header: " + message + " (at offset " +
                     std::to_string(pos) + " of \"" + text + "\")");
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

  llvm::Error parseShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!consume('('))
      return fail("expected a tuple for 'shape'");
    skipSpace();
    if (consume(')'))
      return llvm::Error::success(); // () is a scalar.
    while (true) {
      if (pos >= text.size() || !isDigit(text[pos]))
        return fail("expected a non-negative integer in 'shape'");
      int64_t dim = 0;
      while (pos < text.size() && isDigit(text[pos])) {
        int digit = text[pos++] - '0';
        if (dim > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return fail("dimension too large in 'shape'");
        dim = dim * 10 + digit;
      }
      consume('L'); // Python 2 long literals.
      shape.push_back(dim);
      skipSpace();
      if (consume(')'))
        break;
      if (!consume(','))
        return fail("expected ',' or ')' in 'shape'");
      skipSpace();
      if (consume(')')) // (5,) and trailing commas.
        break;
    }
    return llvm::Error::success();
  }

  const std::string &text;
  size_t pos = 0;
};

} // namespace

static llvm::Expected<DType> descrToDType(const std::string &descr) {
  if (descr == "<f4")
    return DType::F32;
  if (descr == "<f2")
    return DType::F16;
  if (descr == "<u2")
    return DType::BF16;
  if (descr == "|b1" || descr == "<b1" || descr == ">b1" || descr == "=b1")
    return DType::Bool;
  if (descr == "<f8")
    return DType::F64;
  if (descr == "<i4")
    return DType::I32;
  if (!descr.empty() && descr[0] == '>')
    return makeError("big-endian dtype '" + descr +
                     "' is not supported (only little-endian '<f4', '<f2', "
                     "'<u2', '|b1', '<f8', '<i4')");
  return makeError(
      "unsupported dtype '" + descr +
      "' (expected '<f4', '<f2', '<u2' for bf16, '|b1', '<f8' or '<i4')");
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
  case DType::I32:
    return "<i4";
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

llvm::Expected<HostTensor> parseNpy(llvm::ArrayRef<uint8_t> bytes) {
  size_t size = bytes.size();
  size_t magicLen = size < kMagicSize ? size : kMagicSize;
  if (size == 0 || std::memcmp(bytes.data(), kMagic, magicLen) != 0)
    return makeError("bad magic: not a .npy file (expected \\x93NUMPY)");
  if (size < kMagicSize + 2)
    return makeError("truncated header: the file ends inside the preamble");
  unsigned major = bytes[6], minor = bytes[7];
  size_t lenBytes;
  if (major == 1)
    lenBytes = 2;
  else if (major == 2 || major == 3)
    lenBytes = 4;
  else
    return makeError("unsupported .npy format version " +
                     std::to_string(major) + "." + std::to_string(minor) +
                     " (expected 1.0, 2.0 or 3.0)");
  if (size < 8 + lenBytes)
    return makeError("truncated header: the file ends inside the header "
                     "length");
  size_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
  size_t headerStart = 8 + lenBytes;
  if (headerLen > size - headerStart)
    return makeError("truncated header: header length is " +
                     std::to_string(headerLen) + " bytes but only " +
                     std::to_string(size - headerStart) +
                     " follow the preamble");
  std::string text(reinterpret_cast<const char *>(bytes.data()) + headerStart,
                   headerLen);
  llvm::Expected<NpyHeader> header = HeaderParser(text).parse();
  if (!header)
    return header.takeError();
  if (header->fortranOrder)
    return makeError("fortran_order: True is not supported (only C order)");
  llvm::Expected<DType> dtype = descrToDType(header->descr);
  if (!dtype)
    return dtype.takeError();

  size_t elemSize = dtypeSize(*dtype);
  uint64_t numel = 1;
  const uint64_t maxBytes = std::numeric_limits<int64_t>::max();
  for (int64_t dim : header->shape) {
    if (dim != 0 && numel > maxBytes / elemSize / static_cast<uint64_t>(dim))
      return makeError("shape " + shapeRepr(header->shape) + " is too large");
    numel *= static_cast<uint64_t>(dim);
  }
  uint64_t expected = numel * elemSize;
  size_t dataStart = headerStart + headerLen;
  uint64_t available = size - dataStart;
  if (available != expected)
    return makeError(std::string(available < expected ? "truncated data"
                                                      : "data size mismatch") +
                     ": shape " + shapeRepr(header->shape) + " of '" +
                     header->descr + "' needs " + std::to_string(expected) +
                     " bytes but the file has " + std::to_string(available));

  HostTensor out;
  out.dtype = *dtype;
  out.shape = std::move(header->shape);
  out.data.assign(bytes.begin() + dataStart, bytes.end());
  // NumPy only writes 0/1, but other writers may not; normalize so that raw
  // byte comparisons of masks are meaningful.
  if (out.dtype == DType::Bool)
    for (uint8_t &b : out.data)
      b = b != 0;
  return out;
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

llvm::Expected<HostTensor> readNpy(llvm::StringRef path) {
  std::string name = path.str();
  std::FILE *f = std::fopen(name.c_str(), "rb");
  if (!f)
    return makeError(name +
                     ": cannot open for reading: " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + n);
  bool readFailed = std::ferror(f) != 0;
  std::fclose(f);
  if (readFailed)
    return makeError(name + ": read error");
  llvm::Expected<HostTensor> t = parseNpy(bytes);
  if (!t)
    return makeError(name + ": " + llvm::toString(t.takeError()));
  return t;
}

llvm::Error writeNpy(llvm::StringRef path, const HostTensor &t) {
  std::string name = path.str();
  for (int64_t dim : t.shape)
    if (dim < 0)
      return makeError(name +
                       ": cannot write a tensor with a negative dimension (" +
                       t.shapeString() + ")");
  if (t.data.size() != t.byteSize())
    return makeError(name + ": tensor of shape " + t.shapeString() +
                     " and type " + dtypeName(t.dtype) + " holds " +
                     std::to_string(t.data.size()) + " bytes, expected " +
                     std::to_string(t.byteSize()));
  std::vector<uint8_t> bytes = serializeNpy(t);
  std::FILE *f = std::fopen(name.c_str(), "wb");
  if (!f)
    return makeError(name +
                     ": cannot open for writing: " + std::strerror(errno));
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), f);
  bool closeFailed = std::fclose(f) != 0;
  if (written != bytes.size() || closeFailed)
    return makeError(name + ": write failed: " + std::strerror(errno));
  return llvm::Error::success();
}

} // namespace mlir::attn::exec
