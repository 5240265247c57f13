//===- CpuPathDefaults.h - knobs' defaults per CPU kernel path --*- C++ -*-===//
//
// Part of the attn project.
//
// The defaults that differ by CPU kernel path (Tuning.td's onCpuPath), as
// data: attn-lower-cpu takes a knob from here where it is not given, with
// `kernels` resolved for the target CPU. Generated into Knobs.h.inc by
// scripts/tuning-gen.py.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TUNING_CPUPATHDEFAULTS_H
#define ATTN_TUNING_CPUPATHDEFAULTS_H

#include "attn/Codegen/CPU/CpuFeatures.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir::attn::tuning {

#define ATTN_TUNING_CPU_PATH_DEFAULTS
#include "attn/Tuning/Knobs.h.inc"

} // namespace mlir::attn::tuning

#endif // ATTN_TUNING_CPUPATHDEFAULTS_H
