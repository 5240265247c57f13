// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" --attn-cpu-decode="decode-width=8" -canonicalize -cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" -canonicalize -cse | FileCheck %s --check-prefix=W16

// The decode kernel's running max (DecodeBuilder::maxUpdate).
// On 16 lanes (the AVX-512 kernels) the same, checked by the W16 prefix.
// W16-LABEL: func.func @lazy_max
// W16: arith.constant dense<8.000000e+00> : vector<16xf32>
// W16: arith.cmpf ugt, %{{.*}}, %{{.*}} : vector<16xf32>
// W16: vector.extract %{{.*}}[0] : i1 from vector<16xi1>
// W16-NEXT: scf.if

// The running max moves lazily: a block compares each row's block max with
// the row's running max plus the slack (8, log2 units; ugt, so NaN moves
// it), and only where some row passes it does one scf.if move those rows'
// maxima and rescale every row's sum and its accumulators in the [4, 32]
// buffer. Otherwise the state stays, the sums take the probabilities by an
// add, and the P.V loops start from the accumulators as they are (loads,
// no multiply).
// CHECK-LABEL: func.func @lazy_max
// CHECK-DAG: %[[SLACK:.*]] = arith.constant dense<8.000000e+00> : vector<8xf32>
// CHECK-DAG: %[[ACC:.*]] = memref.alloc() : memref<4x32xf32>
// CHECK: scf.for %{{.*}} iter_args(%[[M0:[^ ]*]] = %{{[^,]*}}, %[[M1:[^ ]*]] = %{{[^,]*}}, %[[M2:[^ ]*]] = %{{[^,]*}}, %[[M3:[^ ]*]] = %{{[^,]*}}, %[[L0:[^ ]*]] = %{{[^,]*}},
// CHECK: %[[T0:.*]] = arith.addf %[[M0]], %[[SLACK]] : vector<8xf32>
// CHECK-NEXT: %[[G0:.*]] = arith.cmpf ugt, %{{.*}}, %[[T0]] : vector<8xf32>
// CHECK: %[[T3:.*]] = arith.addf %[[M3]], %[[SLACK]] : vector<8xf32>
// CHECK-NEXT: %[[G3:.*]] = arith.cmpf ugt, %{{.*}}, %[[T3]] : vector<8xf32>
// CHECK-NEXT: %[[ANY:.*]] = arith.ori %{{.*}}, %[[G3]] : vector<8xi1>
// CHECK-NEXT: %[[C:.*]] = vector.extract %[[ANY]][0] : i1 from vector<8xi1>
// CHECK-NEXT: %[[S:.*]]:8 = scf.if %[[C]] -> (
// CHECK: %[[NEWMAX:.*]] = arith.select %[[G0]], %{{.*}}, %[[M0]] : vector<8xi1>, vector<8xf32>
// CHECK: arith.subf %[[M0]], %[[NEWMAX]]
// CHECK: %[[SUM0:.*]] = arith.mulf %[[L0]], %[[ALPHA0:[^ ]*]] : vector<8xf32>
// CHECK: %[[A:.*]] = vector.load %[[ACC]][%c0{{[_0-9]*}}, %c0{{[_0-9]*}}] : memref<4x32xf32>, vector<8xf32>
// CHECK-NEXT: %[[AS:.*]] = arith.mulf %[[A]], %[[ALPHA0]] : vector<8xf32>
// CHECK-NEXT: vector.store %[[AS]], %[[ACC]][%c0{{[_0-9]*}}, %c0{{[_0-9]*}}]
// CHECK: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[M0]], %[[M1]], %[[M2]], %[[M3]], %[[L0]],
// CHECK-NEXT: }
// CHECK: arith.subf %{{.*}}, %[[S]]#0 : vector<8xf32>
// CHECK: arith.addf %[[S]]#4, %{{.*}} : vector<8xf32>
// CHECK: %[[I0:.*]] = vector.load %[[ACC]][%c0{{[_0-9]*}}, %c0{{[_0-9]*}}] : memref<4x32xf32>, vector<8xf32>
// CHECK-NOT: arith.mulf
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}} step %{{.*}} iter_args(%{{.*}} = %[[I0]],
func.func @lazy_max(%q: tensor<1x8x1x32xf32>, %k: tensor<1x2x40x32xf32>) -> tensor<1x8x1x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x1x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x8x1x32xf32>
  return %o : tensor<1x8x1x32xf32>
}

// -----

// One row (MHA) x 4 value vectors: the accumulators are loop-carried
// registers, so the scf.if yields them with the max and the sum, rescaled
// by the same factor in its then-branch and as they were in its else, and
// the P.V loop starts from its results.
// CHECK-LABEL: func.func @lazy_max_registers
// CHECK: scf.for %{{.*}} iter_args(%[[M:[^ ]*]] = %{{[^,]*}}, %[[L:[^ ]*]] = %{{[^,]*}}, %[[A0:[^ ]*]] = %{{[^,]*}}, %[[A1:[^ ]*]] = %{{[^,]*}}, %[[A2:[^ ]*]] = %{{[^,]*}}, %[[A3:[^ ]*]] = %{{[^,]*}},
// CHECK: %[[S:.*]]:6 = scf.if %{{.*}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: %[[L1:.*]] = arith.mulf %[[L]], %[[ALPHA:[^ ]*]] : vector<8xf32>
// CHECK-NEXT: %[[B0:.*]] = arith.mulf %[[A0]], %[[ALPHA]] : vector<8xf32>
// CHECK-NEXT: %[[B1:.*]] = arith.mulf %[[A1]], %[[ALPHA]] : vector<8xf32>
// CHECK-NEXT: %[[B2:.*]] = arith.mulf %[[A2]], %[[ALPHA]] : vector<8xf32>
// CHECK-NEXT: %[[B3:.*]] = arith.mulf %[[A3]], %[[ALPHA]] : vector<8xf32>
// CHECK-NEXT: scf.yield %{{.*}}, %[[L1]], %[[B0]], %[[B1]], %[[B2]], %[[B3]] :
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[M]], %[[L]], %[[A0]], %[[A1]], %[[A2]], %[[A3]] :
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}} step %{{.*}} iter_args(%{{.*}} = %[[S]]#2, %{{.*}} = %[[S]]#3, %{{.*}} = %[[S]]#4, %{{.*}} = %[[S]]#5)
func.func @lazy_max_registers(%q: tensor<1x2x1x32xf32>, %k: tensor<1x2x40x32xf32>, %v: tensor<1x2x40x32xf32>) -> tensor<1x2x1x32xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x1x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x2x1x32xf32>
  return %o : tensor<1x2x1x32xf32>
}
