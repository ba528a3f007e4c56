#!/usr/bin/env bash
# PyTorch DDP over gradwire against PyTorch's own choices, in one run on
# the same links: W = 4 ranks, each in its own namespace on the star of
# scripts/netns-star.sh (every link rate-limited by tbf).
# The model is bench/torch_ddp.py's CNN (1.08M parameters, 98% in the
# classifier) on Fashion-MNIST, SGD with momentum, the same steps, batch
# and learning rate for every run. Runs: DDP with a no-op hook (no
# communication: the compute floor), DDP's default allreduce (gloo: the
# baseline; its final accuracy less 0.5 points is the target), the fp16
# hook, PowerSGD ranks 1, 2 and 4, and gradwire raw, int8, 3LC (s = 1,
# and the paper's 1.9 with its placement: momentum at the shards, the
# state change sent down, docs/3lc-paper.md), hq (4 bits, summed as
# integers at the shards; rotated and not), top-k (1% up, 4% down),
# SketchML, DeepReduce and Sketched-SGD with co-located shards (each
# parameter a tensor with its own context), and 3LC and top-k with one
# gw-aggregator in the hub namespace (the flat buffer one tensor: an
# external shard takes a layout only when given it). Ranks start with the environment
# torchrun gives them (RANK, WORLD_SIZE, MASTER_ADDR, ...).
#
# Usage: bench/torch.sh [BUILD_DIR] [--quick] [--json] [--rates "100mbit 1gbit ..."]
#                       [--steps N] [--only "NAME ..."] [--out DIR]
#   --quick   the README's main job: 100 Mbit/s only; the floor, the
#             default allreduce, PowerSGD rank 2 and gradwire 3LC (a few
#             minutes)
#   --json    the summary as one JSON object on stdout
#   --rates   link rates (tc units, or "unlimited": the star without tbf)
#             to run, default "100mbit 1gbit 10gbit unlimited"
#   --steps   training steps of the floor and the baseline (default 300;
#             --quick 200); the others stop at the target, after the
#             baseline's training time (over 50 s: 0.6 x it, at least
#             50 s; by then they are no contenders), once diverged, or
#             at 3 x steps
#   --only    "NAME NAME ...": these runs only (names as in the table)
#   --out     results folder (default BUILD_DIR/torch): one JSON per run,
#             logs, torch-results.json, the plots
#   --plan F  the runs of file F (NAME|OPTIONS lines, as above) instead,
#             with --extra "OPTIONS" added to each (bench/3lc-paper.sh);
#             no summary: the caller reads OUT/RATE.NAME.json
# Needs root (namespaces), python3-torch and dataset-fashion-mnist
# (scripts/install-deps.sh). 10 Mbit/s is not in the default rates: the
# default allreduce moves 6.5 MB per rank and step there (5 s a step, 25
# minutes for 300 steps), beyond the 30 minutes the whole run may take.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
quick=0 json=0 rates="100mbit 1gbit 10gbit unlimited" steps="" out="" only="" plan="" extra=""
bench_args "quick json rates= steps= out= only= plan= extra=" "$@"
bench_root
bench_need "$build/apps/gw-aggregator" "$build/libgradwire.so.0"
py=/usr/bin/python3
"$py" -c "import torch" 2>/dev/null || bench_die "python3-torch is missing (scripts/install-deps.sh)"
[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] \
  || bench_die "dataset-fashion-mnist is missing (scripts/install-deps.sh)"
[ $quick = 0 ] || rates=100mbit
steps=${steps:-$([ $quick = 1 ] && echo 200 || echo 300)}
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --steps: '$steps' is not a positive whole number" >&2; exit 2; }
out=${out:-$build/torch}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.log "$out"/*.error "$out"/*.plan
W=4
star=scripts/netns-star.sh
dim=$(PYTHONPATH=python "$py" bench/torch_ddp.py --hook noop --print-dim)
GRADWIRE_LIB=$(cd "$build" && pwd)/libgradwire.so.0
export GRADWIRE_LIB
agg_pids=()
cleanup() {
  stop_hubs
  bash "$star" down $W >/dev/null 2>&1 || true
}
bench_at_exit cleanup

# name, then torch_ddp.py's options for it
runs_full=(
  "noop|--hook noop"
  "allreduce|--hook allreduce"
  "fp16|--hook fp16"
  "powersgd-r1|--hook powersgd --powersgd-rank 1"
  "powersgd-r2|--hook powersgd --powersgd-rank 2"
  "powersgd-r4|--hook powersgd --powersgd-rank 4"
  "gw-raw|--hook gradwire --up raw --down raw"
  "gw-raw-flat|--hook gradwire --up raw --down raw --no-pipeline"
  "gw-int8|--hook gradwire --up int8 --down int8"
  "gw-3lc-s1.0|--hook gradwire --up 3lc --down 3lc"
  "gw-3lc-s1.9-sm|--hook gradwire --up 3lc:sparsity=1.9 --down 3lc:sparsity=1.9 --shard-momentum"
  "gw-hq|--hook gradwire --up hq --down hq"
  "gw-hq-norot|--hook gradwire --up hq:rotate=0 --down hq"
  "gw-topk|--hook gradwire --up topk:fraction=0.01 --down topk:fraction=0.04"
  "gw-sketchml|--hook gradwire --up sketchml --down sketchml"
  "gw-deepreduce|--hook gradwire --up deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly --down topk:fraction=0.04"
  "gw-sketched-sgd|--hook gradwire --up countsketch"
  "gw-raw-hub|--hook gradwire --up raw --down raw --shards hub"
  "gw-3lc-s1.0-hub|--hook gradwire --up 3lc --down 3lc --shards hub"
  "gw-topk-hub|--hook gradwire --up topk:fraction=0.01 --down topk:fraction=0.04 --shards hub"
)
runs_quick=("${runs_full[0]}" "${runs_full[1]}" "${runs_full[4]}" "${runs_full[9]}")  # noop, allreduce, powersgd-r2, gw-3lc-s1.0
if [ $quick = 1 ]; then runs=("${runs_quick[@]}"); else runs=("${runs_full[@]}"); fi
if [ -n "$plan" ]; then
  [ -r "$plan" ] || { echo "$prog: --plan: cannot read '$plan'" >&2; exit 2; }
  mapfile -t runs < <(grep -v '^ *$' "$plan")
  [ ${#runs[@]} -gt 0 ] || { echo "$prog: --plan: no runs in '$plan'" >&2; exit 2; }
fi
if [ -n "$only" ]; then
  pick=()
  for r in "${runs_full[@]}"; do
    [[ " $only " != *" ${r%%|*} "* ]] || pick+=("$r")
  done
  [ ${#pick[@]} -gt 0 ] || { echo "$prog: --only: no run is called '$only'" >&2; exit 2; }
  runs=("${pick[@]}")
fi

# Chunks in flight per shard: a window's packets queued in tbf must stay
# short next to the retransmission timeout (as bench/train.sh sets it).
window_of() { case $1 in 10mbit) echo 8 ;; 100mbit) echo 16 ;; *) echo 64 ;; esac; }

# The hub's aggregator for plan line $1 (a run with --shards hub): the
# same job as the ranks (its id is the line number + 1), on port 7000 + line.
start_hub() {  # line, torch_ddp options
  local line=$1 up=raw down="" a i log_agg=$out/$rate.agg.$1.log
  shift
  a=("$@")
  for ((i = 0; i < ${#a[@]}; i++)); do
    case ${a[$i]} in --up) up=${a[$((i + 1))]} ;; --down) down=${a[$((i + 1))]} ;; esac
  done
  ip netns exec gwhub "$build/apps/gw-aggregator" --shard 0 --workers $W --dim "$dim" \
    --up "$up" ${down:+--down "$down"} --window "$window" --job $((line + 1)) \
    --local 10.77.0.254:$((7000 + line)) --opts payload=auto --idle-exit-ms 600000 \
    >"$log_agg" 2>&1 &
  agg_pids+=($!)
  for ((i = 0; i < 200; i++)); do
    grep -q "ready" "$log_agg" 2>/dev/null && return 0
    kill -0 "${agg_pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  cat "$log_agg" >&2
  bench_die "the hub's gw-aggregator did not start"
}

stop_hubs() {
  local p
  for p in "${agg_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  agg_pids=()
}

# One rate: the ranks run the plan's lines from $1 on in one process group
# (bench/torch_ddp.py --plan); a run that fails ends the group, is
# reported, and the group starts again after it.
run_rate() {  # rate
  local rate=$1
  local first=0 n=${#runs[@]} i rc pids port name plan=$out/$rate.plan
  window=$(window_of "$rate")
  : >"$plan"
  for ((i = 0; i < n; i++)); do
    echo "${runs[$i]//--shards hub/--shards 10.77.0.254:$((7000 + i))}" >>"$plan"
  done
  while [ $first -lt $n ]; do
    for ((i = first; i < n; i++)); do
      [[ " ${runs[$i]} " != *" --shards hub "* ]] || { local r=${runs[$i]}; start_hub $i ${r#*|}; }
    done
    log=$out/$rate.from$first.log
    pids=() rc=0 port=$((29500 + RANDOM % 400))
    for ((i = 0; i < W; i++)); do
      # Each rank started as torchrun starts it (its environment),
      # without torchrun's agent: one torch import per rank instead of
      # two (multi-node torchrun itself: docs/torch.md).
      ip netns exec "gwn$i" env GLOO_SOCKET_IFNAME=veth0 PYTHONPATH=python OMP_NUM_THREADS=1 \
        MASTER_ADDR=10.77.0.1 MASTER_PORT=$port RANK=$i WORLD_SIZE=$W LOCAL_RANK=0 \
        LOCAL_WORLD_SIZE=1 timeout 1800 "$py" bench/torch_ddp.py --plan "$plan" --first $first \
        --out "$out" --steps "$steps" --window "$window" --label "$rate" $extra >"$log.$i" 2>&1 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=$?; done
    stop_hubs
    cat "$log".[0-9] >"$log" 2>/dev/null; rm -f "$log".[0-9]
    for ((i = first; i < n; i++)); do
      name=${runs[$i]%%|*}
      [ -s "$out/$rate.$name.json" ] || break
      "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print("%-8s %-18s acc %.4f  step %.1f ms  %.1f s" % (sys.argv[2], d["config"]["name"],
      d["final_acc"], 1e3 * d["step_s"], d["train_s"]))' "$out/$rate.$name.json" "$rate" >&2
    done
    [ $i -lt $n ] || break
    echo "$prog: $rate ${runs[$i]%%|*} failed (exit $rc): $(cat "$out/$rate.${runs[$i]%%|*}.error" 2>/dev/null || echo no error recorded); its log: $log" >&2
    grep -v '^\*\|OMP_NUM\|^WARNING' "$log" | tail -n 5 | sed "s|^|$prog:   |" >&2
    first=$((i + 1))
  done
}

t0=$SECONDS
for rate in $rates; do
  bash "$star" down $W >/dev/null 2>&1 || true
  if [ "$rate" = unlimited ]; then bash "$star" up $W >/dev/null
  else bash "$star" up $W "$rate" >/dev/null; fi
  run_rate "$rate"
  bash "$star" down $W >/dev/null 2>&1 || true
done
echo "$prog: $(( SECONDS - t0 )) s for ${#runs[@]} runs at each of: $rates" >&2

[ -z "$plan" ] || exit 0
args=("$out")
[ $json = 0 ] || args+=(--json)
[ $quick = 0 ] || args+=(--quick)
"$py" bench/torch_summary.py "${args[@]}"
