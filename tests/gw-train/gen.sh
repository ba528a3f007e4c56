# shellcheck shell=bash
# shellcheck disable=SC2034  # what it sets is for the script that sources it
# What every gw-train test starts with, and small synthetic LIBSVM data
# (the real data sets need scripts/fetch-data.sh and the network; these
# tests must not).
#   source "$(dirname "$0")/gen.sh" "$1"   ($1: the build's apps/ folder)
#   gen_blobs DIR       -> DIR/blobs.{train,test}.svm: 3 classes, 20 features
#   gen_sparse DIR      -> DIR/sparse.{train,test}.svm: +-1, 300 features
# It sets -u, $apps, $train (the gw-train binary), $tmp (removed on exit),
# bad() to record a failure ($fail), field KEY to read a number of a JSON
# line on stdin, records FILE for the records of a run, learning FILE for
# the records two runs of one job must print alike, same_learning and
# replicas_agree (below), and $mlp_job, the small MLP job on gen_blobs's
# data that several tests run.
set -u
apps=$1
train=$apps/gw-train/gw-train
tmp=$(mktemp -d /tmp/gw-train-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
field() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
# records FILE: the per-evaluation records of gw-train output FILE.
records() { grep '"tool":"gw-train"' "$1" | grep -v summary; }
# learning records of gw-train output FILE without the wire counters and
# time, which depend on scheduling (a late result costs a re-send, never
# a different sum): what two runs of one job must print alike.
learning() { records "$1" |
  sed -E 's/"(time_s|bytes_up|bytes_down|retransmits|ratio)":[^,}]*,?//g'; }
# same_learning WHAT OUT1 OUT2: two runs' learning records carry losses and
# accuracies and are the same.
same_learning() {
  learning "$2" >"$tmp/cmp1"
  learning "$3" >"$tmp/cmp2"
  grep -q '"train_loss".*"test_acc"' "$tmp/cmp1" || bad "loss fields not found in the records"
  cmp -s "$tmp/cmp1" "$tmp/cmp2" || { bad "two $1 runs differ"; diff "$tmp/cmp1" "$tmp/cmp2" | head; }
}
# replicas_agree WHAT FILE...: the two ranks reported their final
# parameters' hash in FILEs, and it is the same.
replicas_agree() {
  local what=$1 h n
  shift
  h=$(grep -ho 'final parameters xxh64 [0-9a-f]*' "$@" | sort -u | wc -l)
  n=$(grep -ho 'final parameters xxh64 [0-9a-f]*' "$@" | wc -l)
  [ "$n" -eq 2 ] && [ "$h" -eq 1 ] || bad "$what: replicas differ or unreported ($n, $h)"
}
# learns WHAT JSONL N MIN: the N records in JSONL (records' output) end at
# a test accuracy of MIN% or more, 20 points above where they began; sets
# $first and $acc.
learns() {
  local n
  n=$(wc -l <"$2")
  [ "$n" -eq "$3" ] || bad "$1: expected $3 records, got $n"
  first=$(head -n 1 "$2" | field test_acc)
  acc=$(tail -n 1 "$2" | field test_acc)
  awk -v a="$acc" -v m="$4" 'BEGIN { exit !(a >= m) }' || bad "$1 final test accuracy $acc% < $4%"
  awk -v a="$first" -v b="$acc" 'BEGIN { exit !(b > a + 20) }' \
    || bad "$1: accuracy did not improve: $first% -> $acc%"
}
mlp_job=(--link udp --workers 2 --model mlp --train "$tmp/blobs.train.svm"
         --test "$tmp/blobs.test.svm" --features 20 --classes 3 --hidden 16 --epochs 4
         --batch 16 --lr 0.05 --evals 2)
gen_blobs() {
  awk -v dir="$1" 'BEGIN {
    srand(7)
    for (set = 0; set < 2; set++) {
      f = dir "/blobs." (set ? "test" : "train") ".svm"; n = set ? 150 : 600
      for (i = 0; i < n; i++) {
        c = i % 3; line = c
        for (j = 1; j <= 20; j++) {
          v = (rand() - 0.5) * 1.5 + (j == c + 1 ? 1.2 : 0) + (j == c + 4 ? 0.8 : 0)
          line = line " " j ":" sprintf("%.4f", v)
        }
        print line > f
      }
    }
  }'
}
gen_sparse() {
  awk -v dir="$1" 'BEGIN {
    srand(11)
    for (k = 1; k <= 300; k++) w[k] = rand() < 0.5 ? -1 : 1
    for (set = 0; set < 2; set++) {
      f = dir "/sparse." (set ? "test" : "train") ".svm"; n = set ? 300 : 1200
      for (i = 0; i < n; i++) {
        delete on; m = 0
        while (m < 13) { k = 1 + int(rand() * 300); if (!(k in on)) { on[k] = 1; m++ } }
        s = 0; nk = 0
        for (k in on) { s += w[k]; keys[++nk] = k + 0 }
        # ascending indices, as LIBSVM wants
        for (a = 1; a <= nk; a++) for (b = a + 1; b <= nk; b++)
          if (keys[b] < keys[a]) { t = keys[a]; keys[a] = keys[b]; keys[b] = t }
        line = s > 0 ? "+1" : "-1"   # 13 terms of +-1: never a tie
        for (a = 1; a <= nk; a++) line = line " " keys[a] ":0.2887"
        print line > f
      }
    }
  }'
}
