// The end of every GPU pipeline on hand-written kernels: vector ops (even
// vector.extract_strided_slice, which convert-gpu-to-nvvm leaves alone),
// math.exp2, shuffles, a workgroup buffer filled by cp.async (from static and
// dynamic memrefs); memref kernel arguments become one bare pointer each.
//
// REQUIRES: cuda-toolkit
// RUN: attn-opt %s -split-input-file --attn-lower-gpu-tail="chip=sm_80 format=isa" -o %t.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.mlir
// RUN: %ptx --print < %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.mlir | FileCheck %s --check-prefix=PTXAS

// HOST-LABEL: llvm.func @vector_math_shuffle(
// HOST:         gpu.launch_func <%{{.*}} : !llvm.ptr> @vector_math_shuffle_kernel::@vector_math_shuffle_kernel blocks in ({{.*}}) threads in ({{.*}}) : i64 args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
// HOST:       gpu.binary @vector_math_shuffle_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">

// PTX-LABEL: // PTX of gpu.binary @vector_math_shuffle_kernel
// PTX:       .visible .entry vector_math_shuffle_kernel(
// PTX:       ld.global.b32
// PTX:       ex2.approx.f32
// PTX:       shfl.sync.bfly.b32
// PTX:       ld.global.b16
// PTX:       st.global.b32

// PTXAS: @vector_math_shuffle_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads
func.func @vector_math_shuffle(%a: memref<64xf32>, %b: memref<16xf32>, %n: memref<?xf16>) {
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
    %c4 = arith.constant 4 : index
    %one = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %i = arith.muli %tx, %c4 : index
    %v = vector.load %a[%i] : memref<64xf32>, vector<4xf32>
    %lo = vector.extract_strided_slice %v {offsets = [0], sizes = [2], strides = [1]} : vector<4xf32> to vector<2xf32>
    %e = math.exp2 %lo : vector<2xf32>
    %s = vector.reduction <add>, %e : vector<2xf32> into f32
    %x, %valid = gpu.shuffle xor %s, %one, %width : f32
    %h = memref.load %n[%tx] : memref<?xf16>
    %hf = arith.extf %h : f16 to f32
    %y = arith.addf %x, %hf : f32
    memref.store %y, %b[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

// HOST-LABEL: llvm.func @workgroup_cp_async(
// HOST:         gpu.launch_func
// PTX-LABEL: // PTX of gpu.binary @workgroup_cp_async_kernel
// PTX:       .shared .align 2 .b8 __wg_workgroup_cp_async_kernel_0[128];
// PTX:       cp.async.ca.shared.global
// PTX:       cp.async.commit_group;
// PTX:       cp.async.wait_group 0;
// PTX:       bar.sync 0;
// PTX:       ld.shared.b16
// PTXAS: @workgroup_cp_async_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 128 bytes smem
func.func @workgroup_cp_async(%a: memref<8x64xf16>, %b: memref<8x64xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c8, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
      workgroup(%tile : memref<64xf16, #gpu.address_space<workgroup>>) {
    %c2 = arith.constant 2 : index
    %c63 = arith.constant 63 : index
    %j = arith.muli %tx, %c2 : index
    %t = nvgpu.device_async_copy %a[%bx, %j], %tile[%j], 2 : memref<8x64xf16> to memref<64xf16, #gpu.address_space<workgroup>>
    %g = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %g
    gpu.barrier
    %r = arith.subi %c63, %tx : index
    %h = memref.load %tile[%r] : memref<64xf16, #gpu.address_space<workgroup>>
    %f = arith.extf %h : f16 to f32
    memref.store %f, %b[%bx, %tx] : memref<8x64xf32>
    gpu.terminator
  }
  return
}

// -----

// A dynamic memref read by cp.async (not a load gpu-decompose-memrefs would
// take apart): passed as a bare pointer and its size, rebuilt in the kernel.
// HOST-LABEL: llvm.func @dynamic_cp_async(
// HOST:         gpu.launch_func <%{{.*}} : !llvm.ptr> @dynamic_cp_async_kernel::@dynamic_cp_async_kernel blocks in ({{.*}}) threads in ({{.*}}) : i64 args(%{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : !llvm.ptr, %{{.*}} : i64)
// PTX-LABEL: // PTX of gpu.binary @dynamic_cp_async_kernel
// PTX:       cp.async.ca.shared.global
// PTXAS: @dynamic_cp_async_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack, 128 bytes smem
func.func @dynamic_cp_async(%a: memref<?x64xf16>, %b: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %rows = memref.dim %a, %c0 : memref<?x64xf16>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %rows, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1)
      workgroup(%tile : memref<64xf16, #gpu.address_space<workgroup>>) {
    %c2 = arith.constant 2 : index
    %c63 = arith.constant 63 : index
    %j = arith.muli %tx, %c2 : index
    %t = nvgpu.device_async_copy %a[%bx, %j], %tile[%j], 2 : memref<?x64xf16> to memref<64xf16, #gpu.address_space<workgroup>>
    %g = nvgpu.device_async_create_group %t
    nvgpu.device_async_wait %g
    gpu.barrier
    %r = arith.subi %c63, %tx : index
    %h = memref.load %tile[%r] : memref<64xf16, #gpu.address_space<workgroup>>
    %f = arith.extf %h : f16 to f32
    memref.store %f, %b[%bx, %tx] : memref<?x64xf32>
    gpu.terminator
  }
  return
}
