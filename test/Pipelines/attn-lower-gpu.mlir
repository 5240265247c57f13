// decode-rows=0: the tensor-core (or f32) kernel alone; the split-K decode
// kernels are tested in decode-to-ptx.mlir, convert-attn-to-gpu-decode.mlir
// and attn-lower-gpu-decode.mlir.
// REQUIRES: cuda-toolkit
//
// attn-lower-gpu: the fused FlashAttention-2 kernel (convert-attn-to-gpu)
// through bufferization, device buffers and the NVVM tail to PTX, for sm_80
// and sm_90: tensor-core instructions in the PTX, every kernel assembled by
// ptxas without spills, host code that allocates the results in device memory
// and launches. Nothing here runs on a GPU.
//
// RUN: attn-opt %s -split-input-file --attn-lower-gpu="chip=sm_80 format=isa decode-rows=0" -o %t.sm80.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: not grep -e @malloc -e @free %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s -split-input-file --attn-lower-gpu="chip=sm_90 format=isa decode-rows=0" -o %t.sm90.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s -split-input-file --attn-lower-gpu="chip=sm_90 decode-rows=0" | FileCheck %s --check-prefix=FATBIN

// HOST-LABEL: llvm.func @f16_d64
// HOST: llvm.call @mgpuStreamCreate
// HOST: llvm.call @mgpuMemAlloc
// HOST: gpu.launch_func
// HOST: llvm.call @mgpuStreamSynchronize
// PTX-LABEL: .entry f16_d64_kernel
// PTX-DAG: cp.async
// PTX-DAG: ldmatrix.sync.aligned
// PTX-DAG: ldmatrix.sync.aligned{{.*}}.trans
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly
// PTX-DAG: ex2.approx
// FATBIN: gpu.binary @f16_d64_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs
func.func @f16_d64(%q: tensor<2x8x200x64xf16>, %k: tensor<2x8x300x64xf16>, %v: tensor<2x8x300x64xf16>) -> tensor<2x8x200x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<2x8x200x64xf16>, tensor<2x8x300x64xf16>, tensor<2x8x300x64xf16> -> tensor<2x8x200x64xf16>
  return %o : tensor<2x8x200x64xf16>
}

// -----

// HOST-LABEL: llvm.func @bf16_dynamic_gqa_mask_causal_lse
// HOST-COUNT-2: llvm.call @mgpuMemAlloc
// HOST: gpu.launch_func
// PTX-LABEL: .entry bf16_dynamic_gqa_mask_causal_lse_kernel
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @bf16_dynamic_gqa_mask_causal_lse(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %m: tensor<?x1x?x?xi1>) -> (tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x1x?x?xi1> -> tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
}

// -----

// The f32 path: plain FMAs, no tensor cores.
// HOST-LABEL: llvm.func @f32_float_mask
// PTX-LABEL: .entry f32_float_mask_kernel
// PTX-NOT: mma.sync
// PTX-DAG: fma.rn.f32
func.func @f32_float_mask(%q: tensor<1x4x77x64xf32>, %k: tensor<1x4x90x64xf32>, %v: tensor<1x4x90x64xf32>, %m: tensor<1x1x77x90xf32>) -> tensor<1x4x77x64xf32> {
  %o = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<top_left>} : tensor<1x4x77x64xf32>, tensor<1x4x90x64xf32>, tensor<1x4x90x64xf32>, tensor<1x1x77x90xf32> -> tensor<1x4x77x64xf32>
  return %o : tensor<1x4x77x64xf32>
}

// PTXAS: @f16_d64_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: @bf16_dynamic_gqa_mask_causal_lse_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: @f32_float_mask_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS: 3 kernels assembled for sm_{{[89]0}}: at most {{1?[0-9]?[0-9]|2[0-4][0-9]|25[0-5]}} registers, 0 bytes spill stores, 0 bytes spill loads
