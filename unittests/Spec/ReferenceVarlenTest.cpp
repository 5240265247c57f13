//===- ReferenceVarlenTest.cpp - the varlen spec and f64 reference --------===//
//
// The varlen reference against attn.sdpa's reference on the padded batch
// (equal query lengths, key lengths given as key_lengths, which hides the
// padding and puts the bottom-right diagonal at each sequence's own length),
// and the varlen spec's parsing, shapes and refusals.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/ReferenceVarlen.h"
#include "attn/Spec/SdpaSpec.h"

#include "ErrorHelpers.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir::attn::exec;
using namespace attn_test;

namespace {

/// Sequences of `lq` queries and `lks[s]` keys each, packed, against the
/// padded [n, h, lq|maxLk, d] batch with key lengths `lks`.
void checkAgainstPadded(Causal causal, SdpaProblem::Alibi alibi,
                        std::optional<std::pair<int64_t, int64_t>> window) {
  const int64_t lq = 5, hq = 4, hkv = 2, d = 8, dv = 6;
  const std::vector<int64_t> lks = {7, 0, 3, 12};
  const int64_t n = static_cast<int64_t>(lks.size()), maxLk = 12;
  SdpaProblem padded;
  padded.b = n;
  padded.hq = hq;
  padded.hkv = hkv;
  padded.lq = lq;
  padded.lk = maxLk;
  padded.d = d;
  padded.dv = dv;
  padded.scale = 0.3;
  padded.causal = causal;
  padded.window = window;
  padded.softcap = 2.5;
  padded.lse = true;
  padded.keyLengths = true;
  padded.keyLengthValues = lks;
  padded.alibi = alibi;
  for (int64_t i = 0; i < (alibi == SdpaProblem::Alibi::Heads ? hq : n * hq);
       ++i)
    padded.alibiSlopeValues.push_back(0.05 * (i + 1));

  HostTensor q = HostTensor::zeros(DType::F32, {n, hq, lq, d});
  HostTensor k = HostTensor::zeros(DType::F32, {n, hkv, maxLk, d});
  HostTensor v = HostTensor::zeros(DType::F32, {n, hkv, maxLk, dv});
  fillRandomNormal(q, 1);
  fillRandomNormal(k, 2);
  fillRandomNormal(v, 3);
  std::vector<double> padOut, padLse;
  referenceSdpa(padded, q, k, v, nullptr, padOut, &padLse);

  SdpaProblem varlen = padded;
  varlen.keyLengths = false;
  varlen.keyLengthValues.clear();
  varlen.varlen = true;
  varlen.cuSeqlensQ = cumulativeOffsets(std::vector<int64_t>(n, lq));
  varlen.cuSeqlensK = cumulativeOffsets(lks);
  int64_t totalK = varlen.cuSeqlensK.back();
  std::vector<HostTensor> in = {
      HostTensor::zeros(DType::F32, {n * lq, hq, d}),
      HostTensor::zeros(DType::F32, {totalK, hkv, d}),
      HostTensor::zeros(DType::F32, {totalK, hkv, dv})};
  for (int64_t s = 0; s < n; ++s)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t e = 0; e < d; ++e)
          in[0].setFromDouble(((s * lq + i) * hq + h) * d + e,
                              q.getAsDouble(((s * hq + h) * lq + i) * d + e));
  for (int64_t s = 0; s < n; ++s)
    for (int64_t h = 0; h < hkv; ++h)
      for (int64_t j = 0; j < lks[s]; ++j) {
        int64_t row = varlen.cuSeqlensK[s] + j;
        for (int64_t e = 0; e < d; ++e)
          in[1].setFromDouble(
              (row * hkv + h) * d + e,
              k.getAsDouble(((s * hkv + h) * maxLk + j) * d + e));
        for (int64_t e = 0; e < dv; ++e)
          in[2].setFromDouble(
              (row * hkv + h) * dv + e,
              v.getAsDouble(((s * hkv + h) * maxLk + j) * dv + e));
      }
  std::vector<double> out, lse;
  referenceVarlen(varlen, in, out, &lse);
  ASSERT_EQ(out.size(), padOut.size());
  for (int64_t s = 0; s < n; ++s)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        for (int64_t e = 0; e < dv; ++e)
          EXPECT_NEAR(out[((s * lq + i) * hq + h) * dv + e],
                      padOut[((s * hq + h) * lq + i) * dv + e], 1e-12);
        double want = padLse[(s * hq + h) * lq + i];
        double got = lse[h * n * lq + s * lq + i];
        if (std::isinf(want))
          EXPECT_EQ(got, want);
        else
          EXPECT_NEAR(got, want, 1e-12);
      }
  EXPECT_EQ(varlenFlops(varlen), padded.flops());

  // Its conditioning is small and finite, and moves with the score noise.
  Sensitivity sens = measureVarlenSensitivity(varlen, in, out, &lse, 0);
  EXPECT_GT(sens.outRelL2, 0);
  EXPECT_LT(sens.outRelL2, 1e-5);
  EXPECT_GT(sens.lseMaxAbs, 0);
  EXPECT_LT(sens.lseMaxAbs, 1e-5);

  // It perturbs against the reference it is given (computed once, by the
  // caller), not one of its own: a reference off by a factor of 2 is off by
  // about half of itself.
  std::vector<double> doubled = out;
  for (double &x : doubled)
    x *= 2;
  Sensitivity off = measureVarlenSensitivity(varlen, in, doubled, &lse, 0);
  EXPECT_GT(off.outRelL2, 0.4);
  EXPECT_LT(off.outRelL2, 0.6);
}

TEST(ReferenceVarlenTest, MatchesPaddedSdpaWithKeyLengths) {
  checkAgainstPadded(Causal::None, SdpaProblem::Alibi::None, std::nullopt);
  checkAgainstPadded(Causal::BottomRight, SdpaProblem::Alibi::BatchHeads,
                     std::nullopt);
  checkAgainstPadded(Causal::TopLeft, SdpaProblem::Alibi::Heads,
                     std::pair<int64_t, int64_t>{3, 1});
}

TEST(ReferenceVarlenTest, RowsOfNoSequenceAreEmpty) {
  SdpaProblem p;
  p.hq = p.hkv = 1;
  p.d = p.dv = 2;
  p.scale = 1;
  p.lse = true;
  p.varlen = true;
  p.cuSeqlensQ = {0, 2};
  p.cuSeqlensK = {0, 1};
  std::vector<HostTensor> in = {HostTensor::zeros(DType::F32, {3, 1, 2}),
                                HostTensor::zeros(DType::F32, {1, 1, 2}),
                                HostTensor::zeros(DType::F32, {1, 1, 2})};
  in[2].setFromDouble(0, 4);
  in[2].setFromDouble(1, -1);
  std::vector<double> out, lse;
  referenceVarlen(p, in, out, &lse);
  EXPECT_EQ(out, (std::vector<double>{4, -1, 4, -1, 0, 0}));
  EXPECT_EQ(lse[0], 0);
  EXPECT_EQ(lse[2], -std::numeric_limits<double>::infinity());
}

// The FLOP count of a spec at the size limits: hq ~ 2^32 with ALiBi slopes
// per sequence and head. It once built hq slopes per sequence to count
// (4 GiB for this one: the parser fuzzer's out-of-memory); it is the sum of
// the sequences' own counts, with no allocation that grows with hq.
TEST(ReferenceVarlenTest, FlopsAtTheSizeLimitAllocateNoSlopes) {
  SdpaProblem p;
  p.hq = 444498096;
  p.hkv = 2;
  p.d = 64;
  p.dv = 32;
  p.varlen = true;
  p.alibi = SdpaProblem::Alibi::BatchHeads;
  p.cuSeqlensQ = {0, 5, 5, 8};
  p.cuSeqlensK = {0, 5, 9, 10};
  // Sequences of 5 x 5, 0 x 4 (no pair) and 3 x 1 query x key rows.
  EXPECT_EQ(varlenFlops(p), 2 * p.hq * (p.d + p.dv) * (5 * 5 + 3 * 1));
  // The same with a window: each sequence's band, as attn.sdpa counts it.
  p.window = std::make_pair<int64_t, int64_t>(1, 0);
  SdpaProblem one = p;
  one.varlen = false;
  one.alibi = SdpaProblem::Alibi::None;
  one.b = 1;
  one.lq = one.lk = 5;
  int64_t first = one.flops();
  one.lq = 3;
  one.lk = 1;
  EXPECT_EQ(varlenFlops(p), first + one.flops());
}

TEST(ReferenceVarlenTest, OffsetsAreChecked) {
  SdpaProblem p;
  p.varlen = true;
  std::vector<HostTensor> in = {HostTensor::zeros(DType::F32, {4, 1, 2}),
                                HostTensor::zeros(DType::F32, {3, 1, 2}),
                                HostTensor::zeros(DType::F32, {3, 1, 2}),
                                HostTensor::zeros(DType::I32, {3}),
                                HostTensor::zeros(DType::I32, {3})};
  for (int i = 0; i < 3; ++i)
    in[4].setFromDouble(i, i);
  in[3].setFromDouble(1, 3);
  in[3].setFromDouble(2, 2);
  EXPECT_EQ(errorOf(setVarlenValues(p, in)),
            "cu_seqlens_q[2] = 2: expected offsets from 0, non-decreasing, at "
            "most the 4 packed rows");
  in[3].setFromDouble(2, 4);
  llvm::Error ok = setVarlenValues(p, in);
  EXPECT_FALSE(static_cast<bool>(ok));
  llvm::consumeError(std::move(ok));
  EXPECT_EQ(p.cuSeqlensQ, (std::vector<int64_t>{0, 3, 4}));
}

TEST(ReferenceVarlenTest, SpecShapesAndSpelling) {
  llvm::Expected<SdpaSpec> s = parseSdpaSpec(
      "hq=4,hkv=2,d=16,dv=8,seqlens_q=5/0/3,seqlens_k=2/4/6,alibi=bh,lse=1");
  ASSERT_TRUE(static_cast<bool>(s)) << llvm::toString(s.takeError());
  EXPECT_TRUE(s->isVarlen());
  EXPECT_EQ(s->b, 3);
  EXPECT_EQ(s->lq, 5);
  EXPECT_EQ(s->lk, 6);
  std::vector<TensorSpec> args = s->argSpecs();
  ASSERT_EQ(args.size(), 6u);
  EXPECT_EQ(args[0].shape, (std::vector<int64_t>{8, 4, 16}));
  EXPECT_EQ(args[1].shape, (std::vector<int64_t>{12, 2, 16}));
  EXPECT_EQ(args[2].shape, (std::vector<int64_t>{12, 2, 8}));
  EXPECT_EQ(args[3].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(args[3].dtype, DType::I32);
  EXPECT_EQ(args[5].shape, (std::vector<int64_t>{3, 4}));
  std::vector<TensorSpec> results = s->resultSpecs();
  EXPECT_EQ(results[0].shape, (std::vector<int64_t>{8, 4, 8}));
  EXPECT_EQ(results[1].shape, (std::vector<int64_t>{4, 8}));
  std::string canonical = s->toString();
  EXPECT_EQ(canonical, "hq=4,hkv=2,d=16,dv=8,seqlens_q=5/0/3,seqlens_k=2/4/6,"
                       "dtype=f32,causal=none,alibi=bh,lse=1");
  llvm::Expected<SdpaSpec> again = parseSdpaSpec(canonical);
  ASSERT_TRUE(static_cast<bool>(again));
  EXPECT_EQ(again->toString(), canonical);
  SdpaProblem p = s->toProblem();
  EXPECT_TRUE(p.varlen);
  EXPECT_EQ(p.cuSeqlensQ, (std::vector<int64_t>{0, 5, 5, 8}));
  EXPECT_EQ(p.cuSeqlensK, (std::vector<int64_t>{0, 2, 6, 12}));
  // seqlens_k defaults to seqlens_q.
  llvm::Expected<SdpaSpec> same = parseSdpaSpec("hq=1,d=4,seqlens_q=3/1");
  ASSERT_TRUE(static_cast<bool>(same));
  EXPECT_EQ(same->seqlensK, (std::vector<int64_t>{3, 1}));
}

TEST(ReferenceVarlenTest, SpecRefusals) {
  auto error = [](const char *text) { return errorOf(parseSdpaSpec(text)); };
  EXPECT_EQ(error("hq=1,d=4,seqlens_q=3/x"),
            "seqlens_q=3/x: malformed length 'x' (expected lengths >= 0 "
            "separated by '/', e.g. 5/17/0)");
  EXPECT_EQ(error("hq=1,d=4,seqlens_q=3/-1"),
            "seqlens_q=3/-1: malformed length '-1' (expected lengths >= 0 "
            "separated by '/', e.g. 5/17/0)");
  EXPECT_EQ(error("hq=1,d=4,seqlens_q=3/1,seqlens_k=3"),
            "seqlens_k=3: expected 2 lengths, one per sequence of "
            "seqlens_q=3/1");
  EXPECT_EQ(error("hq=1,lq=4,d=4,seqlens_k=3"),
            "seqlens_k given without seqlens_q (the varlen form needs both "
            "query and key lengths; seqlens_k defaults to seqlens_q)");
  EXPECT_EQ(error("hq=1,d=4,lq=3,seqlens_q=3"),
            "lq goes with attn.sdpa: with seqlens_q (attn.sdpa_varlen) the "
            "sequence count and lengths come from seqlens_q and seqlens_k");
  EXPECT_EQ(error("hq=1,d=4,seqlens_q=3,mask=bool"),
            "mask goes with attn.sdpa: attn.sdpa_varlen takes no mask (a "
            "packed mask would be total_q x total_k)");
  EXPECT_EQ(error("hq=1,d=4,seqlens_q=3,key_lengths=1"),
            "key_lengths goes with attn.sdpa: with seqlens_k "
            "(attn.sdpa_varlen) every sequence already has its own key "
            "count");
}

} // namespace
