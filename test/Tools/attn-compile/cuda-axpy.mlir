// The cuda target end to end without a device: a hand-written gpu.launch
// kernel (y = 2x + y) through buildCudaPipelineFor() into a library that
// embeds the fatbin, links AttnCudaRuntime, needs only libc, loads here and
// answers ATTN_ERROR_NO_DEVICE (no libcuda.so.1 on these machines).
// REQUIRES: cuda-toolkit
// UNSUPPORTED: cuda-device
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s --entry axpy --target cuda --chip sm_80 -o %t/libaxpy.so
// RUN: readelf -d %t/libaxpy.so | FileCheck %s --check-prefix=NEEDED
// RUN: nm -D --defined-only %t/libaxpy.so | FileCheck %s --check-prefix=EXPORTS
// RUN: FileCheck %s --check-prefix=JSON < %t/libaxpy.json
// RUN: attn-aot-check %t/libaxpy.so --call-dummy | FileCheck %s --check-prefix=CALL
// RUN: attn-compile %s --entry axpy --name axpy90 --target cuda --chip sm_90 -o %t/libaxpy90.so
// RUN: attn-aot-check %t/libaxpy90.so --call-dummy | FileCheck %s --check-prefix=CALL

// NEEDED-NOT: NEEDED{{.*}}lib{{(cuda|cudart|mlir|stdc|gcc|LLVM)}}
// NEEDED:     (NEEDED){{.*}}libc.so.6
// NEEDED-NOT: NEEDED{{.*}}lib{{(cuda|cudart|mlir|stdc|gcc|LLVM)}}
// EXPORTS-DAG: T attn_last_error
// EXPORTS-DAG: T axpy
// EXPORTS-NOT: mgpu
// JSON: "chip": "sm_80",
// JSON: "dtype": "f32",
// JSON: "dims": [],
// JSON: "target": "cuda"
// CALL: call: ATTN_ERROR_NO_DEVICE: no CUDA driver (libcuda.so.1 not found)

func.func @axpy(%x: memref<1000xf32>, %y: memref<1000xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  %n = arith.constant 1000 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    %i0 = arith.muli %bx, %c128 : index
    %i = arith.addi %i0, %tx : index
    %in = arith.cmpi ult, %i, %n : index
    scf.if %in {
      %xv = memref.load %x[%i] : memref<1000xf32>
      %yv = memref.load %y[%i] : memref<1000xf32>
      %two = arith.addf %xv, %xv : f32
      %s = arith.addf %two, %yv : f32
      memref.store %s, %y[%i] : memref<1000xf32>
    }
    gpu.terminator
  }
  return
}
