#!/usr/bin/env bash
# Sketched-SGD through the aggregator (gw_allreduce_sketched): count-sketch
# slices summed at the shard, HEAVYMIX, the second round, the k-sparse
# update. W = 4 workers on 127.0.0.1:
#  - reliable: every round's update bit-identical to the in-process model
#    (Algorithm 3 run over all workers' gradients), also under 5% loss with
#    reordering, duplication and corruption;
#  - loss-tolerant: phases finish short, and updates received + every
#    worker's error accumulation = every gradient (nothing lost);
#  - traffic per worker does not grow with W (2, 4, 8): first-transmission
#    bytes up are equal, result bytes down within 5%;
#  - a worker sketching with another seed is rejected, never summed.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
sk="--up sketched-sgd"

exact() {  # label, extra job args
  # shellcheck disable=SC2086
  if ! job --workers 4 --dim 100003 $sk $2 -- --rounds 3 --json; then
    fail=1; return
  fi
  every_rank 4 3 "$1" || fail=1
  echo "ok: $1: every round's update bit-exact on every worker"
}
exact "reliable" ""
exact "reliable, momentum 0.9" "--sketch-momentum 0.9"
imp="impair_loss=0.05,impair_reorder=0.05,impair_dup=0.02,impair_corrupt=0.01"
exact "reliable under 5% loss" "--opts $imp,impair_seed=7"

# Loss-tolerant: nothing lost.
rm -f "$LOGS"/*.f32
args="--dim 60000 --mode loss-tolerant --deadline-us 2000 $sk"
# shellcheck disable=SC2086
if job --workers 4 $args --agg-args "--opts impair_loss=0.1,impair_seed=5" \
     -- --rounds 5 --opts impair_loss=0.1 --dump "$LOGS"; then
  short=$(agg_stat 0 chunks_short)
  [ "${short:-0}" -gt 0 ] || { echo "FAIL: tolerant: no phase finished short"; fail=1; }
  "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 60000 --rounds 5 || fail=1
  if "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 60000 --rounds 4 \
       >/dev/null 2>&1; then
    echo "FAIL: tolerant: --check accepted dumps of 5 rounds as 4"; fail=1
  fi
  echo "ok: loss-tolerant: $short short phases, no mass lost"
else
  fail=1
fi

# Bytes per worker and step against W.
declare -A up down
for W in 2 4 8; do
  # shellcheck disable=SC2086
  if ! job --workers $W --dim 60000 $sk -- --rounds 2 --json; then
    fail=1; continue
  fi
  up[$W]=$(sed -n 's/.*"bytes_up_once":\([0-9]*\).*/\1/p' "$LOGS/w.0.out" | tail -n1)
  down[$W]=$(sed -n 's/.*"bytes_down_once":\([0-9]*\).*/\1/p' "$LOGS/w.0.out" | tail -n1)
  echo "W=$W: rank 0 sent ${up[$W]} bytes and took ${down[$W]} bytes of results in its last step"
done
for W in 4 8; do
  [ "${up[$W]:-x}" = "${up[2]:-y}" ] || { echo "FAIL: bytes up W=$W ${up[$W]:-} != W=2 ${up[2]:-}"; fail=1; }
  awk -v a="${down[$W]:-0}" -v b="${down[2]:-0}" 'BEGIN { exit !(b > 0 && a <= 1.05 * b && a >= 0.95 * b) }' \
    || { echo "FAIL: bytes down W=$W ${down[$W]:-} vs W=2 ${down[2]:-}"; fail=1; }
done

# Another sketch (seed) from rank 1: its slices would add other
# coordinates' cells, so the shard rejects them and the job cannot finish.
# shellcheck disable=SC2086
job --workers 2 --dim 20000 $sk --rank-args "1:--up-params seed=7" \
  -- --rounds 1 --timeout-ms 2000 >/dev/null 2>&1
bad=$(agg_stat 0 bad)
[ "${bad:-0}" -gt 0 ] || { echo "FAIL: slices of another seed were not rejected"; fail=1; }
grep -q bit-exact "$LOGS/w.0.out" && { echo "FAIL: a round finished with a foreign sketch"; fail=1; }
echo "ok: a worker with another sketch seed: $bad packets rejected"
exit $fail
