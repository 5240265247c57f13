// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" --attn-cpu-decode="decode-width=8 decode-phased=true" | FileCheck %s --check-prefixes=CHECK,ON
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" --attn-cpu-decode="decode-width=8" | FileCheck %s --check-prefixes=CHECK,OFF
// The CPU pipeline sets it on the avx2 kernels (8 lanes) only (decode-rows
// given: their default, 7, leaves blocks of 8 and 16 rows to the tile ops).
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx2 kv-splits=1 decode-rows=16" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefixes=CHECK,ON
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512 kv-splits=1" --mlir-print-ir-after=attn-cpu-decode 2>&1 >/dev/null | FileCheck %s --check-prefix=WIDE

// decode-phased: where K and V are f32, the block has at least 4 query rows
// and rows x D is at least 512, each block of the decode kernel's keys runs
// in two phases: its scores first, by a loop over its keys (keys per
// iteration: 8 accumulators / rows) that also prefetches the K rows two
// blocks ahead, then its softmax and its P.V loops, which prefetch V only.
// Without it (and below the bounds) the P.V loops also take the next
// block's dot products and prefetch both streams.

// 4 rows (hq=8, hkv=2) x D=128, 45 keys: 5 full blocks of 8 and a tail.
// The scores loop: 2 keys per iteration, the 16 lines (8 per 512-byte row)
// of 2 K rows prefetched, each key's 16 chunks read and their 4 rows' sums
// stored to the [8 keys, 4 rows, 8 lanes] tile, folded after the loop.
// Then 8 P.V loops (16 value vectors, 2 per group), each prefetching a V
// line per key and nothing of K. The tail block (in the scf.if) takes its
// scores as before.
// CHECK-LABEL: func.func @rows4_d128
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x2x45x128xf32>, %[[V:[^:]*]]: tensor<1x2x45x128xf32>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]]
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]]
// ON: %[[TILE:.*]] = memref.alloc() : memref<8x4x8xf32>
// ON: scf.for {{.*}} iter_args(
// ON: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step %c2{{[_0-9]*}} {
// ON-COUNT-16: memref.prefetch %[[KB]][
// ON-NOT: memref.prefetch
// ON-COUNT-32: vector.transfer_read %[[K]][
// ON-NOT: vector.transfer_read
// ON-COUNT-8: vector.store %{{.*}}, %[[TILE]][
// ON-NEXT: }
// ON: vector.load %[[TILE]][
// ON-NOT: memref.prefetch %[[KB]]
// ON-NOT: vector.transfer_read %[[K]]
// ON: scf.for {{.*}} to %c8{{[_0-9]*}} step {{.*}} iter_args({{.*}}) -> ({{(vector<8xf32>, ){7}vector<8xf32>}}) {
// ON: memref.prefetch %[[VB]][
// ON-NOT: memref.prefetch %[[KB]]
// ON-NOT: vector.transfer_read %[[K]]
// ON: scf.if
// ON: vector.transfer_read %[[K]][
// ON-NOT: {{ step %[a-z0-9_]+ \{$}}
// The overlapped blocks: no loop without loop-carried values, and the P.V
// loops prefetch K rows too.
// OFF-NOT: {{ step %[a-z0-9_]+ \{$}}
// OFF: scf.for {{.*}} to %c8{{[_0-9]*}} step {{.*}} iter_args({{.*}}) -> ({{(vector<8xf32>, ){7}vector<8xf32>}}) {
// OFF: memref.prefetch %[[VB]][
// OFF: memref.prefetch %[[KB]][
// OFF-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// 16 lanes (the avx512 kernels): never phased.
// WIDE-LABEL: func.func @rows4_d128
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows4_d128(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x45x128xf32>, %v: tensor<1x2x45x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x45x128xf32>, tensor<1x2x45x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// 8 rows (hq=16, hkv=2) x D=64 = 512: phased, one key per iteration (8
// accumulators / 8 rows), the 4 lines of one K row prefetched.
// CHECK-LABEL: func.func @rows8_d64
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x2x40x64xf32>
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]]
// ON: %[[TILE:.*]] = memref.alloc() : memref<8x8x8xf32>
// ON: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step %c1{{[_0-9]*}} {
// ON-COUNT-4: memref.prefetch %[[KB]][
// ON-NOT: memref.prefetch
// ON-COUNT-8: vector.transfer_read %[[K]][
// ON-NOT: vector.transfer_read
// ON-COUNT-8: vector.store %{{.*}}, %[[TILE]][
// ON-NEXT: }
// OFF-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows8_d64
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows8_d64(%q: tensor<1x16x1x64xf32>, %k: tensor<1x2x40x64xf32>, %v: tensor<1x2x40x64xf32>) -> tensor<1x16x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x16x1x64xf32>, tensor<1x2x40x64xf32>, tensor<1x2x40x64xf32> -> tensor<1x16x1x64xf32>
  return %o : tensor<1x16x1x64xf32>
}

// -----

// 16 rows (hq=64, hkv=4) x D=128: phased, one key per iteration.
// CHECK-LABEL: func.func @rows16_d128
// ON: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step %c1{{[_0-9]*}} {
// OFF-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows16_d128
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows16_d128(%q: tensor<1x64x1x128xf32>, %k: tensor<1x4x40x128xf32>, %v: tensor<1x4x40x128xf32>) -> tensor<1x64x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x64x1x128xf32>, tensor<1x4x40x128xf32>, tensor<1x4x40x128xf32> -> tensor<1x64x1x128xf32>
  return %o : tensor<1x64x1x128xf32>
}

// -----

// A dynamic Lk: the full blocks' count is a value, the same loops.
// CHECK-LABEL: func.func @dynamic_keys
// ON: %[[TILE:.*]] = memref.alloc() : memref<8x4x8xf32>
// ON: scf.for %{{.*}} = %c0{{[_0-9]*}} to %c8{{[_0-9]*}} step %c2{{[_0-9]*}} {
// ON-COUNT-8: vector.store %{{.*}}, %[[TILE]][
// OFF-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
func.func @dynamic_keys(%q: tensor<1x8x1x128xf32>, %k: tensor<1x2x?x128xf32>, %v: tensor<1x2x?x128xf32>) -> tensor<1x8x1x128xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf32>, tensor<1x2x?x128xf32>, tensor<1x2x?x128xf32> -> tensor<1x8x1x128xf32>
  return %o : tensor<1x8x1x128xf32>
}

// -----

// Below the bounds the blocks stay overlapped, with the option or without:
// 4 rows x D=64 (256), 2 rows x D=256, 16 rows x D=64 (hq=16, hkv=4, Lq=4:
// above 8 rows D must be at least 128), bf16 and f16 K and V.
// CHECK-LABEL: func.func @rows4_d64
// CHECK-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows4_d64
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows4_d64(%q: tensor<1x8x1x64xf32>, %k: tensor<1x2x40x64xf32>, %v: tensor<1x2x40x64xf32>) -> tensor<1x8x1x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xf32>, tensor<1x2x40x64xf32>, tensor<1x2x40x64xf32> -> tensor<1x8x1x64xf32>
  return %o : tensor<1x8x1x64xf32>
}

// -----

// CHECK-LABEL: func.func @rows2_d256
// CHECK-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows2_d256
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows2_d256(%q: tensor<1x4x1x256xf32>, %k: tensor<1x2x40x256xf32>, %v: tensor<1x2x40x256xf32>) -> tensor<1x4x1x256xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x4x1x256xf32>, tensor<1x2x40x256xf32>, tensor<1x2x40x256xf32> -> tensor<1x4x1x256xf32>
  return %o : tensor<1x4x1x256xf32>
}

// -----

// CHECK-LABEL: func.func @rows16_d64
// CHECK-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows16_d64
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows16_d64(%q: tensor<1x16x4x64xf32>, %k: tensor<1x4x40x64xf32>, %v: tensor<1x4x40x64xf32>) -> tensor<1x16x4x64xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x16x4x64xf32>, tensor<1x4x40x64xf32>, tensor<1x4x40x64xf32> -> tensor<1x16x4x64xf32>
  return %o : tensor<1x16x4x64xf32>
}

// -----

// CHECK-LABEL: func.func @rows4_d128_f16
// CHECK-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows4_d128_f16
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows4_d128_f16(%q: tensor<1x8x1x128xf16>, %k: tensor<1x2x40x128xf16>, %v: tensor<1x2x40x128xf16>) -> tensor<1x8x1x128xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xf16>, tensor<1x2x40x128xf16>, tensor<1x2x40x128xf16> -> tensor<1x8x1x128xf16>
  return %o : tensor<1x8x1x128xf16>
}

// -----

// CHECK-LABEL: func.func @rows4_d128_bf16
// CHECK-NOT: {{ step %[a-z0-9_]+ \{$}}
// CHECK: return
// WIDE-LABEL: func.func @rows4_d128_bf16
// WIDE-NOT: {{ step %[a-z0-9_]+ \{$}}
// WIDE: return
func.func @rows4_d128_bf16(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x40x128xbf16>, %v: tensor<1x2x40x128xbf16>) -> tensor<1x8x1x128xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x128xbf16>, tensor<1x2x40x128xbf16>, tensor<1x2x40x128xbf16> -> tensor<1x8x1x128xbf16>
  return %o : tensor<1x8x1x128xbf16>
}
