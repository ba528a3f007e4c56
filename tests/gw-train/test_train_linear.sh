#!/usr/bin/env bash
# gw-train trains the three linear models (Adam, l2) through the
# aggregator (W = 2, UDP on 127.0.0.1) on small synthetic sparse data:
# each learns, and the replicas end identical — with raw, 3LC and top-k
# (sparse chunk frames) and SketchML on the uplink.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
gen_sparse "$tmp"
for model in logreg svm linreg; do
  for up in raw 3lc topk sketchml; do
    codecs="--up $up --down $up"
    [ $up = topk ] && codecs="--up topk --up-params fraction=0.1 --down raw"
    timeout 120 "$train" --link udp --workers 2 --model "$model" \
      --train "$tmp/sparse.train.svm" --test "$tmp/sparse.test.svm" --features 1024 \
      --epochs 6 --batch 20 --lr 0.05 --evals 1 $codecs --json --verbose \
      >"$tmp/$model.out" 2>"$tmp/$model.err" || { bad "$model $up failed"; cat "$tmp/$model.err"; continue; }
    recs=$(records "$tmp/$model.out")
    a0=$(echo "$recs" | head -n 1 | field test_acc)
    a=$(echo "$recs" | tail -n 1 | field test_acc)
    l0=$(echo "$recs" | head -n 1 | field train_loss)
    l=$(echo "$recs" | tail -n 1 | field train_loss)
    awk -v a="$a" 'BEGIN { exit !(a >= 80) }' || bad "$model $up: test accuracy $a% < 80%"
    awk -v a="$l0" -v b="$l" 'BEGIN { exit !(b < 0.8 * a) }' || bad "$model $up: loss $l0 -> $l"
    replicas_agree "$model $up" "$tmp/$model.out" "$tmp/$model.err"
    echo "$model $up: test accuracy $a0% -> $a%, loss $l0 -> $l"
  done
done
exit $fail
