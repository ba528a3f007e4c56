#!/usr/bin/env bash
# A soak: W = 4 workers training (gw-allreduce --train-lr, the toy loop)
# through one shard on 127.0.0.1, every receiver impaired (2 % loss,
# reordering, duplication and corruption), first in reliable mode, then
# loss-tolerant with one worker SIGKILLed and restarted (--rejoin,
# parameters from rank 0's checkpoint) twice. Every process streams its
# counters (--stats-interval 1000) and its RSS is sampled each second.
# Checks, each a field of the one JSON object printed:
#   reliable: the four replicas' parameters are bit-identical after every
#     round every rank reported, and the loss fell;
#   RSS of every process flat after warm-up (a fifth of its life): less
#     than 5 % above its level at the end of warm-up;
#   counters consistent, reliable phase (every process ended cleanly):
#     what the workers sent the shard = what it received + what its
#     impairment dropped + what the kernel dropped - what it duplicated,
#     and the same from the shard to the workers, to within the packets
#     the reordering still held when a receiver closed;
#   loss-tolerant: the survivors and both restarts ran, the restarts
#     rejoined at a later round, the shard counted the worker gone and
#     back twice.
# A plot (gnuplot, PNG) of RSS, step time and loss over time goes to OUT.
#
# Usage: bench/soak.sh [BUILD_DIR] [--minutes M] [--out DIR] [--json]
#   --minutes M   the whole run (default 10; the reliable phase takes 30 %,
#                 at least 15 s); --minutes 1 is the test suite's short one
#   --out DIR     soak.json, soak.png and the logs (default build/soak)
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
minutes=10 out=""
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json minutes= out=" "$@"
[[ $minutes =~ ^[0-9]+(\.[0-9]+)?$ ]] || bench_die "--minutes: '$minutes' is not a number"
out=${out:-$build/soak}
apps=$build/apps
bench_need "$apps/gw-aggregator" "$apps/gw-allreduce"
mkdir -p "$out"
rm -f "$out"/*.out "$out"/*.err "$out"/rss.tsv "$out"/params.bin*
total_s=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
rel_s=$(awk -v t="$total_s" 'BEGIN { r = int(t * 0.3); print (r < 15 ? 15 : r) }')
tol_s=$((total_s - rel_s))
imp="impair_loss=0.02,impair_reorder=0.02,impair_dup=0.02,impair_corrupt=0.02"
W=4 dim=200000
pids=()
sampler=""
cleanup() {
  for p in "${pids[@]}" $sampler; do kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
bench_at_exit cleanup

# rss: every second, "t pid name rss_kb" for the live pids in $out/pids.
t0=$(date +%s.%N)
: >"$out/pids"
(
  while :; do
    t=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
    while read -r pid name; do
      r=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || r=""
      [ -n "$r" ] && printf '%s\t%s\t%s\t%s\n' "$t" "$pid" "$name" "$r"
    done <"$out/pids"
    sleep 1
  done >>"$out/rss.tsv"
) &
sampler=$!

agg() {  # phase mode-options
  # The output exists before the shard opens it: the loop below may read it
  # first (the background redirection is the child's, not ours).
  : >"$out/agg.$1.out"
  "$apps/gw-aggregator" --shard 0 --workers $W --dim $dim --local 127.0.0.1:0 --json \
    --opts "$imp,impair_seed=11" --stats-interval 1000 --idle-exit-ms 3000 $2 \
    >"$out/agg.$1.out" 2>"$out/agg.$1.err" &
  AGG=$!
  pids+=("$AGG")
  echo "$AGG agg.$1" >>"$out/pids"
  EP=""
  for ((i = 0; i < 200; i++)); do
    EP=$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$out/agg.$1.out" | head -n1)
    [ -n "$EP" ] && break
    sleep 0.05
  done
  [ -n "$EP" ] || bench_die "the $1 phase's aggregator did not start"
}
worker() {  # phase rank name options...
  local r=$2 name=$3   # $1, the phase, names the call only
  shift 3
  "$apps/gw-allreduce" --rank "$r" --workers $W --dim $dim --agg "$EP" --local 127.0.0.1:0 \
    --no-verify --train-lr 0.5 --param-file "$out/params.bin" --json --stats-interval 1000 \
    --opts "$imp,impair_seed=$((20 + r))" "$@" >"$out/$name.out" 2>"$out/$name.err" &
  eval "P_$name=\$!"
  pids+=("$!")
  echo "$! $name" >>"$out/pids"
}

wait_pid() { wait "$1" 2>/dev/null; }

# Calibration: how long a round of this job takes here (10 rounds).
agg cal ""
for r in 0 1 2 3; do worker cal $r cal_w$r --rounds 10; done
for r in 0 1 2 3; do eval "wait_pid \$P_cal_w$r"; done
kill -INT "$AGG" 2>/dev/null; wait_pid "$AGG"
per=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$out/cal_w0.out" | tail -n 5 |
      awk '{s += $1} END { print (NR ? s / NR : 0.05) }')
n_rel=$(awk -v t="$rel_s" -v p="$per" 'BEGIN { n = int(t / p); print (n < 40 ? 40 : n) }')
n_tol=$(awk -v t="$tol_s" -v p="$per" 'BEGIN { n = int(t / p); print (n < 80 ? 80 : n) }')
echo "soak: a round takes ${per} s here: $n_rel reliable rounds, $n_tol loss-tolerant" >&2

# Reliable: every process ends cleanly.
agg rel ""
for r in 0 1 2 3; do worker rel $r rel_w$r --rounds "$n_rel"; done
rel_rc=0
for r in 0 1 2 3; do eval "wait_pid \$P_rel_w$r" || rel_rc=1; done
wait_pid "$AGG" || true   # it leaves 3 s after the last packet

# Loss-tolerant: rank 2 is killed at 35 % and 70 % of the phase and
# restarted a second later, rejoining from rank 0's parameters.
tol="--mode loss-tolerant --deadline-us 20000"
agg tol "$tol"
for r in 0 1 2 3; do worker tol $r tol_w$r $tol --rounds "$n_tol"; done
t_tol=$(date +%s)
kills=0
for frac in 35 70; do
  at=$((t_tol + tol_s * frac / 100))
  while [ "$(date +%s)" -lt "$at" ]; do sleep 1; done
  # shellcheck disable=SC2154  # P_tol_w2: set by worker() through eval
  if [ $kills -eq 0 ]; then victim=$P_tol_w2; else victim=$(eval echo "\$P_tol_w2_r$kills"); fi
  kill -KILL "$victim" 2>/dev/null || true
  sleep 1
  kills=$((kills + 1))
  worker tol 2 "tol_w2_r$kills" $tol --rejoin 10000 --rounds "$n_tol" --until-round "$n_tol"
done
tol_rc=0
for name in tol_w0 tol_w1 tol_w3 tol_w2_r2; do eval "wait_pid \$P_$name" || tol_rc=1; done
kill -INT "$AGG" 2>/dev/null; wait_pid "$AGG" || true
kill "$sampler" 2>/dev/null; wait_pid "$sampler" || true
sampler=""

/usr/bin/python3 bench/soak_report.py "$out" "$rel_rc" "$tol_rc" "$n_rel" "$n_tol" "$json"
