// Every chip and format the GPU pipelines accept, on one small case: the
// target attribute carries the chip, the chip's PTX features (or the ones
// given) and the opt level; the binary is a cubin (bin), a fatbin or PTX text
// (isa).
//
// REQUIRES: cuda-toolkit
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_80 format=bin" | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_86" | FileCheck %s --check-prefix=SM86
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_89 format=isa" | FileCheck %s --check-prefix=SM89
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-lower-naive-gpu="chip=sm_90a format=bin opt-level=2 features=+ptx85" | FileCheck %s --check-prefix=SM90A

// SM80:  gpu.binary @f_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">, {{.*}}bin = "\7FELF
// SM86:  gpu.binary @f_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_86", features = "+ptx71">, {{.*}}"
// SM89:  gpu.binary @f_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_89", features = "+ptx78">, {{.*}}assembly = "{{.*}}.version 7.8\0A.target sm_89
// SM90:  gpu.binary @f_kernel  [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}"
// SM90A: gpu.binary @f_kernel  [#gpu.object<#nvvm.target<chip = "sm_90a", features = "+ptx85">, {{.*}}bin = "\7FELF
func.func @f(%q: tensor<1x2x40x32xf16>, %k: tensor<1x2x40x32xf16>, %v: tensor<1x2x40x32xf16>) -> tensor<1x2x40x32xf16> {
  %o = attn.sdpa %q, %k, %v : tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16>, tensor<1x2x40x32xf16> -> tensor<1x2x40x32xf16>
  return %o : tensor<1x2x40x32xf16>
}
