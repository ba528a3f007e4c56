"""One rank of bench/torch.sh: a CNN of about 1.07M parameters trained on
Fashion-MNIST with DDP, its gradients exchanged by the hook under test.

  python3 -m gradwire.run ... bench/torch_ddp.py --hook HOOK [options]

Hooks: noop (no communication: the compute-only floor; replicas diverge,
so its accuracy means nothing), allreduce (DDP's default, gloo), fp16
(default_hooks.fp16_compress_hook), powersgd (--powersgd-rank R), gradwire
(--up/--down codec strings, --shards colocated or IP:PORT).

Every run has the same model, data order, batch, learning rate and
momentum (Sketched-SGD moves its momentum into the hook, as gw-train
does). The ranks evaluate on the first 5,000 test images (--test-images)
every --eval-every steps, off the training clock; rank 0 writes one JSON object
(--json): the configuration, the evaluations (step, training seconds,
accuracy, bytes this rank's interface sent and received), the mean step
time and the final accuracy. Exit 2 on a bad option.
"""
import argparse
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
    p.add_argument("--hook", choices=HOOKS, required=True)
    p.add_argument("--powersgd-rank", type=int, default=1)
    p.add_argument("--up", default="raw")
    p.add_argument("--down", default=None)
    p.add_argument("--shards", default="colocated")
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
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout-ms", type=int, default=30000)
    p.add_argument("--window", type=int, default=None)
    p.add_argument("--iface", default=os.environ.get("GLOO_SOCKET_IFNAME"))
    p.add_argument("--label", default="")
    p.add_argument("--name", default="")
    p.add_argument("--json")
    p.add_argument("--print-dim", action="store_true")
    a = p.parse_args(argv)
    for k in ("steps", "eval_every", "batch", "powersgd_rank", "timeout_ms", "test_images"):
        if getattr(a, k) <= 0:
            p.error("--%s: must be positive" % k.replace("_", "-"))
    if not a.lr > 0 or not 0 <= a.momentum < 1:
        p.error("--lr must be positive and --momentum in [0, 1)")
    return a


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
                  window=a.window)
        if a.up in ("countsketch", "sketched-sgd"):
            kw["sketch_momentum"] = a.momentum
        st = gwt.State(**kw)
        ddp.register_comm_hook(st, gwt.hook)
        return st
    return None


def main():
    a = args_of(sys.argv[1:])
    if a.print_dim:
        print(sum(p.numel() for p in Net().parameters()))
        return
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, W = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(a.seed)
    model = Net()
    ddp = nn.parallel.DistributedDataParallel(model)
    state = register(ddp, a)
    sk = a.hook == "gradwire" and a.up in ("countsketch", "sketched-sgd")
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.0 if sk else a.momentum)

    xtr, ytr = load("train")
    xte, yte = load("t10k")
    g = torch.Generator().manual_seed(a.seed)
    perm = torch.randperm(len(xtr), generator=g)
    mine = perm[rank::W]                       # a disjoint 1/W per rank

    # The first --test-images test images, each rank a 1/W of them: on
    # two cores the whole 10,000 would take 6 s an evaluation. Every
    # accuracy of a run (time to target, final) is on the same images.
    a.test_images = min(a.test_images, len(xte))
    xte, yte = xte[:a.test_images][rank::W], yte[:a.test_images][rank::W]

    def evaluate():
        model.eval()
        with torch.no_grad():
            right = torch.tensor([sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000])
                                      .sum().item() for i in range(0, len(xte), 1000))])
        model.train()
        dist.all_reduce(right)
        return right.item() / a.test_images

    records, train_s, times = [], 0.0, []
    tx0, rx0 = iface_bytes(a.iface)
    pos, epoch = 0, 0
    order = mine[torch.randperm(len(mine), generator=g)]
    for step in range(1, a.steps + 1):
        if pos + a.batch > len(order):
            epoch += 1
            pos = 0
            order = mine[torch.randperm(len(mine), generator=g)]
        b = order[pos:pos + a.batch]
        pos += a.batch
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(xtr[b]), ytr[b]).backward()
        opt.step()
        dt = time.perf_counter() - t0
        train_s += dt
        times.append(dt)
        if step % a.eval_every == 0 or step == a.steps:
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
                              (a.max_train_s is not None and train_s >= a.max_train_s)):
                stop[0] = 1
            dist.broadcast(stop, 0)
            if stop.item():
                break
    stats = state.stats() if hasattr(state, "stats") else None
    if hasattr(state, "close"):
        dist.barrier()
        state.close()
    if rank == 0 and a.json:
        steady = times[5:] or times
        out = {"config": {"name": a.name or a.hook, "hook": a.hook, "up": a.up, "down": a.down,
                          "shards": a.shards, "powersgd_rank": a.powersgd_rank,
                          "workers": W, "label": a.label, "steps": step, "batch": a.batch,
                          "max_steps": a.steps, "target_acc": a.target_acc,
                          "lr": a.lr, "momentum": a.momentum, "seed": a.seed,
                          "dim": sum(p.numel() for p in model.parameters())},
               "records": records, "final_acc": records[-1]["acc"],
               "step_s": sum(steady) / len(steady), "train_s": train_s,
               "gradwire": stats}
        with open(a.json, "w") as f:
            json.dump(out, f)
    dist.barrier()


if __name__ == "__main__":
    main()
