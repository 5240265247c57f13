// The naive GPU pipeline (attn's own oracle on the GPU) lowers every
// attention variant through the naive linalg lowering: sliding window with
// bottom-right causal, per-sequence key lengths, softcap (math.tanh, from
// libdevice: no unresolved extern) and ALiBi, with dynamic sizes. The PTX
// assembles for sm_80 and sm_90 without spills. Nothing here runs on a GPU.
//
// REQUIRES: cuda-toolkit
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_80 format=isa toolkit=%cuda_toolkit" -o %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_90 format=isa toolkit=%cuda_toolkit" -o %t.sm90.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS

// The score kernel: the key length read per batch, ALiBi's distance, tanh.
// PTX-NOT: .extern
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: abs.f32
// PTX-DAG: ex2.approx
// PTX-DAG: ld.global.{{.*}}b32
// PTXAS: {{^}}{{[0-9]+}} kernels assembled for sm_{{[89]}}0: at most {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @f16_variants(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>, %kl: tensor<?xi32>, %s: tensor<?x4xf32>)
    -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v key_lengths(%kl : tensor<?xi32>) alibi_slopes(%s : tensor<?x4xf32>) {causal = #attn.causal<bottom_right>, window = array<i64: 30, 0>, softcap = 20.0 : f32}
      : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
}
