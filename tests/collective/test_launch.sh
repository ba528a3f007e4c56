#!/usr/bin/env bash
# gw-launch on one machine: W = 2 and 4 workers and their shard joined by
# memif (DPDK, no hugepages, no NIC) reach bit-exact results, and so do 4
# workers with 2 shards (a memif port per worker on each shard, one per
# shard on each worker); a launch
# interrupted with SIGINT leaves no process, memif socket or temp dir
# behind. Skips (77) without the DPDK backend.
set -u
apps=$1
launch=$apps/gw-launch
fail=0
# Without the DPDK backend the shard says so at once; with it, it serves
# a null device until timeout stops it.
# shellcheck source=../have_dpdk.sh
source "$(dirname "$0")/../have_dpdk.sh"
if ! have_dpdk "$apps"; then
  echo "SKIP: this build has no DPDK backend"; exit 77
fi
for WS in "2 1" "4 1" "4 2"; do
  read -r W S <<<"$WS"
  out=$(timeout 120 "$launch" --link memif --workers $W --shards $S --dim 300000 -- \
        "$apps/gw-allreduce" --rounds 3 2>&1); rc=$?
  n=$(printf '%s\n' "$out" | grep -c bit-exact)
  if [ $rc -ne 0 ] || [ "$n" -ne $((3 * W)) ]; then
    echo "FAIL: memif W=$W S=$S: rc=$rc, $n of $((3 * W)) rounds bit-exact"; printf '%s\n' "$out" | tail -20; fail=1
  else
    echo "ok: memif W=$W S=$S: $n rounds bit-exact"
  fi
done
# Ctrl-C in the middle of a long job: everything goes. (Its processes and
# folder are told from those of any other job by its --dim and the
# launcher's pid, so that copies of this test may run at once.)
dim=$((4000000 + $$ % 100000))

# A background job starts with SIGINT ignored (POSIX), which a shell cannot
# undo: python3 restores the default, as a terminal's Ctrl-C would find it.
setsid python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$launch" --link memif --workers 2 --dim $dim -- "$apps/gw-allreduce" \
  --rounds 100000 --no-verify >/dev/null 2>&1 &
lp=$!
sleep 4
# The launcher's folder, from its shard's memif socket.
rd=$(pgrep -af "gwla${lp}s0" | grep -o 'socket=/tmp/gw-launch\.[^/]*' | head -n 1 | cut -d= -f2)
kill -INT -- -$lp 2>/dev/null
for _ in $(seq 50); do kill -0 $lp 2>/dev/null || break; sleep 0.1; done
if kill -0 $lp 2>/dev/null; then echo "FAIL: launcher alive 5 s after SIGINT"; kill -9 -- -$lp; fail=1; fi
sleep 0.5
left=$(pgrep -f "gw-allreduce --.*--dim $dim .*--rounds 100000|gw-aggregator.*gwla$lp" | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: $left processes left after SIGINT"; pkill -9 -f "dim $dim .*rounds 100000"; fail=1; }
[ -n "$rd" ] || { echo "FAIL: no memif socket folder found in the shard's command line"; fail=1; }
# Under ASan the last processes may take a moment to go: poll up to 5 s.
for _ in $(seq 50); do
  [ -n "$rd" ] && [ ! -e "$rd" ] && break
  sleep 0.1
done
if [ -n "$rd" ] && [ -e "$rd" ]; then
  echo "FAIL: temp dir left after SIGINT:"; ls -la "$rd" 2>&1 | tail -20
  ps -eo pid,pgid,stat,args | grep -E "gw-(allreduce|aggregator|launch)" | grep -v grep
  fail=1
fi
[ $fail -eq 0 ] && echo "ok: SIGINT tears the job down"
exit $fail
