// RUN: attn-opt %s --convert-attn-to-linalg -split-input-file | FileCheck %s

// The plain case: Q.K^T into an f32 table, scale, row max, exp, row sum,
// P.V, normalize.
// CHECK-DAG: #[[$QMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[$SMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x8xf32>)
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.353553385 : f32
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[S0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x2x4x6xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$KMAP]], #[[$SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[S0]] : tensor<1x2x4x6xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[SS:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ID4]]], {{.*}} ins(%[[S]] : tensor<1x2x4x6xf32>)
// CHECK:   arith.mulf %{{.*}}, %[[SCALE]]
// CHECK-NOT: linalg.index
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[$ID4]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[SS]] : {{.*}}) outs(%{{.*}} : tensor<1x2x4xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[SS]], %[[MAX]] : {{.*}})
// CHECK:   %[[HIDDEN:.*]] = arith.cmpf oeq, %{{.*}}, %[[NEGINF]]
// CHECK:   %[[EXP:.*]] = math.exp
// CHECK:   arith.select %[[HIDDEN]], %[[ZERO]], %[[EXP]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[E]] : {{.*}}) outs(%{{.*}} : tensor<1x2x4xf32>)
// CHECK:   arith.addf
// CHECK: %[[PV:.*]] = linalg.generic {indexing_maps = [#[[$QMAP]], #[[$VMAP]], #[[$SMAP]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[E]], %[[V]] : {{.*}})
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[PV]], %[[SUM]] : {{.*}}) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK:   arith.divf
// CHECK: return %[[OUT]]
func.func @plain(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Grouped-query heads: query head h reads key/value head h floordiv 3, in
// the indexing maps (no copy of K or V).
// CHECK-DAG: #[[$KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 3, d3, d4)>
// CHECK-DAG: #[[$VMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 3, d4, d3)>
// CHECK-LABEL: func.func @gqa
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$KMAP]], #{{.*}}]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$VMAP]], #{{.*}}]
func.func @gqa(%q: tensor<2x6x4x16xf32>, %k: tensor<2x2x5x16xf32>, %v: tensor<2x2x5x16xf32>) -> tensor<2x6x4x16xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<2x6x4x16xf32>, tensor<2x2x5x16xf32>, tensor<2x2x5x16xf32> -> tensor<2x6x4x16xf32>
  return %o : tensor<2x6x4x16xf32>
}

// -----

// A boolean mask broadcast over batch and heads reads index 0 there, and
// selects -inf where it is false.
// CHECK-DAG: #[[$MMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
// CHECK-LABEL: func.func @bool_mask_broadcast
// CHECK-SAME: %[[M:[a-z0-9]*]]: tensor<1x1x4x6xi1>
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$MMAP]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[M]] : tensor<2x3x4x6xf32>, tensor<1x1x4x6xi1>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[KEEP:.*]]: i1, %{{.*}}: f32):
// CHECK:   %[[SCALED:.*]] = arith.mulf %[[S]]
// CHECK:   arith.select %[[KEEP]], %[[SCALED]], %[[NEGINF]] : f32
func.func @bool_mask_broadcast(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %m: tensor<1x1x4x6xi1>) -> tensor<2x3x4x8xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) : tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<1x1x4x6xi1> -> tensor<2x3x4x8xf32>
  return %o : tensor<2x3x4x8xf32>
}

// -----

// A float mask of the query's type (f16) is extended and added after the
// scale; the products accumulate in f32 and the result is rounded once.
// CHECK-DAG: #[[$MMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>
// CHECK-LABEL: func.func @float_mask_f16
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x4x8xf16>, tensor<2x3x6x8xf16>) outs(%{{.*}} : tensor<2x3x4x6xf32>)
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[$MMAP]], #{{.*}}]
// CHECK: ^bb0(%{{.*}}: f32, %[[MV:.*]]: f16, %{{.*}}: f32):
// CHECK:   %[[SCALED:.*]] = arith.mulf
// CHECK:   %[[MX:.*]] = arith.extf %[[MV]] : f16 to f32
// CHECK:   arith.addf %[[SCALED]], %[[MX]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @float_mask_f16(%q: tensor<2x3x4x8xf16>, %k: tensor<2x3x6x8xf16>, %m: tensor<2x1x1x6xf16>) -> tensor<2x3x4x8xf16> {
  %o = attn.sdpa %q, %k, %k mask(%m) {scale = 0.5 : f32} : tensor<2x3x4x8xf16>, tensor<2x3x6x8xf16>, tensor<2x3x6x8xf16>, tensor<2x1x1x6xf16> -> tensor<2x3x4x8xf16>
  return %o : tensor<2x3x4x8xf16>
}

// -----

// Top-left causal: key j is visible to query i iff j <= i.
// CHECK-LABEL: func.func @causal_top_left
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[VIS:.*]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK: arith.select %[[VIS]]
func.func @causal_top_left(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Bottom-right causal: iff j <= i + Lk - Lq (here 6 - 4 = 2).
// CHECK-LABEL: func.func @causal_bottom_right
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant 2 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK: %[[VIS:.*]] = arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: arith.select %[[VIS]]
func.func @causal_bottom_right(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// A sliding window without causal is aligned bottom-right: key j is visible
// to query i iff i + 2 - 3 <= j <= i + 2 + 1 (Lk - Lq = 2).
// CHECK-LABEL: func.func @window_bottom_right
// CHECK-DAG: %[[SHIFT:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[LEFT:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[RIGHT:.*]] = arith.constant 1 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK: %[[LOW:.*]] = arith.subi %[[DIAG]], %[[LEFT]] : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[J]], %[[LOW]] : index
// CHECK: %[[HIGH:.*]] = arith.addi %[[DIAG]], %[[RIGHT]] : index
// CHECK: %[[LE:.*]] = arith.cmpi sle, %[[J]], %[[HIGH]] : index
// CHECK: %[[VIS:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: arith.select %[[VIS]]
func.func @window_bottom_right(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k {window = array<i64: 3, 1>} : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// With causal top_left, the window shares its diagonal d = i, and the
// causal rule bounds the right side: i - 2 <= j <= i.
// CHECK-LABEL: func.func @window_causal_top_left
// CHECK-DAG: %[[LEFT:.*]] = arith.constant 2 : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[LOW:.*]] = arith.subi %[[I]], %[[LEFT]] : index
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[J]], %[[LOW]] : index
// CHECK: %[[LE:.*]] = arith.cmpi sle, %[[J]], %[[I]] : index
// CHECK: %[[VIS:.*]] = arith.andi %[[GE]], %[[LE]] : i1
// CHECK: arith.select %[[VIS]]
func.func @window_causal_top_left(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>, window = array<i64: 2, 5>} : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Softcap: c * tanh(s / c) on the scaled score, before the mask.
// CHECK-LABEL: func.func @softcap
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.353553385 : f32
// CHECK-DAG: %[[INV:.*]] = arith.constant 2.000000e-01 : f32
// CHECK-DAG: %[[CAP:.*]] = arith.constant 5.000000e+00 : f32
// CHECK: ^bb0(%[[S:.*]]: f32, %[[M:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[SS:.*]] = arith.mulf %[[S]], %[[SCALE]] : f32
// CHECK: %[[X:.*]] = arith.mulf %[[SS]], %[[INV]] : f32
// CHECK: %[[T:.*]] = math.tanh %[[X]] : f32
// CHECK: %[[C:.*]] = arith.mulf %[[T]], %[[CAP]] : f32
// CHECK: arith.addf %[[C]], %[[M]] : f32
func.func @softcap(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x6x8xf32>, %m: tensor<1x1x4x6xf32>) -> tensor<1x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k mask(%m) {softcap = 5.0 : f32} : tensor<1x1x4x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x6x8xf32>, tensor<1x1x4x6xf32> -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// Key lengths: keys j >= clamp(key_lengths[b], 0, Lk) are hidden, and the
// bottom-right diagonal sits at that length: i + len - Lq.
// CHECK-LABEL: func.func @key_lengths
// CHECK-SAME: %{{[^:]*}}: tensor<2x1x6x8xf32>, %[[KL:[^:]*]]: tensor<2xi32>
// CHECK-DAG: %[[LQ:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[LK:.*]] = arith.constant 6 : index
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[L32:.*]] = tensor.extract %[[KL]][%[[B]]] : tensor<2xi32>
// CHECK: %[[L:.*]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[LMAX:.*]] = arith.maxsi %[[L]], %{{.*}} : index
// CHECK: %[[LEN:.*]] = arith.minsi %[[LMAX]], %[[LK]] : index
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[SHIFT:.*]] = arith.subi %[[LEN]], %[[LQ]] : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[SHIFT]] : index
// CHECK: arith.cmpi sle, %[[J]], %[[DIAG]] : index
// CHECK: %[[J2:.*]] = linalg.index 3 : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[J2]], %[[LEN]] : index
// CHECK: arith.select %[[IN]]
func.func @key_lengths(%q: tensor<2x1x4x8xf32>, %k: tensor<2x1x6x8xf32>, %kl: tensor<2xi32>) -> tensor<2x1x4x8xf32> {
  %o = attn.sdpa %q, %k, %k key_lengths(%kl : tensor<2xi32>) {causal = #attn.causal<bottom_right>} : tensor<2x1x4x8xf32>, tensor<2x1x6x8xf32>, tensor<2x1x6x8xf32> -> tensor<2x1x4x8xf32>
  return %o : tensor<2x1x4x8xf32>
}

// -----

// ALiBi: s - slope[h] * |i + Lk - Lq - j| (here Lk - Lq = 2), whatever the
// causal alignment.
// CHECK-LABEL: func.func @alibi
// CHECK-SAME: %{{[^:]*}}: tensor<1x2x6x8xf32>, %[[SL:[^:]*]]: tensor<2xf32>
// CHECK-DAG: %[[OFF:.*]] = arith.constant 2 : index
// CHECK: %[[S:.*]] = arith.mulf
// CHECK: %[[H:.*]] = linalg.index 1 : index
// CHECK: %[[SLOPE:.*]] = tensor.extract %[[SL]][%[[H]]] : tensor<2xf32>
// CHECK: %[[I:.*]] = linalg.index 2 : index
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[J:.*]] = linalg.index 3 : index
// CHECK: %[[D:.*]] = arith.subi %[[DIAG]], %[[J]] : index
// CHECK: %[[D32:.*]] = arith.index_cast %[[D]] : index to i32
// CHECK: %[[DF:.*]] = arith.sitofp %[[D32]] : i32 to f32
// CHECK: %[[ABS:.*]] = math.absf %[[DF]] : f32
// CHECK: %[[BIAS:.*]] = arith.mulf %[[SLOPE]], %[[ABS]] : f32
// CHECK: arith.subf %[[S]], %[[BIAS]] : f32
func.func @alibi(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %s: tensor<2xf32>) -> tensor<1x2x4x8xf32> {
  %o = attn.sdpa %q, %k, %k alibi_slopes(%s : tensor<2xf32>) {causal = #attn.causal<top_left>} : tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32> -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// lse = m + log(l), and -inf where l == 0.
// CHECK-LABEL: func.func @lse
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x4xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[SUM]] : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>)
// CHECK: %[[LSE:.*]] = linalg.generic {{.*}} ins(%[[MAX]], %[[SUM]] : tensor<1x2x4xf32>, tensor<1x2x4xf32>)
// CHECK: ^bb0(%[[M:.*]]: f32, %[[L:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[EMPTY:.*]] = arith.cmpf oeq, %[[L]], %[[ZERO]]
// CHECK:   %[[LOG:.*]] = math.log %[[L]]
// CHECK:   %[[ADD:.*]] = arith.addf %[[M]], %[[LOG]]
// CHECK:   arith.select %[[EMPTY]], %[[NEGINF]], %[[ADD]]
// CHECK: return %[[OUT]], %[[LSE]]
func.func @lse(%q: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>) {
  %o, %l = attn.sdpa %q, %q, %q : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>
  return %o, %l : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>
}

// -----

// Dynamic B, Lq and Lk: the tables are sized by tensor.dim, and the
// bottom-right shift is computed at run time.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x?x8xf32>, %[[K:.*]]: tensor<?x2x?x8xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG: %[[LQ:.*]] = tensor.dim %[[Q]], %[[C2]]
// CHECK-DAG: %[[LK:.*]] = tensor.dim %[[K]], %[[C2]]
// CHECK: tensor.empty(%[[B]], %[[LQ]], %[[LK]]) : tensor<?x2x?x?xf32>
// CHECK: %[[SHIFT:.*]] = arith.subi %[[LK]], %[[LQ]] : index
// CHECK: arith.addi %{{.*}}, %[[SHIFT]] : index
// CHECK: tensor.empty(%[[B]], %[[LQ]]) : tensor<?x2x?x8xf32>
func.func @dynamic(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}
