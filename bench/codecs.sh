#!/usr/bin/env bash
# Every registered codec on the real gradient traces (../shared/data/grads):
# the dense CNN gradient of one iteration (all its tensors, concatenated),
# the sparse logistic-regression gradient, and a 16M-element synthetic
# tensor that does not fit in cache. One table per input, JSON lines with
# --json.
# Usage: bench/codecs.sh [BUILD_DIR] [--json] [--mtu N]
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
mtu=1500
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json mtu=" "$@"
bench_codec_inputs
codecs=$("$bench" codec --help | sed -n 's/.*a registered codec (\(.*\)), or zstd.*/\1/p' | tr -d ',' | tr ' ' '\n' | grep -vx countsketch | tr '\n' ' ')

run() {  # label, args...
  local label=$1; shift
  if [ $json = 1 ]; then
    "$bench" codec "$@" --mtu "$mtu" --min-time 0.3 --json | sed "s/^{/{\"input\": \"$label\", /"
  else
    "$bench" codec "$@" --mtu "$mtu" --min-time 0.3 --json | python3 -c '
import json,sys
r=json.load(sys.stdin)
print("%-10s %-10s %9d %7d %10d %8.3f %8.2f %8.2f %8.2f %10.3g %10.3g" % (sys.argv[1], r["codec"],
  r["elements"], r["frames"], r["bytes"], r["bits_per_value"], r["encode_gbps"],
  r["decode_gbps"], r["memcpy_gbps"], r["max_abs_err"], r["rel_l2_err"]))' "$label"
  fi
}

[ $json = 1 ] || printf '%-10s %-10s %9s %7s %10s %8s %8s %8s %8s %10s %10s\n' \
  input codec elements frames bytes bits/val enc_GB/s dec_GB/s memcpy max_abs rel_l2
for c in $codecs zstd; do
  run cnn-it100 --codec "$c" --input "$dense"
done
for c in $codecs; do
  caps_ok=$("$bench" codec --codec "$c" --keys "$sk" --values "$sv" --min-time 0.01 --json 2>/dev/null || true)
  [ -n "$caps_ok" ] && run spam-it010 --codec "$c" --keys "$sk" --values "$sv"
done
for c in $codecs zstd; do
  run synth-16M --codec "$c" --synthetic 16000000
done
