//===- Passes.td - GPU code generation ---------------------*- tablegen -*-===//
//
// Part of the attn project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_GPU_PASSES_TD
#define ATTN_CODEGEN_GPU_PASSES_TD

include "attn/Tuning/Tuning.td"
include "mlir/Pass/PassBase.td"

def ConvertAttnToGpu : Pass<"convert-attn-to-gpu"> {
  let summary = "Lower attn.sdpa (and attn.sdpa_grad) on tensors to fused "
                "FlashAttention-2 gpu.launch kernels (NVIDIA tensor cores for "
                "f16/bf16, FMA for f32)";
  let description = [{
    Rewrites every `attn.sdpa` into `bufferization.to_buffer` of its operands
    (identity layouts), a `memref.alloc` of the output (and of the lse), one
    `gpu.launch` whose body is the fused kernel on those buffers, and
    `bufferization.to_tensor` of the results, so that the rest of the
    pipeline bufferizes normally and `gpu-kernel-outlining` outlines the
    launch.

    f16 and bf16 (head dims D and Dv in {32, 64, 80, 96, 128}): the grid is
    (ceil(Lq / block-q), Hq, B); a CTA of block-q / 16 warps owns block-q
    query rows, 16 per warp (the M of mma m16n8k16). The Q block and
    double-buffered K/V tiles of up to block-kv keys live in dynamic shared
    memory (its base is 16-byte aligned, as cp.async and ldmatrix need;
    the launch asks for the bytes), filled by `nvgpu.device_async_copy` (cp.async, zero-filled past
    Lq/Lk) with commit/wait groups: tile j+1 is in flight while tile j is
    computed. Fragments come from `nvgpu.ldmatrix` (transposed for V);
    S = Q.K^T and O += P.V run on `mma.sync m16n8k16` with f32 accumulators
    (`nvgpu.mma.sync` for f16, `nvvm.mma.sync` on i32 bitcasts for bf16).
    The online softmax stays in registers: scale * log2(e) is folded into S
    (with `fold-scale`, into exp2's argument instead: P = exp2(fma(s, c,
    -m c)) on the unscaled scores and row max),
    row max and sum are reduced over the quad with `gpu.shuffle xor` 1 and 2,
    `math.exp2`, the accumulator is rescaled, and P, rounded to the input
    type, is reused in registers as the A operand of P.V (the C fragment of
    m16n8k16 is laid out as its A fragment). One normalization at the end;
    an empty row gives 0 and lse -inf. Tile rows are padded by 16 bytes, or
    (where padding would need tiles under 32 keys, e.g. D = 128) stored
    densely with XOR-swizzled 16-byte chunks: ldmatrix reads are free of
    bank conflicts either way. Q is staged in the V tiles where they are as
    large (its fragments go to registers before V tile 0 is loaded).
    block-kv shrinks by 16 until the buffers fit the 48 KiB a launch gets
    without the driver's opt-in (D = 128 at block-q 64: 32 keys), or the
    `shared-memory` bytes with the opt-in. No launch for an empty grid (Lq or
    B = 0 at run time).

    Causal: key tiles that the whole block cannot see are not visited (the
    loop bound), only tiles that straddle the diagonal or the Lk tail are
    masked element by element; a user mask (i1 or additive, size-1 and
    run-time-1 dims broadcast) masks every tile. GQA/MQA read key/value head
    h / (Hq / Hkv) in place.

    f32: one thread per query row walks the visible keys with the same
    online softmax on FMAs (no TF32), the scaled query row and the
    accumulator in private memory.

    Decoding (any element type; a static Lq with Lq * (Hq / Hkv) <=
    decode-rows, D a multiple of 16 bytes, not an op the tensor-core kernel
    would refuse): split-K (flash-decoding) on CUDA cores instead. The rows
    of the query heads that share a K/V head are the rows of one CTA (at
    most 4: more rows take more CTAs, each reading K and V), so K and V are
    read once per group of up to 4 rows; the visible keys are cut
    into kv-splits runs (0: chosen at run time, ceil(2 * sm-count / (B * Hkv
    * row blocks)) capped so that a run has at least 256 keys). The split
    kernel (grid (splits, Hkv * row blocks, B), 128 threads) stages K in
    chunks of up to 128 keys in shared memory by cp.async, scores key t in
    thread t against every row, reduces the chunk's row maxima with warp
    shuffles, and accumulates value columns t, t + 128 reading V rows
    coalesced; it writes out and lse itself with one split, else each
    split's normalized f32 output and base-2 lse into device temporaries,
    which a merge kernel (grid (Lq, Hq, B)) combines by their lse (a split
    that saw no key weighs 0; a row that saw none gives 0 and lse -inf).
    Masks, both causal alignments, windows, key_lengths, softcap and ALiBi
    as in the other kernels.

    kernels=wgmma (chip=sm_90a; f16/bf16 with D and Dv in {64, 128, 256}, any
    masks and variants; other ops take the mma.sync kernel, decoding steps
    the decode kernels): FlashAttention-3's warp-specialized kernel. The grid
    is (ceil(Lq / 128), Hq, B), a CTA three warpgroups (384 threads). One
    thread of the producer warpgroup (`nvvm.setmaxregister decrease 24`)
    loads the Q block once and the K and V tiles (128 keys; 64 where a head
    dim is 256) by TMA (`nvvm.cp.async.bulk.tensor`, 128-byte swizzled boxes
    of 64 columns, zero-filled past Lq/Lk) into a two-stage ring guarded by
    mbarriers (`arrive.expect_tx`, `try_wait.parity`; the consumers release
    a stage by arriving on its empty barrier). The two consumer warpgroups
    (`increase 240`) own 64 rows each: S = Q.K^T on `nvvm.wgmma.mma_async`
    with both operands in shared memory, the same masks and online softmax
    as above on the accumulator (laid out per warp as mma.sync's C
    fragments), and O += P.V on wgmma with P in registers as the A operand
    (inline PTX, `wgmma.mma_async ... {a0..a3}, desc-V`) and V transposed
    from shared memory. Named barriers 1 and 2 pass the turn between the
    consumers (ping-pong): one issues P.V of tile j and Q.K^T of tile j+1
    while the other computes its softmax. The tensor maps are encoded on
    the host before the launch (`attnCudaEncodeTensorMap` in attn's CUDA
    runtime, over the driver's `cuTensorMapEncodeTiled`) into a 384-byte
    device buffer the kernel reads them from. persistent=true launches
    min(tiles, SMs) CTAs (the SM count read from the device at launch by
    the runtime's `attnCudaSmCount`), each looping over (query block, head,
    batch) tiles in a static round-robin order, causal ones longest first,
    the ring's phases and the ping-pong running on across tiles.
    softmax-overlap=true issues Q.K^T of tile j and P.V of tile j - 1 in one
    turn and computes the softmax of tile j while P.V runs (`wgmma
    wait_group 1`). With kernels=wgmma the decode kernels' automatic
    kv-splits count the device's SMs at launch too (sm-count 0). block-q,
    block-kv, shared-memory and lazy-rescale apply to the mma.sync kernel
    only.

    `attn.sdpa_grad` (f16/bf16, D and Dv in {32, 64, 80, 96, 128}, no mask;
    docs/gpu.md): FlashAttention-2's backward as three launches: a
    preprocess kernel (Di = rowsum(dO o O), the lse in base 2, the f32 dQ
    accumulator zeroed), a main kernel (grid (ceil(Lk / 64), Hkv, B), 4
    warps of 16 keys; it walks the group's query heads and the query blocks
    causality lets see its keys, recomputes P from the lse, runs S^T, dV, dP^T,
    dK and dQ on mma.sync with dK and dV in registers and dS through shared
    memory, and adds dQ with f32 atomics) and a kernel rounding scale * dQ
    to the element type. With `deterministic` each key block stores its
    partial dQ and the last kernel sums them in key-block order. f32, masks
    and other head dims are refused with a diagnostic.

    Before:

    ```mlir
    %o = attn.sdpa %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>,
        tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    ```

    After (abridged):

    ```mlir
    %qb = bufferization.to_buffer %q : tensor<1x8x128x64xf16> to memref<1x8x128x64xf16>
    ...
    %ob = memref.alloc() : memref<1x8x128x64xf16>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c8, %gz = %c1)
               threads(%tx, %ty, %tz) in (%x = %c128, %y = %c1, %z = %c1)
               dynamic_shared_memory_size %c36864_i32 {
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %ks = memref.view %smem[%c0][] : ... to memref<2x64x72xf16, #gpu.address_space<workgroup>>
      %vs = memref.view %smem[%c18432][] : ... to memref<2x64x72xf16, #gpu.address_space<workgroup>>
      %qs = memref.view %smem[%c18432][] : ... to memref<64x72xf16, #gpu.address_space<workgroup>>
      nvgpu.device_async_copy %qb[...], %qs[...], 8, %n : ...
      %qf = nvgpu.ldmatrix %qs[...] {numTiles = 4 : i32, transpose = false} ...
      scf.for %t = %c0 to %tiles step %c1 iter_args(...) {
        %s = nvgpu.mma.sync(%qf, %kf, %c) {mmaShape = [16, 8, 16]} ...
        %r = gpu.shuffle xor %mx, %c1_i32, %c32_i32 : f32
        %p = math.exp2 ...
        %vf = nvgpu.ldmatrix %vs[...] {numTiles = 2 : i32, transpose = true} ...
        %acc = nvgpu.mma.sync(%pa, %vf, %acc0) {mmaShape = [16, 8, 16]} ...
      }
      memref.store ... %ob[...]
      gpu.terminator
    }
    %o = bufferization.to_tensor %ob restrict writable : ...
    ```
  }];
  let options = [
    // Tuning.td's knobs, in the order of ConvertAttnToGpuOptions' members.
    GpuTargetChip, GpuBlockQ, GpuBlockKV, GpuDecodeRows, GpuKvSplits,
    GpuSmCount, GpuDecodeStages, GpuDecodeUnroll, GpuSharedMemory,
    GpuFoldScale, GpuLazyRescale, GpuKernels, GpuDeterministic,
    GpuPersistent, GpuSoftmaxOverlap
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def AttnGpuLaunchBounds : Pass<"attn-gpu-launch-bounds", "gpu::GPUModuleOp"> {
  let summary = "Give kernels that resize their warpgroups' registers "
                "(setmaxnreg) the launch bounds ptxas needs to honour it";
  let description = [{
    After kernel outlining, before `convert-gpu-to-nvvm`: `setmaxnreg`
    (`nvvm.setmaxregister`) takes effect only in a kernel whose register
    count at entry ptxas can determine, from launch bounds with a minimum
    of one CTA per SM (else ptxas ignores it, warning C7508). Every kernel
    of the module that contains `nvvm.setmaxregister` gets
    `nvvm.minctasm = 1`, beside the `nvvm.maxntid` that
    `convert-gpu-to-nvvm` derives from its known block size; other kernels
    are left as they are. A kernel with such an op and no known block size
    is an error.

    Before:

    ```mlir
    gpu.func @k() kernel attributes {known_block_size = array<i32: 384, 1, 1>} {
      nvvm.setmaxregister decrease 24
      ...
    ```

    After:

    ```mlir
    gpu.func @k() kernel attributes {known_block_size = array<i32: 384, 1, 1>,
        nvvm.minctasm = 1 : i32} {
    ```
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def AttnGpuDeviceBuffers : Pass<"attn-gpu-device-buffers", "func::FuncOp"> {
  let summary = "Put a bufferized host function's buffers in GPU device "
                "memory, its copies in kernels";
  let description = [{
    For a GPU pipeline, after bufferization and before the loops are mapped
    to the GPU: the function's arguments are device pointers given by the
    caller, and every buffer it allocates (the naive score table, row
    statistics, results) must be device memory too, since only kernels
    touch them. Outside `gpu.launch` bodies:

    - a buffer the function allocates, fills and then only copies into one
      of its arguments that nothing else touches (a result under a
      destination-passing entry, which convert-attn-to-gpu allocates) is
      replaced by that argument: no allocation, no copy;
    - `memref.alloc` becomes `gpu.alloc` and `memref.dealloc` becomes
      `gpu.dealloc` (`gpu-async-region` and `gpu-to-llvm` turn them into
      `mgpuMemAlloc`/`mgpuMemFree` on the launch stream);
    - `memref.copy` becomes `linalg.copy`, so that it is lowered to a kernel
      with the other linalg ops;
    - a load or store the host would make itself (`memref.load`,
      `memref.store`, vector transfers) is an error: the host cannot read
      device memory.

    Before:

    ```mlir
    %s = memref.alloc(%b, %lq, %lk) {alignment = 64 : i64} : memref<?x8x?x?xf32>
    memref.copy %a, %o : memref<?x8x?x64xf32> to memref<?x8x?x64xf32>
    memref.dealloc %s : memref<?x8x?x?xf32>
    ```

    After:

    ```mlir
    %s = gpu.alloc (%b, %lq, %lk) : memref<?x8x?x?xf32>
    linalg.copy ins(%a : memref<?x8x?x64xf32>) outs(%o : memref<?x8x?x64xf32>)
    gpu.dealloc %s : memref<?x8x?x?xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
  ];
}

def AttnGpuRebuildCapturedMemrefs
    : Pass<"attn-gpu-rebuild-captured-memrefs", "func::FuncOp"> {
  let summary = "Pass the memrefs a gpu.launch captures as a base buffer "
                "and index values, so kernels take one bare pointer each";
  let description = [{
    Kernels take one bare pointer per memref argument
    (`use-bare-pointers-for-kernels`), which holds only for memrefs of static
    shape, strides and offset. Every other memref a `gpu.launch` body uses
    from above is taken apart before the launch
    (`memref.extract_strided_metadata`: a 0-d base buffer, the offset, sizes
    and strides) and rebuilt at the start of the body
    (`memref.reinterpret_cast`, then `memref.cast` back to its type), so that
    kernel outlining passes the base buffer (static: a bare pointer) and the
    index values (scalars). Unlike `gpu-decompose-memrefs`, which rewrites
    only loads, stores and subviews, every use is served: `nvgpu` copies,
    `memref.dim`, vector transfers.

    Before:

    ```mlir
    gpu.launch ... {
      %t = nvgpu.device_async_copy %k[%i, %j], %smem[%j], 8
          : memref<?x64xf16> to memref<64xf16, 3>
    }
    ```

    After:

    ```mlir
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %k
    gpu.launch ... {
      %r = memref.reinterpret_cast %base to offset: [%offset],
          sizes: [%sizes#0, 64], strides: [64, 1]
          : memref<f16> to memref<?x64xf16, strided<[64, 1], offset: ?>>
      %k2 = memref.cast %r : ... to memref<?x64xf16>
      %t = nvgpu.device_async_copy %k2[%i, %j], %smem[%j], 8 ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // ATTN_CODEGEN_GPU_PASSES_TD
