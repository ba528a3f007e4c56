#!/usr/bin/env bash
# gw-train with DeepReduce on the uplink (W = 2, UDP on 127.0.0.1, logistic
# regression on small synthetic sparse data): one codec string per index
# codec and per value codec, each combination learns and the replicas end
# identical; a bad codec string is refused with a message naming the
# parameter before anything starts.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
gen_sparse "$tmp"
for combo in index=raw,value=f32 index=rle,value=deflate index=delta,value=dexp \
             index=bloom,policy=p0,fpr=0.6,value=qsgd index=bloom,policy=p1,fpr=0.01,value=f32 \
             index=bloom,policy=p2,fpr=0.001,value=poly; do
  up="deepreduce:$combo,fraction=0.1"
  timeout 120 "$train" --link udp --workers 2 --model logreg \
    --train "$tmp/sparse.train.svm" --test "$tmp/sparse.test.svm" --features 1024 \
    --epochs 6 --batch 20 --lr 0.05 --evals 1 --up "$up" --down raw --json --verbose \
    >"$tmp/out" 2>"$tmp/err" || { bad "$combo failed"; tail -5 "$tmp/err"; continue; }
  recs=$(records "$tmp/out")
  a0=$(echo "$recs" | head -n 1 | field test_acc)
  a=$(echo "$recs" | tail -n 1 | field test_acc)
  awk -v a="$a" 'BEGIN { exit !(a >= 80) }' || bad "$combo: test accuracy $a% < 80%"
  replicas_agree "$combo" "$tmp/out" "$tmp/err"
  echo "$combo: test accuracy $a0% -> $a%"
done
for badspec in "deepreduce:index=rle,fpr=0.01" "deepreduce:value=splines" "deepreduce:policy=p7"; do
  out=$(timeout 60 "$train" --link udp --workers 2 --model logreg --train "$tmp/sparse.train.svm" \
        --test "$tmp/sparse.test.svm" --features 1024 --epochs 1 --up "$badspec" 2>&1); rc=$?
  word=${badspec#deepreduce:}; word=${word%%=*}
  [ $word = index ] && word=fpr
  if [ $rc -eq 0 ] || ! printf '%s' "$out" | grep -q "$word"; then
    bad "'$badspec' not refused by name (rc $rc): $out"
  else
    echo "refused: $badspec -> $(printf '%s' "$out" | head -n 1)"
  fi
done
exit $fail
