// decode-rows=0: the tensor-core (or f32) kernel alone; the split-K decode
// kernels are tested in decode-to-ptx.mlir, convert-attn-to-gpu-decode.mlir
// and attn-lower-gpu-decode.mlir.
// REQUIRES: cuda-toolkit
//
// D = 256 on tensor cores (convert-attn-to-gpu): Q is staged in the K and
// V tiles (16 keys each) before the first of them is loaded, and at Dv = 256
// two warps share 16 query rows, each accumulating 128 value columns (256
// threads per 64 rows). Lowered to PTX for sm_80 and sm_90 as in
// attn-to-ptx.mlir: FileCheck the tensor-core instructions, and ptxas -v
// assembles every kernel without spills in at most 255 registers, in 33792
// bytes of dynamic shared memory (HOST). Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="decode-rows=0" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
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

// PTX-LABEL: .entry f16_d256_causal_br_lse_dynamic_kernel(
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: cp.async.wait_group 0
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTXAS: @f16_d256_causal_br_lse_dynamic_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @f16_d256_causal_br_lse_dynamic_kernel::@f16_d256_causal_br_lse_dynamic_kernel {{.*}} threads in (%c256{{.*}}dynamic_shared_memory_size %c33792_i32
func.func @f16_d256_causal_br_lse_dynamic(%q: tensor<?x4x?x256xf16>, %k: tensor<?x4x?x256xf16>, %v: tensor<?x4x?x256xf16>)
    -> (tensor<?x4x?x256xf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<?x4x?x256xf16>, tensor<?x4x?x256xf16>, tensor<?x4x?x256xf16> -> tensor<?x4x?x256xf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x256xf16>, tensor<?x4x?xf32>
}

// PTX-LABEL: .entry bf16_d256_gqa_tails_kernel(
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d256_gqa_tails_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
// HOST: gpu.launch_func @bf16_d256_gqa_tails_kernel::@bf16_d256_gqa_tails_kernel {{.*}} threads in (%c256{{.*}}dynamic_shared_memory_size %c33792_i32
func.func @bf16_d256_gqa_tails(%q: tensor<1x4x130x256xbf16>, %k: tensor<1x2x70x256xbf16>, %v: tensor<1x2x70x256xbf16>)
    -> (tensor<1x4x130x256xbf16>) {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x4x130x256xbf16>, tensor<1x2x70x256xbf16>, tensor<1x2x70x256xbf16> -> tensor<1x4x130x256xbf16>
  return %o : tensor<1x4x130x256xbf16>
}

// With every score variant and a bool mask.
// PTX-LABEL: .entry bf16_d256_variants_mask_kernel(
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTXAS: @bf16_d256_variants_mask_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem
func.func @bf16_d256_variants_mask(%q: tensor<2x4x130x256xbf16>, %k: tensor<2x4x70x256xbf16>, %v: tensor<2x4x70x256xbf16>, %m: tensor<2x1x1x70xi1>, %kl: tensor<2xi32>, %s: tensor<4xf32>)
    -> (tensor<2x4x130x256xbf16>) {
  %o = attn.sdpa %q, %k, %v mask(%m) key_lengths(%kl : tensor<2xi32>) alibi_slopes(%s : tensor<4xf32>) {window = array<i64: 30, 30>, softcap = 30.0 : f32}
      : tensor<2x4x130x256xbf16>, tensor<2x4x70x256xbf16>, tensor<2x4x70x256xbf16>, tensor<2x1x1x70xi1> -> tensor<2x4x130x256xbf16>
  return %o : tensor<2x4x130x256xbf16>
}

// TOTAL: 3 kernels assembled for sm_90: at most {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
