// The probabilities kernel carries its row sums in chains: two on 8 lanes,
// where exp2's degree-6 form, its seven coefficients and four chains would
// not fit the 16 registers (LLVM spilled the chains), four on 16 lanes.
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=8" -canonicalize -cse | FileCheck %s --check-prefix=W8
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=16" -canonicalize -cse | FileCheck %s --check-prefix=W16

// The probabilities: a loop over the 16 keys, the sums carried, exp2 inside.
// W8: scf.for %{{.*}} = %c0 to %c16 step %c2 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xf32>)
// W8-NEXT: vector.load
// W8: math.roundeven
// W8: math.roundeven
// W8-NOT: math.roundeven
// W8: scf.yield %{{.*}}, %{{.*}} : vector<8xf32>, vector<8xf32>
// W8-NEXT: }
// W8-NEXT: %[[SUM:.*]] = arith.addf
// W8-NEXT: vector.store %[[SUM]]
// W16: scf.for %{{.*}} = %c0 to %c16 step %c4 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// W16-COUNT-4: math.roundeven
// W16-NOT: math.roundeven
// W16: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>
func.func @sums(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}
