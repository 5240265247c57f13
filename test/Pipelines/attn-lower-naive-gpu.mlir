// The naive GPU pipeline over a grid of configurations (element types, head
// dims, both causal alignments, bool and float masks, grouped-query heads,
// lse, dynamic B/Lq/Lk), for sm_80 and sm_90: every linalg op of the naive
// lowering becomes a kernel (a gpu.binary holding PTX), the host only
// allocates device buffers (the score table), launches and frees; the PTX
// assembles with ptxas without spilling.
//
// REQUIRES: cuda-toolkit
// RUN: attn-opt %s -split-input-file --attn-lower-naive-gpu="chip=sm_80 format=isa" -o %t.sm80.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.sm80.mlir
// RUN: not grep -e llvm.load -e llvm.store -e @malloc -e @free %t.sm80.mlir
// RUN: %ptx --print < %t.sm80.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_80 < %t.sm80.mlir | FileCheck %s --check-prefixes=PTXAS,PTXAS80
// RUN: attn-opt %s -split-input-file --attn-lower-naive-gpu="chip=sm_90 format=isa" -o %t.sm90.mlir
// RUN: FileCheck %s --check-prefix=SM90 < %t.sm90.mlir
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefixes=PTXAS,PTXAS90
//
// The default format (fatbin) translates to LLVM IR that loads each kernel
// from its embedded binary and launches it through the mgpu* functions.
// RUN: attn-opt %s -split-input-file --attn-lower-naive-gpu="chip=sm_90" \
// RUN:   | mlir-translate -split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// HOST-LABEL: llvm.func @f32_d64(
// HOST:         %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// The score table [2, 4, 128, 128] f32 is device memory.
// HOST:         %[[SCORES:.*]] = llvm.call @mgpuMemAlloc(%{{.*}}, %[[STREAM]], %{{.*}})
// HOST:         gpu.launch_func <%[[STREAM]] : !llvm.ptr> @f32_d64_kernel::@f32_d64_kernel blocks in ({{.*}}) threads in ({{.*}}) : i64 args(%[[SCORES]] : !llvm.ptr
// HOST:         llvm.call @mgpuMemFree(%[[SCORES]], %[[STREAM]])
// HOST:         llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// HOST:         llvm.call @mgpuStreamDestroy(%[[STREAM]])
// HOST:       gpu.binary @f32_d64_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, {{.*}}assembly = "
// SM90:       gpu.binary @f32_d64_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "

// PTX-LABEL: // PTX of gpu.binary @f32_d64_kernel_0
// PTX:       .version 7.0
// PTX:       .target sm_80
// PTX:       .visible .entry f32_d64_kernel(
// PTX-NEXT:    .param .u64 .ptr .align 1 f32_d64_kernel_param_0
// PTX:       ld.global.b32
// PTX:       st.global.b32

// PTXAS: @f32_d64_kernel: {{[0-9]+}} registers, 0 bytes spill stores, 0 bytes spill loads

// LLVMIR-LABEL: define { ptr, ptr, i64, [4 x i64], [4 x i64] } @f32_d64(
// LLVMIR:         call ptr @mgpuStreamCreate()
// LLVMIR:         call ptr @mgpuMemAlloc(
// LLVMIR:         call ptr @mgpuModuleGetFunction(
// LLVMIR:         call void @mgpuLaunchKernel(
// LLVMIR:         call void @mgpuMemFree(
// LLVMIR:         call void @mgpuStreamSynchronize(
// LLVMIR:         call ptr @mgpuModuleLoad(ptr @f32_d64_kernel_binary

func.func @f32_d64(%q: tensor<2x4x128x64xf32>, %k: tensor<2x4x128x64xf32>, %v: tensor<2x4x128x64xf32>) -> tensor<2x4x128x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32> -> tensor<2x4x128x64xf32>
  return %o : tensor<2x4x128x64xf32>
}

// -----

// f16, D = 128, top-left causal, Lq and Lk not multiples of the 32-row CTA.
// HOST-LABEL: llvm.func @f16_d128_causal_top_left(
// HOST:         llvm.call @mgpuMemAlloc
// HOST:         gpu.launch_func
// PTX-LABEL: // PTX of gpu.binary @f16_d128_causal_top_left_kernel_0
// PTX:       ld.global.b16
// PTXAS: @f16_d128_causal_top_left_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @f16_d128_causal_top_left(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @f16_d128_causal_top_left(%q: tensor<1x8x100x128xf16>, %k: tensor<1x8x100x128xf16>, %v: tensor<1x8x100x128xf16>) -> tensor<1x8x100x128xf16> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>} : tensor<1x8x100x128xf16>, tensor<1x8x100x128xf16>, tensor<1x8x100x128xf16> -> tensor<1x8x100x128xf16>
  return %o : tensor<1x8x100x128xf16>
}

// -----

// bf16, D = 64, bottom-right causal and a boolean mask broadcast over batch
// and heads.
// HOST-LABEL: llvm.func @bf16_d64_causal_bottom_right_bool_mask(
// HOST:         gpu.launch_func
// PTX-LABEL: // PTX of gpu.binary @bf16_d64_causal_bottom_right_bool_mask_kernel_0
// PTX:       ld.global
// PTXAS: @bf16_d64_causal_bottom_right_bool_mask_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @bf16_d64_causal_bottom_right_bool_mask(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @bf16_d64_causal_bottom_right_bool_mask(%q: tensor<2x4x64x64xbf16>, %k: tensor<2x4x96x64xbf16>, %v: tensor<2x4x96x64xbf16>, %m: tensor<1x1x64x96xi1>) -> tensor<2x4x64x64xbf16> {
  %o = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<2x4x64x64xbf16>, tensor<2x4x96x64xbf16>, tensor<2x4x96x64xbf16>, tensor<1x1x64x96xi1> -> tensor<2x4x64x64xbf16>
  return %o : tensor<2x4x64x64xbf16>
}

// -----

// f32, D = 128, Dv = 64, grouped-query heads (8 query heads on 2 key/value
// heads), an additive f32 mask broadcast over heads, the lse result.
// HOST-LABEL: llvm.func @f32_d128_gqa_float_mask_lse(
// HOST:         gpu.launch_func
// PTX-LABEL: // PTX of gpu.binary @f32_d128_gqa_float_mask_lse_kernel_0
// PTX:       ld.global.b32
// PTXAS: @f32_d128_gqa_float_mask_lse_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @f32_d128_gqa_float_mask_lse(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @f32_d128_gqa_float_mask_lse(%q: tensor<2x8x128x128xf32>, %k: tensor<2x2x256x128xf32>, %v: tensor<2x2x256x64xf32>, %m: tensor<2x1x128x256xf32>) -> (tensor<2x8x128x64xf32>, tensor<2x8x128xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v mask(%m) : tensor<2x8x128x128xf32>, tensor<2x2x256x128xf32>, tensor<2x2x256x64xf32>, tensor<2x1x128x256xf32> -> tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
  return %o, %lse : tensor<2x8x128x64xf32>, tensor<2x8x128xf32>
}

// -----

// f16 with an f16 mask broadcast over query rows, grouped-query heads.
// HOST-LABEL: llvm.func @f16_d64_gqa_half_mask(
// HOST:         gpu.launch_func
// PTXAS: @f16_d64_gqa_half_mask_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @f16_d64_gqa_half_mask(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @f16_d64_gqa_half_mask(%q: tensor<2x8x64x64xf16>, %k: tensor<2x4x256x64xf16>, %v: tensor<2x4x256x64xf16>, %m: tensor<2x8x1x256xf16>) -> tensor<2x8x64x64xf16> {
  %o = attn.sdpa %q, %k, %v mask(%m) : tensor<2x8x64x64xf16>, tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>, tensor<2x8x1x256xf16> -> tensor<2x8x64x64xf16>
  return %o : tensor<2x8x64x64xf16>
}

// -----

// Dynamic B, Lq and Lk (f16, GQA, a float mask whose B, Lq and Lk dims are
// dynamic, bottom-right causal, lse): sizes reach the kernels as scalars
// next to one bare pointer per buffer.
// HOST-LABEL: llvm.func @f16_dynamic_gqa_float_mask_lse(
// HOST:         llvm.call @mgpuMemAlloc
// HOST:         gpu.launch_func
// PTX-LABEL: // PTX of gpu.binary @f16_dynamic_gqa_float_mask_lse_kernel_0
// PTX:       ld.global
// PTXAS: @f16_dynamic_gqa_float_mask_lse_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @f16_dynamic_gqa_float_mask_lse(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @f16_dynamic_gqa_float_mask_lse(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>, %m: tensor<?x1x?x?xf32>) -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<bottom_right>} : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x1x?x?xf32> -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  return %o, %lse : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
}

// -----

// Dynamic bf16, D = 128, top-left causal, a boolean mask broadcast over batch
// and heads, lse.
// HOST-LABEL: llvm.func @bf16_d128_dynamic_bool_mask_lse(
// HOST:         gpu.launch_func
// PTXAS: @bf16_d128_dynamic_bool_mask_lse_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @bf16_d128_dynamic_bool_mask_lse(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @bf16_d128_dynamic_bool_mask_lse(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %m: tensor<1x1x?x?xi1>) -> (tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>) {
  %o, %lse = attn.sdpa %q, %k, %v mask(%m) {causal = #attn.causal<top_left>} : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<1x1x?x?xi1> -> tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x128xbf16>, tensor<?x8x?xf32>
}

// -----

// attn.sdpa in a loop that carries its result, then inserted into a slice of
// an argument: the host only loops, allocates and launches.
// HOST-LABEL: llvm.func @loop_carried_insert(
// HOST:         llvm.call @mgpuMemAlloc
// HOST:         llvm.cond_br
// HOST:         gpu.launch_func
// PTXAS: @loop_carried_insert_kernel: {{[0-9]+}} registers, 0 bytes spill stores
// LLVMIR-LABEL: @loop_carried_insert(
// LLVMIR:         call void @mgpuLaunchKernel(
func.func @loop_carried_insert(%q: tensor<2x4x20x16xf32>, %k: tensor<2x4x20x16xf32>, %v: tensor<2x4x20x16xf32>, %big: tensor<2x4x50x16xf32>) -> tensor<2x4x50x16xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %q) -> tensor<2x4x20x16xf32> {
    %o = attn.sdpa %x, %k, %v {causal = #attn.causal<top_left>} : tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32>, tensor<2x4x20x16xf32> -> tensor<2x4x20x16xf32>
    scf.yield %o : tensor<2x4x20x16xf32>
  }
  %ins = tensor.insert_slice %r into %big[0, 0, 7, 0] [2, 4, 20, 16] [1, 1, 1, 1] : tensor<2x4x20x16xf32> into tensor<2x4x50x16xf32>
  return %ins : tensor<2x4x50x16xf32>
}

// All kernels of all cases: no spills, within the 255-register limit.
// PTXAS80: kernels assembled for sm_80: at most {{([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
// PTXAS90: kernels assembled for sm_90: at most {{([0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads
