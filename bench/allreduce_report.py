"""bench/allreduce.sh's report: the JSON object and the human table, from
the folder its runs (bench/allreduce.py) filled.

The folder holds runs.jsonl (one line a run: id, kind gw|mpi, path, via
(the gradwire link or MPI's transport), W, variant (codec or MPI
algorithm), elems, rounds (gradwire rounds or MPI reps), rc, timeout_s,
wall_s, options), meta.json, and per run ID: ID.err (the launcher's
stderr), ID/ (gw-launch --logs) or ID.out (mpi_allreduce's JSON),
ID.net0.json and ID.net1.json (the star's counters before and after) and
ID.interfered when the star changed under the run.
"""
import json
import os
import platform
import re
import statistics
import sys

SWEEP_RULE = ("the tuned window's cell (raw, same W, window %s slots as cap) against the fastest "
              "of the fixed windows (GW_COLL_WINDOW=fixed); the issue's target: within 5%%")


class Runs:
    def __init__(self, out):
        self.out = out

    def rows(self):
        with open(os.path.join(self.out, "runs.jsonl")) as f:
            return [json.loads(line) for line in f]

    def read(self, r, ext):
        p = os.path.join(self.out, r["id"] + ext)
        if not os.path.exists(p):
            return ""
        with open(p, errors="replace") as f:
            return f.read()

    def logs(self, r, pattern):
        """The texts of gw-launch --logs files NAME matching pattern."""
        d = os.path.join(self.out, r["id"])
        names = sorted(n for n in os.listdir(d) if re.fullmatch(pattern, n)) \
            if os.path.isdir(d) else []
        return [open(os.path.join(d, n), errors="replace").read() for n in names]

    def why(self, r):
        if r["rc"] in (124, 137):
            return "timed out after %d s" % r["timeout_s"]
        err = [l for l in self.read(r, ".err").splitlines()
               if l.strip() and "TELEMETRY" not in l and "EAL:" not in l]
        return "exit %d: %s" % (r["rc"], " | ".join(err[-3:]) or "no message")

    def net(self, r, runs):
        """Per worker and allreduce: wire bytes up/down, and tbf drops."""
        a, b = (json.loads(self.read(r, ext) or "{}") for ext in (".net0.json", ".net1.json"))
        if not a or not b:
            return {}
        W = r["W"]
        up = [b.get("gwv%d.up" % i, 0) - a.get("gwv%d.up" % i, 0) for i in range(W)]
        dn = [b.get("gwv%d.down" % i, 0) - a.get("gwv%d.down" % i, 0) for i in range(W)]
        res = {"wire_bytes_up_per_worker": round(sum(up) / W / runs),
               "wire_bytes_down_per_worker": round(sum(dn) / W / runs)}
        if any(k.startswith("drops.") for k in b):
            res["tbf_drops"] = sum(b[k] - a.get(k, 0) for k in b if k.startswith("drops."))
        return res

    def interfered(self, r, cell):
        msg = self.read(r, ".interfered").strip()
        if msg:
            cell["interference"] = msg
        return cell

    def gw_cell(self, r):
        return self.interfered(r, self._gw_cell(r))

    def _gw_cell(self, r):
        W, R = r["W"], r["rounds"]
        cell = {"options": r["options"], "rounds": R, "wall_s": r["wall_s"]}
        per = {}
        for text in self.logs(r, r"w\.\d+\.out"):
            for l in text.splitlines():
                if l.startswith("{"):
                    o = json.loads(l)
                    per.setdefault(o["round"], {})[o["rank"]] = o
        if r["rc"] != 0:
            cell["error"] = self.why(r)
            return cell
        missing = [k for k in range(R) if len(per.get(k, {})) != W]
        if missing:
            cell["error"] = "round %d: %d of %d workers reported" % (
                missing[0], len(per.get(missing[0], {})), W)
            return cell
        timed = list(range(1, R)) if R > 1 else [0]
        sec = statistics.median(max(o["seconds"] for o in per[k].values()) for k in timed)
        by = statistics.median(sum(o["bytes_up"] for o in per[k].values()) / W for k in timed)
        cell.update({
            "seconds": round(sec, 6), "elems_per_s": round(r["elems"] / sec),
            "round_seconds": [round(max(o["seconds"] for o in per[k].values()), 6)
                              for k in range(R)],
            "bytes_per_worker": round(by),
            "bytes_per_worker_source": "gw-allreduce bytes_up (median over timed rounds, mean over workers)",
            "compression": round(4.0 * r["elems"] / by, 2),
            "chunk_elems": per[0][0]["chunk_elems"],
            "short_chunks": sum(o["short_chunks"] for k in per for o in per[k].values())})
        err = "".join(self.logs(r, r"w\.\d+\.err"))
        rt = [int(x) for x in re.findall(r"chunks sent, (\d+) retransmitted", err)]
        if rt:
            cell["retransmitted"] = sum(rt)
            cell["chunks_sent"] = sum(int(x) for x in re.findall(r"(\d+) chunks sent", err))
        rs = re.findall(r"\((\d+) re-sent\)", "".join(self.logs(r, r"agg\.\d+\.out")))
        if rs:
            cell["agg_results_resent"] = sum(int(x) for x in rs)
        cell.update(self.net(r, R))
        return cell

    def mpi_cell(self, r):
        return self.interfered(r, self._mpi_cell(r))

    def _mpi_cell(self, r):
        cell = {"env": r["options"], "reps": r["rounds"], "warmup": 1, "wall_s": r["wall_s"]}
        if r["rc"] != 0:
            cell["error"] = self.why(r)
            return cell
        js = [l for l in self.read(r, ".out").splitlines() if l.startswith("{")]
        if not js:
            cell["error"] = "no JSON from mpi_allreduce"
            return cell
        o = json.loads(js[-1])
        W, n = r["W"], r["elems"]
        cell.update({"seconds": o["median_s"], "elems_per_s": round(n / o["median_s"]),
                     "min_s": o["min_s"], "max_s": o["max_s"], "bus_gbit_s": o["bus_gbit_s"],
                     "bytes_per_worker": round(2.0 * (W - 1) / W * 4 * n),
                     "bytes_per_worker_source": "model: a ring's 2(W-1)/W of the tensor"})
        cell.update(self.net(r, r["rounds"] + 1))
        if "wire_bytes_up_per_worker" in cell:
            cell["bytes_per_worker"] = cell["wire_bytes_up_per_worker"]
            cell["bytes_per_worker_source"] = ("measured: IP bytes leaving each rank's veth, "
                                               "per allreduce (warm-up, barriers included)")
        return cell


def choose(tried):
    """tried: window -> cell; the fastest hand-picked window, or None."""
    ok = {int(w): c for w, c in tried.items() if "seconds" in c}
    return min(ok, key=lambda w: (ok[w]["seconds"], w)) if ok else None


def best(cells):
    ok = [(c["seconds"], k) for k, c in cells.items() if "seconds" in c]
    return min(ok) if ok else None


def ratios(res, meta):
    # gradwire link -> the MPI transport it is compared with on that path
    pairs = {"memif": "shm", "memif-sharded": "shm", "netns": "netns", "netns-colo": "netns"}
    for p in res["paths"].values():
        for link, byw in p["gradwire"].items():
            for wk, cells in byw.items():
                for codec, c in cells.items():
                    mp = best(p["mpi"].get(pairs[link], {}).get(wk, {}))
                    if "seconds" not in c or not mp:
                        continue
                    p["ratios"].setdefault(link, {}).setdefault(wk, {})[codec] = {
                        "vs": "%s/%s" % (pairs[link], mp[1]), "t_mpi": mp[0],
                        "speedup": round(mp[0] / c["seconds"], 3)}
    # The unlimited path's headline: the best gradwire link against the
    # best MPI at all.
    p, head = res["paths"]["unlimited"], {}
    for wk in ("W%d" % w for w in meta["workers"]):
        mcells = {"%s/%s" % (tr, v): c for tr, byw in p["mpi"].items()
                  for v, c in byw.get(wk, {}).items()}
        mp = best(mcells)
        for codec in meta["codecs"]:
            g = best({l: byw.get(wk, {}).get(codec, {}) for l, byw in p["gradwire"].items()})
            if g and mp:
                head.setdefault(wk, {})[codec] = {
                    "gw": g[1], "t_gw": g[0], "mpi": mp[1], "t_mpi": mp[0],
                    "speedup": round(mp[0] / g[0], 3)}
    p["ratios"]["best_vs_best"] = head


def target(res, meta, desc, pname, key, codec, bound):
    r = res["paths"][pname]["ratios"].get(key, {})
    vals = {wk: r[wk][codec]["speedup"] if codec in r.get(wk, {}) else None
            for wk in ("W%d" % w for w in meta["workers"])}
    got = [v for v in vals.values() if v is not None]
    return {"target": desc, "speedup": vals,
            "compared": {wk: r[wk][codec]["gw"] + " vs " + r[wk][codec]["mpi"]
                         if key == "best_vs_best" else "netns vs " + r[wk][codec]["vs"]
                         for wk in vals if vals[wk] is not None},
            "met": (len(got) == len(vals) and all(v >= bound for v in got)) if got else None}


def fastest(res, meta, codec):
    """Whether codec's best time on each path and W beats every other gradwire
    codec's there (each on its best link)."""
    cells = {}
    for pname, p in res["paths"].items():
        for w in meta["workers"]:
            wk = "W%d" % w
            best = {}
            for link, byw in p["gradwire"].items():
                for c, cell in byw.get(wk, {}).items():
                    if "seconds" in cell and (c not in best or cell["seconds"] < best[c][0]):
                        best[c] = (cell["seconds"], link)
            if codec in best and len(best) > 1:
                rival = min((v[0], c) for c, v in best.items() if c != codec)
                cells["%s %s" % (pname, wk)] = {
                    codec: best[codec][0], "best_other": rival[1], "other_seconds": rival[0],
                    "faster": best[codec][0] < rival[0]}
    got = [c["faster"] for c in cells.values()]
    return {"target": "%s faster than every other gradwire codec on every path" % codec,
            "cells": cells, "met": all(got) if got else None}


def report(out):
    runs = Runs(out)
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    res = {"tool": "bench/allreduce.sh", "quick": meta["quick"], "elems": meta["elems"],
           "tensor_bytes": 4 * meta["elems"], "workers": meta["workers"],
           "codecs": meta["codecs"],
           "machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                       "load_avg_start": meta["load0"],
                       "load_avg_end": [round(x, 2) for x in os.getloadavg()],
                       "mpi": meta["mpi_version"]},
           "timing": ("gradwire: median over rounds 1..R-1 of the slowest worker's "
                      "seconds (round 0 is a warm-up); MPI: mpi_allreduce's median over "
                      "--reps after one warm-up, each rep its slowest rank's time"),
           "paths": {p: {"rate": None if p == "unlimited" else p,
                         "gradwire": {}, "mpi": {}, "ratios": {}}
                     for p in ("unlimited", "1gbit", "100mbit")},
           "window": meta.get("window"), "window_check": {}}
    for r in runs.rows():
        p = res["paths"][r["path"]]
        if r["kind"] == "gw" and r["id"].startswith("wcheck"):
            key = "%s_%s" % (r["path"], r["via"])
            c = runs.gw_cell(r)
            sw = res["window_check"].setdefault(key, {
                "link": r["via"], "W": r["W"], "codec": r["variant"], "elems": r["elems"],
                "rounds": r["rounds"], "tried": {}})
            win = re.search(r"--window (\d+)", r["options"]).group(1)
            sw["tried"][win] = ({"seconds": c["seconds"], "retransmitted": c.get("retransmitted"),
                                 "bytes_per_worker": c["bytes_per_worker"]}
                                if "seconds" in c else {"error": c["error"]})
        elif r["kind"] == "gw":
            p["gradwire"].setdefault(r["via"], {}).setdefault(
                "W%d" % r["W"], {})[r["variant"]] = runs.gw_cell(r)
        else:
            p["mpi"].setdefault(r["via"], {}).setdefault(
                "W%d" % r["W"], {})["mpi_" + r["variant"]] = runs.mpi_cell(r)
    for key, sw in res["window_check"].items():
        win = choose(sw["tried"])
        tuned = res["paths"][key.split("_")[0]]["gradwire"].get(sw["link"], {}).get(
            "W%d" % sw["W"], {}).get("raw", {})
        sw["best_fixed"] = win
        sw["tuned"] = ({"seconds": tuned["seconds"], "retransmitted": tuned.get("retransmitted")}
                       if "seconds" in tuned else {"error": tuned.get("error", "no run")})
        if win is not None and "seconds" in tuned:
            r = tuned["seconds"] / sw["tried"][str(win)]["seconds"]
            sw["tuned_over_best_fixed"] = round(r, 3)
            sw["within_5pct"] = r <= 1.05
        sw["rule"] = SWEEP_RULE % meta.get("window")
    ratios(res, meta)
    res["targets"] = {
        "raw_ge_2x_mpi_unlimited": target(
            res, meta, "raw at least 2x MPI on the unlimited path (best gradwire link vs best "
            "MPI there, shared memory included)", "unlimited", "best_vs_best", "raw", 2.0),
        "raw_ge_2x_mpi_unlimited_star": target(
            res, meta, "the same, like for like on the unlimited star (gradwire netns vs MPI TCP)",
            "unlimited", "netns", "raw", 2.0),
        "3lc_ge_10x_mpi_1gbit": target(
            res, meta, "3lc at least 10x MPI on the 1 Gbit/s path", "1gbit", "netns", "3lc", 10.0),
        "hq_ge_1x_mpi_unlimited": target(
            res, meta, "hq at least MPI on the unlimited path (best gradwire link vs best MPI "
            "there, shared memory included)", "unlimited", "best_vs_best", "hq", 1.0),
        "hq_fastest_codec": fastest(res, meta, "hq")}
    res["run_seconds"] = meta["run_seconds"]
    res["notes"] = list(meta["notes"])
    hit = sorted(r["id"] for r in runs.rows() if runs.read(r, ".interfered"))
    if hit:
        res["notes"].append("the star was torn down or replaced by someone else during or before "
                            "%d runs (%s): those cells are not to be trusted"
                            % (len(hit), ", ".join(hit)))
    return res, meta


def f(v, fmt):
    return fmt % v if isinstance(v, (int, float)) else "-"


ROW = "%-9s %-3s %-22s %10s %12s %12s %7s %9s %8s  %s"


def row(e, pname, w, what, c, retx, speedup, note):
    print(ROW % (pname, w, what, f(c.get("seconds"), "%.4f"),
                 f(c.get("elems_per_s", None) and c["elems_per_s"] / 1e6, "%.1f"),
                 f(c.get("bytes_per_worker"), "%d"), retx, f(c.get("tbf_drops"), "%d"),
                 speedup, note[:90]), file=e)


def table(res, meta, e=sys.stderr):
    print("\nallreduce of %d float32 (%.1f MB), W in %s, %s" % (
        meta["elems"], 4 * meta["elems"] / 1e6, meta["workers"],
        "quick run" if meta["quick"] else "full run"), file=e)
    for key, sw in res["window_check"].items():
        print("window check %s (W=%d %s, %d elems): fixed %s; tuned %s -> %s x the best" % (
            key, sw["W"], sw["codec"], sw["elems"],
            ", ".join("%s: %s" % (w, "%.3f s %s retx" % (v["seconds"], v.get("retransmitted"))
                                  if "seconds" in v else "error")
                      for w, v in sw["tried"].items()),
            "%.3f s %s retx" % (sw["tuned"]["seconds"], sw["tuned"].get("retransmitted"))
            if "seconds" in sw["tuned"] else "error",
            sw.get("tuned_over_best_fixed", "-")), file=e)
    for pname, p in res["paths"].items():
        if not p["gradwire"] and not p["mpi"]:
            continue
        print("\n" + ROW % ("path", "W", "what", "seconds", "Melem/s", "bytes/wkr", "retx",
                            "drops", "speedup", "note"), file=e)
        for w in meta["workers"]:
            wk = "W%d" % w
            for link, byw in p["gradwire"].items():
                for codec, c in byw.get(wk, {}).items():
                    sp = p["ratios"].get(link, {}).get(wk, {}).get(codec, {})
                    note = c.get("error", "") or ("vs %s" % sp["vs"] if sp else "no MPI to compare")
                    if "interference" in c:
                        note = "INTERFERED: " + note
                    row(e, pname, w, "gw %s %s" % (link, codec), c,
                        f(c.get("retransmitted"), "%d"), f(sp.get("speedup"), "%.2fx"), note)
            for tr, byw in p["mpi"].items():
                for v, c in byw.get(wk, {}).items():
                    row(e, pname, w, "%s %s" % (v, tr), c, "-", "",
                        ("INTERFERED: " if "interference" in c else "") + c.get("error", ""))
        if pname == "unlimited":
            for wk, cs in p["ratios"].get("best_vs_best", {}).items():
                print("unlimited %s best vs best: %s" % (wk, ", ".join(
                    "%s %.2fx (%s vs %s)" % (k, v["speedup"], v["gw"], v["mpi"])
                    for k, v in cs.items())), file=e)
    print("\ntargets:", file=e)
    for t in res["targets"].values():
        detail = (", ".join("%s %s" % (wk, f(v, "%.2fx")) for wk, v in t["speedup"].items())
                  if "speedup" in t else
                  ", ".join("%s %s" % (k, "yes" if c["faster"] else "no (%s)" % c["best_other"])
                            for k, c in t["cells"].items()))
        print("  %-62s %s  %s" % (t["target"][:62], {True: "MET", False: "NOT MET", None: "n/a"}[t["met"]],
              detail), file=e)
    print("run time %d s; load average %s -> %s" % (
        meta["run_seconds"], meta["load0"], res["machine"]["load_avg_end"]), file=e)
    for n in res["notes"]:
        print("note: " + n, file=e)
