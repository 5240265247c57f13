//===- PassFuzzer.cpp - libFuzzer target: parse, verify, every attn pass --===//
//
// Part of the attn project.
//
// Input: .mlir text (seeded with test/**/*.mlir). Parses it, verifies it and
// runs each attn pass and pipeline on a fresh clone with the verifier after
// every pass. Diagnostics (a parse error, a pass failure) are expected; a
// crash, a sanitizer report or a hang is a bug.
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
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

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
};

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
  for (const char *pipeline : kPipelines) {
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
