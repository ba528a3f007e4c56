#!/usr/bin/env bash
# gw-train refuses bad arguments with exit 2 and a message naming the
# argument, before it starts any process.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
gen_blobs "$tmp"
D=(--train "$tmp/blobs.train.svm" --test "$tmp/blobs.test.svm" --features 20 --classes 3)
expect() {  # word args...
  local word=$1; shift
  out=$("$train" "$@" 2>&1); rc=$?
  if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$word"; then
    echo "FAIL: gw-train $* -> rc=$rc, output lacks '$word': $out"; fail=1
  fi
}
expect --model "${D[@]}" --model cnn
expect --epochs "${D[@]}" --epochs 0
expect --epochs "${D[@]}" --epochs many
expect --lr "${D[@]}" --lr -1
expect --lr "${D[@]}" --lr 0.1x
expect --momentum "${D[@]}" --momentum 1
expect --target-acc "${D[@]}" --target-acc 101
expect --batch "${D[@]}" --batch 0
expect --link "${D[@]}" --link carrier-pigeon
expect --label "${D[@]}" --label 'a"b'
expect --up "${D[@]}" --up nosuch
expect --workers "${D[@]}" --workers 0
expect --dim "${D[@]}" --dim 100
expect --backend "${D[@]}" --backend udp
expect "--baseline-from" "${D[@]}" --baseline --baseline-from x.jsonl
expect "--restart: only a loss-tolerant job" "${D[@]}" --restart 1
expect --restart "${D[@]}" --mode loss-tolerant --restart 0
expect --step-ms "${D[@]}" --step-ms -5
expect "--rejoin: needs --param-file" "${D[@]}" --rank 0 --agg 127.0.0.1:1 --rejoin 1000
expect --param-file "${D[@]}" --param-file ""
expect --train --train "$tmp/missing.svm" --test "$tmp/blobs.test.svm"
expect fetch-data --train "$tmp/missing.svm" --test "$tmp/blobs.test.svm"
expect --test --train "$tmp/blobs.train.svm" --test "$tmp/missing.svm"
expect "unknown option '--bogus'" "${D[@]}" --bogus
expect "--epochs: needs a value" "${D[@]}" --epochs
expect "unexpected argument 'extra'" "${D[@]}" extra
expect "--plot-only: no record files" --plot-only "$tmp/p"
expect "--agg is required" --rank 0 --workers 2 --dim 10
expect "--rank: 2 is not below" --rank 2 --workers 2 --dim 10 --agg 127.0.0.1:1
# A worker whose --dim is not the model's size says so (exit 2).
out=$(timeout 20 "$train" "${D[@]}" --rank 0 --workers 1 --dim 10 \
  --agg 127.0.0.1:1 --local 127.0.0.1:0 2>&1); rc=$?
if [ $rc -ne 2 ] || ! printf '%s' "$out" | grep -q "model has"; then
  echo "FAIL: worker with a wrong --dim -> rc=$rc: $out"; fail=1
fi
# A data file with a bad line is named with its line.
printf '1 1:0.5\n2 3:1 2:1\n' >"$tmp/bad.svm"
out=$(timeout 20 "$train" --train "$tmp/bad.svm" --test "$tmp/bad.svm" \
  --features 20 --classes 3 --workers 1 --link udp 2>&1); rc=$?
if [ $rc -eq 0 ] || ! printf '%s' "$out" | grep -q "bad.svm:2"; then
  echo "FAIL: bad data file -> rc=$rc, no 'bad.svm:2' in: $out"; fail=1
fi
[ $fail -eq 0 ] && echo "gw-train command line: all refusals named their argument"
exit $fail
