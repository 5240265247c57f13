//===- SdpaSpecPaged.cpp - the paged form of --sdpa specs -----------------===//
//
// Part of the attn project.
//
// `page_size=P,kv_lens=A/B/...` (and `layout=nhd|hnd`) make a spec one
// attn.sdpa_paged: b sequences (one per length), each with lq queries and
// its keys and values in ceil(len / P) pages of one cache. b and lk follow
// from the lengths (lk = max_pages * P, the page table's span: the dense
// view the reference computes on), so SdpaSpec::validate()'s size checks
// bound the dense view; the rest of the spec (heads, dims, dtype, causal,
// window, softcap, scale, alibi, lse, dynamic) means what it means for
// attn.sdpa with key lengths.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Error.h"
#include "attn/Spec/SdpaSpec.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdint>

namespace mlir::attn::exec {

static std::string joinLengths(const std::vector<int64_t> &lengths) {
  std::string s;
  for (size_t i = 0; i < lengths.size(); ++i)
    s += (i ? "/" : "") + std::to_string(lengths[i]);
  return s;
}

llvm::Error checkPagedKeys(llvm::function_ref<bool(llvm::StringRef)> seen) {
  if (!seen("page_size"))
    return makeError(std::string(seen("kv_lens") ? "kv_lens" : "layout") +
                     " given without page_size (the paged form, "
                     "attn.sdpa_paged, needs page_size and kv_lens)");
  if (!seen("kv_lens"))
    return makeError("page_size given without kv_lens (attn.sdpa_paged needs "
                     "one key length per sequence, e.g. kv_lens=37/0/1)");
  for (const char *key : {"b", "lk"})
    if (seen(key))
      return makeError(std::string(key) +
                       " goes with attn.sdpa: with page_size "
                       "(attn.sdpa_paged) the sequence count comes from "
                       "kv_lens and the key span from the page table");
  if (seen("mask") || seen("mask_shape"))
    return makeError("mask goes with attn.sdpa: attn.sdpa_paged takes no "
                     "mask");
  if (seen("key_lengths"))
    return makeError("key_lengths goes with attn.sdpa: with page_size "
                     "(attn.sdpa_paged) kv_lens gives every sequence its own "
                     "key count");
  if (seen("seqlens_q") || seen("seqlens_k"))
    return makeError("seqlens_q goes with attn.sdpa_varlen: a spec is one "
                     "op, packed (seqlens_q) or paged (page_size)");
  return llvm::Error::success();
}

static int64_t pagesOf(int64_t length, int64_t pageSize) {
  return length / pageSize + (length % pageSize != 0);
}

int64_t pagedMaxPages(const SdpaSpec &s) {
  int64_t m = 1; // The table has a column even if no sequence has a key.
  for (int64_t l : s.kvLens)
    m = std::max(m, pagesOf(l, s.pageSize));
  return m;
}

int64_t pagedNumPages(const SdpaSpec &s) {
  int64_t n = 0;
  for (int64_t l : s.kvLens)
    n += pagesOf(l, s.pageSize);
  return std::max<int64_t>(n, 1);
}

void setPagedSizes(SdpaSpec &s) {
  s.b = static_cast<int64_t>(s.kvLens.size());
  s.lk = pagedMaxPages(s) * s.pageSize;
}

llvm::Error validatePaged(const SdpaSpec &s) {
  if (s.kvLens.empty())
    return makeError("kv_lens: expected one length per sequence");
  if (s.mask != MaskKind::None || s.keyLengths || s.isVarlen())
    return makeError("attn.sdpa_paged (page_size) takes no mask, no key "
                     "lengths and no packed sequences");
  // The lengths and page indices are i32; the caches are bounded like every
  // tensor (their dense view, lk = max_pages * page_size, by validate()).
  for (int64_t l : s.kvLens)
    if (l > INT32_MAX)
      return makeError("kv_lens=" + joinLengths(s.kvLens) + ": the length " +
                       std::to_string(l) + " does not fit the i32 lengths");
  if (s.pageSize > INT32_MAX)
    return makeError("page_size=" + std::to_string(s.pageSize) +
                     ": expected a page size below 2^31");
  int64_t pages = pagedNumPages(s);
  if (pages > INT32_MAX)
    return makeError("kv_lens=" + joinLengths(s.kvLens) + ": " +
                     std::to_string(pages) +
                     " pages do not fit the i32 page table");
  for (int64_t dim : {std::max(s.d, s.dv)}) {
    int64_t n = 0;
    if (llvm::MulOverflow(pages, s.pageSize, n) ||
        llvm::MulOverflow(n, s.hkv, n) || llvm::MulOverflow(n, dim, n) ||
        n > kMaxTensorElements)
      return makeError("kv_lens=" + joinLengths(s.kvLens) +
                       ",page_size=" + std::to_string(s.pageSize) +
                       ": the caches would have more than 2^40 elements");
  }
  return llvm::Error::success();
}

std::string pagedSpecString(const SdpaSpec &s) {
  std::string out =
      "hq=" + std::to_string(s.hq) + ",hkv=" + std::to_string(s.hkv) +
      ",lq=" + std::to_string(s.lq) + ",d=" + std::to_string(s.d) +
      ",dv=" + std::to_string(s.dv) +
      ",page_size=" + std::to_string(s.pageSize) +
      ",kv_lens=" + joinLengths(s.kvLens) +
      ",layout=" + (s.hndLayout ? "hnd" : "nhd") +
      ",dtype=" + dtypeName(s.dtype) + ",causal=" + causalName(s.causal);
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

std::vector<TensorSpec> pagedArgSpecs(const SdpaSpec &s) {
  int64_t pages = pagedNumPages(s);
  auto cache = [&](int64_t dim) -> std::vector<int64_t> {
    if (s.hndLayout)
      return {pages, s.hkv, s.pageSize, dim};
    return {pages, s.pageSize, s.hkv, dim};
  };
  std::vector<TensorSpec> specs = {{{s.b, s.hq, s.lq, s.d}, s.dtype},
                                   {cache(s.d), s.dtype},
                                   {cache(s.dv), s.dtype},
                                   {{s.b, pagedMaxPages(s)}, DType::I32},
                                   {{s.b}, DType::I32}};
  if (s.alibi == SdpaProblem::Alibi::Heads)
    specs.push_back({{s.hq}, DType::F32});
  else if (s.alibi == SdpaProblem::Alibi::BatchHeads)
    specs.push_back({{s.b, s.hq}, DType::F32});
  return specs;
}

} // namespace mlir::attn::exec
