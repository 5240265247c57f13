//===- ToolFlags.h - the tools' tuning flags, from Tuning.td ----*- C++ -*-===//
//
// Part of the attn project.
//
// attn-run and attn-compile take the same tuning flags, one per knob of
// Tuning.td that the tools take: --block-q, --decode-rows, --lazy-rescale,
// ... This is their one parser: it registers the flags with LLVM's command
// line (help from the table, with its defaults) and gives back what was
// given, checked against the table, for the pipeline of the target.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TUNING_TOOLFLAGS_H
#define ATTN_TUNING_TOOLFLAGS_H

#include "attn/Tuning/Tuning.h"

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <vector>

namespace mlir::attn::tuning {

/// Whose defaults a tool's help states: the pipelines' (attn-run) or a
/// library's (attn-compile, where Tuning.td gives a libraryDefault).
enum class ToolDefaults { Pipeline, Library };

/// The tuning flags of a tool. A flag that both pipelines take (block-q,
/// decode-rows) is one flag; its value goes to the target's pipeline.
class ToolFlags {
public:
  /// Registers the flags in `category`: construct before
  /// cl::ParseCommandLineOptions, and keep until the flags are read.
  ToolFlags(llvm::cl::OptionCategory &category, ToolDefaults defaults);
  ~ToolFlags();

  /// The flags given, for the fused lowering of `target`'s pipeline, checked
  /// against the table. A flag of the other pipeline only, or any flag when
  /// `fused` is false (the naive lowering takes none), is an error that
  /// names it: "--reg-block is an option of --target cpu's fused lowering".
  llvm::Expected<KnobValues> given(Pipeline target, bool fused) const;

private:
  struct Flag;
  std::vector<std::unique_ptr<Flag>> flags;
};

} // namespace mlir::attn::tuning

#endif // ATTN_TUNING_TOOLFLAGS_H
