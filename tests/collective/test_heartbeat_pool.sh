#!/usr/bin/env bash
# Heartbeats hold no packet: a worker that sends them for a while between
# calls (liveness 100 ms: one per shard every 12.5 ms, from its thread
# while the call waits --lag-ms) on a pool of 96 packets still has every
# packet for its gradient. Until 0.5 each heartbeat that left kept its
# packet, and a long job at the default pool (4096) ran out after about
# two minutes (its shards then "dead": silent); here round 1 failed.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
if job --workers 2 --shards 2 --dim 4000 --window 4 --pool 96 --liveness-ms 100 \
     -- --rounds 5 --lag-ms 500; then
  n=$(rounds_with bit-exact 0)
  [ "$n" -eq 5 ] || { echo "FAIL: rank 0: $n of 5 rounds bit-exact"; exit 1; }
  echo "ok: 5 rounds 500 ms apart on 96 packets, heartbeats every 12.5 ms between them"
  exit 0
fi
echo "FAIL: the job failed (a heartbeat that keeps its packet drains the pool):"
tail -n 3 "$LOGS"/w.*.err
exit 1
