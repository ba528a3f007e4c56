#!/usr/bin/env bash
# int8, 3LC, top-k (sparse frames, chunk-relative keys) and hq (summed as
# integers) on the uplink and the downlink, W = 4: every round equals
# the in-process model of the job bit for bit (each worker's encoder with
# its error feedback, the shard's sum in rank order, the downlink encoder
# with its own error feedback), and round 0 lies within the codecs' error
# bounds of the exact sum.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
for codec in int8 3lc "3lc --up-params sparsity=1.75 --down-params sparsity=1.75" \
             "topk --up-params fraction=0.05 --down-params fraction=0.5" \
             "hq --up-params bits=3,rounding=stochastic"; do
  args="--dim 200000 --up ${codec%% *} --down ${codec%% *}"
  [ "$codec" != "${codec%% *}" ] && args="$args ${codec#* }"
  # shellcheck disable=SC2086
  if ! job --workers 4 $args -- --rounds 4; then fail=1; continue; fi
  every_rank 4 4 "$codec" || fail=1
  echo "ok: $codec W=4: 4 rounds as modelled, round 0 within bounds"
done
# A layout (tensors of 7 to 120003 elements, a compression context and
# chunks per tensor), tensors below 64 raw, momentum at the two shards
# with the state change sent down: the model, bit for bit.
layout=7,50000,33,120003,2,29955
for codec in 3lc "topk --up-params fraction=0.05 --down-params fraction=0.5"; do
  args="--dim 200000 --up ${codec%% *} --down ${codec%% *} --layout $layout"
  [ "$codec" != "${codec%% *}" ] && args="$args ${codec#* }"
  # shellcheck disable=SC2086
  if ! job --workers 4 --shards 2 $args --min-elems 64 --down-momentum 0.9 -- --rounds 4; then
    fail=1; continue
  fi
  every_rank 4 4 "$codec with a layout" || fail=1
  echo "ok: $codec W=4 S=2, 6 tensors, min-elems 64, down-momentum 0.9: as modelled"
done
# hq summed as integers at two shards, with a layout and raw tensors
# below 64 (those summed as floats): the model, bit for bit, each round's
# chunks on the scale the last result named.
args="--dim 200000 --up hq --down hq --layout $layout --min-elems 64"
# shellcheck disable=SC2086
if job --workers 4 --shards 2 $args -- --rounds 4; then
  every_rank 4 4 "hq with a layout" || fail=1
  bad=$(( $(agg_stat 0 bad) + $(agg_stat 1 bad) ))
  [ "$bad" -eq 0 ] || { echo "FAIL: hq: the shards refused $bad frames"; fail=1; }
  echo "ok: hq W=4 S=2, 6 tensors, min-elems 64: as modelled, no frame refused"
else
  fail=1
fi
exit $fail
