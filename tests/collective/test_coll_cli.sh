#!/usr/bin/env bash
# gw-aggregator and gw-allreduce refuse bad arguments with exit 2 and a
# message naming the argument.
set -u
apps=$1
fail=0
expect() {  # prog word args...
  local prog=$1 word=$2; shift 2
  out=$("$apps/$prog" "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$word"; then
    echo "FAIL: $prog $* -> rc=$rc, output lacks '$word': $out"; fail=1
  fi
}
A=(--shard 0 --workers 2 --dim 1000 --local 127.0.0.1:0)
expect gw-aggregator --shard --workers 2 --dim 1000 --local 127.0.0.1:0
expect gw-aggregator --shard "${A[@]}" --shard x
expect gw-aggregator --shard "${A[@]}" --shard 3 --shards 2
expect gw-aggregator --workers --shard 0 --dim 10 --local 127.0.0.1:0 --workers 0
expect gw-aggregator --workers "${A[@]}" --workers 5000
expect gw-aggregator --dim "${A[@]}" --dim -4
expect gw-aggregator --up "${A[@]}" --up nosuch
expect gw-aggregator --down "${A[@]}" --down nosuch
expect gw-aggregator --mode "${A[@]}" --mode sometimes
expect gw-aggregator --backend "${A[@]}" --backend carrier-pigeon
expect gw-aggregator --local "${A[@]}" --local here
expect gw-aggregator --key-file "${A[@]}" --key-file /nonexistent
expect gw-aggregator --window "${A[@]}" --window 0
expect gw-aggregator --chunk-elems "${A[@]}" --chunk-elems 10
expect gw-aggregator "--chunk-elems: must be a multiple of 40" "${A[@]}" --chunk-elems 100
# A job check names the option, not the job's field (down_codec, ...).
expect gw-aggregator "--down: an hq uplink comes down as hq" "${A[@]}" --up hq --down raw
expect gw-aggregator "codec params" "${A[@]}" --up topk --up-params fraction=0
expect gw-aggregator "codec params" "${A[@]}" --up 3lc --up-params sparsity=5
expect gw-aggregator "codec params" "${A[@]}" --up 3lc --up-params nosuch=1
expect gw-aggregator "--wait: 'busy' is not spin or sleep" "${A[@]}" --wait busy
expect gw-aggregator "--gso: '2' is not 0 or 1" "${A[@]}" --gso 2
expect gw-aggregator "unexpected argument" "${A[@]}" stray
expect gw-aggregator "port 0 serves one dataplane" "${A[@]}" --ports 2
W=(--rank 0 --workers 2 --dim 1000 --agg 127.0.0.1:9 --local 127.0.0.1:0)
# --gso is the udp backend's: another built backend is refused, either order.
other=$("$apps/gw-aggregator" "${A[@]}" --backend none 2>&1 | grep -oE '\(udp[^)]*\)' |
        tr -d '()' | tr ',' '\n' | tr -d ' ' | grep -vx udp | head -1)
if [ -n "$other" ]; then
  expect gw-aggregator "--gso: only the udp backend" "${A[@]}" --gso 0 --backend "$other"
  expect gw-allreduce "--gso: only the udp backend" "${W[@]}" --backend "$other" --gso 1
fi
expect gw-allreduce --rank --workers 2 --dim 1000 --agg 127.0.0.1:9 --local 127.0.0.1:0
expect gw-allreduce --rank "${W[@]}" --rank 2
expect gw-allreduce --agg --rank 0 --workers 2 --dim 1000 --local 127.0.0.1:0
expect gw-allreduce --agg "${W[@]}" --agg nowhere
expect gw-allreduce --agg "${W[@]}" --shards 2
expect gw-allreduce --host-shard --rank 1 --workers 2 --dim 1000 --agg 127.0.0.1:9 --local 127.0.0.1:0 --host-shard
expect gw-allreduce --host-shard "${W[@]}" --host-shard --backend dpdk
expect gw-allreduce --rounds "${W[@]}" --rounds 0
expect gw-allreduce --ports "${W[@]}" --ports 0
expect gw-allreduce --same-grad "${W[@]}" --same-grad
expect gw-allreduce --same-grad "${W[@]}" --same-grad --no-verify --dump /tmp
expect gw-allreduce --ports "${W[@]}" --ports 2
expect gw-allreduce --ports --rank 0 --workers 2 --dim 1000 --shards 2 --agg 127.0.0.1:9,127.0.0.1:10 --local 127.0.0.1:0 --ports 2 --host-shard
expect gw-allreduce --timeout-ms "${W[@]}" --timeout-ms 1x
expect gw-allreduce --dim --rank 0 --workers 2 --agg 127.0.0.1:9 --local 127.0.0.1:0
key=$(mktemp); printf 'abc\n' >"$key"
expect gw-allreduce --key-file "${W[@]}" --key-file "$key"
printf '%064x%s\n' 1 zz >"$key"
expect gw-aggregator --key-file "${A[@]}" --key-file "$key"
rm -f "$key"
[ $fail -eq 0 ] && echo "ok: every bad argument refused, named"
exit $fail
