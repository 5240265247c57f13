// REQUIRES: cuda-toolkit
//
// convert-attn-to-gpu's shared-memory option: with more than the 48 KiB a
// launch gets without opt-in, the tiles stop shrinking to fit 48 KiB. bf16
// at D = 128 keeps block-kv = 64 (at 48 KiB it shrinks to 32: SMALL), and
// D = 256 gets 32-key tiles (16 at 48 KiB; more would spill); block-q = 128
// at D = 256 (512 threads, 128 registers each) is a diagnostic.
// The launches ask for the larger dynamic shared memory (attn's CUDA runtime
// raises the function's limit with cuFuncSetAttribute before such a launch);
// ptxas -v assembles the kernels for sm_90 without spills. Not yet run on a
// GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 shared-memory=232448" | FileCheck %s
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s -convert-attn-to-gpu="chip=sm_90 block-q=128 shared-memory=232448" 2>&1 | FileCheck %s --check-prefix=BQ128
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90 shared-memory=232448" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.sm90.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS

// CHECK-LABEL: func.func @bf16_d128
//       CHECK:   gpu.launch {{.*}} dynamic_shared_memory_size %c69632_i32
//       CHECK:     memref.view {{.*}} to memref<2x64x136xbf16, #gpu.address_space<workgroup>>
// SMALL-LABEL: func.func @bf16_d128
//       SMALL:   gpu.launch {{.*}} dynamic_shared_memory_size %c34816_i32
//       SMALL:     memref.view {{.*}} to memref<2x32x136xbf16, #gpu.address_space<workgroup>>
// SMALL-LABEL: func.func @f16_d256
//       SMALL:   gpu.launch {{.*}} dynamic_shared_memory_size %c{{[0-9]+}}_i32
// CHECK-LABEL: func.func @f16_d256
//       CHECK:   gpu.launch {{.*}} dynamic_shared_memory_size %c67584_i32
//       CHECK:     memref.view {{.*}} to memref<2x32x264xf16, #gpu.address_space<workgroup>>
// BQ128: error: 'attn.sdpa' op convert-attn-to-gpu: D or Dv = 256 takes block-q <= 64 (two warps per 16 rows: at block-q = 128, 512 threads get at most 128 registers each, and the kernel spills)
// HOST-DAG: gpu.launch_func @bf16_d128_kernel::@bf16_d128_kernel {{.*}} dynamic_shared_memory_size %c69632_i32
// PTXAS-DAG: @bf16_d128_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @f16_d256_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
func.func @bf16_d128(%q: tensor<4x16x4096x128xbf16>, %k: tensor<4x16x4096x128xbf16>, %v: tensor<4x16x4096x128xbf16>)
    -> tensor<4x16x4096x128xbf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<4x16x4096x128xbf16>, tensor<4x16x4096x128xbf16>, tensor<4x16x4096x128xbf16> -> tensor<4x16x4096x128xbf16>
  return %o : tensor<4x16x4096x128xbf16>
}

func.func @f16_d256(%q: tensor<1x2x300x256xf16>, %k: tensor<1x2x300x256xf16>, %v: tensor<1x2x300x256xf16>)
    -> tensor<1x2x300x256xf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x300x256xf16>, tensor<1x2x300x256xf16>, tensor<1x2x300x256xf16> -> tensor<1x2x300x256xf16>
  return %o : tensor<1x2x300x256xf16>
}
