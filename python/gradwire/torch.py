"""gradwire as a PyTorch DDP communication hook.

    import gradwire.torch as gwt
    state = gwt.State(up="3lc", down="3lc", mode="reliable")
    ddp.register_comm_hook(state, gwt.hook)

Rank and world size come from torch.distributed (initialise it first, as
DDP needs anyway); the ranks exchange their endpoints with one object
all-gather when State is made, so no MPI is involved. Each rank hosts one
aggregator shard on a progress thread (shards="colocated", the default),
or the ranks use external gw-aggregator shards (shards="IP:PORT,...").

How DDP's buckets map onto one gradwire job: DDP rebuilds its buckets
once, after the first iteration, in the order backward produced the
gradients (the same on every rank: rank 0's order is broadcast). So the
first iteration is reduced through torch.distributed, as DDP would
(an all-gather summed in rank order, so results are exact as gradwire's
are; PowerSGD's hook likewise waits for the rebuild before it keeps
state), and every trainable parameter becomes a tensor of the job's
layout in the rebuilt buckets' order (bucket index, then position; the
ranks compare their layouts when the job starts). The second
iteration's buckets are copied into one flat buffer and reduced by one
call once all are in, because the layout is known only then. From the
third on, each bucket's parameters are handed to the running round as
DDP hands the bucket over (a pipelined round,
gw_member_allreduce_pipelined): encoded straight from the bucket while
backward computes the next ones, their results written back into the
bucket already divided by W (in the bucket's dtype: float32, bfloat16
or float16), and the bucket's future completed as soon as its own
results are in, in the order DDP handed the buckets over. Chunks go in
the layout's order, which is the order DDP hands buckets over; a bucket
handed over before the ones ahead of it in the layout (a second
rebuild, which DDP does not do) would wait for them, correct but not
overlapped. The error-feedback state is kept per element of the layout,
that is per parameter; unused parameters, no_sync() and
gradient_as_bucket_view need nothing special (DDP hands over what they
produce).

CUDA buckets stay on the GPU: the flat buffer is allocated on their
device and gradwire's kernels encode it straight into packet memory and
decode the results into it (gw_comm_set_gpu, the executor "cuda:N" on
the buckets' device N); the progress thread waits for the device before
each allreduce, so the copies DDP's thread queued are in. gpu="emu"
sends CPU buckets through the same device path, the same kernels run on
the CPU by gradwire's hostcuda (how CI tests it).
Device buckets, per_tensor=False, Sketched-SGD and pipeline=False keep
the whole-model call every iteration.
"""
import atexit
import hashlib
import logging
import os
import queue
import socket
import threading
import time
import weakref

import torch
import torch.distributed as dist

from . import DTYPES, INFO, Error, Member, _lib
from . import version as gradwire_version

log = logging.getLogger("gradwire")

# The bucket types a pipelined round takes in place (gw_dtype).
_DTYPES = {torch.float32: DTYPES["float32"], torch.bfloat16: DTYPES["bfloat16"],
           torch.float16: DTYPES["float16"]}

# The GW_E* codes a round is cancelled with, by the library's names.
_EINVAL = _lib.ERRORS["GW_EINVAL"]   # the caller's reason (a bucket it cannot take)
_ESTATE = _lib.ERRORS["GW_ESTATE"]   # the State closed with the round open


def _gather(obj, world, group):
    out = [None] * world
    dist.all_gather_object(out, obj, group=group)
    return out


# Options each process sets for itself (its address, its backend's
# arguments, where its key file lies): not compared across ranks.
_PER_PROCESS = ("local", "opts", "eal", "shard_eal", "key", "key_file")


def _job_settings(options):
    """The options every rank must share, the key as a digest (the key
    itself is neither logged nor sent)."""
    out = {k: v for k, v in options.items() if k not in _PER_PROCESS}
    secret = options.get("key")
    if options.get("key_file"):
        try:
            with open(options["key_file"], "rb") as f:
                secret = f.read().strip()
        except OSError:
            secret = None    # the library has named the file already
    if secret is not None:
        data = secret if isinstance(secret, bytes) else str(secret).encode()
        out["key_digest"] = hashlib.sha256(data).hexdigest()[:16]
    return out


def _same_settings(rank, mine, all_settings):
    """Every rank's job settings are this rank's, or a ValueError names
    the first rank and setting that differ (a job whose ranks disagree
    would otherwise fail at its first step, or sum wrongly)."""
    for r, theirs in enumerate(all_settings):
        for k in sorted(set(mine) | set(theirs)):
            if mine.get(k) != theirs.get(k):
                raise ValueError("gradwire: rank %d's %s is %r, rank %d's %r: every rank "
                                 "of a job needs the same settings"
                                 % (rank, k, mine.get(k), r, theirs.get(k)))

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
    buckets use the GPU's kernels, on the buckets' device; CPU buckets the
    CPU codecs), "cuda" (buckets must be CUDA tensors) or "emu" (CPU
    buckets through the same kernels run on the CPU). pipeline (default
    True): from the second iteration on, each bucket goes on the wire as
    DDP hands it over (see above); False keeps one whole-model call after
    backward. stats_interval
    (seconds, 0: off): the gradwire logger logs stats() that often, at
    INFO, as the CLIs' --stats-interval prints theirs."""

    def __init__(self, up="raw", down=None, mode="reliable", shards="colocated",
                 timeout_ms=20000, local=None, average=True, process_group=None,
                 gpu=None, momentum=None, per_tensor=None, pipeline=True,
                 stats_interval=0, **options):
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("gradwire.torch.State: torch.distributed is not "
                               "initialised (call init_process_group first)")
        for name, v in (("average", average), ("pipeline", pipeline)):
            if not isinstance(v, bool):
                raise ValueError("%s: %r is not True or False" % (name, v))
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
        if (isinstance(stats_interval, bool) or not isinstance(stats_interval, (int, float))
                or not 0 <= stats_interval <= 86400):
            raise ValueError("stats_interval: %r is not a number of seconds in [0, 86400]"
                             % (stats_interval,))
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
        self.scale = 1.0 / self.world if average else 1.0
        local = local or _default_local()
        if options.get("backend", "udp") == "udp" and "payload=" not in str(
                options.get("opts") or ""):
            # Chunks as large as the link's frames: the interface's MTU
            # (jumbo frames where the datacenter has them), not 1500.
            options["opts"] = ",".join(x for x in (options.get("opts"), "payload=auto") if x)
        self.member = Member(self.rank, self.world, up=up, down=down, mode=mode,
                             shards=shards, timeout_ms=timeout_ms, local=local,
                             **options)
        self.timeout_ms = timeout_ms
        self.colocated = shards == "colocated"
        # Pipelined rounds need each parameter as a tensor of the layout,
        # buckets in host memory, and the dense engine.
        self.pipeline = (pipeline and per_tensor and gpu is None and
                         str(up).split(":")[0] not in ("countsketch", "sketched-sgd"))
        self.settings = _job_settings(self.member.options)
        self.settings.update(world=self.world, pipeline=self.pipeline, per_tensor=per_tensor,
                             average=average, gpu=gpu, library=gradwire_version)
        eps = [None] * self.world
        dist.all_gather_object(eps, (self.member.endpoint, self.settings),
                               group=process_group)
        _same_settings(self.rank, self.settings, [s for _, s in eps])
        self.endpoints = [e for e, _ in eps]
        log.info("rank %d: %s", self.rank, " ".join(
            "%s=%s" % kv for kv in sorted(self.settings.items())))
        self.dim = None
        self.places = {}          # id(param) -> (offset, numel)
        self.index = {}           # id(param) -> its tensor of the layout
        self.params = []          # keeps the parameters the ids refer to
        self.runs = {}            # bucket key -> [(bucket off, flat off, n)]
        self.flat = None
        self.pending = {}         # bucket index -> (buffer, runs, future)
        self.first = []           # iteration 2: (index, buffer, params, future)
        self.warm = True          # iteration 1: through torch.distributed
        self.last_index = None
        self.failed = None
        self.info = dict.fromkeys(INFO, 0)
        self.iterations = 0
        self.tag = 0              # the pipelined round now open (0: none)
        self.round_open = False
        self.handed = {}          # bucket key -> [(tensor, byte offset)]
        self.allreduce_s = 0.0    # wall time in gradwire's allreduce, all iterations
        self.allreduce_cpu_s = 0.0  # the progress thread's CPU time in it
        self.wait_cpu_s = 0.0     # the completing thread's
        self.hand_s = 0.0         # the training thread's time handing buckets over
        self.overlapped = 0       # buckets whose results came before the last was handed
        self.buckets = 0          # buckets of the last iteration
        self.layouts = 0          # bucket layouts seen (DDP rebuilds once)
        self._layout_key = None
        self._keys = []
        self.jobs = queue.Queue()
        self.done = queue.Queue()
        self.stats_interval = stats_interval
        self._residual, self._residual_round = None, -1
        self._next_log = time.monotonic() + stats_interval
        # close() waits this long for the threads: their calls give up
        # after the timeout (a round the State cancels at once).
        try:
            self._join_s = 2 * float(timeout_ms) / 1000 + 10
        except (TypeError, ValueError):
            self._join_s = 50.0
        self._closed = False
        # The threads hold the State only by a weak reference, and strongly
        # only while they run one of its jobs, so that a State the script
        # drops without close() is collected; the finalizer then stops
        # them and frees the member (no thread is in a call of the member
        # then: one would hold the State). Not at exit: _close_all closes
        # what is still open then (joining the threads, bounded), before
        # the interpreter finalizes, and a finalizer never joins a thread.
        ref = weakref.ref(self)
        self.thread = threading.Thread(target=_serve, args=(ref, self.jobs, "_run"),
                                       name="gradwire", daemon=True)
        self.waiter = threading.Thread(target=_serve, args=(ref, self.done, "_complete"),
                                       name="gradwire-done", daemon=True)
        self._finalizer = weakref.finalize(self, _release, self.member, self.jobs, self.done)
        self._finalizer.atexit = False
        self.thread.start()
        self.waiter.start()
        _open.add(self)

    # ---- the hook's side (DDP's autograd thread) --------------------------

    def _bucket(self, bucket):
        fut = torch.futures.Future()
        buf = bucket.buffer()
        idx = bucket.index()
        last = bucket.is_last()
        # DDP's bucket layouts, counted per iteration (it rebuilds once).
        self._keys.append((idx, tuple(id(p) for p in bucket.parameters())))
        if last:
            keys, self._keys = tuple(self._keys), []
            self._count_layout(keys)
        if self._closed:
            fut.set_exception(RuntimeError("gradwire: the State is closed"))
            return fut
        if self.failed is not None:
            fut.set_exception(self.failed)
            return fut
        if buf.dtype not in _DTYPES or buf.device.type not in ("cpu", "cuda"):
            self._fail_iteration(TypeError(
                "gradwire: bucket %d is %s on %s; the hook takes float32, bfloat16 "
                "or float16 on the CPU, or a CUDA device" % (idx, buf.dtype, buf.device)),
                fut)
            return fut
        if self.warm:
            try:
                self._check_device(buf.device)
            except ValueError as e:
                self._fail_iteration(e, fut)
                return fut
            self._warm_bucket(idx, buf, fut)
            if last:
                self.warm = False
            return fut
        if self.flat is None:
            self.first.append((idx, buf, list(bucket.parameters()), fut))
        elif self.pipeline and buf.device.type == "cpu":
            t0 = time.perf_counter()
            self._hand_over(idx, buf, bucket.parameters(), fut, last)
            self.hand_s += time.perf_counter() - t0
            return fut
        else:
            try:
                runs = self._runs(idx, bucket.parameters(), buf.numel())
            except ValueError as e:
                self._fail_iteration(e, fut)
                return fut
            for boff, foff, n in runs:
                self.flat[foff:foff + n].copy_(buf[boff:boff + n])
            self.pending[idx] = (buf, runs, fut)
        if last:
            self.last_index = idx
        self._maybe_launch()
        return fut

    def _warm_bucket(self, idx, buf, fut):
        """The first iteration, before DDP's rebuild: the bucket through
        torch.distributed, every rank's float32 copy gathered and summed in
        rank order (gloo of torch 1.13 has no bfloat16, and a sum in rank
        order is what gradwire's raw results are), / W."""
        try:
            mine = buf.detach().to("cpu", torch.float32).contiguous()
            parts = [torch.empty_like(mine) for _ in range(self.world)]
            dist.all_gather(parts, mine, group=self.group)
            total = torch.zeros_like(mine)
            for part in parts:
                total = total + part
            if self.average:
                total = total / self.world
            buf.copy_(total)
            self.iterations += 1 if idx == 0 else 0
        except Exception as e:  # noqa: BLE001 - surfaces in DDP's backward
            self._fail(RuntimeError("gradwire: the first iteration's bucket %d through "
                                    "torch.distributed: %s" % (idx, e)), [fut])
            return
        fut.set_result(buf)

    def _hand_over(self, idx, buf, params, fut, last):
        """A pipelined iteration: the bucket's parameters go to the round
        (opened by the iteration's first bucket), its future to the
        completing thread, in the order DDP hands buckets over."""
        if not self.round_open:
            self.tag = self.tag % 0xFFFFFFFF + 1
            self.round_open = True
            self.jobs.put(("pipe", self.tag))
        tag = self.tag
        if last:
            self.round_open = False
        try:
            parts = self._tensors(idx, params, buf)
            base, size = buf.data_ptr(), buf.element_size()
            dtype = _DTYPES[buf.dtype]
            for t, off in parts:
                self.member.tensor_ready(tag, t, base + off * size, dtype, self.scale)
        except (ValueError, Error) as e:
            self._fail_round(tag, e, fut)
            return
        self.done.put((tag, buf, parts, fut, last))

    def _tensors(self, idx, params, buf):
        """The bucket's parameters as (tensor of the layout, element
        offset in the bucket), checked once per bucket layout."""
        params = list(params)
        key = (idx,) + tuple(id(p) for p in params)
        parts = self.handed.get(key)
        if parts is None:
            parts, off = [], 0
            for p in params:
                t = self.index.get(id(p))
                if t is None or self.places[id(p)][1] != p.numel():
                    raise ValueError("gradwire: bucket %d holds a parameter (%s) that "
                                     "was not in the second iteration's buckets"
                                     % (idx, tuple(p.shape)))
                parts.append((t, off))
                off += p.numel()
            if off != buf.numel():
                raise ValueError("gradwire: bucket %d: %d elements, its parameters %d"
                                 % (idx, buf.numel(), off))
            self.handed[key] = parts
        return parts

    def _fail_round(self, tag, e, *more):
        """A bucket of a pipelined iteration cannot be handed over: the
        round fails with e on this rank (the buckets already handed over
        wake with it), and so does every later bucket."""
        self.failed = e
        self.round_open = False
        self.member.round_cancel(tag, _EINVAL)
        for f in more:
            if not f.done():
                f.set_exception(e)

    def _runs(self, idx, params, numel):
        key = (idx,) + tuple(id(p) for p in params)
        runs = self.runs.get(key)
        if runs is None:
            runs, boff = [], 0
            for p in params:
                place = self.places.get(id(p))
                if place is None or place[1] != p.numel():
                    raise ValueError("gradwire: bucket %d holds a parameter (%s) that "
                                     "was not in the second iteration's buckets"
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
        """Second iteration's (rebuilt) buckets all in: every parameter's
        place, the job."""
        off = 0
        for idx, buf, params, fut in sorted(self.first, key=lambda b: b[0]):
            for p in params:
                self.places[id(p)] = (off, p.numel())
                self.index[id(p)] = len(self.params)
                self.params.append(p)
                off += p.numel()
        self.dim = off
        device = self._device()
        self.flat = torch.zeros(off, dtype=torch.float32, device=device)
        if not (self.per_tensor and len(self.params) > 1):
            self.pipeline = False   # one tensor: nothing to hand over in parts
        if self.per_tensor and len(self.params) > 1:
            # Each parameter a tensor of the job: its own context, its
            # own chunks (the same order on every rank), on the CPU and
            # the device path alike.
            layout = ",".join(str(p.numel()) for p in self.params)
            self.member.set("layout", layout)
            _same_settings(self.rank, {"layout": layout}, _gather(
                {"layout": layout}, self.world, self.group))
        self.member.connect(off, self.endpoints if self.colocated else None)
        log.info("rank %d: job connected: %d parameters, %d elements, %s", self.rank,
                 len(self.params), off, "pipelined from the second iteration"
                 if self.pipeline else "one call per iteration")
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
        self._check_device(device)
        if device.type == "cuda":
            # The buckets' own device: the executor makes it current for
            # every call, whichever thread (the progress thread's is 0).
            index = device.index if device.index is not None else torch.cuda.current_device()
            self.member.set("gpu", "cuda:%d" % index)
            self.pipeline = False
        elif self.gpu == "emu":
            self.member.set("gpu", "emu")
        return device

    def _check_device(self, device):
        if device.type == "cuda" and self.gpu == "emu":
            raise ValueError("gpu: 'emu' takes CPU buckets; these are on %s" % device)
        if device.type != "cuda" and self.gpu == "cuda":
            raise ValueError("gpu: 'cuda', but the buckets are on the CPU")

    def _count_layout(self, key):
        if key != self._layout_key:
            self._layout_key = key
            self.layouts += 1
        self.buckets = len(key)

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
        self.jobs.put(("flat", batch))

    def _fail_iteration(self, e, *more):
        """The iteration cannot be launched (a bucket the hook cannot
        take, a bad job): the buckets already handed over would wait for
        the launch forever (DDP's backward with them), so their futures
        and more fail with e, and so does every later bucket."""
        if self.round_open:
            self._fail_round(self.tag, e, *more)
            return
        waiting = [f for _, _, _, f in self.first] + [f for _, _, f in self.pending.values()]
        self.first, self.pending, self.last_index = [], {}, None
        self._fail(e, waiting + list(more))

    def _fail(self, e, futures):
        self.failed = e
        for f in futures:
            if not f.done():
                f.set_exception(e)

    # ---- the progress thread (_serve) ------------------------------------

    def _run(self, job):
        kind, arg = job
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            if kind == "pipe":
                self.info = self.member.allreduce_pipelined(arg)
            else:
                self._flat_round(arg)
            self.iterations += 1
        except Exception as e:  # noqa: BLE001 - surfaces in DDP's backward
            if isinstance(e, Error):
                e = Error(e.call, e.rc, "rank %d: %s" % (self.rank, e.detail))
            if self.failed is None:
                self.failed = e
            if kind == "flat":
                self._fail(e, [f for _, _, f in arg.values()])
        finally:
            self.allreduce_s += time.perf_counter() - t0
            self.allreduce_cpu_s += time.thread_time() - c0
        self._maybe_log()

    def _flat_round(self, batch):
        if self.flat.is_cuda:   # DDP's thread queued the copies in
            torch.cuda.synchronize(self.flat.device)
        self.info = self.member.allreduce(self.flat)
        if self.average:
            self.flat.div_(self.world)
        for buf, runs, fut in batch.values():
            for boff, foff, n in runs:
                buf[boff:boff + n].copy_(self.flat[foff:foff + n])
            fut.set_result(buf)

    # ---- the completing thread (pipelined rounds, _serve) -----------------

    def _complete(self, item):
        """Completes a bucket's future once its tensors' results are in;
        the thread takes the buckets in the order DDP handed them over.
        Waiting sleeps in the library (the GIL released), so this thread
        takes no core."""
        limit = 2 * self.timeout_ms + 5000
        tag, buf, parts, fut, last = item
        c0 = time.thread_time()
        rc, why = 0, ""
        for t, _ in parts:
            rc, why = self.member.tensor_wait(tag, t, limit)
            if rc < 0:
                break
        self.wait_cpu_s += time.thread_time() - c0
        if rc < 0:
            e = self.failed if self.failed is not None else Error(
                "allreduce", rc, "rank %d: %s" % (self.rank, why))
            if self.failed is None:
                self.failed = e
            fut.set_exception(e)
            return
        if self.round_open and self.tag == tag:
            # In before backward handed the last bucket over: its
            # communication was hidden behind computation.
            self.overlapped += 1
        fut.set_result(buf)

    def _maybe_log(self):
        if self.stats_interval and time.monotonic() >= self._next_log:
            self._next_log = time.monotonic() + self.stats_interval
            s = self.stats()
            log.info("rank %d: %d rounds, %.1f MB up, %.1f MB down, allreduce %.1f ms "
                     "and %.1f ms CPU a round, %d buckets, %d of them done before "
                     "backward ended", self.rank, s["rounds"], s["bytes_up"] / 1e6,
                     s["bytes_down"] / 1e6, 1e3 * s["allreduce_s"] / max(1, s["rounds"]),
                     1e3 * s["allreduce_cpu_s"] / max(1, s["rounds"]), self.buckets,
                     self.overlapped)

    # ---- what the training script sees -----------------------------------

    def stats(self):
        """Bytes this rank's worker sent and received (UDP payload), rounds,
        the flat dim, the last round's counters; the wall and CPU time of
        gradwire's calls, all rounds: allreduce_s and allreduce_cpu_s (the
        progress thread's), wait_cpu_s (the thread completing buckets'
        futures), shard_cpu_s (the co-located shard's thread, from
        /proc: 10 ms ticks), hand_s (the training thread's time in the
        hook handing buckets over); cpu_s, their CPU sum; pipelined
        (whether buckets go as they come) and overlapped (buckets whose
        results were in before backward handed the last one over)."""
        s = dict(self.member.totals)
        shard = _thread_cpu("gw-shard")
        s.update(rounds=self.member.rounds, dim=self.dim, last=dict(self.info),
                 allreduce_s=self.allreduce_s, allreduce_cpu_s=self.allreduce_cpu_s,
                 wait_cpu_s=self.wait_cpu_s, shard_cpu_s=shard, hand_s=self.hand_s,
                 cpu_s=self.allreduce_cpu_s + self.wait_cpu_s + shard + self.hand_s,
                 pipelined=self.pipeline and self.flat is not None,
                 overlapped=self.overlapped, buckets=self.buckets)
        return s

    def residual(self, param):
        """This rank's error-feedback state for param (its shape, float32):
        what the uplink codec has not delivered yet, kept by parameter
        across DDP's bucket rebuild. Between steps only."""
        if self._closed:
            raise RuntimeError("gradwire: the State is closed")
        if self.flat is None:   # no job yet: the first step kept no state
            return torch.zeros(param.shape, dtype=torch.float32)
        place = self.places.get(id(param))
        if place is None:
            raise ValueError("param: %s is not one of the job's parameters"
                             % (tuple(param.shape),))
        # backward() returns once every bucket's results are in, which
        # may be before the progress thread has left the round: wait.
        self.jobs.join()
        if self._residual is None:
            self._residual = torch.empty(self.dim, dtype=torch.float32)
        if self._residual_round != self.member.rounds:
            self.member.residual(self._residual)
            self._residual_round = self.member.rounds
        off, n = place
        return self._residual[off:off + n].view(param.shape).clone()

    def close(self):
        """Stops the progress thread and the co-located shard, and frees the
        member. A rank that closes while others still train makes them
        time out. Idempotent; called at exit for every State still open;
        `with State(...) as st:` closes it at the block's end. A State
        dropped without close() is cleaned up when it is collected (its
        threads do not keep it alive)."""
        fin = getattr(self, "_finalizer", None)
        if fin is None or not fin.alive:   # closed already, or half made
            _open.discard(self)
            return
        self._closed = True
        if self.tag:
            # A round still open (backward stopped half way) ends now.
            self.member.round_cancel(self.tag, _ESTATE)
        self.jobs.put(None)
        self.done.put(None)
        # Bounded: a call gives up after the timeout. From one of the
        # State's own threads (a future's callback), that one is not
        # joined: it is in no call of the member now, and stops at the
        # sentinel.
        deadline = time.monotonic() + self._join_s
        stuck = []
        for t in (self.thread, self.waiter):
            if t is threading.current_thread():
                continue
            t.join(max(0.0, deadline - time.monotonic()))
            if t.is_alive():
                stuck.append(t.name)
        _open.discard(self)
        if stuck:
            # Freeing the member under a thread still in its call would
            # crash: the finalizer frees it once the State is dropped,
            # which the thread, holding it, allows only when it returns.
            log.warning("rank %d: gradwire thread %s still in a call after %.0f s; "
                        "the member is freed when the State is dropped", self.rank,
                        " and ".join(stuck), self._join_s)
            return
        fin()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _serve(ref, items, method):
    """A State's thread: hands each item of the queue to the State's
    method (_run: the progress thread's jobs, in order; _complete: the
    completing thread of pipelined rounds). It holds the State (ref: a
    weak reference) only while one runs, so that a State nobody else
    holds is collected, and stops at None or then."""
    while True:
        item = items.get()
        try:
            st = ref() if item is not None else None
            if st is None:
                return
            try:
                getattr(st, method)(item)
            finally:
                del st, item
        finally:
            items.task_done()


def _release(member, jobs, done):
    """State's finalizer, and close()'s last step: stops the threads (at
    the sentinels; none is in a call of the member, or the State would
    not be collected: nothing is joined here) and frees the member."""
    jobs.put(None)
    done.put(None)
    member.close()


def _thread_cpu(name):
    """CPU seconds of this process's threads called name (Linux /proc)."""
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for tid in tasks:
        try:
            with open("/proc/self/task/%s/comm" % tid) as f:
                if f.read().strip() != name:
                    continue
            with open("/proc/self/task/%s/stat" % tid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])   # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total / tick


def hook(state, bucket):
    """DDP communication hook: register with ddp.register_comm_hook(state,
    hook). Returns a future the progress thread completes with the bucket
    holding the (averaged) sum over ranks."""
    return state._bucket(bucket)
