// attn-lower-cpu's emulate-amx: the amx kernels' tile ops become vector code
// (attn-emulate-amx, right after attn-cpu-microkernels), so that no AMX
// intrinsic reaches LLVM: the same 16 tile products (scores and P.V of a
// 128 x 128 bf16 block at D = 64) as calls of one private function. Without
// it the tiles stay AMX intrinsics; on the other kernels it has no tiles to
// rewrite.
// RUN: attn-opt %s --attn-lower-cpu="kernels=amx" | FileCheck %s --check-prefix=TILES
// RUN: attn-opt %s --attn-lower-cpu="kernels=amx emulate-amx=1" | FileCheck %s --check-prefix=EMULATED --implicit-check-not=llvm.x86.t --implicit-check-not=x86_amx
// RUN: attn-opt %s --attn-lower-cpu="kernels=avx512-bf16 emulate-amx=1" | FileCheck %s --check-prefix=NONE --implicit-check-not=__attn_emulated --implicit-check-not=llvm.x86.t

// TILES-COUNT-16: llvm.x86.tdpbf16ps.internal

// EMULATED-LABEL: llvm.func @tiles(
// EMULATED-COUNT-16: llvm.call @__attn_emulated_tile_mulf_16x32bf16_16x32(
// EMULATED: llvm.func internal @__attn_emulated_tile_mulf_16x32bf16_16x32(%{{.*}}: !llvm.array<16 x vector<32xbf16>>, %{{.*}}: !llvm.array<16 x vector<32xbf16>>, %{{.*}}: !llvm.array<16 x vector<16xf32>>) -> !llvm.array<16 x vector<16xf32>>
// EMULATED-COUNT-512: llvm.intr.fmuladd

// NONE-LABEL: llvm.func @tiles(
// NONE: x86.avx512bf16.dpbf16ps
func.func @tiles(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16> -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
