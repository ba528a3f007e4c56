#!/usr/bin/env bash
# Device tensors (gw-allreduce --gpu emu: gpudirect's kernels, emulated on
# the host, encode chunk batches straight into packet memory and decode
# results into the device tensor): every round bit-identical to the
# in-process model (codec/'s encoders and error feedback, the shard's sum
# in rank order), alone and beside CPU workers the shard cannot tell
# apart; error buffers byte-identical to a CPU run's; a loss-tolerant job
# loses no mass (frames left out go back into the device's error buffer);
# what has no kernels is refused by name. hq too: its kernels quantise on
# the shards' scales, and its sum frames decode on the device. Over RDMA
# (GW_LINK=rdma, the soft-RoCE guest) a subset: the packets the kernels write are the slots
# the backend's MR covers. GW_GPU=cuda runs every case on the GPU instead
# (scripts/gpu-check.sh does, on the GPU machine); the default is emu.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
GPU=${GW_GPU:-emu}
case $GPU in
  emu|cuda) echo "executor: $GPU" ;;
  *) echo "test_allreduce_gpu: GW_GPU: '$GPU' is not emu or cuda" >&2; exit 2 ;;
esac
fail=0
# Every section but memif's runs everywhere, or fails: the script never
# ends as a skip. Lower case: scripts/gpu-check.sh puts the '^skip:' lines
# in its step's detail.
SKIP_WORD=skip
# shellcheck source=../skip_section.sh
source "$(dirname "$0")/../skip_section.sh"
full() { [ "$LINK" = udp ]; }
exact() {  # label rounds W [job options] -- [worker options]
  local label=$1 rounds=$2 w=$3
  shift 3
  if ! job --workers "$w" "$@" --rounds "$rounds"; then
    echo "FAIL: $label: the job failed"; sed -n 1,5p "$LOGS"/w.*.err; fail=1; return 1
  fi
  for ((r = 0; r < w; r++)); do
    n=$(rounds_with bit-exact $r)
    [ "$n" -eq "$rounds" ] || { echo "FAIL: $label rank $r: $n of $rounds rounds bit-exact"; fail=1; return 1; }
  done
  echo "ok: $label: $rounds rounds bit-exact on $w workers"
}
exact "raw W=2 S=1" 3 2 --dim 100003 -- --gpu "$GPU"
handoff="packet memory.*dma-buf: the emu executor's tensors are host memory"
[ "$GPU" = cuda ] && handoff="cuda kernels write frames into the dataplane's packet memory, pinned and mapped for the device; ."
if grep -q "$handoff" "$LOGS"/w.0.err; then
  echo "ok: the hand-off is named: $(grep -m1 -o "$GPU kernels.*" "$LOGS"/w.0.err)"
else
  echo "FAIL: no hand-off line in:"; cat "$LOGS"/w.0.err; fail=1
fi
exact "int8 up, 3lc down W=4" 4 4 --dim 200000 --up int8 --down 3lc -- --gpu "$GPU"
if full; then
exact "bf16 W=2 S=2 --ports 2" 3 2 --dim 120000 --shards 2 --up bf16 --down bf16 -- --gpu "$GPU" --ports 2
exact "3lc both ways W=4 S=2" 4 4 --dim 200000 --shards 2 --up 3lc --down 3lc -- --gpu "$GPU"
exact "3lc s=1.75, dim not a multiple of 5, W=2" 4 2 --dim 123457 --up 3lc --down raw \
  --up-params sparsity=1.75 -- --gpu "$GPU"
exact "topk 5% up, 50% down W=4" 4 4 --dim 200000 --up topk --down topk \
  --up-params fraction=0.05 --down-params fraction=0.5 -- --gpu "$GPU"
# A layout: each tensor its own context (3lc's m from that tensor alone,
# top-k's k a fraction of each chunk of it), launches that never span two
# tensors, tensors below min-elems raw, results decoded tensor by tensor.
layout=7,50000,33,120003,2,29955
exact "3lc with a layout, min-elems 64, down-momentum 0.9, W=4 S=2" 4 4 --dim 200000 \
  --shards 2 --up 3lc --down 3lc --layout $layout --min-elems 64 --down-momentum 0.9 -- --gpu "$GPU"
exact "topk with a layout, min-elems 64, W=4 S=2" 4 4 --dim 200000 --shards 2 --up topk \
  --down topk --up-params fraction=0.05 --down-params fraction=0.5 --layout $layout \
  --min-elems 64 -- --gpu "$GPU"
exact "int8 with a layout, rank 1 on the device beside CPU ranks" 3 4 --dim 200000 --up int8 \
  --down 3lc --layout $layout --rank-args "1:--gpu $GPU" --
# DPDK memif: the kernels write into the mempool's mbufs (its memory
# chunks are the registered regions), a port per shard on each worker.
# shellcheck source=../have_dpdk.sh
source "$(dirname "$0")/../have_dpdk.sh"
if ! have_dpdk "$APPS"; then
  skip_section memif "${HAVE_DPDK_WHY:-this build has no DPDK backend}"
else
  saved=$LINK LINK=memif
  exact "int8 up, 3lc down over memif W=2 S=2" 3 2 --dim 100000 --shards 2 --up int8 \
    --down 3lc -- --gpu "$GPU" --ports 2
  LINK=$saved
fi
exact "int8, rank 1 on the device beside CPU ranks" 3 4 --dim 150000 --up int8 --down int8 \
  --rank-args "1:--gpu $GPU" --
# hq: the kernels quantise each chunk on the scale the shard's last result
# named and the round's rotation; the shard sums their codes as a CPU
# worker's; the sum frames decode on the device.
exact "hq W=4 S=2" 4 4 --dim 200000 --shards 2 --up hq -- --gpu "$GPU"
exact "hq 2 bits, stochastic, a layout, min-elems 64, W=4" 4 4 --dim 200000 --up hq \
  --up-params bits=2,rounding=stochastic --layout $layout --min-elems 64 -- --gpu "$GPU"
exact "hq unrotated, rank 1 on the device beside CPU ranks" 3 4 --dim 150000 --up hq \
  --up-params rotate=0 --rank-args "1:--gpu $GPU" --

# Reliable mode through loss, reordering, duplicates and corruption on
# every receiver: corrupt RESULTs fail the decode kernel's checksum and are
# dropped, duplicates within a burst are decoded once, and every round is
# still exact.
imp="impair_loss=0.05,impair_reorder=0.05,impair_dup=0.05,impair_corrupt=0.02"
if exact "int8 up, 3lc down, impaired" 3 4 --dim 100000 --up int8 --down 3lc \
     --agg-args "--opts $imp,impair_seed=7" -- --gpu "$GPU" --opts "$imp"; then
  corrupt=$(grep -o '[0-9]* corrupt' "$LOGS"/w.*.err | awk -F: '{split($2, a, " "); s += a[1]} END {print s + 0}')
  dups=$(grep -o '[0-9]* duplicate' "$LOGS"/w.*.err | awk -F: '{split($2, a, " "); s += a[1]} END {print s + 0}')
  if [ "$corrupt" -gt 0 ] && [ "$dups" -gt 0 ]; then
    echo "ok: the workers dropped $corrupt corrupt and $dups duplicate results"
  else
    echo "FAIL: impaired: $corrupt corrupt, $dups duplicate results seen (none?)"; fail=1
  fi
fi

# The error buffers: a device run's residuals are the CPU run's, byte for byte.
for codec in int8 3lc "topk --up-params fraction=0.02" \
             "3lc --layout 5,40000,17,49978 --min-elems 64" "hq --down hq" \
             "hq --down hq --up-params bits=3,rotate=0,rounding=stochastic"; do
  down=(--down raw)
  [[ $codec = *--down* ]] && down=()
  bad=0
  for side in cpu dev; do
    mkdir -p "$LOGS/$side"
    rm -f "$LOGS/$side"/*.f32
    dev=()
    [ $side = dev ] && dev=(--gpu "$GPU")
    # shellcheck disable=SC2086
    job --workers 2 --dim 90000 --up $codec "${down[@]}" -- --rounds 3 --dump "$LOGS/$side" \
      "${dev[@]}" || { echo "FAIL: $codec $side: the job failed"; bad=1; }
  done
  for r in 0 1; do
    cmp -s "$LOGS/cpu/resid.$r.f32" "$LOGS/dev/resid.$r.f32" &&
      cmp -s "$LOGS/cpu/recv.$r.f32" "$LOGS/dev/recv.$r.f32" ||
      { echo "FAIL: $codec rank $r: device residual or results differ from the CPU's"; bad=1; }
  done
  [ $bad = 0 ] && echo "ok: $codec: device error buffers and results byte-identical to the CPU's"
  [ $bad = 0 ] || fail=1
done

fi   # full

# Loss-tolerant under 10% loss: left-out frames decode back into the
# device's error buffer; nothing is lost over all rounds.
codecs="int8 3lc topk hq"
full || codecs=3lc
for codec in $codecs; do
  rm -f "$LOGS"/*.f32
  down_codec=raw
  [ "$codec" = hq ] && down_codec=hq
  if job --workers 4 --dim 60000 --mode loss-tolerant --deadline-us 2000 --up $codec --down $down_codec \
       --agg-args "--opts impair_loss=0.1,impair_seed=5" \
       -- --rounds 5 --opts impair_loss=0.1 --dump "$LOGS" --gpu "$GPU"; then
    left=$(grep -o '[0-9]* without this rank' "$LOGS"/w.*.out | awk -F: '{split($2, a, " "); s += a[1]} END {print s + 0}')
    if "$APPS/gw-allreduce" --check "$LOGS" --workers 4 --dim 60000 --rounds 5; then
      echo "ok: $codec loss-tolerant on the device: left out of $left chunks, no mass lost"
    else
      echo "FAIL: $codec loss-tolerant on the device: mass lost"; fail=1
    fi
  else
    echo "FAIL: $codec loss-tolerant on the device: the job failed"; fail=1
  fi
done

# Refusals, each naming what is wrong.
refused() {  # label pattern [job options] -- [worker options]
  local label=$1 pat=$2
  shift 2
  if job --workers 1 --dim 1000 "$@" --rounds 1 >/dev/null 2>&1; then
    echo "FAIL: $label: accepted"; fail=1; return
  fi
  if grep -q -- "$pat" "$LOGS"/w.0.err; then
    echo "ok: $label refused: $(grep -m1 -- "$pat" "$LOGS"/w.0.err)"
  else
    echo "FAIL: $label: no '$pat' in:"; cat "$LOGS"/w.0.err; fail=1
  fi
}
refused "terngrad up on the device" "no kernels for up terngrad" --up terngrad -- --gpu "$GPU"
refused "onebit down on the device" "no kernels for down onebit" --down onebit -- --gpu "$GPU"
refused "an unknown executor" "\-\-gpu: 'opencl'" -- --gpu opencl
refused "Sketched-SGD on the device" "no device path" --up countsketch -- --gpu "$GPU"
if [ ! -e /dev/nvidia0 ]; then
  refused "cuda without a GPU" "gpu: cuda" -- --gpu cuda
fi
skips_summary
exit $fail
