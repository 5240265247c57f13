// attn-run on a FILE whose entry is one attn.sdpa with dynamic b, lq and lk:
// --dims sizes them, and both oracles (the naive lowering and the f64
// reference) check the fused result. An i1 mask broadcast over b and heads,
// bottom-right causality and lse; once with lq < lk, once with lq > lk (the
// first lq - lk rows then see nothing: out = 0, lse = -inf), and a second
// entry with an additive float mask broadcast along lq, in f16.
//
// RUN: attn-run %s --dims b=2,lq=77,lk=300 \
// RUN: | FileCheck %s --check-prefixes=CHECK,LSE,SHORT
// RUN: attn-run %s --dims b=1,lq=300,lk=77 --block-q=16 --block-kv=32 \
// RUN: | FileCheck %s --check-prefixes=CHECK,LSE,TALL
// RUN: attn-run %s --entry float_mask --dims b=3,lq=113,lk=203 --block-q=16 --block-kv=32 \
// RUN: | FileCheck %s --check-prefixes=CHECK,FLOAT

// SHORT:      attn-run: @bool_mask
// SHORT-NEXT: inputs: f32[2x4x77x64] f32[2x2x300x64] f32[2x2x300x48] i1[1x1x77x300]
// TALL:       attn-run: @bool_mask
// TALL-NEXT:  inputs: f32[1x4x300x64] f32[1x2x77x64] f32[1x2x77x48] i1[1x1x300x77]
// FLOAT:      attn-run: @float_mask
// FLOAT-NEXT: inputs: f16[3x6x113x80] f16[3x2x203x80] f16[3x2x203x80] f16[3x1x1x203]
// CHECK:      out f64 (naive) max_abs {{.*}} PASS
// CHECK-NEXT: out f64 max_abs {{.*}} PASS
// CHECK-NEXT: out naive max_abs {{.*}} PASS
// LSE-NEXT:   lse f64 (naive) max_abs {{.*}} PASS
// LSE-NEXT:   lse f64 max_abs {{.*}} PASS
// LSE-NEXT:   lse naive max_abs {{.*}} PASS
// CHECK-NOT:  FAIL
// CHECK:      {{^PASS$}}

func.func @bool_mask(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                     %v: tensor<?x2x?x48xf32>, %m: tensor<1x1x?x?xi1>)
    -> (tensor<?x4x?x48xf32>, tensor<?x4x?xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>}
      : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x48xf32>,
        tensor<1x1x?x?xi1> -> tensor<?x4x?x48xf32>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x48xf32>, tensor<?x4x?xf32>
}

func.func @float_mask(%q: tensor<?x6x?x80xf16>, %k: tensor<?x2x?x80xf16>,
                      %v: tensor<?x2x?x80xf16>, %m: tensor<?x1x1x?xf16>)
    -> tensor<?x6x?x80xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m) {scale = 0.1 : f32}
      : tensor<?x6x?x80xf16>, tensor<?x2x?x80xf16>, tensor<?x2x?x80xf16>,
        tensor<?x1x1x?xf16> -> tensor<?x6x?x80xf16>
  return %o : tensor<?x6x?x80xf16>
}
