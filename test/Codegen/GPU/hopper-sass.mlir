// REQUIRES: cuda-toolkit, nvdisasm
//
// The SASS of the sm_90a kernels of hopper-to-ptx.mlir (same input, same
// lowering), assembled by ptxas for sm_90a and disassembled by nvdisasm
// (the toolkit's, or PyPI's nvidia-cuda-nvdisasm that scripts/setup.sh
// installs; without one this test is UNSUPPORTED). Per kernel, %ptx --sass
// counts the instructions: every wgmma is an HGMMA inside the main loop
// (D / 16 for Q.K^T and block-kv / 16 for P.V per tile), the TMA loads are
// UTMALDG, the mbarrier operations SYNCS (init, arrive, try-wait), both
// setmaxnreg are USETMAXREG, and nothing goes through local memory (no
// LDL/STL: no spills, no register array indexed at run time). The D = 80
// op's fallback kernel is mma.sync's HMMA. Nothing here runs on a GPU.
//
// RUN: attn-opt %S/hopper-to-ptx.mlir -convert-attn-to-gpu="chip=sm_90a kernels=wgmma" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -nvvm-attach-target="chip=sm_90a features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" \
// RUN: | %ptx --ptxas %ptxas --arch sm_90a --sass %nvdisasm | FileCheck %s

// softmax-overlap=true (hopper-schedules.mlir): the first tile's Q.K^T
// and the last tile's P.V move out of the tile loop (prologue and
// epilogue), so each wgmma appears twice; still no local memory.
// RUN: attn-opt %S/hopper-to-ptx.mlir -convert-attn-to-gpu="chip=sm_90a kernels=wgmma softmax-overlap=true" \
// RUN:   -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   -canonicalize -gpu-launch-sink-index-computations -gpu-kernel-outlining \
// RUN:   -nvvm-attach-target="chip=sm_90a features=+ptx80 O=3" \
// RUN: | attn-opt -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds,convert-nvgpu-to-nvvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-vector-to-llvm,convert-gpu-to-nvvm,convert-nvvm-to-llvm,canonicalize,cse,reconcile-unrealized-casts))" \
// RUN: | attn-opt -gpu-module-to-binary="format=isa toolkit=%cuda_toolkit" \
// RUN: | %ptx --ptxas %ptxas --arch sm_90a --sass %nvdisasm | FileCheck %s --check-prefix=OVERLAP

// OVERLAP: @bf16_d128_kernel: SASS: 32 HGMMA ({{[0-9]+}} in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// OVERLAP: @f16_d64_causal_br_lse_dynamic_kernel: SASS: 24 HGMMA ({{[0-9]+}} in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// OVERLAP: @bf16_d256_causal_tl_kernel: SASS: 40 HGMMA ({{[0-9]+}} in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// OVERLAP: @bf16_d128_all_variants_kernel: SASS: 24 HGMMA (12 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// OVERLAP: @f16_d128_bool_mask_dv64_kernel: SASS: 24 HGMMA ({{[0-9]+}} in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,

// CHECK: @bf16_d128_kernel: SASS: 16 HGMMA (16 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// CHECK: @f16_d64_causal_br_lse_dynamic_kernel: SASS: 12 HGMMA (12 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// CHECK: @bf16_d256_causal_tl_kernel: SASS: 20 HGMMA (20 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// CHECK: @bf16_d128_all_variants_kernel: SASS: 12 HGMMA (12 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// CHECK: @f16_d128_bool_mask_dv64_kernel: SASS: 12 HGMMA (12 in loops), {{[1-9][0-9]*}} UTMALDG, {{[1-9][0-9]*}} SYNCS, 2 USETMAXREG, 0 HMMA, 0 LDL, 0 STL,
// CHECK: @f16_d80_fallback_kernel: SASS: 0 HGMMA (0 in loops), 0 UTMALDG, 0 SYNCS, 0 USETMAXREG, {{[1-9][0-9]*}} HMMA, 0 LDL, 0 STL,
