#!/usr/bin/env bash
# Writes the generated code of a fixed grid of attention problems into OUT:
# CPU libraries from attn-compile on every kernel path (f32, bf16, f16,
# decode, masks, variants, varlen, split-K, OpenMP, the naive oracle), CUDA
# libraries for sm_80 and sm_90, and attn-opt's LLVM-dialect / PTX output of
# the lit tests' pipeline inputs (the backward, the GPU kernels). Nothing is
# run. Two grids from two builds compared with `diff -r` (or cmp) show
# whether a change meant to be structural left the generated code byte for
# byte the same.
#
# Usage: bash scripts/codegen-grid.sh OUT [BUILD]   # BUILD: default build/
#   diff -rq OUT_BEFORE OUT_AFTER && echo identical
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || [ $# -lt 1 ]; then
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  [ $# -lt 1 ] && [ "${1:-}" != "-h" ] && [ "${1:-}" != "--help" ] && exit 2
  exit 0
fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$1"
BUILD="${2:-${ATTN_BUILD_DIR:-$ROOT/build}}"
AC="$BUILD/bin/attn-compile"
AO="$BUILD/bin/attn-opt"
for t in "$AC" "$AO"; do
  [ -x "$t" ] || { echo "codegen-grid: $t not found (build first)" >&2; exit 2; }
done
mkdir -p "$OUT"
n=0
# name | attn-compile flags (the spec after --sdpa)
cpu_grid=(
  "f32-avx512|--cpu=skylake-avx512 --kernels=avx512 --sdpa hq=4,lq=256,d=64"
  "f32-avx2|--cpu=x86-64-v3 --kernels=avx2 --sdpa hq=4,lq=256,d=64"
  "bf16-causal-avx512bf16|--cpu=znver4 --kernels=avx512-bf16 --sdpa hq=4,lq=256,d=128,dtype=bf16,causal=top_left"
  "bf16-widened-avx512|--cpu=skylake-avx512 --kernels=avx512 --sdpa hq=4,lq=256,d=128,dtype=bf16"
  "bf16-amx|--cpu=sapphirerapids --kernels=amx --sdpa hq=4,lq=256,d=128,dtype=bf16"
  "f16-amx-split|--cpu=sapphirerapids --kernels=amx --amx-fp16=false --sdpa hq=2,lq=128,d=64,dtype=f16"
  "f16-amx-tiles|--cpu=graniterapids --kernels=amx --amx-fp16=true --sdpa hq=2,lq=128,d=80,dtype=f16,causal=top_left"
  "bf16-amx-emulated|--cpu=znver4 --kernels=amx --emulate-amx --sdpa b=2,hq=4,hkv=2,lq=70,lk=90,d=64,dtype=bf16,causal=bottom_right,lse=1"
  "decode-f32-omp|--cpu=znver4 --openmp --sdpa hq=32,hkv=8,lq=1,lk=4096,d=128"
  "decode-bf16|--cpu=znver4 --sdpa hq=32,hkv=8,lq=1,lk=4096,d=128,dtype=bf16"
  "decode-f32-avx2|--cpu=x86-64-v3 --kernels=avx2 --sdpa hq=32,hkv=8,lq=1,lk=4096,d=128"
  "decode-bf16-amx|--cpu=sapphirerapids --kernels=amx --sdpa hq=32,hkv=8,lq=1,lk=4096,d=128,dtype=bf16"
  "decode-f16-avx512|--cpu=skylake-avx512 --kernels=avx512 --sdpa hq=8,hkv=1,lq=1,lk=2048,d=64,dtype=f16"
  "decode-split-k|--cpu=znver4 --openmp --kv-splits=4 --sdpa hq=8,hkv=1,lq=1,lk=8192,d=128"
  "mask-bool|--cpu=znver4 --sdpa hq=2,lq=100,lk=130,d=80,mask=bool"
  "mask-float-bcast|--cpu=znver4 --sdpa b=2,hq=2,lq=100,lk=130,d=80,mask=float,mask_shape=1x1x100x130"
  "window|--cpu=znver4 --sdpa hq=2,lq=512,d=64,window=64:0"
  "softcap-alibi|--cpu=znver4 --sdpa hq=4,lq=128,lk=160,d=64,softcap=30,alibi=h"
  "key-lengths-br|--cpu=znver4 --sdpa b=3,hq=2,lq=64,lk=200,d=64,key_lengths=1,causal=bottom_right"
  "dynamic-f16|--cpu=znver4 --sdpa hq=4,hkv=2,lq=96,lk=96,d=64,dtype=f16,dynamic=1,mask=float"
  "varlen|--cpu=znver4 --sdpa hq=4,hkv=2,d=64,seqlens_q=5/0/3,seqlens_k=2/4/6,causal=top_left"
  "omp-static|--cpu=znver4 --openmp --omp-schedule=static --sdpa hq=8,lq=512,d=64,causal=top_left"
  "narrow-off|--cpu=znver4 --narrow-block-q=0 --block-q=32 --block-kv=32 --sdpa hq=2,lq=100,d=48,dv=32"
  "naive-cpu|--cpu=znver4 --lowering=naive --sdpa hq=2,lq=64,lk=80,d=32,causal=top_left"
)
cuda_grid=(
  "cuda-sm80-f16|--target=cuda --chip=sm_80 --sdpa hq=4,lq=512,d=64,dtype=f16"
  "cuda-sm90-bf16-causal|--target=cuda --chip=sm_90 --sdpa hq=4,lq=512,d=128,dtype=bf16,causal=top_left"
  "cuda-sm90-decode|--target=cuda --chip=sm_90 --sdpa hq=32,hkv=8,lq=1,lk=4096,d=128,dtype=bf16"
  "cuda-sm80-variants|--target=cuda --chip=sm_80 --sdpa hq=2,lq=200,lk=300,d=64,dtype=f16,mask=bool,window=32:8,softcap=20"
  "cuda-sm90-naive|--target=cuda --chip=sm_90 --lowering=naive --sdpa hq=2,lq=64,d=64,dtype=f16"
)
run_compile() {
  local name="$1" flags="$2"
  # shellcheck disable=SC2086
  "$AC" $flags -o "$OUT/$name.so" >"$OUT/$name.log" 2>&1 ||
    { echo "codegen-grid: $name failed (see $OUT/$name.log)" >&2; exit 1; }
  # The JSON description names the library's own path: keep it apart.
  rm -f "$OUT/$name.log"
  n=$((n + 1))
}
for row in "${cpu_grid[@]}"; do run_compile "${row%%|*}" "${row#*|}"; done
if [ -x /usr/local/cuda/bin/ptxas ] || [ -n "${CUDA_HOME:-}" ]; then
  for row in "${cuda_grid[@]}"; do run_compile "${row%%|*}" "${row#*|}"; done
else
  echo "codegen-grid: no CUDA toolkit: the cuda rows are left out" >&2
fi
# attn-opt on the lit tests' inputs: the backward, the GPU kernels as PTX.
run_opt() {
  local name="$1" input="$2" pipeline="$3"
  "$AO" "$ROOT/$input" -split-input-file "$pipeline" -o "$OUT/$name.mlir" ||
    { echo "codegen-grid: $name failed" >&2; exit 1; }
  # The PTX carries how long LLVM took to make it: not generated code.
  sed -i -E 's/LLVMIRToISATimeInMs = [0-9]+/LLVMIRToISATimeInMs = 0/' \
    "$OUT/$name.mlir"
  n=$((n + 1))
}
run_opt grad-cpu test/Pipelines/attn-lower-cpu-sdpa-grad.mlir --attn-lower-cpu
run_opt decode-cpu test/Pipelines/attn-lower-cpu-decode.mlir --attn-lower-cpu
if [ -x /usr/local/cuda/bin/ptxas ] || [ -n "${CUDA_HOME:-}" ]; then
  run_opt ptx-sm80 test/Pipelines/attn-lower-gpu.mlir \
    '--attn-lower-gpu=chip=sm_80 format=isa'
  run_opt ptx-sm90 test/Pipelines/attn-lower-gpu.mlir \
    '--attn-lower-gpu=chip=sm_90 format=isa'
  run_opt ptx-sm90-decode test/Pipelines/attn-lower-gpu-decode.mlir \
    '--attn-lower-gpu=chip=sm_90 format=isa'
fi
echo "codegen-grid: $n artifacts in $OUT"
