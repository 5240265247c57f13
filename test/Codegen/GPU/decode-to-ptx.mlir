// REQUIRES: cuda-toolkit
//
// The split-K decode kernels of convert-attn-to-gpu (static Lq with Lq *
// (Hq / Hkv) <= decode-rows): a grid of decode configurations (bf16 GQA
// with lse and dynamic B/Lk, f16 with a bool mask and both causal
// alignments, f32 with every variant and a float mask, MQA at D = 256, four
// query rows of eight heads: eight row blocks of 4 rows) lowered to PTX for sm_80 and
// sm_90 as in attn-to-ptx.mlir. Each op gives a split kernel (cp.async of
// the K chunk, 16-byte shared reads, warp shuffles, exp2) and a merge kernel
// (exp2 of the splits' lse); every kernel assembles with ptxas -v
// without spills. Host code: the launches (the merge one under splits > 1) and
// the shared memory they ask for, under 48 KiB. Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_80 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefix=PTXAS
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-kernel-outlining -nvvm-attach-target="chip=sm_90 features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS

// PTX-LABEL: PTX of gpu.binary @bf16_gqa_lse_kernel{{$}}
// PTX-DAG: cp.async.{{ca|cg}}.shared.global [{{.*}}], [{{.*}}], 16
// PTX-DAG: cp.async.wait_group 0
// PTX-DAG: ld.shared.v4
// PTX-DAG: shfl.sync.bfly.b32
// PTX-DAG: ex2.approx
// PTX-DAG: fma.rn.f32
// PTX-NOT: mma.sync
// PTX-LABEL: PTX of gpu.binary @bf16_gqa_lse_kernel_0{{$}}
// PTX: .entry bf16_gqa_lse_kernel(
// PTX-DAG: ex2.approx.f32
// PTX-DAG: st.global.b16
// PTXAS-DAG: @bf16_gqa_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @bf16_gqa_lse_kernel_0: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// HOST-LABEL: func.func @bf16_gqa_lse(
// HOST: gpu.launch_func @bf16_gqa_lse_kernel::@bf16_gqa_lse_kernel blocks in ({{.*}}) threads in (%c128, %c1, %c1) dynamic_shared_memory_size %c38976_i32
// HOST: scf.if
// HOST: gpu.launch_func @bf16_gqa_lse_kernel_0::@bf16_gqa_lse_kernel blocks in (%c1, %c32, %{{.*}}) threads in (%c128, %c1, %c1) args
func.func @bf16_gqa_lse(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>)
    -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %o, %l : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}

// PTX-LABEL: PTX of gpu.binary @f16_bool_mask_causal_br_kernel{{$}}
// PTX-DAG: cp.async.{{ca|cg}}.shared.global
// PTX-DAG: ld.global.b8
// PTX-DAG: shfl.sync.bfly.b32
// PTXAS-DAG: @f16_bool_mask_causal_br_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @f16_bool_mask_causal_br_kernel_1: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
func.func @f16_bool_mask_causal_br(%q: tensor<2x8x2x64xf16>, %k: tensor<2x2x1000x64xf16>, %v: tensor<2x2x1000x64xf16>, %m: tensor<2x1x2x1000xi1>)
    -> tensor<2x8x2x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>}
      : tensor<2x8x2x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x1x2x1000xi1> -> tensor<2x8x2x64xf16>
  return %o : tensor<2x8x2x64xf16>
}

// PTX-LABEL: PTX of gpu.binary @f16_causal_tl_lse_kernel{{$}}
// PTXAS-DAG: @f16_causal_tl_lse_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @f16_causal_tl_lse_kernel_2: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
func.func @f16_causal_tl_lse(%q: tensor<1x4x1x96xf16>, %k: tensor<1x4x?x96xf16>, %v: tensor<1x4x?x96xf16>)
    -> (tensor<1x4x1x96xf16>, tensor<1x4x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x4x1x96xf16>, tensor<1x4x?x96xf16>, tensor<1x4x?x96xf16> -> tensor<1x4x1x96xf16>, tensor<1x4x1xf32>
  return %o, %l : tensor<1x4x1x96xf16>, tensor<1x4x1xf32>
}

// PTX-LABEL: PTX of gpu.binary @f32_variants_kernel{{$}}
// PTX-DAG: cp.async.{{ca|cg}}.shared.global [{{.*}}], [{{.*}}], 16
// PTX-DAG: rcp.approx.ftz.f32
// PTX-DAG: cvt.rn.f32.s32
// PTX-DAG: abs.f32
// PTXAS-DAG: @f32_variants_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @f32_variants_kernel_3: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
func.func @f32_variants(%q: tensor<?x4x1x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>,
                        %m: tensor<?x1x1x?xf32>, %kl: tensor<?xi32>, %s: tensor<?x4xf32>)
    -> (tensor<?x4x1x64xf32>, tensor<?x4x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) key_lengths(%kl : tensor<?xi32>) alibi_slopes(%s : tensor<?x4xf32>) {causal = #attn.causal<bottom_right>, window = array<i64: 300, 0>, softcap = 20.0 : f32}
      : tensor<?x4x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x1x1x?xf32> -> tensor<?x4x1x64xf32>, tensor<?x4x1xf32>
  return %o, %l : tensor<?x4x1x64xf32>, tensor<?x4x1xf32>
}

// PTX-LABEL: PTX of gpu.binary @f16_mqa_d256_kernel{{$}}
// PTXAS-DAG: @f16_mqa_d256_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @f16_mqa_d256_kernel_4: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
func.func @f16_mqa_d256(%q: tensor<?x8x1x256xf16>, %k: tensor<?x1x?x256xf16>, %v: tensor<?x1x?x256xf16>)
    -> tensor<?x8x1x256xf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<?x8x1x256xf16>, tensor<?x1x?x256xf16>, tensor<?x1x?x256xf16> -> tensor<?x8x1x256xf16>
  return %o : tensor<?x8x1x256xf16>
}

// PTX-LABEL: PTX of gpu.binary @bf16_rows32_kernel{{$}}
// PTXAS-DAG: @bf16_rows32_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @bf16_rows32_kernel_5: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS: 12 kernels assembled for sm_{{80|90}}: at most {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @bf16_rows32(%q: tensor<1x8x4x128xbf16>, %k: tensor<1x1x?x128xbf16>, %v: tensor<1x1x?x128xbf16>)
    -> tensor<1x8x4x128xbf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x8x4x128xbf16>, tensor<1x1x?x128xbf16>, tensor<1x1x?x128xbf16> -> tensor<1x8x4x128xbf16>
  return %o : tensor<1x8x4x128xbf16>
}
