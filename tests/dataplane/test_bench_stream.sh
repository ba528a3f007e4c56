#!/usr/bin/env bash
# gw-bench stream: bad arguments exit 2 with a message naming the argument;
# a real tx/rx pair over 127.0.0.1 (two processes) prints one JSON object
# each with the documented keys, and the receiver's sum is bit-exact.
set -u
bench=$1
fail=0
expect_usage() {  # expected-word, args...
  local word=$1; shift
  out=$("$bench" stream "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$word"; then
    echo "FAIL: gw-bench stream $* -> rc=$rc, output lacks '$word': $out"; fail=1
  fi
}
ok=(--backend udp --role rx --local 127.0.0.1:0)
expect_usage --backend --role rx --local 127.0.0.1:0
expect_usage --backend --backend nosuch --role rx --local 127.0.0.1:0
expect_usage --role --backend udp --local 127.0.0.1:0
expect_usage --role --backend udp --role both --local 127.0.0.1:0
expect_usage --local --backend udp --role rx
expect_usage --local --backend udp --role rx --local 127.0.0.1
expect_usage --local --backend udp --role rx --local 300.0.0.1:5
expect_usage --peer --backend udp --role tx --local 127.0.0.1:0
expect_usage --peer "${ok[@]}" --peer nowhere
expect_usage --codec "${ok[@]}" --codec nosuch
expect_usage --synthetic "${ok[@]}" --synthetic -5
expect_usage --synthetic "${ok[@]}" --synthetic 12abc
expect_usage --rounds "${ok[@]}" --rounds 0
expect_usage --window "${ok[@]}" --window 5000
expect_usage --mtu "${ok[@]}" --mtu 10
expect_usage --param "${ok[@]}" --param novalue
expect_usage --input "${ok[@]}" --input x.f32 --synthetic 10
expect_usage --duration "${ok[@]}" --duration 0
expect_usage --duration "${ok[@]}" --duration 2x
expect_usage --duration "${ok[@]}" --duration 1 --rounds 3
expect_usage "unexpected argument" "${ok[@]}" stray
expect_usage --backend -l 0 -- --role rx --local 127.0.0.1:0

# Errors after parsing exit 1 and name the argument.
out=$("$bench" stream --backend udp --role tx --local 127.0.0.1:0 --peer 127.0.0.1:9 \
      --input /nonexistent.f32 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q nonexistent; then
  echo "FAIL: missing --input file: rc=$rc $out"; fail=1
fi
out=$("$bench" stream --backend udp --role rx --local 127.0.0.1:0 --opts impair_nosuch=1 2>&1); rc=$?
if [ $rc -ne 1 ] || ! printf '%s' "$out" | grep -q -- --opts; then
  echo "FAIL: bad --opts: rc=$rc $out"; fail=1
fi

# A real pair. The port is picked here; try a few if one is taken.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ran=0
for _ in 1 2 3 4 5; do
  port=$(( 20000 + (RANDOM % 30000) ))
  "$bench" stream --backend udp --role rx --local 127.0.0.1:$port --codec int8 \
    --synthetic 200000 --rounds 3 --timeout-ms 20000 \
    --opts impair_loss=0.02,impair_corrupt=0.01,impair_seed=6 --json >"$tmp/rx.json" 2>"$tmp/rx.err" &
  rx=$!
  sleep 0.2
  if ! kill -0 $rx 2>/dev/null; then wait $rx; continue; fi
  "$bench" stream --backend udp --role tx --local 127.0.0.1:0 --peer 127.0.0.1:$port \
    --codec int8 --synthetic 200000 --rounds 3 --timeout-ms 20000 \
    --opts impair_loss=0.02,impair_corrupt=0.01,impair_seed=5 --json >"$tmp/tx.json" 2>"$tmp/tx.err"
  txrc=$?
  wait $rx; rxrc=$?
  ran=1
  break
done
if [ $ran -eq 0 ]; then
  echo "FAIL: no free UDP port for the receiver"; exit 1
fi
[ $txrc -eq 0 ] || { echo "FAIL: tx exited $txrc: $(cat "$tmp/tx.err")"; fail=1; }
[ $rxrc -eq 0 ] || { echo "FAIL: rx exited $rxrc: $(cat "$tmp/rx.err")"; fail=1; }
keys="mode role backend codec elements rounds chunks packets bytes seconds mpps gbps
      tensor_gbps retransmits acks_sent acks_received duplicates bad corrupt verified"
for side in tx rx; do
  if ! python3 - "$tmp/$side.json" $keys <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
missing = [k for k in sys.argv[2:] if k not in d]
if missing:
    print("missing keys:", missing)
    sys.exit(1)
PY
  then echo "FAIL: $side --json output: $(cat "$tmp/$side.json")"; fail=1; fi
done
if ! python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['verified'] is True and d['chunks'] > 0 else 1)" "$tmp/rx.json"; then
  echo "FAIL: receiver not verified bit-exact: $(cat "$tmp/rx.json")"; fail=1
fi
cat "$tmp/tx.json" "$tmp/rx.json"

# A timed run of pre-encoded frames (lossy codec, so the frames repeat
# without feedback): rx stops at tx's end-of-run marker, counts the same
# rounds as tx, and its sum is bit-exact against the repeated frames.
for _ in 1 2 3 4 5; do
  port=$(( 20000 + (RANDOM % 30000) ))
  "$bench" stream --backend udp --role rx --local 127.0.0.1:$port --codec int8 \
    --synthetic 50000 --preencode --timeout-ms 20000 --json >"$tmp/rx2.json" 2>"$tmp/rx2.err" &
  rx=$!
  sleep 0.2
  if ! kill -0 $rx 2>/dev/null; then wait $rx; continue; fi
  "$bench" stream --backend udp --role tx --local 127.0.0.1:0 --peer 127.0.0.1:$port \
    --codec int8 --synthetic 50000 --preencode --duration 0.3 --timeout-ms 20000 \
    --json >"$tmp/tx2.json" 2>"$tmp/tx2.err"
  txrc=$?
  wait $rx; rxrc=$?
  break
done
if [ $txrc -ne 0 ] || [ $rxrc -ne 0 ] || ! python3 - "$tmp/tx2.json" "$tmp/rx2.json" <<'PY'
import json, sys
t, r = (json.load(open(p)) for p in sys.argv[1:3])
ok = r["verified"] is True and r["rounds"] == t["rounds"] >= 1 and r["preencode"] is True
sys.exit(0 if ok else 1)
PY
then
  echo "FAIL: timed pre-encoded run (tx $txrc rx $rxrc): $(cat "$tmp"/tx2.* "$tmp"/rx2.*)"; fail=1
fi
[ $fail -eq 0 ] && echo "gw-bench stream CLI: all checks passed"
exit $fail
