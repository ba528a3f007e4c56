#!/usr/bin/env bash
# Loss-tolerant mode under 10% loss with a 2 ms deadline: chunks finish
# without some workers, those workers keep their frames in their error
# buffers, and over all rounds  sum of results received + every worker's
# residual = sum of every gradient  (nothing lost), with every worker
# having received the same sums.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
for codec in raw int8 topk hq; do
  rm -f "$LOGS"/*.f32
  down=raw; [ $codec = hq ] && down=hq   # hq comes down as the shard's integer sum
  args="--dim 60000 --mode loss-tolerant --deadline-us 2000 --up $codec --down $down"
  # shellcheck disable=SC2086
  if ! job --workers 4 $args --agg-args "--opts impair_loss=0.1,impair_seed=5" \
       -- --rounds 5 --opts impair_loss=0.1 --dump "$LOGS"; then
    fail=1; continue
  fi
  short=$(agg_stat 0 chunks_short)
  [ "${short:-0}" -gt 0 ] || { echo "FAIL: $codec: no chunk finished short"; fail=1; }
  if ! "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 60000 --rounds 5; then
    fail=1
  fi
  # The check has teeth: a round's gradients it is not told about are
  # mass that went nowhere.
  if "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 60000 --rounds 4 \
       >/dev/null 2>&1; then
    echo "FAIL: $codec: --check accepted dumps of 5 rounds as 4"; fail=1
  fi
  echo "ok: $codec loss-tolerant: $short short chunks, no mass lost"
done

# A straggler: rank 3 starts each call 40 ms late, so with few chunks the
# others' 2 ms deadlines finish its first round without it before it has
# encoded anything. It must still encode every chunk (back into its error
# buffer), end the call cleanly and lose no mass.
rm -f "$LOGS"/*.f32
args="--dim 3200 --chunk-elems 320 --window 8 --mode loss-tolerant --deadline-us 2000 --up int8 --down raw"
# shellcheck disable=SC2086
if job --workers 4 $args --rank-args "3:--lag-ms 40" -- --rounds 4 --dump "$LOGS"; then
  left=$(grep -o '[0-9]* without this rank' "$LOGS/w.3.out" | awk '{s += $1} END {print s + 0}')
  [ "$left" -gt 0 ] || { echo "FAIL: straggler: rank 3 was never left out"; fail=1; }
  "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 3200 --rounds 4 || fail=1
  echo "ok: straggler left out of $left chunks, no mass lost"
else
  fail=1
fi
exit $fail
