// attn.sdpa_varlen with its offsets as the entry's arguments (FILE mode):
// 3 sequences packed into 20 query and 30 key rows.
func.func @varlen(%q: tensor<20x2x16xf32>, %k: tensor<30x2x16xf32>, %v: tensor<30x2x16xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>) -> tensor<20x2x16xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>}
      : tensor<20x2x16xf32>, tensor<30x2x16xf32>, tensor<30x2x16xf32>, tensor<4xi32>, tensor<4xi32> -> tensor<20x2x16xf32>
  return %o : tensor<20x2x16xf32>
}
