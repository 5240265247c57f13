// attn-run on an entry that does more than one attn.sdpa: the f64 reference
// only knows a single attn.sdpa on the entry's arguments, so attn-run says it
// skipped it and checks the fused pipeline against the naive one alone, per
// result. @chain feeds one attention's output into a second one (causal,
// grouped-query) and adds the two; @two_results returns two attentions over
// the same inputs, one with a broadcast i1 mask and lse.
//
// RUN: attn-run %s | FileCheck %s --check-prefix=CHAIN
// RUN: attn-run %s --entry two_results --block-q=16 --block-kv=32 \
// RUN: | FileCheck %s --check-prefix=TWO

// CHAIN:      attn-run: @chain
// CHAIN:      f64 reference skipped: the entry is not one attn.sdpa on its arguments
// CHAIN-NEXT: result0 naive max_abs {{.*}} PASS
// CHAIN-NOT:  FAIL
// CHAIN:      {{^PASS$}}

// TWO:      attn-run: @two_results
// TWO:      f64 reference skipped: the entry is not one attn.sdpa on its arguments
// TWO-NEXT: result0 naive max_abs {{.*}} PASS
// TWO-NEXT: result1 naive max_abs {{.*}} PASS
// TWO-NEXT: result2 naive max_abs {{.*}} PASS
// TWO-NOT:  FAIL
// TWO:      {{^PASS$}}

func.func @chain(%q: tensor<1x4x113x64xf32>, %k: tensor<1x2x203x64xf32>,
                 %v: tensor<1x2x203x64xf32>) -> tensor<1x4x113x64xf32> {
  %a = attn.sdpa %q, %k, %v
      : tensor<1x4x113x64xf32>, tensor<1x2x203x64xf32>, tensor<1x2x203x64xf32>
        -> tensor<1x4x113x64xf32>
  %b = attn.sdpa %a, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x4x113x64xf32>, tensor<1x2x203x64xf32>, tensor<1x2x203x64xf32>
        -> tensor<1x4x113x64xf32>
  %init = tensor.empty() : tensor<1x4x113x64xf32>
  %c = linalg.add ins(%a, %b : tensor<1x4x113x64xf32>, tensor<1x4x113x64xf32>)
                  outs(%init : tensor<1x4x113x64xf32>) -> tensor<1x4x113x64xf32>
  return %c : tensor<1x4x113x64xf32>
}

func.func @two_results(%q: tensor<2x3x77x32xf32>, %k: tensor<2x3x130x32xf32>,
                       %v: tensor<2x3x130x40xf32>, %m: tensor<2x1x1x130xi1>)
    -> (tensor<2x3x77x40xf32>, tensor<2x3x77x40xf32>, tensor<2x3x77xf32>) {
  %a = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<2x3x77x32xf32>, tensor<2x3x130x32xf32>, tensor<2x3x130x40xf32>
        -> tensor<2x3x77x40xf32>
  %b, %lse = attn.sdpa %q, %k, %v mask(%m)
      : tensor<2x3x77x32xf32>, tensor<2x3x130x32xf32>, tensor<2x3x130x40xf32>,
        tensor<2x1x1x130xi1> -> tensor<2x3x77x40xf32>, tensor<2x3x77xf32>
  return %a, %b, %lse : tensor<2x3x77x40xf32>, tensor<2x3x77x40xf32>, tensor<2x3x77xf32>
}
