// REQUIRES: cuda-toolkit
//
// A grid of attn.sdpa configurations lowered through convert-attn-to-gpu and
// an explicit NVVM pass list to PTX (gpu-module-to-binary format=isa), for
// sm_80 and sm_90. FileCheck the PTX for the tensor-core instructions
// (mma.sync m16n8k16, ldmatrix, cp.async) and assemble every kernel with
// ptxas -v: no spills, at most 255 registers. The tiles are in dynamic
// shared memory (16-byte aligned; ptxas counts only the 1-byte symbol):
// HOST checks the bytes each launch asks for, all under 48 KiB.
// Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefixes=PTXAS,PTXAS80
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS

// PTX-LABEL: .entry f16_d64_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d64_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d64_kernel::@f16_d64_kernel {{.*}} dynamic_shared_memory_size %c36864_i32
func.func @f16_d64(%q: tensor<2x8x256x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x64xf16>)
    -> (tensor<2x8x256x64xf16>) {
  %o = attn.sdpa %q, %k, %v 
      : tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x64xf16> -> tensor<2x8x256x64xf16>
  return %o : tensor<2x8x256x64xf16>
}

// PTX-LABEL: .entry f16_d128_causal_dynamic_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d128_causal_dynamic_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d128_causal_dynamic_kernel::@f16_d128_causal_dynamic_kernel {{.*}} dynamic_shared_memory_size %c34816_i32
func.func @f16_d128_causal_dynamic(%q: tensor<?x8x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>)
    -> (tensor<?x8x?x128xf16>) {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

// PTX-LABEL: .entry bf16_d64_causal_br_gqa_lse_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d64_causal_br_gqa_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @bf16_d64_causal_br_gqa_lse_kernel::@bf16_d64_causal_br_gqa_lse_kernel {{.*}} dynamic_shared_memory_size %c36864_i32
func.func @bf16_d64_causal_br_gqa_lse(%q: tensor<2x8x200x64xbf16>, %k: tensor<2x2x300x64xbf16>, %v: tensor<2x2x300x64xbf16>)
    -> (tensor<2x8x200x64xbf16>, tensor<2x8x200xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<2x8x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16> -> tensor<2x8x200x64xbf16>, tensor<2x8x200xf32>
  return %o, %l : tensor<2x8x200x64xbf16>, tensor<2x8x200xf32>
}

// PTX-LABEL: .entry bf16_d128_bool_mask_lse_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d128_bool_mask_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @bf16_d128_bool_mask_lse_kernel::@bf16_d128_bool_mask_lse_kernel {{.*}} dynamic_shared_memory_size %c34816_i32
func.func @bf16_d128_bool_mask_lse(%q: tensor<2x4x100x128xbf16>, %k: tensor<2x4x77x128xbf16>, %v: tensor<2x4x77x128xbf16>, %m: tensor<1x1x100x77xi1>)
    -> (tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) 
      : tensor<2x4x100x128xbf16>, tensor<2x4x77x128xbf16>, tensor<2x4x77x128xbf16>, tensor<1x1x100x77xi1> -> tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>
  return %o, %l : tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>
}

// PTX-LABEL: .entry f16_d64_float_mask_dynamic_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d64_float_mask_dynamic_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d64_float_mask_dynamic_kernel::@f16_d64_float_mask_dynamic_kernel {{.*}} dynamic_shared_memory_size %c36864_i32
func.func @f16_d64_float_mask_dynamic(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>, %m: tensor<?x1x?x?xf16>)
    -> (tensor<?x4x?x64xf16>) {
  %o = attn.sdpa %q, %k, %v mask(%m) {scale = 0.125 : f32}
      : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x1x?x?xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

// PTX-LABEL: .entry f16_d80_f32_mask_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d80_f32_mask_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d80_f32_mask_kernel::@f16_d80_f32_mask_kernel {{.*}} dynamic_shared_memory_size %c45056_i32
func.func @f16_d80_f32_mask(%q: tensor<1x4x100x80xf16>, %k: tensor<1x4x100x80xf16>, %v: tensor<1x4x100x80xf16>, %m: tensor<1x4x100x100xf32>)
    -> (tensor<1x4x100x80xf16>, tensor<1x4x100xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) 
      : tensor<1x4x100x80xf16>, tensor<1x4x100x80xf16>, tensor<1x4x100x80xf16>, tensor<1x4x100x100xf32> -> tensor<1x4x100x80xf16>, tensor<1x4x100xf32>
  return %o, %l : tensor<1x4x100x80xf16>, tensor<1x4x100xf32>
}

// PTX-LABEL: .entry bf16_d96_dv64_causal_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d96_dv64_causal_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @bf16_d96_dv64_causal_kernel::@bf16_d96_dv64_causal_kernel {{.*}} dynamic_shared_memory_size %c45056_i32
func.func @bf16_d96_dv64_causal(%q: tensor<1x4x128x96xbf16>, %k: tensor<1x4x128x96xbf16>, %v: tensor<1x4x128x64xbf16>)
    -> (tensor<1x4x128x64xbf16>) {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x4x128x96xbf16>, tensor<1x4x128x96xbf16>, tensor<1x4x128x64xbf16> -> tensor<1x4x128x64xbf16>
  return %o : tensor<1x4x128x64xbf16>
}

// PTX-LABEL: .entry f16_d32_mqa_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d32_mqa_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d32_mqa_kernel::@f16_d32_mqa_kernel {{.*}} dynamic_shared_memory_size %c20480_i32
func.func @f16_d32_mqa(%q: tensor<4x16x64x32xf16>, %k: tensor<4x1x1024x32xf16>, %v: tensor<4x1x1024x32xf16>)
    -> (tensor<4x16x64x32xf16>) {
  %o = attn.sdpa %q, %k, %v 
      : tensor<4x16x64x32xf16>, tensor<4x1x1024x32xf16>, tensor<4x1x1024x32xf16> -> tensor<4x16x64x32xf16>
  return %o : tensor<4x16x64x32xf16>
}

// PTX-LABEL: .entry f16_d128_float_mask_br_lse_dynamic_kernel(
// PTX: .shared .align 16 .b8 __dynamic_shmem__0;
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d128_float_mask_br_lse_dynamic_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST: gpu.launch_func @f16_d128_float_mask_br_lse_dynamic_kernel::@f16_d128_float_mask_br_lse_dynamic_kernel {{.*}} dynamic_shared_memory_size %c34816_i32
func.func @f16_d128_float_mask_br_lse_dynamic(%q: tensor<?x8x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>, %m: tensor<?x1x?x?xf32>)
    -> (tensor<?x8x?x128xf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>}
      : tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x1x?x?xf32> -> tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
}

// PTX-LABEL: .entry f32_d64_causal_mask_lse_kernel(
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix
// PTX-NOT: cp.async
// PTX: fma.rn.f32
// PTX-DAG: ex2.approx
// PTXAS: @f32_d64_causal_mask_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @f32_d64_causal_mask_lse(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>, %m: tensor<?x1x?x?xi1>)
    -> (tensor<?x4x?x64xf32>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>}
      : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x1x?x?xi1> -> tensor<?x4x?x64xf32>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x64xf32>, tensor<?x4x?xf32>
}

// PTX-LABEL: .entry f32_d256_kernel(
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix
// PTX-NOT: cp.async
// PTX: fma.rn.f32
// PTX-DAG: ex2.approx
// PTXAS: @f32_d256_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @f32_d256(%q: tensor<1x2x100x256xf32>, %k: tensor<1x2x100x256xf32>, %v: tensor<1x2x100x256xf32>)
    -> (tensor<1x2x100x256xf32>) {
  %o = attn.sdpa %q, %k, %v 
      : tensor<1x2x100x256xf32>, tensor<1x2x100x256xf32>, tensor<1x2x100x256xf32> -> tensor<1x2x100x256xf32>
  return %o : tensor<1x2x100x256xf32>
}

// For sm_80 every kernel of the file, the decode kernels of the dynamic-Lq
// functions too (their `_N` kernels are not named above), assembles without
// spills. Not for sm_90: there the split-K decode kernel of
// f16_d128_float_mask_br_lse_dynamic (`_4`) spills 16 bytes at 96
// registers (8 with decode-unroll=1; the kernel passes the device check).
// The cause is ptxas's occupancy heuristic, not a limit: under `.maxntid
// 128` alone, ptxas -O2/-O3 for sm_90 holds the kernel at 96 registers (5
// CTAs of 128 threads per SM) and spills 16 bytes; -O1 fits the same 96
// without spills, and without `.maxntid` (106 registers) or with
// `.minnctapersm 1` beside it (114) -O3 spills nothing either, at 4 CTAs
// per SM by registers; sm_80 takes 95 registers without spills. Which one
// is faster is for the device check to say: the split kernel is limited to
// 5 CTAs per SM by shared memory anyway (ncu, H200 run 5).
// PTXAS80: 19 kernels assembled for sm_80: at most {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
