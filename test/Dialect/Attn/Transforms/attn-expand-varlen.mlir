// attn-expand-varlen: one attn.sdpa per packed sequence, in a sequential
// scf.for over the B = dim(cu_seqlens_q) - 1 sequences; each iteration
// slices the sequence's rows [cu[b], cu[b+1]) (dynamic sizes), transposes
// them to [1, H, L_b, D], and writes the result rows (and the lse columns)
// back into the packed results, which start as 0 and -inf.
// RUN: attn-opt %s --attn-expand-varlen | FileCheck %s
// Both CPU pipelines run it first and lower dynamic totals to LLVM.
// RUN: attn-opt %s --attn-lower-cpu | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --attn-lower-naive-cpu | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @varlen
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x16xf32>, %[[K:.*]]: tensor<?x2x16xf32>, %[[V:.*]]: tensor<?x2x12xf32>, %[[CQ:.*]]: tensor<?xi32>, %[[CK:.*]]: tensor<?xi32>)
// CHECK-NOT: attn.sdpa_varlen
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[OUT0:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<?x4x12xf32>)
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[LSE0:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<4x?xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[CQ]], %{{.*}} : tensor<?xi32>
// CHECK: %[[B:.*]] = arith.subi %[[N]], %[[C1:.*]] : index
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[S:.*]] = %{{.*}} to %[[B]] step %[[C1]] iter_args(%[[OUT:.*]] = %[[OUT0]], %[[LSE:.*]] = %[[LSE0]])
// CHECK:   %[[NEXT:.*]] = arith.addi %[[S]], %[[C1]]
// CHECK:   %[[Q0I:.*]] = tensor.extract %[[CQ]][%[[S]]]
// CHECK:   %[[Q0:.*]] = arith.index_cast %[[Q0I]] : i32 to index
// CHECK:   %[[Q1I:.*]] = tensor.extract %[[CQ]][%[[NEXT]]]
// CHECK:   %[[Q1:.*]] = arith.index_cast %[[Q1I]] : i32 to index
// CHECK:   %[[K0I:.*]] = tensor.extract %[[CK]][%[[S]]]
// CHECK:   %[[K0:.*]] = arith.index_cast %[[K0I]] : i32 to index
// CHECK:   %[[K1I:.*]] = tensor.extract %[[CK]][%[[NEXT]]]
// CHECK:   %[[K1:.*]] = arith.index_cast %[[K1I]] : i32 to index
// CHECK:   %[[LQ:.*]] = arith.subi %[[Q1]], %[[Q0]]
// CHECK:   %[[LK:.*]] = arith.subi %[[K1]], %[[K0]]
// CHECK:   %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[Q0]], 0, 0] [%[[LQ]], 4, 16] [1, 1, 1]
// CHECK:   %[[QE:.*]] = tensor.expand_shape %[[QS]] {{\[\[}}0, 1], [2], [3]] output_shape [1, %[[LQ]], 4, 16]
// CHECK:   %[[QT:.*]] = linalg.transpose ins(%[[QE]] : tensor<1x?x4x16xf32>) outs(%{{.*}} : tensor<1x4x?x16xf32>) permutation = [0, 2, 1, 3]
// CHECK:   tensor.extract_slice %[[K]][%[[K0]], 0, 0] [%[[LK]], 2, 16] [1, 1, 1]
// CHECK:   %[[KT:.*]] = linalg.transpose
// CHECK:   tensor.extract_slice %[[V]][%[[K0]], 0, 0] [%[[LK]], 2, 12] [1, 1, 1]
// CHECK:   %[[VT:.*]] = linalg.transpose
// CHECK:   %[[O:.*]], %[[L:.*]] = attn.sdpa %[[QT]], %[[KT]], %[[VT]] {causal = #attn.causal<bottom_right>, scale = 2.500000e-01 : f32, softcap = 3.000000e+01 : f32, window = array<i64: 8, -1>} : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x12xf32> -> tensor<1x4x?x12xf32>, tensor<1x4x?xf32>
// CHECK:   %[[OC:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<1x4x?x12xf32> into tensor<4x?x12xf32>
// CHECK:   %[[OT:.*]] = linalg.transpose ins(%[[OC]] : tensor<4x?x12xf32>) outs(%{{.*}} : tensor<?x4x12xf32>) permutation = [1, 0, 2]
// CHECK:   %[[OI:.*]] = tensor.insert_slice %[[OT]] into %[[OUT]][%[[Q0]], 0, 0] [%[[LQ]], 4, 12] [1, 1, 1]
// CHECK:   %[[LC:.*]] = tensor.collapse_shape %[[L]] {{\[\[}}0, 1], [2]] : tensor<1x4x?xf32> into tensor<4x?xf32>
// CHECK:   %[[LI:.*]] = tensor.insert_slice %[[LC]] into %[[LSE]][0, %[[Q0]]] [4, %[[LQ]]] [1, 1]
// CHECK:   scf.yield %[[OI]], %[[LI]]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1

// LLVM-LABEL: llvm.func @varlen
// LLVM-NOT: attn.
func.func @varlen(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<?x4x12xf32>, tensor<4x?xf32>) {
  %o, %l = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>, scale = 0.25 : f32, softcap = 30.0 : f32, window = array<i64: 8, -1>} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x12xf32>, tensor<4x?xf32>
  return %o, %l : tensor<?x4x12xf32>, tensor<4x?xf32>
}

// Without lse: one loop result; a static packed total keeps its type.
// CHECK-LABEL: func.func @no_lse
// CHECK: %[[R:.*]] = scf.for
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x2x?x8xbf16>, tensor<1x2x?x8xbf16>, tensor<1x2x?x8xbf16> -> tensor<1x2x?x8xbf16>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}} : tensor<?x2x8xbf16> into tensor<10x2x8xbf16>
// CHECK: return %[[R]] : tensor<10x2x8xbf16>
// LLVM-LABEL: llvm.func @no_lse
func.func @no_lse(%q: tensor<10x2x8xbf16>, %k: tensor<7x2x8xbf16>, %v: tensor<7x2x8xbf16>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<10x2x8xbf16> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<10x2x8xbf16>, tensor<7x2x8xbf16>, tensor<7x2x8xbf16>, tensor<3xi32>, tensor<3xi32> -> tensor<10x2x8xbf16>
  return %o : tensor<10x2x8xbf16>
}

// ALiBi slopes [B, Hq]: each sequence's row, as the inner op's [1, Hq]
// slopes; [Hq] slopes pass through as they are.
// CHECK-LABEL: func.func @alibi
// CHECK-SAME: %[[BH:[^:]*]]: tensor<?x2xf32>, %[[H:[^:]*]]: tensor<2xf32>
// CHECK: scf.for %[[S:[^ ]*]] =
// CHECK:   %[[ROW:.*]] = tensor.extract_slice %[[BH]][%[[S]], 0] [1, 2] [1, 1] : tensor<?x2xf32> to tensor<1x2xf32>
// CHECK:   attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%[[ROW]] : tensor<1x2xf32>) {causal = #attn.causal<top_left>}
// CHECK: scf.for
// CHECK:   attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} alibi_slopes(%[[H]] : tensor<2xf32>) :
// LLVM-LABEL: llvm.func @alibi
func.func @alibi(%q: tensor<10x2x8xf32>, %k: tensor<7x2x8xf32>, %v: tensor<7x2x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %bh: tensor<?x2xf32>, %h: tensor<2xf32>) -> (tensor<10x2x8xf32>, tensor<10x2x8xf32>) {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%bh : tensor<?x2xf32>) {causal = #attn.causal<top_left>} : tensor<10x2x8xf32>, tensor<7x2x8xf32>, tensor<7x2x8xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<10x2x8xf32>
  %p = attn.sdpa_varlen %q, %k, %v, %cq, %ck alibi_slopes(%h : tensor<2xf32>) : tensor<10x2x8xf32>, tensor<7x2x8xf32>, tensor<7x2x8xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<10x2x8xf32>
  return %o, %p : tensor<10x2x8xf32>, tensor<10x2x8xf32>
}

// attn.sdpa_varlen_grad: one attn.sdpa_grad per sequence, on the rows the
// forward's expansion slices (query, key, value, out, d_out) and the
// sequence's lse columns as [1, Hq, Lq_b]; its gradients are written back
// into zero-filled packed results.
// CHECK-LABEL: func.func @varlen_grad
// CHECK-SAME: (%[[Q:.*]]: tensor<?x4x16xf32>, %[[K:.*]]: tensor<?x2x16xf32>, %[[V:.*]]: tensor<?x2x12xf32>, %[[O:.*]]: tensor<?x4x12xf32>, %[[LSE:.*]]: tensor<4x?xf32>, %[[DO:.*]]: tensor<?x4x12xf32>, %[[CQ:.*]]: tensor<?xi32>, %[[CK:.*]]: tensor<?xi32>)
// CHECK-NOT: attn.sdpa_varlen_grad
// CHECK: %[[DQ0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x4x16xf32>)
// CHECK: %[[DK0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x2x16xf32>)
// CHECK: %[[DV0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x2x12xf32>)
// CHECK: %[[LOOP:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[DQ:.*]] = %[[DQ0]], %[[DK:.*]] = %[[DK0]], %[[DV:.*]] = %[[DV0]])
// CHECK:   %[[LQ:.*]] = arith.subi
// CHECK:   %[[LK:.*]] = arith.subi
// CHECK:   tensor.extract_slice %[[Q]][%[[Q0:.*]], 0, 0] [%[[LQ]], 4, 16] [1, 1, 1]
// CHECK:   %[[QT:.*]] = linalg.transpose
// CHECK:   tensor.extract_slice %[[K]][%[[K0:.*]], 0, 0] [%[[LK]], 2, 16] [1, 1, 1]
// CHECK:   %[[KT:.*]] = linalg.transpose
// CHECK:   tensor.extract_slice %[[V]][%[[K0]], 0, 0] [%[[LK]], 2, 12] [1, 1, 1]
// CHECK:   %[[VT:.*]] = linalg.transpose
// CHECK:   tensor.extract_slice %[[O]][%[[Q0]], 0, 0] [%[[LQ]], 4, 12] [1, 1, 1]
// CHECK:   %[[OT:.*]] = linalg.transpose
// CHECK:   tensor.extract_slice %[[DO]][%[[Q0]], 0, 0] [%[[LQ]], 4, 12] [1, 1, 1]
// CHECK:   %[[DOT:.*]] = linalg.transpose
// CHECK:   %[[LS:.*]] = tensor.extract_slice %[[LSE]][0, %[[Q0]]] [4, %[[LQ]]] [1, 1] : tensor<4x?xf32> to tensor<4x?xf32>
// CHECK:   %[[LE:.*]] = tensor.expand_shape %[[LS]] {{\[\[}}0, 1], [2]] output_shape [1, 4, %[[LQ]]] : tensor<4x?xf32> into tensor<1x4x?xf32>
// CHECK:   %{{.*}}, %{{.*}}, %{{.*}} = attn.sdpa_grad %[[QT]], %[[KT]], %[[VT]], %[[OT]], %[[LE]], %[[DOT]] {causal = #attn.causal<bottom_right>, scale = 2.500000e-01 : f32}
// CHECK:   tensor.insert_slice %{{.*}} into %[[DQ]][%[[Q0]], 0, 0] [%[[LQ]], 4, 16] [1, 1, 1]
// CHECK:   tensor.insert_slice %{{.*}} into %[[DK]][%[[K0]], 0, 0] [%[[LK]], 2, 16] [1, 1, 1]
// CHECK:   tensor.insert_slice %{{.*}} into %[[DV]][%[[K0]], 0, 0] [%[[LK]], 2, 12] [1, 1, 1]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1, %[[LOOP]]#2

// LLVM-LABEL: llvm.func @varlen_grad
// LLVM-NOT: attn.
func.func @varlen_grad(%q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x12xf32>, %o: tensor<?x4x12xf32>, %lse: tensor<4x?xf32>, %do: tensor<?x4x12xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>) {
  %dq, %dk, %dv = attn.sdpa_varlen_grad %q, %k, %v, %o, %lse, %do, %cq, %ck {causal = #attn.causal<bottom_right>, scale = 0.25 : f32} : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>, tensor<?x4x12xf32>, tensor<4x?xf32>, tensor<?x4x12xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
  return %dq, %dk, %dv : tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x12xf32>
}
