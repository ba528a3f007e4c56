#!/usr/bin/env bash
# Reliable mode under 5% loss with reordering, duplication and corruption
# (gradwire's impairment layer on every receiver: the kernel here has no
# netem): the result is still bit-identical to a loss-free run, every
# worker finishes, corrupted packets are counted and dropped.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
imp="impair_loss=0.05,impair_reorder=0.05,impair_dup=0.02,impair_corrupt=0.01"
for codec in raw 3lc; do
  args="--dim 100000 --up $codec --down $codec"
  # shellcheck disable=SC2086
  if ! job --workers 4 $args --agg-args "--opts $imp,impair_seed=7" -- --rounds 3 --opts $imp; then
    fail=1; continue
  fi
  for ((r = 0; r < 4; r++)); do
    n=$(rounds_with bit-exact $r)
    [ "$n" -eq 3 ] || { echo "FAIL: $codec rank $r: $n of 3 rounds bit-exact"; fail=1; }
  done
  corrupt=$(agg_stat 0 corrupt); bad=$(agg_stat 0 bad)
  retx=$(grep -ho '[0-9]* retransmitted' "$LOGS"/w.*.err | awk '{s += $1} END {print s}')
  [ "${retx:-0}" -gt 0 ] || { echo "FAIL: $codec: no retransmission under loss"; fail=1; }
  echo "ok: $codec W=4 under loss: bit-exact, $retx retransmissions, aggregator dropped $corrupt corrupt + $bad bad"
done
exit $fail
