//===- ReferencePagedTest.cpp - the paged spec and f64 reference ----------===//
//
// The paged spec's parsing, shapes and refusals; the generated page tables
// (a scattering permutation, -1 past a sequence's pages); the refusals of
// bad tables and lengths; and the dense view the reference runs on, against
// a cache written from a known dense batch.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/ReferencePaged.h"
#include "attn/Spec/SdpaSpec.h"

#include "ErrorHelpers.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

using namespace mlir::attn::exec;
using namespace attn_test;

namespace {

TEST(ReferencePagedTest, SpecShapesAndSizes) {
  SdpaSpec s = valueOrFail(parseSdpaSpec(
      "hq=8,hkv=2,lq=3,d=16,dv=12,page_size=5,kv_lens=11/0/1/5,lse=1"));
  EXPECT_TRUE(s.isPaged());
  EXPECT_FALSE(s.hndLayout);
  EXPECT_EQ(s.b, 4);
  // Pages: 3 + 0 + 1 + 1; the longest sequence needs 3 (lk = 15).
  EXPECT_EQ(pagedNumPages(s), 5);
  EXPECT_EQ(pagedMaxPages(s), 3);
  EXPECT_EQ(s.lk, 15);
  std::vector<TensorSpec> args = s.argSpecs();
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[0].shape, (std::vector<int64_t>{4, 8, 3, 16}));
  EXPECT_EQ(args[1].shape, (std::vector<int64_t>{5, 5, 2, 16}));
  EXPECT_EQ(args[2].shape, (std::vector<int64_t>{5, 5, 2, 12}));
  EXPECT_EQ(args[3].shape, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(args[3].dtype, DType::I32);
  EXPECT_EQ(args[4].shape, (std::vector<int64_t>{4}));
  std::vector<TensorSpec> results = s.resultSpecs();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].shape, (std::vector<int64_t>{4, 8, 3, 12}));
  EXPECT_EQ(results[1].shape, (std::vector<int64_t>{4, 8, 3}));

  SdpaSpec hnd = valueOrFail(parseSdpaSpec(
      "hq=4,lq=1,d=8,page_size=16,kv_lens=40,layout=hnd,alibi=bh"));
  std::vector<TensorSpec> hndArgs = hnd.argSpecs();
  ASSERT_EQ(hndArgs.size(), 6u);
  EXPECT_EQ(hndArgs[1].shape, (std::vector<int64_t>{3, 4, 16, 8}));
  EXPECT_EQ(hndArgs[5].shape, (std::vector<int64_t>{1, 4}));

  // The canonical spelling reads back to the same spec.
  for (const SdpaSpec &spec : {s, hnd}) {
    SdpaSpec again = valueOrFail(parseSdpaSpec(spec.toString()));
    EXPECT_EQ(again.toString(), spec.toString());
  }
  EXPECT_EQ(hnd.toString(),
            "hq=4,hkv=4,lq=1,d=8,dv=8,page_size=16,kv_lens=40,layout=hnd,"
            "dtype=f32,causal=none,alibi=bh,lse=0");

  SdpaProblem p = s.toProblem();
  EXPECT_TRUE(p.paged);
  EXPECT_TRUE(p.keyLengths);
  EXPECT_EQ(p.lk, 15);
  EXPECT_EQ(p.numPages, 5);
  EXPECT_EQ(p.maxPages, 3);
  EXPECT_EQ(p.keyLengthValues, (std::vector<int64_t>{11, 0, 1, 5}));
  EXPECT_EQ(keyLengthsArgIndex(p), 4u);
  EXPECT_EQ(alibiArgIndex(p), 5u);
}

TEST(ReferencePagedTest, SpecRefusals) {
  EXPECT_EQ(errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4")),
            "page_size given without kv_lens (attn.sdpa_paged needs one key "
            "length per sequence, e.g. kv_lens=37/0/1)");
  EXPECT_EQ(errorOf(parseSdpaSpec("hq=2,lq=1,d=8,kv_lens=3")),
            "kv_lens given without page_size (the paged form, "
            "attn.sdpa_paged, needs page_size and kv_lens)");
  EXPECT_EQ(errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4,kv_lens=3,b=1")),
            "b goes with attn.sdpa: with page_size (attn.sdpa_paged) the "
            "sequence count comes from kv_lens and the key span from the page "
            "table");
  EXPECT_EQ(
      errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4,kv_lens=3,mask=bool")),
      "mask goes with attn.sdpa: attn.sdpa_paged takes no mask");
  EXPECT_EQ(errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=0,kv_lens=3")),
            "page_size=0: expected a positive size");
  EXPECT_EQ(errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4,kv_lens=3/-1")),
            "kv_lens=3/-1: malformed length '-1' (expected lengths >= 0 "
            "separated by '/', e.g. 5/17/0)");
  EXPECT_EQ(
      errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4,kv_lens=3,layout=x")),
      "layout=x: expected nhd ([pages, page_size, hkv, d]) or hnd ([pages, "
      "hkv, page_size, d])");
  EXPECT_EQ(
      errorOf(parseSdpaSpec("hq=2,lq=1,d=8,page_size=4,kv_lens=3,seqlens_q=1")),
      "seqlens_q goes with attn.sdpa_varlen: a spec is one op, packed "
      "(seqlens_q) or paged (page_size)");
}

/// The generated inputs of `spec`: zeros, then its page table and lengths.
std::vector<HostTensor> tablesOf(const SdpaSpec &spec, const SdpaProblem &p,
                                 uint64_t seed) {
  std::vector<HostTensor> in;
  for (const TensorSpec &t : spec.argSpecs())
    in.push_back(HostTensor::zeros(t));
  fillPagedTables(p, in, seed);
  return in;
}

TEST(ReferencePagedTest, GeneratedTablesScatterEveryPageOnce) {
  SdpaSpec s = valueOrFail(
      parseSdpaSpec("hq=2,lq=1,d=4,page_size=3,kv_lens=10/0/4/1/9"));
  SdpaProblem p = s.toProblem();
  std::vector<HostTensor> in = tablesOf(s, p, 7);
  ASSERT_EQ(messageOf(setPagedValues(p, in)), "");
  // Pages 4 + 0 + 2 + 1 + 3 = 10, each used once; -1 past a sequence's own.
  std::set<int64_t> used;
  const int64_t own[] = {4, 0, 2, 1, 3};
  for (int64_t b = 0; b < 5; ++b)
    for (int64_t c = 0; c < p.maxPages; ++c) {
      int64_t page = p.pageTableValues[b * p.maxPages + c];
      if (c < own[b])
        EXPECT_TRUE(used.insert(page).second) << "page " << page << " twice";
      else
        EXPECT_EQ(page, -1);
    }
  EXPECT_EQ(used.size(), 10u);
  EXPECT_EQ(*used.rbegin(), 9);
  // Scattered: not the identity, and another seed gives another order.
  bool identity = true;
  for (int64_t c = 0; c < 4; ++c)
    identity &= p.pageTableValues[c] == c;
  EXPECT_FALSE(identity);
  SdpaProblem other = s.toProblem();
  std::vector<HostTensor> in2 = tablesOf(s, other, 8);
  ASSERT_EQ(messageOf(setPagedValues(other, in2)), "");
  EXPECT_NE(p.pageTableValues, other.pageTableValues);
}

TEST(ReferencePagedTest, BadTablesAndLengthsAreRefused) {
  SdpaSpec s =
      valueOrFail(parseSdpaSpec("hq=2,lq=1,d=4,page_size=3,kv_lens=5/2"));
  SdpaProblem p = s.toProblem();
  std::vector<HostTensor> in = tablesOf(s, p, 1);
  // Three pages; the table is [2, 2].
  in[3].setFromDouble(1, 3);
  EXPECT_EQ(errorOf(setPagedValues(p, in)),
            "page_table[0, 1] = 3: expected a page in [0, 3) (sequence 0 has "
            "5 keys)");
  in[3].setFromDouble(1, -2);
  EXPECT_EQ(errorOf(setPagedValues(p, in)),
            "page_table[0, 1] = -2: expected a page in [0, 3) (sequence 0 has "
            "5 keys)");
  // An entry past a sequence's keys is never read: any value passes.
  in = tablesOf(s, p, 1);
  in[3].setFromDouble(3, 1000);
  EXPECT_EQ(messageOf(setPagedValues(p, in)), "");
  in[4].setFromDouble(1, -1);
  EXPECT_EQ(errorOf(setPagedValues(p, in)),
            "kv_lens[1] = -1: expected a length >= 0");
  in[4].setFromDouble(1, 7);
  EXPECT_EQ(errorOf(setPagedValues(p, in)),
            "kv_lens[1] = 7: past the page table's 2 pages of 3 keys (6)");
}

/// The dense view of a cache written from a known dense batch is that
/// batch, up to each sequence's length (0 after), in either layout.
void checkDenseView(bool hnd) {
  SdpaSpec s = valueOrFail(parseSdpaSpec(
      std::string("hq=4,hkv=2,lq=2,d=3,dv=2,page_size=2,kv_lens=5/1/0/4") +
      (hnd ? ",layout=hnd" : "")));
  SdpaProblem p = s.toProblem();
  std::vector<HostTensor> in = tablesOf(s, p, 3);
  ASSERT_EQ(messageOf(setPagedValues(p, in)), "");
  auto denseValue = [](int64_t b, int64_t h, int64_t t, int64_t e) {
    return 1000.0 * b + 100.0 * h + 10.0 * t + e;
  };
  // Write the cache: key t of sequence b at (page, t % 2).
  for (int64_t b = 0; b < p.b; ++b)
    for (int64_t t = 0; t < p.keyLengthValues[b]; ++t) {
      int64_t page = p.pageTableValues[b * p.maxPages + t / 2], slot = t % 2;
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 3; ++e) {
          int64_t row =
              hnd ? (page * 2 + h) * 2 + slot : (page * 2 + slot) * 2 + h;
          in[1].setFromDouble(row * 3 + e, denseValue(b, h, t, e));
          if (e < 2)
            in[2].setFromDouble(row * 2 + e, -denseValue(b, h, t, e));
        }
    }
  PagedDenseView view = densePagedView(p, in);
  ASSERT_EQ(view.key.shape, (std::vector<int64_t>{4, 2, 6, 3}));
  ASSERT_EQ(view.value.shape, (std::vector<int64_t>{4, 2, 6, 2}));
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < 6; ++t)
        for (int64_t e = 0; e < 3; ++e) {
          bool in_ = t < p.keyLengthValues[b];
          EXPECT_EQ(view.key.getAsDouble(((b * 2 + h) * 6 + t) * 3 + e),
                    in_ ? denseValue(b, h, t, e) : 0.0);
          if (e < 2)
            EXPECT_EQ(view.value.getAsDouble(((b * 2 + h) * 6 + t) * 2 + e),
                      in_ ? -denseValue(b, h, t, e) : 0.0);
        }

  // The reference on the view: a sequence without keys has out 0 and lse
  // -inf; one with keys has finite rows.
  p.scale = 0.5;
  p.lse = true;
  fillRandomNormal(in[0], 5);
  std::vector<double> out, lse;
  referenceSdpa(p, in[0], view.key, view.value, nullptr, out, &lse);
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 2; ++i) {
      EXPECT_EQ(lse[(2 * 4 + h) * 2 + i],
                -std::numeric_limits<double>::infinity());
      EXPECT_TRUE(std::isfinite(lse[(0 * 4 + h) * 2 + i]));
    }
}

TEST(ReferencePagedTest, DenseViewNhd) { checkDenseView(false); }
TEST(ReferencePagedTest, DenseViewHnd) { checkDenseView(true); }

} // namespace
