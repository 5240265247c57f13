// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse | FileCheck %s --check-prefix=TILE
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1" -canonicalize -cse | FileCheck %s
// The pass's default register blocks (6 keys by 4 row vectors) on 64-row
// blocks: the diagonal's products take one row vector by 16 keys instead.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=64" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels -canonicalize -cse | FileCheck %s --check-prefix=DEFAULT
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=64 block-kv=64" -canonicalize -cse \
// RUN:   --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="bf16-dot=true" -canonicalize -cse | FileCheck %s --check-prefix=BF16
// A tag the tiling would not write (negative, or not an i64) is ignored:
// the whole tile is computed.
// RUN: attn-opt %s -split-input-file --attn-tile-online-softmax="block-q=32 block-kv=32" -canonicalize -cse \
// RUN:   | sed -e 's/attn.hidden_above = 0 : i64, attn.score/attn.hidden_above = -1 : i64, attn.score/' \
// RUN:         -e 's/attn.hidden_above = 0 : i64, attn.tile/attn.hidden_above = 0 : i32, attn.tile/' \
// RUN:   | attn-opt -split-input-file --eliminate-empty-tensors \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --attn-cpu-microkernels="reg-block=4 row-vectors=1" -canonicalize -cse | FileCheck %s --check-prefix=IGNORED

// The block on the causal diagonal: with key blocks as long as query blocks
// and a static diagonal shift that is a multiple of them, its key j is
// hidden from its row i wherever j > i. The tiling tags that block's scores
// and P.V (attn.hidden_above = 0), not the blocks below the diagonal nor
// the tail; the f32 (and bf16-dot) kernels then skip the register blocks of scores whose
// first key lies past their last row (key c0 > row i0 + 15), and end P.V's
// reduction over keys at the block's last row (min(i0 + 16, 32)).

// TILE-LABEL: func.func @top_left
// The blocks below the diagonal: untagged.
// TILE: scf.for
// TILE-NOT: attn.hidden_above
// TILE: attn.tile = #attn.tile<scores>
// TILE-NOT: attn.hidden_above
// TILE: attn.tile = #attn.tile<pv>
// The diagonal block: both products tagged.
// TILE: scf.for
// TILE: attn.hidden_above = 0 : i64, attn.score_scale = {{.*}}, attn.tile = #attn.tile<scores>
// TILE: attn.hidden_above = 0 : i64, attn.tile = #attn.tile<pv>
// The tail (none here, but built): untagged.
// TILE: scf.if
// TILE-NOT: attn.hidden_above
// TILE: return

// CHECK-LABEL: func.func @top_left
// The diagonal block's loop (the second over keys): scores, then P.V.
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %[[LB:.*]] to %{{.*}} step %c1 {
// CHECK:   scf.for %[[C0:.*]] = %c0 to %c32 step %c4 {
// CHECK:     scf.for %[[I0:.*]] = %c0 to %c32 step %c16 {
// CHECK:       %[[LAST:.*]] = arith.addi %[[I0]], %c15 : index
// CHECK:       %[[NEEDED:.*]] = arith.cmpi sle, %[[C0]], %[[LAST]] : index
// CHECK:       scf.if %[[NEEDED]] {
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// CHECK:   scf.for %{{.*}} = %c0 to %c16 step %c4 {
// CHECK:     scf.for %[[PI0:.*]] = %c0 to %c32 step %c16 {
// CHECK:       %[[PEND:.*]] = arith.addi %[[PI0]], %c16 : index
// CHECK:       %[[TEND:.*]] = arith.minsi %[[PEND]], %c32 : index
// CHECK:       scf.for %{{.*}} = %c0 to %[[TEND]] step %c1 iter_args(
// IGNORED-LABEL: func.func @top_left
// IGNORED-NOT: arith.cmpi sle, %arg{{[0-9]+}}, %{{[0-9]+}} : index
// IGNORED-NOT: scf.for %{{.*}} = %c0 to %{{[0-9]+}} step %c1 iter_args(
// IGNORED: return
func.func @top_left(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// bottom_right with Lk - Lq = 32: a multiple of the block, tagged.
// TILE-LABEL: func.func @bottom_right_aligned
// TILE: attn.hidden_above = 0 : i64, attn.score_scale
// CHECK-LABEL: func.func @bottom_right_aligned
// CHECK: arith.cmpi sle
// CHECK: arith.minsi
func.func @bottom_right_aligned(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x32x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x1x32x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x32x16xf32>
  return %o : tensor<1x1x32x16xf32>
}

// -----

// Lk - Lq = 16 is not a multiple of the block: the diagonal cuts the key
// blocks elsewhere in each query block; nothing tagged, nothing skipped.
// TILE-LABEL: func.func @bottom_right_unaligned
// TILE-NOT: attn.hidden_above
// CHECK-LABEL: func.func @bottom_right_unaligned
// CHECK-NOT: arith.cmpi sle, %arg{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK-NOT: scf.for %{{.*}} = %c0 to %{{[0-9]+}} step %c1 iter_args(
// CHECK: return
func.func @bottom_right_unaligned(%q: tensor<1x1x48x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x48x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x1x48x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x48x16xf32>
  return %o : tensor<1x1x48x16xf32>
}

// -----

// A window with a right edge past the diagonal: not tagged.
// TILE-LABEL: func.func @window_right
// TILE-NOT: attn.hidden_above
// TILE: return
func.func @window_right(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.sdpa %q, %k, %k {window = array<i64: 8, 8>} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %o : tensor<1x1x64x16xf32>
}

// -----

// top_left's shift is 0 whatever the sizes: tagged with dynamic sizes too.
// TILE-LABEL: func.func @top_left_dynamic
// TILE: attn.hidden_above = 0 : i64, attn.score_scale
// TILE: attn.hidden_above = 0 : i64, attn.tile = #attn.tile<pv>
func.func @top_left_dynamic(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32> -> tensor<1x1x?x16xf32>
  return %o : tensor<1x1x?x16xf32>
}

// -----

// bottom_right with dynamic sizes: the shift is not known; not tagged.
// TILE-LABEL: func.func @dynamic
// TILE-NOT: attn.hidden_above
// TILE: return
func.func @dynamic(%q: tensor<1x1x?x16xf32>, %k: tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<bottom_right>} : tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32>, tensor<1x1x?x16xf32> -> tensor<1x1x?x16xf32>
  return %o : tensor<1x1x?x16xf32>
}

// -----

// 64-row blocks with the default register blocks. Off the diagonal a block
// spans all 64 rows (four row vectors) and 6 keys: 24 accumulators. On it,
// where the kernels skip what the diagonal hides, a block spans 16 rows and
// 16 keys (16 accumulators): the scores skip 3 of the 8 blocks that a
// 64-row block of four row vectors computed whole, and each P.V block ends
// its reduction at its last row (16, 32, 48 or 64 keys).
// DEFAULT-LABEL: func.func @rows_64
// The blocks below the diagonal.
// DEFAULT: scf.for %{{.*}} = %c0 to %c60 step %c6 {
// DEFAULT: %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// DEFAULT: %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args(
// The diagonal block (the loop over the blocks on the diagonal): its scores,
// DEFAULT: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step %c1 {
// DEFAULT-NOT: scf.for
// DEFAULT: scf.for %[[C0:.*]] = %c0 to %c64 step %c16 {
// DEFAULT-NEXT: scf.for %[[I0:.*]] = %c0 to %c64 step %c16 {
// DEFAULT: %[[LAST:.*]] = arith.addi %[[I0]], %c15 : index
// DEFAULT: %[[NEEDED:.*]] = arith.cmpi sle, %[[C0]], %[[LAST]] : index
// DEFAULT: scf.if %[[NEEDED]] {
// DEFAULT: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// and its P.V.
// DEFAULT: %[[TEND:.*]] = arith.minsi %{{.*}}, %c64 : index
// DEFAULT-NEXT: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %[[TEND]] step %c1 iter_args(
// DEFAULT: return
func.func @rows_64(%q: tensor<1x1x128x16xf32>, %k: tensor<1x1x128x16xf32>) -> tensor<1x1x128x16xf32> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x128x16xf32>, tensor<1x1x128x16xf32>, tensor<1x1x128x16xf32> -> tensor<1x1x128x16xf32>
  return %o : tensor<1x1x128x16xf32>
}

// -----

// The same on the bf16 dot products (vdpbf16ps, bf16-dot): the scores skip
// the register blocks whose keys are all hidden, and P.V, which reduces
// over key pairs, ends at the pair of each block's last row's last key:
// min(32, (i0 + 16 + 1) / 2) of the 32 pairs.
// BF16-LABEL: func.func @bf16_rows_64
// P.V of the blocks below the diagonal: every pair.
// BF16: %{{.*}}:24 = scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(
// BF16: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step %c1 {
// BF16-NOT: scf.for
// BF16: scf.for %[[C0:.*]] = %c0 to %c64 step %c16 {
// BF16-NEXT: scf.for %[[I0:.*]] = %c0 to %c64 step %c16 {
// BF16: %[[LAST:.*]] = arith.addi %[[I0]], %c15 : index
// BF16: %[[NEEDED:.*]] = arith.cmpi sle, %[[C0]], %[[LAST]] : index
// BF16: scf.if %[[NEEDED]] {
// BF16: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// BF16: x86vector.avx512.dot
// BF16: %[[KEYS:.*]] = arith.addi %{{.*}}, %c17 : index
// BF16-NEXT: %[[PAIRS:.*]] = arith.divui %[[KEYS]], %c2 : index
// BF16-NEXT: %[[TEND:.*]] = arith.minsi %[[PAIRS]], %c32 : index
// BF16-NEXT: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %[[TEND]] step %c1 iter_args(
// BF16: x86vector.avx512.dot
// BF16: return
func.func @bf16_rows_64(%q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x128x32xbf16>) -> tensor<1x1x128x32xbf16> {
  %o = attn.sdpa %q, %k, %k {causal = #attn.causal<top_left>} : tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16> -> tensor<1x1x128x32xbf16>
  return %o : tensor<1x1x128x32xbf16>
}

// -----

// A window whose left bound is a multiple of the block (64 keys before the
// diagonal, none after): row q0 + i of the query block [q0, q0 + 64) sees
// the keys from q0 - 64 + i on. The loop over the lower edge visits the
// block [q0 - 64, q0), whose key j is hidden from its row i wherever j < i:
// both products tagged attn.hidden_below = 0; the diagonal block, the other
// edge, attn.hidden_above = 0. The kernels skip the score blocks whose last
// key lies before their first row (c0 + 15 < i0) and start each P.V
// register block's reduction at its first row (max(i0 - 0, 0)).
// TILE-LABEL: func.func @window_lower_edge
// TILE: scf.for
// TILE: attn.hidden_below = 0 : i64, attn.score_scale = {{.*}}, attn.tile = #attn.tile<scores>
// TILE: attn.hidden_below = 0 : i64, attn.tile = #attn.tile<pv>
// TILE: scf.for
// TILE: attn.hidden_above = 0 : i64, attn.score_scale = {{.*}}, attn.tile = #attn.tile<scores>
// TILE: attn.hidden_above = 0 : i64, attn.tile = #attn.tile<pv>
// DEFAULT-LABEL: func.func @window_lower_edge
// The loop over the lower edge, first: its scores,
// DEFAULT: scf.for %{{.*}} = %{{[0-9]+}} to %{{[0-9]+}} step %c1 {
// DEFAULT-NOT: scf.for
// DEFAULT: scf.for %[[C0:.*]] = %c0 to %c64 step %c16 {
// DEFAULT-NEXT: scf.for %[[I0:.*]] = %c0 to %c64 step %c16 {
// DEFAULT: %[[LASTKEY:.*]] = arith.addi %[[C0]], %c15 : index
// DEFAULT: %[[NEEDED:.*]] = arith.cmpi sle, %[[I0]], %[[LASTKEY]] : index
// DEFAULT: scf.if %[[NEEDED]] {
// DEFAULT: %{{.*}}:16 = scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(
// and its P.V, from each block's first row.
// DEFAULT: %[[FIRST:.*]] = arith.maxsi %[[PI0:.*]], %c0 : index
// DEFAULT-NEXT: %{{.*}}:16 = scf.for %{{.*}} = %[[FIRST]] to %c64 step %c1 iter_args(
// DEFAULT: return
func.func @window_lower_edge(%q: tensor<1x1x256x16xf32>, %k: tensor<1x1x256x16xf32>) -> tensor<1x1x256x16xf32> {
  %o = attn.sdpa %q, %k, %k {window = array<i64: 64, 0>} : tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32> -> tensor<1x1x256x16xf32>
  return %o : tensor<1x1x256x16xf32>
}

// -----

// A left bound that is not a multiple of the block (48 keys): two blocks
// cross the lower edge; nothing tagged below.
// TILE-LABEL: func.func @window_unaligned_left
// TILE-NOT: attn.hidden_below
// TILE: return
func.func @window_unaligned_left(%q: tensor<1x1x256x16xf32>, %k: tensor<1x1x256x16xf32>) -> tensor<1x1x256x16xf32> {
  %o = attn.sdpa %q, %k, %k {window = array<i64: 48, 0>} : tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32>, tensor<1x1x256x16xf32> -> tensor<1x1x256x16xf32>
  return %o : tensor<1x1x256x16xf32>
}
