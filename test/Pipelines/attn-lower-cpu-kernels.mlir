// attn-lower-cpu's `kernels` picks the CPU kernels whatever the host has
// (only running them needs the features; lowering does not):
// avx512-bf16 puts bf16 Q.K^T and P.V on vdpbf16ps, avx512 widens bf16 to
// f32 on 16-lane FMAs, avx2 runs 8-lane FMAs in a function compiled with
// -avx512f.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512-bf16" | FileCheck %s --check-prefix=BF16 --implicit-check-not="dense<32767>"
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" | FileCheck %s --check-prefix=AVX512 --implicit-check-not=dpbf16ps
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2" | FileCheck %s --check-prefix=AVX2 --implicit-check-not=dpbf16ps

// BF16: llvm.func @bf16
// BF16: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"({{.*}}) : (vector<16xf32>, vector<32xbf16>, vector<32xbf16>) -> vector<16xf32>
// The output's bf16 rounding is left to LLVM (vcvtneps2bf16): the pipeline
// sets bf16-round-in-integers=false here, and runs no arith-expand (no
// integer rounding's 0x7FFF anywhere).
// BF16: llvm.fptrunc {{.*}} : vector<16xf32> to vector<16xbf16>

// AVX512: llvm.func @bf16
// AVX512-NOT: target_features
// AVX512: llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>

// AVX2: llvm.func @bf16({{.*}}target_features = #llvm.target_features<{{.*}}"-avx512f"{{.*}}>
// AVX2: llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// The output's bf16 rounding: attn-expand-bf16-truncf's NaN test on the f32
// lanes, never a select on i16 lanes (arith-expand's, which LLVM
// scalarizes).
// AVX2: llvm.fcmp "uno" {{.*}} : vector<8xf32>
// AVX2-NOT: llvm.select {{.*}} vector<8xi16>
// AVX2-NOT: vector<16xf32>
func.func @bf16(%q: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16> -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// blend-stores: off by default on AVX-512, and as given on any path (the
// masked scores and row maxima stored through an empty inline asm, never as
// vmaskmovps). Its default on the avx2 path depends on the host's AVX:
// test/Tools/attn-compile/cpu-no-masked-stores.test checks it.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2 blend-stores=true" | FileCheck %s --check-prefix=BLEND
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2 blend-stores=false" | FileCheck %s --check-prefix=NOBLEND
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" | FileCheck %s --check-prefix=NOBLEND
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 blend-stores=true" | FileCheck %s --check-prefix=BLEND16
// BLEND-LABEL: llvm.func @causal
// BLEND: llvm.inline_asm "", "=v,0" {{.*}} : (vector<8xf32>) -> vector<8xf32>
// NOBLEND-LABEL: llvm.func @causal
// NOBLEND-NOT: llvm.inline_asm
// BLEND16-LABEL: llvm.func @causal
// BLEND16: llvm.inline_asm "", "=v,0" {{.*}} : (vector<16xf32>) -> vector<16xf32>
func.func @causal(%q: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>} : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}
