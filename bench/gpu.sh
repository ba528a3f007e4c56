#!/usr/bin/env bash
# gpudirect's kernels against device memcpy and the CPU codecs, on a GPU
# machine: gpu_bench at 16M and 256M floats (the cnn traces tiled), frames
# into device memory and into mapped pinned host memory (a NIC's packet
# buffers), and gw-bench codec on the same machine's CPU for the same
# codecs. One JSON object on stdout.
#
#   bench/gpu.sh DIR      DIR holds gpu_bench, gw-bench and traces/ (what
#                         scripts/gpu-check.sh pack makes)
#
# Exit 77 without a GPU, 2 on a bad command line.
set -uo pipefail
dir=${1:-}
[ -n "$dir" ] && [ -x "$dir/gpu_bench" ] || { echo "usage: bench/gpu.sh DIR (with DIR/gpu_bench)" >&2; exit 2; }
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
printf '{"tool":"bench/gpu.sh","gpu":[%s],"cpu":[%s]}\n' "$(IFS=,; echo "${runs[*]}")" "$(IFS=,; echo "${cpu[*]}")"
