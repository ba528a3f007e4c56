"""gradwire as a PyTorch DDP communication hook.

    import gradwire.torch as gwt
    state = gwt.State(up="3lc", down="3lc", mode="reliable")
    ddp.register_comm_hook(state, gwt.hook)

Rank and world size come from torch.distributed (initialise it first, as
DDP needs anyway); the ranks exchange their endpoints with one object
all-gather when State is made, so no MPI is involved. Each rank hosts one
aggregator shard on a progress thread (shards="colocated", the default),
or the ranks use external gw-aggregator shards (shards="IP:PORT,...").

How DDP's buckets map onto one gradwire job: every trainable parameter
has a fixed place in one flat float32 buffer, fixed from the first
iteration's buckets (ordered by bucket index, then by position: the same
on every rank). Each bucket is copied into its parameters' places as DDP
hands it over; once every bucket of the iteration is in, a progress
thread runs one allreduce over the flat buffer (the GIL released), scales
by 1/W, copies each bucket's part back into the bucket and completes its
future. So the error-feedback state, kept by parameter, survives DDP's
bucket rebuild after the first iteration; buckets may arrive in any order
without a deadlock; and unused parameters, no_sync() and
gradient_as_bucket_view need nothing special (DDP hands over what they
produce). The cost of this design: one copy in and one copy out per
element, and communication starts only when backward has finished.

CUDA buckets stay on the GPU: the flat buffer is allocated on their
device and gradwire's kernels encode it straight into packet memory and
decode the results into it (gw_comm_set_gpu, the "cuda" executor); the
progress thread waits for the device before each allreduce, so the copies
DDP's thread queued are in. gpu="emu" sends CPU buckets through the same
device path with the kernels emulated on the host (how CI tests it).
"""
import atexit
import os
import queue
import socket
import threading
import time
import weakref

import torch
import torch.distributed as dist

from . import Error, Member

__all__ = ["State", "hook", "Error"]

# Every State still open, closed at exit before the interpreter finalizes:
# a progress thread still inside a libtorch call then (completing the
# futures of an iteration that failed) was cut down in a noexcept frame,
# and the survivor of a peer's death aborted ("terminate called without an
# active exception") instead of exiting with the error that names it.
_open = weakref.WeakSet()


@atexit.register
def _close_all():
    for st in list(_open):
        try:
            st.close()
        except Exception:  # noqa: BLE001 - exiting: nothing to report to
            pass


def _default_local():
    """The address peers reach this rank at: the one that routes to
    MASTER_ADDR (loopback when that is this host)."""
    master = os.environ.get("MASTER_ADDR", "127.0.0.1")
    try:
        ip = socket.gethostbyname(master)
    except OSError:
        return "127.0.0.1"
    if ip.startswith("127."):
        return "127.0.0.1"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((ip, 9))          # no packet is sent: only a route lookup
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


class State:
    """gradwire's state for DDP's hook. Options are gw/member.h's, with
    "_" for "-": up, down (codec strings as the CLIs take them), mode
    ("reliable" or "loss-tolerant"), shards ("colocated" or external
    endpoints), backend, local (IP to bind; default: the address that
    routes to MASTER_ADDR), timeout_ms (an allreduce gives up after, and
    names the peer: default 20000), job, key or key_file, window,
    deadline_us, rto_us, opts (backend options such as impair_loss=0.01),
    topk, candidates, sketch_momentum (Sketched-SGD, up="countsketch": its
    momentum replaces the optimizer's), min_elems (parameters of fewer
    elements go raw). Each parameter is a tensor of the job's layout, with
    its own compression context (3LC's m) and chunks, as 3LC has it;
    per_tensor=False sends the flat buffer as one tensor (the behaviour
    before 0.5), the default with external shards (which would need the
    same gw-aggregator --layout; a mismatch is named at the first call).
    momentum: the shards keep the optimizer's momentum (mu in [0, 1))
    and send the state change down, 3LC's placement; the user's
    optimizer then runs with momentum 0 (docs/3lc-paper.md):

        state = gwt.State(up="3lc:sparsity=1.75", down="3lc", momentum=0.9)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0)

    average (default True) divides the
    sum by the world size, as DDP's own allreduce does. gpu: None (CUDA
    buckets use the GPU's kernels, CPU buckets the CPU codecs), "cuda"
    (buckets must be CUDA tensors) or "emu" (CPU buckets through the
    emulated kernels)."""

    def __init__(self, up="raw", down=None, mode="reliable", shards="colocated",
                 timeout_ms=20000, local=None, average=True, process_group=None,
                 gpu=None, momentum=None, per_tensor=None, **options):
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("gradwire.torch.State: torch.distributed is not "
                               "initialised (call init_process_group first)")
        if not isinstance(average, bool):
            raise ValueError("average: %r is not True or False" % (average,))
        if per_tensor is None:
            # External shards know no layout unless started with the same
            # --layout: one tensor there unless asked.
            per_tensor = shards == "colocated"
        if not isinstance(per_tensor, bool):
            raise ValueError("per_tensor: %r is not True or False" % (per_tensor,))
        if momentum is not None and (isinstance(momentum, bool) or
                                     not isinstance(momentum, (int, float)) or
                                     not 0 <= momentum < 1):
            raise ValueError("momentum: %r is not a number in [0, 1)" % (momentum,))
        if momentum:
            options["down_momentum"] = float(momentum)
        self.per_tensor = per_tensor
        if gpu not in (None, "cuda", "emu"):
            raise ValueError("gpu: %r is not None, 'cuda' or 'emu'" % (gpu,))
        self.gpu = gpu
        self.group = process_group
        self.rank = dist.get_rank(process_group)
        self.world = dist.get_world_size(process_group)
        self.average = average
        local = local or _default_local()
        self.member = Member(self.rank, self.world, up=up, down=down, mode=mode,
                             shards=shards, timeout_ms=timeout_ms, local=local,
                             **options)
        self.colocated = shards == "colocated"
        eps = [None] * self.world
        dist.all_gather_object(eps, self.member.endpoint, group=process_group)
        self.endpoints = eps
        self.dim = None
        self.places = {}          # id(param) -> (offset, numel)
        self.params = []          # keeps the parameters the ids refer to
        self.runs = {}            # bucket key -> [(bucket off, flat off, n)]
        self.flat = None
        self.pending = {}         # bucket index -> (buffer, runs, future)
        self.first = []           # iteration 1: (index, buffer, params, future)
        self.last_index = None
        self.failed = None
        self.info = {}
        self.iterations = 0
        self.allreduce_s = 0.0    # wall time in gradwire's allreduce, all iterations
        self.allreduce_cpu_s = 0.0  # the progress thread's CPU time in it
        self.buckets = 0          # buckets of the last iteration
        self.layouts = 0          # bucket layouts seen (DDP rebuilds once)
        self._layout_key = None
        self.jobs = queue.Queue()
        self.thread = threading.Thread(target=self._progress, name="gradwire",
                                       daemon=True)
        self.thread.start()
        _open.add(self)

    # ---- the hook's side (DDP's autograd thread) --------------------------

    def _bucket(self, bucket):
        fut = torch.futures.Future()
        if self.failed is not None:
            fut.set_exception(self.failed)
            return fut
        buf = bucket.buffer()
        idx = bucket.index()
        if buf.dtype != torch.float32 or buf.device.type not in ("cpu", "cuda"):
            self._fail_iteration(TypeError(
                "gradwire: bucket %d is %s on %s; the hook takes float32 on the CPU "
                "or a CUDA device" % (idx, buf.dtype, buf.device)), fut)
            return fut
        if self.flat is None:
            self.first.append((idx, buf, list(bucket.parameters()), fut))
        else:
            try:
                runs = self._runs(idx, bucket.parameters(), buf.numel())
            except ValueError as e:
                self._fail_iteration(e, fut)
                return fut
            for boff, foff, n in runs:
                self.flat[foff:foff + n].copy_(buf[boff:boff + n])
            self.pending[idx] = (buf, runs, fut)
        if bucket.is_last():
            self.last_index = idx
        self._maybe_launch()
        return fut

    def _runs(self, idx, params, numel):
        key = (idx,) + tuple(id(p) for p in params)
        runs = self.runs.get(key)
        if runs is None:
            runs, boff = [], 0
            for p in params:
                place = self.places.get(id(p))
                if place is None or place[1] != p.numel():
                    raise ValueError("gradwire: bucket %d holds a parameter (%s) that "
                                     "was not in the first iteration's buckets"
                                     % (idx, tuple(p.shape)))
                foff, n = place
                if runs and runs[-1][0] + runs[-1][2] == boff and runs[-1][1] + runs[-1][2] == foff:
                    runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + n)
                else:
                    runs.append((boff, foff, n))
                boff += n
            if boff != numel:
                raise ValueError("gradwire: bucket %d: %d elements, its parameters %d"
                                 % (idx, numel, boff))
            self.runs[key] = runs
        return runs

    def _layout(self):
        """First iteration complete: every parameter's place, the job."""
        off = 0
        for idx, buf, params, fut in sorted(self.first, key=lambda b: b[0]):
            for p in params:
                self.places[id(p)] = (off, p.numel())
                self.params.append(p)
                off += p.numel()
        self.dim = off
        device = self._device()
        self.flat = torch.zeros(off, dtype=torch.float32, device=device)
        if self.per_tensor and len(self.params) > 1:
            # Each parameter a tensor of the job: its own context, its
            # own chunks (the same order on every rank), on the CPU and
            # the device path alike.
            self.member.set("layout", ",".join(str(p.numel()) for p in self.params))
        self.member.connect(off, self.endpoints if self.colocated else None)
        first, self.first = self.first, []
        for idx, buf, params, fut in first:
            runs = self._runs(idx, params, buf.numel())
            for boff, foff, n in runs:
                self.flat[foff:foff + n].copy_(buf[boff:boff + n])
            self.pending[idx] = (buf, runs, fut)

    def _device(self):
        """The buckets' one device, and the executor that goes with it."""
        devices = sorted({str(buf.device) for _, buf, _, _ in self.first})
        if len(devices) != 1:
            raise ValueError("gradwire: buckets on several devices (%s); one job "
                             "takes one" % ", ".join(devices))
        device = self.first[0][1].device
        if device.type == "cuda":
            if self.gpu == "emu":
                raise ValueError("gpu: 'emu' takes CPU buckets; these are on %s" % device)
            self.member.set("gpu", "cuda")
        elif self.gpu == "cuda":
            raise ValueError("gpu: 'cuda', but the buckets are on the CPU")
        elif self.gpu == "emu":
            self.member.set("gpu", "emu")
        return device

    def _maybe_launch(self):
        n = self.last_index
        have = len(self.first) if self.flat is None else len(self.pending)
        if n is None or have != n + 1:
            return
        if self.flat is None:
            try:
                self._layout()
            except Exception as e:     # a bad job: every bucket fails with it
                self._fail_iteration(e)
                return
        batch, self.pending, self.last_index = self.pending, {}, None
        key = tuple(sorted((i, tuple(r)) for i, (_, r, _) in batch.items()))
        if key != self._layout_key:
            self._layout_key = key
            self.layouts += 1
        self.buckets = len(batch)
        self.jobs.put(batch)

    def _fail_iteration(self, e, *more):
        """The iteration cannot be launched (a bucket the hook cannot
        take, a bad job): the buckets already handed over would wait for
        the launch forever (DDP's backward with them), so their futures
        and more fail with e, and so does every later bucket."""
        waiting = [f for _, _, _, f in self.first] + [f for _, _, f in self.pending.values()]
        self.first, self.pending, self.last_index = [], {}, None
        self._fail(e, waiting + list(more))

    def _fail(self, e, futures):
        self.failed = e
        for f in futures:
            if not f.done():
                f.set_exception(e)

    # ---- the progress thread ---------------------------------------------

    def _progress(self):
        while True:
            batch = self.jobs.get()
            if batch is None:
                return
            try:
                if self.flat.is_cuda:   # DDP's thread queued the copies in
                    torch.cuda.synchronize(self.flat.device)
                t0, c0 = time.perf_counter(), time.thread_time()
                self.info = self.member.allreduce(self.flat)
                self.allreduce_s += time.perf_counter() - t0
                self.allreduce_cpu_s += time.thread_time() - c0
                self.iterations += 1
                if self.average:
                    self.flat.div_(self.world)
                for buf, runs, fut in batch.values():
                    for boff, foff, n in runs:
                        buf[boff:boff + n].copy_(self.flat[foff:foff + n])
                    fut.set_result(buf)
            except Exception as e:  # noqa: BLE001 - surfaces in DDP's backward
                if isinstance(e, Error):
                    e = Error(e.call, e.rc, "rank %d: %s" % (self.rank, e.detail))
                self._fail(e, [f for _, _, f in batch.values()])

    # ---- what the training script sees -----------------------------------

    def stats(self):
        """Bytes this rank's worker sent and received (UDP payload), rounds,
        the flat dim, the last round's counters, and the wall and CPU time
        of gradwire's allreduce calls (allreduce_s, allreduce_cpu_s: the
        progress thread's, all rounds)."""
        s = dict(self.member.totals)
        s.update(rounds=self.member.rounds, dim=self.dim, last=dict(self.info),
                 allreduce_s=self.allreduce_s, allreduce_cpu_s=self.allreduce_cpu_s)
        return s

    def close(self):
        """Stops the progress thread and the co-located shard. A rank that
        closes while others still train makes them time out. Called at
        exit for every State still open; `with State(...) as st:` closes it
        at the block's end."""
        thread = getattr(self, "thread", None)
        if thread is not None and thread.is_alive():
            self.jobs.put(None)
            thread.join()
        if getattr(self, "member", None) is not None:
            self.member.close()
        _open.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def hook(state, bucket):
    """DDP communication hook: register with ddp.register_comm_hook(state,
    hook). Returns a future the progress thread completes with the bucket
    holding the (averaged) sum over ranks."""
    return state._bucket(bucket)
