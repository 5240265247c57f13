//===- CpuFeatures.h - which CPU kernels the fused lowering uses -*- C++
//-*-===//
//
// Part of the attn project.
//
// The fused CPU lowering has one set of kernels per instruction-set level;
// the pipeline option `kernels` (attn-run --kernels, attn-compile --kernels)
// forces one, and `auto` picks the best the target CPU has.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_CPUFEATURES_H
#define ATTN_PIPELINES_CPUFEATURES_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace mlir::attn {

enum class CpuKernels {
  /// The best the CPU has: amx, else avx512-bf16, else avx512, else avx2.
  Auto,
  /// avx512-bf16's kernels, with the bf16 products on AMX tiles (amx_tile,
  /// amx_bf16) where the tiles are multiples of 16.
  Amx,
  /// 16-lane f32 kernels; bf16 products on vdpbf16ps (AVX512-BF16).
  Avx512Bf16,
  /// 16-lane f32 kernels; bf16 and f16 widened to f32 (AVX-512F, DQ).
  Avx512,
  /// 8-lane f32 kernels blocked for 16 vector registers (AVX2 + FMA), for
  /// CPUs without AVX-512; compiled without AVX-512 instructions.
  Avx2,
};

/// The option spelling of `kernels` ("auto", "avx512-bf16", ...).
llvm::StringRef stringifyCpuKernels(CpuKernels kernels);

/// `kernels` with Auto resolved by `hasFeature` (an LLVM feature name such
/// as "avx512bf16" -> whether the target CPU has it).
CpuKernels
resolveCpuKernels(CpuKernels kernels,
                  llvm::function_ref<bool(llvm::StringRef)> hasFeature);

/// `kernels` with Auto resolved from this machine's CPU.
CpuKernels resolveCpuKernelsForHost(CpuKernels kernels);

/// The kernels an option spelling names, or nullopt.
std::optional<CpuKernels> parseCpuKernels(llvm::StringRef text);

/// Whether a CPU with the features `hasFeature` says it has can run
/// `kernels` (Auto, and Avx2, which only needs x86-64: always).
bool canRunCpuKernels(CpuKernels kernels,
                      llvm::function_ref<bool(llvm::StringRef)> hasFeature);

/// Whether this machine's CPU can run `kernels`. For amx this asks the OS
/// for the AMX tile state (hostGrantsAmx).
bool hostCanRun(CpuKernels kernels);

/// Whether this process may use AMX tiles: the CPU has amx_tile and the OS
/// grants the tile data state (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA), asked once per process; code that uses AMX without
/// it dies of SIGILL). False on other systems.
bool hostGrantsAmx();

/// Whether this process may run AMX-FP16's tdpfp16ps: amx-fp16 (CPUID;
/// some kernels' /proc/cpuinfo does not list it) and hostGrantsAmx().
bool hostHasAmxFp16();

/// Whether attn-cpu-microkernels' blend-stores is on by default for the
/// resolved `kernels` on a target with these features: the avx2 kernels
/// (AVX2's masked stores are microcoded on AMD Zen) on an x86 target with
/// AVX (the blend's empty asm needs a ymm register). AVX-512's k-masked
/// stores are left to LLVM.
bool blendStoresByDefault(CpuKernels kernels,
                          llvm::function_ref<bool(llvm::StringRef)> hasFeature);

/// blendStoresByDefault for this machine's CPU.
bool hostBlendsStores(CpuKernels kernels);

} // namespace mlir::attn

#endif // ATTN_PIPELINES_CPUFEATURES_H
