//===- ReferencePaged.cpp - The f64 oracle of attn.sdpa_paged -------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/ReferencePaged.h"

#include "attn/Spec/Error.h"

#include <numeric>
#include <random>
#include <string>

namespace mlir::attn::exec {

static int64_t pagesOf(int64_t length, int64_t pageSize) {
  return length / pageSize + (length % pageSize != 0);
}

void fillPagedTables(const SdpaProblem &p, std::vector<HostTensor> &inputs,
                     uint64_t seed) {
  // Fisher-Yates on std::mt19937_64 (std::shuffle's order is the library's).
  std::vector<int64_t> perm(static_cast<size_t>(p.numPages));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ull);
  for (size_t i = perm.size(); i > 1; --i)
    std::swap(perm[i - 1], perm[gen() % i]);
  HostTensor &table = inputs[3], &lens = inputs[4];
  size_t next = 0;
  for (int64_t b = 0; b < p.b; ++b) {
    int64_t len = b < static_cast<int64_t>(p.keyLengthValues.size())
                      ? p.keyLengthValues[b]
                      : p.lk;
    lens.setFromDouble(b, static_cast<double>(len));
    int64_t own = pagesOf(len, p.pageSize);
    for (int64_t c = 0; c < p.maxPages; ++c)
      table.setFromDouble(b * p.maxPages + c,
                          c < own && next < perm.size()
                              ? static_cast<double>(perm[next++])
                              : -1.0);
  }
}

llvm::Error setPagedValues(SdpaProblem &p,
                           const std::vector<HostTensor> &inputs) {
  setKeyLengthValues(p, inputs);
  const HostTensor &table = inputs[3];
  p.pageTableValues.clear();
  for (int64_t i = 0, n = table.numel(); i < n; ++i)
    p.pageTableValues.push_back(static_cast<int64_t>(table.getAsDouble(i)));
  int64_t span = p.maxPages * p.pageSize;
  for (int64_t b = 0; b < p.b; ++b) {
    int64_t len = p.keyLengthValues[b];
    std::string at =
        "kv_lens[" + std::to_string(b) + "] = " + std::to_string(len);
    if (len < 0)
      return makeError(at + ": expected a length >= 0");
    if (len > span)
      return makeError(at + ": past the page table's " +
                       std::to_string(p.maxPages) + " pages of " +
                       std::to_string(p.pageSize) + " keys (" +
                       std::to_string(span) + ")");
    for (int64_t c = 0, own = pagesOf(len, p.pageSize); c < own; ++c) {
      int64_t page = p.pageTableValues[b * p.maxPages + c];
      if (page < 0 || page >= p.numPages)
        return makeError(
            "page_table[" + std::to_string(b) + ", " + std::to_string(c) +
            "] = " + std::to_string(page) + ": expected a page in [0, " +
            std::to_string(p.numPages) + ") (sequence " + std::to_string(b) +
            " has " + std::to_string(len) + " keys)");
    }
  }
  return llvm::Error::success();
}

/// Cache element (page, slot, head, e) of a cache with last dim `dim`.
static int64_t cacheIndex(const SdpaProblem &p, int64_t page, int64_t slot,
                          int64_t head, int64_t e, int64_t dim) {
  int64_t row = p.hndLayout ? (page * p.hkv + head) * p.pageSize + slot
                            : (page * p.pageSize + slot) * p.hkv + head;
  return row * dim + e;
}

PagedDenseView densePagedView(const SdpaProblem &p,
                              const std::vector<HostTensor> &inputs) {
  PagedDenseView view;
  view.key = HostTensor::zeros(inputs[1].dtype, {p.b, p.hkv, p.lk, p.d});
  view.value = HostTensor::zeros(inputs[2].dtype, {p.b, p.hkv, p.lk, p.dv});
  for (int64_t b = 0; b < p.b; ++b) {
    int64_t len = std::min(p.keyLengthValues[b], p.lk);
    for (int64_t t = 0; t < len; ++t) {
      int64_t page = p.pageTableValues[b * p.maxPages + t / p.pageSize];
      int64_t slot = t % p.pageSize;
      for (int64_t h = 0; h < p.hkv; ++h) {
        int64_t row = (b * p.hkv + h) * p.lk + t;
        for (int64_t e = 0; e < p.d; ++e)
          view.key.setFromDouble(
              row * p.d + e,
              inputs[1].getAsDouble(cacheIndex(p, page, slot, h, e, p.d)));
        for (int64_t e = 0; e < p.dv; ++e)
          view.value.setFromDouble(
              row * p.dv + e,
              inputs[2].getAsDouble(cacheIndex(p, page, slot, h, e, p.dv)));
      }
    }
  }
  return view;
}

} // namespace mlir::attn::exec
