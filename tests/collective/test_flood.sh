#!/usr/bin/env bash
# An intruder floods a keyed job's shard (gw-flood: packets without a MAC,
# with another key's MAC, of another job, and of an old round, as fast as
# the dataplane takes them) while the job runs: every round stays
# bit-exact, every intruder packet is counted in its kind's counter or was
# dropped by the kernel before the shard read it (a full socket buffer),
# and the job's slowdown is reported. The same job without the flood is
# the baseline.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
key=$LOGS/job.key
printf '%064x\n' 0x4242 >"$key"
args=(--workers 2 --dim 200000 --key-file "$key")
secs() { sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$LOGS"/w.0.out | awk '{s += $1} END {printf "%.3f", s}'; }

job "${args[@]}" -- --rounds 30 --first-round 1000 --json || { echo "FAIL: the baseline job failed"; exit 1; }
base=$(secs)

flood() {
  local i
  for ((i = 0; i < 600; i++)); do [ -s "$LOGS/aggs" ] && break; sleep 0.05; done
  sleep 0.3   # the job's slots hold its own rounds by now
  # One datagram per send: the kernel counts a dropped UDP GSO run as
  # one drop however many datagrams it held, and every intruder packet
  # must be accounted for.
  local plain=()
  [ "$BACKEND" != udp ] || plain=(--opts gso=0)
  "$APPS/gw-flood" --agg "$(cut -d, -f1 "$LOGS/aggs")" "${args[@]}" --seconds 2 \
    --backend "$BACKEND" --local "$LOCAL_IP:0" "${plain[@]}" \
    --stale-round 0 --json >"$LOGS/flood.out" 2>"$LOGS/flood.err"
}
flood &
# The workers pause 60 ms before each round: the job outlasts the flood.
job "${args[@]}" --agg-args --json -- --rounds 30 --first-round 1000 --lag-ms 60 --json || fail=1
wait
hit=$(secs)
for r in 0 1; do
  n=$(rounds_with bit-exact $r)
  [ "$n" -eq 30 ] || { echo "FAIL: rank $r: $n of 30 rounds bit-exact under the flood"; fail=1; }
done
f() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$LOGS/flood.out"; }
sent=$(f sent)
[ "${sent:-0}" -gt 1000 ] || { echo "FAIL: the intruder sent ${sent:-nothing}"; cat "$LOGS/flood.err"; exit 1; }
counted=0
for k in unauthenticated forged foreign stale; do
  v=$(agg_stat 0 $k); counted=$((counted + ${v:-0}))
done
drops=$(agg_stat 0 rx_dropped)
for pair in unauth:unauthenticated forged:forged foreign:foreign; do
  s=$(f "${pair%%:*}"); c=$(agg_stat 0 "${pair#*:}")
  [ "${c:-0}" -gt 0 ] && [ "${c:-0}" -le "$s" ] ||
    { echo "FAIL: ${pair#*:}: the shard counted ${c:-0} of $s sent"; fail=1; }
done
[ "$(agg_stat 0 stale)" -gt 0 ] || { echo "FAIL: no stale packet counted"; fail=1; }
if [ $((counted + drops)) -lt "$sent" ]; then
  echo "FAIL: $sent intruder packets sent, $counted counted + $drops dropped by the kernel"; fail=1
fi
if [ $fail = 0 ]; then
  echo "ok: a keyed job stayed bit-exact under a flood of $sent packets ($(f pps)/s):" \
       "$counted counted as rejected (unauthenticated $(agg_stat 0 unauthenticated)," \
       "forged $(agg_stat 0 forged), foreign $(agg_stat 0 foreign), stale $(agg_stat 0 stale))," \
       "$drops dropped by the kernel"
  echo "ok: throughput: the job's 30 rounds took ${hit} s in calls under the flood, ${base} s" \
       "without (lag excluded); loss $(awk -v a="$base" -v b="$hit" 'BEGIN { printf "%.0f%%", 100 * (1 - a / b) }')"
fi
exit $fail
