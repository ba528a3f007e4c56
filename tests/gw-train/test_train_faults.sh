#!/usr/bin/env bash
# gw-train with workers SIGKILLed (W = 3, the MLP on synthetic data, UDP on
# loopback, steps paced to 10 ms so that the job runs about 8 s):
#  1. loss-tolerant with --restart 1: rank 2 killed at epoch 10 is started
#     again and rejoins; rank 1 killed at epoch 25 is not (restarts used
#     up). The job finishes (exit 0) and says so, the training loss keeps
#     falling after each kill, and the rejoined rank ends with the same
#     parameters as rank 0 when it took the round's replica (it says so).
#  2. reliable: rank 1 killed at epoch 5: gw-train fails within 5 s,
#     naming the dead worker (gw-launch, or the survivors' liveness).
#  3. loss-tolerant over memif (fixed addresses; skipped without DPDK):
#     rank 2 killed and restarted rejoins at the round, as over UDP.
# Nothing is left behind: no process of the job, no replica folder.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
# Sections 1 and 2 run everywhere, or fail: the script never ends as a
# skip; the others may be skipped out loud.
# shellcheck source=../skip_section.sh
source "$(dirname "$0")/../skip_section.sh"
gen_blobs "$tmp"
job=(--link udp --workers 3 --model mlp --train "$tmp/blobs.train.svm"
     --test "$tmp/blobs.test.svm" --features 20 --classes 3 --hidden 16 --epochs 50
     --batch 16 --lr 0.02 --evals 1 --step-ms 10 --liveness-ms 1000 --json --verbose)
now() { date +%s%3N; }
# epoch_of FILE: the newest record's epoch (0 before any).
epoch_of() { records "$1" | tail -n 1 | field epoch | cut -d. -f1; }
# wait_epoch FILE E PID: until rank 0 has recorded epoch E (30 s at most).
wait_epoch() {
  local i
  for ((i = 0; i < 600; i++)); do
    [ "$(epoch_of "$1")" -ge "$2" ] 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
kill_rank() { pkill -KILL -f "gw-train .*--rank $1 .*$tmp/blobs" || bad "no rank $1 to kill"; }
loss_at() { records "$1" | awk -v e="$2" -F'"epoch":' '{ split($2, a, ","); if (a[1] + 0 == e) print }' |
  field train_loss | head -n 1; }
states() { ls -d /tmp/gw-train-state.* 2>/dev/null | wc -l; }
before=$(states)

# 1. loss-tolerant
"$train" "${job[@]}" --mode loss-tolerant --restart 1 >"$tmp/t.out" 2>"$tmp/t.err" &
pid=$!
wait_epoch "$tmp/t.out" 10 $pid && kill_rank 2 || bad "loss-tolerant: epoch 10 never came"
wait_epoch "$tmp/t.out" 25 $pid && kill_rank 1 || bad "loss-tolerant: epoch 25 never came"
timeout 60 tail --pid=$pid -f /dev/null
wait $pid; rc=$?
grep -E "^gw-launch: |rejoins the job" "$tmp/t.err"
[ $rc -eq 0 ] || { bad "loss-tolerant: gw-train exit $rc"; tail -n 20 "$tmp/t.err"; }
grep -q "gw-launch: worker 2 failed (killed by SIGKILL)" "$tmp/t.err" &&
  grep -q "worker 2 restarted (1 of 1), rejoining" "$tmp/t.err" ||
  bad "loss-tolerant: rank 2's death and restart not reported"
grep -q "the job finished without worker 1" "$tmp/t.err" ||
  bad "loss-tolerant: the job did not say it finished without worker 1"
join=$(grep -o "rank 2 rejoins the job at round [0-9]*, with rank [0-9]*'s replica after step [0-9]* ([^)]*)" "$tmp/t.err")
[ -n "$join" ] || bad "loss-tolerant: rank 2 did not rejoin"
n=$(records "$tmp/t.out" | wc -l)
[ "$n" -eq 51 ] || bad "loss-tolerant: $n records, not 51 (epochs 0..50)"
l10=$(loss_at "$tmp/t.out" 10) l25=$(loss_at "$tmp/t.out" 25)
lend=$(records "$tmp/t.out" | tail -n 1 | field train_loss)
acc=$(records "$tmp/t.out" | tail -n 1 | field test_acc)
echo "loss-tolerant: training loss $l10 at the first kill, $l25 at the second, $lend at the end; test accuracy $acc%"
awk -v a="$l10" -v b="$l25" -v c="$lend" 'BEGIN { exit !(b < a && c < b) }' ||
  bad "loss-tolerant: the loss did not keep falling ($l10, $l25, $lend)"
awk -v a="$acc" 'BEGIN { exit !(a >= 90) }' || bad "loss-tolerant: final accuracy $acc% < 90%"
h0=$(grep -o "rank 0: final parameters xxh64 [0-9a-f]*" "$tmp/t.err" | awk '{print $NF}')
h2=$(grep -o "rank 2: final parameters xxh64 [0-9a-f]*" "$tmp/t.err" | awk '{print $NF}')
if [[ $join == *"(the same)"* ]]; then
  [ -n "$h0" ] && [ "$h0" = "$h2" ] && echo "ok: the rejoined rank 2 ends with rank 0's parameters ($h0)" ||
    bad "loss-tolerant: rank 2 took the round's replica but ends unlike rank 0 ($h0, $h2)"
else
  echo "note: rank 2 took a replica of another step: replicas not compared ($join)"
fi

# 2. reliable
"$train" "${job[@]}" >"$tmp/r.out" 2>"$tmp/r.err" &
pid=$!
if wait_epoch "$tmp/r.out" 5 $pid; then
  kill_rank 1; t0=$(now)
  timeout 60 tail --pid=$pid -f /dev/null
  wait $pid; rc=$?; took=$(($(now) - t0))
  # Named by the survivors (liveness) or first by gw-launch, which saw
  # the process die; either way gw-launch tears the rest down.
  why=$(grep -oE "worker 1 is dead: silent for [0-9]* ms|gw-launch: worker 1 failed \(killed by SIGKILL\)" "$tmp/r.err" | head -n 1)
  if [ $rc -ne 0 ] && [ $took -lt 5000 ] && [ -n "$why" ]; then
    echo "ok: reliable: gw-train failed (exit $rc) $took ms after the kill: $why"
  else
    bad "reliable: gw-train exit $rc $took ms after the kill, reason '${why}'"; tail -n 12 "$tmp/r.err"
  fi
else
  bad "reliable: epoch 5 never came"; tail -n 12 "$tmp/r.err"
fi

# 3. loss-tolerant over memif, where a rank's address is fixed: the shard
# tells the restarted process from the dead one by its incarnation
# (wire-format §5.10), and the rejoined replica again ends as rank 0's.
# shellcheck source=../have_dpdk.sh
source "$(dirname "$0")/../have_dpdk.sh"
if ! have_dpdk "$apps"; then
  skip_section memif "${HAVE_DPDK_WHY:-this build has no DPDK backend}"
else
  mjob=("${job[@]}"); mjob[1]=memif
  "$train" "${mjob[@]}" --mode loss-tolerant --restart 1 >"$tmp/m.out" 2>"$tmp/m.err" &
  pid=$!
  wait_epoch "$tmp/m.out" 10 $pid && kill_rank 2 || bad "memif: epoch 10 never came"
  timeout 60 tail --pid=$pid -f /dev/null
  wait $pid; rc=$?
  join=$(grep -o "rank 2 rejoins the job at round [0-9]*, with rank [0-9]*'s replica after step [0-9]* ([^)]*)" "$tmp/m.err")
  h0=$(grep -o "rank 0: final parameters xxh64 [0-9a-f]*" "$tmp/m.err" | awk '{print $NF}')
  h2=$(grep -o "rank 2: final parameters xxh64 [0-9a-f]*" "$tmp/m.err" | awk '{print $NF}')
  if [ $rc -ne 0 ] || [ -z "$join" ]; then
    bad "memif: exit $rc, rejoin '${join}'"; tail -n 12 "$tmp/m.err"
  elif [[ $join == *"(the same)"* ]]; then
    [ -n "$h0" ] && [ "$h0" = "$h2" ] && echo "ok: memif: $join; rank 2 ends with rank 0's parameters" ||
      bad "memif: rank 2 took the round's replica but ends unlike rank 0 ($h0, $h2)"
  else
    echo "note: memif: $join: replicas not compared"
  fi
fi

sleep 0.2
left=$(pgrep -f "$tmp/blobs" | wc -l)
[ "$left" -eq 0 ] || { bad "$left processes of the jobs left"; pgrep -af "$tmp/blobs"; pkill -KILL -f "$tmp/blobs"; }
[ "$(states)" -eq "$before" ] || bad "a /tmp/gw-train-state.* folder was left"
skips_summary
[ $fail = 0 ] && echo "PASS" || exit 1
