#!/usr/bin/env bash
# gw-launch over UDP on 127.0.0.1: three jobs started at once (two shards
# each) do not collide and all end bit-exact; --logs holds what its help
# says (aggs, the shards' JSON counters with --agg-args --json after the
# endpoint each shard bound on port 0 and printed, each worker's stdout
# and stderr); --rank-args reach their rank only; without --quiet the
# console shows each worker's lines prefixed with its rank.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
apps=$APPS dir=$LOGS
launch=$apps/gw-launch
fail=0
bad() { echo "FAIL: $*"; fail=1; }

pids=()
for j in 0 1 2; do
  "$launch" --workers 2 --shards 2 --dim 100000 --timeout 120 --logs "$dir/$j" \
    --agg-args --json -- "$apps/gw-allreduce" --rounds 3 \
    >"$dir/out.$j" 2>"$dir/err.$j" &
  pids+=($!)
done
for j in 0 1 2; do
  rc=0; wait "${pids[$j]}" || rc=$?
  [ $rc -eq 0 ] || { bad "job $j of 3 at once: exit $rc"; cat "$dir/err.$j"; continue; }
  n=$(grep -c "^\[[01]\] .*bit-exact" "$dir/out.$j")
  [ "$n" -eq 6 ] || bad "job $j: $n of 6 rounds bit-exact on the console"
  l=$dir/$j
  [[ $(cat "$l/aggs") =~ ^127\.0\.0\.1:[0-9]+,127\.0\.0\.1:[0-9]+$ ]] \
    || bad "job $j: aggs is '$(cat "$l/aggs")'"
  IFS=, read -ra ep <"$l/aggs"
  for s in 0 1; do
    [ "$(head -n1 "$l/agg.$s.out")" = \
      "{\"tool\":\"gw-aggregator\",\"shard\":$s,\"endpoint\":\"${ep[$s]}\"}" ] \
      || bad "job $j: agg.$s.out does not start with the endpoint of aggs: $(cat "$l/agg.$s.out")"
    grep -q "^{\"tool\":\"gw-aggregator\",\"shard\":$s,\"ups\":" "$l/agg.$s.out" \
      || bad "job $j: agg.$s.out holds no JSON counters: $(cat "$l/agg.$s.out")"
    grep -q ready "$l/agg.$s.err" || bad "job $j: agg.$s.err lacks the ready line"
  done
  for r in 0 1; do
    n=$(grep -c "^rank $r round .*bit-exact" "$l/w.$r.out")
    [ "$n" -eq 3 ] || bad "job $j: w.$r.out has $n of 3 rounds bit-exact"
    grep -q "^gw-allreduce: rank $r: 3 rounds" "$l/w.$r.err" || bad "job $j: w.$r.err lacks the summary"
  done
done
ports=$(cat "$dir"/?/aggs | tr ',' '\n' | sort | uniq -d)
[ -z "$ports" ] || bad "jobs shared shard ports: $ports"
[ $fail -eq 0 ] && echo "ok: 3 jobs at once, 2 shards each, on $(cat "$dir"/?/aggs | tr '\n' ' '): bit-exact, logs as documented"

# --rank-args: only rank 1 gets --json.
"$launch" --workers 2 --dim 20000 --quiet --logs "$dir/r" --rank-args "1:--json" \
  -- "$apps/gw-allreduce" --rounds 2 >/dev/null 2>&1 || bad "--rank-args job failed"
grep -q '^rank 0 round 1: ' "$dir/r/w.0.out" || bad "--rank-args: rank 0 got --json too"
grep -q '^{.*"rank":1,' "$dir/r/w.1.out" || bad "--rank-args: rank 1 did not get --json"
# (and without --json, the shard's endpoint line is human)
grep -qx "gw-aggregator shard 0: endpoint $(cat "$dir/r/aggs")" "$dir/r/agg.0.out" \
  || bad "agg.0.out lacks the endpoint line of aggs: $(cat "$dir/r/agg.0.out")"
[ $fail -eq 0 ] && echo "ok: --rank-args 1:--json reached rank 1 only"
# --colocate: no shard processes; worker R hosts shard R on a thread at
# an endpoint the launcher picked, and the sums stay bit-exact.
"$launch" --colocate --workers 3 --dim 30000 --quiet --logs "$dir/c" \
  -- "$apps/gw-allreduce" --rounds 3 >/dev/null 2>&1 || bad "--colocate job failed"
IFS=, read -ra cep <"$dir/c/aggs"
[ ${#cep[@]} -eq 3 ] || bad "--colocate: aggs is '$(cat "$dir/c/aggs")', not 3 endpoints"
! ls "$dir/c"/agg.* >/dev/null 2>&1 || bad "--colocate: shard processes ran"
for r in 0 1 2; do
  n=$(grep -c "^rank $r round .*bit-exact" "$dir/c/w.$r.out")
  [ "$n" -eq 3 ] || bad "--colocate: w.$r.out has $n of 3 rounds bit-exact"
done
[ $fail -eq 0 ] && echo "ok: --colocate: 3 workers hosting their shards on $(cat "$dir/c/aggs"), bit-exact"
exit $fail
