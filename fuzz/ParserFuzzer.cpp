//===- ParserFuzzer.cpp - libFuzzer target: --sdpa specs and .npy files ---===//
//
// Part of the attn project.
//
// Each input goes to both parsers: parseSdpaSpec() on it as text and
// parseNpy() on it as bytes. Errors are expected; a crash or a sanitizer
// report is a bug. A spec that parses must spell itself canonically and
// read back to the same spelling; an .npy that parses must have as many
// bytes as its shape says.
//
//===----------------------------------------------------------------------===//

#include "attn/Spec/Npy.h"
#include "attn/Spec/SdpaSpec.h"

#include <cstddef>
#include <cstdint>

using namespace mlir::attn::exec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::Expected<SdpaSpec> spec = parseSdpaSpec(text)) {
    std::string canonical = spec->toString();
    llvm::Expected<SdpaSpec> again = parseSdpaSpec(canonical);
    if (!again || again->toString() != canonical)
      __builtin_trap();
    (void)spec->toProblem().flops();
    (void)spec->argSpecs();
    (void)spec->resultSpecs();
  } else {
    llvm::consumeError(spec.takeError());
  }
  if (llvm::Expected<HostTensor> t =
          parseNpy(llvm::ArrayRef<uint8_t>(data, size))) {
    std::optional<int64_t> bytes = byteSizeOf({t->shape, t->dtype});
    if (!bytes || static_cast<size_t>(*bytes) != t->data.size())
      __builtin_trap();
  } else {
    llvm::consumeError(t.takeError());
  }
  return 0;
}
