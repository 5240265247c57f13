//===- TuningTest.cpp - the tuning knobs' table and the tools' parser -----===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Tuning/Tuning.h"
#include "attn/Tuning/CpuPathDefaults.h"
#include "attn/Tuning/ToolFlags.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <iterator>

using namespace mlir::attn::tuning;

namespace {

std::string errorOf(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

std::string checked(KnobId id, llvm::StringRef text) {
  return errorOf(checkKnobValue(getKnob(id), text));
}

TEST(TuningTable, IdsIndexTheTable) {
  for (const Knob &knob : knobs()) {
    EXPECT_EQ(&getKnob(knob.id), &knob) << knob.flag.str();
    EXPECT_EQ(lookupKnob(knob.pipeline, knob.flag), &knob) << knob.flag.str();
    // The name in the library JSON and in Python is the flag with _.
    std::string key = knob.flag.str();
    std::replace(key.begin(), key.end(), '-', '_');
    EXPECT_EQ(knob.key, key);
  }
}

TEST(TuningTable, AFlagOfBothPipelinesHasOneKind) {
  for (const Knob &cpu : knobs()) {
    if (cpu.pipeline != Pipeline::Cpu || !cpu.tool)
      continue;
    if (const Knob *gpu = lookupKnob(Pipeline::Gpu, cpu.flag)) {
      EXPECT_EQ(cpu.kind, gpu->kind) << cpu.flag.str();
    }
  }
}

TEST(TuningTable, DefaultsPerPathAreInTheHelp) {
  const Knob &width = getKnob(KnobId::CpuVectorWidth);
  EXPECT_EQ(width.defaults, "8 on avx2; else 16");
  const Knob &openmp = getKnob(KnobId::CpuOpenmp);
  EXPECT_EQ(openmp.defaults, "true");
  EXPECT_EQ(openmp.libraryDefault, "false");
}

TEST(CpuPathDefaults, FromTheTable) {
  using mlir::attn::CpuKernels;
  CpuPathDefaults avx2 = cpuPathDefaults(CpuKernels::Avx2);
  EXPECT_EQ(avx2.vectorWidth, 8);
  EXPECT_EQ(avx2.rowVectors, 2);
  EXPECT_EQ(avx2.prefetchSpread, 8);
  EXPECT_EQ(avx2.decodeRows, 7);
  EXPECT_EQ(avx2.narrowBlockQ, 0);
  EXPECT_EQ(avx2.decodePrefetch, "all");
  EXPECT_TRUE(avx2.decodePhased);
  CpuPathDefaults amx = cpuPathDefaults(CpuKernels::Amx);
  EXPECT_EQ(amx.vectorWidth, 16);
  EXPECT_EQ(amx.decodeRows, 8);
  EXPECT_TRUE(amx.amx && amx.bf16Dot && amx.avx512Exp);
  EXPECT_FALSE(amx.bf16RoundInIntegers);
  EXPECT_EQ(amx.wideBlockKV, 128);
  // At another vector-width, the defaults that hold at the path's own only
  // are the knobs' own; the others stay the path's.
  CpuPathDefaults amx8 = cpuPathDefaults(CpuKernels::Amx, 8);
  EXPECT_FALSE(amx8.amx || amx8.bf16Dot || amx8.avx512Exp);
  EXPECT_EQ(amx8.decodeRows, 16);
  EXPECT_FALSE(amx8.bf16RoundInIntegers);
  EXPECT_EQ(amx8.decodePrefetch, "all");
  CpuPathDefaults avx2At16 = cpuPathDefaults(CpuKernels::Avx2, 16);
  EXPECT_FALSE(avx2At16.decodePhased || avx2At16.blendStores);
  EXPECT_EQ(avx2At16.rowVectors, 2);
}

TEST(TuningChecks, Integers) {
  EXPECT_EQ(checked(KnobId::CpuBlockQ, "16"), "");
  EXPECT_EQ(checked(KnobId::CpuBlockQ, "0"), "--block-q must be positive");
  EXPECT_EQ(checked(KnobId::CpuBlockQ, "x"),
            "--block-q must be an integer, got 'x'");
  EXPECT_EQ(checked(KnobId::CpuDecodeRows, "-1"), "--decode-rows must be >= 0");
  EXPECT_EQ(checked(KnobId::CpuDecodePrefetchLocality, "4"),
            "--decode-prefetch-locality must be 0, 1, 2 or 3");
  EXPECT_EQ(checked(KnobId::CpuPrefetchSpread, "6"),
            "--prefetch-spread must be a power of two");
  // Every int knob has a maximum (issue 60: the backward's block sizes were
  // unbounded, 2^62 corrupted the heap).
  EXPECT_EQ(checked(KnobId::GradBlockQ, "65536"), "");
  EXPECT_EQ(checked(KnobId::GradBlockQ, "4611686018427387904"),
            "--grad-block-q must be at most 65536");
  EXPECT_EQ(checked(KnobId::GradBlockKV, "2305843009213693952"),
            "--grad-block-kv must be at most 65536");
  EXPECT_EQ(checked(KnobId::GpuBlockQ, "40"),
            "--block-q must be a multiple of 16");
  EXPECT_EQ(checked(KnobId::GpuDecodeStages, "3"),
            "--decode-stages must be 1 or 2");
}

TEST(TuningChecks, BoundsOfEveryIntKnob) {
  // The bounds the passes check their options against are the tools' (one
  // statement, Tuning.td): in range, at the edges and past them.
  for (const Knob &knob : knobs()) {
    if (knob.kind != KnobKind::Int)
      continue;
    const IntBounds &b = knob.bounds;
    ASSERT_LE(b.min, b.max) << knob.flag.str();
    EXPECT_EQ(violatedBound(b, b.min - 1).has_value(), true) << knob.flag.str();
    EXPECT_EQ(violatedBound(b, b.max + 1).has_value(), true) << knob.flag.str();
    EXPECT_FALSE(violatedBound(b, b.max)) << knob.flag.str();
  }
  EXPECT_EQ(violatedBound(bounds::kCpuDecodeWidth, 12), "a power of two");
  EXPECT_EQ(violatedBound(bounds::kCpuOmpChunk, int64_t(1) << 31),
            "at most 2147483647");
  EXPECT_FALSE(violatedBound(bounds::kCpuRowMultiple, 16));
}

TEST(TuningChecks, ChoicesAndBools) {
  EXPECT_EQ(checked(KnobId::CpuKernels, "avx2"), "");
  EXPECT_EQ(checked(KnobId::CpuKernels, "sve"),
            "--kernels must be auto, amx, avx512-bf16, avx512 or avx2, got "
            "'sve'");
  EXPECT_EQ(checked(KnobId::CpuOmpSchedule, "static"), "");
  EXPECT_EQ(checked(KnobId::GpuLazyRescale, "yes"),
            "--lazy-rescale must be true or false, got 'yes'");
}

TEST(KnobValues, PipelineOptionsInTableOrder) {
  KnobValues values;
  ASSERT_EQ(errorOf(values.set(KnobId::CpuRowVectors, "2")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::CpuBlockQ, "32")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::GpuLazyRescale, "true")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::CpuBlockQ, "16")), "");
  EXPECT_EQ(values.pipelineOptions(Pipeline::Cpu), "block-q=16 row-vectors=2");
  EXPECT_EQ(values.pipelineOptions(Pipeline::Gpu), "lazy-rescale=true");
  EXPECT_EQ(values.getInt(KnobId::CpuBlockQ), 16);
  EXPECT_EQ(values.getBool(KnobId::GpuLazyRescale), true);
  EXPECT_FALSE(values.has(KnobId::CpuBlockKV));
  EXPECT_EQ(errorOf(values.set(KnobId::CpuBlockKV, "-3")),
            "--block-kv must be positive");
  EXPECT_FALSE(values.has(KnobId::CpuBlockKV));
}

TEST(KnobValues, LibraryDefaultsAndTuningJson) {
  KnobValues values;
  ASSERT_EQ(errorOf(values.set(KnobId::CpuKernels, "avx2")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::CpuDecodePrefetch, "none")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::CpuBlendStores, "false")), "");
  ASSERT_EQ(errorOf(values.set(KnobId::CpuKvSplits, "3")), "");
  KnobValues library = values.withLibraryDefaults(Pipeline::Cpu);
  EXPECT_EQ(library.getBool(KnobId::CpuOpenmp), false);
  EXPECT_FALSE(values.has(KnobId::CpuOpenmp));
  // Typed by kind; kernels and openmp have keys of their own.
  std::string json =
      llvm::formatv("{0}",
                    llvm::json::Value(library.libraryTuning(Pipeline::Cpu)))
          .str();
  EXPECT_EQ(json, R"({"blend_stores":false,"decode_prefetch":"none",)"
                  R"("kv_splits":3})");
}

TEST(GpuChips, FromTheTable) {
  const GpuChipInfo *sm90 = lookupGpuChip("sm_90");
  ASSERT_NE(sm90, nullptr);
  EXPECT_EQ(sm90->ptxFeatures, "+ptx80");
  EXPECT_EQ(sm90->smCount, 132);
  EXPECT_EQ(lookupGpuChip("sm_75"), nullptr);
  EXPECT_EQ(getKnob(KnobId::GpuTargetChip).choices.size(),
            std::size(kGpuChips));
}

TEST(ToolFlags, GivenForTheTarget) {
  llvm::cl::OptionCategory category("tuning test");
  ToolFlags flags(category, ToolDefaults::Library);
  const char *argv[] = {"test", "--block-q=32", "--lazy-rescale",
                        "--decode-rows", "0"};
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(std::size(argv), argv, "",
                                                &llvm::errs()));
  // block-q and decode-rows are knobs of both pipelines; lazy-rescale only
  // of the GPU's.
  llvm::Expected<KnobValues> gpu = flags.given(Pipeline::Gpu, true);
  ASSERT_TRUE(static_cast<bool>(gpu)) << toString(gpu.takeError());
  EXPECT_EQ(gpu->pipelineOptions(Pipeline::Gpu),
            "block-q=32 decode-rows=0 lazy-rescale=true");
  EXPECT_EQ(errorOf(flags.given(Pipeline::Cpu, true).takeError()),
            "--lazy-rescale is an option of --target cuda's fused lowering");
  EXPECT_EQ(errorOf(flags.given(Pipeline::Gpu, false).takeError()),
            "--block-q is an option of the fused lowering");
  llvm::cl::ResetAllOptionOccurrences();
}

} // namespace
