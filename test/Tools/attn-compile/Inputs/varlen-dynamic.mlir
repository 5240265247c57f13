// attn.sdpa_varlen on dynamic packed rows and sequence counts: its library
// names each dynamic dim apart (arg0_d0 ... result0_d0), though the query's
// and out's rows, the key's and value's, and the two offset counts are each
// one size.
func.func @v(%q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<?x2x16xf32> {
  %o = attn.sdpa_varlen %q, %k, %v, %cq, %ck
      : tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>, tensor<?xi32> -> tensor<?x2x16xf32>
  return %o : tensor<?x2x16xf32>
}
