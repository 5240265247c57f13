// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="block-q=96 block-kv=64" | FileCheck %s

// block-q = 96 (6 warps), D = 128: padded rows do not fit 48 KiB with tiles
// of 32 keys or more, so the rows are dense with XOR-swizzled 16-byte chunks
// and the K/V tiles shrink to 16 keys; Q has its own buffer (the V tiles are
// smaller than it).

// CHECK-LABEL: func.func @f16_d128_block_q_96
//   CHECK-DAG:   %[[C192:.*]] = arith.constant 192 : index
//   CHECK-DAG:   %[[SMEM:.*]] = arith.constant 40960 : i32
//       CHECK:   gpu.launch
//  CHECK-SAME:     threads({{.*}}) in ({{.*}} = %[[C192]],
//  CHECK-SAME:     dynamic_shared_memory_size %[[SMEM]]
//       CHECK:     %[[KS:.*]] = memref.view %{{.*}} to memref<2x16x128xf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[VS:.*]] = memref.view %{{.*}} to memref<2x16x128xf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[QS:.*]] = memref.view %{{.*}} to memref<96x128xf16, #gpu.address_space<workgroup>>
//       CHECK:     %[[CHUNK:.*]] = arith.xori
//       CHECK:     %[[COL:.*]] = arith.muli %[[CHUNK]], %{{.*}} : index
//       CHECK:     nvgpu.device_async_copy %{{.*}}, %[[QS]][%{{.*}}, %[[COL]]]
//       CHECK:     scf.for
//       CHECK:       nvgpu.ldmatrix %[[KS]]
//       CHECK:       nvgpu.ldmatrix %[[VS]]{{.*}}transpose = true
func.func @f16_d128_block_q_96(%q: tensor<1x4x300x128xf16>, %k: tensor<1x4x300x128xf16>,
                               %v: tensor<1x4x300x128xf16>) -> tensor<1x4x300x128xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x300x128xf16>, tensor<1x4x300x128xf16>,
      tensor<1x4x300x128xf16> -> tensor<1x4x300x128xf16>
  return %o : tensor<1x4x300x128xf16>
}
