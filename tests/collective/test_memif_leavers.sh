#!/usr/bin/env bash
# A shard survives workers that leave over memif: a loss-tolerant job of
# three workers through one memif shard, rank 2 leaving cleanly after a
# few rounds while ranks 0 and 1 are SIGKILLed mid-round 40 times between
# them and restarted each time (gw-launch --restart, rejoining). The
# memif PMD tears a departed worker's rings down on its interrupt thread
# while the shard may be polling them (dataplane/dpdk/dpdk_guard.c); the
# shard must be alive and serving at the end, and gw-launch must not have
# seen it fail. Before the guard, such a loop segfaulted the shard in
# librte_net_memif within a few runs. Skips (77) without the DPDK
# backend.
set -u
apps=$1
# shellcheck source=../have_dpdk.sh
source "$(dirname "$0")/../have_dpdk.sh"
if ! have_dpdk "$apps"; then
  echo "SKIP: this build has no DPDK backend"; exit 77
fi
L=$(mktemp -d /tmp/gw-leavers.XXXXXX)
trap 'kill -9 $lp 2>/dev/null; [ "${fail:-1}" = 0 ] || [ -z "${GW_KEEP:-}" ] || cp -r "$L" "$GW_KEEP"; rm -rf "$L"' EXIT
"$apps/gw-launch" --link memif --workers 3 --mode loss-tolerant --deadline-us 20000 \
  --restart 100 --dim 100000 --timeout 200 --quiet --logs "$L" --rank-args "2:--rounds 60" \
  -- "$apps/gw-allreduce" --rounds 1000000 --lag-ms 2 --no-verify \
  >/dev/null 2>"$L/launch.err" &
lp=$!
# Every worker up and past its first rounds.
for _ in $(seq 300); do
  [ "$(cat "$L"/w.*.out 2>/dev/null | grep -c round)" -ge 6 ] && break
  sleep 0.1
done
kills=0
for ((k = 0; k < 40; k++)); do
  p=$(pgrep -f "file-prefix=gwlw${lp}w$((k % 2))( |$)" | head -n 1)
  if [ -n "$p" ]; then kill -KILL "$p" && kills=$((kills + 1)); fi
  sleep 0.$((2 + RANDOM % 4))
done
sleep 1
fail=0
shard=$(pgrep -f "file-prefix=gwla${lp}s0( |$)" | head -n 1)
if ! kill -0 "$lp" 2>/dev/null || [ -z "$shard" ] || grep -q "shard 0 failed" "$L/launch.err"; then
  echo "FAIL: the shard did not survive $kills killed workers:"; tail -n 12 "$L/launch.err"; fail=1
fi
# Still serving: once the kills stop, the restarted workers are back and
# their rounds go on (each kill held the others up to the liveness
# interval, and each restart spends a second or two in DPDK's start-up on
# two cores: give them 30 s), and rank 2 finished its rounds and left.
rounds() { cat "$L/w.$1.out" 2>/dev/null | grep -c round; }
before0=$(rounds 0) before1=$(rounds 1)
for _ in $(seq 300); do
  [ "$(rounds 0)" -ge $((before0 + 10)) ] && [ "$(rounds 1)" -ge $((before1 + 10)) ] &&
    grep -q "rank 2: 60 rounds" "$L/w.2.err" && break
  sleep 0.1
done
[ "$(rounds 0)" -ge $((before0 + 10)) ] && [ "$(rounds 1)" -ge $((before1 + 10)) ] ||
  { echo "FAIL: ranks 0 and 1 did not go on after the kills: $before0 -> $(rounds 0), $before1 -> $(rounds 1) rounds"; fail=1; }
grep -q "rank 2: 60 rounds" "$L/w.2.err" ||
  { echo "FAIL: rank 2 did not finish its 60 rounds and leave"; tail -n 3 "$L/w.2.err"; fail=1; }
grep -q "SIGSEGV" "$L/launch.err" && { echo "FAIL: a process crashed:"; grep SIGSEGV "$L/launch.err"; fail=1; }
restarts=$(grep -c "restarted" "$L/launch.err")
kill -TERM "$lp"; wait "$lp" 2>/dev/null
[ $fail = 0 ] && echo "ok: the memif shard survived rank 2 leaving and $kills kills mid-round ($restarts restarts; the survivors' rounds went on after)"
exit $fail
