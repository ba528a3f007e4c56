#!/usr/bin/env bash
# gpudirect's kernels against device memcpy and the CPU codecs, on a GPU
# machine: gpu_bench at each size of GW_GPU_ELEMS (default 16M and 256M
# floats, the cnn traces tiled), frames into device memory and into mapped
# pinned host memory (a NIC's packet buffers), and gw-bench codec on the
# same machine's CPU for the same codecs (16M floats); then end to end: a
# device tensor encoded by the kernels into UDP packet memory, over
# loopback to a shard, the results decoded into a device tensor
# (gw-allreduce --gpu cuda, W = 2, one shard, GW_E2E_DIM floats, default
# 16M, the same gradient every round), beside the CPU path of the same job.
# One JSON object on stdout.
#
#   bench/gpu.sh DIR      DIR holds gpu_bench, gw-bench, gw-launch,
#                         gw-allreduce, gw-aggregator and traces/ (what
#                         scripts/gpu-check.sh pack makes)
#   GW_E2E_ONLY=1 GW_E2E_EXEC=emu bench/gpu.sh DIR
#                         only the end-to-end part, with the host
#                         emulation: how the script is checked without a GPU
#                         (its times say nothing of a GPU's)
#
# Env: GW_GPU_ELEMS (gpu_bench's sizes, space-separated; scripts/gpu-check.sh
# uses 16777216 only), GW_E2E_DIM, GW_E2E_EXEC (cuda), GW_E2E_ONLY,
# GW_E2E_TIMEOUT (seconds one end-to-end job may take, default 600).
# Exit 77 without a GPU, 2 on a bad command line.
set -uo pipefail
dir=${1:-}
exec_dev=${GW_E2E_EXEC:-cuda}
e2e_dim=${GW_E2E_DIM:-16777216}
e2e_timeout=${GW_E2E_TIMEOUT:-600}
elems_list=${GW_GPU_ELEMS:-16777216 268435456}
if [ -z "$dir" ] || [ ! -x "$dir/gw-allreduce" ]; then
  echo "usage: bench/gpu.sh DIR (with DIR/gw-allreduce)" >&2; exit 2
fi
for v in "$e2e_dim" "$e2e_timeout" $elems_list; do
  case $v in ''|*[!0-9]*) echo "bench/gpu.sh: '$v' is not a number (GW_E2E_DIM, GW_E2E_TIMEOUT, GW_GPU_ELEMS)" >&2; exit 2 ;; esac
done
[ -n "${elems_list// /}" ] || { echo "bench/gpu.sh: GW_GPU_ELEMS is empty" >&2; exit 2; }

# One job, rank 0's rounds after the first: {"codec", "path", seconds[]}.
e2e_job() {  # codec path
  local logs rc secs
  logs=$(mktemp -d /tmp/gw-gpu-e2e.XXXXXX)
  local gpu=()
  [ "$2" = cpu ] || gpu=(--gpu "$2")
  "$dir/gw-launch" --link udp --quiet --logs "$logs" --timeout "$e2e_timeout" --idle-exit 30000 \
    --workers 2 --dim "$e2e_dim" --up "$1" --down "$1" -- "$dir/gw-allreduce" \
    --rounds 6 --no-verify --same-grad --json "${gpu[@]}" >/dev/null 2>&1
  rc=$?
  secs=$(sed -n 's/.*"round":\([1-9][0-9]*\),.*"seconds":\([0-9.]*\).*/\2/p' "$logs/w.0.out" 2>/dev/null |
         paste -sd, -)
  if [ "$rc" -eq 0 ] && [ -n "$secs" ]; then
    printf '{"codec":"%s","path":"%s","workers":2,"dim":%s,"seconds":[%s]}' "$1" "$2" "$e2e_dim" "$secs"
  else
    printf '{"codec":"%s","path":"%s","error":"gw-launch exit %s: %s"}' "$1" "$2" "$rc" \
      "$(head -c 300 "$logs"/w.0.err 2>/dev/null | tr '\n"' ' _')"
  fi
  rm -rf "$logs"
}
e2e=()
for c in raw bf16 int8 3lc topk; do
  for path in "$exec_dev" cpu; do
    e2e+=("$(e2e_job "$c" "$path")")
  done
done
if [ "${GW_E2E_ONLY:-0}" = 1 ]; then
  printf '{"tool":"bench/gpu.sh","exec":"%s","e2e":[%s]}\n' "$exec_dev" "$(IFS=,; echo "${e2e[*]}")"
  exit 0
fi
[ -x "$dir/gpu_bench" ] || { echo "bench/gpu.sh: no $dir/gpu_bench" >&2; exit 2; }
runs=()
# shellcheck disable=SC2086  # a list of numbers, checked above
for elems in $elems_list; do
  for slots in device host; do
    args=(--traces "$dir/traces" --elems "$elems" --budget 8924 --reps 10)
    [ "$slots" = host ] && args+=(--host-slots)
    out=$("$dir/gpu_bench" "${args[@]}"); rc=$?
    [ "$rc" -eq 77 ] && { echo "$out"; exit 77; }
    [ "$rc" -eq 0 ] || out="{\"error\":\"gpu_bench exit $rc\",\"elems\":$elems,\"slots\":\"$slots\"}"
    runs+=("$out")
  done
done
cpu=()
# The CPU's figure on the same 16M floats: the traces tiled into a file.
# (A bounded loop: each pass adds the whole of cnn_all.f32, at least 4 bytes.)
tile=$(mktemp -d /tmp/gw-gpu-cpu.XXXXXX)
cat "$dir"/traces/cnn/it*_*.f32 > "$tile/cnn_all.f32" 2>/dev/null
all=$(stat -c %s "$tile/cnn_all.f32")
: > "$tile/cnn_16m.f32"
if [ "$all" -ge 4 ]; then
  for ((i = 0; i <= 67108864 / all; i++)); do cat "$tile/cnn_all.f32" >> "$tile/cnn_16m.f32"; done
  truncate -s 67108864 "$tile/cnn_16m.f32"
  for c in raw bf16 int8 3lc; do
    cpu+=("$("$dir/gw-bench" codec --codec "$c" --input "$tile/cnn_16m.f32" --mtu 9000 --json 2>/dev/null || echo '{"error":"gw-bench failed"}')")
  done
else
  cpu+=('{"error":"no cnn traces under DIR/traces"}')
fi
rm -rf "$tile"
printf '{"tool":"bench/gpu.sh","gpu":[%s],"cpu":[%s],"e2e":[%s]}\n' "$(IFS=,; echo "${runs[*]}")" \
  "$(IFS=,; echo "${cpu[*]}")" "$(IFS=,; echo "${e2e[*]}")"
