#!/usr/bin/env bash
# One device call of the GPU check (docs/gpu-check.md), run ON the GPU machine
# from the repository root, beside the bundle that scripts/gpu-check.sh built:
#
# Usage: bash scripts/gpu-device-run.sh OUT_DIR [BUNDLE_DIR]
#
# It records the machine (nvidia-smi, torch, numpy) in env.txt, runs the
# supervised check + speed + tune grid (each case in a worker process; cases
# not begun after $DEADLINE seconds, default 230, are reported as not run),
# then a short compute-sanitizer memcheck of tail, mask and decode cases
# ($MEMCHECK_S seconds at most, default 70; torch's caching allocator off so
# that each tensor is its own allocation), and prints the lines of table.md
# that are not PASS rows ($PYTHON, default python3: the one with torch).
# $MATCH, a regular expression, runs only the cases whose name it matches
# (gpu_check.py run --match), e.g. the sm_90a rows and their baselines:
#   MATCH='wgmma|^(bf16|f16)-d(64|128)-(none|bottom_right)$'.
# Files in OUT_DIR: env.txt, log.txt, memcheck.txt,
# progress.jsonl, workers.log, checks.csv, speed.csv, table.md.
case "${1:-}" in -h | --help)
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"
  exit 0 ;;
esac
set -u
OUT="${1:?usage: gpu-device-run.sh OUT_DIR [BUNDLE_DIR]}"
BUNDLE="${2:-.gpu-bundle}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ date; nvidia-smi; nproc
  "${PYTHON:-python3}" -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, torch.cuda.get_device_name(), torch.cuda.get_device_properties(0))"
} > "$OUT/env.txt" 2>&1
T0=$(date +%s)
"${PYTHON:-python3}" "$BUNDLE/gpu_check.py" run --bundle "$BUNDLE" --out "$OUT" \
  --deadline-s "${DEADLINE:-230}" --case-timeout-s 40 ${MATCH:+--match "$MATCH"} \
  > "$OUT/log.txt" 2>&1
rc=$?
echo "main run: rc=$rc in $(( $(date +%s) - T0 )) s"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
T1=$(date +%s)
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "${MEMCHECK_S:-70}" "$CS" --tool memcheck \
  --print-limit 10 "${PYTHON:-python3}" "$BUNDLE/gpu_check.py" run --bundle "$BUNDLE" \
  --out /tmp/attn-memcheck --no-isolate --no-speed --only \
  f16-d64-causal-br-tails decode-f16-variants decode-bf16-gqa-dynamic \
  decode-f16-empty-rows bf16-key-lengths-causal-br decode-bf16-causal-br-mask \
  > "$OUT/memcheck.txt" 2>&1
echo "memcheck: rc=$? in $(( $(date +%s) - T1 )) s"
grep "ERROR SUMMARY\|passed,\|Invalid" "$OUT/memcheck.txt" | head -5
grep -v "| PASS |" "$OUT/table.md" | tail -c 9500
exit $rc
