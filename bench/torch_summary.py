"""Summarises bench/torch.sh's runs: torch_summary.py OUT [--json] [--quick]

Reads OUT/RATE.NAME.json (bench/torch_ddp.py's records), and per link:
the target (the default allreduce's final accuracy less 0.5 points), each
run's final accuracy, time to the target (training seconds at the first
evaluation at or above it), mean step time and its ratio to the no-op
floor, CPU per step of rank 0 (its training thread, and every other
thread: gradwire's, gloo's), bytes its interface sent and received per
rank. It checks the targets: on every link the best gradwire run
reaches the target no later than the best PyTorch option (the default
allreduce included) and gradwire raw's step is no longer than the
default allreduce's; at 100 Mbit/s the best gradwire run is at least
10x sooner than the default allreduce; at 100 Mbit/s and 1 Gbit/s
3LC's step is within 1.4x of the floor. Writes
OUT/torch-results.md (the table), OUT/torch-results.json and two gnuplot
PNGs per link (accuracy against training time, and against bytes sent),
and prints one line per run (or, with --json, the JSON object).
"""
import glob
import json
import os
import subprocess
import sys

TORCH_HOOKS = ("fp16", "powersgd")


def load(out):
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        if os.path.basename(path) == "torch-results.json":
            continue
        d = json.load(open(path))
        runs.setdefault(d["config"]["label"], {})[d["config"]["name"]] = d
    return runs


def rate_bits(label):
    if label == "unlimited":
        return float("inf")
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for u, m in units.items():
        if label.endswith(u):
            return float(label[:-len(u)]) * m
    return 0.0


def summarise(runs):
    links = []
    for label in sorted(runs, key=rate_bits):
        rs = runs[label]
        base = rs.get("allreduce")
        floor = rs.get("noop")
        target = base["final_acc"] - 0.005 if base else None
        rows = []
        for name, d in rs.items():
            ttt = None
            if target is not None and name != "noop":   # its replicas diverge
                ttt = next((r["train_s"] for r in d["records"]
                            if r["acc"] is not None and r["acc"] >= target), None)
            last = d["records"][-1]
            cfg = d["config"]
            if ttt is not None:
                stop = "target"
            elif d.get("diverged"):
                stop = "diverged"
            elif cfg.get("max_train_s") and d["train_s"] >= cfg["max_train_s"]:
                stop = "time cap %.0f s" % cfg["max_train_s"]
            else:
                stop = "%d steps" % cfg["steps"]
            rows.append({
                "name": name, "hook": d["config"]["hook"], "final_acc": d["final_acc"],
                "time_to_target_s": ttt, "step_ms": 1e3 * d["step_s"],
                "over_floor": d["step_s"] / floor["step_s"] if floor else None,
                "tx_mb": None if last["tx_bytes"] is None else last["tx_bytes"] / 1e6,
                "rx_mb": None if last["rx_bytes"] is None else last["rx_bytes"] / 1e6,
                "train_s": d["train_s"], "steps": d["config"]["steps"], "stopped": stop,
                "gradwire_up_mb": d["gradwire"]["bytes_up"] / 1e6 if d.get("gradwire") else None,
                "main_cpu_ms": 1e3 * d["main_cpu_step_s"] if "main_cpu_step_s" in d else None,
                "other_cpu_ms": (1e3 * (d["cpu_step_s"] - d["main_cpu_step_s"])
                                 if "main_cpu_step_s" in d else None),
            })
        order = ["noop", "allreduce"]
        rows.sort(key=lambda r: (order.index(r["name"]) if r["name"] in order else 2,
                                 r["hook"] != "fp16", r["hook"] != "powersgd", r["name"]))

        def best(pred):
            c = [r for r in rows if pred(r) and r["time_to_target_s"] is not None]
            return min(c, key=lambda r: r["time_to_target_s"]) if c else None
        gw = best(lambda r: r["hook"] == "gradwire")
        th = best(lambda r: r["hook"] in TORCH_HOOKS or r["name"] == "allreduce")
        base_row = next((r for r in rows if r["name"] == "allreduce"), None)
        raw = next((r for r in rows if r["name"] == "gw-raw"), None)
        tlc = next((r for r in rows if r["name"] == "gw-3lc-s1.0"), None)
        checks = {}
        if gw and base_row and base_row["time_to_target_s"]:
            checks["speedup_vs_allreduce"] = base_row["time_to_target_s"] / gw["time_to_target_s"]
        if gw and th:
            checks["no_later_than_best_torch"] = gw["time_to_target_s"] <= th["time_to_target_s"]
        elif th and not gw:
            checks["no_later_than_best_torch"] = False
        if raw and base_row:
            checks["raw_step_over_allreduce"] = raw["step_ms"] / base_row["step_ms"]
        if tlc and tlc["over_floor"] is not None:
            checks["3lc_step_over_floor"] = tlc["over_floor"]
        if gw:
            checks["best_gradwire_over_floor"] = gw["over_floor"]
        links.append({"link": label, "target_acc": target, "rows": rows,
                      "best_gradwire": gw and gw["name"], "best_torch_hook": th and th["name"],
                      "checks": checks})
    return links


def fmt(v, f="%.2f"):
    return "—" if v is None else f % v


def table(links):
    out = []
    for L in links:
        out.append("### %s (target %s%%)\n" % (L["link"], fmt(L["target_acc"] and 100 * L["target_acc"])))
        out.append("| run | final acc (%) | time to target (s) | stopped at | step (ms) | "
                   "step / floor | CPU ms / step: training, other threads | "
                   "MB sent / rank | MB received / rank |")
        out.append("|---|---:|---:|---|---:|---:|---:|---:|---:|")
        for r in L["rows"]:
            out.append("| %s | %s | %s | %s | %s | %s | %s, %s | %s | %s |" % (
                r["name"], fmt(100 * r["final_acc"]), fmt(r["time_to_target_s"], "%.1f"),
                r["stopped"],
                fmt(r["step_ms"], "%.1f"), fmt(r["over_floor"]),
                fmt(r.get("main_cpu_ms"), "%.1f"), fmt(r.get("other_cpu_ms"), "%.1f"),
                fmt(r["tx_mb"], "%.1f"), fmt(r["rx_mb"], "%.1f")))
        c = L["checks"]
        out.append("")
        out.append("Best gradwire: %s; best PyTorch option: %s. %s" % (
            L["best_gradwire"] or "none reached the target", L["best_torch_hook"] or "none",
            "; ".join("%s = %s" % (k, fmt(v) if not isinstance(v, bool) else v)
                      for k, v in c.items())))
        out.append("")
    return "\n".join(out)


def plots(out, runs):
    made = []
    for label, rs in runs.items():
        for what, col, xl in (("time", "train_s", "training time (s)"),
                              ("bytes", "tx_bytes", "MB sent per rank")):
            dat = os.path.join(out, "plot.%s.%s.dat" % (label, what))
            with open(dat, "w") as f:
                for name, d in sorted(rs.items()):
                    if name == "noop":
                        continue   # diverged replicas: its accuracy means nothing
                    f.write('"%s"\n' % name)
                    for r in d["records"]:
                        x = r[col]
                        if x is None:
                            continue
                        f.write("%g %g\n" % (x / 1e6 if col == "tx_bytes" else x, 100 * r["acc"]))
                    f.write("\n\n")
            png = os.path.join(out, "torch-%s-%s.png" % (label, what))
            n = len([k for k in rs if k != "noop"])
            script = ("set terminal pngcairo size 1000,600 noenhanced\nset output '%s'\n"
                      "set title 'Fashion-MNIST CNN, W = 4, %s links'\nset xlabel '%s'\n"
                      "set ylabel 'test accuracy (%%)'\nset key outside right\nset logscale x\n"
                      "set grid\nplot for [i=0:%d] '%s' index i using 1:2 with linespoints "
                      "title columnheader(1)\n" % (png, label, xl, n - 1, dat))
            try:
                subprocess.run(["gnuplot"], input=script, text=True, check=True,
                               stderr=subprocess.DEVNULL)
                made.append(png)
            except (OSError, subprocess.CalledProcessError):
                pass
    return made


def main():
    out = sys.argv[1]
    as_json = "--json" in sys.argv[2:]
    runs = load(out)
    if not runs:
        sys.exit("torch_summary.py: no runs in %s" % out)
    links = summarise(runs)
    pngs = plots(out, runs)
    md = table(links)
    open(os.path.join(out, "torch-results.md"), "w").write(md + "\n")
    res = {"tool": "bench/torch.sh", "links": links, "plots": pngs}
    json.dump(res, open(os.path.join(out, "torch-results.json"), "w"), indent=1)
    if as_json:
        print(json.dumps(res))
        return
    for L in links:
        for r in L["rows"]:
            print("%-9s %-18s acc %6s%%  to target %7s s  %8s MB sent/rank  step %6s ms  "
                  "CPU %s + %s ms/step" % (
                      L["link"], r["name"], fmt(100 * r["final_acc"]),
                      fmt(r["time_to_target_s"], "%.1f"), fmt(r["tx_mb"], "%.1f"),
                      fmt(r["step_ms"], "%.1f"), fmt(r.get("main_cpu_ms"), "%.1f"),
                      fmt(r.get("other_cpu_ms"), "%.1f")))
    print("table: %s" % os.path.join(out, "torch-results.md"))
    print("plot: %s" % (pngs[0] if pngs else "(gnuplot failed)"))


if __name__ == "__main__":
    main()
