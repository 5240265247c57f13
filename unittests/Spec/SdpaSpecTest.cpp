//===- SdpaSpecTest.cpp - Tests for --sdpa spec strings ---------*- C++ -*-===//

#include "attn/Spec/SdpaSpec.h"

#include "ErrorHelpers.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace mlir::attn::exec;
using namespace attn_test;

namespace {

using Specs = std::vector<TensorSpec>;

SdpaSpec parseOk(const std::string &text) {
  llvm::Expected<SdpaSpec> spec = parseSdpaSpec(text);
  if (!spec) {
    ADD_FAILURE() << text << ": " << llvm::toString(spec.takeError());
    return SdpaSpec();
  }
  return *spec;
}

/// Parses `text`, expects a rejection and returns the message.
std::string parseError(const std::string &text) {
  std::string error = errorOf(parseSdpaSpec(text));
  EXPECT_NE(error, "") << text;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

/// The line of `text` that holds "attn.sdpa", without its indentation.
std::string sdpaLine(const std::string &text) {
  size_t at = text.find("attn.sdpa");
  if (at == std::string::npos)
    return "";
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  size_t end = text.find('\n', at);
  std::string line = text.substr(begin, end - begin);
  return line.substr(line.find_first_not_of(' '));
}

TEST(SdpaSpecTest, DefaultsAreFilled) {
  SdpaSpec s = parseOk("hq=8,lq=128,d=64");
  EXPECT_EQ(s.b, 1);
  EXPECT_EQ(s.hq, 8);
  EXPECT_EQ(s.hkv, 8);
  EXPECT_EQ(s.lq, 128);
  EXPECT_EQ(s.lk, 128);
  EXPECT_EQ(s.d, 64);
  EXPECT_EQ(s.dv, 64);
  EXPECT_EQ(s.dtype, DType::F32);
  EXPECT_EQ(s.causal, Causal::None);
  EXPECT_EQ(s.mask, MaskKind::None);
  EXPECT_TRUE(s.maskShape.empty());
  EXPECT_FALSE(s.scale.has_value());
  EXPECT_FALSE(s.lse);
  EXPECT_FALSE(s.dynamic);
  EXPECT_EQ(s.toString(), "b=1,hq=8,hkv=8,lq=128,lk=128,d=64,dv=64,dtype=f32,"
                          "causal=none,mask=none,lse=0");
  EXPECT_EQ(s.effectiveScale(),
            static_cast<double>(static_cast<float>(1.0 / std::sqrt(64.0))));

  // A mask without mask_shape covers the whole [b, hq, lq, lk].
  SdpaSpec m = parseOk("b=2,hq=4,hkv=2,lq=16,lk=32,d=8,mask=bool");
  EXPECT_EQ(m.maskShape, (std::vector<int64_t>{2, 4, 16, 32}));
}

TEST(SdpaSpecTest, ParsesEveryKey) {
  SdpaSpec s = parseOk(" b = 2 ,hq=8,hkv=2,lq=128,lk=256,d=64,dv=32,dtype=bf16,"
                       "causal=top_left,mask=float,mask_shape=1x8x1x256,"
                       "scale=0.3,lse=1,dynamic=1");
  EXPECT_EQ(s.b, 2);
  EXPECT_EQ(s.hkv, 2);
  EXPECT_EQ(s.lk, 256);
  EXPECT_EQ(s.dv, 32);
  EXPECT_EQ(s.dtype, DType::BF16);
  EXPECT_EQ(s.causal, Causal::TopLeft);
  EXPECT_EQ(s.mask, MaskKind::Float);
  EXPECT_EQ(s.maskShape, (std::vector<int64_t>{1, 8, 1, 256}));
  ASSERT_TRUE(s.scale.has_value());
  EXPECT_EQ(*s.scale, 0.3);
  // The attribute is an f32, so the effective scale is 0.3 rounded to float.
  EXPECT_EQ(s.effectiveScale(), static_cast<double>(0.3f));
  EXPECT_NE(s.effectiveScale(), 0.3);
  EXPECT_TRUE(s.lse);
  EXPECT_TRUE(s.dynamic);

  EXPECT_EQ(parseOk("hq=1,lq=1,d=1,causal=bottom_right").causal,
            Causal::BottomRight);
  EXPECT_EQ(parseOk("hq=1,lq=1,d=1,dtype=f16").dtype, DType::F16);
  EXPECT_EQ(parseOk("hq=1,lq=1,d=1,mask=none").mask, MaskKind::None);
  EXPECT_FALSE(parseOk("hq=1,lq=1,d=1,lse=0,dynamic=0").lse);
  EXPECT_EQ(*parseOk("hq=1,lq=1,d=1,scale=-2.5e-1").scale, -0.25);
}

TEST(SdpaSpecTest, Rejections) {
  struct Case {
    const char *text;
    const char *mustContain;
  };
  const Case cases[] = {
      // Structure.
      {"hq=8,lq=4,d=4,foo=1", "foo"},
      {"hq=8,lq=4,d=4,hq=8", "hq"},
      {"hq=8,lq=4,d=4,HQ=8", "HQ"},
      {"hq=8,,lq=4,d=4", "empty item 2"},
      {"hq=8,lq=4,d=4,", "empty item 4"},
      {",hq=8,lq=4,d=4", "empty item 1"},
      {"hq=8,lq=4,d=4,lse", "lse"},
      {"=3,hq=8,lq=4,d=4", "''"},
      // Required keys.
      {"lq=4,d=4", "hq"},
      {"hq=8,d=4", "lq"},
      {"hq=8,lq=4", "'d'"},
      {"", "hq"},
      // Malformed numbers.
      {"hq=8x,lq=4,d=4", "hq=8x"},
      {"hq=8,lq=,d=4", "lq="},
      {"hq=8,lq=4,d=1e3", "d=1e3"},
      {"hq=8,lq=4,d=4.0", "d=4.0"},
      {"hq=8,lq=4,d=99999999999999999999", "d=99999999999999999999"},
      {"hq=8,lq=4,d=+4", "d=+4"},
      {"hq=8,lq=4,d=4,scale=abc", "scale=abc"},
      {"hq=8,lq=4,d=4,scale=", "scale="},
      {"hq=8,lq=4,d=4,scale=0.5f", "scale=0.5f"},
      // Non-positive sizes.
      {"hq=0,lq=4,d=4", "hq=0"},
      {"hq=8,lq=4,d=4,b=-1", "b=-1"},
      {"hq=8,lq=4,d=4,hkv=0", "hkv=0"},
      {"hq=8,lq=4,d=4,lk=0", "lk=0"},
      {"hq=8,lq=4,d=4,dv=-3", "dv=-3"},
      // Grouped-query attention.
      {"hq=8,hkv=3,lq=4,d=4", "hkv=3"},
      {"hq=2,hkv=4,lq=4,d=4", "hkv=4"},
      // Enums and flags.
      {"hq=8,lq=4,d=4,dtype=f64", "dtype=f64"},
      {"hq=8,lq=4,d=4,dtype=i1", "dtype=i1"},
      {"hq=8,lq=4,d=4,dtype=F32", "dtype=F32"},
      {"hq=8,lq=4,d=4,causal=yes", "causal=yes"},
      {"hq=8,lq=4,d=4,mask=int", "mask=int"},
      {"hq=8,lq=4,d=4,lse=2", "lse=2"},
      {"hq=8,lq=4,d=4,dynamic=true", "dynamic=true"},
      // Mask shapes.
      {"hq=8,lq=4,d=4,mask_shape=1x1x4x4", "mask_shape=1x1x4x4"},
      {"hq=8,lq=4,d=4,mask=none,mask_shape=1x1x4x4", "mask_shape"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x4x4", "mask_shape=1x4x4"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x1x1x4x4", "mask_shape=1x1x1x4x4"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x2x4x4", "mask_shape=1x2x4x4"},
      {"hq=8,lq=4,lk=8,d=4,mask=float,mask_shape=1x1x4x4", "mask_shape"},
      {"b=2,hq=8,lq=4,d=4,mask=bool,mask_shape=3x1x4x4", "mask_shape"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x1xax4", "mask_shape=1x1xax4"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x1x4x", "mask_shape=1x1x4x"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=1x0x4x4", "mask_shape=1x0x4x4"},
      {"hq=8,lq=4,d=4,mask=bool,mask_shape=", "mask_shape="},
      // Scales.
      {"hq=8,lq=4,d=4,scale=0", "scale=0"},
      {"hq=8,lq=4,d=4,scale=-0.0", "scale"},
      {"hq=8,lq=4,d=4,scale=nan", "scale=nan"},
      {"hq=8,lq=4,d=4,scale=inf", "scale=inf"},
      {"hq=8,lq=4,d=4,scale=1e400", "scale"},
      {"hq=8,lq=4,d=4,scale=1e39", "scale=1e+39"},
      {"hq=8,lq=4,d=4,scale=1e-50", "scale=1e-50"},
      // Absurd sizes.
      {"hq=8,lq=1048576,d=1048576", "lq=1048576"},
      {"b=4294967296,hq=4294967296,lq=4294967296,d=4294967296", "b="},
      {"hq=1,lq=1,d=1,lk=4611686018427387904", "lk="},
      {"hq=1,lq=2097152,d=1,mask=float", "mask_shape=1x1x2097152x2097152"},
      {"hq=1,lq=1000000000,lk=1000000000,d=1000", "FLOP"},
  };
  for (const Case &c : cases) {
    std::string error = parseError(c.text);
    EXPECT_NE(error.find(c.mustContain), std::string::npos)
        << "spec '" << c.text << "' gave '" << error << "', expected it to "
        << "mention '" << c.mustContain << "'";
  }
}

TEST(SdpaSpecTest, MessagesAreExact) {
  // attn-run prints these after "--sdpa: "; test/Tools/attn-run matches them.
  EXPECT_EQ(parseError("hq=2,lq=8,d=16,foo=1"),
            "unknown key 'foo' in 'foo=1' (expected b, hq, hkv, lq, lk, d, dv, "
            "dtype, causal, mask, mask_shape, scale, lse, dynamic, window, "
            "softcap, key_lengths, alibi, seqlens_q, seqlens_k, page_size, "
            "kv_lens or layout)");
  EXPECT_EQ(parseError("hq=2,lq=8,d=16,dtype=f64"),
            "dtype=f64: expected f32, f16 or bf16");
  EXPECT_EQ(parseError("hq=6,hkv=4,lq=8,d=16"),
            "hkv=4 does not divide hq=6 (grouped-query attention needs hq % "
            "hkv == 0)");
  EXPECT_EQ(parseError("hq=2,lq=8"),
            "missing required key 'd' (hq, lq and d have no default)");
  EXPECT_EQ(parseError("hq=2,lq=8,d=16,mask=bool,mask_shape=1x1x8x5"),
            "mask_shape=1x1x8x5: dim 3 (5) must be 1 or lk (8)");
  EXPECT_EQ(parseError("b=2,hq=2,lq=8,d=16,mask=float,mask_shape=2x2x8"),
            "mask_shape=2x2x8: expected 4 dims, got 3");
  EXPECT_EQ(parseError("hq=2,lq=8,d=16,mask_shape=1x1x8x8"),
            "mask_shape=1x1x8x8 given without mask=bool or mask=float");
  EXPECT_EQ(parseError("hq=8,,lq=4,d=4"),
            "empty item 2 in 'hq=8,,lq=4,d=4' (stray comma?)");
  EXPECT_EQ(parseError("hq=8x,lq=4,d=4"), "hq=8x: malformed integer '8x'");
}

TEST(SdpaSpecTest, LargeButSaneSizesAreAccepted) {
  // 2^40 elements exactly is still allowed; the decode and long-sequence
  // benchmark shapes must pass.
  parseOk("hq=1,lq=1048576,d=1048576");
  parseOk("hq=8,lq=32768,d=128,causal=bottom_right");
  parseOk("hq=32,hkv=8,lq=1,lk=32768,d=128");
}

TEST(SdpaSpecTest, ToStringRoundTrips) {
  const char *texts[] = {
      "hq=8,lq=128,d=64",
      "b=2,hq=8,hkv=2,lq=128,lk=256,d=64,dv=32,dtype=f16,causal=bottom_right,"
      "mask=bool,mask_shape=1x1x128x256,scale=0.125,lse=1",
      "hq=4,lq=3,lk=5,d=7,dtype=bf16,causal=top_left,mask=float,scale=0.1,"
      "dynamic=1",
      "hq=2,lq=9,d=3,scale=-1.0000000000000002",
      "lse=1,d=16,lq=1,hq=32,hkv=8,lk=4096,mask=bool,mask_shape=1x32x1x1",
  };
  for (const char *text : texts) {
    SdpaSpec a = parseOk(text);
    std::string canonical = a.toString();
    SdpaSpec b = parseOk(canonical);
    EXPECT_EQ(b.toString(), canonical) << text;
    EXPECT_EQ(b.b, a.b);
    EXPECT_EQ(b.hq, a.hq);
    EXPECT_EQ(b.hkv, a.hkv);
    EXPECT_EQ(b.lq, a.lq);
    EXPECT_EQ(b.lk, a.lk);
    EXPECT_EQ(b.d, a.d);
    EXPECT_EQ(b.dv, a.dv);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.causal, a.causal);
    EXPECT_EQ(b.mask, a.mask);
    EXPECT_EQ(b.maskShape, a.maskShape);
    EXPECT_EQ(b.scale, a.scale) << text;
    EXPECT_EQ(b.lse, a.lse);
    EXPECT_EQ(b.dynamic, a.dynamic);
  }
  EXPECT_EQ(parseOk(texts[1]).toString(),
            "b=2,hq=8,hkv=2,lq=128,lk=256,d=64,dv=32,dtype=f16,"
            "causal=bottom_right,mask=bool,mask_shape=1x1x128x256,"
            "scale=0.125,lse=1");
  EXPECT_EQ(parseOk("hq=2,lq=9,d=3,scale=0.1").toString(),
            "b=1,hq=2,hkv=2,lq=9,lk=9,d=3,dv=3,dtype=f32,causal=none,"
            "mask=none,scale=0.1,lse=0");
}

TEST(SdpaSpecTest, ShapesAndTypesForGqaMaskLse) {
  SdpaSpec s = parseOk("b=2,hq=8,hkv=2,lq=128,lk=256,d=64,dv=32,dtype=f16,"
                       "mask=bool,mask_shape=1x1x128x256,lse=1");
  EXPECT_EQ(s.argSpecs(), (Specs{{{2, 8, 128, 64}, DType::F16},
                                 {{2, 2, 256, 64}, DType::F16},
                                 {{2, 2, 256, 32}, DType::F16},
                                 {{1, 1, 128, 256}, DType::Bool}}));
  EXPECT_EQ(s.resultSpecs(),
            (Specs{{{2, 8, 128, 32}, DType::F16}, {{2, 8, 128}, DType::F32}}));

  SdpaSpec f = parseOk("hq=4,lq=8,d=16,dtype=bf16,mask=float");
  ASSERT_EQ(f.argSpecs().size(), 4u);
  EXPECT_EQ(f.argSpecs()[3], (TensorSpec{{1, 4, 8, 8}, DType::BF16}));
  EXPECT_EQ(f.resultSpecs(), (Specs{{{1, 4, 8, 16}, DType::BF16}}));

  SdpaSpec plain = parseOk("hq=4,lq=8,d=16");
  EXPECT_EQ(plain.argSpecs().size(), 3u);
  EXPECT_EQ(plain.resultSpecs().size(), 1u);

  // Dynamic only changes the types in the module, not the concrete sizes.
  SdpaSpec dyn = parseOk("b=3,hq=4,lq=8,d=16,dynamic=1");
  EXPECT_EQ(dyn.argSpecs()[0], (TensorSpec{{3, 4, 8, 16}, DType::F32}));

  // A hand-built spec gets its defaults filled here too.
  SdpaSpec hand;
  hand.hq = 2;
  hand.lq = 5;
  hand.d = 4;
  hand.mask = MaskKind::Bool;
  EXPECT_EQ(hand.argSpecs(), (Specs{{{1, 2, 5, 4}, DType::F32},
                                    {{1, 2, 5, 4}, DType::F32},
                                    {{1, 2, 5, 4}, DType::F32},
                                    {{1, 2, 5, 5}, DType::Bool}}));
}

TEST(SdpaSpecTest, ToProblem) {
  SdpaSpec s = parseOk("b=2,hq=8,hkv=2,lq=128,lk=256,d=64,dv=32,"
                       "causal=bottom_right,mask=bool,mask_shape=1x1x128x256,"
                       "scale=0.125,lse=1");
  SdpaProblem p = s.toProblem();
  EXPECT_EQ(p.b, 2);
  EXPECT_EQ(p.hq, 8);
  EXPECT_EQ(p.hkv, 2);
  EXPECT_EQ(p.lq, 128);
  EXPECT_EQ(p.lk, 256);
  EXPECT_EQ(p.d, 64);
  EXPECT_EQ(p.dv, 32);
  EXPECT_EQ(p.scale, 0.125);
  EXPECT_EQ(p.causal, Causal::BottomRight);
  EXPECT_EQ(p.mask, MaskKind::Bool);
  EXPECT_EQ(p.maskShape, (std::vector<int64_t>{1, 1, 128, 256}));
  EXPECT_TRUE(p.lse);
  EXPECT_EQ(messageOf(p.validate()), "");

  // A hand-built spec with -1 dims takes the defaults.
  SdpaSpec hand;
  hand.hq = 4;
  hand.lq = 10;
  hand.d = 100;
  EXPECT_EQ(messageOf(hand.validate()), "");
  SdpaProblem q = hand.toProblem();
  EXPECT_EQ(q.hkv, 4);
  EXPECT_EQ(q.lk, 10);
  EXPECT_EQ(q.dv, 100);
  EXPECT_EQ(q.scale, static_cast<double>(0.1f));
  hand.lq = -1;
  EXPECT_EQ(messageOf(hand.validate()), "lq=-1: expected a positive size");
}

} // namespace
