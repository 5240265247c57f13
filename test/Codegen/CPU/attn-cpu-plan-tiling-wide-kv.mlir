// wide-block-kv: an op with bf16 values and D or Dv above 64 that takes
// narrow-block-q gets key blocks of this many keys instead of block-kv (the
// score tile is [keys, rows]); everything else keeps block-kv.
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128 narrow-lowp-max-d=256 wide-block-kv=128" --attn-tile-online-softmax="row-multiple=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128 narrow-lowp-max-d=256" --attn-tile-online-softmax="row-multiple=16" | FileCheck %s --check-prefix=OFF
// The CPU pipeline sets it on the amx kernels, unless block-kv is given.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=amx" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=avx512" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=NOAMX
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=amx block-kv=64" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=NOAMX
// RUN: not attn-opt %s -split-input-file --attn-cpu-plan-tiling="wide-block-kv=-1" --attn-tile-online-softmax 2>&1 | FileCheck %s --check-prefix=NEG

// NEG: error: attn-cpu-plan-tiling: wide-block-kv (-1) must be >= 0

// bf16, d = 128: 128 keys a block.
// CHECK-LABEL: func.func @bf16_d128
// CHECK: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<128x128xf32>
// OFF-LABEL: func.func @bf16_d128
// OFF: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<64x128xf32>
// NOAMX-LABEL: func.func @bf16_d128
// NOAMX: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<64x
func.func @bf16_d128(%q: tensor<1x2x512x128xbf16>) -> tensor<1x2x512x128xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16> -> tensor<1x2x512x128xbf16>
  return %o : tensor<1x2x512x128xbf16>
}

// -----

// Dv = 128 alone is enough.
// CHECK-LABEL: func.func @bf16_dv128
// CHECK: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<128x128xf32>
func.func @bf16_dv128(%q: tensor<1x2x512x64xbf16>, %v: tensor<1x2x512x128xbf16>) -> tensor<1x2x512x128xbf16> {
  %o = attn.sdpa %q, %q, %v : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x128xbf16> -> tensor<1x2x512x128xbf16>
  return %o : tensor<1x2x512x128xbf16>
}

// -----

// bf16 at d = 64: block-kv's 64 (128-key blocks were slower there).
// CHECK-LABEL: func.func @bf16_d64
// CHECK: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<64x128xf32>
func.func @bf16_d64(%q: tensor<1x2x512x64xbf16>) -> tensor<1x2x512x64xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16> -> tensor<1x2x512x64xbf16>
  return %o : tensor<1x2x512x64xbf16>
}

// -----

// f16 (split into bf16 parts on AMX without AMX-FP16, no gain) and f32 keep
// block-kv.
// CHECK-LABEL: func.func @f16_d128
// CHECK: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<64x128xf32>
func.func @f16_d128(%q: tensor<1x2x512x128xf16>) -> tensor<1x2x512x128xf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16> -> tensor<1x2x512x128xf16>
  return %o : tensor<1x2x512x128xf16>
}

// -----

// A causal band keeps block-q's rows and so block-kv's keys.
// CHECK-LABEL: func.func @bf16_d128_causal
// CHECK: linalg.fill {attn.tile = #attn.tile<init_scores>} {{.*}} -> tensor<64x64xf32>
func.func @bf16_d128_causal(%q: tensor<1x2x512x128xbf16>) -> tensor<1x2x512x128xbf16> {
  %o = attn.sdpa %q, %q, %q {causal = #attn.causal<top_left>} : tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16> -> tensor<1x2x512x128xbf16>
  return %o : tensor<1x2x512x128xbf16>
}
