#!/usr/bin/env bash
# gw-train over its default link, memif (DPDK, no hugepages): W = 2 train
# the MLP on synthetic data to the end, with 3LC both ways.
# shellcheck source=gen.sh
source "$(dirname "$0")/gen.sh" "$1"
# Without the DPDK backend the shard says so at once (as in test_launch).
# shellcheck source=../have_dpdk.sh
source "$(dirname "$0")/../have_dpdk.sh"
if ! have_dpdk "$apps"; then
  echo "SKIP: this build has no DPDK backend (memif)"; exit 77
fi
gen_blobs "$tmp"
timeout 200 "$train" --workers 2 --model mlp --train "$tmp/blobs.train.svm" \
  --test "$tmp/blobs.test.svm" --features 20 --classes 3 --hidden 16 --epochs 3 \
  --batch 16 --up 3lc --down 3lc >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || { echo "FAIL: memif run exit $rc"; exit 1; }
acc=$(sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' "$tmp/out" | tail -n 1)
awk -v a="$acc" 'BEGIN { exit !(a >= 85) }' || { echo "FAIL: accuracy '$acc' < 85%"; exit 1; }
