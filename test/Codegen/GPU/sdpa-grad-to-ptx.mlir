// REQUIRES: cuda-toolkit
//
// attn.sdpa_grad lowered by convert-attn-to-gpu and an explicit NVVM pass
// list to PTX for sm_80 and sm_90 (the same kernels), FileCheck'd for the
// backward's instructions (mma.sync m16n8k16 in f16 and bf16, ldmatrix with
// and without .trans, cp.async, ex2, the f32 atomics of dQ) and assembled
// with ptxas -v, as attn-lower-gpu lowers them (index computations sunk into
// the launches before outlining; without that ptxas spills): every kernel
// (preprocess, main, dQ; each case's three) with 0 spill bytes and no stack,
// its registers printed (the main kernel at D = 128 uses all 255: dK and dV
// stay in registers). With deterministic=1 (the sm_90 run) the main kernel
// has no atomics. Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 deterministic=1" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=DET --implicit-check-not=atom.global
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS

// PTX: .entry f16_d64_kernel(
// PTX: .entry f16_d64_kernel(
// PTX-DAG: cp.async.ca.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: ex2.approx.f32
// PTX-DAG: atom.global.add.f32
// PTX: .entry bf16_d128_causal_gqa_kernel(
// PTX: .entry bf16_d128_causal_gqa_kernel(
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: atom.global.add.f32

// DET: .entry f16_d64_kernel(
// DET: .entry f16_d64_kernel(
// DET: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTXAS: @f16_d64_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @f16_d64_kernel_0: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @f16_d64_kernel_1: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d128_causal_gqa_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d128_causal_gqa_kernel_2: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d128_causal_gqa_kernel_3: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @f16_d64_dv128_top_left_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @f16_d64_dv128_top_left_kernel_4: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @f16_d64_dv128_top_left_kernel_5: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d96_dynamic_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d96_dynamic_kernel_6: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: @bf16_d96_dynamic_kernel_7: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-NEXT: 12 kernels assembled for {{sm_80|sm_90}}: at most {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads


func.func @f16_d64(%a0: tensor<1x4x256x64xf16>, %a1: tensor<1x4x256x64xf16>, %a2: tensor<1x4x256x64xf16>, %a3: tensor<1x4x256x64xf16>, %a4: tensor<1x4x256xf32>, %a5: tensor<1x4x256x64xf16>) -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %a0, %a1, %a2, %a3, %a4, %a5
      : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>, tensor<1x4x256x64xf16> -> tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>
}

func.func @bf16_d128_causal_gqa(%a0: tensor<1x8x200x128xbf16>, %a1: tensor<1x2x300x128xbf16>, %a2: tensor<1x2x300x128xbf16>, %a3: tensor<1x8x200x128xbf16>, %a4: tensor<1x8x200xf32>, %a5: tensor<1x8x200x128xbf16>) -> (tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %a0, %a1, %a2, %a3, %a4, %a5 {causal = #attn.causal<bottom_right>}
      : tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x8x200x128xbf16>, tensor<1x8x200xf32>, tensor<1x8x200x128xbf16> -> tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>
  return %dq, %dk, %dv : tensor<1x8x200x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>
}

func.func @f16_d64_dv128_top_left(%a0: tensor<2x2x77x64xf16>, %a1: tensor<2x1x45x64xf16>, %a2: tensor<2x1x45x128xf16>, %a3: tensor<2x2x77x128xf16>, %a4: tensor<2x2x77xf32>, %a5: tensor<2x2x77x128xf16>) -> (tensor<2x2x77x64xf16>, tensor<2x1x45x64xf16>, tensor<2x1x45x128xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %a0, %a1, %a2, %a3, %a4, %a5 {causal = #attn.causal<top_left>}
      : tensor<2x2x77x64xf16>, tensor<2x1x45x64xf16>, tensor<2x1x45x128xf16>, tensor<2x2x77x128xf16>, tensor<2x2x77xf32>, tensor<2x2x77x128xf16> -> tensor<2x2x77x64xf16>, tensor<2x1x45x64xf16>, tensor<2x1x45x128xf16>
  return %dq, %dk, %dv : tensor<2x2x77x64xf16>, tensor<2x1x45x64xf16>, tensor<2x1x45x128xf16>
}

func.func @bf16_d96_dynamic(%a0: tensor<?x2x?x96xbf16>, %a1: tensor<?x2x?x96xbf16>, %a2: tensor<?x2x?x96xbf16>, %a3: tensor<?x2x?x96xbf16>, %a4: tensor<?x2x?xf32>, %a5: tensor<?x2x?x96xbf16>) -> (tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %a0, %a1, %a2, %a3, %a4, %a5
      : tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?xf32>, tensor<?x2x?x96xbf16> -> tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>
  return %dq, %dk, %dv : tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>, tensor<?x2x?x96xbf16>
}
