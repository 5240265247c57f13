// Query blocks whose rows are not whole vectors keep the generic scalar
// loops; the pass says so once per block size (block-q=24 with 16-lane
// vectors: the kernels take nothing), and nothing for whole vectors
// (block-q=32: the scores become vector FMAs).
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=24 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=16" 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --attn-tile-online-softmax="block-q=32 block-kv=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="vector-width=16" 2>&1 | FileCheck %s --check-prefix=WHOLE

// OFF: warning: attn-cpu-microkernels: query blocks of 24 rows are not whole vectors of 16: their tile ops take the generic scalar loops
// OFF-NOT: warning
// OFF: attn.tile = #attn.tile<scores>
// WHOLE-NOT: warning
// WHOLE-NOT: attn.tile = #attn.tile<scores>
// WHOLE: vector.fma
func.func @blocks(%q: tensor<1x2x48x16xf32>, %k: tensor<1x2x40x16xf32>) -> tensor<1x2x48x16xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x48x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x48x16xf32>
  return %o : tensor<1x2x48x16xf32>
}
