//===- PassFuzzer.cpp - libFuzzer target: parse, verify, every attn pass --===//
//
// Part of the attn project.
//
// Input: .mlir text (seeded with test/**/*.mlir). Parses it, verifies it and
// runs each attn pass and pipeline on a fresh clone with the verifier after
// every pass: the forward's, the backward's (attn-cpu-sdpa-grad) and the
// varlen and paged expansions, and pipelines whose integer options (block
// sizes, splits) are drawn from in- and out-of-bounds values by a hash of
// the input. Diagnostics (a parse error, a pass failure, an option out of
// bounds) are expected; a crash, a sanitizer report or a hang is a bug.
//
//===----------------------------------------------------------------------===//

#include "attn/InitAttn.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using namespace mlir;

namespace {
/// The passes and pipelines, each run alone on a fresh clone.
const char *const kPipelines[] = {
    "convert-attn-to-linalg",
    "attn-tile-online-softmax",
    "attn-tile-online-softmax{block-q=3 block-kv=5}",
    "attn-cpu-microkernels",
    "attn-lower-naive-cpu",
    "attn-lower-cpu",
    "attn-lower-cpu{block-q=2 block-kv=3}",
    // The backward and the varlen and paged forms, with their options.
    "attn-cpu-sdpa-grad",
    "attn-cpu-sdpa-grad{block-q=16 block-kv=3 vector-width=16}",
    "attn-lower-cpu{grad-block-q=8 grad-block-kv=5 vector-width=8}",
    "attn-expand-varlen",
    "attn-gather-paged",
};

/// Option values that a hostile pipeline may give: each integer option of
/// a pass gets one of these, picked by the input's bytes (the passes must
/// refuse those outside Tuning.td's bounds in one diagnostic, never crash).
const int64_t kOptionValues[] = {
    -1, 0, 1, 3, 16, 64, 65536, 65537, int64_t(1) << 40, int64_t(1) << 62};

/// Pass pipelines with integer options taken from kOptionValues: the
/// forward's and the backward's tiling, the microkernels' and the decode
/// kernel's; `pick` returns an index into kOptionValues.
template <typename Pick> std::vector<std::string> optionPipelines(Pick pick) {
  auto v = [&] { return std::to_string(kOptionValues[pick()]); };
  return {
      "attn-tile-online-softmax{block-q=" + v() + " block-kv=" + v() +
          " kv-splits=" + v() + " decode-rows=" + v() + "}",
      "attn-cpu-sdpa-grad{block-q=" + v() + " block-kv=" + v() +
          " vector-width=" + v() + "}",
      "attn-lower-cpu{grad-block-q=" + v() + " grad-block-kv=" + v() +
          " block-q=" + v() + " block-kv=" + v() + "}",
      "attn-cpu-plan-tiling{narrow-block-q=" + v() + " wide-block-kv=" + v() +
          "}",
  };
}

MLIRContext &context() {
  static MLIRContext *ctx = [] {
    attn::registerAttnPasses();
    DialectRegistry registry;
    attn::registerAttnDialects(registry);
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->disableMultithreading();
    c->allowUnregisteredDialects(false);
    // Diagnostics are expected: swallow them.
    c->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    return c;
  }();
  return *ctx;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = context();
  // MLIR's lexer relies on the NUL after the buffer that llvm::MemoryBuffer
  // (attn-opt's and attn-run's files) and std::string guarantee: parsing the
  // raw fuzz bytes reads past their end at an input that ends inside an
  // attribute (fuzz/regressions/passes-unterminated-attr.mlir).
  std::string text(reinterpret_cast<const char *>(data), size);
  ParserConfig config(&ctx);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module || failed(verify(*module)))
    return 0;
  // The option values: a hash of the input's bytes, four bits at a time, so
  // that they vary from input to input.
  uint64_t bits = 1469598103934665603ull;
  for (uint8_t byte : llvm::ArrayRef<uint8_t>(data, size))
    bits = (bits ^ byte) * 1099511628211ull;
  unsigned used = 0;
  auto pick = [&]() -> size_t {
    return ((bits >> (4 * (used++ % 16))) & 15) % std::size(kOptionValues);
  };
  std::vector<std::string> pipelines(std::begin(kPipelines),
                                     std::end(kPipelines));
  for (std::string &p : optionPipelines(pick))
    pipelines.push_back(std::move(p));
  for (const std::string &pipeline : pipelines) {
    OwningOpRef<ModuleOp> clone = module->clone();
    PassManager pm(&ctx);
    pm.enableVerifier(true);
    if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
      __builtin_trap(); // The list above is wrong: fail loudly.
    if (succeeded(pm.run(*clone)) && failed(verify(*clone)))
      __builtin_trap(); // A pass that succeeds must leave valid IR.
  }
  return 0;
}
