//===- ToolFlags.cpp - the tools' tuning flags, from Tuning.td ------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Tuning/ToolFlags.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir::attn;
using namespace mlir::attn::tuning;
namespace cl = llvm::cl;

/// One --<flag>: the knobs of each pipeline that take it, and the option.
struct ToolFlags::Flag {
  llvm::StringRef name;
  KnobKind kind;
  /// By pipeline: Cpu, Gpu; null where that pipeline has no such knob.
  const Knob *knobs[2] = {nullptr, nullptr};
  /// cl::Option keeps references to these.
  std::string help, valueName;
  std::unique_ptr<cl::Option> option;

  const Knob *knobOf(Pipeline pipeline) const {
    return knobs[pipeline == Pipeline::Cpu ? 0 : 1];
  }
  bool isGiven() const { return option->getNumOccurrences() > 0; }
  /// The value given as the pipeline's option text.
  std::string text() const {
    switch (kind) {
    case KnobKind::Int:
      return std::to_string(static_cast<cl::opt<int64_t> &>(*option));
    case KnobKind::Bool:
      return static_cast<cl::opt<bool> &>(*option) ? "true" : "false";
    case KnobKind::Choice:
    case KnobKind::String:
      return static_cast<cl::opt<std::string> &>(*option);
    }
    llvm_unreachable("unknown knob kind");
  }
  /// "cpu: <help> (default: ...)", each pipeline's knob after the other.
  std::string helpText(ToolDefaults defaults) const {
    std::string out;
    for (Pipeline pipeline : {Pipeline::Cpu, Pipeline::Gpu}) {
      const Knob *knob = knobOf(pipeline);
      if (!knob)
        continue;
      llvm::StringRef stated = defaults == ToolDefaults::Library
                                   ? knob->libraryDefaults
                                   : knob->defaults;
      if (!out.empty())
        out += ". ";
      out += (targetName(pipeline) + ": " + knob->help +
              " (default: " + stated + ")")
                 .str();
    }
    return out;
  }
};

ToolFlags::ToolFlags(cl::OptionCategory &category, ToolDefaults defaults) {
  for (const Knob &knob : knobs()) {
    if (!knob.tool)
      continue;
    auto it = llvm::find_if(flags, [&](const std::unique_ptr<Flag> &flag) {
      return flag->name == knob.flag;
    });
    if (it == flags.end()) {
      flags.push_back(std::make_unique<Flag>());
      flags.back()->name = knob.flag;
      flags.back()->kind = knob.kind;
      it = std::prev(flags.end());
    }
    (*it)->knobs[knob.pipeline == Pipeline::Cpu ? 0 : 1] = &knob;
  }
  for (std::unique_ptr<Flag> &flag : flags) {
    flag->help = flag->helpText(defaults);
    switch (flag->kind) {
    case KnobKind::Int:
      flag->option = std::make_unique<cl::opt<int64_t>>(
          flag->name, cl::desc(flag->help), cl::value_desc("int"),
          cl::cat(category));
      break;
    case KnobKind::Bool:
      flag->option = std::make_unique<cl::opt<bool>>(
          flag->name, cl::desc(flag->help), cl::cat(category));
      break;
    case KnobKind::Choice:
    case KnobKind::String: {
      // The values of both pipelines' knobs (--kernels: the CPU kernel
      // paths, then the GPU prefill kernels), each once.
      llvm::SmallVector<llvm::StringRef> values;
      for (const Knob *each : flag->knobs)
        if (each)
          for (llvm::StringRef value : each->choices)
            if (!llvm::is_contained(values, value))
              values.push_back(value);
      flag->valueName = llvm::join(values, "|");
      flag->option = std::make_unique<cl::opt<std::string>>(
          flag->name, cl::desc(flag->help),
          cl::value_desc(flag->valueName.empty() ? llvm::StringRef("string")
                                                 : flag->valueName),
          cl::cat(category));
      break;
    }
    }
  }
}

ToolFlags::~ToolFlags() = default;

llvm::Expected<KnobValues> ToolFlags::given(Pipeline target, bool fused) const {
  KnobValues values;
  for (const std::unique_ptr<Flag> &flag : flags) {
    if (!flag->isGiven())
      continue;
    const Knob *knob = flag->knobOf(target);
    if (!knob || !fused) {
      bool both = flag->knobs[0] && flag->knobs[1];
      Pipeline owner = flag->knobs[0] ? Pipeline::Cpu : Pipeline::Gpu;
      return llvm::createStringError(
          "--" + flag->name + " is an option of " +
          (both ? llvm::Twine("the fused lowering")
                : "--target " + targetName(owner) + "'s fused lowering"));
    }
    if (llvm::Error e = values.set(knob->id, flag->text()))
      return std::move(e);
  }
  return values;
}
