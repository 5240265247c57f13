// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2" -canonicalize -cse | FileCheck %s

// f16 K and V: each tile is widened to f32 once (vector<16xf16> loads,
// arith.extf on vectors) into a scratch buffer of the query block, one for
// K and V alike (each copy is dead once its contraction has run), and the
// f32 kernels broadcast from that buffer (through each register block's
// window of it, at constant indices): no scalar f16 load or conversion is
// left in the reductions.
// CHECK-LABEL: func.func @f16_widen
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (2, 3, 2)
// CHECK:   %[[W32:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x64xf32>
// CHECK-NOT: attn.scratch
// The key loop: K widened, then the scores from the f32 copy.
// CHECK:   scf.for
// CHECK:     vector.load %{{.*}} : memref<16x64xf16, strided<[64, 1], offset: ?>>, vector<16xf16>
// CHECK:     arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK:     vector.store %{{.*}}, %[[W32]]
// CHECK:     %[[KW:.*]] = memref.subview %[[W32]]
// CHECK:     scf.for %{{.*}} iter_args
// CHECK-NOT:   arith.extf
// CHECK:       memref.load %[[KW]][%c{{[0-9]+}}, %{{.*}}] : memref<8x64xf32, strided<[64, 1], offset: ?>>
// CHECK:       vector.fma
// V widened into the same buffer, then P.V from it.
// CHECK:     vector.load %{{.*}} : memref<16x64xf16, strided<[64, 1], offset: ?>>, vector<16xf16>
// CHECK:     arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK:     vector.store %{{.*}}, %[[W32]]
// CHECK:     %[[VW:.*]] = memref.subview %[[W32]]
// CHECK:     scf.for %{{.*}} iter_args
// CHECK-NOT:   arith.extf
// CHECK:       memref.load %[[VW]][%{{.*}}, %c{{[0-9]+}}] : memref<16x8xf32, strided<[64, 1], offset: ?>>
// CHECK:       vector.fma
// CHECK:   memref.dealloc %[[W32]]
// CHECK-NOT: memref.dealloc %[[W32]]
// CHECK: return
func.func @f16_widen(%q: tensor<2x3x64x64xf16>, %k: tensor<2x3x64x64xf16>, %v: tensor<2x3x64x64xf16>) -> tensor<2x3x64x64xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<2x3x64x64xf16>, tensor<2x3x64x64xf16>, tensor<2x3x64x64xf16> -> tensor<2x3x64x64xf16>
  return %o : tensor<2x3x64x64xf16>
}

// -----

// GQA (two query heads per key/value head), a tail block (36 keys) and an
// odd D (40): two vectors and eight single elements per row are widened.
// CHECK-LABEL: func.func @gqa_odd_d
// CHECK: scf.forall
// CHECK:   memref.alloc() {alignment = 64 : i64, attn.scratch = "widen"} : memref<16x40xf32>
// CHECK:   scf.for
// CHECK:     arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK:     memref.load %{{.*}}[%{{.*}}, %c32] : memref<16x40xf16, strided<[40, 1], offset: ?>>
// CHECK:     arith.extf %{{.*}} : f16 to f32
func.func @gqa_odd_d(%q: tensor<1x4x64x40xf16>, %k: tensor<1x2x36x40xf16>, %v: tensor<1x2x36x40xf16>) -> tensor<1x4x64x40xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x64x40xf16>, tensor<1x2x36x40xf16>, tensor<1x2x36x40xf16> -> tensor<1x4x64x40xf16>
  return %o : tensor<1x4x64x40xf16>
}

// -----

// bf16 off the dot products (bf16-dot=false, the avx512 kernels) is widened
// the same way.
// CHECK-LABEL: func.func @bf16_widen
// CHECK: arith.extf %{{.*}} : vector<16xbf16> to vector<16xf32>
// CHECK: vector.fma
func.func @bf16_widen(%q: tensor<1x2x64x32xbf16>) -> tensor<1x2x64x32xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16> -> tensor<1x2x64x32xbf16>
  return %o : tensor<1x2x64x32xbf16>
}

// -----

// f32 operands are read in place: nothing is widened.
// CHECK-LABEL: func.func @f32_in_place
// CHECK-NOT: arith.extf
// CHECK: vector.fma
// CHECK-NOT: arith.extf
// CHECK: return
func.func @f32_in_place(%q: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32> -> tensor<1x2x64x32xf32>
  return %o : tensor<1x2x64x32xf32>
}
