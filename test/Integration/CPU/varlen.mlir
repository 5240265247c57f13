// attn.sdpa_varlen end to end: 6 packed sequences of odd lengths (query
// 5, 17, 0, 1, 9, 13; key 7, 17, 3, 0, 30, 4: an empty query sequence, a query
// row with no key at all, Lq > Lk under bottom-right causality), GQA (4 query
// heads on 2 key/value heads), D = 64, Dv = 32, with the lse ([Hq, total_q]),
// no mask and both causal alignments, in f32, f16 and bf16, and the window
// and softcap passed through. attn-run checks the fused lowering against the
// naive one on random inputs (both run attn-expand-varlen first); then
// varlen_reference.py recomputes every sequence on its own in f64 with numpy
// from the dumped inputs and checks the fused and naive results (and the
// empty-row rule: out 0, lse -inf) against it.

// RUN: attn-run %s --entry f32_none | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry f32_none --check naive --dump %t.f32_none >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.f32_none f32 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 none | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry f32_top_left | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry f32_top_left --check naive --dump %t.f32_top_left >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.f32_top_left f32 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 top_left | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry f32_bottom_right | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry f32_bottom_right --check naive --dump %t.f32_bottom_right >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.f32_bottom_right f32 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 bottom_right | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry f16_bottom_right | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry f16_bottom_right --check naive --dump %t.f16_bottom_right >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.f16_bottom_right f16 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 bottom_right | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry bf16_top_left | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry bf16_top_left --check naive --dump %t.bf16_top_left >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.bf16_top_left bf16 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 top_left | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry bf16_none | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry bf16_none --check naive --dump %t.bf16_none >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.bf16_none bf16 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 none | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry f32_window_softcap | FileCheck %s --check-prefix=E2E
// RUN: attn-run %s --entry f32_window_softcap --check naive --dump %t.f32_window_softcap >/dev/null && \
// RUN:   %attn_python %S/varlen_reference.py %t.f32_window_softcap f32 0,5,22,22,23,32,45 0,7,24,27,27,57,61 4 2 bottom_right 4:-1 5.0 | FileCheck %s --check-prefix=REF
// Rows past cu_seqlens_q[B] belong to no sequence (out 0, lse -inf), and
// B = 0 (one offset) leaves every row so.
// RUN: attn-run %s --entry tail_rows --check naive --dump %t.tail_rows | FileCheck %s --check-prefix=E2E
// RUN: %attn_python %S/varlen_reference.py %t.tail_rows f32 0,3,7 0,6,6 4 2 top_left | FileCheck %s --check-prefix=REF
// RUN: attn-run %s --entry no_sequence --check naive --dump %t.no_sequence | FileCheck %s --check-prefix=E2E
// RUN: %attn_python %S/varlen_reference.py %t.no_sequence f32 0 0 4 2 none | FileCheck %s --check-prefix=REF
// E2E: result0 naive {{.*}} PASS
// E2E: result1 naive {{.*}} PASS
// E2E-NOT: FAIL
// E2E: {{^PASS$}}
// REF: fused: {{.*}} rows seeing nothing: {{[1-9][0-9]*}} (out 0, lse -inf: True)
// REF-NEXT: naive: {{.*}} rows seeing nothing: {{[1-9][0-9]*}} (out 0, lse -inf: True)
// REF-NEXT: {{^PASS$}}

func.func @f32_none(%q: tensor<45x4x64xf32>, %k: tensor<61x2x64xf32>, %v: tensor<61x2x32xf32>) -> (tensor<45x4x32xf32>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck
      : tensor<45x4x64xf32>, tensor<61x2x64xf32>, tensor<61x2x32xf32>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xf32>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xf32>, tensor<4x45xf32>
}

func.func @f32_top_left(%q: tensor<45x4x64xf32>, %k: tensor<61x2x64xf32>, %v: tensor<61x2x32xf32>) -> (tensor<45x4x32xf32>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<top_left>}
      : tensor<45x4x64xf32>, tensor<61x2x64xf32>, tensor<61x2x32xf32>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xf32>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xf32>, tensor<4x45xf32>
}

func.func @f32_bottom_right(%q: tensor<45x4x64xf32>, %k: tensor<61x2x64xf32>, %v: tensor<61x2x32xf32>) -> (tensor<45x4x32xf32>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>}
      : tensor<45x4x64xf32>, tensor<61x2x64xf32>, tensor<61x2x32xf32>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xf32>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xf32>, tensor<4x45xf32>
}

func.func @f16_bottom_right(%q: tensor<45x4x64xf16>, %k: tensor<61x2x64xf16>, %v: tensor<61x2x32xf16>) -> (tensor<45x4x32xf16>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>}
      : tensor<45x4x64xf16>, tensor<61x2x64xf16>, tensor<61x2x32xf16>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xf16>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xf16>, tensor<4x45xf32>
}

func.func @bf16_top_left(%q: tensor<45x4x64xbf16>, %k: tensor<61x2x64xbf16>, %v: tensor<61x2x32xbf16>) -> (tensor<45x4x32xbf16>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<top_left>}
      : tensor<45x4x64xbf16>, tensor<61x2x64xbf16>, tensor<61x2x32xbf16>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xbf16>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xbf16>, tensor<4x45xf32>
}

func.func @bf16_none(%q: tensor<45x4x64xbf16>, %k: tensor<61x2x64xbf16>, %v: tensor<61x2x32xbf16>) -> (tensor<45x4x32xbf16>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck
      : tensor<45x4x64xbf16>, tensor<61x2x64xbf16>, tensor<61x2x32xbf16>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xbf16>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xbf16>, tensor<4x45xf32>
}

func.func @f32_window_softcap(%q: tensor<45x4x64xf32>, %k: tensor<61x2x64xf32>, %v: tensor<61x2x32xf32>) -> (tensor<45x4x32xf32>, tensor<4x45xf32>) {
  %cq = arith.constant dense<[0, 5, 22, 22, 23, 32, 45]> : tensor<7xi32>
  %ck = arith.constant dense<[0, 7, 24, 27, 27, 57, 61]> : tensor<7xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<bottom_right>, window = array<i64: 4, -1>, softcap = 5.0 : f32}
      : tensor<45x4x64xf32>, tensor<61x2x64xf32>, tensor<61x2x32xf32>, tensor<7xi32>, tensor<7xi32> -> tensor<45x4x32xf32>, tensor<4x45xf32>
  return %o, %lse : tensor<45x4x32xf32>, tensor<4x45xf32>
}

func.func @tail_rows(%q: tensor<10x4x16xf32>, %k: tensor<9x2x16xf32>, %v: tensor<9x2x16xf32>) -> (tensor<10x4x16xf32>, tensor<4x10xf32>) {
  %cq = arith.constant dense<[0, 3, 7]> : tensor<3xi32>
  %ck = arith.constant dense<[0, 6, 6]> : tensor<3xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %cq, %ck {causal = #attn.causal<top_left>}
      : tensor<10x4x16xf32>, tensor<9x2x16xf32>, tensor<9x2x16xf32>, tensor<3xi32>, tensor<3xi32> -> tensor<10x4x16xf32>, tensor<4x10xf32>
  return %o, %lse : tensor<10x4x16xf32>, tensor<4x10xf32>
}

func.func @no_sequence(%q: tensor<6x4x16xf32>, %k: tensor<5x2x16xf32>, %v: tensor<5x2x16xf32>) -> (tensor<6x4x16xf32>, tensor<4x6xf32>) {
  %c = arith.constant dense<[0]> : tensor<1xi32>
  %o, %lse = attn.sdpa_varlen %q, %k, %v, %c, %c
      : tensor<6x4x16xf32>, tensor<5x2x16xf32>, tensor<5x2x16xf32>, tensor<1xi32>, tensor<1xi32> -> tensor<6x4x16xf32>, tensor<4x6xf32>
  return %o, %lse : tensor<6x4x16xf32>, tensor<4x6xf32>
}
