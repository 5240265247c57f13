// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="transpose-values=true" --attn-tile-online-softmax="block-q=32 block-kv=32" | FileCheck %s

// transpose-values: V [B, Hkv, Lk, Dv] transposed once into [B, Hkv, Dv,
// ceil(Lk / 32) * 32], before the query blocks: one forall over (batch,
// key/value head, full key block) whose tiles are views of V, one over the
// partial last block (0 or 1 of them) whose tile is zero-padded. P.V reads
// [Dv, 32] tiles of it, with the (c, i, t) -> (c, t) map of Vt[e, j], in
// the full blocks and in the tail alike.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:  %[[V:[a-z0-9]+]]: tensor<?x1x?x32xbf16>
// CHECK:       %[[LK:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x1x?x64xbf16>
// CHECK:       %[[C32:.*]] = arith.constant 32 : index
// CHECK:       %[[FULL:.*]] = arith.divui %[[LK]], %[[C32]]
// CHECK:       %[[FULLKEYS:.*]] = arith.muli %[[FULL]], %[[C32]]
// CHECK:       %[[TAILLEN:.*]] = arith.subi %[[LK]], %[[FULLKEYS]]
// CHECK:       %[[TAIL:.*]] = arith.ceildivui %[[TAILLEN]], %[[C32]]
// CHECK:       %[[EMPTY:.*]] = tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x1x32x?xbf16>
// CHECK:       %[[VT0:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[KB:.*]]) in (%{{.*}}, 1, %[[FULL]]) shared_outs(%[[O:.*]] = %[[EMPTY]])
// CHECK:         %[[VTILE:.*]] = tensor.extract_slice %[[V]][%[[B]], %[[H]], %[[K0:.*]], 0] [1, 1, 32, 32]
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[VTILE]] : tensor<32x32xbf16>) {{.*}} attrs = {attn.tile = #attn.tile<transpose_values>}
// CHECK:         tensor.parallel_insert_slice %[[T]] into %[[O]][%[[B]], %[[H]], 0, %[[K0]]] [1, 1, 32, 32]
// CHECK:       %[[VT:.*]] = scf.forall ({{.*}}) in (%{{.*}}, 1, %[[TAIL]]) shared_outs(%{{.*}} = %[[VT0]])
// CHECK:         tensor.pad
// CHECK:         attn.tile = #attn.tile<transpose_values>
// CHECK:       scf.forall
// CHECK:         scf.for
// CHECK:           %[[VB:.*]] = tensor.extract_slice %[[VT]][%{{.*}}, %{{.*}}, 0, %{{.*}}] [1, 1, 32, 32] [1, 1, 1, 1] : tensor<?x1x32x?xbf16> to tensor<32x32xbf16>
// The scores' maps (K [j, d] read as (c, t)) are P.V's (Vt [e, j]).
// CHECK:           linalg.generic {indexing_maps = [[[MAPS:#map[0-9]*, #map[0-9]*, #map[0-9]*]]], {{.*}} attn.tile = #attn.tile<scores>
// CHECK:           linalg.generic {indexing_maps = {{\[}}[[MAPS]]{{\]}}, {{.*}} ins(%{{.*}}, %[[VB]] : tensor<32x32xf32>, tensor<32x32xbf16>) {{.*}}attn.tile = #attn.tile<pv>
// CHECK:         scf.if
// CHECK:           tensor.extract_slice %[[VT]]
// CHECK-NOT:       tensor.pad
// CHECK:           attn.tile = #attn.tile<pv>
func.func @dynamic(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x1x?x64xbf16>, %v: tensor<?x1x?x32xbf16>) -> tensor<?x2x?x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<?x2x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x32xbf16> -> tensor<?x2x?x32xbf16>
  return %o : tensor<?x2x?x32xbf16>
}

// -----

// Only bf16 values with Dv and the key blocks multiples of 16: f16 values,
// Dv = 40, and keys that make 24-key blocks keep V as it is.
// CHECK-LABEL: func.func @f16_values
// CHECK-NOT:   transpose_values
func.func @f16_values(%q: tensor<1x1x64x32xf16>) -> tensor<1x1x64x32xf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16> -> tensor<1x1x64x32xf16>
  return %o : tensor<1x1x64x32xf16>
}

// -----

// CHECK-LABEL: func.func @odd_dv
// CHECK-NOT:   transpose_values
func.func @odd_dv(%q: tensor<1x1x64x32xbf16>, %v: tensor<1x1x64x40xbf16>) -> tensor<1x1x64x40xbf16> {
  %o = attn.sdpa %q, %q, %v : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x40xbf16> -> tensor<1x1x64x40xbf16>
  return %o : tensor<1x1x64x40xbf16>
}

// -----

// CHECK-LABEL: func.func @short_keys
// CHECK-NOT:   transpose_values
func.func @short_keys(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x24x32xbf16>) -> tensor<1x1x64x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x32xbf16>, tensor<1x1x24x32xbf16>, tensor<1x1x24x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}
