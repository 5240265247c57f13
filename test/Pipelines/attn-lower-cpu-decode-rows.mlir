// decode-rows' default depends on the kernels (docs/pipelines.md): 7 on the
// avx2 kernels, whose tile ops (query rows along 8-lane vectors) are faster
// from 8 rows on (journal/round-21.md); 8 on the 16-lane paths, whose tile
// ops are faster from 10 rows on (journal/round-22.md). A decode step with 4
// query heads per key/value head (blocks of 4 rows) takes the decode kernel
// on both; one with 8 (blocks of 8 rows) only on the 16-lane paths, one with
// 12 on neither, unless decode-rows is given.
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=WIDE
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx2 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=GIVEN
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=GIVEN16

// AVX2-LABEL: func.func @group4
// AVX2: vector.transfer_read {{.*}} : tensor<1x2x300x64xf32>, vector<8xf32>
// AVX2-NOT: attn.tile<scores>
// AVX2-LABEL: func.func @group8
// AVX2: attn.tile<scores>
// WIDE-LABEL: func.func @group4
// WIDE-NOT: attn.tile<scores>
// WIDE-LABEL: func.func @group8
// WIDE: vector.transfer_read {{.*}} : tensor<1x1x300x64xf32>, vector<16xf32>
// WIDE-NOT: attn.tile<scores>
// WIDE-LABEL: func.func @group12
// WIDE: attn.tile<scores>
// AVX2-LABEL: func.func @group12
// AVX2: attn.tile<scores>
// GIVEN-LABEL: func.func @group8
// GIVEN: vector.transfer_read {{.*}} : tensor<1x1x300x64xf32>, vector<8xf32>
// GIVEN-NOT: attn.tile<scores>
// GIVEN16-LABEL: func.func @group12
// GIVEN16: vector.transfer_read {{.*}} : tensor<1x1x300x64xf32>, vector<16xf32>
// GIVEN16-NOT: attn.tile<scores>
func.func @group4(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x300x64xf32>, %v: tensor<1x2x300x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x300x64xf32>, tensor<1x2x300x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
func.func @group8(%q: tensor<1x8x1x64xf32>, %k: tensor<1x1x300x64xf32>, %v: tensor<1x1x300x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x1x300x64xf32>, tensor<1x1x300x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}
func.func @group12(%q: tensor<1x12x1x64xf32>, %k: tensor<1x1x300x64xf32>, %v: tensor<1x1x300x64xf32>) -> tensor<1x12x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x12x1x64xf32>, tensor<1x1x300x64xf32>, tensor<1x1x300x64xf32> -> tensor<1x12x1x64xf32>
  return %o : tensor<1x12x1x64xf32>
}
