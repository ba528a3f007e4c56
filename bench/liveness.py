"""The runs of bench/liveness.sh (which says what they measure): each cell
a gw-launch job over memif with every process's liveness counters, the
last report of each process kept; then the JSON object and the table.

    python3 bench/liveness.py BUILD_DIR ELEMS RUNS OUTFILE   (from the source root)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

PROG = "bench/liveness.sh"
CELLS = [  # name, shards, codec
    ("memif W=4 S=1 3lc", 1, "3lc"),
    ("memif-sharded W=4 S=4 raw", 4, "raw"),
]
KEYS = ["hb_late_p50_us", "hb_late_p99_us", "hb_late_max_us", "gap_p50_us", "gap_p99_us",
        "gap_p999_us", "gap_max_us", "suspected", "cleared", "probes_sent", "never_up",
        "hb_sent", "gaps"]


def last_stats(path):
    """The last "kind":"stats" line of a process's stdout."""
    last = None
    try:
        with open(path) as f:
            for line in f:
                if '"kind":"stats"' in line:
                    try:
                        last = json.loads(line)
                    except ValueError:
                        pass
    except OSError:
        pass
    return last


def run_cell(build, elems, shards, codec):
    logs = tempfile.mkdtemp(prefix="gw-liveness.")
    cmd = [os.path.join(build, "apps", "gw-launch"), "--link", "memif", "--workers", "4",
           "--shards", str(shards), "--dim", str(elems), "--up", codec, "--down", codec,
           "--window", "256", "--stats-interval", "250", "--timeout", "300", "--quiet",
           "--logs", logs, "--", os.path.join(build, "apps", "gw-allreduce"),
           "--no-verify", "--rounds", "4"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - t0
    procs = {}
    for w in range(4):
        procs["worker %d" % w] = last_stats(os.path.join(logs, "w.%d.out" % w))
    for s in range(shards):
        procs["shard %d" % s] = last_stats(os.path.join(logs, "agg.%d.out" % s))
    res = {"rc": p.returncode, "seconds": round(took, 2), "processes": {}}
    if p.returncode != 0:
        res["error"] = p.stderr.strip().splitlines()[-3:]
    for name, st in procs.items():
        res["processes"][name] = {k: st.get(k) for k in KEYS} if st else None
    subprocess.run(["rm", "-rf", logs])
    return res


def summary(runs, role):
    """Over every process of a role in every run: the worst of each."""
    out = {}
    for k in KEYS:
        vals = [pr[k] for r in runs for n, pr in r["processes"].items()
                if pr and n.startswith(role) and pr.get(k) is not None]
        if vals:
            out[k] = max(vals) if not k.endswith("_p50_us") else sorted(vals)[len(vals) // 2]
    return out


def main():
    build, elems, nruns, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    result = {"bench": "liveness", "elems": elems, "runs": nruns, "cells": {}}
    failed = False
    for name, shards, codec in CELLS:
        runs = []
        for i in range(nruns):
            print("%s: %s, run %d of %d" % (PROG, name, i + 1, nruns), file=sys.stderr,
                  flush=True)
            r = run_cell(build, elems, shards, codec)
            failed |= r["rc"] != 0
            runs.append(r)
        result["cells"][name] = {"runs": runs, "workers": summary(runs, "worker"),
                                 "shards": summary(runs, "shard"),
                                 "failed": sum(r["rc"] != 0 for r in runs)}
    text = json.dumps(result)
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    ms = lambda us: "-" if us is None else "%.1f" % (us / 1000.0)
    print("\n%-28s %-8s %6s | %8s %8s %8s | %8s %8s %8s %8s | %4s %4s" %
          ("cell", "role", "failed", "late p50", "p99", "max", "gap p50", "p99", "p99.9", "max",
           "susp", "clr"), file=sys.stderr)
    for name, c in result["cells"].items():
        for role in ("workers", "shards"):
            s = c[role]
            print("%-28s %-8s %6d | %8s %8s %8s | %8s %8s %8s %8s | %4s %4s" %
                  (name, role, c["failed"], ms(s.get("hb_late_p50_us")),
                   ms(s.get("hb_late_p99_us")), ms(s.get("hb_late_max_us")),
                   ms(s.get("gap_p50_us")), ms(s.get("gap_p99_us")), ms(s.get("gap_p999_us")),
                   ms(s.get("gap_max_us")), s.get("suspected", "-"), s.get("cleared", "-")),
                  file=sys.stderr)
    print("(ms; late: this process's heartbeats after their time; gap: between a "
          "peer's packets; worst process over %d runs, p50 their median)" % nruns,
          file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
