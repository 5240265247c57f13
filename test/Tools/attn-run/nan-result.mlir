// A result that is NaN in both lowerings agrees with itself, but finite
// inputs cannot legitimately give NaN: attn-run fails the run.
// RUN: not attn-run %s | FileCheck %s

// CHECK: f64 reference skipped: the entry is not one attn.sdpa on its arguments
// CHECK: result0 naive {{.*}} PASS
// CHECK: result0 no-NaN       FAIL  256 NaN from finite inputs
// CHECK: result0 no-NaN naive FAIL  256 NaN from finite inputs
// CHECK: {{^FAIL$}}
func.func @f(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>,
             %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
        -> tensor<1x2x8x16xf32>
  %e = tensor.empty() : tensor<1x2x8x16xf32>
  // (o - o) / (o - o) = 0 / 0 = NaN everywhere.
  %z = linalg.sub ins(%o, %o : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %n = linalg.div ins(%z, %z : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) outs(%e : tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %n : tensor<1x2x8x16xf32>
}
