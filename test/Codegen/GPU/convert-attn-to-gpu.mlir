// decode-rows=0: the tensor-core (or f32) kernel alone; the split-K decode
// kernels are tested in decode-to-ptx.mlir, convert-attn-to-gpu-decode.mlir
// and attn-lower-gpu-decode.mlir.
// RUN: attn-opt %s -split-input-file -convert-attn-to-gpu="decode-rows=0" | FileCheck %s

// f16, D = 64: the FA2 kernel. Buffers around a gpu.launch of 4 warps per 64
// query rows; Q and double-buffered K/V tiles in workgroup memory, filled by
// cp.async; ldmatrix fragments (V transposed); mma.sync; quad shuffles; exp2.

// CHECK-LABEL: func.func @f16_d64
//  CHECK-SAME:   (%[[Q:.*]]: tensor<2x8x128x64xf16>, %[[K:.*]]: tensor<2x8x256x64xf16>, %[[V:.*]]: tensor<2x8x256x64xf16>)
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   CHECK-DAG:   %[[C128:.*]] = arith.constant 128 : index
//   CHECK-DAG:   %[[SMEM:.*]] = arith.constant 36864 : i32
//   CHECK-DAG:   %[[QB:.*]] = bufferization.to_buffer %[[Q]] : tensor<2x8x128x64xf16> to memref<2x8x128x64xf16>
//   CHECK-DAG:   %[[KB:.*]] = bufferization.to_buffer %[[K]]
//   CHECK-DAG:   %[[VB:.*]] = bufferization.to_buffer %[[V]]
//       CHECK:   %[[OUT:.*]] = memref.alloc() : memref<2x8x128x64xf16>
//       CHECK:   gpu.launch blocks({{.*}}) in ({{.*}} = %[[C2]], {{.*}} = %[[C8]], {{.*}} = %[[C2]])
//  CHECK-SAME:     threads({{.*}}) in ({{.*}} = %[[C128]],
//  CHECK-SAME:     dynamic_shared_memory_size %[[SMEM]]
//       CHECK:     %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
//   CHECK-DAG:     %[[KS:.*]] = memref.view %[[BASE]][%[[C0:.*]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
//   CHECK-DAG:     %[[VS:.*]] = memref.view %[[BASE]][%[[C18432:.*]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
//   CHECK-DAG:     %[[QS:.*]] = memref.view %[[BASE]][%[[C18432]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x72xf16, #gpu.address_space<workgroup>>
//       CHECK:     nvgpu.device_async_copy %[[QB]][{{.*}}], %[[QS]][{{.*}}], 8, %{{.*}} : memref<2x8x128x64xf16> to memref<64x72xf16, #gpu.address_space<workgroup>>
//       CHECK:     nvgpu.device_async_copy %[[KB]][{{.*}}], %[[KS]][
//       CHECK:     nvvm.cp.async.commit.group
//       CHECK:     nvvm.cp.async.wait.group 0
//       CHECK:     gpu.barrier
//       CHECK:     nvgpu.ldmatrix %[[QS]][{{.*}}] {numTiles = 4 : i32, transpose = false} : memref<64x72xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
//       CHECK:     gpu.barrier
//       CHECK:     nvgpu.device_async_copy %[[VB]][{{.*}}], %[[VS]][
//       CHECK:     nvvm.cp.async.commit.group
//       CHECK:     scf.for
//       CHECK:       scf.if
//       CHECK:         nvgpu.device_async_copy %[[KB]]
//       CHECK:       nvvm.cp.async.commit.group
//       CHECK:       nvvm.cp.async.wait.group 1
//       CHECK:       gpu.barrier
//       CHECK:       nvgpu.ldmatrix %[[KS]][{{.*}}] {numTiles = 2 : i32, transpose = false} : memref<2x64x72xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
//       CHECK:       nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
//   CHECK-NOT:       scf.if
//       CHECK:       gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
//       CHECK:       gpu.shuffle  xor
//       CHECK:       math.exp2
//       CHECK:       arith.truncf %{{.*}} : f32 to f16
//       CHECK:       nvgpu.ldmatrix %[[VS]][{{.*}}] {numTiles = 2 : i32, transpose = true} : memref<2x64x72xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
//       CHECK:       nvgpu.mma.sync
//       CHECK:       gpu.barrier
//       CHECK:       scf.yield
//       CHECK:     memref.store %{{.*}}, %[[OUT]][{{.*}}] : memref<2x8x128x64xf16>
//       CHECK:     gpu.terminator
//       CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<2x8x128x64xf16> to tensor<2x8x128x64xf16>
//       CHECK:   return %[[R]]
func.func @f16_d64(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>,
                   %v: tensor<2x8x256x64xf16>) -> tensor<2x8x128x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>,
      tensor<2x8x256x64xf16> -> tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// Causal (top-left), dynamic B/Lq/Lk, GQA: no launch for an empty grid; the
// loop stops at the last key the block's last row sees; only tiles past the
// ones every row sees fully are masked (scf.if on the tile index); K/V head
// h / 2. D = 64 rows are padded to 72 elements (no bank conflicts).

// CHECK-LABEL: func.func @f16_causal_gqa_dynamic
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C64:.*]] = arith.constant 64 : index
//       CHECK:   %[[LQ:.*]] = memref.dim %{{.*}}, %[[C2]] : memref<?x4x?x64xf16>
//       CHECK:   %[[LK:.*]] = memref.dim %{{.*}}, %[[C2]] : memref<?x2x?x64xf16>
//       CHECK:   %[[NONEMPTY:.*]] = arith.andi
//       CHECK:   scf.if %[[NONEMPTY]] {
//  CHECK-NEXT:     gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in
//       CHECK:     %[[KVH:.*]] = arith.divui %[[BY]], %[[C2]] : index
//       CHECK:     %[[QSTART:.*]] = arith.muli %[[BX]], %[[C64]] : index
//       CHECK:     %[[ROWEND0:.*]] = arith.addi %[[QSTART]], %[[C64]] : index
//       CHECK:     %[[ROWEND:.*]] = arith.minui %[[ROWEND0]], %[[LQ]] : index
//       CHECK:     %[[KEYEND0:.*]] = arith.maxsi %[[ROWEND]], %[[C0]] : index
//       CHECK:     %[[KEYEND:.*]] = arith.minsi %[[KEYEND0]], %[[LK]] : index
//       CHECK:     %[[TILES:.*]] = arith.ceildivui %[[KEYEND]], %[[C64]] : index
//       CHECK:     %[[FULL:.*]] = arith.divui %[[LK]], %[[C64]] : index
//       CHECK:     %[[FIRST:.*]] = arith.addi %[[QSTART]], %[[C1]] : index
//       CHECK:     %[[T0:.*]] = arith.floordivsi %[[FIRST]], %[[C64]] : index
//       CHECK:     %[[UNMASKED:.*]] = arith.minsi %[[T0]], %[[FULL]] : index
//       CHECK:     nvgpu.device_async_copy %{{.*}}[%{{.*}}, %[[KVH]], %{{.*}}, %{{.*}}]
//       CHECK:     scf.for %[[T:.*]] = %[[C0]] to %[[TILES]] step %[[C1]]
//       CHECK:       nvgpu.mma.sync
//       CHECK:       %[[MASKED:.*]] = arith.cmpi sge, %[[T]], %[[UNMASKED]] : index
//       CHECK:       scf.if %[[MASKED]] -> (f32,
//       CHECK:         arith.cmpi sle
//       CHECK:         arith.select
//       CHECK:       } else {
//       CHECK:       math.exp2
func.func @f16_causal_gqa_dynamic(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                                  %v: tensor<?x2x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>
      -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}

// -----

// Bottom-right causality shifts the diagonal by Lk - Lq.

// CHECK-LABEL: func.func @f16_causal_bottom_right
//       CHECK:   gpu.launch
//       CHECK:     %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
//       CHECK:     arith.addi %{{.*}}, %[[SHIFT]] : index
//       CHECK:     scf.for
func.func @f16_causal_bottom_right(%q: tensor<1x2x?x64xf16>, %k: tensor<1x2x?x64xf16>,
                                   %v: tensor<1x2x?x64xf16>) -> tensor<1x2x?x64xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
      -> tensor<1x2x?x64xf16>
  return %o : tensor<1x2x?x64xf16>
}

// -----

// bf16, D = 128, an i1 mask broadcast over batch and heads and an lse: the
// K/V tiles shrink to 32 keys (padded rows) to fit 48 KiB, Q staged in the
// V tiles; mma through nvvm.mma.sync on i32 bitcasts; every tile masked;
// lse = (m + log2 l) ln 2.

// CHECK-LABEL: func.func @bf16_d128_mask_lse
//       CHECK:   %[[MB:.*]] = bufferization.to_buffer %{{.*}} : tensor<1x1x100x200xi1> to memref<1x1x100x200xi1>
//       CHECK:   %[[OUT:.*]] = memref.alloc() : memref<2x4x100x128xbf16>
//       CHECK:   %[[LSE:.*]] = memref.alloc() : memref<2x4x100xf32>
//       CHECK:   gpu.launch
//       CHECK:     memref.view %{{.*}} to memref<2x32x136xbf16, #gpu.address_space<workgroup>>
//       CHECK:     memref.view %{{.*}} to memref<2x32x136xbf16, #gpu.address_space<workgroup>>
//       CHECK:     memref.view %{{.*}} to memref<64x136xbf16, #gpu.address_space<workgroup>>
//       CHECK:     nvgpu.device_async_copy
//       CHECK:     scf.for
//       CHECK:       llvm.bitcast %{{.*}} : vector<2xbf16> to i32
//       CHECK:       nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
//   CHECK-NOT:       scf.if
//       CHECK:       memref.load %[[MB]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x1x100x200xi1>
//       CHECK:       arith.truncf %{{.*}} : f32 to bf16
//       CHECK:       nvgpu.ldmatrix %{{.*}} {numTiles = 2 : i32, transpose = true} : memref<2x32x136xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
//       CHECK:     math.log2
//       CHECK:     memref.store %{{.*}}, %[[LSE]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x4x100xf32>
//       CHECK:   bufferization.to_tensor %[[LSE]] restrict writable
func.func @bf16_d128_mask_lse(%q: tensor<2x4x100x128xbf16>, %k: tensor<2x4x200x128xbf16>,
                              %v: tensor<2x4x200x128xbf16>, %m: tensor<1x1x100x200xi1>)
    -> (tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>) {
  %o, %l = attn.sdpa %q, %k, %v mask(%m)
      : tensor<2x4x100x128xbf16>, tensor<2x4x200x128xbf16>, tensor<2x4x200x128xbf16>,
        tensor<1x1x100x200xi1> -> tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>
  return %o, %l : tensor<2x4x100x128xbf16>, tensor<2x4x100xf32>
}

// -----

// A float mask with a dynamic dim: read at min(index, size - 1) (size - 1
// computed before the launch), scaled by log2(e) and added.

// CHECK-LABEL: func.func @f16_float_mask_dynamic
//       CHECK:   %[[MB:.*]] = bufferization.to_buffer %{{.*}} : tensor<1x2x?x64xf32> to memref<1x2x?x64xf32>
//       CHECK:   %[[MDIM:.*]] = memref.dim %[[MB]], %{{.*}} : memref<1x2x?x64xf32>
//       CHECK:   %[[MLAST:.*]] = arith.subi %[[MDIM]], %{{.*}} : index
//       CHECK:   gpu.launch
//       CHECK:     scf.for
//       CHECK:       %[[ROW:.*]] = arith.minui %{{.*}}, %[[MLAST]] : index
//       CHECK:       %[[M:.*]] = memref.load %[[MB]][%{{.*}}, %{{.*}}, %[[ROW]], %{{.*}}] : memref<1x2x?x64xf32>
//       CHECK:       %[[M2:.*]] = arith.mulf %[[M]], %{{.*}} : f32
//       CHECK:       arith.addf %{{.*}}, %[[M2]] : f32
func.func @f16_float_mask_dynamic(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>,
                                  %v: tensor<1x2x64x64xf16>, %m: tensor<1x2x?x64xf32>)
    -> tensor<1x2x64x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m)
      : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>,
        tensor<1x2x?x64xf32> -> tensor<1x2x64x64xf16>
  return %o : tensor<1x2x64x64xf16>
}

// -----

// f32: one thread per query row on FMAs, no tensor cores: the scaled query
// row and the accumulator in private memory, the key loop bounded by the
// causal rule.

// CHECK-LABEL: func.func @f32_causal_lse
//   CHECK-NOT:   nvgpu
//       CHECK:   gpu.launch
//  CHECK-SAME:     threads({{.*}}) in ({{.*}} = %c64,
//  CHECK-SAME:     private(%[[QROW:.*]] : memref<32xf32, #gpu.address_space<private>>, %[[ACC:.*]] : memref<16xf32, #gpu.address_space<private>>)
//   CHECK-NOT:     mma
//       CHECK:     scf.if
//       CHECK:       memref.store %{{.*}}, %[[QROW]]
//       CHECK:       %[[END:.*]] = arith.minsi
//       CHECK:       scf.for %{{.*}} = %{{.*}} to %[[END]] step %{{.*}} iter_args
//       CHECK:         math.fma
//       CHECK:         math.exp2
//       CHECK:         memref.store %{{.*}}, %[[ACC]]
//   CHECK-NOT:     nvgpu
//   CHECK-NOT:     mma
//       CHECK:     gpu.terminator
func.func @f32_causal_lse(%q: tensor<1x2x50x32xf32>, %k: tensor<1x1x70x32xf32>,
                          %v: tensor<1x1x70x16xf32>)
    -> (tensor<1x2x50x16xf32>, tensor<1x2x50xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x2x50x32xf32>, tensor<1x1x70x32xf32>, tensor<1x1x70x16xf32>
      -> tensor<1x2x50x16xf32>, tensor<1x2x50xf32>
  return %o, %l : tensor<1x2x50x16xf32>, tensor<1x2x50xf32>
}
