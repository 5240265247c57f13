// A dynamic mask dim that is 1 at run time broadcasts, exactly as a static
// size-1 dim does: the same inputs give bit-identical outputs through both
// lowerings.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-run %s --entry static_row --dump %t/static | FileCheck %s --check-prefix=STATIC
// RUN: attn-run %s --entry dynamic_row --dump %t/dynamic | FileCheck %s
// RUN: cmp %t/static/fused.npy %t/dynamic/fused.npy
// RUN: cmp %t/static/naive.npy %t/dynamic/naive.npy

// STATIC: out  f64 {{.*}} PASS
// STATIC: out  naive {{.*}} PASS
// STATIC-NOT: FAIL
// STATIC: {{^PASS$}}
// CHECK: result0 naive {{.*}} PASS
// CHECK-NOT: FAIL
// CHECK: {{^PASS$}}
func.func @static_row(%q: tensor<1x1x40x8xf32>, %k: tensor<1x1x50x8xf32>, %v: tensor<1x1x50x8xf32>, %m: tensor<1x1x1x50xf32>) -> tensor<1x1x40x8xf32> {
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<1x1x40x8xf32>, tensor<1x1x50x8xf32>, tensor<1x1x50x8xf32>, tensor<1x1x1x50xf32> -> tensor<1x1x40x8xf32>
  return %o : tensor<1x1x40x8xf32>
}

func.func @dynamic_row(%q: tensor<1x1x40x8xf32>, %k: tensor<1x1x50x8xf32>, %v: tensor<1x1x50x8xf32>, %m: tensor<1x1x1x50xf32>) -> tensor<1x1x40x8xf32> {
  %md = tensor.cast %m : tensor<1x1x1x50xf32> to tensor<1x1x?x50xf32>
  %o = attn.sdpa %q, %k, %v mask(%md) : tensor<1x1x40x8xf32>, tensor<1x1x50x8xf32>, tensor<1x1x50x8xf32>, tensor<1x1x?x50xf32> -> tensor<1x1x40x8xf32>
  return %o : tensor<1x1x40x8xf32>
}
