#!/usr/bin/env bash
# SketchML on the real sparse traces (../shared/data/grads/logreg_spam,
# three iterations of the logistic-regression weight gradient): bytes per
# entry and per key, size against 8-byte (u32 key + float32) and 12-byte
# (u64 key + float32) pairs, error of one round, encode/decode speed
# against memcpy — at the paper's defaults (q 256, r 8, s 2, t = n/5) for
# three frame sizes, and at r = 4. raw and topk rows for reference.
# Usage: bench/sketchml.sh [BUILD_DIR] [--json]
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json" "$@"
bench=$build/apps/gw-bench
bench_need "$bench"
bench_traces logreg_spam

run() {  # trace, label, mtu, args...
  local it=$1 label=$2 mtu=$3; shift 3
  local k=$traces/logreg_spam/${it}_weight.keys.u32 v=$traces/logreg_spam/${it}_weight.vals.f32
  local out
  out=$("$bench" codec --keys "$k" --values "$v" --mtu "$mtu" --min-time 0.3 --json "$@")
  if [ $json = 1 ]; then
    sed "s/^{/{\"input\": \"spam-$it\", \"setting\": \"$label\", \"mtu\": $mtu, /" <<<"$out"
  else
    python3 -c '
import json,sys
r=json.loads(sys.argv[4])
kb=r.get("key_bytes_per_key")
print("%-12s %-14s %6s %8d %9.4f %8s %8.2f %8.2f %8.4f %8.3f %8.3f %8.4f %8.4f" % (sys.argv[1], sys.argv[2],
  sys.argv[3], r["elements"], r["bytes_per_entry"], "%.4f" % kb if kb is not None else "-",
  r["vs_pairs8"], r["vs_pairs12"], r["rel_l2_err"], r["encode_gbps"], r["decode_gbps"],
  r["encode_vs_memcpy"], r["decode_vs_memcpy"]))' "spam-$it" "$label" "$mtu" "$out"
  fi
}

[ $json = 1 ] || printf '%-12s %-14s %6s %8s %9s %8s %8s %8s %8s %8s %8s %8s %8s\n' \
  input setting mtu entries B/entry keyB/key vs8B vs12B rel_l2 enc_GB/s dec_GB/s enc/mcp dec/mcp
for it in it001 it010 it050; do
  for mtu in 1500 9000 65535; do
    run $it "sketchml" $mtu --codec sketchml
  done
  run $it "sketchml r=4" 1500 --codec sketchml --param groups=4
  run $it "topk 1%" 1500 --codec topk
  run $it "raw" 1500 --codec raw
done
