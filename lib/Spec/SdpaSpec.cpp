//===- SdpaSpec.cpp - attn-run's --sdpa spec strings ------------*- C++ -*-===//
//
// Parsing is two-staged: the items are split and each value is read with a
// strict grammar (so "8x", "1e3" or "" never pass as a number), then the
// filled spec is validated as a whole, so a hand-built SdpaSpec gets the same
// diagnostics as a parsed one. Every size computation is overflow-checked.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/SdpaSpec.h"

#include "attn/Dialect/Attn/Utils/TileConventions.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace mlir::attn::exec {

static const int64_t kMaxElements = kMaxTensorElements;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// a * b for non-negative a and b; false if it overflows int64.
static bool mulChecked(int64_t a, int64_t b, int64_t &result) {
  if (a < 0 || b < 0)
    return false;
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a)
    return false;
  result = a * b;
  return true;
}

/// The product of `dims`; false if a dim is negative or it overflows.
static bool productChecked(const std::vector<int64_t> &dims, int64_t &result) {
  result = 1;
  for (int64_t dim : dims)
    if (!mulChecked(result, dim, result))
      return false;
  return true;
}

static std::string joinDims(const std::vector<int64_t> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

static std::string trim(const std::string &s) {
  const char *ws = " \t\r\n";
  size_t begin = s.find_first_not_of(ws);
  if (begin == std::string::npos)
    return "";
  size_t end = s.find_last_not_of(ws);
  return s.substr(begin, end - begin + 1);
}

/// Reads a whole decimal integer: an optional '-', then digits only.
static bool parseInt(const std::string &s, int64_t &out) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && s[i] == '-') {
    negative = true;
    ++i;
  }
  if (i == s.size())
    return false;
  uint64_t value = 0;
  const uint64_t limit = uint64_t(std::numeric_limits<int64_t>::max()) + 1;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (limit - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  if (!negative && value == limit)
    return false;
  out =
      negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

/// Reads a whole floating-point literal (anything strtod takes, entirely).
static bool parseDouble(const std::string &s, double &out) {
  if (s.empty())
    return false;
  const char *begin = s.c_str();
  char *end = nullptr;
  double value = std::strtod(begin, &end);
  if (end != begin + s.size())
    return false;
  out = value;
  return true;
}

std::string formatDoubleRoundTrip(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

const char *causalName(Causal causal) {
  switch (causal) {
  case Causal::None:
    return "none";
  case Causal::TopLeft:
    return "top_left";
  case Causal::BottomRight:
    return "bottom_right";
  }
  return "none";
}

static const char *maskName(MaskKind mask) {
  switch (mask) {
  case MaskKind::None:
    return "none";
  case MaskKind::Bool:
    return "bool";
  case MaskKind::Float:
    return "float";
  }
  return "none";
}

static bool isElementDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

//===----------------------------------------------------------------------===//
// SdpaSpec
//===----------------------------------------------------------------------===//

SdpaSpec SdpaSpec::withDefaults() const {
  SdpaSpec s = *this;
  if (s.isVarlen())
    setVarlenSizes(s);
  if (s.isPaged())
    setPagedSizes(s);
  if (s.hkv == -1)
    s.hkv = s.hq;
  if (s.lk == -1)
    s.lk = s.lq;
  if (s.dv == -1)
    s.dv = s.d;
  if (s.mask != MaskKind::None && s.maskShape.empty())
    s.maskShape = {s.b, s.hq, s.lq, s.lk};
  return s;
}

llvm::Error SdpaSpec::validate() const {
  SdpaSpec s = withDefaults();
  if (s.isVarlen())
    if (llvm::Error err = validateVarlen(s))
      return err;
  if (s.isPaged())
    if (llvm::Error err = validatePaged(s))
      return err;
  const std::pair<const char *, int64_t> dims[] = {
      {"b", s.b},   {"hq", s.hq}, {"hkv", s.hkv}, {"lq", s.lq},
      {"lk", s.lk}, {"d", s.d},   {"dv", s.dv}};
  for (const auto &[name, value] : dims)
    if (value <= 0)
      return makeError(std::string(name) + "=" + std::to_string(value) +
                       ": expected a positive size");
  if (!isElementDType(s.dtype))
    return makeError(std::string("dtype=") + dtypeName(s.dtype) +
                     ": expected f32, f16 or bf16");

  // Sizes before anything that multiplies them.
  const std::pair<const char *, std::vector<int64_t>> tensors[] = {
      {"query", {s.b, s.hq, s.lq, s.d}},   {"key", {s.b, s.hkv, s.lk, s.d}},
      {"value", {s.b, s.hkv, s.lk, s.dv}}, {"out", {s.b, s.hq, s.lq, s.dv}},
      {"lse", {s.b, s.hq, s.lq}},
  };
  std::string sizes =
      "b=" + std::to_string(s.b) + ",hq=" + std::to_string(s.hq) +
      ",hkv=" + std::to_string(s.hkv) + ",lq=" + std::to_string(s.lq) +
      ",lk=" + std::to_string(s.lk) + ",d=" + std::to_string(s.d) +
      ",dv=" + std::to_string(s.dv);
  for (const auto &[name, shape] : tensors) {
    int64_t n = 0;
    if (!productChecked(shape, n) || n > kMaxElements)
      return makeError(sizes + ": the " + name + " tensor [" + joinDims(shape) +
                       "] would have more than 2^40 elements");
  }

  if (s.hq % s.hkv != 0)
    return makeError("hkv=" + std::to_string(s.hkv) +
                     " does not divide hq=" + std::to_string(s.hq) +
                     " (grouped-query attention needs hq % hkv "
                     "== 0)");

  if (s.mask == MaskKind::None) {
    if (!s.maskShape.empty())
      return makeError("mask_shape=" + joinDims(s.maskShape) +
                       " given without mask=bool or mask=float");
  } else {
    const std::string given = "mask_shape=" + joinDims(s.maskShape);
    if (s.maskShape.size() != 4)
      return makeError(given + ": expected 4 dims, got " +
                       std::to_string(s.maskShape.size()));
    const int64_t full[4] = {s.b, s.hq, s.lq, s.lk};
    const char *names[4] = {"b", "hq", "lq", "lk"};
    for (int i = 0; i < 4; ++i)
      if (s.maskShape[i] != 1 && s.maskShape[i] != full[i])
        return makeError(given + ": dim " + std::to_string(i) + " (" +
                         std::to_string(s.maskShape[i]) + ") must be 1 or " +
                         names[i] + " (" + std::to_string(full[i]) + ")");
    // Each dim is 1 or a dim bounded above, but their product may not be.
    int64_t n = 0;
    if (!productChecked(s.maskShape, n) || n > kMaxElements)
      return makeError(given +
                       ": the mask tensor would have more than 2^40 elements");
  }

  // FLOPs = 2 * b * hq * (d + dv) * lq * lk must fit in int64 (it bounds the
  // causal pair count too). d + dv <= 2^41 by the checks above.
  int64_t flops = 2;
  if (!mulChecked(flops, s.b, flops) || !mulChecked(flops, s.hq, flops) ||
      !mulChecked(flops, s.d + s.dv, flops) ||
      !mulChecked(flops, s.lq, flops) || !mulChecked(flops, s.lk, flops))
    return makeError(sizes +
                     ": the FLOP count 2*b*hq*(d+dv)*lq*lk overflows int64");

  if (s.window && (s.window->first < -1 || s.window->second < -1))
    return makeError("window=" + std::to_string(s.window->first) + ":" +
                     std::to_string(s.window->second) +
                     ": expected each side to be -1 (unbounded) or "
                     "non-negative");

  if (s.softcap) {
    std::string given = "softcap=" + formatDoubleRoundTrip(*s.softcap);
    float f = static_cast<float>(*s.softcap);
    if (!std::isfinite(*s.softcap) || !(*s.softcap > 0) || !std::isfinite(f) ||
        f == 0)
      return makeError(given + ": expected a positive number that is finite "
                               "and non-zero as an f32");
    if (static_cast<double>(f) > kMaxLog2EFactor)
      return makeError(given + ": expected at most " +
                       formatDoubleRoundTrip(kMaxLog2EFactor) +
                       " (FLT_MAX / log2(e), the f32 factor softcap * log2(e) "
                       "must be finite)");
  }

  if (s.scale) {
    double v = *s.scale;
    std::string given = "scale=" + formatDoubleRoundTrip(v);
    if (!std::isfinite(v))
      return makeError(given + ": expected a finite number");
    if (v == 0)
      return makeError(given + ": expected a non-zero number");
    float f = static_cast<float>(v);
    if (!std::isfinite(f))
      return makeError(given + ": overflows the f32 scale attribute");
    if (f == 0)
      return makeError(given + ": rounds to 0 as the f32 scale attribute");
    if (std::abs(static_cast<double>(f)) > kMaxLog2EFactor)
      return makeError(given + ": expected |scale| at most " +
                       formatDoubleRoundTrip(kMaxLog2EFactor) +
                       " (FLT_MAX / log2(e), the f32 factor scale * log2(e) "
                       "must be finite)");
  }
  return llvm::Error::success();
}

double SdpaSpec::effectiveScale() const {
  double v;
  if (scale)
    v = *scale;
  else
    v = 1.0 / std::sqrt(static_cast<double>(withDefaults().d));
  return static_cast<double>(static_cast<float>(v));
}

SdpaProblem SdpaSpec::toProblem() const {
  SdpaSpec s = withDefaults();
  SdpaProblem p;
  p.b = s.b;
  p.hq = s.hq;
  p.hkv = s.hkv;
  p.lq = s.lq;
  p.lk = s.lk;
  p.d = s.d;
  p.dv = s.dv;
  p.scale = s.effectiveScale();
  p.causal = s.causal;
  p.window = s.window;
  p.keyLengths = s.keyLengths;
  p.alibi = s.alibi;
  if (s.softcap) // The attribute is an f32: the reference uses its value.
    p.softcap = static_cast<double>(static_cast<float>(*s.softcap));
  p.mask = s.mask;
  p.maskShape = s.maskShape;
  p.lse = s.lse;
  if (s.isVarlen()) {
    p.varlen = true;
    p.cuSeqlensQ = cumulativeOffsets(s.seqlensQ);
    p.cuSeqlensK = cumulativeOffsets(s.seqlensK);
  }
  if (s.isPaged()) { // The dense view: lk = max_pages * page_size.
    p.paged = true;
    p.keyLengths = true;
    p.hndLayout = s.hndLayout;
    p.pageSize = s.pageSize;
    p.numPages = pagedNumPages(s);
    p.maxPages = pagedMaxPages(s);
    p.keyLengthValues = s.kvLens;
  }
  return p;
}

std::string SdpaSpec::toString() const {
  SdpaSpec s = withDefaults();
  if (s.isVarlen())
    return varlenSpecString(s);
  if (s.isPaged())
    return pagedSpecString(s);
  std::string out =
      "b=" + std::to_string(s.b) + ",hq=" + std::to_string(s.hq) +
      ",hkv=" + std::to_string(s.hkv) + ",lq=" + std::to_string(s.lq) +
      ",lk=" + std::to_string(s.lk) + ",d=" + std::to_string(s.d) +
      ",dv=" + std::to_string(s.dv) + ",dtype=" + dtypeName(s.dtype) +
      ",causal=" + causalName(s.causal);
  if (s.window)
    out += ",window=" + std::to_string(s.window->first) + ":" +
           std::to_string(s.window->second);
  if (s.softcap)
    out += ",softcap=" + formatDoubleRoundTrip(*s.softcap);
  out += std::string(",mask=") + maskName(s.mask);
  if (s.mask != MaskKind::None)
    out += ",mask_shape=" + joinDims(s.maskShape);
  if (s.scale)
    out += ",scale=" + formatDoubleRoundTrip(*s.scale);
  if (s.keyLengths)
    out += ",key_lengths=1";
  if (s.alibi != SdpaProblem::Alibi::None)
    out += s.alibi == SdpaProblem::Alibi::Heads ? ",alibi=h" : ",alibi=bh";
  out += s.lse ? ",lse=1" : ",lse=0";
  if (s.dynamic)
    out += ",dynamic=1";
  return out;
}

std::vector<TensorSpec> SdpaSpec::argSpecs() const {
  SdpaSpec s = withDefaults();
  if (s.isVarlen())
    return varlenArgSpecs(s);
  if (s.isPaged())
    return pagedArgSpecs(s);
  std::vector<TensorSpec> specs = {{{s.b, s.hq, s.lq, s.d}, s.dtype},
                                   {{s.b, s.hkv, s.lk, s.d}, s.dtype},
                                   {{s.b, s.hkv, s.lk, s.dv}, s.dtype}};
  if (s.mask == MaskKind::Bool)
    specs.push_back({s.maskShape, DType::Bool});
  else if (s.mask == MaskKind::Float)
    specs.push_back({s.maskShape, s.dtype});
  if (s.keyLengths)
    specs.push_back({{s.b}, DType::I32});
  if (s.alibi == SdpaProblem::Alibi::Heads)
    specs.push_back({{s.hq}, DType::F32});
  else if (s.alibi == SdpaProblem::Alibi::BatchHeads)
    specs.push_back({{s.b, s.hq}, DType::F32});
  return specs;
}

std::vector<TensorSpec> SdpaSpec::resultSpecs() const {
  SdpaSpec s = withDefaults();
  if (s.isVarlen())
    return varlenResultSpecs(s);
  std::vector<TensorSpec> specs = {{{s.b, s.hq, s.lq, s.dv}, s.dtype}};
  if (s.lse)
    specs.push_back({{s.b, s.hq, s.lq}, DType::F32});
  return specs;
}

//===----------------------------------------------------------------------===//
// parseSdpaSpec
//===----------------------------------------------------------------------===//

namespace {
enum class Key {
  B,
  Hq,
  Hkv,
  Lq,
  Lk,
  D,
  Dv,
  DTypeKey,
  CausalKey,
  MaskKey,
  MaskShape,
  Scale,
  Lse,
  Dynamic,
  Window,
  Softcap,
  KeyLengths,
  AlibiKey,
  SeqlensQ,
  SeqlensK,
  PageSize,
  KvLens,
  Layout,
  NumKeys
};
} // namespace

static const char *const kKeyNames[] = {
    "b",         "hq",        "hkv",       "lq",      "lk",          "d",
    "dv",        "dtype",     "causal",    "mask",    "mask_shape",  "scale",
    "lse",       "dynamic",   "window",    "softcap", "key_lengths", "alibi",
    "seqlens_q", "seqlens_k", "page_size", "kv_lens", "layout"};
static_assert(sizeof(kKeyNames) / sizeof(kKeyNames[0]) ==
                  static_cast<size_t>(Key::NumKeys),
              "one name per key");

static bool lookupKey(const std::string &name, Key &key) {
  for (size_t i = 0; i < static_cast<size_t>(Key::NumKeys); ++i)
    if (name == kKeyNames[i]) {
      key = static_cast<Key>(i);
      return true;
    }
  return false;
}

/// Reads `value` into the field of `spec` that `key` names.
static llvm::Error parseValue(Key key, const std::string &name,
                              const std::string &value, SdpaSpec &spec) {
  const std::string given = name + "=" + value;
  auto parseDim = [&](int64_t &field) -> llvm::Error {
    int64_t v = 0;
    if (!parseInt(value, v))
      return makeError(given + ": malformed integer '" + value + "'");
    if (v <= 0) {
      return makeError(given + ": expected a positive size");
    }
    field = v;
    return llvm::Error::success();
  };
  auto parseFlag = [&](bool &field) -> llvm::Error {
    if (value != "0" && value != "1")
      return makeError(given + ": expected 0 or 1");
    field = value == "1";
    return llvm::Error::success();
  };

  switch (key) {
  case Key::B:
    return parseDim(spec.b);
  case Key::Hq:
    return parseDim(spec.hq);
  case Key::Hkv:
    return parseDim(spec.hkv);
  case Key::Lq:
    return parseDim(spec.lq);
  case Key::Lk:
    return parseDim(spec.lk);
  case Key::D:
    return parseDim(spec.d);
  case Key::Dv:
    return parseDim(spec.dv);
  case Key::DTypeKey:
    if (value == "f32")
      spec.dtype = DType::F32;
    else if (value == "f16")
      spec.dtype = DType::F16;
    else if (value == "bf16")
      spec.dtype = DType::BF16;
    else
      return makeError(given + ": expected f32, f16 or bf16");
    return llvm::Error::success();
  case Key::CausalKey:
    if (value == "none")
      spec.causal = Causal::None;
    else if (value == "top_left")
      spec.causal = Causal::TopLeft;
    else if (value == "bottom_right")
      spec.causal = Causal::BottomRight;
    else
      return makeError(given + ": expected none, top_left or bottom_right");
    return llvm::Error::success();
  case Key::MaskKey:
    if (value == "none")
      spec.mask = MaskKind::None;
    else if (value == "bool")
      spec.mask = MaskKind::Bool;
    else if (value == "float")
      spec.mask = MaskKind::Float;
    else
      return makeError(given + ": expected none, bool or float");
    return llvm::Error::success();
  case Key::MaskShape: {
    std::vector<int64_t> dims;
    size_t start = 0;
    while (true) {
      size_t x = value.find('x', start);
      std::string part = value.substr(
          start, x == std::string::npos ? std::string::npos : x - start);
      int64_t v = 0;
      if (!parseInt(part, v))
        return makeError(given + ": malformed dim '" + part +
                         "' (expected AxBxCxD)");
      if (v <= 0) {
        return makeError(given + ": expected positive dims");
      }
      dims.push_back(v);
      if (x == std::string::npos)
        break;
      start = x + 1;
    }
    spec.maskShape = dims;
    return llvm::Error::success();
  }
  case Key::Scale: {
    double v = 0;
    if (!parseDouble(value, v))
      return makeError(given + ": malformed number '" + value + "'");
    spec.scale = v;
    return llvm::Error::success();
  }
  case Key::Lse:
    return parseFlag(spec.lse);
  case Key::Dynamic:
    return parseFlag(spec.dynamic);
  case Key::KeyLengths:
    return parseFlag(spec.keyLengths);
  case Key::AlibiKey:
    if (value == "none")
      spec.alibi = SdpaProblem::Alibi::None;
    else if (value == "h")
      spec.alibi = SdpaProblem::Alibi::Heads;
    else if (value == "bh")
      spec.alibi = SdpaProblem::Alibi::BatchHeads;
    else
      return makeError(given + ": expected none, h ([hq] slopes) or bh ([b, "
                               "hq] slopes)");
    return llvm::Error::success();
  case Key::Softcap: {
    double v = 0;
    if (!parseDouble(value, v))
      return makeError(given + ": malformed number '" + value + "'");
    spec.softcap = v;
    return llvm::Error::success();
  }
  case Key::Window: {
    size_t colon = value.find(':');
    int64_t left = 0, right = 0;
    if (colon == std::string::npos || !parseInt(value.substr(0, colon), left) ||
        !parseInt(value.substr(colon + 1), right))
      return makeError(given + ": expected LEFT:RIGHT (integers, -1 for "
                               "unbounded)");
    spec.window = {left, right};
    return llvm::Error::success();
  }
  case Key::SeqlensQ:
    return parseSeqlens(given, value, spec.seqlensQ);
  case Key::SeqlensK:
    return parseSeqlens(given, value, spec.seqlensK);
  case Key::PageSize:
    return parseDim(spec.pageSize);
  case Key::KvLens:
    return parseSeqlens(given, value, spec.kvLens);
  case Key::Layout:
    if (value != "nhd" && value != "hnd")
      return makeError(given + ": expected nhd ([pages, page_size, hkv, d]) "
                               "or hnd ([pages, hkv, page_size, d])");
    spec.hndLayout = value == "hnd";
    return llvm::Error::success();
  case Key::NumKeys:
    break;
  }
  return makeError(given + ": unknown key '" + name + "'");
}

llvm::Expected<SdpaSpec> parseSdpaSpec(llvm::StringRef textRef) {
  const std::string text = textRef.str();
  SdpaSpec parsed;
  bool seen[static_cast<size_t>(Key::NumKeys)] = {};
  size_t start = 0;
  int itemIndex = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = trim(text.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start));
    ++itemIndex;
    // An entirely empty spec falls through to the "missing key" message.
    bool wholeTextEmpty = itemIndex == 1 && comma == std::string::npos;
    if (item.empty() && !wholeTextEmpty)
      return makeError("empty item " + std::to_string(itemIndex) + " in '" +
                       text + "' (stray comma?)");
    if (!item.empty()) {
      size_t eq = item.find('=');
      if (eq == std::string::npos)
        return makeError("item '" + item + "' is not key=value");
      std::string name = trim(item.substr(0, eq));
      std::string value = trim(item.substr(eq + 1));
      Key key;
      if (!lookupKey(name, key))
        return makeError(
            "unknown key '" + name + "' in '" + item +
            "' (expected b, hq, hkv, lq, lk, d, dv, dtype, causal, mask, "
            "mask_shape, scale, lse, dynamic, window, softcap, key_lengths, "
            "alibi, seqlens_q, seqlens_k, page_size, kv_lens or layout)");
      size_t index = static_cast<size_t>(key);
      if (seen[index])
        return makeError("duplicate key '" + name + "' in '" + item + "'");
      seen[index] = true;
      if (llvm::Error err = parseValue(key, name, value, parsed))
        return std::move(err);
    }
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }

  auto seenName = [&](llvm::StringRef name) {
    Key key;
    return lookupKey(name.str(), key) && seen[static_cast<size_t>(key)];
  };
  if (seenName("page_size") || seenName("kv_lens") || seenName("layout")) {
    if (llvm::Error err = checkPagedKeys(seenName))
      return std::move(err);
  } else if (seenName("seqlens_q") || seenName("seqlens_k")) {
    if (llvm::Error err = checkVarlenKeys(seenName))
      return std::move(err);
  }
  for (Key required : {Key::Hq, Key::Lq, Key::D})
    if (!seen[static_cast<size_t>(required)] &&
        !(required == Key::Lq && parsed.isVarlen()))
      return makeError(std::string("missing required key '") +
                       kKeyNames[static_cast<size_t>(required)] +
                       "' (hq, lq and d have no default)");
  if (llvm::Error err = parsed.validate())
    return std::move(err);
  return parsed.withDefaults();
}

} // namespace mlir::attn::exec
