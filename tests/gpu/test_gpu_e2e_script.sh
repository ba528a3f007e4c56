#!/usr/bin/env bash
# bench/gpu.sh's end-to-end part, run with the host emulation (no GPU
# needed) on a small tensor: every codec's job finishes on both paths and
# the JSON names ten jobs with their rounds' times. It guards the script
# the GPU machine runs; the times here say nothing of a GPU's.
set -u
apps=$1 script=$2
out=$(GW_E2E_ONLY=1 GW_E2E_EXEC=emu GW_E2E_DIM=50000 timeout 240 bash "$script" "$apps") || {
  echo "FAIL: bench/gpu.sh exit $?"; echo "$out"; exit 1; }
echo "$out"
if echo "$out" | grep -q '"error"'; then echo "FAIL: a job failed"; exit 1; fi
jobs=$(echo "$out" | grep -o '"seconds":\[[0-9.,]*\]' | wc -l)
[ "$jobs" -eq 10 ] || { echo "FAIL: $jobs of 10 jobs reported rounds"; exit 1; }
echo "ok: 5 codecs x (emu, cpu) end to end"
