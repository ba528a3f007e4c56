#!/usr/bin/env bash
# PyTorch DDP over gradwire against PyTorch's own choices, in one run on
# the same links: W = 4 ranks, each in its own namespace on the star of
# scripts/netns-star.sh (every link rate-limited by tbf).
# The model is bench/torch_ddp.py's CNN (1.08M parameters, 98% in the
# classifier) on Fashion-MNIST, SGD with momentum, the same steps, batch
# and learning rate for every run. Runs: DDP with a no-op hook (no
# communication: the compute floor), DDP's default allreduce (gloo: the
# baseline; its final accuracy less 0.5 points is the target), the fp16
# hook, PowerSGD ranks 1, 2 and 4, and gradwire raw, int8, 3LC (s = 1 and
# the paper's 1.9), top-k (1% up, 4% down), SketchML, DeepReduce and
# Sketched-SGD with co-located shards, and 3LC and top-k with one
# gw-aggregator in the hub namespace. Ranks start with the environment
# torchrun gives them (RANK, WORLD_SIZE, MASTER_ADDR, ...).
#
# Usage: bench/torch.sh [BUILD_DIR] [--quick] [--json] [--rates "100mbit 1gbit"]
#                       [--steps N] [--only "NAME ..."] [--out DIR]
#   --quick   the README's main job: 100 Mbit/s only; the floor, the
#             default allreduce, PowerSGD rank 2 and gradwire 3LC (a few
#             minutes)
#   --json    the summary as one JSON object on stdout
#   --rates   link rates (tc units) to run, default "100mbit 1gbit"
#   --steps   training steps of the floor and the baseline (default 300;
#             --quick 200); the others stop at the target, after the
#             baseline's training time, or at 3 x steps
#   --only    "NAME NAME ...": these runs only (names as in the table)
#   --out     results folder (default BUILD_DIR/torch): one JSON per run,
#             logs, torch-results.json, the plots
# Needs root (namespaces), python3-torch and dataset-fashion-mnist
# (scripts/install-deps.sh). 10 Mbit/s is not in the default rates: the
# default allreduce moves 6.5 MB per rank and step there (5 s a step, 25
# minutes for 300 steps), beyond the 30 minutes the whole run may take.
source "$(dirname "$0")/lib.sh"
quick=0 json=0 rates="100mbit 1gbit" steps="" out="" only=""
bench_args "quick json rates= steps= out= only=" "$@"
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
rm -f "$out"/*.json "$out"/*.log
W=4
star=scripts/netns-star.sh
dim=$(PYTHONPATH=python "$py" bench/torch_ddp.py --hook noop --print-dim)
export GRADWIRE_LIB=$(cd "$build" && pwd)/libgradwire.so.0
agg_pid=""
cleanup() {
  [ -z "$agg_pid" ] || kill "$agg_pid" 2>/dev/null || true
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
  "gw-int8|--hook gradwire --up int8 --down int8"
  "gw-3lc-s1.0|--hook gradwire --up 3lc --down 3lc"
  "gw-3lc-s1.9|--hook gradwire --up 3lc:sparsity=1.9 --down 3lc:sparsity=1.9"
  "gw-topk|--hook gradwire --up topk:fraction=0.01 --down topk:fraction=0.04"
  "gw-sketchml|--hook gradwire --up sketchml --down sketchml"
  "gw-deepreduce|--hook gradwire --up deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly --down topk:fraction=0.04"
  "gw-sketched-sgd|--hook gradwire --up countsketch"
  "gw-3lc-s1.0-hub|--hook gradwire --up 3lc --down 3lc --shards hub"
  "gw-topk-hub|--hook gradwire --up topk:fraction=0.01 --down topk:fraction=0.04 --shards hub"
)
runs_quick=("${runs_full[0]}" "${runs_full[1]}" "${runs_full[4]}" "${runs_full[8]}")
if [ $quick = 1 ]; then runs=("${runs_quick[@]}"); else runs=("${runs_full[@]}"); fi
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

# The hub's aggregator for a run with --shards hub: same job as the ranks.
start_hub() {  # rate, torch_ddp options
  local up=raw down="" a=("$@") i
  for ((i = 0; i < ${#a[@]}; i++)); do
    case ${a[$i]} in --up) up=${a[$((i + 1))]} ;; --down) down=${a[$((i + 1))]} ;; esac
  done
  ip netns exec gwhub "$build/apps/gw-aggregator" --shard 0 --workers $W --dim "$dim" \
    --up "$up" ${down:+--down "$down"} --window "$window" --local 10.77.0.254:7000 \
    --idle-exit-ms 120000 >"$log.agg" 2>&1 &
  agg_pid=$!
  for ((i = 0; i < 200; i++)); do
    grep -q "ready" "$log.agg" 2>/dev/null && return 0
    kill -0 "$agg_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$log.agg" >&2
  bench_die "the hub's gw-aggregator did not start"
}

run_one() {  # rate, name, options
  local rate=$1 name=$2 opts=($3) i pids=() rc=0 port=$((29500 + RANDOM % 400))
  log=$out/$rate.$name.log
  window=$(window_of "$rate")
  local extra=()
  if [[ " ${opts[*]} " == *" --shards hub "* ]]; then
    for ((i = 0; i < ${#opts[@]}; i++)); do
      [ "${opts[$i]}" != hub ] || opts[$i]=10.77.0.254:7000
    done
    start_hub "${opts[@]}"
  fi
  [[ " ${opts[*]} " != *" --hook gradwire "* ]] || extra=(--window "$window")
  for ((i = 0; i < W; i++)); do
    # Each rank started as torchrun starts it (its environment), without
    # torchrun's agent: one torch import per rank instead of two, which on
    # two cores is 10 s a run (multi-node torchrun itself: docs/torch.md).
    ip netns exec "gwn$i" env GLOO_SOCKET_IFNAME=veth0 PYTHONPATH=python OMP_NUM_THREADS=1 \
      MASTER_ADDR=10.77.0.1 MASTER_PORT=$port RANK=$i WORLD_SIZE=$W LOCAL_RANK=0 \
      LOCAL_WORLD_SIZE=1 timeout 900 "$py" bench/torch_ddp.py "${opts[@]}" "${extra[@]}" --eval-every 50 --name "$name" \
      --label "$rate" --json "$out/$rate.$name.json" >"$log.$i" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  if [ -n "$agg_pid" ]; then kill "$agg_pid" 2>/dev/null || true; wait "$agg_pid" 2>/dev/null || true; agg_pid=""; fi
  cat "$log".[0-9] >"$log" 2>/dev/null; rm -f "$log".[0-9]
  if [ $rc != 0 ] || [ ! -s "$out/$rate.$name.json" ]; then
    echo "$prog: $rate $name failed (exit $rc); its log: $log" >&2
    grep -v '^\*\|OMP_NUM\|^WARNING' "$log" | tail -n 5 | sed "s|^|$prog:   |" >&2
    return 0
  fi
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print("%-8s %-18s acc %.4f  step %.1f ms  %.1f s" % (sys.argv[2], d["config"]["name"],
      d["final_acc"], 1e3 * d["step_s"], d["train_s"]))' "$out/$rate.$name.json" "$rate" >&2
}

t0=$SECONDS
for rate in $rates; do
  bash "$star" down $W >/dev/null 2>&1 || true
  bash "$star" up $W "$rate" >/dev/null
  # The floor and the baseline run $steps steps; the baseline's final
  # accuracy less 0.5 points is the target, and every other run stops at
  # it, or once it has trained as long as the whole baseline did (by then
  # it can no longer beat it), or at 3 x $steps.
  limit=()
  for r in "${runs[@]}"; do
    name=${r%%|*}
    if [ "$name" = noop ] || [ "$name" = allreduce ]; then
      run_one "$rate" "$name" "${r#*|} --steps $steps"
    else
      run_one "$rate" "$name" "${r#*|} --steps $((3 * steps)) ${limit[*]}"
    fi
    if [ "$name" = allreduce ] && [ -s "$out/$rate.allreduce.json" ]; then
      mapfile -t limit < <("$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print("--target-acc %.4f" % (d["final_acc"] - 0.005)); print("--max-train-s %.1f" % d["train_s"])' \
        "$out/$rate.allreduce.json")
    fi
  done
  bash "$star" down $W >/dev/null 2>&1 || true
done
echo "$prog: $(( SECONDS - t0 )) s for ${#runs[@]} runs at each of: $rates" >&2

args=("$out")
[ $json = 0 ] || args+=(--json)
[ $quick = 0 ] || args+=(--quick)
"$py" bench/torch_summary.py "${args[@]}"
