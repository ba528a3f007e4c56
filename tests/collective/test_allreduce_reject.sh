#!/usr/bin/env bash
# Packets that must not be summed: with a job key, a worker without the key
# (unauthenticated), one with another key (forged MACs), one of another job
# (foreign) and one replaying an old round (stale) each send a whole
# tensor into a running job; the aggregator counts and drops every one of
# their packets, the intruders get no result (they time out), and the real
# workers' results stay bit-exact.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
key=$LOGS/job.key; other=$LOGS/other.key
printf '%064x\n' 0x1234 >"$key"; printf '%064x\n' 0x9876 >"$other"
args="--dim 40000 --window 4 --key-file $key"

# Intruders run while the job runs, sent to the shard gw-launch names in
# $LOGS/aggs once it is ready; each must fail (exit 1, timed out).
intrude() {  # name, extra args
  local n=$1 i; shift
  for ((i = 0; i < 600; i++)); do [ -s "$LOGS/aggs" ] && break; sleep 0.05; done
  sleep 0.5
  # shellcheck disable=SC2068
  "$APPS/gw-allreduce" --rank 1 --workers 2 --agg "$(cat "$LOGS/aggs")" \
    --backend "$BACKEND" --local "$LOCAL_IP:0" --dim 40000 --window 4 \
    --rounds 1 --timeout-ms 1500 --no-verify $@ >"$LOGS/i.$n.out" 2>&1
  echo $? >"$LOGS/i.$n.rc"
}
intrude nokey &
intrude forged --key-file "$other" &
intrude foreign --key-file "$key" --job 77 &
# Stale: round 0 again, after the job has moved well past it.
( sleep 2; intrude stale2 --key-file "$key" --first-round 0 ) &
# The workers pause 150 ms before each round, so that the job (and its
# shard) still runs when the intruders send, the stale one 2 s in.
# shellcheck disable=SC2086
if ! job --workers 2 $args -- --rounds 40 --lag-ms 150; then fail=1; fi
wait
for n in nokey forged foreign stale2; do
  rc=$(cat "$LOGS/i.$n.rc" 2>/dev/null)
  [ "$rc" = 1 ] || { echo "FAIL: intruder $n exit ${rc:-none}, expected 1 (timed out)"; cat "$LOGS/i.$n.out"; fail=1; }
done
for r in 0 1; do
  n=$(rounds_with bit-exact $r)
  [ "$n" -eq 40 ] || { echo "FAIL: rank $r: $n of 40 rounds bit-exact"; fail=1; }
done
for k in unauthenticated forged foreign stale; do
  v=$(agg_stat 0 $k)
  [ "${v:-0}" -gt 0 ] || { echo "FAIL: aggregator counted no $k packet"; cat "$LOGS/agg.0.out"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: keyed job bit-exact; dropped $(agg_stat 0 unauthenticated) unauthenticated, $(agg_stat 0 forged) forged, $(agg_stat 0 foreign) foreign, $(agg_stat 0 stale) stale"
exit $fail
