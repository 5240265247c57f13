// attn-gather-paged: the oracle's form of attn.sdpa_paged. Each cache is
// copied into dense [B, Hkv, max_pages * page_size, D] keys or values by a
// linalg.generic whose element (b, h, t, d) reads the cache at
// (page_table[b, t / page_size], t % page_size, h, d) (NHD; HND swaps slot
// and head) only under t < kv_lens[b] and 0 <= page < num_pages, else 0;
// then one attn.sdpa with key_lengths = kv_lens and the op's attributes and
// slopes.
// RUN: attn-opt %s --attn-gather-paged | FileCheck %s
// The naive CPU pipeline runs it and lowers static and dynamic sizes to LLVM.
// RUN: attn-opt %s --attn-lower-naive-cpu | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x3x16xf32>, %[[KC:.*]]: tensor<?x5x2x16xf32>, %[[VC:.*]]: tensor<?x5x2x12xf32>, %[[PT:.*]]: tensor<2x3xi32>, %[[LEN:.*]]: tensor<2xi32>, %[[S:.*]]: tensor<4xf32>)
// CHECK-NOT: attn.sdpa_paged
// CHECK: %[[KE:.*]] = tensor.empty() : tensor<2x2x15x16xf32>
// CHECK-DAG: %[[P:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[PAGES:.*]] = tensor.dim %[[KC]], %{{.*}} : tensor<?x5x2x16xf32>
// CHECK: %[[K:.*]] = linalg.generic {{.*}} outs(%[[KE]] : tensor<2x2x15x16xf32>)
// CHECK:   %[[B:.*]] = linalg.index 0 : index
// CHECK:   %[[H:.*]] = linalg.index 1 : index
// CHECK:   %[[T:.*]] = linalg.index 2 : index
// CHECK:   %[[E:.*]] = linalg.index 3 : index
// CHECK:   %[[LI:.*]] = tensor.extract %[[LEN]][%[[B]]] : tensor<2xi32>
// CHECK:   %[[L:.*]] = arith.index_cast %[[LI]] : i32 to index
// CHECK:   %[[COL:.*]] = arith.divui %[[T]], %[[P]] : index
// CHECK:   %[[SLOT:.*]] = arith.remui %[[T]], %[[P]] : index
// CHECK:   %[[PGI:.*]] = tensor.extract %[[PT]][%[[B]], %[[COL]]] : tensor<2x3xi32>
// CHECK:   %[[PG:.*]] = arith.index_cast %[[PGI]] : i32 to index
// CHECK:   %[[IN:.*]] = arith.cmpi slt, %[[T]], %[[L]] : index
// CHECK:   %[[NN:.*]] = arith.cmpi sge, %[[PG]], %{{.*}} : index
// CHECK:   %[[INC:.*]] = arith.cmpi slt, %[[PG]], %[[PAGES]] : index
// CHECK:   %[[OK1:.*]] = arith.andi %[[NN]], %[[INC]] : i1
// CHECK:   %[[OK:.*]] = arith.andi %[[IN]], %[[OK1]] : i1
// CHECK:   %[[R:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK:     %[[X:.*]] = tensor.extract %[[KC]][%[[PG]], %[[SLOT]], %[[H]], %[[E]]] : tensor<?x5x2x16xf32>
// CHECK:     scf.yield %[[X]] : f32
// CHECK:   } else {
// CHECK:     %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:     scf.yield %[[Z]] : f32
// CHECK:   linalg.yield %[[R]] : f32
// CHECK: %[[V:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x15x12xf32>)
// CHECK: %[[O:.*]], %[[LSE:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] key_lengths(%[[LEN]] : tensor<2xi32>) alibi_slopes(%[[S]] : tensor<4xf32>) {causal = #attn.causal<bottom_right>, scale = 2.500000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 4, 0>} : tensor<2x4x3x16xf32>, tensor<2x2x15x16xf32>, tensor<2x2x15x12xf32> -> tensor<2x4x3x12xf32>, tensor<2x4x3xf32>
// CHECK: return %[[O]], %[[LSE]]

// LLVM-LABEL: llvm.func @paged
// LLVM-NOT: attn.
func.func @paged(%q: tensor<2x4x3x16xf32>, %kc: tensor<?x5x2x16xf32>, %vc: tensor<?x5x2x12xf32>, %pt: tensor<2x3xi32>, %len: tensor<2xi32>, %s: tensor<4xf32>) -> (tensor<2x4x3x12xf32>, tensor<2x4x3xf32>) {
  %o, %l = attn.sdpa_paged %q, %kc, %vc, %pt, %len alibi_slopes(%s : tensor<4xf32>) {causal = #attn.causal<bottom_right>, scale = 0.25 : f32, softcap = 30.0 : f32, window = array<i64: 4, 0>} : tensor<2x4x3x16xf32>, tensor<?x5x2x16xf32>, tensor<?x5x2x12xf32>, tensor<2x3xi32>, tensor<2xi32> -> tensor<2x4x3x12xf32>, tensor<2x4x3xf32>
  return %o, %l : tensor<2x4x3x12xf32>, tensor<2x4x3xf32>
}

// HND: the slot is the cache's dim 2, the head dim 1; every size dynamic
// (the dense key span is max_pages * page_size, read from the operands).
// CHECK-LABEL: func.func @hnd_dynamic
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x?x16xbf16>, %[[KC:.*]]: tensor<?x2x?x16xbf16>, %[[VC:.*]]: tensor<?x2x?x16xbf16>, %[[PT:.*]]: tensor<?x?xi32>, %[[LEN:.*]]: tensor<?xi32>)
// CHECK: %[[BATCH:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4x?x16xbf16>
// CHECK: %[[P:.*]] = tensor.dim %[[KC]], %{{.*}} : tensor<?x2x?x16xbf16>
// CHECK: %[[MAXP:.*]] = tensor.dim %[[PT]], %{{.*}} : tensor<?x?xi32>
// CHECK: %[[SPAN:.*]] = arith.muli %[[MAXP]], %[[P]] : index
// CHECK: %[[KE:.*]] = tensor.empty(%[[BATCH]], %[[SPAN]]) : tensor<?x2x?x16xbf16>
// CHECK: %[[K:.*]] = linalg.generic {{.*}} outs(%[[KE]] : tensor<?x2x?x16xbf16>)
// CHECK:   %[[H:.*]] = linalg.index 1 : index
// CHECK:   %[[T:.*]] = linalg.index 2 : index
// CHECK:   %[[E:.*]] = linalg.index 3 : index
// CHECK:   %[[SLOT:.*]] = arith.remui %[[T]], %[[P]] : index
// CHECK:   %[[PG:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:   scf.if %{{.*}} -> (bf16) {
// CHECK:     tensor.extract %[[KC]][%[[PG]], %[[H]], %[[SLOT]], %[[E]]] : tensor<?x2x?x16xbf16>
// CHECK: %[[V:.*]] = linalg.generic
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] key_lengths(%[[LEN]] : tensor<?xi32>) : tensor<?x4x?x16xbf16>, tensor<?x2x?x16xbf16>, tensor<?x2x?x16xbf16> -> tensor<?x4x?x16xbf16>

// LLVM-LABEL: llvm.func @hnd_dynamic
// LLVM-NOT: attn.
func.func @hnd_dynamic(%q: tensor<?x4x?x16xbf16>, %kc: tensor<?x2x?x16xbf16>, %vc: tensor<?x2x?x16xbf16>, %pt: tensor<?x?xi32>, %len: tensor<?xi32>) -> tensor<?x4x?x16xbf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {layout = #attn.kv_layout<hnd>} : tensor<?x4x?x16xbf16>, tensor<?x2x?x16xbf16>, tensor<?x2x?x16xbf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x4x?x16xbf16>
  return %o : tensor<?x4x?x16xbf16>
}
