// decode-rows=0: the tensor-core (or f32) kernel alone; the split-K decode
// kernels are tested in decode-to-ptx.mlir, convert-attn-to-gpu-decode.mlir
// and attn-lower-gpu-decode.mlir.
// REQUIRES: cuda-toolkit
//
// The attention variants in the fused GPU kernels (convert-attn-to-gpu): a
// grid of window (with both causal alignments and alone), per-sequence key
// lengths, softcap and ALiBi ([Hq] and [B, Hq] slopes) configurations, and
// all of them at once, lowered to PTX for sm_80 and sm_90 as in
// attn-to-ptx.mlir. FileCheck the tensor-core instructions (mma.sync,
// ldmatrix, cp.async) and each variant's code: the softcap's tanh
// (ex2.approx and rcp.approx.ftz, no tanh.approx), ALiBi's distance (an
// s32 -> f32 conversion and an absolute value), the key-length load; every
// kernel assembles with ptxas -v without spills in at most 255 registers,
// its tiles in the dynamic shared memory the launch asks for (HOST, < 48
// KiB). Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="decode-rows=0" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | not grep tanh.approx
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 decode-rows=0" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=TOTAL

// PTX-LABEL: .entry f16_d64_window_causal_tl_kernel(
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: ex2.approx
// PTXAS: @f16_d64_window_causal_tl_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @f16_d64_window_causal_tl_kernel::@f16_d64_window_causal_tl_kernel {{.*}} dynamic_shared_memory_size %c36864_i32
func.func @f16_d64_window_causal_tl(%q: tensor<2x4x300x64xf16>, %k: tensor<2x4x300x64xf16>, %v: tensor<2x4x300x64xf16>)
    -> (tensor<2x4x300x64xf16>, tensor<2x4x300xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, window = array<i64: 100, -1>}
      : tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16>, tensor<2x4x300x64xf16> -> tensor<2x4x300x64xf16>, tensor<2x4x300xf32>
  return %o, %l : tensor<2x4x300x64xf16>, tensor<2x4x300xf32>
}

// PTX-LABEL: .entry bf16_d128_window_br_dynamic_kernel(
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d128_window_br_dynamic_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @bf16_d128_window_br_dynamic_kernel::@bf16_d128_window_br_dynamic_kernel {{.*}} dynamic_shared_memory_size %c34816_i32
func.func @bf16_d128_window_br_dynamic(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>)
    -> (tensor<?x8x?x128xbf16>) {
  %o = attn.sdpa %q, %k, %v {window = array<i64: 256, 32>}
      : tensor<?x8x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16> -> tensor<?x8x?x128xbf16>
  return %o : tensor<?x8x?x128xbf16>
}

// PTX-LABEL: .entry f16_d128_key_lengths_causal_br_kernel(
// PTX-DAG: ld.global.{{.*}}32
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d128_key_lengths_causal_br_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @f16_d128_key_lengths_causal_br_kernel::@f16_d128_key_lengths_causal_br_kernel {{.*}} dynamic_shared_memory_size %c34816_i32
func.func @f16_d128_key_lengths_causal_br(%q: tensor<?x8x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>, %kl: tensor<?xi32>)
    -> (tensor<?x8x?x128xf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v key_lengths(%kl : tensor<?xi32>) {causal = #attn.causal<bottom_right>}
      : tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
}

// PTX-LABEL: .entry bf16_d64_softcap_lse_kernel(
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: ex2.approx
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d64_softcap_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @bf16_d64_softcap_lse_kernel::@bf16_d64_softcap_lse_kernel {{.*}} dynamic_shared_memory_size %c36864_i32
func.func @bf16_d64_softcap_lse(%q: tensor<1x8x256x64xbf16>, %k: tensor<1x8x256x64xbf16>, %v: tensor<1x8x256x64xbf16>)
    -> (tensor<1x8x256x64xbf16>, tensor<1x8x256xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {softcap = 30.0 : f32}
      : tensor<1x8x256x64xbf16>, tensor<1x8x256x64xbf16>, tensor<1x8x256x64xbf16> -> tensor<1x8x256x64xbf16>, tensor<1x8x256xf32>
  return %o, %l : tensor<1x8x256x64xbf16>, tensor<1x8x256xf32>
}

// PTX-LABEL: .entry f16_d128_softcap_causal_kernel(
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d128_softcap_causal_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
func.func @f16_d128_softcap_causal(%q: tensor<1x4x200x128xf16>, %k: tensor<1x4x200x128xf16>, %v: tensor<1x4x200x128xf16>)
    -> (tensor<1x4x200x128xf16>) {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>, softcap = 50.0 : f32}
      : tensor<1x4x200x128xf16>, tensor<1x4x200x128xf16>, tensor<1x4x200x128xf16> -> tensor<1x4x200x128xf16>
  return %o : tensor<1x4x200x128xf16>
}

// PTX-LABEL: .entry f16_d64_alibi_h_gqa_causal_br_kernel(
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: abs.f32
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d64_alibi_h_gqa_causal_br_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
func.func @f16_d64_alibi_h_gqa_causal_br(%q: tensor<2x8x100x64xf16>, %k: tensor<2x2x130x64xf16>, %v: tensor<2x2x130x64xf16>, %s: tensor<8xf32>)
    -> (tensor<2x8x100x64xf16>) {
  %o = attn.sdpa %q, %k, %v alibi_slopes(%s : tensor<8xf32>) {causal = #attn.causal<bottom_right>}
      : tensor<2x8x100x64xf16>, tensor<2x2x130x64xf16>, tensor<2x2x130x64xf16> -> tensor<2x8x100x64xf16>
  return %o : tensor<2x8x100x64xf16>
}

// PTX-LABEL: .entry bf16_d96_alibi_bh_kernel(
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: abs.f32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d96_alibi_bh_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
func.func @bf16_d96_alibi_bh(%q: tensor<2x4x77x96xbf16>, %k: tensor<2x4x99x96xbf16>, %v: tensor<2x4x99x96xbf16>, %s: tensor<2x4xf32>)
    -> (tensor<2x4x77x96xbf16>) {
  %o = attn.sdpa %q, %k, %v alibi_slopes(%s : tensor<2x4xf32>)
      : tensor<2x4x77x96xbf16>, tensor<2x4x99x96xbf16>, tensor<2x4x99x96xbf16> -> tensor<2x4x77x96xbf16>
  return %o : tensor<2x4x77x96xbf16>
}

// Every variant at once, with a float mask and lse, at D = 128: the
// register budget's worst case.
// PTX-LABEL: .entry bf16_d128_all_variants_kernel(
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: abs.f32
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d128_all_variants_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
func.func @bf16_d128_all_variants(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %m: tensor<?x1x?x?xbf16>, %kl: tensor<?xi32>, %s: tensor<?x4xf32>)
    -> (tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) key_lengths(%kl : tensor<?xi32>) alibi_slopes(%s : tensor<?x4xf32>) {causal = #attn.causal<bottom_right>, window = array<i64: 128, 0>, softcap = 20.0 : f32}
      : tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x1x?x?xbf16> -> tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>
}

// The f32 FMA kernel takes every variant too.
// PTX-LABEL: .entry f32_d64_all_variants_kernel(
// PTX-NOT: mma.sync
// PTX-DAG: fma.rn.f32
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: cvt.rn.f32.s32
// PTXAS: @f32_d64_all_variants_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @f32_d64_all_variants(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %kl: tensor<?xi32>, %s: tensor<4xf32>)
    -> (tensor<?x4x?x64xf32>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v key_lengths(%kl : tensor<?xi32>) alibi_slopes(%s : tensor<4xf32>) {causal = #attn.causal<top_left>, window = array<i64: 50, 10>, softcap = 20.0 : f32}
      : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x4x?x64xf32>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x64xf32>, tensor<?x4x?xf32>
}

// TOTAL: 9 kernels assembled for sm_90: at most {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
