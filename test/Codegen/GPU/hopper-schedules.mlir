// REQUIRES: cuda-toolkit
//
// The schedules of convert-attn-to-gpu's sm_90a kernel (kernels=wgmma) on
// the configurations of hopper-to-ptx.mlir, lowered the same way to PTX for
// sm_90a and assembled by ptxas -v. Nothing here runs on a GPU.
//
// softmax-overlap=true: each consumer issues Q.K^T of tile j and P.V of
// tile j - 1 in one turn and waits for one group only (wait_group 1) before
// the softmax of tile j; 0 spill bytes in every configuration at the
// consumers' 240 registers.
//
// RUN: attn-opt %S/hopper-to-ptx.mlir -convert-attn-to-gpu="chip=sm_90a kernels=wgmma softmax-overlap=true" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -nvvm-attach-target="chip=sm_90a features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.overlap.mlir
// RUN: %ptx --print < %t.overlap.mlir | FileCheck %s --check-prefix=OVERLAP
// RUN: %ptx --ptxas %ptxas --arch sm_90a < %t.overlap.mlir | FileCheck %s --check-prefix=OVERLAP-PTXAS --implicit-check-not=ptxas:
//
// persistent=true softmax-overlap=true: on the host, the grid is min(tiles,
// the device's SMs read at launch by attnCudaSmCount) CTAs in one dimension;
// each CTA loops over its tiles. The producer keeps 40 registers and the
// consumers 232 (24 spilled in the producer's loops). ptxas's figures:
// 0 spill bytes at D = 64 and 128 without score work; the D = 256 and
// every-variant configurations spill a few bytes in the consumers at 232
// registers (docs/gpu.md), checked here so that a change shows.
//
// RUN: attn-opt %S/hopper-to-ptx.mlir -convert-attn-to-gpu="chip=sm_90a kernels=wgmma persistent=true softmax-overlap=true" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -nvvm-attach-target="chip=sm_90a features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.both.mlir
// RUN: %ptx --print < %t.both.mlir | FileCheck %s --check-prefix=BOTH
// RUN: FileCheck %s --check-prefix=HOST < %t.both.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90a < %t.both.mlir | FileCheck %s --check-prefix=BOTH-PTXAS --implicit-check-not=ptxas:

// OVERLAP-LABEL: .entry bf16_d128_kernel(
// OVERLAP-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// OVERLAP-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// OVERLAP-DAG: wgmma.wait_group.sync.aligned 1;
// OVERLAP-DAG: wgmma.wait_group.sync.aligned 0;
// OVERLAP-LABEL: .entry f16_d80_fallback_kernel(
// OVERLAP-NOT: wgmma
// OVERLAP: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// OVERLAP-PTXAS: @bf16_d128_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// OVERLAP-PTXAS: @f16_d64_causal_br_lse_dynamic_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// OVERLAP-PTXAS: @bf16_d256_causal_tl_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// OVERLAP-PTXAS: @bf16_d128_all_variants_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// OVERLAP-PTXAS: @f16_d128_bool_mask_dv64_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers

// BOTH-LABEL: .entry bf16_d128_kernel(
// BOTH-DAG: setmaxnreg.dec.sync.aligned.u32 40;
// BOTH-DAG: setmaxnreg.inc.sync.aligned.u32 232;
// BOTH-DAG: %nctaid.x
// BOTH-DAG: wgmma.wait_group.sync.aligned 1;

// BOTH-PTXAS: @bf16_d128_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// BOTH-PTXAS: @f16_d64_causal_br_lse_dynamic_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// BOTH-PTXAS: @bf16_d256_causal_tl_kernel: 168 registers, 24 bytes spill stores, 52 bytes spill loads, 8 bytes stack, 1 bytes smem, 16 barriers
// BOTH-PTXAS: @bf16_d128_all_variants_kernel: 168 registers, 24 bytes spill stores, 64 bytes spill loads, 8 bytes stack, 1 bytes smem, 16 barriers
// BOTH-PTXAS: @f16_d128_bool_mask_dv64_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers

// The grid: 8 query blocks x 8 heads x 2 = 128 tiles at most; the shared
// memory has one more mbarrier (the Q block's release) than without.
// HOST-LABEL: func.func @bf16_d128(
// HOST: %[[SMS:.*]] = call @attnCudaSmCount() : () -> i32
// HOST: %[[N:.*]] = arith.index_castui %[[SMS]] : i32 to index
// HOST: %[[GRID:.*]] = arith.minui %[[N]], %c128 : index
// HOST: gpu.launch_func @bf16_d128_kernel::@bf16_d128_kernel blocks in (%[[GRID]], %c1, %c1) threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c164944_i32
// The decode kernels of the dynamic-Lq op count the SMs at launch too.
// HOST-LABEL: func.func @f16_d64_causal_br_lse_dynamic(
// HOST: call @attnCudaSmCount()
// HOST: gpu.launch_func @f16_d64_causal_br_lse_dynamic_kernel::@f16_d64_causal_br_lse_dynamic_kernel blocks in (%{{.*}}, %c1, %c1)
// HOST: call @attnCudaSmCount()
// HOST: gpu.launch_func @f16_d64_causal_br_lse_dynamic_kernel_0::
// HOST-LABEL: func.func @f16_d80_fallback(
// HOST-NOT: attnCudaSmCount
// HOST: gpu.launch_func @f16_d80_fallback_kernel
