#!/usr/bin/env bash
# gw-train --up sketched-sgd (W = 2, UDP on 127.0.0.1, small synthetic
# data): the MLP learns through the two-round protocol, two runs give the
# same losses and accuracies to the bit, the replicas end identical, the
# records carry bytes down as well as up, the summary's traffic_ratio is
# the baseline's bytes up + down over this run's, and bad Sketched-SGD
# jobs are refused by gw-train, naming the option, before anything starts.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
gen_blobs "$tmp"
O=("${mlp_job[@]}")

timeout 120 "$train" "${O[@]}" --json >"$tmp/raw.out" 2>"$tmp/raw.err" \
  || { bad "raw run failed"; cat "$tmp/raw.err"; }
for i in 1 2; do
  timeout 120 "$train" "${O[@]}" --epochs 8 --up sketched-sgd --json --verbose \
    --baseline-from "$tmp/raw.out" >"$tmp/sk$i.out" 2>"$tmp/sk$i.err" \
    || { bad "sketched-sgd run $i failed"; cat "$tmp/sk$i.err"; }
done
records "$tmp/sk1.out" >"$tmp/sk1.jsonl"
learns sketched-sgd "$tmp/sk1.jsonl" 17 85   # initial + 8 epochs x 2
grep -q '"up":"countsketch"' "$tmp/sk1.jsonl" || bad "records do not name the countsketch uplink"

# Reproducible (gen.sh's learning: wire counters left out).
same_learning sketched-sgd "$tmp/sk1.out" "$tmp/sk2.out"
replicas_agree sketched-sgd "$tmp/sk1.err"

# Bytes both ways, and the summary's ratio computed from them.
last=$(tail -n 1 "$tmp/sk1.jsonl")
up=$(echo "$last" | field bytes_up)
down=$(echo "$last" | field bytes_down)
rl=$(records "$tmp/raw.out" | tail -n 1)
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
