//===- EngineTest.cpp - the execution engine: problems, runs, reports -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Engine.h"
#include "attn/Execution/HugePages.h"
#include "attn/Execution/Peak.h"
#include "attn/Execution/Report.h"
#include "attn/Spec/Npy.h"
#include "attn/Spec/Problem.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::exec;

namespace {

/// One context for the whole test binary: the JIT is slow to set up.
MLIRContext &context() {
  static std::unique_ptr<MLIRContext> ctx = createEngineContext();
  return *ctx;
}

SdpaSpec specOf(llvm::StringRef text) {
  llvm::Expected<SdpaSpec> spec = parseSdpaSpec(text);
  if (!spec) {
    ADD_FAILURE() << toString(spec.takeError());
    return SdpaSpec();
  }
  return *spec;
}

template <typename T> std::string errorOf(llvm::Expected<T> &e) {
  return e ? std::string() : toString(e.takeError());
}

//===----------------------------------------------------------------------===//
// Problem.h
//===----------------------------------------------------------------------===//

TEST(ProblemTest, DimSizes) {
  llvm::Expected<DimSizes> dims = parseDimSizes("b=2, lq=77,lk=300");
  ASSERT_TRUE(bool(dims)) << errorOf(dims);
  EXPECT_EQ((DimSizes{{"b", 2}, {"lq", 77}, {"lk", 300}}), *dims);
  for (const char *bad : {"d=4", "b=0", "lq=x", "lk", "b=-1"}) {
    llvm::Expected<DimSizes> e = parseDimSizes(bad);
    EXPECT_EQ("--dims expects b=N,lq=N,lk=N with N > 0, got '" +
                  std::string(bad) + "'",
              errorOf(e));
  }
}

TEST(ProblemTest, SpecModuleVerifiesAndAnalyzesBackToTheSpec) {
  for (const char *text :
       {"b=2,hq=8,hkv=2,lq=33,lk=70,d=64,dv=32,causal=bottom_right,lse=1",
        "hq=4,lq=16,d=32,dtype=bf16,mask=bool,mask_shape=1x4x16x1,scale=0.5",
        "b=3,hq=2,lq=8,lk=5,d=16,dtype=f16,mask=float,causal=top_left"}) {
    SCOPED_TRACE(text);
    SdpaSpec spec = specOf(text);
    OwningOpRef<ModuleOp> module = buildSdpaModule(context(), spec, "f");
    ASSERT_TRUE(succeeded(verify(*module)));
    llvm::Expected<func::FuncOp> entry = findEntry(*module, "", "spec");
    ASSERT_TRUE(bool(entry)) << errorOf(entry);
    EXPECT_EQ("f", entry->getSymName());
    llvm::Expected<EntrySignature> analyzed = analyzeEntry(*entry, {});
    ASSERT_TRUE(bool(analyzed)) << errorOf(analyzed);
    EntrySignature expected = signatureOf(spec);
    EXPECT_EQ(expected.args, analyzed->args);
    EXPECT_EQ(expected.results, analyzed->results);
    ASSERT_TRUE(analyzed->problem && expected.problem);
    const SdpaProblem &a = *analyzed->problem, &b = *expected.problem;
    EXPECT_EQ(std::tie(a.b, a.hq, a.hkv, a.lq, a.lk, a.d, a.dv, a.lse),
              std::tie(b.b, b.hq, b.hkv, b.lq, b.lk, b.d, b.dv, b.lse));
    EXPECT_EQ(a.causal, b.causal);
    EXPECT_EQ(a.mask, b.mask);
    EXPECT_EQ(a.maskShape, b.maskShape);
    EXPECT_FLOAT_EQ(a.scale, b.scale);
  }
}

TEST(ProblemTest, DynamicSpecNeedsDims) {
  SdpaSpec spec = specOf("b=2,hq=2,lq=9,lk=7,d=16,mask=float,"
                         "mask_shape=2x1x1x7,dynamic=1");
  OwningOpRef<ModuleOp> module = buildSdpaModule(context(), spec);
  ASSERT_TRUE(succeeded(verify(*module)));
  auto entry = *module->getOps<func::FuncOp>().begin();
  auto q = cast<RankedTensorType>(entry.getArgumentTypes()[0]);
  EXPECT_TRUE(q.isDynamicDim(0) && !q.isDynamicDim(1) && q.isDynamicDim(2));
  auto mask = cast<RankedTensorType>(entry.getArgumentTypes()[3]);
  EXPECT_EQ(
      (SmallVector<int64_t>{ShapedType::kDynamic, 1, 1, ShapedType::kDynamic}),
      SmallVector<int64_t>(mask.getShape()));

  llvm::Expected<EntrySignature> none = analyzeEntry(entry, {});
  EXPECT_EQ("dim b is dynamic: give its size with --dims b=N", errorOf(none));
  llvm::Expected<EntrySignature> noLk =
      analyzeEntry(entry, {{"b", 2}, {"lq", 9}});
  EXPECT_EQ("dim lk is dynamic: give its size with --dims lk=N", errorOf(noLk));
  llvm::Expected<EntrySignature> sized =
      analyzeEntry(entry, {{"b", 2}, {"lq", 9}, {"lk", 7}});
  ASSERT_TRUE(bool(sized)) << errorOf(sized);
  EXPECT_EQ(signatureOf(spec).args, sized->args);
}

TEST(ProblemTest, EntriesThatAreNotOneSdpa) {
  const char *text = R"mlir(
    func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }
    func.func @two(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>)
        -> tensor<1x1x4x8xf32> {
      %o = attn.sdpa %q, %k, %k : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>,
          tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
      %p = attn.sdpa %o, %k, %k : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>,
          tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>
      return %p : tensor<1x1x4x8xf32>
    }
    func.func @dyn(%q: tensor<?x1x4x8xf32>) -> tensor<?x1x4x8xf32> {
      %o = attn.sdpa %q, %q, %q : tensor<?x1x4x8xf32>, tensor<?x1x4x8xf32>,
          tensor<?x1x4x8xf32> -> tensor<?x1x4x8xf32>
      return %o : tensor<?x1x4x8xf32>
    }
    func.func @f64(%x: tensor<4xf64>) -> tensor<4xf64> { return %x : tensor<4xf64> }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context());
  ASSERT_TRUE(module);

  llvm::Expected<func::FuncOp> first = findEntry(*module, "", "m.mlir");
  ASSERT_TRUE(bool(first));
  EXPECT_EQ("two", first->getSymName());
  llvm::Expected<func::FuncOp> missing = findEntry(*module, "nope", "m.mlir");
  EXPECT_EQ("no function @nope with a body", errorOf(missing));

  llvm::Expected<EntrySignature> two = analyzeEntry(*first, {});
  ASSERT_TRUE(bool(two)) << errorOf(two);
  EXPECT_FALSE(two->problem);
  EXPECT_EQ((std::vector<TensorSpec>{{{1, 1, 4, 8}, DType::F32},
                                     {{1, 1, 4, 8}, DType::F32}}),
            two->args);
  llvm::Expected<EntrySignature> twoDims = analyzeEntry(*first, {{"b", 1}});
  EXPECT_EQ("--dims needs an entry that is one attn.sdpa on its arguments",
            errorOf(twoDims));

  // @dyn passes q as key and value too: not "one sdpa on its arguments".
  auto dyn = module->lookupSymbol<func::FuncOp>("dyn");
  llvm::Expected<EntrySignature> dynSig = analyzeEntry(dyn, {});
  EXPECT_EQ("argument 0 of @dyn has dynamic dims that --dims cannot size "
            "(only an entry that is one attn.sdpa on its arguments can be "
            "sized)",
            errorOf(dynSig));
  auto f64 = module->lookupSymbol<func::FuncOp>("f64");
  llvm::Expected<EntrySignature> f64Sig = analyzeEntry(f64, {});
  EXPECT_EQ("@f64 must take and return ranked tensors of f32, f16, bf16 or i1",
            errorOf(f64Sig));

  OwningOpRef<ModuleOp> empty = parseSourceString<ModuleOp>(
      "func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : "
      "tensor<4xf32> }",
      &context());
  llvm::Expected<func::FuncOp> none = findEntry(*empty, "", "g.mlir");
  EXPECT_EQ("no function in g.mlir calls attn.sdpa", errorOf(none));
}

TEST(ProblemTest, StaticDimsContradicted) {
  SdpaSpec spec = specOf("hq=2,lq=8,d=16");
  OwningOpRef<ModuleOp> module = buildSdpaModule(context(), spec);
  auto entry = *module->getOps<func::FuncOp>().begin();
  llvm::Expected<EntrySignature> sig = analyzeEntry(entry, {{"lq", 9}});
  EXPECT_EQ("--dims lq=9 contradicts the static size 8", errorOf(sig));
}

//===----------------------------------------------------------------------===//
// Engine.h and Report.h
//===----------------------------------------------------------------------===//

RunOptions optionsFor(llvm::StringRef spec) {
  RunOptions options;
  options.spec = specOf(spec);
  options.threads = 1;
  return options;
}

TEST(EngineTest, SmallSpecPassesEveryCheck) {
  RunOptions options = optionsFor("hq=2,hkv=1,lq=40,lk=33,d=16,causal=top_left,"
                                  "lse=1");
  options.pipelineOptions = "block-q=16 block-kv=16";
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  EXPECT_TRUE(report->pass);
  EXPECT_EQ("sdpa", report->entry);
  EXPECT_EQ(16, report->blockQ);
  std::vector<std::string> seen;
  for (const CheckRecord &c : report->checks) {
    seen.push_back(c.result + " " + c.oracle);
    EXPECT_TRUE(c.verdict.pass)
        << c.result << " " << c.oracle << ": " << c.verdict.rule;
    // f32 checks against an oracle carry the input's conditioning.
    if (!c.isNaNCheck()) {
      ASSERT_TRUE(c.sensRel.has_value());
      EXPECT_GT(*c.sensRel, 0);
      EXPECT_LT(*c.sensRel, 1e-6);
    }
  }
  EXPECT_EQ((std::vector<std::string>{"out f64 (naive)", "out f64", "out naive",
                                      "lse f64 (naive)", "lse f64", "lse naive",
                                      "out no-NaN", "out no-NaN naive",
                                      "lse no-NaN", "lse no-NaN naive"}),
            seen);

  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, *report);
  EXPECT_NE(std::string::npos,
            text.find("attn-run: @sdpa [b=1,hq=2,hkv=1,lq=40,lk=33"));
  EXPECT_NE(std::string::npos, text.find("inputs: f32[1x2x40x16]"));
  EXPECT_NE(std::string::npos, text.find("sens_rel"));
  EXPECT_EQ("PASS\n", text.substr(text.size() - 5));

  llvm::json::Value json = reportToJson(*report);
  llvm::json::Object *root = json.getAsObject();
  ASSERT_TRUE(root);
  EXPECT_EQ(true, root->getBoolean("pass"));
  EXPECT_EQ(16, root->getInteger("block_q"));
  llvm::json::Array *checks = root->getArray("checks");
  ASSERT_TRUE(checks);
  ASSERT_EQ(report->checks.size(), checks->size());
  EXPECT_TRUE((*checks)[0].getAsObject()->getNumber("sens_rel"));
}

/// The issue's example: q and k scaled by 30 (logits in the thousands). Both
/// lowerings are as accurate as f32 allows there, which the fixed 1e-5 bound
/// alone fails; the sens term passes them.
TEST(EngineTest, IllConditionedInputsPassThroughSens) {
  SdpaSpec spec = specOf("b=1,hq=2,lq=64,lk=200,d=64");
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-engine", dir));
  EntrySignature signature = signatureOf(spec);
  for (auto [i, arg] : llvm::enumerate(signature.args)) {
    HostTensor t = HostTensor::zeros(arg);
    fillRandomNormal(t, 1000 + i);
    if (i < 2)
      for (int64_t e = 0; e < t.numel(); ++e)
        t.setFromDouble(e, 30 * t.getAsDouble(e));
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, "arg" + std::to_string(i) + ".npy");
    ASSERT_FALSE(bool(writeNpy(path.str(), t)));
  }
  RunOptions options = optionsFor("b=1,hq=2,lq=64,lk=200,d=64");
  options.inputsDir = dir.str().str();
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  bool someAboveFixedBound = false;
  for (const CheckRecord &c : report->checks) {
    EXPECT_TRUE(c.verdict.pass)
        << c.result << " " << c.oracle << ": " << c.verdict.rule;
    if (c.oracle == "f64" || c.oracle == "f64 (naive)") {
      ASSERT_TRUE(c.sensRel.has_value());
      EXPECT_GT(*c.sensRel, 1e-6);
      someAboveFixedBound |= c.stats.relL2 > 1e-5;
    }
  }
  EXPECT_TRUE(someAboveFixedBound)
      << "the example no longer needs the sens term: make it harsher";
  EXPECT_TRUE(report->pass);
  llvm::sys::fs::remove_directories(dir);
}

TEST(EngineTest, PagedRunsFusedWhereTheDecodeKernelTakesIt) {
  // A decode over a paged cache runs fused (the decode kernel reading the
  // pages in place), checked against the naive lowering and f64.
  llvm::Expected<RunReport> decode = runAttn(
      context(),
      optionsFor("hq=4,hkv=2,lq=1,d=32,page_size=3,kv_lens=10/0/1,lse=1"));
  ASSERT_TRUE(bool(decode)) << errorOf(decode);
  EXPECT_TRUE(decode->pass);
  std::vector<std::string> seen;
  for (const CheckRecord &c : decode->checks)
    if (!c.isNaNCheck())
      seen.push_back(c.result + " " + c.oracle);
  EXPECT_EQ(
      (std::vector<std::string>{"out f64 (naive)", "out f64", "out naive",
                                "lse f64 (naive)", "lse f64", "lse naive"}),
      seen);
  // Softcap keeps its blocks off the decode kernel: the naive lowering
  // alone, against f64; --bench is refused with the reason.
  RunOptions capped =
      optionsFor("hq=4,hkv=2,lq=1,d=32,page_size=3,kv_lens=10/0/1,softcap=5");
  llvm::Expected<RunReport> naive = runAttn(context(), capped);
  ASSERT_TRUE(bool(naive)) << errorOf(naive);
  seen.clear();
  for (const CheckRecord &c : naive->checks)
    if (!c.isNaNCheck())
      seen.push_back(c.result + " " + c.oracle);
  EXPECT_EQ((std::vector<std::string>{"out f64 (naive)"}), seen);
  capped.benchRuns = 2;
  llvm::Expected<RunReport> bench = runAttn(context(), capped);
  EXPECT_EQ("--bench: attn.sdpa_paged (page_size) has no fused lowering for "
            "this problem to time: a mask, softcap or ALiBi",
            errorOf(bench));
}

TEST(EngineTest, PipelineOptionsAreChecked) {
  // The pipeline's own passes reject values they cannot use.
  RunOptions options = optionsFor("hq=1,lq=8,d=16");
  options.pipelineOptions = "block-q=0";
  llvm::Expected<RunReport> report = runAttn(context(), options);
  EXPECT_EQ("fused lowering: lowering failed (see the diagnostics above)",
            errorOf(report));
  options.pipelineOptions = "block-kv=16 row-vectors=2";
  llvm::Expected<RunReport> good = runAttn(context(), options);
  ASSERT_TRUE(bool(good)) << errorOf(good);
  EXPECT_EQ(16, good->blockKV);
  EXPECT_EQ(64, good->blockQ); // the pipeline's default
  options.pipelineOptions = "";
  options.benchRuns = -1;
  llvm::Expected<RunReport> negative = runAttn(context(), options);
  EXPECT_EQ("--bench and --threads must not be negative", errorOf(negative));
}

TEST(EngineTest, BadInputIsAnError) {
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.pipelineOptions = "no-such-option=1";
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_NE(std::string::npos,
              errorOf(report).find("bad pipeline options 'no-such-option=1'"));
  }
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.inputFile = "x.mlir";
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_EQ("give exactly one of FILE.mlir and --sdpa SPEC", errorOf(report));
  }
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.dims = {{"b", 2}};
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_EQ("--dims goes with FILE.mlir; --sdpa sizes come from the spec",
              errorOf(report));
  }
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.entry = "other";
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_EQ("--entry goes with FILE.mlir; the --sdpa function is @sdpa",
              errorOf(report));
  }
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.dumpDir = "/proc/attn-cannot-make-this";
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_EQ(0u,
              errorOf(report).rfind("--dump /proc/attn-cannot-make-this: ", 0));
  }
  {
    RunOptions options = optionsFor("hq=1,lq=8,d=16");
    options.inputsDir = "/nonexistent-attn-dir";
    llvm::Expected<RunReport> report = runAttn(context(), options);
    EXPECT_NE(std::string::npos,
              errorOf(report).find("/nonexistent-attn-dir/arg0.npy"));
  }
}

TEST(EngineTest, OraclesSkippedAndSampled) {
  RunOptions options = optionsFor("hq=1,lq=256,lk=256,d=16");
  options.naiveLimitGib = 0;
  options.refLimitGflop = 1e-3; // 4.2 MFLOP in all: one row in 5
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  EXPECT_TRUE(report->pass);
  EXPECT_EQ(0u, report->naiveSkipped.rfind("naive lowering skipped", 0));
  EXPECT_EQ(5, report->refRowStride);
  EXPECT_EQ(0u,
            report->refNote.rfind("f64 reference on one query row in 5", 0));
  for (const CheckRecord &c : report->checks)
    EXPECT_EQ(std::string::npos, c.oracle.find("naive"));
}

TEST(EngineTest, BenchTimesEveryRun) {
  RunOptions options = optionsFor("hq=1,lq=32,d=16");
  options.benchRuns = 3;
  options.check = CheckMode::None;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  ASSERT_TRUE(report->fused.has_value());
  EXPECT_EQ(3, report->fused->runs);
  EXPECT_GT(report->fused->medianMs, 0);
  EXPECT_GT(report->gflops(*report->fused), 0);
  // --check none: only the fused result's no-NaN check.
  ASSERT_EQ(1u, report->checks.size());
  EXPECT_EQ("no-NaN", report->checks[0].oracle);
  // Each run's time, in order; the best is the least of them. No --peak:
  // no paired share.
  ASSERT_EQ(3u, report->fused->runMs.size());
  EXPECT_EQ(*std::min_element(report->fused->runMs.begin(),
                              report->fused->runMs.end()),
            report->fused->bestMs);
  EXPECT_LE(report->fused->bestMs, report->fused->medianMs);
  EXPECT_FALSE(report->pairedPeakShare.has_value());
}

TEST(EngineTest, HugePagesTimeOnCopies) {
  // K and V of 4 MiB each: copied; Q and the output (4 KiB) are not.
  RunOptions options = optionsFor("hq=1,lq=1,lk=8192,d=128");
  options.benchRuns = 2;
  options.hugePages = true;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  EXPECT_TRUE(report->pass);
  ASSERT_TRUE(report->hugePageCopyBytes.has_value());
  EXPECT_EQ(2 * 8192 * 128 * 4, *report->hugePageCopyBytes);
  EXPECT_EQ(transparentHugePagesMode(), report->thpMode);
  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, *report);
  EXPECT_NE(std::string::npos,
            text.find("the timed calls on 8.4 MB of copies on 2 MiB pages"))
      << text;
  llvm::json::Value json = reportToJson(*report);
  ASSERT_TRUE(json.getAsObject());
  EXPECT_EQ(2 * 8192 * 128 * 4,
            json.getAsObject()->getInteger("huge_page_copy_bytes"));
  // Without the option: none.
  options.hugePages = false;
  report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  EXPECT_FALSE(report->hugePageCopyBytes.has_value());
}

TEST(EngineTest, HugePagesAreForTheCpu) {
  RunOptions options = optionsFor("hq=1,lq=1,lk=64,d=16");
  options.hugePages = true;
  options.cuda = true;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_FALSE(bool(report));
  EXPECT_NE(std::string::npos,
            errorOf(report).find("--huge-pages goes with --target cpu"));
}

TEST(EngineTest, Bf16ReadBoundAtTheDotProductPeak) {
  // hq=32 hkv=8 Lk=32k d=128 bf16 as a Zen 4 measured it: the K/V read
  // (4.57 ms at 29.4 GB/s) is shorter than the FLOPs at the f32 peak (4.67
  // ms at 115 GFLOP/s) but twice as long as at the bf16 one (232).
  RunReport report;
  report.inputs = {TensorSpec{{1, 32, 1, 128}, DType::BF16}};
  report.flops = 2LL * 32 * 256 * 32768;
  report.kvBytes = 2.0 * 8 * 32768 * 128 * 2;
  report.readGBs = 29.4;
  report.peakGflops = 115.0;
  report.fused = Timing{6.0, 6.0, 1, {6.0}};
  EXPECT_FALSE(report.kvReadBound());
  report.bf16PeakGflops = 232.0;
  EXPECT_TRUE(report.kvReadBound());
  ASSERT_TRUE(report.kvRooflineShare().has_value());
  EXPECT_NEAR(4.565 / 6.0, *report.kvRooflineShare(), 1e-3);
  // An f32 run keeps the f32 peak.
  report.inputs = {TensorSpec{{1, 32, 1, 128}, DType::F32}};
  EXPECT_FALSE(report.kvReadBound());
}

/// A median paired share lies between the best call's rate over the
/// slowest burst and the worst call's over the fastest.
void expectShareWithinCalls(const RunReport &report, double share,
                            double minBurst, double maxBurst) {
  double best = report.flops / (report.fused->bestMs * 1e6);
  double worstMs =
      *std::max_element(report.fused->runMs.begin(), report.fused->runMs.end());
  double worst = report.flops / (worstMs * 1e6);
  EXPECT_LE(share, best / minBurst);
  EXPECT_GE(share, worst / maxBurst);
}

TEST(EngineTest, PeakPairsEveryTimedRunWithProbes) {
  RunOptions options = optionsFor("hq=1,lq=32,d=16");
  options.benchRuns = 3;
  options.peak = true;
  options.check = CheckMode::None;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  ASSERT_TRUE(report->pairedPeakShare.has_value());
  EXPECT_GT(*report->pairedPeakShare, 0);
  EXPECT_GT(report->burstMinGflops, 0);
  EXPECT_LE(report->burstMinGflops, report->burstMaxGflops);
  expectShareWithinCalls(*report, *report->pairedPeakShare,
                         report->burstMinGflops, report->burstMaxGflops);

  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, *report);
  EXPECT_NE(std::string::npos,
            text.find("of peak: the median of the 3 calls, each against the "
                      "f32 FMA probe run just before and after it"))
      << text;
  llvm::json::Value json = reportToJson(*report);
  llvm::json::Object *root = json.getAsObject();
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->getNumber("fused_pct_peak_paired"));
  EXPECT_TRUE(root->getNumber("fused_best_ms"));
  EXPECT_TRUE(root->getNumber("probe_burst_gflops_min"));
  EXPECT_TRUE(root->getNumber("probe_burst_gflops_max"));
  // One thread: no all-threads peak.
  EXPECT_FALSE(report->peakAllThreadsGflops.has_value());
  EXPECT_FALSE(root->getNumber("peak_all_threads_gflops"));
}

TEST(EngineTest, PeakPairsBf16RunsWithTheDotProductProbe) {
  if (!hostHasBf16Dot())
    GTEST_SKIP() << "no avx512_bf16 here";
  RunOptions options = optionsFor("hq=1,lq=32,d=16,dtype=bf16");
  options.benchRuns = 3;
  options.peak = true;
  options.check = CheckMode::None;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  ASSERT_TRUE(report->pairedBf16PeakShare.has_value());
  EXPECT_GT(report->bf16BurstMinGflops, 0);
  EXPECT_LE(report->bf16BurstMinGflops, report->bf16BurstMaxGflops);
  expectShareWithinCalls(*report, *report->pairedBf16PeakShare,
                         report->bf16BurstMinGflops,
                         report->bf16BurstMaxGflops);
  llvm::json::Value json = reportToJson(*report);
  ASSERT_TRUE(json.getAsObject());
  EXPECT_TRUE(json.getAsObject()->getNumber("fused_pct_bf16_peak_paired"));
  // An f32 run has none.
  options = optionsFor("hq=1,lq=32,d=16");
  options.benchRuns = 2;
  options.peak = true;
  options.check = CheckMode::None;
  report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  EXPECT_FALSE(report->pairedBf16PeakShare.has_value());
}

TEST(EngineTest, PeakWithThreadsMeasuresThemAtOnce) {
  RunOptions options = optionsFor("hq=2,lq=32,d=16");
  options.threads = 2;
  options.benchRuns = 2;
  options.peak = true;
  options.check = CheckMode::None;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << errorOf(report);
  ASSERT_TRUE(report->peakAllThreadsGflops.has_value());
  EXPECT_GT(*report->peakAllThreadsGflops, 0);
  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, *report);
  EXPECT_NE(std::string::npos, text.find("of the 2-thread peak")) << text;
  EXPECT_NE(std::string::npos, text.find("(2 cores at once, f32 FMA")) << text;
  llvm::json::Value json = reportToJson(*report);
  llvm::json::Object *root = json.getAsObject();
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->getNumber("peak_all_threads_gflops"));
  EXPECT_TRUE(root->getNumber("fused_pct_peak_all_threads"));
}

} // namespace
