#!/usr/bin/env python3
"""The smallest DDP training over gradwire: W ranks on this machine (gloo
on loopback for torch.distributed's own traffic, gradwire's hook for the
gradients), a tiny regression model, a few steps, the loss printed.

    python3 examples/ddp_minimal.py --world 2              # launches 2 ranks
    python3 examples/ddp_minimal.py --world 2 --codec raw
    python3 examples/ddp_minimal.py --world 2 --rank 0 --port 29500   # one rank

From a built source tree, without installing: PYTHONPATH=python (the
package then finds build/libgradwire.so.0 by itself). With Debian's torch
use /usr/bin/python3. Under torchrun (RANK, WORLD_SIZE, MASTER_ADDR and
MASTER_PORT set) each process is one rank:

    python3 -m gradwire.run --nproc_per_node=2 examples/ddp_minimal.py

Rank 0 prints "step N loss L" and, last, "loss FIRST -> LAST".
"""
import argparse
import os
import socket
import subprocess
import sys
import time


def train(rank, world, codec, steps):
    import torch
    import torch.distributed as dist
    import torch.nn as nn

    import gradwire.torch as gwt

    torch.manual_seed(0)               # the same initial model on every rank
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    ddp = nn.parallel.DistributedDataParallel(model)
    # Every gradient of the backward pass goes through gradwire: one job
    # over the model's parameters, each rank hosting one aggregator shard.
    state = gwt.State(up=codec, down=codec)
    ddp.register_comm_hook(state, gwt.hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)

    # This rank's share of the data: one fixed batch of a linear target,
    # so the full-batch loss falls step by step.
    gen = torch.Generator().manual_seed(1 + rank)
    x = torch.randn(64, 16, generator=gen)
    y = x @ torch.linspace(-1, 1, 16).unsqueeze(1)
    first = last = None
    for step in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()                # DDP's hook: gradwire's allreduce
        opt.step()
        last = loss.item()
        first = last if first is None else first
        if rank == 0 and (step % 10 == 0 or step == steps - 1):
            print("step %d loss %.4f" % (step, last), flush=True)
    stats = state.stats()
    state.close()
    dist.destroy_process_group()
    if rank == 0:
        print("gradwire %s: %s, %d bytes up" % (
            __import__("gradwire").__version__, codec, stats.get("bytes_up", 0)))
        print("loss %.4f -> %.4f" % (first, last), flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def launch(args):
    """Starts --world copies of this script, one per rank, and waits: the
    exit status is 0 only when every rank's is."""
    port = args.port or free_port()
    procs = []
    for rank in range(args.world):
        cmd = [sys.executable, os.path.abspath(__file__), "--world", str(args.world),
               "--rank", str(rank), "--port", str(port), "--codec", args.codec,
               "--steps", str(args.steps)]
        procs.append(subprocess.Popen(cmd))
    deadline = time.monotonic() + args.timeout
    status = 0
    for rank, p in enumerate(procs):
        try:
            rc = p.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print("ddp_minimal: rank %d still running after %d s (--timeout); stopping it"
                  % (rank, args.timeout), file=sys.stderr)
            p.kill()
            rc = p.wait()
        if rc != 0:
            print("ddp_minimal: rank %d exited with %d" % (rank, rc), file=sys.stderr)
            status = 1
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--world", type=int, default=int(os.environ.get("WORLD_SIZE", 2)),
                    help="number of ranks (default 2, or WORLD_SIZE)")
    ap.add_argument("--rank", type=int, default=None,
                    help="run this one rank (default: launch every rank, or RANK)")
    ap.add_argument("--port", type=int, default=None,
                    help="torch.distributed's rendezvous port (default: a free one)")
    ap.add_argument("--codec", default="3lc",
                    help="gradwire codec both ways: 3lc (default), raw, int8, ...")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=300,
                    help="the launcher stops ranks still running after this many seconds")
    args = ap.parse_args()
    if args.world < 1 or args.steps < 1:
        ap.error("--world and --steps: at least 1")
    if args.rank is None and "RANK" in os.environ:   # under torchrun
        args.rank = int(os.environ["RANK"])
    if args.rank is None:
        sys.exit(launch(args))
    if not 0 <= args.rank < args.world:
        ap.error("--rank: %d is not in [0, %d)" % (args.rank, args.world))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if args.port:
        os.environ["MASTER_PORT"] = str(args.port)
    elif "MASTER_PORT" not in os.environ:
        ap.error("--port: needed with --rank (every rank the same)")
    train(args.rank, args.world, args.codec, args.steps)


if __name__ == "__main__":
    main()
