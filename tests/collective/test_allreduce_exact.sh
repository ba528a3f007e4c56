#!/usr/bin/env bash
# Allreduce with the raw codec: W = 2 and 4 workers, one and two shards,
# every round bit-identical to the exact float sum in rank order (the
# in-process model gw-allreduce checks against), on every worker; also
# with a dataplane per shard on each worker (--ports S, as memif workers
# have), where every result arrives on its own shard's port.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
check() {  # W S dim [worker options]
  if ! job --workers "$1" --shards "$2" --dim "$3" -- --rounds 3 "${@:4}"; then fail=1; return; fi
  for ((r = 0; r < $1; r++)); do
    n=$(rounds_with bit-exact $r)
    [ "$n" -eq 3 ] || { echo "FAIL: W=$1 S=$2 rank $r: $n of 3 rounds bit-exact"; fail=1; }
  done
  echo "ok: W=$1 S=$2 dim=$3 ${*:4}: every round bit-exact on every worker"
}
check 2 1 100000
check 4 1 100003     # a last chunk shorter than the others
check 4 2 250000
check 2 3 250000 --ports 3
exit $fail
