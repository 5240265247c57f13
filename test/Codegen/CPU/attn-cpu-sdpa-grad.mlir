// RUN: attn-opt %s --attn-cpu-sdpa-grad | FileCheck %s
// RUN: attn-opt %s --attn-cpu-sdpa-grad="block-q=32 block-kv=16 vector-width=8" | FileCheck %s --check-prefix=SMALL

// Grouped-query heads (4 on 2), bottom-right causality, dynamic lengths:
// operands read in place (to_buffer read_only), results allocated; three
// parallel loops (Di and the cleared dQ accumulator per (batch, query head);
// the key blocks (128 keys) per (batch, key/value head); dQ rounded per (batch, query
// head)). Per key block: query blocks of the group's heads from the first row
// that can see the block (max(0, min(Lq, k0 - (Lk - Lq)))); register-blocked
// vector.fma products; P with the polynomial exp2 (round-even, exponent
// bits), hidden lanes selected to 0; dQ accumulated into a 64-row window of
// the f32 accumulator.
// CHECK-LABEL: func.func @gqa_causal
// CHECK-COUNT-6: bufferization.to_buffer %{{.*}} read_only
// CHECK: %[[DQ:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x4x?x16xf32>
// CHECK: %[[DK:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x2x?x16xf32>
// CHECK: %[[DV:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x2x?x8xf32>
// CHECK: %[[DI:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x4x?xf32>
// CHECK: %[[ACC:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: scf.parallel
// CHECK:   memref.store %{{.*}}, %[[DI]]
// CHECK:   vector.store %{{.*}}, %[[ACC]]
// CHECK: scf.parallel (%[[B:.*]], %[[HK:.*]]) =
// CHECK-DAG: memref.alloc() : memref<128x16xf32>
// CHECK-DAG: memref.alloc() : memref<16x64xf32>
// CHECK-DAG: memref.alloc() : memref<128x64xf32>
// CHECK:   %[[SHIFT:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK:   scf.for %[[K0:.*]] = %{{.*}} to %{{.*}} step %c128
// CHECK:     %[[START:.*]] = arith.subi %[[K0]], %[[SHIFT]]
// CHECK:     %[[LOW:.*]] = arith.minsi %{{.*}}, %[[START]]
// CHECK:     %[[FIRST:.*]] = arith.maxsi %{{.*}}, %[[LOW]]
// CHECK:     scf.for %[[G:.*]] = %{{.*}} to %c2
// CHECK:       scf.for %[[Q0:.*]] = %[[FIRST]] to %{{.*}} step %c64
// CHECK:         vector.fma
// CHECK:         math.roundeven
// CHECK:         arith.shli
// CHECK:         arith.cmpi sge, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK:         memref.subview %[[ACC]][%{{.*}}, 0] [64, 16] [1, 1]
// CHECK:     memref.store %{{.*}}, %[[DK]]
// CHECK:     memref.store %{{.*}}, %[[DV]]
// CHECK: scf.parallel
// CHECK:   memref.store %{{.*}}, %[[DQ]]
// CHECK: %[[RQ:.*]] = bufferization.to_tensor %[[DQ]] restrict writable
// CHECK: %[[RK:.*]] = bufferization.to_tensor %[[DK]] restrict writable
// CHECK: %[[RV:.*]] = bufferization.to_tensor %[[DV]] restrict writable
// CHECK: return %[[RQ]], %[[RK]], %[[RV]]

// The options set the tiles: query tiles of 32 rows, key blocks of 16, and
// vectors of 8 lanes.
// SMALL-LABEL: func.func @gqa_causal
// SMALL-DAG: memref.alloc() : memref<16x32xf32>
// SMALL-DAG: memref.alloc() : memref<32x16xf32>
// SMALL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// SMALL: vector.fma %{{.*}} : vector<8xf32>
func.func @gqa_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>, %o: tensor<?x4x?x8xf32>, %lse: tensor<?x4x?xf32>, %do: tensor<?x4x?x8xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do {causal = #attn.causal<bottom_right>} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?xf32>, tensor<?x4x?x8xf32> -> tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>
  return %dq, %dk, %dv : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>
}
