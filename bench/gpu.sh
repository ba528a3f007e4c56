#!/usr/bin/env bash
# gpudirect's kernels against device memcpy and the CPU codecs, on a GPU
# machine: gpu_bench at 16M and 256M floats (the cnn traces tiled), frames
# into device memory and into mapped pinned host memory (a NIC's packet
# buffers), and gw-bench codec on the same machine's CPU for the same
# codecs; then end to end: a device tensor encoded by the kernels into
# UDP packet memory, over loopback to a shard, the results decoded into a
# device tensor (gw-allreduce --gpu cuda, W = 2, one shard, 16M floats, the
# same gradient every round), beside the CPU path of the same job. One
# JSON object on stdout.
#
#   bench/gpu.sh DIR      DIR holds gpu_bench, gw-bench, gw-launch,
#                         gw-allreduce, gw-aggregator and traces/ (what
#                         scripts/gpu-check.sh pack makes)
#   GW_E2E_ONLY=1 GW_E2E_EXEC=emu bench/gpu.sh DIR
#                         only the end-to-end part, with the host
#                         emulation: how the script is checked without a GPU
#                         (its times say nothing of a GPU's)
#
# Exit 77 without a GPU, 2 on a bad command line.
set -uo pipefail
dir=${1:-}
exec_dev=${GW_E2E_EXEC:-cuda}
e2e_dim=${GW_E2E_DIM:-16777216}
[ -n "$dir" ] && [ -x "$dir/gw-allreduce" ] || { echo "usage: bench/gpu.sh DIR (with DIR/gw-allreduce)" >&2; exit 2; }

# One job, rank 0's rounds after the first: {"codec", "path", seconds[]}.
e2e_job() {  # codec path
  local logs rc secs
  logs=$(mktemp -d /tmp/gw-gpu-e2e.XXXXXX)
  local gpu=()
  [ "$2" = cpu ] || gpu=(--gpu "$2")
  "$dir/gw-launch" --link udp --quiet --logs "$logs" --timeout 600 --idle-exit 30000 \
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
for elems in 16777216 268435456; do
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
cat "$dir"/traces/cnn/it*_*.f32 > "$dir/cnn_all.f32"
: > "$dir/cnn_16m.f32"
while [ "$(stat -c %s "$dir/cnn_16m.f32")" -lt 67108864 ]; do cat "$dir/cnn_all.f32" >> "$dir/cnn_16m.f32"; done
truncate -s 67108864 "$dir/cnn_16m.f32"
for c in raw bf16 int8 3lc; do
  cpu+=("$("$dir/gw-bench" codec --codec "$c" --input "$dir/cnn_16m.f32" --mtu 9000 --json 2>/dev/null || echo '{"error":"gw-bench failed"}')")
done
rm -f "$dir/cnn_all.f32" "$dir/cnn_16m.f32"
printf '{"tool":"bench/gpu.sh","gpu":[%s],"cpu":[%s],"e2e":[%s]}\n' "$(IFS=,; echo "${runs[*]}")" \
  "$(IFS=,; echo "${cpu[*]}")" "$(IFS=,; echo "${e2e[*]}")"
