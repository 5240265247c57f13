// Sizes whose products overflow int64: a diagnostic, or a tiling that is
// still correct; never a wrapped product (undefined behaviour).
// RUN: attn-opt %s --split-input-file --attn-tile-online-softmax -canonicalize | FileCheck %s
// RUN: not attn-opt %s --split-input-file --attn-tile-online-softmax="block-q=65536" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BLOCK
// Past Tuning.td's bound of block-q, one line for the options, at the first
// chunk's location.
// RUN: not attn-opt %s --attn-tile-online-softmax="block-q=1099511627776" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BOUND
// BOUND: error: attn-tile-online-softmax: block-q (1099511627776) must be at most 65536

// Grouped-query heads with a huge static Lq: group * Lq (4 * 2^62) wraps to
// 0, which once made this a "short decode" tiled into one block of 16 rows.
// It is 2^56 blocks of 64 rows per head.
// CHECK-LABEL: func.func @gqa_huge_lq
// CHECK: scf.forall ({{.*}}) in (4, 72057594037927936)
func.func @gqa_huge_lq(%q: tensor<1x4x4611686018427387904x8xf32>,
                       %k: tensor<1x1x16x8xf32>, %v: tensor<1x1x16x8xf32>)
    -> tensor<1x4x4611686018427387904x8xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x4x4611686018427387904x8xf32>, tensor<1x1x16x8xf32>,
        tensor<1x1x16x8xf32> -> tensor<1x4x4611686018427387904x8xf32>
  return %o : tensor<1x4x4611686018427387904x8xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>,
                   %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
        -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// The largest block-q with a wide head and dynamic dims: tiles are
// allocated whole, 65536 rows by 131072 columns is more than 2^32.
// BLOCK: error: 'attn.sdpa' op expected a tile of block-q (65536) rows by max(block-kv, D, Dv) (131072) columns to hold at most 2^32 elements
// CHECK-LABEL: func.func @wide
func.func @wide(%q: tensor<?x1x?x131072xf32>, %k: tensor<?x1x?x131072xf32>,
                %v: tensor<?x1x?x8xf32>) -> tensor<?x1x?x8xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<?x1x?x131072xf32>, tensor<?x1x?x131072xf32>, tensor<?x1x?x8xf32>
        -> tensor<?x1x?x8xf32>
  return %o : tensor<?x1x?x8xf32>
}
