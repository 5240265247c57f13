#!/usr/bin/env bash
# Builds attn (scripts/setup.sh), installs what the benchmark needs into
# python3 (PyTorch, ggml-python, NumPy, Matplotlib from PyPI), then runs
# bench/run.py.
#
# Usage: bash scripts/bench.sh [bench/run.py options]   e.g. --quick, --out DIR
# (bench/run.py's options: python3 bench/run.py --help)
#
# attn-run: --attn-run PATH, else $ATTN_RUN, else build/bin/attn-run (under
# $ATTN_BUILD_DIR when set). ATTN_BENCH_SKIP_SETUP=1 skips the build;
# --no-torch skips installing and running PyTorch, --no-ggml ggml.
#
# PyPI has no CPU-only torch for Linux x86_64: its wheel is built with CUDA
# and needs the nvidia-* runtime wheels to import at all (~3.0 GB of
# downloads in all for torch 2.15.0; the torch wheel itself is 539 MB).
# The benchmark uses only its CPU kernels.
#
# ggml (the peer bench/ggml_peer.py drives: ggml_flash_attn_ext) comes from
# PyPI's ggml-python, a source package that vendors ggml and builds libggml
# with CMake at install time (-march=native, so the library uses this CPU's
# AVX-512/F16C; a few minutes on two cores). Nothing else needs it: the suite's
# test of the peer (python/tests/test_bench_ggml.py) skips without it.
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
PY="${PYTHON:-python3}"
TORCH_REQ="${ATTN_BENCH_TORCH:-torch==2.15.0}"
GGML_REQ="${ATTN_BENCH_GGML:-ggml-python==0.0.45}"

if [ "${ATTN_BENCH_SKIP_SETUP:-0}" != 1 ]; then
  bash "$ROOT/scripts/setup.sh"
fi

want_torch=1
want_ggml=1
has_attn_run=0
for a in "$@"; do
  case "$a" in
    --no-torch) want_torch=0 ;;
    --no-ggml) want_ggml=0 ;;
    --attn-run|--attn-run=*) has_attn_run=1 ;;
  esac
done

pkgs=()
"$PY" -c 'import numpy' 2>/dev/null || pkgs+=(numpy)
"$PY" -c 'import matplotlib' 2>/dev/null || pkgs+=(matplotlib)
if [ "$want_torch" = 1 ]; then
  "$PY" -c 'import torch' 2>/dev/null || pkgs+=("$TORCH_REQ")
fi
if [ "$want_ggml" = 1 ]; then
  "$PY" -c 'import ggml' 2>/dev/null || pkgs+=("$GGML_REQ")
fi
if [ ${#pkgs[@]} -gt 0 ]; then
  echo "bench: pip installing ${pkgs[*]} into $("$PY" -c 'import sys; print(sys.prefix)')"
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
    "$PY" -m pip install --quiet "${pkgs[@]}"
fi
if [ "$want_ggml" = 1 ]; then
  # ggml's flash_attn_ext must compute the right answer before it is timed.
  "$PY" "$ROOT/bench/ggml_peer.py"
fi
if [ "$want_torch" = 1 ]; then
  # PyTorch must run SDPA on the CPU; say which version and backend.
  "$PY" - <<'EOF'
import torch
import torch.nn.functional as F
q = torch.randn(1, 2, 64, 64)
o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
assert o.shape == q.shape and bool(torch.isfinite(o).all())
print(f"bench: torch {torch.__version__}, SDPA on CPU works "
      f"({torch.backends.cpu.get_cpu_capability()}, "
      f"{torch.__config__.parallel_info().splitlines()[-1].strip()})")
EOF
fi

if [ "$has_attn_run" = 0 ]; then
  export ATTN_RUN="${ATTN_RUN:-$BUILD/bin/attn-run}"
fi
status=0
"$PY" "$ROOT/bench/run.py" "$@" || status=$?
# The backward rows (bench/backward.py: attn.sdpa_grad against PyTorch's
# SDPA backward, L=4096, one thread, % of peak); ATTN_BENCH_BACKWARD=0 skips.
if [ "${ATTN_BENCH_BACKWARD:-1}" = 1 ]; then
  backward_args=()
  [ "$want_torch" = 0 ] && backward_args+=(--no-torch)
  "$PY" "$ROOT/bench/backward.py" "${backward_args[@]}" || status=1
fi
exit "$status"
