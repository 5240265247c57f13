// REQUIRES: cuda-toolkit
//
// convert-attn-to-gpu's warp-specialized sm_90a kernel (kernels=wgmma):
// a grid of attn.sdpa configurations lowered as attn-lower-gpu lowers them
// (launch sinking, outlining, attn-gpu-launch-bounds, NVVM) to PTX for
// sm_90a. FileCheck the kernel's structure in its PTX (launch bounds
// .maxntid 384 and .minnctapersm 1, without which ptxas ignores
// setmaxnreg), the producer warpgroup's setmaxnreg.dec 24 and TMA loads
// (cp.async.bulk.tensor) completing on mbarriers (arrive.expect_tx), the
// consumers' setmaxnreg.inc 240, their mbarrier waits (try_wait.parity) and
// releases, Q.K^T on wgmma with both operands in shared memory (two
// descriptors), P.V on wgmma with P in registers ({a0..a3}, V transposed:
// imm-trans-b 1), the named barriers of the ping-pong (bar.sync/bar.arrive
// of 256 threads); on the host, three tensor maps encoded
// (attnCudaEncodeTensorMap) into a 384-byte buffer before the launch, and
// the dynamic shared memory it asks for (Q, two stages of K and V, the
// mbarriers and 1 KiB to align the tiles to the 128-byte swizzle's period:
// at most 227 KiB). Every kernel assembles with ptxas -v for sm_90a: 0
// spill bytes, 168 registers at entry (65536 / 384; the consumers' 240 and
// the producer's 24 are within it, or ptxas would spill), no ptxas warning
// (C7508 "setmaxnreg ignored", wgmma serialization). Ops the kernel does not
// take (D = 80) get the mma.sync kernel, with no diagnostic; dynamic Lq
// also keeps the decode kernels for decoding steps. The SASS is checked in
// hopper-sass.mlir. Nothing here runs on a GPU.
//
// RUN: attn-opt %s -convert-attn-to-gpu="chip=sm_90a kernels=wgmma" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -nvvm-attach-target="chip=sm_90a features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" > %t.mlir
// RUN: %ptx --print < %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --check-prefix=HOST < %t.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90a < %t.mlir | FileCheck %s --check-prefix=PTXAS --implicit-check-not=ptxas:

// bf16, D = 128: 128-key tiles (S and O are 64 registers each).
// PTX-LABEL: .entry bf16_d128_kernel(
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTXAS: @bf16_d128_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// HOST-LABEL: func.func @bf16_d128(
// HOST-COUNT-3: call @attnCudaEncodeTensorMap(
// HOST: gpu.launch_func @bf16_d128_kernel::@bf16_d128_kernel {{.*}} threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c164936_i32
func.func @bf16_d128(%q: tensor<2x8x1024x128xbf16>, %k: tensor<2x8x1024x128xbf16>, %v: tensor<2x8x1024x128xbf16>)
    -> (tensor<2x8x1024x128xbf16>) {
  %o = attn.sdpa %q, %k, %v
      : tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16> -> tensor<2x8x1024x128xbf16>
  return %o : tensor<2x8x1024x128xbf16>
}

// Dynamic B, Lq, Lk (the tensor maps take their sizes at run time), GQA,
// bottom-right causal with lse; a dynamic Lq also keeps the decode kernels
// for Lq * group <= 32 (chosen at run time).
// PTX-LABEL: .entry f16_d64_causal_br_lse_dynamic_kernel(
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTXAS: @f16_d64_causal_br_lse_dynamic_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// HOST-LABEL: func.func @f16_d64_causal_br_lse_dynamic(
// HOST-COUNT-3: call @attnCudaEncodeTensorMap(
// HOST: gpu.launch_func @f16_d64_causal_br_lse_dynamic_kernel::@f16_d64_causal_br_lse_dynamic_kernel {{.*}} threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c83016_i32
func.func @f16_d64_causal_br_lse_dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>)
    -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %l : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// D = 256: 64-key tiles (O alone is 128 registers), Q in four boxes.
// PTX-LABEL: .entry bf16_d256_causal_tl_kernel(
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTXAS: @bf16_d256_causal_tl_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// HOST-LABEL: func.func @bf16_d256_causal_tl(
// HOST-COUNT-3: call @attnCudaEncodeTensorMap(
// HOST: gpu.launch_func @bf16_d256_causal_tl_kernel::@bf16_d256_causal_tl_kernel {{.*}} threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c197704_i32
func.func @bf16_d256_causal_tl(%q: tensor<1x4x300x256xbf16>, %k: tensor<1x4x300x256xbf16>, %v: tensor<1x4x300x256xbf16>)
    -> (tensor<1x4x300x256xbf16>) {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x4x300x256xbf16>, tensor<1x4x300x256xbf16>, tensor<1x4x300x256xbf16> -> tensor<1x4x300x256xbf16>
  return %o : tensor<1x4x300x256xbf16>
}

// Every variant at once (float mask, key lengths, ALiBi, window with
// bottom-right causal, softcap, lse) with dynamic sizes: 64-key tiles.
// PTX-LABEL: .entry bf16_d128_all_variants_kernel(
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTXAS: @bf16_d128_all_variants_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// HOST-LABEL: func.func @bf16_d128_all_variants(
// HOST-COUNT-3: call @attnCudaEncodeTensorMap(
// HOST: gpu.launch_func @bf16_d128_all_variants_kernel::@bf16_d128_all_variants_kernel {{.*}} threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c99400_i32
func.func @bf16_d128_all_variants(%q: tensor<?x4x?x128xbf16>, %k: tensor<?x2x?x128xbf16>, %v: tensor<?x2x?x128xbf16>, %m: tensor<?x1x?x?xbf16>, %kl: tensor<?xi32>, %s: tensor<?x4xf32>)
    -> (tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m) key_lengths(%kl : tensor<?xi32>) alibi_slopes(%s : tensor<?x4xf32>) {causal = #attn.causal<bottom_right>, window = array<i64: 128, 0>, softcap = 20.0 : f32}
      : tensor<?x4x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x2x?x128xbf16>, tensor<?x1x?x?xbf16> -> tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x128xbf16>, tensor<?x4x?xf32>
}

// Dv (64) != D (128), a broadcast bool mask, tails in Lq and Lk.
// PTX-LABEL: .entry f16_d128_bool_mask_dv64_kernel(
// PTX: .maxntid 384, 1, 1
// PTX-NEXT: .minnctapersm 1
// PTX-DAG: mbarrier.init.shared.b64
// PTX-DAG: fence.mbarrier_init.release.cluster
// PTX-DAG: setmaxnreg.dec.sync.aligned.u32 24;
// PTX-DAG: mbarrier.arrive.expect_tx.shared.b64
// PTX-DAG: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: setmaxnreg.inc.sync.aligned.u32 240;
// PTX-DAG: mbarrier.try_wait.parity.shared.b64
// PTX-DAG: mbarrier.arrive.shared.b64
// PTX-DAG: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1,  1, 0,  0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-DAG: wgmma.commit_group.sync.aligned;
// PTX-DAG: wgmma.wait_group.sync.aligned 0;
// PTX-DAG: bar.sync %r{{[0-9]+}}, 256;
// PTX-DAG: bar.arrive %r{{[0-9]+}}, 256;
// PTXAS: @f16_d128_bool_mask_dv64_kernel: 168 registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 16 barriers
// HOST-LABEL: func.func @f16_d128_bool_mask_dv64(
// HOST-COUNT-3: call @attnCudaEncodeTensorMap(
// HOST: gpu.launch_func @f16_d128_bool_mask_dv64_kernel::@f16_d128_bool_mask_dv64_kernel {{.*}} threads in (%c384, %c1, %c1) dynamic_shared_memory_size %c83016_i32
func.func @f16_d128_bool_mask_dv64(%q: tensor<2x4x100x128xf16>, %k: tensor<2x4x77x128xf16>, %v: tensor<2x4x77x64xf16>, %m: tensor<1x1x100x77xi1>)
    -> (tensor<2x4x100x64xf16>) {
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<2x4x100x128xf16>, tensor<2x4x77x128xf16>, tensor<2x4x77x64xf16>, tensor<1x1x100x77xi1> -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}

// D = 80 is not one the sm_90a kernel takes: the mma.sync kernel, no
// diagnostic.
// PTX-LABEL: .entry f16_d80_fallback_kernel(
// PTX-NOT: wgmma
// PTX-NOT: setmaxnreg
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: @f16_d80_fallback_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 1 bytes smem, 1 barriers
// HOST-LABEL: func.func @f16_d80_fallback(
// HOST-NOT: attnCudaEncodeTensorMap
// HOST: gpu.launch_func @f16_d80_fallback_kernel
func.func @f16_d80_fallback(%q: tensor<1x4x100x80xf16>, %k: tensor<1x4x100x80xf16>, %v: tensor<1x4x100x80xf16>)
    -> (tensor<1x4x100x80xf16>) {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x4x100x80xf16>, tensor<1x4x100x80xf16>, tensor<1x4x100x80xf16> -> tensor<1x4x100x80xf16>
  return %o : tensor<1x4x100x80xf16>
}
