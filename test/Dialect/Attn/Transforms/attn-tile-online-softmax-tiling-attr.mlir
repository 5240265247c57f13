// A target's plan (attn.tiling on the op) replaces the pass's block sizes
// for that op only, and asks for the K/V layouts; the attribute does not
// survive the tiling.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @planned
// CHECK-NOT: attn.tiling
// CHECK: scf.forall (%{{.*}}) in (2) shared_outs
// CHECK: outs(%{{.*}} : tensor<64x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
func.func @planned(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                   %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %k, %v {attn.tiling = {block_q = 128 : i64}}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
        tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

// The same op without a plan: the pass's 32 rows, four blocks (unit dims
// folded away by -canonicalize).
// CHECK-LABEL: func.func @unplanned
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs
func.func @unplanned(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                     %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
        tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

// transpose_values: V transposed once per call (its own scf.forall of
// transpose_values tile ops) before the query blocks.
// CHECK-LABEL: func.func @transposed
// CHECK: scf.forall
// CHECK: attn.tile = #attn.tile<transpose_values>
// CHECK: scf.forall
// CHECK: attn.tile = #attn.tile<pv>
func.func @transposed(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
                      %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %v {attn.tiling = {transpose_values}}
      : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>,
        tensor<1x2x128x64xbf16> -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
