//===- GradEngineTest.cpp - Tests for runAttn() with --grad ---------------===//
//
// The backward path of the engine (lib/Execution/Grad.cpp): every gradient
// checked against both oracles, the report's names and FLOPs, the options it
// refuses.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/Engine.h"
#include "attn/Execution/Report.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn::exec;

namespace {

MLIRContext &context() {
  static std::unique_ptr<MLIRContext> ctx = createEngineContext();
  return *ctx;
}

RunOptions gradOptions(llvm::StringRef text) {
  RunOptions options;
  llvm::Expected<SdpaSpec> spec = parseSdpaSpec(text);
  if (!spec)
    ADD_FAILURE() << toString(spec.takeError());
  else
    options.spec = *spec;
  options.threads = 1;
  options.grad = true;
  return options;
}

TEST(GradEngineTest, EveryGradientAgainstBothOracles) {
  RunOptions options =
      gradOptions("hq=4,hkv=2,lq=37,lk=50,d=16,causal=bottom_right");
  options.pipelineOptions = "grad-block-q=16 grad-block-kv=16";
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << toString(report.takeError());
  EXPECT_TRUE(report->pass);
  EXPECT_TRUE(report->grad);
  EXPECT_EQ("sdpa_grad", report->entry);
  // q, k, v, out, lse, d_out.
  ASSERT_EQ(6u, report->inputs.size());
  EXPECT_EQ((std::vector<int64_t>{1, 4, 37}), report->inputs[4].shape);
  std::vector<std::string> seen;
  for (const CheckRecord &c : report->checks) {
    seen.push_back(c.result + " " + c.oracle);
    EXPECT_TRUE(c.verdict.pass) << c.result << " " << c.oracle;
    if (!c.isNaNCheck()) {
      ASSERT_TRUE(c.sensRel.has_value());
      EXPECT_LT(*c.sensRel, 1e-5);
    }
  }
  EXPECT_EQ(
      (std::vector<std::string>{
          "d_query f64 (naive)", "d_query f64", "d_query naive",
          "d_key f64 (naive)", "d_key f64", "d_key naive",
          "d_value f64 (naive)", "d_value f64", "d_value naive",
          "d_query no-NaN", "d_query no-NaN naive", "d_key no-NaN",
          "d_key no-NaN naive", "d_value no-NaN", "d_value no-NaN naive"}),
      seen);
}

TEST(GradEngineTest, BenchReportsBackwardFlops) {
  RunOptions options = gradOptions("hq=2,lq=32,d=16");
  options.benchRuns = 1;
  options.check = CheckMode::None;
  llvm::Expected<RunReport> report = runAttn(context(), options);
  ASSERT_TRUE(bool(report)) << toString(report.takeError());
  // 2.5 x the forward's 2 * hq * (d + dv) * lq * lk.
  EXPECT_EQ(2 * 2 * 32 * 32 * 32 * 5 / 2, report->flops);
  ASSERT_TRUE(report->fused.has_value());
  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(os, *report);
  EXPECT_NE(std::string::npos, text.find("FLOPs = 2.5 x the forward's"));
}

TEST(GradEngineTest, RefusedOptions) {
  RunOptions file;
  file.inputFile = "x.mlir";
  file.grad = true;
  llvm::Expected<RunReport> r1 = runAttn(context(), file);
  ASSERT_FALSE(bool(r1));
  EXPECT_EQ("--grad goes with --sdpa SPEC", toString(r1.takeError()));
  RunOptions dump = gradOptions("hq=1,lq=8,d=8");
  dump.dumpDir = "/tmp/x";
  llvm::Expected<RunReport> r2 = runAttn(context(), dump);
  ASSERT_FALSE(bool(r2));
  llvm::consumeError(r2.takeError());
}

} // namespace
