// RUN: attn-opt %s -split-input-file -verify-diagnostics -convert-attn-to-gpu
// Options are checked against every op; one op's diagnostic is enough.
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=NOTSM
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="block-q=40" 2>&1 | FileCheck %s --check-prefix=BLOCKQ
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="block-kv=256" 2>&1 | FileCheck %s --check-prefix=BLOCKKV
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="block-q=128" 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="kv-splits=-1" 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="decode-unroll=3" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="shared-memory=40000" 2>&1 | FileCheck %s --check-prefix=SMEMLOW
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="chip=sm_90 shared-memory=300000" 2>&1 | FileCheck %s --check-prefix=SMEMHIGH
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="shared-memory=50000" 2>&1 | FileCheck %s --check-prefix=SMEMSMALL
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="chip=sm_120 shared-memory=110000" 2>&1 | FileCheck %s --check-prefix=SMEM120
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="kernels=wgmma" 2>&1 | FileCheck %s --check-prefix=WGMMA80
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="chip=sm_90 kernels=wgmma" 2>&1 | FileCheck %s --check-prefix=WGMMA90
// RUN: not attn-opt %s -split-input-file -convert-attn-to-gpu="kernels=hopper" 2>&1 | FileCheck %s --check-prefix=KERNELS

// CHIP: error: 'attn.sdpa' op convert-attn-to-gpu: expected chip sm_XX with XX >= 80 (mma.sync, ldmatrix, cp.async), got 'sm_75'
// NOTSM: error: 'attn.sdpa' op convert-attn-to-gpu: expected chip sm_XX with XX >= 80 (mma.sync, ldmatrix, cp.async), got 'gfx90a'
// BLOCKQ: error: convert-attn-to-gpu: block-q (40) must be a multiple of 16
// UNROLL: error: convert-attn-to-gpu: decode-unroll (3) must be a power of two
// SHARED: error: 'attn.sdpa' op convert-attn-to-gpu: D or Dv = 256 takes block-q <= 64 (two warps per 16 rows: at block-q = 128, 512 threads get at most 128 registers each, and the kernel spills)
// SMEMLOW: error: 'attn.sdpa' op convert-attn-to-gpu: expected shared-memory 0 (48 KiB, no opt-in) or in (49152, 166912] bytes for sm_80, got 40000
// SMEMHIGH: error: convert-attn-to-gpu: shared-memory (300000) must be at most 232448
// SMEM120: error: 'attn.sdpa' op convert-attn-to-gpu: expected shared-memory 0 (48 KiB, no opt-in) or in (49152, 101376] bytes for sm_120, got 110000
// SMEMSMALL: error: 'attn.sdpa' op convert-attn-to-gpu: the shared-memory tiles for D = 256, Dv = 128, block-q = 64 need 59392 bytes, more than the 49984 bytes that shared-memory=50000 leaves
// SPLITS: error: convert-attn-to-gpu: kv-splits (-1) must be >= 0
// BLOCKKV: error: convert-attn-to-gpu: block-kv (256) must be at most 128
// WGMMA80: error: 'attn.sdpa' op convert-attn-to-gpu: kernels=wgmma needs chip=sm_90a (wgmma and setmaxnreg), got 'sm_80'
// WGMMA90: error: 'attn.sdpa' op convert-attn-to-gpu: kernels=wgmma needs chip=sm_90a (wgmma and setmaxnreg), got 'sm_90'
// KERNELS: error: 'attn.sdpa' op convert-attn-to-gpu: expected kernels auto, mma-sync or wgmma, got 'hopper'

func.func @d256(%q: tensor<1x2x64x256xf16>, %k: tensor<1x2x64x256xf16>,
                %v: tensor<1x2x64x256xf16>) -> tensor<1x2x64x256xf16> {
  // D = 256 takes the tensor-core kernel (Q staged in the K/V tiles, Dv
  // split across two warps per 16 rows); block-q = 128 (SHARED above) is
  // refused: 512 threads would spill.
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>,
      tensor<1x2x64x256xf16> -> tensor<1x2x64x256xf16>
  return %o : tensor<1x2x64x256xf16>
}

// -----

func.func @d256_dv128(%q: tensor<1x2x64x256xf16>, %k: tensor<1x2x64x256xf16>,
                      %v: tensor<1x2x64x128xf16>) -> tensor<1x2x64x128xf16> {
  // D = 256 with Dv = 128 fits 48 KiB only at block-q = 32
  // (attn-to-ptx-d256-block-q32.mlir); with shared-memory=50000 neither
  // (SMEMSMALL above).
  // expected-error @below {{convert-attn-to-gpu: the shared-memory tiles for D = 256, Dv = 128, block-q = 64 need 59392 bytes, more than the 49136 bytes of shared memory a launch gets without opt-in (see shared-memory)}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x256xf16>, tensor<1x2x64x256xf16>,
      tensor<1x2x64x128xf16> -> tensor<1x2x64x128xf16>
  return %o : tensor<1x2x64x128xf16>
}

// -----

func.func @dv48(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
                %v: tensor<1x2x64x48xbf16>) -> tensor<1x2x64x48xbf16> {
  // expected-error @below {{convert-attn-to-gpu: head dim Dv (48) is not supported by the 'bf16' tensor-core kernel: expected 32, 64, 80, 96, 128 or 256}}
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>,
      tensor<1x2x64x48xbf16> -> tensor<1x2x64x48xbf16>
  return %o : tensor<1x2x64x48xbf16>
}

// -----

// f32 takes any head dim (the FMA kernel).
func.func @f32_d48(%q: tensor<1x2x64x48xf32>, %k: tensor<1x2x64x48xf32>,
                   %v: tensor<1x2x64x24xf32>) -> tensor<1x2x64x24xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x48xf32>, tensor<1x2x64x48xf32>,
      tensor<1x2x64x24xf32> -> tensor<1x2x64x24xf32>
  return %o : tensor<1x2x64x24xf32>
}

// -----

func.func @d128(%q: tensor<1x2x64x128xf16>, %k: tensor<1x2x64x128xf16>,
                %v: tensor<1x2x64x128xf16>) -> tensor<1x2x64x128xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x128xf16>, tensor<1x2x64x128xf16>,
      tensor<1x2x64x128xf16> -> tensor<1x2x64x128xf16>
  return %o : tensor<1x2x64x128xf16>
}
