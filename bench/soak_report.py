#!/usr/bin/env python3
"""bench/soak.sh's checks and plot, from its logs: soak_report.py OUT
REL_RC TOL_RC N_REL N_TOL JSON. Prints one JSON object (and, without JSON,
a line per check on stderr), writes OUT/soak.json and OUT/soak.png, exits
1 if a check failed."""
import glob
import json
import os
import re
import subprocess
import sys

out, rel_rc, tol_rc, n_rel, n_tol, as_json = sys.argv[1:7]
rel_rc, tol_rc, n_rel, n_tol = int(rel_rc), int(tol_rc), int(n_rel), int(n_tol)
W = 4
fails = []


def lines(path):
    rounds, stats, final = [], [], None
    try:
        text = open(path).read().splitlines()
    except OSError:
        return rounds, stats, final
    for l in text:
        if not l.startswith("{"):
            continue
        try:
            o = json.loads(l)
        except ValueError:
            continue
        if o.get("kind") == "stats":
            stats.append(o)
        elif "job_round" in o:
            rounds.append(o)
        elif o.get("tool") == "gw-aggregator" and "ups" in o:
            final = o
    return rounds, stats, final


# ---- reliable: identical replicas, a falling loss ----
rel = [lines(os.path.join(out, "rel_w%d.out" % r)) for r in range(W)]
by_round = {}
for r, (rounds, _, _) in enumerate(rel):
    for o in rounds:
        by_round.setdefault(o["job_round"], {})[r] = o["params"]
complete = [k for k, v in by_round.items() if len(v) == W]
mismatch = [k for k in complete if len(set(by_round[k].values())) != 1]
loss = [o["loss"] for o in rel[0][0]]
reliable = {"rounds": n_rel, "rounds_reported": len(rel[0][0]), "identical_rounds": len(complete),
            "mismatched_rounds": len(mismatch), "loss_first": loss[0] if loss else None,
            "loss_last": loss[-1] if loss else None, "exit_ok": rel_rc == 0}
if rel_rc != 0 or len(complete) != n_rel:
    fails.append("reliable: %d of %d rounds reported by every rank (exit ok: %s)"
                 % (len(complete), n_rel, rel_rc == 0))
if mismatch:
    fails.append("reliable: replicas differ at rounds %s" % mismatch[:5])
if not loss or not loss[-1] < loss[0]:
    fails.append("reliable: the loss did not fall")

# ---- counters of the reliable phase: sent = received + counted losses ----
def last(stats):
    return stats[-1] if stats else {}

_, agg_stats, agg_final = lines(os.path.join(out, "agg.rel.out"))
a = last(agg_stats)
ws = [last(s) for _, s, _ in rel]
# rx_pkts counts every datagram the socket gave the backend; the
# impairment layer then drops, duplicates and corrupts above it (counted
# apart). So: sent = rx_pkts + what the kernel dropped, to within the
# packets sent after a receiver's last line (goodbyes, a heartbeat).
tol_pkts = 16 + 4 * W
up_sent = sum(w.get("tx_pkts", 0) for w in ws)
up_seen = a.get("rx_pkts", 0) + a.get("rx_dropped", 0)
down_sent = a.get("tx_pkts", 0)
down_seen = sum(w.get("rx_pkts", 0) + w.get("rx_dropped", 0) for w in ws)
counters = {"up": {"sent": up_sent, "accounted": up_seen, "diff": up_sent - up_seen},
            "down": {"sent": down_sent, "accounted": down_seen, "diff": down_sent - down_seen},
            "tolerance": tol_pkts,
            "shard_impair": {k: a.get("impair_" + k, 0) for k in ("lost", "duplicated",
                                                                   "corrupted")},
            "shard_rejected_corrupt": a.get("corrupt", 0),
            "shard_rx_dropped": a.get("rx_dropped", 0)}
for d in ("up", "down"):
    if not ws[0] or abs(counters[d]["diff"]) > tol_pkts:
        fails.append("counters %s: %d sent, %d received or counted lost" %
                     (d, counters[d]["sent"], counters[d]["accounted"]))

# ---- loss-tolerant: survivors, restarts, the shard's view ----
tol = {}
surv = [lines(os.path.join(out, "tol_w%d.out" % r))[0] for r in (0, 1, 3)]
rejoined = []
for k in (1, 2):
    m = re.search(r"rejoins the job at round (\d+)",
                  open(os.path.join(out, "tol_w2_r%d.err" % k)).read()
                  if os.path.exists(os.path.join(out, "tol_w2_r%d.err" % k)) else "")
    rejoined.append(int(m.group(1)) if m else None)
_, _, tfinal = lines(os.path.join(out, "agg.tol.out"))
tol = {"rounds": n_tol, "survivor_rounds": [len(s) for s in surv], "rejoined_at": rejoined,
       "gone": (tfinal or {}).get("gone"), "back": (tfinal or {}).get("back"),
       "exit_ok": tol_rc == 0,
       "loss_last": surv[0][-1]["loss"] if surv[0] else None}
if tol_rc != 0 or any(n != n_tol for n in tol["survivor_rounds"]):
    fails.append("loss-tolerant: survivors ran %s of %d rounds (exit ok: %s)"
                 % (tol["survivor_rounds"], n_tol, tol_rc == 0))
if any(r is None or r == 0 for r in rejoined):
    fails.append("loss-tolerant: restarts rejoined at %s" % rejoined)
if (tfinal or {}).get("back", 0) < 2:
    fails.append("loss-tolerant: the shard saw %s workers back" % (tfinal or {}).get("back"))

# ---- RSS: flat after warm-up ----
samples = {}
try:
    for l in open(os.path.join(out, "rss.tsv")):
        t, pid, name, kb = l.split("\t")
        samples.setdefault((pid, name), []).append((float(t), int(kb)))
except OSError:
    pass
per = []
for (pid, name), s in sorted(samples.items(), key=lambda x: x[1][0][0]):
    if len(s) < 10 or name.startswith("cal"):
        continue
    t0, t1 = s[0][0], s[-1][0]
    warm = t0 + max(0.2 * (t1 - t0), 5.0)
    after = [kb for t, kb in s if t >= warm]
    base, peak = after[0], max(after)
    g = 100.0 * (peak - base) / base
    per.append({"name": name, "pid": int(pid), "samples": len(s), "base_kb": base,
                "peak_kb": peak, "growth_pct": round(g, 2)})
    # A process that lived less than 20 s is reported, not judged: its
    # warm-up is most of its life.
    per[-1]["judged"] = t1 - t0 >= 20.0
    if g >= 5.0 and per[-1]["judged"]:
        fails.append("RSS: %s grew %.1f %% after warm-up (%d -> %d kB)" % (name, g, base, peak))
rss = {"max_growth_pct": max((p["growth_pct"] for p in per if p["judged"]), default=None),
       "per_process": per}

# ---- plot ----
png = os.path.join(out, "soak.png")
try:
    with open(os.path.join(out, "plot_rss.dat"), "w") as f:
        for (pid, name), s in samples.items():
            if name.startswith("cal"):
                continue
            for t, kb in s:
                f.write("%s %.1f %.3f\n" % (name, t, kb / 1024.0))
    with open(os.path.join(out, "plot_rounds.dat"), "w") as f:
        t = 0.0
        for phase, rounds in (("reliable", rel[0][0]), ("tolerant", surv[0])):
            for o in rounds:
                t += o["seconds"]
                f.write("%s %.3f %.6f %.6g\n" % (phase, t, o["seconds"] * 1e3, o["loss"]))
    script = """set terminal pngcairo size 900,900
set output '%s'
set multiplot layout 3,1
set title 'RSS of every process (MB)'
set xlabel 'seconds'
plot '%s' using 2:3 with dots notitle
set title 'step time, rank 0 (ms), reliable then loss-tolerant'
set xlabel 'seconds in calls'
plot '%s' using 2:3 with lines notitle
set title 'loss, rank 0'
set logscale y
plot '%s' using 2:4 with lines notitle
unset multiplot
""" % (png, os.path.join(out, "plot_rss.dat"), os.path.join(out, "plot_rounds.dat"),
       os.path.join(out, "plot_rounds.dat"))
    subprocess.run(["gnuplot"], input=script, text=True, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
except (OSError, subprocess.CalledProcessError):
    png = None

result = {"tool": "bench/soak.sh", "reliable": reliable, "loss_tolerant": tol,
          "counters": counters, "rss": rss, "plot": png, "failed": fails,
          "ok": not fails}
text = json.dumps(result)
open(os.path.join(out, "soak.json"), "w").write(text + "\n")
print(text if as_json == "1" else json.dumps(result, indent=1))
for f in fails:
    print("soak: FAIL: " + f, file=sys.stderr)
sys.exit(1 if fails else 0)
