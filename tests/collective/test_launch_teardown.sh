#!/usr/bin/env bash
# gw-launch over UDP on 127.0.0.1 stops the whole job, leaves no process
# behind and says what happened, whatever ends it: a worker that refuses
# its arguments (exit 2, as it did, the rank named) or is killed mid-job
# (exit 1), a shard that cannot start (exit 2), --timeout (exit 124),
# SIGTERM (exit 130) — docs/cli.md's table; and when
# gw-launch itself is killed outright, --idle-exit lets the shards leave
# by themselves once the workers are done.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
apps=$APPS logs=$LOGS
launch=$apps/gw-launch
fail=0
# Every job of this test has this --dim: its processes are found by it.
dim=$((70001 + $$ % 20000))
mine() { pgrep -f -- "gw-(allreduce|aggregator) .*--dim $dim( |$)"; }
gone() {  # WHAT: no process of this test's jobs may be left
  local left
  left=$(mine)
  [ -z "$left" ] && return 0
  echo "FAIL: $1: processes left:"; ps -o pid,args -p "$(echo $left | tr ' ' ,)"
  kill -9 $left 2>/dev/null
  fail=1
}
run() {  # RC WORD WHAT gw-launch-args... : expect exit RC and WORD on stderr
  local want=$1 word=$2 what=$3 rc=0
  shift 3
  "$launch" --quiet --logs "$logs" --dim "$dim" "$@" >"$logs/out" 2>"$logs/err" || rc=$?
  if [ $rc -ne "$want" ] || ! grep -q -- "$word" "$logs/err"; then
    echo "FAIL: $what: exit $rc (want $want), '$word' wanted in:"; cat "$logs/err"; fail=1
  else
    echo "ok: $what: exit $rc, $(grep -m1 -- "$word" "$logs/err")"
  fi
  gone "$what"
}

run 2 "worker 1 failed (exit 2)" "a worker that fails at once" \
  --workers 3 --rank-args "1:--rounds 0" -- "$apps/gw-allreduce" --rounds 2
run 2 "shard 0 failed (exit 2)" "a shard that cannot start" \
  --workers 2 --agg-args "--window 0" -- "$apps/gw-allreduce" --rounds 2
run 124 "timed out after 2 s" "--timeout 2" \
  --workers 2 --timeout 2 -- "$apps/gw-allreduce" --rounds 1000000 --no-verify

# Killed mid-job: rank 1 dies by SIGKILL while the others wait for it.
( for _ in $(seq 200); do
    p=$(pgrep -f -- "gw-allreduce .*--rank 1 .*--dim $dim( |$)") && break
    sleep 0.05
  done
  sleep 0.5; kill -KILL $p ) &
run 1 "worker 1 failed (killed by SIGKILL)" "a worker killed mid-job" \
  --workers 3 --timeout 100 -- "$apps/gw-allreduce" --rounds 1000000 --no-verify
wait

# SIGTERM to gw-launch: exit 130, everything stopped.
rm -f "$logs"/w.*
"$launch" --quiet --logs "$logs" --dim "$dim" --workers 2 --timeout 100 \
  -- "$apps/gw-allreduce" --rounds 1000000 --no-verify >/dev/null 2>"$logs/err" &
lp=$!
for _ in $(seq 200); do [ -s "$logs/w.1.out" ] && break; sleep 0.05; done
kill -TERM $lp
rc=0; wait $lp || rc=$?
if [ $rc -ne 130 ] || ! grep -q "interrupted" "$logs/err"; then
  echo "FAIL: SIGTERM: exit $rc (want 130):"; cat "$logs/err"; fail=1
else
  echo "ok: SIGTERM: exit 130, $(head -n1 "$logs/err")"
fi
gone "SIGTERM"

# gw-launch killed outright: the workers finish their rounds and the shard
# leaves 1 s after its last packet.
rm -f "$logs"/w.*
"$launch" --quiet --logs "$logs" --dim "$dim" --workers 2 --idle-exit 1000 \
  -- "$apps/gw-allreduce" --rounds 20 >/dev/null 2>&1 &
lp=$!
for _ in $(seq 200); do [ -s "$logs/w.1.out" ] && break; sleep 0.05; done
# (The shell's "Killed" notice is expected: not shown.)
{ kill -KILL $lp; wait $lp
  for _ in $(seq 300); do [ -z "$(mine)" ] && break; sleep 0.1; done; } 2>/dev/null
gone "--idle-exit after gw-launch was killed" && echo "ok: --idle-exit: the shard left by itself"
exit $fail
