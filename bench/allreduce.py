"""The runs of bench/allreduce.sh, which parses the command line and says
what they measure: per path, the star of scripts/netns-star.sh at its
rate, gradwire through gw-launch (the window tuned by the protocol;
with --window-check also hand-picked fixed windows to compare) and MPI through
bench/mpi_netns.sh, each run bounded in time. Every run leaves its files
in a folder from which allreduce_report.py makes the JSON object (stdout,
and --out) and the table (stderr).

    python3 bench/allreduce.py BUILD_DIR ELEMS QUICK OUTFILE WCHECK   (from the source root)

QUICK is 1 for --quick, else 0; OUTFILE is "" without --out; WCHECK is 1
for --window-check.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import allreduce_report

PROG = "bench/allreduce.sh"
STAR = "scripts/netns-star.sh"
NLEAF = 4
CODECS = ["raw", "int8", "3lc", "hq"]
# Slots per shard, the most a worker's self-tuned window reaches
# (collective/coll_window.h); the same on every path.
WINDOW = 256
# --window-check: the hand-picked windows (GW_COLL_WINDOW=fixed) the
# tuned one is compared with, raw at the largest W.
WINDOWS = {"memif": [64, 256, 512], "netns": [16, 32, 64, 256]}
NET_OPTS = ["--opts", "payload=8972"]
RING_ENV = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
            "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}


def log(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)


def timeout_for(path, elems):
    """Seconds a run may take on PATH (16M elements: 227, 339, 479 s)."""
    return 60 + elems // {"unlimited": 100000, "1gbit": 60000, "100mbit": 40000}[path]


def star_id():
    try:
        return os.stat("/var/run/netns/gwhub").st_ino
    except OSError:
        return None


class Bench:
    def __init__(self, build, elems, out, wcheck=False):
        self.build, self.elems, self.out = build, elems, out
        self.launch = os.path.join(build, "apps", "gw-launch")
        self.worker = os.path.join(build, "apps", "gw-allreduce")
        self.child = None
        self.star = None   # the inode of the star this path made
        self.notes = []
        self.wcheck = wcheck
        if not os.access(os.path.join(build, "bench", "mpi_allreduce"), os.X_OK):
            self.mpi_note = os.path.join(build, "bench", "mpi_allreduce") + " not built"
        elif not shutil.which("mpirun"):
            self.mpi_note = "mpirun not found"
        else:
            self.mpi_note = ""

    def run(self, cmd, out, err, tmo, env=None):
        """CMD with its output in OUT and ERR: (exit status, wall seconds).
        CMD bounds itself by TMO; 30 s more and it is killed (137)."""
        t0 = time.time()
        with open(out, "w") as o, open(err, "w") as e:
            self.child = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                          env=env)
            try:
                rc = self.child.wait(timeout=tmo + 30)
            except subprocess.TimeoutExpired:
                self.child.kill()
                self.child.wait()
                rc = 137
        self.child = None
        return (128 - rc if rc < 0 else rc), round(time.time() - t0, 2)

    def stop(self):
        if self.child:
            self.child.terminate()
            try:
                self.child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.child.kill()

    def record(self, **r):
        with open(os.path.join(self.out, "runs.jsonl"), "a") as f:
            f.write(json.dumps(r) + "\n")

    def snap(self, name):
        """Byte counters of the star's hub ports (gwvI: up = what worker I
        sent, down = what it was sent) and the drops of every tbf."""
        d = {}

        def js(*cmd):
            return json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
        try:
            for l in js("ip", "-j", "-s", "-n", "gwhub", "link", "show"):
                if l["ifname"].startswith("gwv"):
                    d[l["ifname"] + ".up"] = l["stats64"]["rx"]["bytes"]
                    d[l["ifname"] + ".down"] = l["stats64"]["tx"]["bytes"]
            for q in js("tc", "-n", "gwhub", "-s", "-j", "qdisc", "show"):
                if q.get("kind") == "tbf":
                    d["drops.hub." + q["dev"]] = q.get("drops", 0)
            for i in range(NLEAF):
                for q in js("tc", "-n", "gwn%d" % i, "-s", "-j", "qdisc", "show", "dev", "veth0"):
                    if q.get("kind") == "tbf":
                        d["drops.leaf.%d" % i] = q.get("drops", 0)
        except (subprocess.CalledProcessError, ValueError, KeyError):
            pass
        with open(os.path.join(self.out, name), "w") as f:
            json.dump(d, f)

    def star_check(self, rid):
        """The star is shared by name (gwhub, gwnI) with anything else that
        runs scripts/netns-star.sh (the launcher and mpirun tests do): one
        that is gone or was made anew since this path brought it up marks
        the run's cell, and every later cell of the path, as interfered with."""
        if star_id() != self.star:
            with open(os.path.join(self.out, rid + ".interfered"), "w") as f:
                f.write("the star (gwhub) was not the one this path made: removed or made anew "
                        "by someone else, during or before this run\n")
            log("WARNING: %s: the star is not the one this path made (torn down or replaced)" % rid)

    def gw(self, rid, path, link, w, codec, n, rounds, win, tmo, extra=(), fixed=False):
        opts = ["--dim", str(n), "--up", codec, "--down", codec, "--window", str(win)] + list(extra)
        # netns-colo: the star without shard processes in the hub; worker
        # R hosts shard R (gw-launch --colocate), as gw_member's shards.
        colo = link == "netns-colo"
        # memif-sharded: a shard per worker, each worker a memif port per
        # shard (and each shard one per worker): W x W links.
        sharded = link == "memif-sharded"
        log("[%s] gradwire %s W=%d %s (%s, %d rounds)" % (path, link, w, codec, " ".join(opts),
                                                          rounds))
        if link.startswith("netns"):
            self.snap(rid + ".net0.json")
        cmd = [self.launch, "--link", "netns" if colo else "memif" if sharded else link] + \
            (["--colocate"] if colo else []) + (["--shards", str(w)] if sharded else []) + [
               "--workers", str(w), "--quiet",
               "--logs", os.path.join(self.out, rid), "--timeout", str(tmo)] + opts + [
               "--", self.worker, "--no-verify", "--rounds", str(rounds), "--json"]
        env = dict(os.environ, GW_COLL_WINDOW="fixed") if fixed else None
        rc, wall = self.run(cmd, os.devnull, os.path.join(self.out, rid + ".err"), tmo, env)
        if link.startswith("netns"):
            self.snap(rid + ".net1.json")
            self.star_check(rid)
        self.record(id=rid, kind="gw", path=path, via=link, W=w, variant=codec, elems=n,
                    rounds=rounds, rc=rc, timeout_s=tmo, wall_s=wall, options=" ".join(opts))

    def mpi(self, rid, path, transport, w, variant, n, reps, tmo):
        env = RING_ENV if variant == "ring" else {}
        log("[%s] MPI %s W=%d %s (--reps %d)" % (path, transport, w, variant, reps))
        base = os.path.join(self.out, rid)
        if self.mpi_note:
            with open(base + ".err", "w") as f:
                f.write(self.mpi_note + "\n")
            rc, wall = 1, 0.0
        else:
            if transport == "netns":
                self.snap(rid + ".net0.json")
            cmd = ["timeout", "-k", "10", str(tmo), "bench/mpi_netns.sh", self.build, str(w)] + \
                (["--no-netns"] if transport == "shm" else []) + \
                ["--elems", str(n), "--reps", str(reps), "--warmup", "1", "--json"]
            rc, wall = self.run(cmd, base + ".out", base + ".err", tmo + 10,
                                dict(os.environ, **env))
            if transport == "netns":
                self.snap(rid + ".net1.json")
                self.star_check(rid)
        self.record(id=rid, kind="mpi", path=path, via=transport, W=w, variant=variant, elems=n,
                    rounds=reps, rc=rc, timeout_s=tmo, wall_s=wall,
                    options=" ".join("%s=%s" % kv for kv in env.items()))

    def window_check(self, key, path, link, w, n, rounds, tmo, extra=()):
        """Raw at each hand-picked window with tuning off, to set beside
        the tuned cell of the same W (allreduce_report.window_check)."""
        for win in WINDOWS[link]:
            self.gw("wcheck.%s.%d" % (key, win), path, link, w, "raw", n, rounds, win, tmo, extra,
                    fixed=True)

    def path(self, path, wlist):
        rate = [] if path == "unlimited" else [path]
        log("---- %s: %s up %d %s" % (path, STAR, NLEAF, " ".join(rate)))
        if path == "unlimited" and star_id() is not None:
            self.notes.append("a star existed before this run brought its own up (left over, or "
                              "someone else's, which netns-star.sh up just replaced)")
        if subprocess.run([STAR, "up", str(NLEAF)] + rate).returncode != 0:
            raise RuntimeError("%s up %d %s failed" % (STAR, NLEAF, " ".join(rate)))
        self.star = star_id()
        tmo, n = timeout_for(path, self.elems), self.elems
        rounds, reps = (3, 2) if path == "100mbit" else (4, 3)
        if path == "unlimited":
            links = ["memif", "memif-sharded", "netns", "netns-colo"]
            transports = ["shm", "netns"]
        else:
            links, transports = ["netns", "netns-colo"], ["netns"]
        for w in wlist:
            for link in links:
                for c in CODECS:
                    self.gw("gw.%s.%s.%d.%s" % (path, link, w, c), path, link, w, c, n, rounds,
                            WINDOW, tmo, NET_OPTS if link.startswith("netns") else ())
            for v in ("default", "ring"):
                for tr in transports:
                    self.mpi("mpi.%s.%s.%d.%s" % (path, tr, w, v), path, tr, w, v, n, reps, tmo)
        if self.wcheck:
            for link in (l for l in links if l in WINDOWS):
                self.window_check("%s_%s" % (path, link), path, link, wlist[-1], n, rounds, tmo,
                                  NET_OPTS if link == "netns" else ())


def main(build, elems, quick, outfile, wcheck):
    t_start = time.time()
    load0 = [float(x) for x in open("/proc/loadavg").read().split()[:3]]
    wlist = [2] if quick else [2, 4]
    out = tempfile.mkdtemp(prefix="gw-bench-ar.")
    b = Bench(build, elems, out, wcheck)
    def on_term(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    try:
        for path in ("unlimited", "1gbit", "100mbit"):
            b.path(path, wlist)
        subprocess.run([STAR, "down", str(NLEAF)])
        b.notes += [
            "gradwire rounds: 4 (3 timed) on unlimited and 1gbit, 3 (2 timed) at 100mbit; MPI "
            "reps: 3 after 1 warm-up, 2 after 1 warm-up at 100mbit",
            "netns runs pass --opts payload=8972 (9000-byte packets on the MTU-9000 veths); "
            "--mtu 9000 alone would change nothing: it only lowers the UDP backend's 1472-byte "
            "default",
            "window: %d slots per shard on every path; each worker tunes how many chunks it "
            "keeps in flight (collective/coll_window.h)%s" % (
                WINDOW, "; --window-check: raw at the largest W with fixed windows %s (memif) "
                "and %s (star) beside it" % (" ".join(map(str, WINDOWS["memif"])),
                                             " ".join(map(str, WINDOWS["netns"])))
                if wcheck else ""),
            "memif runs use 1500-byte packets: the memif PMD refuses --opts mtu=9000 as "
            "gw-launch creates the ports",
            "MPI bytes_per_worker on the star are measured at the hub's ports (IP + TCP headers, "
            "warm-up, barriers included); on shared memory a ring's 2(W-1)/W of the tensor"]
        if b.mpi_note:
            b.notes.append("MPI not run: " + b.mpi_note)
        v = subprocess.run(["mpirun", "--version"], capture_output=True, text=True) \
            if shutil.which("mpirun") else None
        meta = {"quick": quick, "elems": elems, "workers": wlist, "codecs": CODECS,
                "load0": load0, "mpi_version": v.stdout.split("\n")[0] if v else "",
                "run_seconds": int(time.time() - t_start), "window": WINDOW, "window_check": wcheck,
                "notes": b.notes}
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(meta, f)
        res, meta = allreduce_report.report(out)
        allreduce_report.table(res, meta)
        text = json.dumps(res, indent=1)
        if outfile:
            with open(outfile, "w") as f:
                f.write(text + "\n")
        print(text)
        return 0
    except KeyboardInterrupt:
        log("interrupted")
        return 1
    except RuntimeError as e:
        log(str(e))
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        b.stop()
        subprocess.run([STAR, "down", str(NLEAF)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4],
                  len(sys.argv) > 5 and sys.argv[5] == "1"))
