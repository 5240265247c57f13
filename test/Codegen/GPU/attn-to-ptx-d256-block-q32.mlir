// REQUIRES: cuda-toolkit
//
// D = 256 with Dv = 128 (and the reverse) on tensor cores: with Dv < 256
// the K/V tiles that hold the Q block need more than 48 KiB at block-q = 64
// (a diagnostic, invalid.mlir's SHARED), so block-q = 32: two warps per 16
// rows (D or Dv = 256), 128 threads. Lowered to PTX for sm_80 and sm_90 as
// in attn-to-ptx.mlir; ptxas -v: no spills, at most 255 registers. Nothing
// here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="block-q=32" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 block-q=32" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=TOTAL

// PTX-LABEL: .entry f16_d256_dv128_kernel(
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d256_dv128_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @f16_d256_dv128_kernel::@f16_d256_dv128_kernel {{.*}} threads in (%c128{{.*}}dynamic_shared_memory_size
func.func @f16_d256_dv128(%q: tensor<1x2x100x256xf16>, %k: tensor<1x2x100x256xf16>, %v: tensor<1x2x100x128xf16>)
    -> (tensor<1x2x100x128xf16>) {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x100x256xf16>, tensor<1x2x100x256xf16>, tensor<1x2x100x128xf16> -> tensor<1x2x100x128xf16>
  return %o : tensor<1x2x100x128xf16>
}

// PTX-LABEL: .entry bf16_d128_dv256_causal_kernel(
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d128_dv256_causal_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @bf16_d128_dv256_causal_kernel::@bf16_d128_dv256_causal_kernel {{.*}} threads in (%c128{{.*}}dynamic_shared_memory_size
func.func @bf16_d128_dv256_causal(%q: tensor<1x2x100x128xbf16>, %k: tensor<1x2x100x128xbf16>, %v: tensor<1x2x100x256xbf16>)
    -> (tensor<1x2x100x256xbf16>) {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x2x100x128xbf16>, tensor<1x2x100x128xbf16>, tensor<1x2x100x256xbf16> -> tensor<1x2x100x256xbf16>
  return %o : tensor<1x2x100x256xbf16>
}

// TOTAL: 2 kernels assembled for sm_90: at most {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
