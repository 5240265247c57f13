// RUN: attn-opt %s -split-input-file -verify-diagnostics \
// RUN:   -pass-pipeline="builtin.module(gpu.module(attn-gpu-launch-bounds))" | FileCheck %s

// A kernel that resizes its registers gets nvvm.minctasm = 1 (its known
// block size becomes nvvm.maxntid in convert-gpu-to-nvvm); one that does
// not, and a device function, are left as they are.
// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @warp_specialized() kernel attributes {known_block_size = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32}
// CHECK: gpu.func @plain() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// CHECK: gpu.func @helper() {
gpu.module @kernels {
  gpu.func @warp_specialized() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
    nvvm.setmaxregister decrease 24
    gpu.return
  }
  gpu.func @plain() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    gpu.return
  }
  gpu.func @helper() {
    nvvm.setmaxregister increase 240
    gpu.return
  }
}

// -----

gpu.module @unknown_block {
  // expected-error @below {{'gpu.func' op attn-gpu-launch-bounds: a kernel that resizes its registers (nvvm.setmaxregister) needs a known block size for its launch bounds}}
  gpu.func @k() kernel {
    nvvm.setmaxregister increase 240
    gpu.return
  }
}
