// attn.sdpa inside ordinary code: both lowerings compile and agree.
// RUN: attn-run %s --entry insert_into_argument | FileCheck %s
// RUN: attn-run %s --entry loop_carried | FileCheck %s --check-prefix=LOOP
// RUN: attn-run %s --entry result_more_static --dims lq=5,lk=50 | FileCheck %s --check-prefix=DIRECT
// RUN: attn-run %s --entry result_less_static | FileCheck %s --check-prefix=DIRECT

// The result is inserted into a slice of an argument and returned: it is
// computed in place there, and deallocation's clones are lowered.
// CHECK: result0 naive {{.*}} PASS
// CHECK-NOT: FAIL
// CHECK: {{^PASS$}}
func.func @insert_into_argument(%q: tensor<1x8x2x16xf32>, %k: tensor<1x2x29x16xf32>, %v: tensor<1x2x29x16xf32>, %big: tensor<1x8x9x16xf32>) -> tensor<1x8x9x16xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<1x8x2x16xf32>, tensor<1x2x29x16xf32>, tensor<1x2x29x16xf32> -> tensor<1x8x2x16xf32>
  %ins = tensor.insert_slice %o into %big[0, 0, 3, 0] [1, 8, 2, 16] [1, 1, 1, 1] : tensor<1x8x2x16xf32> into tensor<1x8x9x16xf32>
  return %ins : tensor<1x8x9x16xf32>
}

// Two attn.sdpa in a loop that carries their result.
// LOOP: result0 naive {{.*}} PASS
// LOOP: result1 naive {{.*}} PASS
// LOOP-NOT: FAIL
// LOOP: {{^PASS$}}
func.func @loop_carried(%q: tensor<2x4x20x16xf32>, %k: tensor<2x4x20x16xf32>, %v: tensor<2x4x20x16xf32>, %big: tensor<2x4x50x16xf32>) -> (tensor<2x4x20x16xf32>, tensor<2x4x50x16xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %q) -> tensor<2x4x20x16xf32> {
    %o = attn.sdpa %x, %k, %v {causal = #attn.causal<top_left>}
        : tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32> -> tensor<2x4x20x16xf32>
    %o2 = attn.sdpa %o, %x, %o
        : tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32> -> tensor<2x4x20x16xf32>
    scf.yield %o2 : tensor<2x4x20x16xf32>
  }
  %ins = tensor.insert_slice %r into %big[0, 0, 7, 0] [2, 4, 20, 16] [1, 1, 1, 1] : tensor<2x4x20x16xf32> into tensor<2x4x50x16xf32>
  return %r, %ins : tensor<2x4x20x16xf32>, tensor<2x4x50x16xf32>
}

// A result type more static than the operands (and one less static): the
// lowerings cast to the op's result type.
// DIRECT: out  f64 {{.*}} PASS
// DIRECT: out  naive {{.*}} PASS
// DIRECT-NOT: FAIL
// DIRECT: {{^PASS$}}
func.func @result_more_static(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x50x8xf32>) -> tensor<1x2x5x8xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x50x8xf32> -> tensor<1x2x5x8xf32>
  return %o : tensor<1x2x5x8xf32>
}

func.func @result_less_static(%q: tensor<1x2x5x8xf32>, %k: tensor<1x2x50x8xf32>, %v: tensor<1x2x50x8xf32>) -> tensor<1x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x5x8xf32>, tensor<1x2x50x8xf32>, tensor<1x2x50x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
