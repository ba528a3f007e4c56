#!/usr/bin/env bash
# 3LC's Table 1 and Figure 6 in the paper's shape, on this machine's two
# workloads: final accuracy against float32, time to float32's final
# accuracy less 0.5 points, and bits per value up and down, for float32
# (raw), int8 and 3LC at s = 1.00, 1.50, 1.75 and 1.90, each 3LC setting in
# three placements side by side (float32 is gradwire raw for the MLP and
# DDP's own allreduce for the CNN):
#   paper    a context per tensor, momentum at the shards and the state
#            change sent down (3LC's placement: gw-train --shard-momentum,
#            State(momentum=0.9) with the optimizer's momentum 0)
#   default  a context per tensor, momentum in the user's optimizer and
#            the gradient sum sent down (what the hook does unless told)
#   old      one context for the whole model, momentum in the optimizer
#            (gradwire before 0.5: --one-tensor, per_tensor=False)
# W = 4 on the 100 Mbit/s star of scripts/netns-star.sh, the learning
# rate decaying by a cosine to 0 over a fixed number of steps (the
# paper's schedule, §4.1), every run to the end.
#   mlp  gw-train's MLP on MNIST (784-64-10, SGD lr 0.05, momentum 0.9,
#        32 rows per worker and step), --epochs (default 5) epochs
#   cnn  bench/torch_ddp.py's CNN on Fashion-MNIST (1.07M parameters, SGD
#        lr 0.02, momentum 0.9, batch 32 per rank), --steps (default 300)
#   --long-steps N (default 0: none) the CNN again over a schedule of N
#        steps, float32 and the paper's placement only, on the 10 Gbit/s
#        star: how the gap to float32 closes with the schedule's length
#        (accuracy only: a reliable job's arithmetic does not depend on
#        the link, and 10 Gbit/s lets float32 finish; N = 3000 takes
#        about 13 minutes here)
#
# Usage: bench/3lc-paper.sh [BUILD_DIR] [--json] [--only mlp|cnn]
#                           [--epochs E] [--steps N] [--long-steps N]
#                           [--out DIR]
#   --json   one JSON object per run on stdout instead of the tables
#   --out    results folder (default BUILD_DIR/3lc-paper)
# Needs root (namespaces), python3-torch and dataset-fashion-mnist (cnn).
# About 17 minutes on two cores (30 with --long-steps 3000).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
json=0 only="" epochs=5 steps=300 long_steps=0 out=""
bench_args "json only= epochs= steps= long-steps= out=" "$@"
bench_root
[[ $epochs =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --epochs: '$epochs' is not a positive whole number" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --steps: '$steps' is not a positive whole number" >&2; exit 2; }
[[ $long_steps =~ ^(0|[1-9][0-9]*)$ ]] || { echo "$prog: --long-steps: '$long_steps' is not a whole number" >&2; exit 2; }
case $only in ""|mlp|cnn) ;; *) echo "$prog: --only: '$only' is not mlp or cnn" >&2; exit 2 ;; esac
train=$build/apps/gw-train/gw-train
bench_need "$train"
out=${out:-$build/3lc-paper}
mkdir -p "$out"
W=4 rate=100mbit long_rate=10gbit
star=scripts/netns-star.sh
root=$(pwd)
t0=$SECONDS

# name|codec options (gw-train's and torch_ddp.py's spellings)|placement
runs=("raw|raw raw|default" "int8|int8 int8|default")
for s in 1.00 1.50 1.75 1.90; do
  for p in paper default old; do runs+=("3lc-s$s-$p|3lc:sparsity=$s 3lc:sparsity=$s|$p"); done
done

if [ "$only" != cnn ]; then
  bash "$root/scripts/fetch-data.sh" "$root/data" "$build" >&2
  bench_at_exit bash "$star" down $W
  bash "$star" down $W >/dev/null 2>&1 || true
  bash "$star" up $W "$rate" >/dev/null
  for r in "${runs[@]}"; do
    IFS='|' read -r name codecs place <<<"$r"
    read -r up down <<<"$codecs"
    opts=(--up "${up%%:*}" --down "${down%%:*}")
    [ "$up" = "${up%%:*}" ] || opts+=(--up-params "${up#*:}" --down-params "${down#*:}")
    case $place in paper) opts+=(--shard-momentum) ;; old) opts+=(--one-tensor) ;; esac
    echo "== mlp $name" >&2
    "$train" --link netns --workers $W --data "$root/data" --model mlp --hidden 64 --batch 32 \
      --lr 0.05 --momentum 0.9 --cosine --epochs "$epochs" --evals 4 --label "$name" \
      "${opts[@]}" --json >"$out/mlp.$name.jsonl.tmp" || bench_die "gw-train $name failed"
    mv "$out/mlp.$name.jsonl.tmp" "$out/mlp.$name.jsonl"
    echo "   $(tail -n 1 "$out/mlp.$name.jsonl")" >&2
  done
  bash "$star" down $W >/dev/null 2>&1 || true
fi

if [ "$only" != mlp ]; then
  plan=$out/cnn.plan
  : >"$plan"
  # float32 here is DDP's own allreduce (gloo): what a user would run
  # instead, and a baseline that is not gradwire's.
  echo "allreduce|--hook allreduce" >>"$plan"
  for r in "${runs[@]:1}"; do
    IFS='|' read -r name codecs place <<<"$r"
    read -r up down <<<"$codecs"
    line="$name|--hook gradwire --up $up --down $down"
    case $place in paper) line+=" --shard-momentum" ;; old) line+=" --one-tensor" ;; esac
    echo "$line" >>"$plan"
  done
  bash bench/torch.sh "$build" --rates "$rate" --steps "$steps" --plan "$plan" \
    --extra "--cosine --fixed --eval-every 50" --out "$out/cnn" >&2 \
    || bench_die "bench/torch.sh failed"
  if [ "$long_steps" -gt 0 ]; then
    grep -E '^(allreduce|3lc-s[0-9.]+-paper)\|' "$plan" >"$plan.long"
    bash bench/torch.sh "$build" --rates "$long_rate" --steps "$long_steps" --plan "$plan.long" \
      --extra "--cosine --fixed --eval-every $(( (long_steps + 5) / 6 ))" --out "$out/cnn-long" >&2 \
      || bench_die "bench/torch.sh (--long-steps) failed"
  fi
fi
echo "$prog: $(( SECONDS - t0 )) s" >&2

args=("$out" "$rate" --long-rate "$long_rate")
[ $json = 0 ] || args+=(--json)
python3 bench/3lc_paper_report.py "${args[@]}" allreduce "${runs[@]%%|*}"
