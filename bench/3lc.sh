#!/usr/bin/env bash
# 3LC against its baselines and zstd on the real CNN traces: bits per value
# and encode/decode GB/s (one core, error feedback on) next to memcpy of the
# same bytes measured in the same run, at s in {1.00, 1.50, 1.75, 1.90}.
# Usage: bench/3lc.sh [BUILD_DIR] [--json]    (table for docs/codecs.md)
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json" "$@"
bench_codec_inputs

row() {  # label args...
  local label=$1; shift
  local out
  out=$("$bench" codec "$@" --min-time 0.5 --json)
  if [ $json = 1 ]; then
    echo "$out" | sed "s/^{/{\"input\": \"$label\", /"
  else
    echo "$out" | python3 -c '
import json,sys
r=json.load(sys.stdin); a=sys.argv
print("| %s | %s | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f | %.3g |" % (a[1], a[2].replace("--codec ","").replace("--param ","").split(" --")[0], r["bits_per_value"], r["ef_bits_per_value"],
  r["encode_gbps"], r["decode_gbps"], r["memcpy_gbps"], r["encode_vs_memcpy"], r["decode_vs_memcpy"], r["rel_l2_err"]))' "$label" "$*"
  fi
}

[ $json = 1 ] || { echo "| input | codec | bits/value (1st round) | bits/value (feedback, steady) | encode GB/s | decode GB/s | memcpy GB/s | enc/memcpy | dec/memcpy | rel. L2 error (1st round) |"; echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"; }
for input in "cnn-it100:--input $dense" "synthetic-16M:--synthetic 16000000"; do
  label=${input%%:*}; args=${input#*:}
  for s in 1.00 1.50 1.75 1.90; do
    # shellcheck disable=SC2086
    row "$label" --codec 3lc --param sparsity=$s $args
  done
  for c in int8 terngrad onebit topk raw zstd; do
    # shellcheck disable=SC2086
    row "$label" --codec $c $args
  done
done
