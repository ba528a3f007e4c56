"""Ranks of bench/torch.sh: a CNN of about 1.07M parameters trained on
Fashion-MNIST with DDP, its gradients exchanged by the hook under test.

  python3 -m gradwire.run ... bench/torch_ddp.py --hook HOOK [options]
  python3 -m gradwire.run ... bench/torch_ddp.py --plan FILE --out DIR [options]

Hooks: noop (no communication: the compute-only floor; replicas diverge,
so its accuracy means nothing), allreduce (DDP's default, gloo), fp16
(default_hooks.fp16_compress_hook), powersgd (--powersgd-rank R), gradwire
(--up/--down codec strings, --shards colocated or IP:PORT).

Every run has the same model, data order, batch, learning rate and
momentum (Sketched-SGD moves its momentum into the hook, as gw-train
does). The ranks evaluate on the first 5,000 test images (--test-images),
off the training clock, every --eval-every steps (25: the same step grid
for every run, so no run's time to target is coarser), but only every
fourth of those while more than 3 points below --target-acc. A run stops
at --steps, at the first evaluation at or above --target-acc, at the first
after --max-train-s, or once it has diverged (accuracy under 20% after 100
steps). Rank 0 writes one JSON object (--json): the configuration, the
evaluations (step, training seconds, accuracy, bytes this rank's interface
sent and received), the mean step time and the final accuracy.

--plan FILE runs FILE's runs in order in one process group, so a run
costs no interpreter start, torch import or data load (10 s a run on two
cores with four ranks): each line is NAME|OPTIONS, and run NAME writes
OUT/LABEL.NAME.json. The runs "noop" and "allreduce" take --steps; the
others 3 x --steps, stopped at the target (the allreduce run's final
accuracy less 0.5 points) or after its training time, or when that is
over 50 s (a slow link), after --cap times it, at least 50 s: a run not
there by then is no contender. "noop" evaluates once, at the end. Each run is its own gradwire job (--job:
its line number), so no packet of one can be taken by the next. A run
that fails ends the process (exit 1) after writing OUT/LABEL.NAME.error;
--first I resumes at line I. Exit 2 on a bad option.
"""
import argparse
import datetime
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"
HOOKS = ("noop", "allreduce", "fp16", "powersgd", "gradwire")


class Net(nn.Module):
    """conv 5x5 x16, pool, conv 5x5 x32, pool, fc 512 -> 2048 -> 10: the
    classifier holds 98% of the 1.07M parameters, as in the CNNs that
    gradient compression papers train."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 5)
        self.c2 = nn.Conv2d(16, 32, 5)
        self.f1 = nn.Linear(32 * 4 * 4, 2048)
        self.f2 = nn.Linear(2048, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.f2(F.relu(self.f1(x.flatten(1))))


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(split):
    x = idx(os.path.join(DATA, "%s-images-idx3-ubyte.gz" % split)).astype(np.float32)
    y = idx(os.path.join(DATA, "%s-labels-idx1-ubyte.gz" % split)).astype(np.int64)
    x = (x / 255.0 - 0.2860) / 0.3530       # Fashion-MNIST's mean and std
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


def iface_bytes(name):
    if not name:
        return None, None
    base = "/sys/class/net/%s/statistics/" % name
    try:
        return (int(open(base + "tx_bytes").read()), int(open(base + "rx_bytes").read()))
    except OSError:
        return None, None


def args_of(argv):
    p = argparse.ArgumentParser(prog="torch_ddp.py")
    p.add_argument("--hook", choices=HOOKS)
    p.add_argument("--plan", help="NAME|OPTIONS lines: run them in order")
    p.add_argument("--out", help="--plan: the folder of the runs' JSON")
    p.add_argument("--first", type=int, default=0, help="--plan: start at this line")
    p.add_argument("--cap", type=float, default=0.6,
                   help="--plan: stop a run after CAP x the allreduce run's training time")
    p.add_argument("--powersgd-rank", type=int, default=1)
    p.add_argument("--up", default="raw")
    p.add_argument("--down", default=None)
    p.add_argument("--shards", default="colocated")
    p.add_argument("--job", type=int, default=1)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--eval-every", type=int, default=25)
    p.add_argument("--test-images", type=int, default=5000)
    p.add_argument("--target-acc", type=float, default=None,
                   help="stop at the first evaluation at or above it")
    p.add_argument("--max-train-s", type=float, default=None,
                   help="stop at the first evaluation after this much training")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--shard-momentum", action="store_true",
                   help="gradwire: the momentum at the shards (State(momentum=)), "
                        "the optimizer's 0: 3LC's placement")
    p.add_argument("--one-tensor", action="store_true",
                   help="gradwire: the flat buffer one tensor (per_tensor=False)")
    p.add_argument("--opts", default=None,
                   help="gradwire: backend options (payload=8972 for the star's 9000 MTU)")
    p.add_argument("--no-pipeline", action="store_true",
                   help="gradwire: one whole-model call after backward (pipeline=False)")
    p.add_argument("--min-elems", type=int, default=None,
                   help="gradwire: parameters of fewer elements go raw")
    p.add_argument("--cosine", action="store_true",
                   help="the learning rate decays to 0 over --steps (cosine)")
    p.add_argument("--fixed", action="store_true",
                   help="--plan: every run trains --steps, no target or time limit")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout-ms", type=int, default=30000)
    p.add_argument("--window", type=int, default=None)
    p.add_argument("--iface", default=os.environ.get("GLOO_SOCKET_IFNAME"))
    p.add_argument("--label", default="")
    p.add_argument("--name", default="")
    p.add_argument("--json")
    p.add_argument("--print-dim", action="store_true")
    a = p.parse_args(argv)
    for k in ("steps", "eval_every", "batch", "powersgd_rank", "timeout_ms", "test_images",
              "job"):
        if getattr(a, k) <= 0:
            p.error("--%s: must be positive" % k.replace("_", "-"))
    if not a.lr > 0 or not 0 <= a.momentum < 1:
        p.error("--lr must be positive and --momentum in [0, 1)")
    if not 0 < a.cap <= 1 or a.first < 0:
        p.error("--cap must be in (0, 1] and --first not negative")
    if not a.print_dim and (a.plan is None) == (a.hook is None):
        p.error("give --hook HOOK (one run) or --plan FILE (several)")
    if a.plan and not a.out:
        p.error("--plan needs --out DIR")
    return a


def plan_of(path, common):
    """FILE's runs: (name, namespace) per NAME|OPTIONS line."""
    runs = []
    for n, line in enumerate(open(path).read().splitlines()):
        if not line.strip():
            continue
        name, _, opts = line.partition("|")
        runs.append((name, args_of(opts.split() + common + ["--name", name,
                                                            "--job", str(n + 1)])))
    return runs


def register(ddp, a):
    """The hook under test; returns what must stay alive, and its stats."""
    if a.hook == "noop":
        def noop(_, bucket):
            fut = torch.futures.Future()
            fut.set_result(bucket.buffer())
            return fut
        ddp.register_comm_hook(None, noop)
    elif a.hook == "fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif a.hook == "powersgd":
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps
        st = ps.PowerSGDState(process_group=None, matrix_approximation_rank=a.powersgd_rank,
                              start_powerSGD_iter=2, use_error_feedback=True,
                              warm_start=True, random_seed=a.seed)

        # gloo in torch 1.13 aborts when ranks issue PowerSGD's collectives
        # for several buckets in different orders (ENVIRONMENT.md): waiting
        # on each bucket's future keeps one order, as this wrapper does.
        def ordered(state, bucket):
            fut = ps.powerSGD_hook(state, bucket)
            fut.wait()
            return fut
        ddp.register_comm_hook(st, ordered)
        return st
    elif a.hook == "gradwire":
        import gradwire.torch as gwt
        kw = dict(up=a.up, down=a.down, shards=a.shards, timeout_ms=a.timeout_ms,
                  window=a.window, job=a.job, min_elems=a.min_elems,
                  # The hook's default: a tensor per parameter with
                  # co-located shards; external ones (the hub's
                  # gw-aggregator, started without --layout) take one.
                  per_tensor=False if a.one_tensor else None,
                  pipeline=not a.no_pipeline, opts=a.opts)
        if a.up in ("countsketch", "sketched-sgd"):
            kw["sketch_momentum"] = a.momentum
        elif a.shard_momentum and a.momentum:
            kw["momentum"] = a.momentum
        st = gwt.State(**kw)
        ddp.register_comm_hook(st, gwt.hook)
        return st
    return None


def train(a, data, rank, W):
    """One run; rank 0 returns its JSON object."""
    xtr, ytr, xte, yte = data
    torch.manual_seed(a.seed)
    model = Net()
    ddp = nn.parallel.DistributedDataParallel(model)
    state = register(ddp, a)
    # Sketched-SGD and --shard-momentum move the momentum into the hook.
    moved = a.hook == "gradwire" and (a.up in ("countsketch", "sketched-sgd") or
                                      a.shard_momentum)
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.0 if moved else a.momentum)
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.steps)
             if a.cosine else None)
    g = torch.Generator().manual_seed(a.seed)
    perm = torch.randperm(len(xtr), generator=g)
    mine = perm[rank::W]                       # a disjoint 1/W per rank

    def evaluate():
        model.eval()
        with torch.no_grad():
            right = torch.tensor([sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000])
                                      .sum().item() for i in range(0, len(xte), 1000))])
        model.train()
        dist.all_reduce(right)
        return right.item() / a.test_images

    records, train_s, cpu_s, main_cpu_s, times = [], 0.0, 0.0, 0.0, []
    tx0, rx0 = iface_bytes(a.iface)
    pos, epoch, every = 0, 0, a.eval_every     # steps between evaluations
    order = mine[torch.randperm(len(mine), generator=g)]
    for step in range(1, a.steps + 1):
        if pos + a.batch > len(order):
            epoch += 1
            pos = 0
            order = mine[torch.randperm(len(mine), generator=g)]
        b = order[pos:pos + a.batch]
        pos += a.batch
        t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(xtr[b]), ytr[b]).backward()
        opt.step()
        if sched:
            sched.step()
        dt = time.perf_counter() - t0
        train_s += dt
        cpu_s += time.process_time() - c0
        main_cpu_s += time.thread_time() - m0
        times.append(dt)
        # Far from the target an evaluation only costs time (1.2 s on
        # two cores): every 4th one until within 3 points of it.
        near = (a.target_acc is None or not records or
                records[-1]["acc"] >= a.target_acc - 0.03)
        if (step % every == 0 and (near or step % (4 * every) == 0)) or step == a.steps:
            tx, rx = iface_bytes(a.iface)
            acc = evaluate()
            records.append({"step": step, "epoch": epoch + pos / len(mine), "train_s": train_s,
                            "acc": acc, "tx_bytes": None if tx is None else tx - tx0,
                            "rx_bytes": None if rx is None else rx - rx0})
            if rank == 0:
                print("%s step %d: acc %.4f, %.1f s" % (a.name or a.hook, step, acc, train_s),
                      flush=True)
            # Every rank stops at the same step: rank 0 decides.
            stop = torch.tensor([0])
            if rank == 0 and ((a.target_acc is not None and acc >= a.target_acc) or
                              (a.max_train_s is not None and train_s >= a.max_train_s) or
                              (step >= 100 and acc < 0.2)):
                stop[0] = 1
            dist.broadcast(stop, 0)
            if stop.item():
                break
    stats = state.stats() if hasattr(state, "stats") else None
    if hasattr(state, "close"):
        dist.barrier()
        state.close()
    if rank != 0:
        return None
    steady = times[5:] or times
    return {"config": {"name": a.name or a.hook, "hook": a.hook, "up": a.up, "down": a.down,
                       "shards": a.shards, "powersgd_rank": a.powersgd_rank,
                       "workers": W, "label": a.label, "steps": step, "batch": a.batch,
                       "max_steps": a.steps, "target_acc": a.target_acc,
                       "max_train_s": a.max_train_s, "eval_every": every,
                       "lr": a.lr, "momentum": a.momentum, "seed": a.seed,
                       "shard_momentum": a.shard_momentum, "one_tensor": a.one_tensor,
                       "pipeline": not a.no_pipeline,
                       "min_elems": a.min_elems, "cosine": a.cosine,
                       "dim": sum(p.numel() for p in model.parameters())},
            "records": records, "final_acc": records[-1]["acc"],
            "diverged": records[-1]["step"] >= 100 and records[-1]["acc"] < 0.2,
            "step_s": sum(steady) / len(steady), "train_s": train_s,
            # CPU of every thread of rank 0 (the hook's progress thread and
            # co-located shard included) per step: four ranks share two cores
            "cpu_step_s": cpu_s / step,
            # of which the training thread's (forward, backward, the hook's
            # Python side, the optimizer)
            "main_cpu_step_s": main_cpu_s / step,
            "gradwire": stats}


def write(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def main():
    argv = sys.argv[1:]
    a = args_of(argv)
    if a.print_dim:
        print(sum(p.numel() for p in Net().parameters()))
        return
    if a.plan:
        # What every run of the plan shares: everything but the plan's own.
        common, skip = [], {"--plan", "--out", "--first", "--cap"}
        it = iter(argv)
        for x in it:
            if x in skip:
                next(it, None)
            elif x != "--fixed":
                common.append(x)
        runs = plan_of(a.plan, common)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=300))
    rank, W = dist.get_rank(), dist.get_world_size()
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    # The first --test-images test images, each rank a 1/W of them: on
    # two cores the whole 10,000 would take 6 s an evaluation. Every
    # accuracy of a run (time to target, final) is on the same images.
    a.test_images = min(a.test_images, len(xte))
    data = (xtr, ytr, xte[:a.test_images][rank::W], yte[:a.test_images][rank::W])
    if not a.plan:
        out = train(a, data, rank, W)
        if out is not None and a.json:
            write(a.json, out)
        dist.barrier()
        return
    for name, r in runs[a.first:]:
        r.test_images = a.test_images
        path = os.path.join(a.out, "%s.%s" % (a.label, name))
        base = os.path.join(a.out, "%s.allreduce.json" % a.label)
        if name == "noop":
            r.eval_every = r.steps         # no target: its replicas diverge
        elif a.fixed:
            pass                           # every run its --steps, to the end
        elif name != "allreduce":
            r.steps = 3 * a.steps
            if os.path.exists(base):       # every rank reads it: the same limits
                d = json.load(open(base))
                r.target_acc = d["final_acc"] - 0.005
                # The baseline's time, or on a slow link (where a run that
                # takes that long is no contender) CAP x it, 50 s at least.
                t = d["train_s"]
                r.max_train_s = t if t <= 50 else max(a.cap * t, 50.0)
        try:
            out = train(r, data, rank, W)
        except Exception as e:  # noqa: BLE001 - reported, then the group ends
            if rank == 0:
                with open(path + ".error", "w") as f:
                    f.write("%s: %s\n" % (type(e).__name__, e))
            raise
        if out is not None:
            write(path + ".json", out)
        dist.barrier()


if __name__ == "__main__":
    main()
