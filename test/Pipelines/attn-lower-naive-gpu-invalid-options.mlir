// GPU pipeline options the pipelines do not support are rejected when the
// pipeline is built, under the pipeline's name, with the values accepted.
// RUN: not attn-opt %s --attn-lower-naive-gpu="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not attn-opt %s --attn-lower-naive-gpu="chip=sm_100" 2>&1 | FileCheck %s --check-prefix=CHIP100
// RUN: not attn-opt %s --attn-lower-naive-gpu="format=elf" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not attn-opt %s --attn-lower-naive-gpu="opt-level=4" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not attn-opt %s --attn-lower-gpu-tail="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=TAIL

// CHIP: error: attn-lower-naive-gpu: chip 'sm_75' is not supported (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)
// CHIP100: error: attn-lower-naive-gpu: chip 'sm_100' is not supported (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)
// FORMAT: error: attn-lower-naive-gpu: format 'elf' is not supported (expected one of fatbin, bin, isa)
// OPT: error: attn-lower-naive-gpu: opt-level 4 is not supported (expected 0 to 3)
// TAIL: error: attn-lower-gpu-tail: chip 'gfx90a' is not supported (expected one of sm_80, sm_86, sm_89, sm_90, sm_90a)
func.func @f(%q: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %o = attn.sdpa %q, %q, %q : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
  return %o : tensor<1x1x32x16xf32>
}
