//===- Tuning.cpp - attn's tuning knobs, from Tuning.td -------------------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Tuning/Tuning.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir::attn;
using namespace mlir::attn::tuning;

namespace {
#define ATTN_TUNING_KNOB_TABLE
#include "attn/Tuning/Knobs.h.inc"
} // namespace

llvm::StringRef mlir::attn::tuning::targetName(Pipeline pipeline) {
  return pipeline == Pipeline::Cpu ? "cpu" : "cuda";
}

llvm::ArrayRef<Knob> mlir::attn::tuning::knobs() { return kKnobs; }

llvm::StringRef mlir::attn::tuning::knobsJson() {
  return
#define ATTN_TUNING_KNOBS_JSON
#include "attn/Tuning/Knobs.h.inc"
      ;
}

const Knob &mlir::attn::tuning::getKnob(KnobId id) {
  // The table is in KnobId's order (both are Tuning.td's).
  return kKnobs[static_cast<unsigned>(id)];
}

const Knob *mlir::attn::tuning::lookupKnob(Pipeline pipeline,
                                           llvm::StringRef flag) {
  for (const Knob &knob : kKnobs)
    if (knob.pipeline == pipeline && knob.flag == flag)
      return &knob;
  return nullptr;
}

/// "0, 1, 2 or 3"; "a, b or c".
template <typename Range>
static std::string joinAlternatives(const Range &words) {
  std::string out;
  size_t n = llvm::size(words), i = 0;
  for (const auto &word : words) {
    if (i > 0)
      out += i + 1 == n ? " or " : ", ";
    out += llvm::Twine(word).str();
    ++i;
  }
  return out;
}

std::optional<std::string>
mlir::attn::tuning::violatedBound(const IntBounds &bounds, int64_t value) {
  if (value < bounds.min)
    return bounds.min == 1   ? std::string("positive")
           : bounds.min == 0 ? std::string(">= 0")
                             : ">= " + std::to_string(bounds.min);
  if (value > bounds.max) {
    if (bounds.max - bounds.min < 4)
      return joinAlternatives(
          llvm::seq_inclusive<int64_t>(bounds.min, bounds.max));
    return "at most " + std::to_string(bounds.max);
  }
  if (bounds.powerOfTwo && !llvm::isPowerOf2_64(value))
    return std::string("a power of two");
  if (bounds.multipleOf > 0 && value % bounds.multipleOf != 0)
    return "a multiple of " + std::to_string(bounds.multipleOf);
  return std::nullopt;
}

llvm::Error mlir::attn::tuning::checkKnobValue(const Knob &knob,
                                               llvm::StringRef text) {
  auto expected = [&](const llvm::Twine &what) {
    return llvm::createStringError("--" + knob.flag + " must be " + what);
  };
  switch (knob.kind) {
  case KnobKind::Int: {
    int64_t value;
    if (text.getAsInteger(10, value))
      return expected("an integer, got '" + text + "'");
    if (std::optional<std::string> bound = violatedBound(knob.bounds, value))
      return expected(*bound);
    return llvm::Error::success();
  }
  case KnobKind::Bool:
    if (text != "true" && text != "false")
      return expected("true or false, got '" + text + "'");
    return llvm::Error::success();
  case KnobKind::Choice:
    if (!llvm::is_contained(knob.choices, text))
      return expected(joinAlternatives(knob.choices) + ", got '" + text + "'");
    return llvm::Error::success();
  case KnobKind::String:
    return llvm::Error::success();
  }
  llvm_unreachable("unknown knob kind");
}

llvm::Error KnobValues::set(KnobId id, llvm::StringRef text) {
  if (llvm::Error e = checkKnobValue(getKnob(id), text))
    return e;
  auto it = llvm::find_if(values, [&](const auto &v) { return v.first >= id; });
  if (it != values.end() && it->first == id)
    it->second = text.str();
  else
    values.insert(it, {id, text.str()});
  return llvm::Error::success();
}

std::optional<llvm::StringRef> KnobValues::lookup(KnobId id) const {
  for (const auto &[given, text] : values)
    if (given == id)
      return llvm::StringRef(text);
  return std::nullopt;
}

std::optional<int64_t> KnobValues::getInt(KnobId id) const {
  std::optional<llvm::StringRef> text = lookup(id);
  int64_t value;
  if (!text || text->getAsInteger(10, value))
    return std::nullopt;
  return value;
}

std::optional<bool> KnobValues::getBool(KnobId id) const {
  std::optional<llvm::StringRef> text = lookup(id);
  if (!text)
    return std::nullopt;
  return *text == "true";
}

KnobValues KnobValues::withLibraryDefaults(Pipeline pipeline) const {
  KnobValues out = *this;
  for (const Knob &knob : kKnobs)
    if (knob.pipeline == pipeline && !knob.libraryDefault.empty() &&
        !has(knob.id))
      llvm::cantFail(out.set(knob.id, knob.libraryDefault));
  return out;
}

std::string KnobValues::pipelineOptions(Pipeline pipeline) const {
  llvm::SmallVector<std::string> options;
  for (const auto &[id, text] : values)
    if (getKnob(id).pipeline == pipeline)
      options.push_back((getKnob(id).flag + "=" + text).str());
  return llvm::join(options, " ");
}

llvm::json::Object KnobValues::libraryTuning(Pipeline pipeline) const {
  llvm::json::Object tuning;
  for (const auto &[id, text] : values) {
    const Knob &knob = getKnob(id);
    if (knob.pipeline != pipeline || !knob.libraryTuning)
      continue;
    if (knob.kind == KnobKind::Int)
      tuning[knob.key] = *getInt(id);
    else if (knob.kind == KnobKind::Bool)
      tuning[knob.key] = *getBool(id);
    else
      tuning[knob.key] = text;
  }
  return tuning;
}
