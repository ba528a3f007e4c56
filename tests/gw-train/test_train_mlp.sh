#!/usr/bin/env bash
# gw-train trains an MLP through the aggregator (W = 2, UDP on 127.0.0.1)
# on small synthetic data: it learns, raw training is reproducible to the
# bit, the replicas end identical, a 3LC run compresses and is compared
# with its raw baseline, and --plot writes a PNG.
set -u
apps=$1
here=$(cd "$(dirname "$0")" && pwd)
train=$apps/gw-train/gw-train
source "$here/gen.sh"
gen_blobs "$tmp"
O=(--link udp --workers 2 --model mlp --train "$tmp/blobs.train.svm"
   --test "$tmp/blobs.test.svm" --features 20 --classes 3 --hidden 16 --epochs 4
   --batch 16 --lr 0.05 --evals 2)

for i in 1 2; do
  timeout 120 "$train" "${O[@]}" --json --verbose >"$tmp/raw$i.out" 2>"$tmp/raw$i.err" \
    || { bad "raw run $i failed"; cat "$tmp/raw$i.err"; }
done
grep '"tool":"gw-train"' "$tmp/raw1.out" | grep -v summary >"$tmp/raw1.jsonl"
n=$(wc -l <"$tmp/raw1.jsonl")
[ "$n" -eq 9 ] || bad "expected 9 records (initial + 4 epochs x 2), got $n"
acc=$(tail -n 1 "$tmp/raw1.jsonl" | field test_acc)
awk -v a="$acc" 'BEGIN { exit !(a >= 90) }' || bad "raw final test accuracy $acc% < 90%"
first=$(head -n 1 "$tmp/raw1.jsonl" | field test_acc)
awk -v a="$first" -v b="$acc" 'BEGIN { exit !(b > a + 20) }' \
  || bad "accuracy did not improve: $first% -> $acc%"
# Bit-reproducible: the same losses and accuracies in both raw runs. Wire
# counters (bytes_up, retransmits, ratio) and time depend on scheduling: a
# loaded machine may retransmit a datagram whose ack was late, which costs
# bytes but never changes the sum, so they are left out of the comparison.
for i in 1 2; do learning "$tmp/raw$i.out" >"$tmp/cmp$i"; done
grep -q '"train_loss".*"test_acc"' "$tmp/cmp1" || bad "loss fields not found in the records"
cmp -s "$tmp/cmp1" "$tmp/cmp2" || { bad "two raw runs differ"; diff "$tmp/cmp1" "$tmp/cmp2" | head; }
# Replicas identical: one hash for both ranks.
h=$(grep -o 'final parameters xxh64 [0-9a-f]*' "$tmp/raw1.out" "$tmp/raw1.err" | awk '{print $NF}' | sort -u)
nh=$(grep -c 'final parameters' "$tmp/raw1.out" "$tmp/raw1.err" | awk -F: '{s += $2} END {print s}')
[ "$nh" -eq 2 ] && [ "$(echo "$h" | wc -l)" -eq 1 ] \
  || bad "replicas differ or not reported ($nh hashes: $h)"

# 3LC against that baseline.
timeout 120 "$train" "${O[@]}" --up 3lc --down 3lc --baseline-from "$tmp/raw1.jsonl" \
  --json >"$tmp/3lc.out" 2>"$tmp/3lc.err" || { bad "3lc run failed"; cat "$tmp/3lc.err"; }
s=$(grep '"summary":true' "$tmp/3lc.out")
[ -n "$s" ] || bad "no summary line"
echo "$s" | grep -q '"baseline":"raw"' || bad "summary lacks the baseline: $s"
ratio=$(grep -v summary "$tmp/3lc.out" | tail -n 1 | field ratio)
awk -v r="$ratio" 'BEGIN { exit !(r > 4) }' || bad "3lc sent only x$ratio less than float32"
acc3=$(echo "$s" | field final_acc)
awk -v a="$acc3" 'BEGIN { exit !(a >= 85) }' || bad "3lc final accuracy $acc3% < 85%"

# Human output and the plot.
if command -v gnuplot >/dev/null; then
  timeout 120 "$train" "${O[@]}" --epochs 1 --up int8 --down int8 --baseline \
    --plot "$tmp/plot" >"$tmp/h.out" 2>&1 || { bad "--baseline --plot run failed"; cat "$tmp/h.out"; }
  grep -q "speedup x\|never reached" "$tmp/h.out" || bad "no speedup line: $(cat "$tmp/h.out")"
  [ "$(head -c 4 "$tmp/plot.png" | od -An -c | tr -d ' ')" = "211PNG" ] \
    || bad "--plot wrote no PNG"
else
  echo "gnuplot not installed: --plot not checked"
fi
[ $fail -eq 0 ] && echo "gw-train mlp: learns ($first% -> $acc%), reproducible, replicas identical, 3lc x$ratio at $acc3%"
exit $fail
