#!/usr/bin/env bash
# gw-bench rejects bad arguments with exit 2 and a message naming the
# argument, and a good run prints one JSON object with every required key.
set -u
bench=$1
fail=0
expect_usage() {  # expected-word, args...
  local word=$1; shift
  out=$("$bench" "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$word"; then
    echo "FAIL: gw-bench $* -> rc=$rc, output lacks '$word': $out"; fail=1
  fi
}
expect_usage MODE nosuchmode
expect_usage --codec codec --synthetic 10
expect_usage --codec codec --codec nosuch --synthetic 10
expect_usage --synthetic codec --codec raw --synthetic -5
expect_usage --synthetic codec --codec raw --synthetic 12abc
expect_usage --mtu codec --codec raw --synthetic 100 --mtu 10
expect_usage --mtu codec --codec raw --synthetic 100 --mtu 99999999
expect_usage --mtu codec --codec raw --synthetic 100 --backend rdma --mtu 100
expect_usage --backend codec --codec raw --synthetic 100 --backend tcp
expect_usage --param codec --codec raw --synthetic 100 --param novalue
expect_usage input codec --codec raw --synthetic 100 --input x.f32
expect_usage --min-time codec --codec raw --synthetic 100 --min-time 0
expect_usage --dim codec --codec raw --synthetic 100 --dim 5

# Errors after parsing are run failures (exit 1) naming the argument.
out=$("$bench" codec --codec raw --synthetic 100 --param nosuch=1 --min-time 0.01 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q -- '--param nosuch'; then
  echo "FAIL: unknown --param accepted or unnamed: rc=$rc $out"; fail=1
fi
# Values each within bounds that the codec refuses together (3 groups).
out=$("$bench" codec --codec sketchml --synthetic 100 --param groups=3 --min-time 0.01 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q -- '--param'; then
  echo "FAIL: sketchml groups=3 accepted or unnamed: rc=$rc $out"; fail=1
fi
out=$("$bench" codec --codec raw --input /nonexistent.f32 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q nonexistent; then
  echo "FAIL: missing --input file: rc=$rc $out"; fail=1
fi
# An empty input is nothing to measure, not a table of zeros.
out=$("$bench" codec --codec raw --input /dev/null 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q "empty: nothing to measure"; then
  echo "FAIL: an empty --input measured: rc=$rc $out"; fail=1
fi

json=$("$bench" codec --codec int8 --synthetic 10000 --min-time 0.01 --json); rc=$?
for k in codec elements frames bytes bits_per_value encode_gbps decode_gbps \
         memcpy_gbps max_abs_err rel_l2_err backend packets wire_bytes \
         wire_bits_per_value packet_bits_per_value; do
  if ! printf '%s' "$json" | python3 -c "import json,sys; d=json.load(sys.stdin); sys.exit(0 if '$k' in d else 1)"; then
    echo "FAIL: --json output lacks key $k: $json"; fail=1
  fi
done
[ $rc -eq 0 ] || { echo "FAIL: good run exited $rc"; fail=1; }
# Bytes on the wire: per packet, gradwire's 32-byte header and what the
# backend puts below it (udp: Ethernet 14 + FCS 4 + IPv4 20 + UDP 8; rdma
# RoCEv2: also BTH 12, DETH 8, immediate 4, ICRC 4).
for be in udp:46 rdma:74; do
  json=$("$bench" codec --codec int8 --synthetic 10000 --min-time 0.01 --json --backend "${be%:*}")
  if ! printf '%s' "$json" | python3 -c "
import json, sys
d = json.load(sys.stdin)
want = d['bytes'] + d['packets'] * (32 + ${be#*:})
sys.exit(0 if d['backend'] == '${be%:*}' and d['packets'] == d['frames'] and d['wire_bytes'] == want else 1)"; then
    echo "FAIL: --backend ${be%:*}: wire bytes are not frames + $((32 + ${be#*:})) per packet: $json"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "gw-bench CLI: all checks passed"
exit $fail
