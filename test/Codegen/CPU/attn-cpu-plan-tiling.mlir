// attn-cpu-plan-tiling alone: the plan each attn.sdpa gets, as its
// attn.tiling. Block sizes only for narrow heads (D, Dv <= 64, or up to
// narrow-lowp-max-d with bf16/f16 values; no band; not a mask with grouped
// heads), 128-key blocks only with bf16 values and D or Dv above 64; the
// layouts on every op. An op with nothing to plan gets no attribute.
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128 narrow-lowp-max-d=256 wide-block-kv=128 transpose-values=true split-f16=true" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="pair-values=true f16-tiles=true" | FileCheck %s --check-prefix=FLAGS

// CHECK-LABEL: func.func @narrow
// CHECK: attn.sdpa {{.*}} {attn.tiling = {block_q = 128 : i64, split_f16, transpose_values}}
// NONE-LABEL: func.func @narrow
// NONE-NOT: attn.tiling
// FLAGS-LABEL: func.func @narrow
// FLAGS: attn.sdpa {{.*}} {attn.tiling = {f16_tiles, pair_values}}
func.func @narrow(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                  %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
        tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// -----

// bf16, D = 128 (<= narrow-lowp-max-d): narrow rows and wide key blocks.
// CHECK-LABEL: func.func @bf16_d128
// CHECK: attn.tiling = {block_kv = 128 : i64, block_q = 128 : i64, split_f16, transpose_values}
func.func @bf16_d128(%q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>,
                     %v: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>,
        tensor<1x2x256x128xbf16> -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// -----

// f32, D = 128: above 64, the tiling's own blocks; the layouts only.
// CHECK-LABEL: func.func @f32_d128
// CHECK: attn.tiling = {split_f16, transpose_values}
func.func @f32_d128(%q: tensor<1x2x256x128xf32>, %k: tensor<1x2x256x128xf32>,
                    %v: tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32> {
  %o = attn.sdpa %q, %k, %v
      : tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>,
        tensor<1x2x256x128xf32> -> tensor<1x2x256x128xf32>
  return %o : tensor<1x2x256x128xf32>
}

// -----

// A causal band: the tiling's own blocks (larger ones would compute more of
// what the band skips).
// CHECK-LABEL: func.func @causal
// CHECK: attn.tiling = {split_f16, transpose_values}
func.func @causal(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>,
                  %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %o = attn.sdpa %q, %k, %v {causal = #attn.causal<top_left>}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>,
        tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}
