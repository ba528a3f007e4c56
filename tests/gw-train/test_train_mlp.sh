#!/usr/bin/env bash
# gw-train trains an MLP through the aggregator (W = 2, UDP on 127.0.0.1)
# on small synthetic data: it learns, raw training is reproducible to the
# bit, the replicas end identical, a 3LC run compresses and is compared
# with its raw baseline, and --plot writes a PNG.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
gen_blobs "$tmp"
O=("${mlp_job[@]}")

for i in 1 2; do
  timeout 120 "$train" "${O[@]}" --json --verbose >"$tmp/raw$i.out" 2>"$tmp/raw$i.err" \
    || { bad "raw run $i failed"; cat "$tmp/raw$i.err"; }
done
records "$tmp/raw1.out" >"$tmp/raw1.jsonl"
learns raw "$tmp/raw1.jsonl" 9 90   # initial + 4 epochs x 2
# Bit-reproducible: the same losses and accuracies in both raw runs. Wire
# counters (bytes_up, retransmits, ratio) and time depend on scheduling: a
# loaded machine may retransmit a datagram whose ack was late, which costs
# bytes but never changes the sum, so they are left out of the comparison.
same_learning raw "$tmp/raw1.out" "$tmp/raw2.out"
# Replicas identical: one hash for both ranks.
replicas_agree raw "$tmp/raw1.out" "$tmp/raw1.err"

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
