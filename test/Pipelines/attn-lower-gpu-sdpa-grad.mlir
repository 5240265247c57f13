// attn.sdpa_grad on the GPU pipelines: attn-lower-gpu lowers the f16/bf16
// backward (convert-attn-to-gpu) and refuses, on the op and in one line, what
// its kernels do not take (f32, a mask, head dims past 128); the naive GPU
// pipeline rejects the op before anything else runs.
// RUN: not attn-opt %s --attn-lower-naive-gpu 2>&1 | FileCheck %s --check-prefix=NAIVE
// RUN: not attn-opt %s --attn-reject-sdpa-grad 2>&1 | FileCheck %s --check-prefix=NAIVE
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu 2>&1 | FileCheck %s --check-prefix=FUSED

// NAIVE: error: 'attn.sdpa_grad' op has no naive GPU lowering: the backward pass runs on attn-lower-gpu (f16/bf16) and the CPU pipelines (attn-lower-cpu, attn-lower-naive-cpu)
// FUSED: error: 'attn.sdpa_grad' op convert-attn-to-gpu: the GPU backward takes f16 and bf16 (tensor cores), got 'f32' (f32 attn.sdpa_grad runs on the CPU pipelines)
func.func @grad_f32(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %o: tensor<1x2x8x16xf32>, %lse: tensor<1x2x8xf32>, %do: tensor<1x2x8x16xf32>) -> (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
  return %dq, %dk, %dv : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
}

// -----

// FUSED: error: 'attn.sdpa_grad' op convert-attn-to-gpu: the GPU backward takes no mask yet (attn.sdpa_grad with a mask runs on the CPU pipelines)
func.func @grad_mask(%q: tensor<1x2x8x64xf16>, %k: tensor<1x2x8x64xf16>, %v: tensor<1x2x8x64xf16>, %o: tensor<1x2x8x64xf16>, %lse: tensor<1x2x8xf32>, %do: tensor<1x2x8x64xf16>, %m: tensor<1x1x8x8xi1>) -> (tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do mask(%m) : tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8xf32>, tensor<1x2x8x64xf16>, tensor<1x1x8x8xi1> -> tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>
  return %dq, %dk, %dv : tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>, tensor<1x2x8x64xf16>
}

// -----

// FUSED: error: 'attn.sdpa_grad' op convert-attn-to-gpu: head dim D (256) is not supported by the GPU backward: expected 32, 64, 80, 96 or 128
func.func @grad_d256(%q: tensor<1x2x8x256xbf16>, %k: tensor<1x2x8x256xbf16>, %v: tensor<1x2x8x256xbf16>, %o: tensor<1x2x8x256xbf16>, %lse: tensor<1x2x8xf32>, %do: tensor<1x2x8x256xbf16>) -> (tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>) {
  %dq, %dk, %dv = attn.sdpa_grad %q, %k, %v, %o, %lse, %do : tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8xf32>, tensor<1x2x8x256xbf16> -> tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>
  return %dq, %dk, %dv : tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>, tensor<1x2x8x256xbf16>
}
