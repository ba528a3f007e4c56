#!/usr/bin/env bash
# gw-train --up sketched-sgd (W = 2, UDP on 127.0.0.1, small synthetic
# data): the MLP learns through the two-round protocol, two runs give the
# same losses and accuracies to the bit, the replicas end identical, the
# records carry bytes down as well as up, the summary's traffic_ratio is
# the baseline's bytes up + down over this run's, and bad Sketched-SGD
# jobs are refused by gw-train, naming the option, before anything starts.
set -u
apps=$1
here=$(cd "$(dirname "$0")" && pwd)
train=$apps/gw-train/gw-train
source "$here/gen.sh"
gen_blobs "$tmp"
O=(--link udp --workers 2 --model mlp --train "$tmp/blobs.train.svm"
   --test "$tmp/blobs.test.svm" --features 20 --classes 3 --hidden 16 --epochs 4
   --batch 16 --lr 0.05 --evals 2)

timeout 120 "$train" "${O[@]}" --json >"$tmp/raw.out" 2>"$tmp/raw.err" \
  || { bad "raw run failed"; cat "$tmp/raw.err"; }
for i in 1 2; do
  timeout 120 "$train" "${O[@]}" --epochs 8 --up sketched-sgd --json --verbose \
    --baseline-from "$tmp/raw.out" >"$tmp/sk$i.out" 2>"$tmp/sk$i.err" \
    || { bad "sketched-sgd run $i failed"; cat "$tmp/sk$i.err"; }
done
grep '"tool":"gw-train"' "$tmp/sk1.out" | grep -v summary >"$tmp/sk1.jsonl"
n=$(wc -l <"$tmp/sk1.jsonl")
[ "$n" -eq 17 ] || bad "expected 17 records (initial + 8 epochs x 2), got $n"
first=$(head -n 1 "$tmp/sk1.jsonl" | field test_acc)
acc=$(tail -n 1 "$tmp/sk1.jsonl" | field test_acc)
awk -v a="$acc" 'BEGIN { exit !(a >= 85) }' || bad "sketched-sgd final accuracy $acc% < 85%"
awk -v a="$first" -v b="$acc" 'BEGIN { exit !(b > a + 20) }' \
  || bad "accuracy did not improve: $first% -> $acc%"
grep -q '"up":"countsketch"' "$tmp/sk1.jsonl" || bad "records do not name the countsketch uplink"

# Reproducible (gen.sh's learning: wire counters left out).
for i in 1 2; do learning "$tmp/sk$i.out" >"$tmp/cmp$i"; done
grep -q '"train_loss".*"test_acc"' "$tmp/cmp1" || bad "loss fields not found in the records"
cmp -s "$tmp/cmp1" "$tmp/cmp2" || { bad "two sketched-sgd runs differ"; diff "$tmp/cmp1" "$tmp/cmp2" | head; }
h=$(grep -o 'final parameters xxh64 [0-9a-f]*' "$tmp/sk1.err" | awk '{print $NF}' | sort -u)
nh=$(grep -c 'final parameters' "$tmp/sk1.err")
[ "$nh" -eq 2 ] && [ "$(echo "$h" | wc -l)" -eq 1 ] \
  || bad "replicas differ or not reported ($nh hashes: $h)"

# Bytes both ways, and the summary's ratio computed from them.
last=$(tail -n 1 "$tmp/sk1.jsonl")
up=$(echo "$last" | field bytes_up)
down=$(echo "$last" | field bytes_down)
rl=$(grep -v summary "$tmp/raw.out" | grep '"tool":"gw-train"' | tail -n 1)
rup=$(echo "$rl" | field bytes_up)
rdown=$(echo "$rl" | field bytes_down)
awk -v u="$up" -v d="$down" -v ru="$rup" -v rd="$rdown" \
  'BEGIN { exit !(u > 0 && d > 0 && ru > 0 && rd > 0) }' \
  || bad "bytes up/down missing: sketched $up/$down, raw $rup/$rdown"
s=$(grep '"summary":true' "$tmp/sk1.out")
tr=$(echo "$s" | field traffic_ratio)
awk -v t="$tr" -v u="$up" -v d="$down" -v ru="$rup" -v rd="$rdown" \
  'BEGIN { want = (ru + rd) / (u + d); exit !(t > 1 && t - want < 1e-3 * want && want - t < 1e-3 * want) }' \
  || bad "traffic_ratio $tr is not (raw up + down) / (up + down) = ($rup + $rdown) / ($up + $down), or not above 1"

# Bad jobs: refused with exit 2 before launch, the message naming the option.
refuse() {  # WHAT ARGS...
  local what=$1 rc=0
  shift
  timeout 20 "$train" "${O[@]}" --epochs 1 --up sketched-sgd "$@" >"$tmp/bad.out" 2>"$tmp/bad.err" || rc=$?
  [ "$rc" -eq 2 ] || bad "$*: exit $rc, want 2"
  grep -q "$what" "$tmp/bad.err" || bad "$*: message does not name $what: $(cat "$tmp/bad.err")"
  if grep -q "job failed" "$tmp/bad.err"; then bad "$*: refused only after launch"; fi
}
refuse topk --topk 100000
refuse candidates --topk 5 --candidates 2
refuse shards --shards 2
refuse rows --up-params rows=0
refuse "\-\-sketch-momentum" --sketch-momentum 1.5

[ $fail -eq 0 ] && echo "gw-train sketched-sgd: learns ($first% -> $acc%), reproducible, replicas identical, x$tr less traffic than raw, bad jobs refused"
exit $fail
