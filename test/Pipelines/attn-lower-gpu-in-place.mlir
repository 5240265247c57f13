// decode-rows=0: the tensor-core (or f32) kernel alone; the split-K decode
// kernels are tested in decode-to-ptx.mlir, convert-attn-to-gpu-decode.mlir
// and attn-lower-gpu-decode.mlir.
// REQUIRES: cuda-toolkit
//
// The fused GPU results are written in place into the caller's device
// buffers: an entry that materializes the results of a function returning
// attn.sdpa's (what attn-compile's and attn-run's destination-passing wrapper
// builds) allocates nothing and copies nothing once the call is inlined
// (attn-gpu-device-buffers forwards convert-attn-to-gpu's result buffers to
// the arguments), and its host code neither reads device memory nor calls
// mgpuMemAlloc, mgpuMemcpy or mgpuMemFree around its launch.
//
// RUN: attn-opt %s --inline --symbol-dce --attn-lower-gpu="chip=sm_90 format=isa decode-rows=0" \
// RUN:   -mlir-print-ir-after=attn-gpu-device-buffers -o %t.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BUFFERS
// RUN: FileCheck %s --check-prefix=HOST < %t.mlir

// BUFFERS-LABEL: func.func @entry(
// BUFFERS-SAME:      %{{.*}}: memref<?x4x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %{{.*}}: memref<?x2x?x64xf16>, %[[O:.*]]: memref<?x4x?x64xf16>, %[[L:.*]]: memref<?x4x?xf32>)
// BUFFERS-NOT:   gpu.alloc
// BUFFERS-NOT:   memref.alloc
// BUFFERS:       gpu.launch
// BUFFERS:         memref.store {{.*}}, %[[L]]
// BUFFERS-NOT:   linalg.copy
// BUFFERS-NOT:   memref.copy
// BUFFERS-NOT:   gpu.dealloc
// BUFFERS:       return

// HOST-LABEL: llvm.func @entry(
// HOST-NOT:   mgpuMemAlloc
// HOST-NOT:   mgpuMemcpy
// HOST-NOT:   mgpuMemFree
// HOST:       gpu.launch_func
// HOST-NOT:   mgpuMemAlloc
// HOST-NOT:   mgpuMemcpy
// HOST-NOT:   mgpuMemFree
// HOST:       llvm.return
func.func private @f(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                     %v: tensor<?x2x?x64xf16>)
    -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) {
  %o, %l = attn.sdpa %q, %k, %v {causal = #attn.causal<bottom_right>}
      : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>
        -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  return %o, %l : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
}

func.func @entry(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                 %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>,
                 %l: memref<?x4x?xf32>) {
  %tq = bufferization.to_tensor %q restrict
      : memref<?x4x?x64xf16> to tensor<?x4x?x64xf16>
  %tk = bufferization.to_tensor %k restrict
      : memref<?x2x?x64xf16> to tensor<?x2x?x64xf16>
  %tv = bufferization.to_tensor %v restrict
      : memref<?x2x?x64xf16> to tensor<?x2x?x64xf16>
  %ro, %rl = func.call @f(%tq, %tk, %tv)
      : (tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>)
        -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>)
  bufferization.materialize_in_destination %ro in restrict writable %o
      : (tensor<?x4x?x64xf16>, memref<?x4x?x64xf16>) -> ()
  bufferization.materialize_in_destination %rl in restrict writable %l
      : (tensor<?x4x?xf32>, memref<?x4x?xf32>) -> ()
  return
}
