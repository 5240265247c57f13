// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=8 row-vectors=2 bf16-dot=true" -canonicalize -cse | FileCheck %s

// bf16-dot: both products on x86vector.avx512.dot. The query tile is packed
// once per query block, before the key loop, into pairs of adjacent dims
// (the score scale divided back out, rounded to bf16); K is read in place,
// one 32-bit pair broadcast per key; the sums leave the registers unscaled:
// the row max scales each row vector's block maximum once (one multiply per
// 16 rows instead of one per score) and the probabilities start with
// fma(s, scale, -m). P is rounded to bf16 into key pairs as it is made
// (never stored in f32) and V packed into key pairs before P.V. The
// probabilities weigh bf16 values (and are rounded
// to bf16 here): their exp2 is the degree-4 polynomial (leading coefficient
// 0.00958), the running max's stays degree 6 (1.53e-4).
// CHECK-LABEL: func.func @bf16_dot
// CHECK-DAG: %[[P4:.*]] = arith.constant dense<0.00958281849> : vector<16xf32>
// CHECK-DAG: %[[P6:.*]] = arith.constant dense<1.53458124E-4> : vector<16xf32>
// CHECK-DAG: %[[SCALE:.*]] = arith.constant dense<0.360673755> : vector<16xf32>
// CHECK: scf.forall
// CHECK:   memref.alloc() {alignment = 64 : i64, attn.scratch = "bf16-pairs"} : memref<8x64xbf16>
// Two dims rounded by one vcvtne2ps2bf16 (dim 2t in the low half), then
// interleaved by one word shuffle.
// CHECK:   %[[BOTH:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[ODD:.*]], %[[EVEN:.*]]) : (vector<16xf32>, vector<16xf32>) -> vector<32xbf16>
// CHECK:   vector.shuffle %[[BOTH]], %[[BOTH]] [0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31] : vector<32xbf16>, vector<32xbf16>
// CHECK:   vector.store %{{.*}}, %[[QP:.*]][{{.*}}] : memref<8x64xbf16>, vector<32xbf16>
// The key loop.
// CHECK:   scf.for
// CHECK:     scf.for %[[T:.*]] = %c0 to %c8 step %c1 iter_args
// CHECK:       vector.load %[[QP]][%[[T]], {{.*}}] : memref<8x64xbf16>, vector<32xbf16>
// CHECK:       vector.load %{{.*}} : memref<16x16xbf16, strided<[16, 1], offset: ?>>, vector<2xbf16>
// CHECK:       vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK:       vector.broadcast %{{.*}} : i32 to vector<16xi32>
// CHECK:       vector.bitcast %{{.*}} : vector<16xi32> to vector<32xbf16>
// CHECK:       x86vector.avx512.dot %{{.*}}, %{{.*}}, %{{.*}} : vector<32xbf16> -> vector<16xf32>
// CHECK-NOT:   arith.mulf
// CHECK:       scf.yield
// CHECK-NOT: arith.mulf
// CHECK-COUNT-7: arith.select
// CHECK-NOT: arith.mulf
// CHECK:     %[[MAX0:.*]] = arith.mulf %{{.*}}, %[[SCALE]] : vector<16xf32>
// CHECK-NEXT: arith.cmpf ogt, %{{.*}}, %[[MAX0]]
// CHECK-COUNT-7: arith.select
// CHECK-NOT: arith.mulf
// CHECK:     arith.mulf %{{.*}}, %[[SCALE]] : vector<16xf32>
// CHECK:     math.roundeven
// CHECK:     vector.fma %[[P6]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:     %[[NEGM:.*]] = arith.negf %{{.*}} : vector<16xf32>
// CHECK:     vector.fma %{{.*}}, %[[SCALE]], %[[NEGM]] : vector<16xf32>
// CHECK:     math.roundeven
// CHECK:     vector.fma %[[P4]], %{{.*}}, %{{.*}} : vector<16xf32>
// The degree-4 fit ends in exactly 1 too: 2^n added to its exponent bits.
// CHECK:     %[[NB4:.*]] = arith.shli %{{.*}} : vector<16xi32>
// CHECK-NOT: arith.mulf
// CHECK:     %[[PB4:.*]] = arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK-NEXT: %[[EB4:.*]] = arith.addi %[[PB4]], %[[NB4]] : vector<16xi32>
// CHECK-NEXT: arith.bitcast %[[EB4]] : vector<16xi32> to vector<16xf32>
// The next key's probability, and the two rounded by one vcvtne2ps2bf16
// straight into P.V's buffer of key pairs.
// CHECK:     %[[P1:.*]] = arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NEXT: %[[PAIR:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"(%[[P1]], %{{.*}})
// CHECK-NEXT: vector.shuffle %[[PAIR]], %[[PAIR]]
// CHECK-NEXT: vector.store %{{.*}}, %[[PP:.*]][%{{.*}}, %{{.*}}] : memref<8x64xbf16>, vector<32xbf16>
// P.V: V packed, then the dot products on P's pairs.
// CHECK:     vector.load %{{.*}} : memref<16x16xbf16, strided<[16, 1], offset: ?>>, vector<16xbf16>
// CHECK:     vector.interleave
// CHECK:     vector.load %[[PP]][%{{.*}}, %{{.*}}] : memref<8x64xbf16>, vector<32xbf16>
// CHECK:     x86vector.avx512.dot
// CHECK-NOT: attn.tile = #attn.tile<scores>
// CHECK-NOT: attn.tile = #attn.tile<pv>
// CHECK:   memref.dealloc %[[QP]]
func.func @bf16_dot(%q: tensor<1x1x64x16xbf16>, %k: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}

// -----

// An odd D has no pairs of dims: the scores keep the widening kernel (one
// extended element per key); P.V (16 keys, 16 value columns) still takes
// the dot products.
// CHECK-LABEL: func.func @odd_d
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: vector.fma
// CHECK: x86vector.avx512.dot
func.func @odd_d(%q: tensor<1x1x64x15xbf16>, %k: tensor<1x1x64x15xbf16>, %v: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x1x64x15xbf16>, tensor<1x1x64x15xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}

// -----

// f32 inputs never take the bf16 kernels, nor the degree-4 exp2.
// CHECK-LABEL: func.func @f32_unchanged
// CHECK-NOT: x86vector
// CHECK-NOT: 0.00958281849
// CHECK: vector.fma
// CHECK-NOT: x86vector
func.func @f32_unchanged(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// A softcap between the scores and the probabilities reads the scaled
// scores (and keeps the row max from being fused into the scores kernel):
// the sums are multiplied by the score scale as they leave the registers,
// and the probabilities do not take the scale (no negated max for their
// FMA: they subtract the max).
// CHECK-LABEL: func.func @softcap_scaled
// CHECK:       x86vector.avx512.dot
// CHECK:       scf.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  arith.mulf
// CHECK-NOT:   arith.negf
func.func @softcap_scaled(%q: tensor<1x1x64x16xbf16>, %k: tensor<1x1x64x16xbf16>) -> tensor<1x1x64x16xbf16> {
  %o = attn.sdpa %q, %k, %k {softcap = 30.0 : f32} : tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16>, tensor<1x1x64x16xbf16> -> tensor<1x1x64x16xbf16>
  return %o : tensor<1x1x64x16xbf16>
}
