//===- CpuFeatures.cpp - which CPU kernels the fused lowering uses --------===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#include "attn/Codegen/CPU/CpuFeatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

using namespace mlir::attn;

llvm::StringRef mlir::attn::stringifyCpuKernels(CpuKernels kernels) {
  switch (kernels) {
  case CpuKernels::Auto:
    return "auto";
  case CpuKernels::Amx:
    return "amx";
  case CpuKernels::Avx512Bf16:
    return "avx512-bf16";
  case CpuKernels::Avx512:
    return "avx512";
  case CpuKernels::Avx2:
    return "avx2";
  }
  return "auto";
}

/// The 16-lane kernels' base: AVX512F, and AVX512DQ for exp2's vreduceps
/// (every AVX-512 CPU but the Xeon Phi has both).
static bool hasAvx512(llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  return hasFeature("avx512f") && hasFeature("avx512dq");
}

/// The amx kernels' features: avx512-bf16's, and AMX tiles with bf16
/// products.
static bool hasAmx(llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  return hasAvx512(hasFeature) && hasFeature("avx512bf16") &&
         hasFeature("amx-tile") && hasFeature("amx-bf16");
}

bool mlir::attn::hostGrantsAmx() {
#if defined(__linux__) && defined(__x86_64__)
  // Asked once: the grant is for the whole process and cannot be taken back.
  static const bool granted = [] {
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    if (!llvm::sys::getHostCPUFeatures().lookup("amx-tile"))
      return false;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}

bool mlir::attn::hostHasAmxFp16() {
  return hostGrantsAmx() && llvm::sys::getHostCPUFeatures().lookup("amx-fp16");
}

/// This machine's CPU features, with AMX's only where the OS grants them.
static bool hostHasFeature(const llvm::StringMap<bool> &features,
                           llvm::StringRef name) {
  if (name.starts_with("amx-") && !hostGrantsAmx())
    return false;
  return features.lookup(name);
}

CpuKernels mlir::attn::resolveCpuKernels(
    CpuKernels kernels, llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  if (kernels != CpuKernels::Auto)
    return kernels;
  if (hasAmx(hasFeature))
    return CpuKernels::Amx;
  if (hasAvx512(hasFeature) && hasFeature("avx512bf16"))
    return CpuKernels::Avx512Bf16;
  if (hasAvx512(hasFeature))
    return CpuKernels::Avx512;
  return CpuKernels::Avx2;
}

CpuKernels mlir::attn::resolveCpuKernelsForHost(CpuKernels kernels) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return resolveCpuKernels(kernels, [&](llvm::StringRef name) {
    return hostHasFeature(features, name);
  });
}

std::optional<CpuKernels> mlir::attn::parseCpuKernels(llvm::StringRef text) {
  for (CpuKernels k :
       {CpuKernels::Auto, CpuKernels::Amx, CpuKernels::Avx512Bf16,
        CpuKernels::Avx512, CpuKernels::Avx2})
    if (text == stringifyCpuKernels(k))
      return k;
  return std::nullopt;
}

bool mlir::attn::canRunCpuKernels(
    CpuKernels kernels, llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  switch (kernels) {
  case CpuKernels::Auto:
  case CpuKernels::Avx2:
    return true;
  case CpuKernels::Amx:
    return hasAmx(hasFeature);
  case CpuKernels::Avx512Bf16:
    return hasAvx512(hasFeature) && hasFeature("avx512bf16");
  case CpuKernels::Avx512:
    return hasAvx512(hasFeature);
  }
  return false;
}

bool mlir::attn::hostCanRun(CpuKernels kernels) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return canRunCpuKernels(kernels, [&](llvm::StringRef name) {
    return hostHasFeature(features, name);
  });
}

bool mlir::attn::blendStoresByDefault(
    CpuKernels kernels, llvm::function_ref<bool(llvm::StringRef)> hasFeature) {
  return kernels == CpuKernels::Avx2 &&
         llvm::Triple(llvm::sys::getDefaultTargetTriple()).isX86() &&
         hasFeature("avx");
}

bool mlir::attn::hostBlendsStores(CpuKernels kernels) {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return blendStoresByDefault(
      kernels, [&](llvm::StringRef name) { return features.lookup(name); });
}
