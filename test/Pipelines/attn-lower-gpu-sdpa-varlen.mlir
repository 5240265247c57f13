// attn.sdpa_varlen and its backward, attn.sdpa_varlen_grad, have no GPU
// lowering: both GPU pipelines reject them on the op, naming the CPU
// pipelines that lower them, before anything else runs.
// RUN: not attn-opt %s -split-input-file --attn-lower-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s -split-input-file --attn-lower-naive-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s -split-input-file --attn-reject-sdpa-varlen 2>&1 | FileCheck %s

// CHECK: error: 'attn.sdpa_varlen' op has no GPU lowering: packed variable-length attention runs on the CPU pipelines (attn-lower-cpu, attn-lower-naive-cpu)
func.func @varlen(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x16xf16>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<?x2x16xf16> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<3xi32>, tensor<3xi32> -> tensor<?x2x16xf16>
  return %o : tensor<?x2x16xf16>
}

// -----

// CHECK: error: 'attn.sdpa_varlen_grad' op has no GPU lowering: packed variable-length attention runs on the CPU pipelines (attn-lower-cpu, attn-lower-naive-cpu)
func.func @varlen_grad(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x16xf16>, %o: tensor<?x2x16xf16>, %lse: tensor<2x?xf32>, %do: tensor<?x2x16xf16>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<?x2x16xf16> {
  %dq, %dk, %dv = attn.sdpa_varlen_grad %q, %k, %v, %o, %lse, %do, %cq, %ck : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<2x?xf32>, tensor<?x2x16xf16>, tensor<3xi32>, tensor<3xi32> -> tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>
  return %dq : tensor<?x2x16xf16>
}
