// The decode kernel over a paged cache (attn.sdpa_paged through
// attn-view-paged): K and V read in place from the caches, each key's page
// looked up in the page table (its index clamped into the cache), its slot
// the key mod the page size; no gather, no dense copy of the caches, no
// paged view left. NHD and HND, a page size that is not a power of two, a
// dynamic page count.
// RUN: attn-opt %s -split-input-file --attn-view-paged --attn-tile-online-softmax="decode-rows=8 decode-dim-multiple=16 kv-splits=1" --attn-cpu-decode="decode-width=16" --canonicalize --cse | FileCheck %s
// After bufferization in the CPU pipeline: no copy of a cache and no
// buffer of the dense view's shape (the only copies write the output rows).
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1" --mlir-print-ir-before=convert-linalg-to-loops 2>&1 >/dev/null | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @nhd(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<2x8x1x64xf32>, %[[KC:[^:]*]]: tensor<?x5x2x64xf32>, %[[VC:[^:]*]]: tensor<?x5x2x64xf32>, %[[PT:[^:]*]]: tensor<2x8xi32>
// CHECK-NOT: attn.paged_view
// CHECK-NOT: tensor<2x2x40x64xf32>
// CHECK: %[[E:.*]] = tensor.extract %[[PT]][%{{.*}}, %c0] : tensor<2x8xi32>
// CHECK-NEXT: %[[P:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK-NEXT: %[[LO:.*]] = arith.minsi %[[P]], %{{.*}} : index
// CHECK-NEXT: %[[PAGE:.*]] = arith.maxsi %[[LO]], %c0 : index
// CHECK-NEXT: vector.transfer_read %[[KC]][%[[PAGE]], %c0, %{{.*}}, %c0]
// CHECK: %[[COL:.*]] = arith.divui %[[J:.*]], %c5 : index
// CHECK-NEXT: %[[SLOT:.*]] = arith.remui %[[J]], %c5 : index
// CHECK-NEXT: tensor.extract %[[PT]][%{{.*}}, %[[COL]]]
// CHECK: vector.transfer_read %[[VC]][%{{.*}}, %[[SLOT]], %{{.*}}, %c0]
// CHECK-NOT: attn.paged_view
// CHECK-NOT: tensor<2x2x40x64xf32>
// CHECK: return
// BUF-LABEL: func.func @nhd
// BUF-NOT: memref.copy {{.*}}x5x2x64xf32
// BUF-NOT: memref<2x2x40x64xf32>
// BUF: return
func.func @nhd(%q: tensor<2x8x1x64xf32>, %kc: tensor<?x5x2x64xf32>, %vc: tensor<?x5x2x64xf32>, %pt: tensor<2x8xi32>, %len: tensor<2xi32>) -> tensor<2x8x1x64xf32> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {causal = #attn.causal<bottom_right>} : tensor<2x8x1x64xf32>, tensor<?x5x2x64xf32>, tensor<?x5x2x64xf32>, tensor<2x8xi32>, tensor<2xi32> -> tensor<2x8x1x64xf32>
  return %o : tensor<2x8x1x64xf32>
}

// -----

// HND: the head before the slot; a dynamic table width (the view's key
// count from the table and the page size).
// CHECK-LABEL: func.func @hnd(
// CHECK-SAME: %[[KC:[^:]*]]: tensor<?x2x16x64xbf16>, %[[VC:[^:]*]]: tensor<?x2x16x64xbf16>, %[[PT:[^:]*]]: tensor<2x?xi32>
// CHECK-NOT: attn.paged_view
// CHECK: %[[E:.*]] = tensor.extract %[[PT]][%{{.*}}, %c0] : tensor<2x?xi32>
// CHECK: vector.transfer_read %[[KC]][%{{.*}}, %[[H:.*]], %c0, %c0]
// CHECK: vector.transfer_read %[[KC]][%{{.*}}, %[[H]], %c1, %c0]
// CHECK-NOT: attn.paged_view
// CHECK: return
// BUF-LABEL: func.func @hnd
// BUF-NOT: memref.copy {{.*}}x2x16x64xbf16
// BUF-NOT: memref<2x2x?x64xbf16>
// BUF: return
func.func @hnd(%q: tensor<2x8x1x64xbf16>, %kc: tensor<?x2x16x64xbf16>, %vc: tensor<?x2x16x64xbf16>, %pt: tensor<2x?xi32>, %len: tensor<2xi32>) -> tensor<2x8x1x64xbf16> {
  %o = attn.sdpa_paged %q, %kc, %vc, %pt, %len {layout = #attn.kv_layout<hnd>} : tensor<2x8x1x64xbf16>, tensor<?x2x16x64xbf16>, tensor<?x2x16x64xbf16>, tensor<2x?xi32>, tensor<2xi32> -> tensor<2x8x1x64xbf16>
  return %o : tensor<2x8x1x64xbf16>
}
