// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="transpose-values=true split-f16=true" --attn-tile-online-softmax="block-q=32 block-kv=32" | FileCheck %s

// split-f16: f16 K and V made once per call into bf16 hi and lo parts. K
// into [B, Hkv, Lk rounded up, 2 D] (a key block's row: D hi, then D lo),
// one `bf16_keys` op per key block writing its [32, 2, 32] window (hi =
// bf16(x), lo = bf16(x - hi), chosen by the part index); V transposed into
// [B, Hkv, Dv, 2 Lk rounded up] (each key block: 32 hi columns, then 32 lo).
// scores and P.V read both parts: K = hi + lo, V = hi + lo, exact in f32.
// CHECK-LABEL: func.func @split
// CHECK:       scf.forall
// CHECK:         %[[KW:.*]] = tensor.extract_slice %{{.*}}[{{.*}}] [1, 1, 32, 64] [1, 1, 1, 1] : tensor<?x2x?x64xbf16> to tensor<32x64xbf16>
// CHECK:         %[[KE:.*]] = tensor.expand_shape %[[KW]] {{\[}}[0], [1, 2]] output_shape [32, 2, 32]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<32x32xf16>) outs(%[[KE]] : tensor<32x2x32xbf16>) attrs = {attn.tile = #attn.tile<bf16_keys>}
// CHECK:           %[[X:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK:           %[[HI:.*]] = arith.truncf %[[X]] : f32 to bf16
// CHECK:           %[[HIX:.*]] = arith.extf %[[HI]] : bf16 to f32
// CHECK:           %[[REST:.*]] = arith.subf %[[X]], %[[HIX]] : f32
// CHECK:           %[[LO:.*]] = arith.truncf %[[REST]] : f32 to bf16
// CHECK:           %[[PART:.*]] = linalg.index 1 : index
// CHECK:           %[[ISLO:.*]] = arith.cmpi ne, %[[PART]], %{{.*}} : index
// CHECK:           arith.select %[[ISLO]], %[[LO]], %[[HI]] : bf16
// CHECK:         tensor.collapse_shape
// CHECK:         tensor.parallel_insert_slice {{.*}} [1, 1, 32, 64] [1, 1, 1, 1] : tensor<32x64xbf16> into tensor<?x2x?x64xbf16>
// CHECK:       scf.forall
// CHECK:         attn.tile = #attn.tile<bf16_keys>
// CHECK:       scf.forall
// CHECK:         attn.tile = #attn.tile<transpose_values>
// CHECK:         tensor.parallel_insert_slice {{.*}} [1, 1, 32, 64] [1, 1, 1, 1] : tensor<32x64xbf16> into tensor<?x2x32x?xbf16>
// CHECK:       scf.forall
// CHECK:         attn.tile = #attn.tile<transpose_values>
// CHECK:       scf.forall
// CHECK:         scf.for
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32xf32>, tensor<32x32xbf16>, tensor<32x32xbf16>) {{.*}}attn.tile = #attn.tile<scores>
// CHECK-NEXT:        ^bb0(%{{.*}}: f32, %[[H:.*]]: bf16, %[[L:.*]]: bf16, %{{.*}}: f32):
// CHECK-DAG:           %[[KH:.*]] = arith.extf %[[H]] : bf16 to f32
// CHECK-DAG:           %[[KL:.*]] = arith.extf %[[L]] : bf16 to f32
// CHECK:               arith.addf %[[KH]], %[[KL]] : f32
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32xf32>, tensor<32x32xbf16>, tensor<32x32xbf16>) {{.*}}attn.tile = #attn.tile<pv>
func.func @split(%q: tensor<1x2x64x32xf16>, %k: tensor<1x2x80x32xf16>, %v: tensor<1x2x80x32xf16>) -> tensor<1x2x64x32xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x64x32xf16>, tensor<1x2x80x32xf16>, tensor<1x2x80x32xf16> -> tensor<1x2x64x32xf16>
  return %o : tensor<1x2x64x32xf16>
}

// -----

// bf16 and f32 are not split; f16 with D = 24 (no 16-column tiles) neither.
// CHECK-LABEL: func.func @bf16
// CHECK-NOT:   bf16_keys
func.func @bf16(%q: tensor<1x1x64x32xbf16>) -> tensor<1x1x64x32xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_odd_d
// CHECK-NOT:   bf16_keys
// CHECK-NOT:   transpose_values
func.func @f16_odd_d(%q: tensor<1x1x64x24xf16>) -> tensor<1x1x64x24xf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x64x24xf16>, tensor<1x1x64x24xf16>, tensor<1x1x64x24xf16> -> tensor<1x1x64x24xf16>
  return %o : tensor<1x1x64x24xf16>
}
