"""The tables of bench/3lc-paper.sh (docs/3lc-paper.md) from its runs:

  3lc_paper_report.py OUT RATE [--json] [--long-rate R] NAME...

OUT/mlp.NAME.jsonl (gw-train --json), OUT/cnn/RATE.NAME.json
(bench/torch_ddp.py) and, where --long-steps ran, OUT/cnn-long/R.NAME.json
(the longer schedule, its own float32 baseline). Per run: final test accuracy and its difference
from raw's, the training time to raw's final accuracy less 0.5 points,
and bits per value up and down: the bytes one worker sent and received
(gw-train: UDP payloads; the CNN: its interface's, IP and UDP headers
and gloo's few bytes included) x 8 over steps x parameters."""
import json
import os
import sys

MLP_DIM = 784 * 64 + 64 + 64 * 10 + 10


def mlp_run(path):
    recs = [json.loads(line) for line in open(path) if line.strip()]
    pts = [r for r in recs if not r.get("summary") and "test_acc" in r]
    last = pts[-1]
    steps = max(last["step"], 1)
    return {"final": last["test_acc"], "diverged": last["test_acc"] < 20,
            "curve": [(r["time_s"], r["test_acc"]) for r in pts],
            "up": 8.0 * last["bytes_up"] / (steps * MLP_DIM),
            "down": 8.0 * last["bytes_down"] / (steps * MLP_DIM)}


def cnn_run(path):
    d = json.load(open(path))
    recs = d["records"]
    last = recs[-1]
    steps, dim = max(last["step"], 1), d["config"]["dim"]
    bits = lambda k: None if last.get(k) is None else 8.0 * last[k] / (steps * dim)
    return {"final": 100 * d["final_acc"], "diverged": d["diverged"],
            "curve": [(r["train_s"], 100 * r["acc"]) for r in recs],
            "up": bits("tx_bytes"), "down": bits("rx_bytes")}


def time_to(curve, target):
    for t, a in curve:
        if a >= target:
            return t
    return None


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    args = [a for a in args if a != "--json"]
    long_rate = "10gbit"
    if "--long-rate" in args:
        i = args.index("--long-rate")
        long_rate = args[i + 1]
        del args[i:i + 2]
    out, rate, names = args[0], args[1], args[2:]
    rates = {"mlp": rate, "cnn": rate, "cnn-long": long_rate}
    rows = []
    for wl in ("mlp", "cnn", "cnn-long"):
        runs = {}
        for n in names:
            p = (os.path.join(out, "mlp.%s.jsonl" % n) if wl == "mlp"
                 else os.path.join(out, wl, "%s.%s.json" % (rates[wl], n)))
            if os.path.exists(p):
                runs[n] = (mlp_run if wl == "mlp" else cnn_run)(p)
        # float32: gradwire raw, or (the CNN) DDP's own allreduce
        base = "raw" if "raw" in runs else "allreduce" if "allreduce" in runs else None
        if base is None:
            continue
        target = runs[base]["final"] - 0.5
        for n, r in runs.items():
            codec, _, place = n.partition("-s")
            codec = "float32 (DDP)" if n == "allreduce" else codec
            s, _, place = place.partition("-") if codec == "3lc" else ("", "", "")
            rows.append({"workload": wl, "run": n, "codec": codec, "s": s or None,
                         "placement": place or ("default" if codec == "3lc" else None),
                         "final_acc": r["final"], "delta": r["final"] - runs[base]["final"],
                         "diverged": r["diverged"], "target": target,
                         "time_to_target_s": time_to(r["curve"], target),
                         "bits_up": r["up"], "bits_down": r["down"]})
    if as_json:
        for r in rows:
            print(json.dumps(dict(r, tool="bench/3lc-paper.sh", rate=rates[r["workload"]])))
        return
    f = lambda v, fmt: "—" if v is None else fmt % v
    for wl in ("mlp", "cnn", "cnn-long"):
        mine = [r for r in rows if r["workload"] == wl]
        if not mine:
            continue
        print("\n%s, W = 4, %s (target: raw's final accuracy less 0.5 = %.2f%%)\n"
              % (wl, rates[wl], mine[0]["target"]))
        print("| codec | s | placement | final acc. % | vs raw (points) | time to target (s) "
              "| bits/value up | bits/value down |")
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in mine:
            print("| %s | %s | %s | %.2f%s | %+.2f | %s | %s | %s |" % (
                r["codec"], r["s"] or "", r["placement"] or "", r["final_acc"],
                " (diverged)" if r["diverged"] else "", r["delta"],
                f(r["time_to_target_s"], "%.1f"), f(r["bits_up"], "%.3f"),
                f(r["bits_down"], "%.3f")))


if __name__ == "__main__":
    main()
