// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="transpose-values=true" --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-dot=true amx=true avx512-exp=true" -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,VT
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-dot=true amx=true avx512-exp=true" -canonicalize -cse | FileCheck %s --check-prefixes=CHECK,INBLOCK

// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="transpose-values=true split-f16=true" --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-dot=true amx=true avx512-exp=true" -canonicalize -cse | FileCheck %s --check-prefix=SPLIT

// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="transpose-values=true f16-tiles=true split-f16=true" --attn-tile-online-softmax="block-q=32 block-kv=32 row-multiple=16" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-dot=true amx=true amx-fp16=true avx512-exp=true" -canonicalize -cse | FileCheck %s --check-prefix=FP16

// amx: both products on AMX tiles. V is transposed once, before the query
// blocks (transpose-values: a forall of its own whose kernel stores the
// transposed rows), or else in each query block into a scratch buffer. The
// query tile is packed into dim pairs once per query block; the scores are
// 2 x 2 blocks of C tiles from zero, K read in place, stored unscaled; the
// row max of the stored tile is scaled once. The running max moves only
// past a slack of 8 (an ole compare); the probabilities start with
// fma(s, scale, -m) and go straight into bf16 key pairs (no f32 store into
// the score tile); the accumulator's rescale runs only if some factor is
// not 1; P.V loads its C tiles from the accumulator.
// CHECK-LABEL: func.func @amx
// CHECK-DAG:   %[[SCALE:.*]] = arith.constant dense<0.255034864> : vector<16xf32>
// CHECK-DAG:   %[[SLACK:.*]] = arith.constant dense<8.000000e+00> : vector<16xf32>
// VT:          %[[VT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x1x32x64xbf16>
// VT:          scf.forall
// VT:            %[[VTTILE:.*]] = memref.subview %[[VT]]
// VT-COUNT-16:   vector.store %{{.*}}, %[[VTTILE]]
// CHECK:       scf.forall
// INBLOCK:       %[[VTS:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "bf16-pairs"} : memref<32x32xbf16>
// CHECK:         %[[PP:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "bf16-pairs"} : memref<16x64xbf16>
// CHECK:         %[[QP:.*]] = memref.alloc() {alignment = 64 : i64, attn.scratch = "bf16-pairs"} : memref<16x64xbf16>
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
// CHECK:         vector.store %{{.*}}, %[[QP]]
// CHECK:         scf.for
// VT:              %[[VBLOCK:.*]] = memref.subview %[[VT]]
// CHECK-COUNT-4:   amx.tile_zero : !amx.tile<16x16xf32>
// CHECK:           %[[K0:.*]] = amx.tile_load %[[KT:.*]][%c0, %c0] : memref<32x32xbf16, strided<[32, 1], offset: ?>> into !amx.tile<16x32xbf16>
// CHECK:           %[[K1:.*]] = amx.tile_load %[[KT]][%c16, %c0]
// CHECK:           %[[Q0:.*]] = amx.tile_load %[[QP]][%c0, %c0] : memref<16x64xbf16> into !amx.tile<16x32xbf16>
// CHECK:           %[[Q1:.*]] = amx.tile_load %[[QP]][%c0, %c32]
// CHECK:           %[[S00:.*]] = amx.tile_mulf %[[K0]], %[[Q0]], %{{.*}} : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
// CHECK-COUNT-3:   amx.tile_mulf
// CHECK:           amx.tile_store %[[ST:.*]][%c0, %c0], %[[S00]] : memref<32x32xf32>, !amx.tile<16x16xf32>
// CHECK-COUNT-3:   amx.tile_store %[[ST]]
// CHECK-NOT:       arith.mulf
// CHECK:           arith.select
// CHECK:           arith.mulf %{{.*}}, %[[SCALE]] : vector<16xf32>
// CHECK:           %[[BOUND:.*]] = arith.addf %{{.*}}, %[[SLACK]] : vector<16xf32>
// CHECK:           arith.cmpf ugt, %{{.*}}, %[[BOUND]] : vector<16xf32>
// CHECK:           vector.fma %{{.*}}, %[[SCALE]], %{{.*}} : vector<16xf32>
// CHECK-NOT:       vector.store %{{.*}}, %[[ST]]
// CHECK:           llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
// CHECK-NEXT:      vector.shuffle
// CHECK-NEXT:      vector.store %{{.*}}, %[[PP]]
// CHECK:           %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<16xi1> into i1
// CHECK-NEXT:      scf.if %[[ANY]] {
// CHECK:             arith.mulf
// CHECK:           }
// INBLOCK:         vector.store %{{.*}}, %[[VTS]]
// CHECK:           %[[C0:.*]] = amx.tile_load %[[ACC:.*]][%c0, %c0] : memref<32x32xf32> into !amx.tile<16x16xf32>
// VT:              %[[V0:.*]] = amx.tile_load %[[VBLOCK]][%c0, %c0] : memref<32x32xbf16, strided<[64, 1], offset: ?>> into !amx.tile<16x32xbf16>
// INBLOCK:         %[[V0:.*]] = amx.tile_load %[[VTS]][%c0, %c0] : memref<32x32xbf16> into !amx.tile<16x32xbf16>
// CHECK:           %[[P0:.*]] = amx.tile_load %[[PP]][%c0, %c0] : memref<16x64xbf16> into !amx.tile<16x32xbf16>
// CHECK:           %[[O0:.*]] = amx.tile_mulf %[[V0]], %[[P0]], %[[C0]]
// CHECK:           amx.tile_store %[[ACC]][%c0, %c0], %[[O0]] : memref<32x32xf32>, !amx.tile<16x16xf32>
// CHECK-NOT:   attn.tile = #attn.tile<scores>
// CHECK-NOT:   attn.tile = #attn.tile<pv>
// CHECK-NOT:   attn.tile = #attn.tile<transpose_values>
func.func @amx(%q: tensor<1x1x64x32xbf16>, %k: tensor<1x1x64x32xbf16>) -> tensor<1x1x64x32xbf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}

// -----

// D = 48: one chunk of 32 and one of 16 (tiles of another shape: a 16x16
// bf16 A tile and an 8x32 B tile), so the blocks are 1 x 2 C tiles (a tile
// register has one shape per function: 8 tiles in all).
// CHECK-LABEL: func.func @half_chunk
// CHECK-COUNT-2: amx.tile_zero : !amx.tile<16x16xf32>
// CHECK-NOT:     amx.tile_zero
// CHECK:         amx.tile_load {{.*}} into !amx.tile<16x32xbf16>
// CHECK:         amx.tile_load {{.*}} into !amx.tile<16x16xbf16>
// CHECK:         amx.tile_load {{.*}} into !amx.tile<8x32xbf16>
// CHECK:         amx.tile_mulf %{{.*}}, %{{.*}}, %{{.*}} : !amx.tile<16x16xbf16>, !amx.tile<8x32xbf16>, !amx.tile<16x16xf32>
func.func @half_chunk(%q: tensor<1x1x64x48xbf16>, %k: tensor<1x1x64x48xbf16>, %v: tensor<1x1x64x32xbf16>) -> tensor<1x1x64x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x1x64x48xbf16>, tensor<1x1x64x48xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}

// -----

// D = 24 has no 16-column tiles: the scores take the bf16 dot products
// (x86vector.avx512.dot); P.V still runs on AMX tiles.
// CHECK-LABEL: func.func @scores_off_tiles
// CHECK:       x86vector.avx512.dot
// CHECK-NOT:   amx.tile_zero
// CHECK:       amx.tile_mulf
func.func @scores_off_tiles(%q: tensor<1x1x64x24xbf16>, %k: tensor<1x1x64x24xbf16>, %v: tensor<1x1x64x32xbf16>) -> tensor<1x1x64x32xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x1x64x24xbf16>, tensor<1x1x64x24xbf16>, tensor<1x1x64x32xbf16> -> tensor<1x1x64x32xbf16>
  return %o : tensor<1x1x64x32xbf16>
}

// -----

// f32 never takes the tiles, nor the slack of the running max.
// CHECK-LABEL: func.func @f32_unchanged
// CHECK-NOT:   amx.
// CHECK-NOT:   arith.cmpf ugt
// CHECK:       vector.fma
// CHECK-NOT:   amx.
func.func @f32_unchanged(%q: tensor<1x1x64x32xf32>, %k: tensor<1x1x64x32xf32>) -> tensor<1x1x64x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32>, tensor<1x1x64x32xf32> -> tensor<1x1x64x32xf32>
  return %o : tensor<1x1x64x32xf32>
}

// -----

// split-f16: f16 K and V split once per call into bf16 hi and lo, each part
// by vector code (f16 -> f32, rounded to bf16, the rest rounded again) into
// its half of the window; the query and P split into hi and lo pairs; each
// product three tile products per chunk (hi.hi, hi.lo, lo.hi): 3 x 4
// tile_mulf per 2 x 2 block. Nothing goes through a copy.
// SPLIT-LABEL: func.func @f16_split
// SPLIT-NOT:   memref.copy %alloc
// SPLIT:       scf.forall
// SPLIT:         vector.load %{{.*}} : memref<32x32xf16, {{.*}}>, vector<16xf16>
// SPLIT:         arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// SPLIT:         %[[HI:.*]] = arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// SPLIT:         arith.extf %[[HI]] : vector<16xbf16> to vector<16xf32>
// SPLIT:         arith.truncf %{{.*}} : vector<16xf32> to vector<16xbf16>
// SPLIT:       scf.forall
// SPLIT:         scf.for
// SPLIT-COUNT-12: amx.tile_mulf
// SPLIT:         vector.interleave
// SPLIT:         vector.interleave
// SPLIT-COUNT-12: amx.tile_mulf
// SPLIT-NOT:   attn.tile = #attn.tile<scores>
// SPLIT-NOT:   attn.tile = #attn.tile<pv>
// SPLIT-NOT:   attn.tile = #attn.tile<bf16_keys>
// amx-fp16 (with f16-tiles, which wins over split-f16): f16 K in place and
// V transposed as f16, the query packed and P rounded to f16 pairs, one
// tile product per chunk (tdpfp16ps): 4 tile_mulf per 2 x 2 block.
// FP16-LABEL: func.func @f16_split
// FP16-NOT:   bf16_keys
// FP16:       scf.forall
// FP16:         arith.truncf %{{.*}} : vector<16xf32> to vector<16xf16>
// FP16:         vector.interleave %{{.*}}, %{{.*}} : vector<16xf16> -> vector<32xf16>
// FP16:         scf.for
// FP16:           amx.tile_load %{{.*}} : memref<32x32xf16, {{.*}}> into !amx.tile<16x32xf16>
// FP16-COUNT-4:   amx.tile_mulf %{{.*}}, %{{.*}}, %{{.*}} : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
// FP16-NOT:       amx.tile_mulf
// FP16:           vector.interleave %{{.*}}, %{{.*}} : vector<16xf16> -> vector<32xf16>
// FP16-COUNT-4:   amx.tile_mulf {{.*}} : !amx.tile<16x32xf16>, !amx.tile<16x32xf16>, !amx.tile<16x16xf32>
// FP16-NOT:   attn.tile = #attn.tile<scores>
// FP16-NOT:   attn.tile = #attn.tile<pv>
func.func @f16_split(%q: tensor<1x1x64x32xf16>, %k: tensor<1x1x64x32xf16>) -> tensor<1x1x64x32xf16> {
  %o = attn.sdpa %q, %k, %k : tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16> -> tensor<1x1x64x32xf16>
  return %o : tensor<1x1x64x32xf16>
}
