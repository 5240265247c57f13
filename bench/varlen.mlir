// Packed variable-length attention against padding (docs/op.md): 4 sequences
// of 1024, 256, 64 and 704 rows (2048 in all), hq=8, hkv=2, d=64, f32, no
// mask. The padded peer is one attn.sdpa over b=4, L=1024:
//   attn-run bench/varlen.mlir --entry varlen --bench 10 --check none
//   attn-run --sdpa b=4,hq=8,hkv=2,lq=1024,lk=1024,d=64 --bench 10 --check none
// The varlen run computes sum(L_b^2) = 0.385 of the padded run's pairs.
func.func @varlen(%q: tensor<2048x8x64xf32>, %k: tensor<2048x2x64xf32>, %v: tensor<2048x2x64xf32>) -> tensor<2048x8x64xf32> {
  %cu = arith.constant dense<[0, 1024, 1280, 1344, 2048]> : tensor<5xi32>
  %o = attn.sdpa_varlen %q, %k, %v, %cu, %cu : tensor<2048x8x64xf32>, tensor<2048x2x64xf32>, tensor<2048x2x64xf32>, tensor<5xi32>, tensor<5xi32> -> tensor<2048x8x64xf32>
  return %o : tensor<2048x8x64xf32>
}
