#!/usr/bin/env bash
# gw-launch refuses bad arguments with exit 2 and a message naming the
# argument, before it starts any process; --help names every option it
# takes; a shard that never prints its endpoint is named, within --timeout.
set -u
apps=$1
launch=$apps/gw-launch
w=$apps/gw-allreduce
fail=0
expect() {  # word args...
  local word=$1; shift
  out=$("$launch" "$@" 2>&1); rc=$?
  [ $rc -eq 2 ] && printf '%s' "$out" | grep -q -- "$word" \
    || { echo "FAIL: gw-launch $* -> rc=$rc, lacks '$word': $out"; fail=1; }
}
expect --workers --workers 0 -- "$w"
expect --workers --workers 65 -- "$w"
expect --workers --workers x -- "$w"
expect --workers -- "$w"
expect --link --link pigeon --workers 2 -- "$w"

expect --shards --workers 2 --shards 17 -- "$w"
expect --timeout --workers 2 --timeout 0 -- "$w"
expect --timeout --workers 2 --timeout 5s -- "$w"
expect --restart --workers 2 --restart x -- "$w"
expect "--restart: only a loss-tolerant job" --workers 2 --restart 1 -- "$w"
expect "--restart: not with --colocate" --workers 2 --mode loss-tolerant --colocate --restart 1 -- "$w"
expect --idle-exit --workers 2 --idle-exit -1 -- "$w"
expect --rank-args --workers 2 --rank-args "--lag-ms 4" -- "$w"
expect "rank 2 is not below" --workers 2 --rank-args "2:--lag-ms 4" -- "$w"
expect "--agg-args: needs a value" --workers 2 --agg-args
expect "no worker command" --workers 2
expect "not found" --workers 2 -- /nonexistent/worker
expect "unexpected argument 'stray'" --workers 2 stray -- "$w"
expect --colocate --colocate --link memif --workers 2 -- "$w"
expect --colocate --colocate --workers 3 --shards 2 -- "$w"
expect --idle-exit --colocate --workers 2 --idle-exit 100 -- "$w"

# --help: exit 0, every option of the parser named.
help=$("$launch" --help); rc=$?
[ $rc -eq 0 ] || { echo "FAIL: --help exit $rc"; fail=1; }
src=$(dirname "$0")/../../apps/gw-launch/main.c
opts=$(grep -oE 'strcmp\((a|name), "--[a-z-]+"\)' "$src" | grep -oE -- '--[a-z-]+' | sort -u)
[ "$(echo "$opts" | wc -w)" -ge 14 ] || { echo "FAIL: options not found in $src: $opts"; fail=1; }
for o in $opts; do
  printf '%s' "$help" | grep -q -- "$o" || { echo "FAIL: --help does not name $o"; fail=1; }
done

# A gw-aggregator beside gw-launch that says ready but no endpoint.
fake=$(mktemp -d /tmp/gw-launch-cli.XXXXXX)
cp "$launch" "$fake/gw-launch"
printf '#!/bin/sh\necho "gw-aggregator: shard 0 of 1, 1 workers, dim 40, chunk 40 elements, raw -> raw, ready" >&2\nexec sleep 60\n' >"$fake/gw-aggregator"
chmod +x "$fake/gw-aggregator"
out=$("$fake/gw-launch" --workers 1 --timeout 1 --quiet -- "$w" 2>&1); rc=$?
[ $rc -eq 124 ] && printf '%s' "$out" | grep -q "shard 0 printed no endpoint" \
  || { echo "FAIL: a shard without an endpoint -> rc=$rc: $out"; fail=1; }
rm -rf "$fake"
[ $fail -eq 0 ] && echo "ok: bad arguments refused, named; --help names $(echo $opts | wc -w) options; a missing endpoint named"
exit $fail
