// narrow-lowp-max-d: narrow-block-q reaches ops with bf16 or f16 values up
// to that D and Dv (the amx kernels' path sets 256); f32 keeps 64. The
// query tile's [D, block-q] shape shows the block.
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128 narrow-lowp-max-d=256" --attn-tile-online-softmax="row-multiple=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-cpu-plan-tiling="narrow-block-q=128" --attn-tile-online-softmax="row-multiple=16" | FileCheck %s --check-prefix=DEFAULT
// The CPU pipeline on the amx kernels sets it.
// RUN: attn-opt %s -split-input-file --attn-lower-cpu="kernels=amx" --mlir-print-ir-after=attn-tile-online-softmax 2>&1 >/dev/null | FileCheck %s --check-prefix=AMX

// CHECK-LABEL: func.func @bf16_d128
// CHECK: outs(%{{.*}} : tensor<128x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// DEFAULT-LABEL: func.func @bf16_d128
// DEFAULT: outs(%{{.*}} : tensor<128x64xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// AMX-LABEL: func.func @bf16_d128
// AMX: outs(%{{.*}} : tensor<128x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
func.func @bf16_d128(%q: tensor<1x2x512x128xbf16>) -> tensor<1x2x512x128xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16> -> tensor<1x2x512x128xbf16>
  return %o : tensor<1x2x512x128xbf16>
}

// -----

// D = 512 is past it: block-q's 64 rows.
// CHECK-LABEL: func.func @bf16_d512
// CHECK: outs(%{{.*}} : tensor<512x64xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// AMX-LABEL: func.func @bf16_d512
// AMX: outs(%{{.*}} : tensor<512x64xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
func.func @bf16_d512(%q: tensor<1x2x512x512xbf16>) -> tensor<1x2x512x512xbf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x512xbf16>, tensor<1x2x512x512xbf16>, tensor<1x2x512x512xbf16> -> tensor<1x2x512x512xbf16>
  return %o : tensor<1x2x512x512xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_d128
// CHECK: outs(%{{.*}} : tensor<128x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// AMX-LABEL: func.func @f16_d128
// AMX: outs(%{{.*}} : tensor<128x128xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
func.func @f16_d128(%q: tensor<1x2x512x128xf16>) -> tensor<1x2x512x128xf16> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16> -> tensor<1x2x512x128xf16>
  return %o : tensor<1x2x512x128xf16>
}

// -----

// CHECK-LABEL: func.func @f32_d128
// CHECK: outs(%{{.*}} : tensor<128x64xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
// AMX-LABEL: func.func @f32_d128
// AMX: outs(%{{.*}} : tensor<128x64xf32>) attrs = {attn.tile = #attn.tile<scale_query>}
func.func @f32_d128(%q: tensor<1x2x512x128xf32>) -> tensor<1x2x512x128xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x2x512x128xf32>, tensor<1x2x512x128xf32>, tensor<1x2x512x128xf32> -> tensor<1x2x512x128xf32>
  return %o : tensor<1x2x512x128xf32>
}
