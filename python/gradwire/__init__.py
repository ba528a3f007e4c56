"""gradwire from Python: compressed, packet-sized gradient allreduce.

    import gradwire
    m = gradwire.Member(rank, world, up="3lc", down="3lc")
    endpoints = <every rank's m.endpoint, in rank order>
    m.connect(dim, endpoints)
    info = m.allreduce(tensor_or_buffer)   # in place: the sum over ranks

gradwire.torch holds the PyTorch DDP communication hook built on it.
The package logs to the "gradwire" logger (logging.getLogger("gradwire")):
which library it loaded at DEBUG, a package and library of different
versions at WARNING.
"""
from __future__ import annotations

import ctypes
import weakref
from typing import Any, Sequence

from . import _lib
from ._lib import INFO, codecs, lib, log, path as library_path
from ._version import __version__

__all__ = ["DTYPES", "Error", "Member", "codecs", "library_path", "library_version",
           "version"]

# gw_dtype of <gw/collective.h>: the types a pipelined round takes in place.
DTYPES = {"float32": 0, "bfloat16": 1, "float16": 2}

# What the loaded library says it is; __version__ is the package's. They
# are one number when package and library come from the same tree.
library_version: str = lib.gw_version_string().decode()
version = __version__   # the name before __version__ existed

if library_version != __version__:
    log.warning("gradwire: package %s, but the library (%s) is %s; install both "
                "from one tree", __version__, library_path, library_version)


class Error(RuntimeError):
    """A gradwire call failed: call is which one, rc the negative return
    code, code its GW_E* name as the library spells it (gw_error_name),
    detail what the library said (which option, which peer, how many
    chunks)."""

    def __init__(self, call: str, rc: int, detail: str) -> None:
        self.call = call
        self.rc = rc
        self.code = _lib.error_name(rc)
        self.detail = detail
        super().__init__("gradwire: %s: %s (%s)" % (
            call, detail or _lib.strerror(rc), self.code))


# Options whose Python values are not text.
def _text(value: object) -> str:
    if isinstance(value, bool):
        raise TypeError("a flag, not a value")
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Member:
    """One process of a gradwire job: its worker and (shards="colocated",
    the default) the aggregator shard it hosts on a progress thread.
    Options are gw/member.h's, with "_" for "-" (timeout_ms, key_file, ...);
    a bad one raises ValueError with the library's message, naming it
    (an unknown codec's also lists the codecs the library has)."""

    def __init__(self, rank: int, world: int, **options: Any) -> None:
        for name, v in (("rank", rank), ("world", world)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("%s: %r is not a whole number" % (name, v))
        self._m = lib.gw_member_new()
        if not self._m:
            raise MemoryError("gradwire: gw_member_new")
        # Frees the member (and joins its co-located shard's thread) when
        # close() is called or the Member is collected, whichever first;
        # it holds the handle, not the Member. Not at exit: the process's
        # end releases all of it, and a thread still in a call then (a
        # daemon's) would find the member freed under it.
        self._finalizer = weakref.finalize(self, lib.gw_member_free, self._m)
        self._finalizer.atexit = False
        self.rank, self.world = rank, world
        self.dim: int | None = None
        self.options: dict[str, Any] = {}
        for name, value in options.items():
            if value is None:
                continue
            self.set(name, value)
        rc = lib.gw_member_open(self._m, rank, world)
        if rc < 0:
            detail = _lib.detail()
            self.close()
            if rc == _lib.ERRORS["GW_EINVAL"]:   # the arguments, not the host
                raise ValueError("gradwire: " + detail)
            raise Error("open", rc, detail)
        buf = ctypes.create_string_buffer(96)
        rc = lib.gw_member_endpoint(self._m, buf, len(buf))
        if rc < 0:
            raise Error("endpoint", rc, _lib.detail())
        self.endpoint: str = buf.value.decode()
        self.totals: dict[str, int] = dict.fromkeys(
            ("bytes_up", "bytes_down", "bytes_up_once", "bytes_down_once"), 0)
        self.rounds = 0
        log.debug("rank %d of %d open at %s", rank, world, self.endpoint)

    def set(self, name: str, value: Any) -> None:
        """Sets option name ("_" for "-") to value before the member opens."""
        key = name.replace("_", "-")
        try:
            text = _text(value)
        except TypeError as e:
            raise ValueError("%s: %r is %s" % (name, value, e)) from None
        rc = lib.gw_member_set(self._m, key.encode(), text.encode())
        if rc < 0:
            msg = "gradwire: " + _lib.detail().replace(key + ":", name + ":", 1)
            if key in ("up", "down"):
                # The C library names the codec; which ones it has is what
                # the caller needs next.
                have = codecs()
                if text.split(":", 1)[0] not in have:
                    msg += "; the codecs this library has: %s" % ", ".join(have)
            raise ValueError(msg)
        self.options[name] = value

    def connect(self, dim: int, endpoints: Sequence[str] | None = None) -> None:
        """Starts the job over dim float32 elements; endpoints: every
        rank's .endpoint in rank order (co-located shards), else None."""
        if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
            raise ValueError("dim: %r is not a positive whole number" % (dim,))
        text = ",".join(endpoints).encode() if endpoints is not None else None
        rc = lib.gw_member_connect(self._m, dim, text)
        if rc < 0:
            raise Error("connect", rc, _lib.detail())
        self.dim = dim

    def allreduce(self, buf: Any) -> dict[str, int]:
        """buf (a contiguous float32 torch tensor of dim elements, or any
        object with a writable float32 buffer) <- the sum over ranks. The
        GIL is released during the call. Returns this round's counters,
        named as the library names them (INFO)."""
        ptr, n = _pointer(buf, self.options.get("gpu"))
        if n != self.dim:
            raise ValueError("buf: %d elements, but the job has %s" % (n, self.dim))
        info = (ctypes.c_uint64 * len(INFO))()
        rc = lib.gw_member_allreduce(self._m, ptr, info)
        if rc < 0:
            raise Error("allreduce", rc, _lib.detail())
        out = dict(zip(INFO, info))
        for k in self.totals:
            self.totals[k] += out.get(k, 0)
        self.rounds += 1
        return out

    # ---- pipelined rounds (gw_member_allreduce_pipelined) --------------
    # Tensors of the layout handed over while the round runs, from
    # another thread; their results written in place. ptr: the address of
    # a tensor's values (dtype DTYPES[...]), read and then overwritten.

    def tensor_ready(self, tag: int, tensor: int, ptr: int, dtype: int, scale: float) -> None:
        rc = lib.gw_member_tensor_ready(self._m, tag, tensor, ptr, dtype, scale)
        if rc < 0:
            raise Error("tensor_ready", rc, _lib.detail())

    def allreduce_pipelined(self, tag: int) -> dict[str, int]:
        info = (ctypes.c_uint64 * len(INFO))()
        rc = lib.gw_member_allreduce_pipelined(self._m, tag, info)
        if rc < 0:
            raise Error("allreduce", rc, _lib.detail())
        out = dict(zip(INFO, info))
        for k in self.totals:
            self.totals[k] += out[k]
        self.rounds += 1
        return out

    def tensor_wait(self, tag: int, tensor: int, timeout_ms: int) -> tuple[int, str]:
        """0, or the round's GW_E* code and its detail (rc, text)."""
        rc = lib.gw_member_tensor_wait(self._m, tag, tensor, timeout_ms)
        return (rc, _lib.detail()) if rc < 0 else (0, "")

    def round_cancel(self, tag: int, rc: int) -> None:
        """Fails round tag with rc, a GW_E* code (_lib.ERRORS[name])."""
        lib.gw_member_round_cancel(self._m, tag, rc)

    def residual(self, out: Any) -> None:
        """out (a contiguous float32 CPU tensor or buffer of dim elements)
        <- this worker's error-feedback buffer, by element of the job."""
        ptr, n = _pointer(out)
        rc = lib.gw_member_residual(self._m, ptr, n)
        if rc < 0:
            raise Error("residual", rc, _lib.detail())

    def close(self) -> None:
        """Frees the member: its dataplanes, and its co-located shard
        (joining that thread). Idempotent; `with Member(...) as m:` closes
        it at the block's end, and a Member dropped unclosed is freed when
        collected. Calls after it fail (GW_EINVAL, "member: missing")."""
        self._m = None
        fin = getattr(self, "_finalizer", None)
        if fin is not None:
            fin()

    def __enter__(self) -> Member:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pointer(buf: Any, gpu: str | None = None) -> tuple[ctypes.c_void_p, int]:
    """The address and element count of a float32 buffer, without a copy:
    a CUDA tensor's device address when the member's gpu is "cuda"."""
    if hasattr(buf, "data_ptr"):   # torch.Tensor
        import torch
        where = "cuda" if gpu == "cuda" else "cpu"
        if buf.dtype != torch.float32 or not buf.is_contiguous() or buf.device.type != where:
            raise TypeError("buf: a contiguous float32 %s tensor is needed (gpu=%s), "
                            "not %s %s%s" % (where.upper() if where == "cuda" else "CPU", gpu,
                                             buf.dtype, buf.device,
                                             "" if buf.is_contiguous() else " (not contiguous)"))
        return ctypes.c_void_p(buf.data_ptr()), buf.numel()
    if gpu == "cuda":
        raise TypeError("buf: gpu='cuda' takes a CUDA tensor")
    mv = memoryview(buf)
    if mv.readonly or mv.format != "f" or not mv.c_contiguous:
        raise TypeError("buf: a writable, contiguous float32 buffer is needed")
    arr = (ctypes.c_char * mv.nbytes).from_buffer(mv)
    return ctypes.cast(arr, ctypes.c_void_p), mv.nbytes // 4
