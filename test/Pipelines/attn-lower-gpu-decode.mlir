// REQUIRES: cuda-toolkit
//
// attn-lower-gpu on a decode step (GQA 32/8, Lq = 1, dynamic B and Lk):
// convert-attn-to-gpu's split-K decode kernels through bufferization,
// device buffers and the NVVM tail. The splits' temporaries are device
// allocations freed on the launches' stream (no host malloc); the merge
// kernel launches only with more than one split; `kv-splits=8` reaches the
// pass (the split kernel's grid). Both kernels assemble without spills.
// Nothing here runs on a GPU.
//
// RUN: attn-opt %s --attn-lower-gpu="chip=sm_90 format=isa" -o %t.sm90.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.sm90.mlir
// RUN: not grep -e @malloc -e @free %t.sm90.mlir
// RUN: %ptx --print < %t.sm90.mlir | FileCheck %s --check-prefix=PTX
// RUN: %ptx --ptxas %ptxas --arch sm_90 < %t.sm90.mlir | FileCheck %s --check-prefix=PTXAS
// RUN: attn-opt %s --attn-lower-gpu="chip=sm_80 format=isa kv-splits=8" | FileCheck %s --check-prefix=FIXED
// RUN: attn-opt %s --attn-lower-gpu="chip=sm_80 format=isa decode-rows=0" | FileCheck %s --check-prefix=OFF

// HOST-LABEL: llvm.func @decode
// HOST: llvm.call @mgpuStreamCreate
// HOST: llvm.call @mgpuMemAlloc
// HOST: llvm.call @mgpuMemAlloc
// HOST: gpu.launch_func <{{.*}}> @decode_kernel::@decode_kernel
// HOST: llvm.cond_br
// HOST: gpu.launch_func <{{.*}}> @decode_kernel_0::@decode_kernel
// HOST: llvm.call @mgpuMemFree
// HOST: llvm.call @mgpuMemFree
// HOST: llvm.call @mgpuStreamSynchronize
// PTX-LABEL: PTX of gpu.binary @decode_kernel{{$}}
// PTX-DAG: cp.async
// PTX-DAG: shfl.sync.bfly
// PTX-DAG: ex2.approx
// PTX-NOT: mma.sync
// PTX-LABEL: PTX of gpu.binary @decode_kernel_0{{$}}
// PTX-DAG: ex2.approx
// PTXAS-DAG: @decode_kernel: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// PTXAS-DAG: @decode_kernel_0: {{([0-9]|[0-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])}} registers, 0 bytes spill stores, 0 bytes spill loads, 0 bytes stack
// FIXED-LABEL: llvm.func @decode
// FIXED: %[[EIGHT:.*]] = llvm.mlir.constant(8 : index) : i64
// FIXED: gpu.launch_func <{{.*}}> @decode_kernel::@decode_kernel blocks in (%[[EIGHT]],
// OFF-LABEL: llvm.func @decode
// OFF-COUNT-1: gpu.launch_func
// OFF-NOT: gpu.launch_func
func.func @decode(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>)
    -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %o, %l = attn.sdpa %q, %k, %v
      : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16> -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %o, %l : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}
