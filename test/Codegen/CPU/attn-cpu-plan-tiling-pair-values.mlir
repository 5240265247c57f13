// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="pair-values=true" --attn-tile-online-softmax="block-q=32 block-kv=32" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="pair-values=true transpose-values=true" --attn-tile-online-softmax="block-q=32 block-kv=32" | FileCheck %s --check-prefix=TRANSPOSED

// pair-values: V [B, Hkv, Lk, Dv] packed once into key pairs, [B, Hkv,
// ceil(Lk / 32) * 32 / 2, 2 Dv] with Vp[t, 2e + p] = V[2t + p, e], before
// the query blocks: one forall over (batch, key/value head, full key block)
// whose tiles are views of V, one over the partial last block whose tile is
// zero-padded; each block's [16, 64] window at row kStart / 2. P.V reads
// [16, 64] tiles of it with the (e, i, j) -> (j floordiv 2, 2e + j mod 2)
// map, in the full blocks and in the tail alike. Here each V tile is read
// by 2 heads x 4 query blocks: 8 readers.
// CHECK-DAG:   #[[$PACK:.*]] = affine_map<(d0, d1) -> (d0 * 2 + d1 mod 2, d1 floordiv 2)>
// CHECK-DAG:   #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[$VP:.*]] = affine_map<(d0, d1, d2) -> (d2 floordiv 2, d0 * 2 + d2 mod 2)>
// CHECK-LABEL: func.func @paired
// CHECK-SAME:  %[[V:[a-z0-9]+]]: tensor<1x2x80x32xbf16>
// CHECK:       %[[C80:.*]] = arith.constant 80 : index
// CHECK:       %[[PADDED:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:       %[[ROWS:.*]] = arith.divui %[[PADDED]], %{{.*}} : index
// CHECK:       %[[FULL:.*]] = arith.divui %[[C80]], %{{.*}} : index
// CHECK:       %[[TAIL:.*]] = arith.ceildivui
// CHECK:       %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %[[ROWS]]) : tensor<?x2x?x64xbf16>
// CHECK:       %[[VP0:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[KB:.*]]) in (%{{.*}}, 2, %[[FULL]]) shared_outs(%[[O:.*]] = %[[EMPTY]])
// CHECK:         %[[KB32:.*]] = arith.muli %[[KB]], %{{.*}} : index
// CHECK:         %[[K0:.*]] = arith.addi %{{.*}}, %[[KB32]] : index
// CHECK:         %[[T0:.*]] = arith.divui %[[K0]], %{{.*}} : index
// CHECK:         %[[VTILE:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], %[[K0]], 0] [1, 1, 32, 32]
// CHECK:         %[[DST:.*]] = tensor.extract_slice %[[O]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 64]
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[$PACK]], #[[$ID]]], {{.*}} ins(%[[VTILE]] : tensor<32x32xbf16>) outs(%[[DST]] : tensor<16x64xbf16>) attrs = {attn.tile = #attn.tile<pair_values>}
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         tensor.parallel_insert_slice %[[P]] into %[[O]][%[[B]], %[[H]], %[[T0]], 0] [1, 1, 16, 64]
// CHECK:       %[[VP:.*]] = scf.forall ({{.*}}) in (%{{.*}}, 2, %[[TAIL]]) shared_outs(%{{.*}} = %[[VP0]])
// CHECK:         tensor.pad
// CHECK:         attn.tile = #attn.tile<pair_values>
// CHECK:       scf.forall
// CHECK:         scf.for %[[J:[a-z0-9]+]] =
// CHECK:           %[[KS:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:           %[[TS:.*]] = arith.divui %[[KS]], %{{.*}} : index
// CHECK:           %[[VB:.*]] = tensor.extract_slice %[[VP]][%{{.*}}, %{{.*}}, %[[TS]], 0] [1, 1, 16, 64] [1, 1, 1, 1] : tensor<?x2x?x64xbf16> to tensor<16x64xbf16>
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #[[$VP]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[VB]] : tensor<32x32xf32>, tensor<16x64xbf16>) {{.*}}attn.tile = #attn.tile<pv>
// CHECK:         scf.if
// CHECK:           tensor.extract_slice %[[VP]]
// CHECK-NOT:       tensor.pad %{{.*}} : tensor<?x32xbf16>
// CHECK:           linalg.generic {indexing_maps = [#{{.*}}, #[[$VP]], #{{.*}}], {{.*}}attn.tile = #attn.tile<pv>
// transpose-values (the AMX kernels' Vt) takes precedence.
// TRANSPOSED-LABEL: func.func @paired
// TRANSPOSED-NOT:   pair_values
// TRANSPOSED:       attn.tile = #attn.tile<transpose_values>
// TRANSPOSED-NOT:   pair_values
func.func @paired(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x32xbf16>) -> tensor<1x4x128x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x128x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x32xbf16> -> tensor<1x4x128x32xbf16>
  return %o : tensor<1x4x128x32xbf16>
}

// -----

// Only bf16 values: f32 ones keep V as it is.
// CHECK-LABEL: func.func @f32_values
// CHECK-NOT:   pair_values
func.func @f32_values(%q: tensor<1x1x128x32xf32>) -> tensor<1x1x128x32xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32>, tensor<1x1x128x32xf32> -> tensor<1x1x128x32xf32>
  return %o : tensor<1x1x128x32xf32>
}

// -----

// Dv a multiple of 16.
// CHECK-LABEL: func.func @odd_dv
// CHECK-NOT:   pair_values
func.func @odd_dv(%q: tensor<1x1x128x32xbf16>, %v: tensor<1x1x128x40xbf16>) -> tensor<1x1x128x40xbf16> {
  %o = attn.sdpa %q, %q, %v : tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x40xbf16> -> tensor<1x1x128x40xbf16>
  return %o : tensor<1x1x128x40xbf16>
}

// -----

// Fewer than 4 query blocks read each V tile (one head, Lq = 96: 3
// blocks): the copy would not pay.
// CHECK-LABEL: func.func @few_readers
// CHECK-NOT:   pair_values
func.func @few_readers(%q: tensor<1x1x96x32xbf16>, %k: tensor<1x1x512x32xbf16>) -> tensor<1x1x96x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x96x32xbf16>, tensor<1x1x512x32xbf16>, tensor<1x1x512x32xbf16> -> tensor<1x1x96x32xbf16>
  return %o : tensor<1x1x96x32xbf16>
}

// -----

// 4 readers (Lq = 128) allow 8 MiB: 2^17 keys of Dv = 32 are exactly that,
// 2^17 + 32 are more.
// CHECK-LABEL: func.func @at_the_bytes_per_reader
// CHECK:       pair_values
// CHECK-LABEL: func.func @over_the_bytes_per_reader
// CHECK-NOT:   pair_values
func.func @at_the_bytes_per_reader(%q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x131072x32xbf16>) -> tensor<1x1x128x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x128x32xbf16>, tensor<1x1x131072x32xbf16>, tensor<1x1x131072x32xbf16> -> tensor<1x1x128x32xbf16>
  return %o : tensor<1x1x128x32xbf16>
}
func.func @over_the_bytes_per_reader(%q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x131104x32xbf16>) -> tensor<1x1x128x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x128x32xbf16>, tensor<1x1x131104x32xbf16>, tensor<1x1x131104x32xbf16> -> tensor<1x1x128x32xbf16>
  return %o : tensor<1x1x128x32xbf16>
}

// -----

// At most 32 MiB whatever the readers (a larger buffer is a fresh mmap,
// page faults included, on every call): 2^19 keys of Dv = 32 are exactly
// that, 2^19 + 32 more.
// CHECK-LABEL: func.func @at_the_most_bytes
// CHECK:       pair_values
// CHECK-LABEL: func.func @over_the_most_bytes
// CHECK-NOT:   pair_values
func.func @at_the_most_bytes(%q: tensor<1x1x4096x32xbf16>, %k: tensor<1x1x524288x32xbf16>) -> tensor<1x1x4096x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x4096x32xbf16>, tensor<1x1x524288x32xbf16>, tensor<1x1x524288x32xbf16> -> tensor<1x1x4096x32xbf16>
  return %o : tensor<1x1x4096x32xbf16>
}
func.func @over_the_most_bytes(%q: tensor<1x1x4096x32xbf16>, %k: tensor<1x1x524320x32xbf16>) -> tensor<1x1x4096x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x4096x32xbf16>, tensor<1x1x524320x32xbf16>, tensor<1x1x524320x32xbf16> -> tensor<1x1x4096x32xbf16>
  return %o : tensor<1x1x4096x32xbf16>
}

// -----

// Dynamic shapes: neither the readers nor the bytes are known.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:   pair_values
func.func @dynamic(%q: tensor<?x1x?x32xbf16>, %k: tensor<?x1x?x32xbf16>) -> tensor<?x1x?x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<?x1x?x32xbf16>, tensor<?x1x?x32xbf16>, tensor<?x1x?x32xbf16> -> tensor<?x1x?x32xbf16>
  return %o : tensor<?x1x?x32xbf16>
}

// -----

// Grouped rows (the 4 heads that share a K/V head in one block, Lq = 4):
// one query block reads each V tile.
// CHECK-LABEL: func.func @grouped_rows
// CHECK-NOT:   pair_values
func.func @grouped_rows(%q: tensor<1x8x4x32xbf16>, %k: tensor<1x2x4096x32xbf16>) -> tensor<1x8x4x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x4x32xbf16>, tensor<1x2x4096x32xbf16>, tensor<1x2x4096x32xbf16> -> tensor<1x8x4x32xbf16>
  return %o : tensor<1x8x4x32xbf16>
}

// -----

// Sizes whose copy's bytes overflow int64 (2^59 keys of 32 bf16 values, as
// many query rows) are too large, not wrapped around into small ones.
// CHECK-LABEL: func.func @overflowing_bytes
// CHECK-NOT:   pair_values
func.func @overflowing_bytes(%q: tensor<1x1x576460752303423488x32xbf16>, %k: tensor<1x1x576460752303423488x32xbf16>) -> tensor<1x1x576460752303423488x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x576460752303423488x32xbf16>, tensor<1x1x576460752303423488x32xbf16>, tensor<1x1x576460752303423488x32xbf16> -> tensor<1x1x576460752303423488x32xbf16>
  return %o : tensor<1x1x576460752303423488x32xbf16>
}
