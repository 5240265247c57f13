// attn.sdpa_varlen has no GPU lowering: both GPU pipelines reject it on the
// op, naming the CPU pipelines that lower it, before anything else runs.
// RUN: not attn-opt %s --attn-lower-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-lower-naive-gpu 2>&1 | FileCheck %s
// RUN: not attn-opt %s --attn-reject-sdpa-varlen 2>&1 | FileCheck %s

// CHECK: error: 'attn.sdpa_varlen' op has no GPU lowering: packed variable-length attention runs on the CPU pipelines (attn-lower-cpu, attn-lower-naive-cpu)
func.func @varlen(%q: tensor<?x2x16xf16>, %k: tensor<?x2x16xf16>, %v: tensor<?x2x16xf16>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) -> tensor<?x2x16xf16> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck : tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<?x2x16xf16>, tensor<3xi32>, tensor<3xi32> -> tensor<?x2x16xf16>
  return %o : tensor<?x2x16xf16>
}
