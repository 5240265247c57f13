// The fused result is written in place into the caller's buffer: an entry
// that materializes the result of a function returning attn.sdpa's result
// (what attn-run's JIT wrapper builds) gets no output-sized allocation and
// no copy once the call is inlined (the attn dialect's inliner interface).
// RUN: attn-opt %s --inline --symbol-dce --attn-lower-cpu \
// RUN:   -mlir-print-ir-after=convert-bufferization-to-memref 2>&1 >/dev/null \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @entry
// CHECK-NOT:   memref.alloc() {{.*}} : memref<1x2x256x64xf32>
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func private @f(%q: tensor<1x2x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                     %v: tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>
        -> tensor<1x2x256x64xf32>
  return %o : tensor<1x2x256x64xf32>
}

func.func @entry(%a: memref<1x2x256x64xf32>, %b: memref<1x2x256x64xf32>,
                 %c: memref<1x2x256x64xf32>, %out: memref<1x2x256x64xf32>) {
  %ta = bufferization.to_tensor %a restrict
      : memref<1x2x256x64xf32> to tensor<1x2x256x64xf32>
  %tb = bufferization.to_tensor %b restrict
      : memref<1x2x256x64xf32> to tensor<1x2x256x64xf32>
  %tc = bufferization.to_tensor %c restrict
      : memref<1x2x256x64xf32> to tensor<1x2x256x64xf32>
  %r = func.call @f(%ta, %tb, %tc)
      : (tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>,
         tensor<1x2x256x64xf32>) -> tensor<1x2x256x64xf32>
  bufferization.materialize_in_destination %r in restrict writable %out
      : (tensor<1x2x256x64xf32>, memref<1x2x256x64xf32>) -> ()
  return
}
