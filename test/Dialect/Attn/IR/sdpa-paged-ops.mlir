// attn.sdpa_paged round-trips through the printer and the parser: both cache
// layouts, dynamic sizes, lse, slopes and every attribute.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// Decode, GQA, NHD (the default layout), pages and sequences dynamic.
// CHECK-LABEL: func.func @decode
// CHECK: attn.sdpa_paged %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8x1x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x1x64xbf16>
func.func @decode(%q: tensor<?x8x1x64xbf16>, %kc: tensor<?x16x2x64xbf16>, %vc: tensor<?x16x2x64xbf16>, %pt: tensor<?x?xi32>, %len: tensor<?xi32>) -> tensor<?x8x1x64xbf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len : tensor<?x8x1x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x16x2x64xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x1x64xbf16>
  return %o : tensor<?x8x1x64xbf16>
}

// HND, chunked prefill (Lq > 1), lse, Dv != D, every attribute.
// CHECK-LABEL: func.func @everything
// CHECK: attn.sdpa_paged
// CHECK-SAME: causal = #attn.causal<bottom_right>
// CHECK-SAME: layout = #attn.kv_layout<hnd>
// CHECK-SAME: scale = 1.250000e-01 : f32
// CHECK-SAME: softcap = 3.000000e+01 : f32
// CHECK-SAME: window = array<i64: 8, -1>
// CHECK-SAME: : tensor<3x4x5x16xf32>, tensor<10x2x5x16xf32>, tensor<10x2x5x12xf32>, tensor<3x4xi32>, tensor<3xi32> -> tensor<3x4x5x12xf32>, tensor<3x4x5xf32>
func.func @everything(%q: tensor<3x4x5x16xf32>, %kc: tensor<10x2x5x16xf32>, %vc: tensor<10x2x5x12xf32>, %pt: tensor<3x4xi32>, %len: tensor<3xi32>) -> (tensor<3x4x5x12xf32>, tensor<3x4x5xf32>) {
  %o, %lse = attn.sdpa_paged %q, %kc, %vc, %pt, %len {causal = #attn.causal<bottom_right>, layout = #attn.kv_layout<hnd>, scale = 0.125 : f32, softcap = 30.0 : f32, window = array<i64: 8, -1>} : tensor<3x4x5x16xf32>, tensor<10x2x5x16xf32>, tensor<10x2x5x12xf32>, tensor<3x4xi32>, tensor<3xi32> -> tensor<3x4x5x12xf32>, tensor<3x4x5xf32>
  return %o, %lse : tensor<3x4x5x12xf32>, tensor<3x4x5xf32>
}

// ALiBi slopes per head ([Hq]) and per sequence and head ([B, Hq]); an
// explicit NHD layout.
// CHECK-LABEL: func.func @alibi
// CHECK: attn.sdpa_paged %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<4xf32>) : tensor<2x4x1x16xf16>
// CHECK: attn.sdpa_paged %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%{{.*}} : tensor<2x4xf32>) {layout = #attn.kv_layout<nhd>} : tensor<2x4x1x16xf16>
func.func @alibi(%q: tensor<2x4x1x16xf16>, %kc: tensor<?x1x4x16xf16>, %vc: tensor<?x1x4x16xf16>, %pt: tensor<2x7xi32>, %len: tensor<2xi32>, %h: tensor<4xf32>, %bh: tensor<2x4xf32>) -> (tensor<2x4x1x16xf16>, tensor<2x4x1x16xf16>) {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len alibi_slopes(%h : tensor<4xf32>) : tensor<2x4x1x16xf16>, tensor<?x1x4x16xf16>, tensor<?x1x4x16xf16>, tensor<2x7xi32>, tensor<2xi32> -> tensor<2x4x1x16xf16>
  %p = attn.sdpa_paged %q, %kc, %vc, %pt, %len alibi_slopes(%bh : tensor<2x4xf32>) {layout = #attn.kv_layout<nhd>} : tensor<2x4x1x16xf16>, tensor<?x1x4x16xf16>, tensor<?x1x4x16xf16>, tensor<2x7xi32>, tensor<2xi32> -> tensor<2x4x1x16xf16>
  return %o, %p : tensor<2x4x1x16xf16>, tensor<2x4x1x16xf16>
}

// attn.paged_view (attn-view-paged's view of a cache), both layouts, a
// dynamic page count and table width.
// CHECK-LABEL: func.func @views
// CHECK: attn.paged_view %{{.*}}, %{{.*}} : tensor<?x16x2x64xbf16>, tensor<3x4xi32> -> tensor<3x2x64x64xbf16>
// CHECK: attn.paged_view %{{.*}}, %{{.*}} {layout = #attn.kv_layout<hnd>} : tensor<?x2x16x64xbf16>, tensor<3x?xi32> -> tensor<3x2x?x64xbf16>
func.func @views(%kc: tensor<?x16x2x64xbf16>, %hc: tensor<?x2x16x64xbf16>, %pt: tensor<3x4xi32>, %dt: tensor<3x?xi32>) -> (tensor<3x2x64x64xbf16>, tensor<3x2x?x64xbf16>) {
  %a = attn.paged_view %kc, %pt : tensor<?x16x2x64xbf16>, tensor<3x4xi32> -> tensor<3x2x64x64xbf16>
  %b = attn.paged_view %hc, %dt {layout = #attn.kv_layout<hnd>} : tensor<?x2x16x64xbf16>, tensor<3x?xi32> -> tensor<3x2x?x64xbf16>
  return %a, %b : tensor<3x2x64x64xbf16>, tensor<3x2x?x64xbf16>
}
