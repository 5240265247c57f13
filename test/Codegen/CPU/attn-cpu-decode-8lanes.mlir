// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="decode-rows=16 decode-dim-multiple=8 kv-splits=1" --attn-cpu-decode="decode-width=8" | FileCheck %s

// The decode kernel on 8 lanes (the avx2 kernels: 16 ymm registers) keeps
// at most 8 accumulators of P.V in registers at once, half of them, where
// 16 lanes (AVX-512's 32 zmm) keep 16: the probabilities, the V rows and
// the next block's dot products need the rest.

// 2 rows (hq=4, hkv=2) x 32 value columns = 8 accumulators of 8 lanes:
// already too many to carry through the key loop beside the scores, so
// they live in a [2, 32] f32 buffer, read and written once per block (on
// 16 lanes that starts at 16 accumulators).
// CHECK-LABEL: func.func @rows2_in_memory
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<2x32xf32>
// CHECK: scf.for
// CHECK: vector.load %[[ACC]][%{{.*}}, %{{.*}}] : memref<2x32xf32>, vector<8xf32>
// CHECK: bufferization.to_tensor %[[ACC]] restrict : memref<2x32xf32> to tensor<2x32xf32>
func.func @rows2_in_memory(%q: tensor<1x4x1x32xf32>, %k: tensor<1x2x40x32xf32>) -> tensor<1x4x1x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x4x1x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

// 4 rows x 4 value vectors = 16 accumulators: the P.V loop over a block's
// 8 keys runs twice per block, 2 value vectors of the 4 rows (8 carried
// vectors) each time, never 16 at once.
// CHECK-LABEL: func.func @rows4_two_groups
// CHECK-NOT: -> ({{(vector<8xf32>, ){15}vector<8xf32>}}
// CHECK-COUNT-2: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}} step %{{.*}} iter_args({{.*}}) -> ({{(vector<8xf32>, ){7}vector<8xf32>}}) {
// CHECK-NOT: -> ({{(vector<8xf32>, ){15}vector<8xf32>}}
// CHECK: return
func.func @rows4_two_groups(%q: tensor<1x8x1x32xf32>, %k: tensor<1x2x40x32xf32>) -> tensor<1x8x1x32xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x8x1x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x8x1x32xf32>
  return %o : tensor<1x8x1x32xf32>
}

// -----

// 1 row x 3 value vectors: the accumulators stay loop-carried registers;
// the row is written out once at the end.
// CHECK-LABEL: func.func @rows1_in_registers
// CHECK-NOT: memref<1x24xf32>
// CHECK: scf.for {{.*}} -> ({{(vector<8xf32>, ){5}vector<8xf32>}}) {
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<1x24xf32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict
func.func @rows1_in_registers(%q: tensor<1x2x1x24xf32>, %k: tensor<1x2x40x24xf32>) -> tensor<1x2x1x24xf32> {
  %o = attn.sdpa %q, %k, %k : tensor<1x2x1x24xf32>, tensor<1x2x40x24xf32>, tensor<1x2x40x24xf32> -> tensor<1x2x1x24xf32>
  return %o : tensor<1x2x1x24xf32>
}

// -----

// On 8 lanes half the P.V groups take the next block's dot products, each
// twice the K chunks (the group loops are bound by the FP load/store pipes,
// which every group's read-modify-write of the dot-product buffer loads);
// every group still prefetches its share of the next K rows. 4 rows x 4
// value vectors: two groups; the first reads all 4 K chunks of the next
// block's key and stores the 4 rows' sums, the second neither.
// CHECK-LABEL: func.func @dots_in_half_the_groups
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x2x40x32xf32>
// CHECK: scf.for {{.*}} -> ({{(vector<8xf32>, ){7}vector<8xf32>}}) {
// CHECK:   memref.prefetch
// CHECK:   memref.prefetch
// CHECK-COUNT-4: vector.transfer_read %[[K]][{{.*}} : tensor<1x2x40x32xf32>, vector<8xf32>
// CHECK-COUNT-4: vector.store %{{.*}} : memref<8x4x8xf32>, vector<8xf32>
// CHECK:   scf.yield
// CHECK: scf.for {{.*}} -> ({{(vector<8xf32>, ){7}vector<8xf32>}}) {
// CHECK:   memref.prefetch
// CHECK:   memref.prefetch
// CHECK-NOT: vector.transfer_read %[[K]]
// CHECK-NOT: memref<8x4x8xf32>
// CHECK:   scf.yield
func.func @dots_in_half_the_groups(%q: tensor<1x8x1x32xf32>, %k: tensor<1x2x40x32xf32>, %v: tensor<1x2x40x32xf32>) -> tensor<1x8x1x32xf32> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x32xf32>, tensor<1x2x40x32xf32>, tensor<1x2x40x32xf32> -> tensor<1x8x1x32xf32>
  return %o : tensor<1x8x1x32xf32>
}

// -----

// bf16 K and V, D = 64, 4 rows: four P.V groups of 16 value columns (2
// vectors of 8 lanes), and a 64-byte line holds 32 bf16 columns. Each line
// of the next rows is prefetched once, by the group its first column falls
// in: group 0 prefetches column 0 of a V row and of a K row, group 2 column
// 32 of each, groups 1 and 3 nothing (they shared group 0's and group 2's
// lines before).
// CHECK-LABEL: func.func @bf16_lines_once
// CHECK-DAG: %[[KB:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG: %[[VB:.*]] = bufferization.to_buffer %arg2 read_only
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}}
// CHECK: memref.prefetch %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %c0{{[_0-9]*}}]
// CHECK: memref.prefetch %[[KB]][%{{.*}}, %{{.*}}, %{{.*}}, %c0{{[_0-9]*}}]
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}}
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}}
// CHECK: memref.prefetch %[[VB]][%{{.*}}, %{{.*}}, %{{.*}}, %c32{{[_0-9]*}}]
// CHECK: memref.prefetch %[[KB]][%{{.*}}, %{{.*}}, %{{.*}}, %c32{{[_0-9]*}}]
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %{{.*}} = %{{.*}} to %c8{{[_0-9]*}}
// CHECK-NOT: memref.prefetch
// CHECK: scf.yield
// CHECK: scf.yield
func.func @bf16_lines_once(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x40x64xbf16>, %v: tensor<1x2x40x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x40x64xbf16>, tensor<1x2x40x64xbf16> -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}
