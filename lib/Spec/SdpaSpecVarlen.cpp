//===- SdpaSpecVarlen.cpp - the varlen form of --sdpa specs ---------------===//
//
// Part of the attn project.
//
// `seqlens_q=A/B/...` (and `seqlens_k=...`, default the same) make a spec
// one attn.sdpa_varlen over packed sequences of those lengths. b, lq and lk
// follow from the lengths (the count and the longest ones), so the size
// checks of SdpaSpec::validate() bound the packed tensors by their padded
// peers; the rest of the spec (heads, dims, dtype, causal, window, softcap,
// scale, alibi, lse, dynamic) means what it means for attn.sdpa, per
// sequence.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Error.h"
#include "attn/Spec/SdpaSpec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace mlir::attn::exec {

static std::string joinLengths(const std::vector<int64_t> &lengths) {
  std::string s;
  for (size_t i = 0; i < lengths.size(); ++i)
    s += (i ? "/" : "") + std::to_string(lengths[i]);
  return s;
}

llvm::Error parseSeqlens(const std::string &given, const std::string &value,
                         std::vector<int64_t> &out) {
  out.clear();
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(value).split(parts, '/');
  for (llvm::StringRef part : parts) {
    int64_t v = 0;
    // Digits only: no sign, no spaces, below 2^40 (a packed tensor's limit).
    if (part.empty() || part.size() > 13 ||
        part.find_first_not_of("0123456789") != llvm::StringRef::npos ||
        part.getAsInteger(10, v) || v > kMaxTensorElements)
      return makeError(given + ": malformed length '" + part +
                       "' (expected lengths >= 0 separated by '/', e.g. "
                       "5/17/0)");
    out.push_back(v);
  }
  return llvm::Error::success();
}

llvm::Error checkVarlenKeys(llvm::function_ref<bool(llvm::StringRef)> seen) {
  if (!seen("seqlens_q"))
    return makeError("seqlens_k given without seqlens_q (the varlen form "
                     "needs both query and key lengths; seqlens_k defaults "
                     "to seqlens_q)");
  for (const char *key : {"b", "lq", "lk"})
    if (seen(key))
      return makeError(std::string(key) +
                       " goes with attn.sdpa: with seqlens_q "
                       "(attn.sdpa_varlen) the sequence count and lengths "
                       "come from seqlens_q and seqlens_k");
  if (seen("mask") || seen("mask_shape"))
    return makeError("mask goes with attn.sdpa: attn.sdpa_varlen takes no "
                     "mask (a packed mask would be total_q x total_k)");
  if (seen("key_lengths"))
    return makeError("key_lengths goes with attn.sdpa: with seqlens_k "
                     "(attn.sdpa_varlen) every sequence already has its own "
                     "key count");
  return llvm::Error::success();
}

void setVarlenSizes(SdpaSpec &s) {
  if (s.seqlensK.empty())
    s.seqlensK = s.seqlensQ;
  auto longest = [](const std::vector<int64_t> &lengths) {
    int64_t m = 1; // The padded peer's size checks need positive sizes.
    for (int64_t l : lengths)
      m = std::max(m, l);
    return m;
  };
  s.b = static_cast<int64_t>(s.seqlensQ.size());
  s.lq = longest(s.seqlensQ);
  s.lk = longest(s.seqlensK);
}

static int64_t total(const std::vector<int64_t> &lengths) {
  int64_t t = 0;
  for (int64_t l : lengths)
    t += l;
  return t;
}

llvm::Error validateVarlen(const SdpaSpec &s) {
  if (s.seqlensK.size() != s.seqlensQ.size())
    return makeError(
        "seqlens_k=" + joinLengths(s.seqlensK) + ": expected " +
        std::to_string(s.seqlensQ.size()) +
        " lengths, one per sequence of seqlens_q=" + joinLengths(s.seqlensQ));
  if (s.mask != MaskKind::None || s.keyLengths)
    return makeError("attn.sdpa_varlen (seqlens_q) takes no mask and no key "
                     "lengths");
  // The packed totals fit where their padded peers (b * lq, b * lk) do,
  // which the common checks bound; the offsets are i32.
  for (const std::vector<int64_t> *lengths : {&s.seqlensQ, &s.seqlensK}) {
    if (total(*lengths) > INT32_MAX)
      return makeError((lengths == &s.seqlensQ ? "seqlens_q" : "seqlens_k") +
                       std::string(": the packed total ") +
                       std::to_string(total(*lengths)) +
                       " does not fit the i32 offsets");
  }
  return llvm::Error::success();
}

std::vector<int64_t> cumulativeOffsets(const std::vector<int64_t> &lengths) {
  std::vector<int64_t> cu = {0};
  for (int64_t l : lengths)
    cu.push_back(cu.back() + l);
  return cu;
}

std::string varlenSpecString(const SdpaSpec &s) {
  std::string out =
      "hq=" + std::to_string(s.hq) + ",hkv=" + std::to_string(s.hkv) +
      ",d=" + std::to_string(s.d) + ",dv=" + std::to_string(s.dv) +
      ",seqlens_q=" + joinLengths(s.seqlensQ) +
      ",seqlens_k=" + joinLengths(s.seqlensK) + ",dtype=" + dtypeName(s.dtype) +
      ",causal=" + causalName(s.causal);
  if (s.window)
    out += ",window=" + std::to_string(s.window->first) + ":" +
           std::to_string(s.window->second);
  if (s.softcap)
    out += ",softcap=" + formatDoubleRoundTrip(*s.softcap);
  if (s.scale)
    out += ",scale=" + formatDoubleRoundTrip(*s.scale);
  if (s.alibi != SdpaProblem::Alibi::None)
    out += s.alibi == SdpaProblem::Alibi::Heads ? ",alibi=h" : ",alibi=bh";
  out += s.lse ? ",lse=1" : ",lse=0";
  if (s.dynamic)
    out += ",dynamic=1";
  return out;
}

std::vector<TensorSpec> varlenArgSpecs(const SdpaSpec &s) {
  int64_t tq = total(s.seqlensQ), tk = total(s.seqlensK);
  int64_t offsets = static_cast<int64_t>(s.seqlensQ.size()) + 1;
  std::vector<TensorSpec> specs = {{{tq, s.hq, s.d}, s.dtype},
                                   {{tk, s.hkv, s.d}, s.dtype},
                                   {{tk, s.hkv, s.dv}, s.dtype},
                                   {{offsets}, DType::I32},
                                   {{offsets}, DType::I32}};
  if (s.alibi == SdpaProblem::Alibi::Heads)
    specs.push_back({{s.hq}, DType::F32});
  else if (s.alibi == SdpaProblem::Alibi::BatchHeads)
    specs.push_back({{offsets - 1, s.hq}, DType::F32});
  return specs;
}

std::vector<TensorSpec> varlenResultSpecs(const SdpaSpec &s) {
  int64_t tq = total(s.seqlensQ);
  std::vector<TensorSpec> specs = {{{tq, s.hq, s.dv}, s.dtype}};
  if (s.lse)
    specs.push_back({{s.hq, tq}, DType::F32});
  return specs;
}

} // namespace mlir::attn::exec
