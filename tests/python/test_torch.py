"""Runs one DDP-over-gradwire case (tests/python/ddp_cases.py) with W ranks
and checks how it ended:

  test_torch.py CASE W     under torchrun (python3 -m gradwire.run), one
                           node (loopback)
  test_torch.py killed 3   three ranks started directly (torchrun's agent
                           would stop the survivors itself when one dies):
                           rank 1 is killed, the others must raise
                           gradwire's error naming it within the timeout
                           and exit with it (status 1, no abort)
  test_torch.py bad 1      bad State arguments, in this process
  test_torch.py close 1    State's lifetime, in this process: `with` closes
                           it (threads stopped, member freed), close()
                           twice is fine, a backward after it fails
                           instead of hanging, one dropped unclosed is
                           collected with its threads stopped, and a
                           process leaving States open (one that trained)
                           exits promptly, cleanly
  test_torch.py gpu 2      the exact case, and learning with int8, top-k, hq,
                           through the device path (State(gpu="emu"): the
                           kernels emulated on the host); 3LC's training
                           on it equals the CPU path's bit for bit
  test_torch.py memif 2    the exact case over DPDK memif links to one
                           gw-aggregator (GW_AGGREGATOR: its binary)
  test_torch.py rdma 2     the exact case over the RDMA backend at
                           GW_RDMA_IP (default 10.0.0.1); skips without
                           that address: scripts/rdma-vm.sh provides it

Exits 77 when torch cannot be imported (python3-torch is installed by
scripts/install-deps.sh). Every run is bounded by a timeout.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "ddp_cases.py")

try:
    import torch  # noqa: F401
except ImportError as e:
    print("skip: torch cannot be imported (%s); scripts/install-deps.sh installs "
          "python3-torch" % e)
    sys.exit(77)


def env_for(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env["OMP_NUM_THREADS"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def torchrun(case, W, **env):
    # gradwire.run is torchrun with the fix Debian's torch 1.13 needs
    # under Python 3.11; a port of its own: two tests at once must not
    # share a rendezvous.
    cmd = [sys.executable, "-m", "gradwire.run", "--nnodes", "1",
           "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
           "--nproc_per_node", str(W), CASES, case]
    try:
        r = subprocess.run(cmd, env=env_for(**env), timeout=300, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    except subprocess.TimeoutExpired as e:
        print(e.stdout or "")
        print("FAIL: %s W=%d did not finish in 300 s" % (case, W))
        return 1
    print(r.stdout)
    # Ranks share the pipe: count the marks, not the lines.
    oks = len(set(re.findall(r"rank (\d+): %s ok" % case, r.stdout)))
    if r.returncode != 0 or oks != W:
        print("FAIL: %s W=%d: exit %d, %d of %d ranks ok" % (case, W, r.returncode, oks, W))
        return 1
    return 0


def memif(W):
    """The exact case over DPDK memif links: one gw-aggregator process
    with a memif server port per rank (memif joins two processes, so the
    shard is external), every rank a memif client. No hugepages, no NIC."""
    import shutil
    import tempfile
    sys.path.insert(0, HERE)
    import ddp_cases
    agg = os.environ.get("GW_AGGREGATOR")
    if not agg or not os.path.exists(agg):
        print("skip: GW_AGGREGATOR (the gw-aggregator binary) not given")
        return 77
    import gradwire
    if b"dpdk" not in gradwire._lib.backends():
        print("skip: this libgradwire has no dpdk backend")
        return 77
    dim = sum(p.numel() for p in ddp_cases.Net().parameters())
    run = tempfile.mkdtemp(prefix="gw-torch-memif.")
    tag = "gwtm%d" % os.getpid()

    def eal(prefix, mb, vdevs):
        return ["-l", "0-%d" % (os.cpu_count() - 1), "--no-huge", "--no-pci", "-m", str(mb),
                "--no-shconf", "--file-prefix=" + prefix, "--log-level=lib.eal:error",
                "--log-level=pmd.net.memif:error"] + ["--vdev=" + v for v in vdevs]
    sock = os.path.join(run, "w%s.sock")
    vdevs = ["net_memif%d,role=server,id=0,socket=%s,socket-abstract=no" % (w, sock % w)
             for w in range(W)]
    cmd = [agg] + eal(tag + "a", 128 + 48 * W, vdevs) + [
        "--", "--backend", "dpdk", "--ports", str(W), "--local", "10.77.1.200:7000",
        "--opts", "link_wait=0", "--shard", "0", "--workers", str(W), "--dim", str(dim),
        "--idle-exit-ms", "60000"]
    errf = open(os.path.join(run, "agg.err"), "w+")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
    try:
        for _ in range(400):
            errf.seek(0)
            if "ready" in errf.read() or p.poll() is not None:
                break
            time.sleep(0.05)
        errf.seek(0)
        log = errf.read()
        if "ready" not in log:
            print(log)
            print("FAIL: gw-aggregator did not come up")
            return 1
        state = {"backend": "dpdk", "shards": "10.77.1.200:7000",
                 "local": "10.77.1.{rank1}:7000",
                 "eal": " ".join(eal(tag + "w{rank}", 256, [
                     "net_memif0,role=client,id=0,socket=%s,socket-abstract=no"
                     % (sock % "{rank}")]))}
        os.environ["GW_TEST_STATE"] = json.dumps(state)
        return torchrun("exact", W)
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
        shutil.rmtree(run, ignore_errors=True)


def rdma(W):
    """The exact case over the RDMA backend (UD verbs), every rank's
    gw_dp on the one RDMA device at GW_RDMA_IP (default 10.0.0.1): the
    soft-RoCE guest of scripts/rdma-vm.sh has it (tests/rdma/meson.build
    runs this there). Co-located shards, as over UDP."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import gradwire
    if b"rdma" not in gradwire._lib.backends():
        print("skip: this libgradwire has no rdma backend (libibverbs, librdmacm)")
        return 77
    ip = os.environ.get("GW_RDMA_IP", "10.0.0.1")
    probe = subprocess.run(["ip", "-4", "addr", "show"], stdout=subprocess.PIPE, text=True)
    if probe.returncode != 0 or (" %s/" % ip) not in probe.stdout:
        print("skip: no interface has %s (GW_RDMA_IP); scripts/rdma-vm.sh runs this "
              "test in a soft-RoCE guest" % ip)
        return 77
    os.environ["GW_TEST_STATE"] = json.dumps({"backend": "rdma", "local": ip})
    return torchrun("exact", W)


def killed(W):
    port = free_port()
    procs = []
    for rank in range(W):
        env = env_for(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=rank,
                      WORLD_SIZE=W, LOCAL_RANK=rank, LOCAL_WORLD_SIZE=W)
        procs.append(subprocess.Popen([sys.executable, CASES, "killed"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    t0 = time.monotonic()
    outs, bad = [], 0
    for rank, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=max(1, 90 - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print("FAIL: rank %d still running after 90 s: it hangs" % rank)
            bad += 1
        outs.append(out)
        print("---- rank %d (exit %s)\n%s" % (rank, p.returncode, out))
    # A survivor exits as a script that does not catch the error does:
    # status 1, the exception naming the dead peer last, and no abort
    # ("terminate called ..." when gradwire's thread was cut down in
    # libtorch at interpreter exit, which 1 run in 4 did before State
    # closed itself at exit).
    for rank, p in enumerate(procs):
        want = -9 if rank == 1 else 1
        if p.returncode != want:
            print("FAIL: rank %d exited %s, expected %d" % (rank, p.returncode, want))
            bad += 1
        elif rank != 1:
            tail = outs[rank].strip().splitlines()[-1:] or [""]
            if "terminate called" in outs[rank] or not re.search(
                    r"(worker|shard) 1\b.*GW_EPEER", tail[0]):
                print("FAIL: rank %d did not end with the error naming rank 1: %r"
                      % (rank, tail[0]))
                bad += 1
    return 1 if bad else 0


def gpu(W):
    import tempfile
    import torch
    emu = json.dumps({"gpu": "emu"})
    rc = torchrun("exact", W, GW_TEST_STATE=emu)
    # The kernels run on hostcuda's fibers, a thread each: 80 steps learn.
    rc |= torchrun("learn", W, GW_TEST_STATE=emu, GW_TEST_STEPS="80",
                   GW_TEST_CODECS="int8/int8;topk:fraction=0.05/raw;int8/3lc;hq/hq")
    # Each parameter a tensor of the job with its own 3LC context on the
    # device path too: 100 steps of 3LC end with the CPU path's replicas,
    # bit for bit (one m over the whole buffer would not).
    codecs = "3lc:sparsity=1.75/3lc:sparsity=1.75"
    with tempfile.TemporaryDirectory() as cpu_dir, tempfile.TemporaryDirectory() as dev_dir:
        rc |= torchrun("learn", W, GW_TEST_CODECS=codecs, GW_TEST_DUMP=cpu_dir,
                       GW_TEST_STEPS="100")
        rc |= torchrun("learn", W, GW_TEST_STATE=emu, GW_TEST_CODECS=codecs,
                       GW_TEST_DUMP=dev_dir, GW_TEST_STEPS="100")
        names = sorted(os.listdir(cpu_dir))
        if not names or names != sorted(os.listdir(dev_dir)):
            print("FAIL: device and CPU dumps: %s against %s"
                  % (names, sorted(os.listdir(dev_dir))))
            return 1
        for n in names:
            a = torch.load(os.path.join(cpu_dir, n))
            b = torch.load(os.path.join(dev_dir, n))
            diff = [i for i, (x, y) in enumerate(zip(a, b)) if not torch.equal(x, y)]
            if diff or len(a) != len(b):
                print("FAIL: %s: the device path's parameters %s differ from the CPU "
                      "path's" % (n, diff))
                rc = 1
            else:
                print("ok: %s: the device path's %d parameters equal the CPU path's bit for "
                      "bit after 100 steps" % (n, len(a)))
    # CUDA buckets take the same path with the "cuda" executor; this
    # suite has no case for them (the GPU machine has no torch).
    return rc


def bad_args():
    import torch.distributed as dist
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import gradwire.torch as gwt
    failures = 0

    def expect(exc, needle, **kw):
        nonlocal failures
        try:
            gwt.State(**kw).close()
        except exc as e:
            if needle in str(e):
                print("ok: %r -> %s: %s" % (kw, type(e).__name__, e))
                return
            print("FAIL: %r: message does not name %r: %s" % (kw, needle, e))
        except Exception as e:  # noqa: BLE001
            print("FAIL: %r raised %s, not %s: %s" % (kw, type(e).__name__, exc.__name__, e))
        else:
            print("FAIL: %r was accepted" % (kw,))
        failures += 1

    expect(RuntimeError, "init_process_group", up="raw")
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    expect(ValueError, "up: unknown codec 'nope'", up="nope")
    expect(ValueError, "up: parameter sparsity", up="3lc:sparsity=3")
    expect(ValueError, "down: parameter fraction", down="topk:fraction=0")
    expect(ValueError, "mode: 'fast'", mode="fast")
    expect(ValueError, "timeout_ms: '0'", timeout_ms=0)
    expect(ValueError, "timeout_ms: 'soon'", timeout_ms="soon")
    expect(ValueError, "shards: 'nowhere'", shards="nowhere")
    expect(ValueError, "backend: 'verbs' is not a backend built here", backend="verbs")
    expect(ValueError, "local: '999.1.1.1'", local="999.1.1.1")
    expect(ValueError, "key: not 64 hex digits", key="abc")
    expect(ValueError, "sketch_momentum: '1'", up="countsketch", sketch_momentum=1)
    expect(ValueError, "average:", average="yes")
    expect(ValueError, "momentum: 1 is not a number in [0, 1)", momentum=1)
    expect(ValueError, "momentum: 'x'", momentum="x")
    expect(ValueError, "momentum: True", momentum=True)
    expect(ValueError, "per_tensor: 'yes'", per_tensor="yes")
    expect(ValueError, "min_elems: '-1'", min_elems=-1)
    expect(ValueError, "bogus: not an option", bogus=1)
    expect(ValueError, "gpu: 'opencl' is not None", gpu="opencl")
    # A bad job is refused when the first iteration fixes it: here a
    # float64 model, refused by the hook with the dtype named.
    import torch.nn as nn
    model = nn.Linear(4, 2).double()
    ddp = nn.parallel.DistributedDataParallel(model)
    st = gwt.State(up="raw")
    ddp.register_comm_hook(st, gwt.hook)
    try:
        ddp(torch.zeros(1, 4, dtype=torch.float64)).sum().backward()
        print("FAIL: a float64 bucket was accepted")
        failures += 1
    except Exception as e:  # noqa: BLE001 - DDP wraps what the future raised
        if "float64" in str(e) and "float32" in str(e):
            print("ok: float64 model -> %s" % str(e).splitlines()[0][:200])
        else:
            print("FAIL: float64 bucket: %s" % e)
            failures += 1
    st.close()
    # gpu="cuda" with CPU buckets: refused when the first iteration shows it.
    model = nn.Linear(4, 2)
    ddp = nn.parallel.DistributedDataParallel(model)
    st = gwt.State(up="raw", gpu="cuda")
    ddp.register_comm_hook(st, gwt.hook)
    try:
        ddp(torch.zeros(1, 4)).sum().backward()
        print("FAIL: gpu='cuda' took CPU buckets")
        failures += 1
    except Exception as e:  # noqa: BLE001
        if "gpu: 'cuda', but the buckets are on the CPU" in str(e):
            print("ok: gpu='cuda' with CPU buckets -> %s" % str(e).splitlines()[0][:200])
        else:
            print("FAIL: gpu='cuda' with CPU buckets: %s" % e)
            failures += 1
    st.close()
    dist.destroy_process_group()
    return 1 if failures else 0


_EXIT_OPEN = """
import os, sys, torch, torch.distributed as dist, torch.nn as nn
import gradwire.torch as gwt
dist.init_process_group("gloo", rank=0, world_size=1)
model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 1))
ddp = nn.parallel.DistributedDataParallel(model)
trained = gwt.State(up="raw")
ddp.register_comm_hook(trained, gwt.hook)
for _ in range(4):
    ddp(torch.randn(4, 8)).sum().backward()
idle = gwt.State(up="raw")
print("exiting after %d rounds" % trained.stats()["rounds"], flush=True)
"""


def close_cases():
    import gc
    import weakref
    import torch.distributed as dist
    import torch.nn as nn
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import gradwire.torch as gwt
    failures = 0

    def check(ok, what):
        nonlocal failures
        print("%s: %s" % ("ok" if ok else "FAIL", what))
        failures += not ok

    def stopped(threads, within):
        end = time.monotonic() + within
        for t in threads:
            t.join(max(0.0, end - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    dist.init_process_group("gloo", rank=0, world_size=1)
    with gwt.State(up="raw") as st:
        threads = (st.thread, st.waiter)
        check(all(t.is_alive() for t in threads), "an open State's threads run")
    check(stopped(threads, 0) and st.member._m is None,
          "with State(...): threads stopped and member freed at the block's end")
    try:
        st.close()
        st.close()
        check(True, "close() twice more: a no-op")
    except Exception as e:  # noqa: BLE001
        check(False, "close() again raised %r" % e)

    # One that trained (a pipelined round included), closed by `with`; a
    # backward after that fails, naming it, rather than waiting forever.
    model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    t0 = time.monotonic()
    with gwt.State(up="raw") as st:
        ddp.register_comm_hook(st, gwt.hook)
        for _ in range(4):
            ddp(torch.randn(4, 8)).sum().backward()
        rounds, pipelined = st.stats()["rounds"], st.stats()["pipelined"]
    check(rounds >= 2 and pipelined and stopped((st.thread, st.waiter), 0),
          "a State that trained (%d rounds, pipelined) closes in %.1f s"
          % (rounds, time.monotonic() - t0))
    try:
        ddp(torch.randn(4, 8)).sum().backward()
        check(False, "a backward through a closed State succeeded")
    except Exception as e:  # noqa: BLE001 - DDP wraps what the future raised
        check("closed" in str(e), "a backward through a closed State: %s"
              % str(e).splitlines()[0][:160])
    del ddp, model

    # Dropped unclosed: its threads do not keep it alive; collected, its
    # finalizer stops them and frees the member.
    st = gwt.State(up="raw")
    threads, fin = (st.thread, st.waiter), st._finalizer
    ref, member = weakref.ref(st), weakref.ref(st.member)
    del st
    gc.collect()
    check(ref() is None and member() is None and not fin.alive and stopped(threads, 10),
          "a State dropped unclosed is collected, its threads stop, its member is freed")
    dist.destroy_process_group()

    # States left open at exit: closed by gradwire's exit handler, not a
    # finalizer; the process exits 0, promptly, with nothing on stderr.
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-c", _EXIT_OPEN],
                           env=env_for(MASTER_ADDR="127.0.0.1", MASTER_PORT=free_port()),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        out, err, rc = r.stdout, r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", "still running after 120 s", None
    bad = [m for m in ("Traceback", "Exception ignored", "terminate called") if m in err]
    check(rc == 0 and out.startswith("exiting") and not bad,
          "a process leaving two States open exits %s in %.1f s: %r%s"
          % (rc, time.monotonic() - t0, out.strip(), ", stderr %r" % err[-600:] if bad else ""))
    return 1 if failures else 0


def main():
    case, W = sys.argv[1], int(sys.argv[2])
    if case == "killed":
        sys.exit(killed(W))
    if case == "bad":
        sys.exit(bad_args())
    if case == "close":
        sys.exit(close_cases())
    if case == "memif":
        sys.exit(memif(W))
    if case == "rdma":
        sys.exit(rdma(W))
    if case == "gpu":
        sys.exit(gpu(W))
    sys.exit(torchrun(case, W))


if __name__ == "__main__":
    main()
