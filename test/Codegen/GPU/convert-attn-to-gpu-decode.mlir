// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu | FileCheck %s
// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="chip=sm_90 kv-splits=4" | FileCheck %s --check-prefix=FIXED
// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="decode-rows=0" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="decode-unroll=4" | FileCheck %s --check-prefix=UNROLL
// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="decode-unroll=1" | FileCheck %s --check-prefix=ONE

// Decoding with GQA (Lq * Hq / Hkv = 4 rows): the split-K decode kernels.
// The split count is chosen at run time, min(ceil(32 * 108 / (B * Hkv)),
// ceil(Lk / 512)) on sm_80 (4 with kv-splits=4); the splits' outputs and lse
// are f32 temporaries; the merge kernel runs only with more than one split.

// CHECK-LABEL: func.func @bf16_gqa_decode
//   CHECK-DAG:   %[[C3456:.*]] = arith.constant 3456 : index
//   CHECK-DAG:   %[[C512:.*]] = arith.constant 512 : index
//       CHECK:   %[[WANT:.*]] = arith.ceildivui %[[C3456]], %{{.*}} : index
//       CHECK:   %[[BYKEYS:.*]] = arith.ceildivui %{{.*}}, %[[C512]] : index
//       CHECK:   %[[BYKEYS1:.*]] = arith.maxui %[[BYKEYS]], %{{.*}} : index
//       CHECK:   %[[SPLITS:.*]] = arith.minui %[[WANT]], %[[BYKEYS1]] : index
//       CHECK:   %[[PO:.*]] = memref.alloc(%{{.*}}, %[[SPLITS]]) : memref<?x32x1x?x128xf32>
//       CHECK:   %[[PL:.*]] = memref.alloc(%{{.*}}, %[[SPLITS]]) : memref<?x32x1x?xf32>
//       CHECK:   gpu.launch blocks({{.*}}) in ({{.*}} = %[[SPLITS]], {{.*}} = %{{.*}}, {{.*}} = %{{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}) dynamic_shared_memory_size
//       CHECK:     memref.view {{.*}} to memref<128x136xbf16, #gpu.address_space<workgroup>>
//       CHECK:     memref.view {{.*}} to memref<4x128xf32, #gpu.address_space<workgroup>>
//       CHECK:     scf.for
//       CHECK:       nvgpu.device_async_copy
//       CHECK:       memref.load {{.*}} : memref<128x17xvector<8xbf16>, #gpu.address_space<workgroup>>
//       CHECK:       gpu.shuffle xor
//       CHECK:       math.exp2
//       CHECK:       gpu.barrier
// P.V over the chunk's keys, V read from global memory: 2 keys per
// iteration (decode-unroll), then the last key one by one.
//       CHECK:       scf.for %{{[a-z0-9_]+}} = %c0{{(_[0-9]+)?}} to %[[MAIN:[a-z0-9_]+]] step %c2{{(_[0-9]+)?}} iter_args
// CHECK-COUNT-2:       memref.load %{{.*}} : memref<?x8x?x128xbf16>
//       CHECK:       scf.for %{{[a-z0-9_]+}} = %[[MAIN]] to %{{[a-z0-9_]+}} step %c1{{(_[0-9]+)?}} iter_args
//       CHECK:     memref.store {{.*}}, %[[PO]]
//       CHECK:     memref.store {{.*}}, %[[PL]]
//       CHECK:   %[[MANY:.*]] = arith.cmpi ugt, %[[SPLITS]], %c1
//       CHECK:   scf.if %[[MANY]] {
//       CHECK:     gpu.launch
//       CHECK:       memref.load %[[PL]]
//       CHECK:       memref.load %[[PO]]
//       CHECK:   memref.dealloc %[[PO]]
//       CHECK:   memref.dealloc %[[PL]]
//   CHECK-NOT:   nvgpu.mma.sync

// FIXED-LABEL: func.func @bf16_gqa_decode
//   FIXED-NOT:   arith.ceildivui %c264
//       FIXED:   gpu.launch blocks({{.*}}) in ({{.*}} = %c4,

// decode-unroll=4: the P.V loop takes 4 keys per iteration (their 4 V loads
// first), then the chunk's last keys one by one, from where it stopped.
// UNROLL-LABEL: func.func @bf16_gqa_decode
//       UNROLL:   scf.for %{{[a-z0-9_]+}} = %c0{{(_[0-9]+)?}} to %[[MAIN:[a-z0-9_]+]] step %c4{{(_[0-9]+)?}} iter_args
// UNROLL-COUNT-4:   memref.load %{{.*}} : memref<?x8x?x128xbf16>
//       UNROLL:   scf.for %{{[a-z0-9_]+}} = %[[MAIN]] to %{{[a-z0-9_]+}} step %c1{{(_[0-9]+)?}} iter_args

// decode-unroll=1: one loop over all the chunk's keys, from the first.
// ONE-LABEL: func.func @bf16_gqa_decode
//       ONE:   gpu.barrier
//       ONE:   scf.for %{{[a-z0-9_]+}} = %c0{{(_[0-9]+)?}} to %{{[a-z0-9_]+}} step %c1{{(_[0-9]+)?}} iter_args
//  ONE-NEXT:     arith.addi
//  ONE-NEXT:     memref.load %{{.*}} : memref<?x8x?x128xbf16>
//   ONE-NOT:   step %c2

// Without the decode kernels: the tensor-core kernel, one launch.
// OFF-LABEL: func.func @bf16_gqa_decode
//       OFF:   gpu.launch
//       OFF:     nvvm.mma.sync
//   OFF-NOT:   gpu.launch
func.func @bf16_gqa_decode(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>)
    -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %o, %l : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}

// -----

// A dynamic Lq: the tensor-core kernel when Lq * 4 > 32 at run time, the
// decode kernels (rows of the 4 heads of a K/V head per CTA) otherwise.

// CHECK-LABEL: func.func @f16_dynamic_lq
//       CHECK:   %[[ROWS:.*]] = arith.muli %{{.*}}, %c4 : index
//       CHECK:   %[[MANY:.*]] = arith.cmpi ugt, %[[ROWS]], %c32 : index
//       CHECK:   scf.if %[[MANY]] {
//       CHECK:     gpu.launch
//       CHECK:       nvgpu.mma.sync
//       CHECK:   } else {
//       CHECK:     gpu.launch
//       CHECK:       memref.view {{.*}} to memref<4x64xf32, #gpu.address_space<workgroup>>
//       CHECK:     scf.if
//       CHECK:       gpu.launch
// OFF-LABEL: func.func @f16_dynamic_lq
//       OFF:   gpu.launch
//       OFF:     nvgpu.mma.sync
//   OFF-NOT:   gpu.launch
func.func @f16_dynamic_lq(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>)
    -> tensor<?x8x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// -----

// More rows than decode-rows (Lq = 16, group 4): the tensor-core kernel.

// CHECK-LABEL: func.func @f16_many_rows
//       CHECK:   gpu.launch
//       CHECK:     nvgpu.mma.sync
//   CHECK-NOT:   gpu.launch
// OFF-LABEL: func.func @f16_many_rows
func.func @f16_many_rows(%q: tensor<1x8x16x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>)
    -> tensor<1x8x16x64xf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x8x16x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16> -> tensor<1x8x16x64xf16>
  return %o : tensor<1x8x16x64xf16>
}
