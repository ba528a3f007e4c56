"""gradwire from Python: compressed, packet-sized gradient allreduce.

    import gradwire
    m = gradwire.Member(rank, world, up="3lc", down="3lc")
    endpoints = <every rank's m.endpoint, in rank order>
    m.connect(dim, endpoints)
    info = m.allreduce(tensor_or_buffer)   # in place: the sum over ranks

gradwire.torch holds the PyTorch DDP communication hook built on it.
"""
import ctypes

from ._lib import INFO, lib, path as library_path

__all__ = ["Error", "Member", "library_path", "version", "DTYPES"]

# gw_dtype of <gw/collective.h>: the types a pipelined round takes in place.
DTYPES = {"float32": 0, "bfloat16": 1, "float16": 2}

version = lib.gw_version_string().decode()


class Error(RuntimeError):
    """A gradwire call failed: code is the GW_E* name, detail what the
    library said (which option, which peer, how many chunks)."""

    def __init__(self, call, rc, detail):
        self.call = call
        self.rc = rc
        self.code = lib.gw_error_name(rc).decode()
        self.detail = detail
        super().__init__("gradwire: %s: %s (%s)" % (
            call, detail or lib.gw_strerror(rc).decode(), self.code))


def _detail():
    return lib.gw_error_detail().decode(errors="replace")


# Options whose Python values are not text.
def _text(value):
    if isinstance(value, bool):
        raise TypeError("a flag, not a value")
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Member:
    """One process of a gradwire job: its worker and (shards="colocated",
    the default) the aggregator shard it hosts on a progress thread.
    Options are gw/member.h's, with "_" for "-" (timeout_ms, key_file, ...);
    a bad one raises ValueError with the library's message, naming it."""

    def __init__(self, rank, world, **options):
        for name, v in (("rank", rank), ("world", world)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("%s: %r is not a whole number" % (name, v))
        self._m = lib.gw_member_new()
        if not self._m:
            raise MemoryError("gradwire: gw_member_new")
        self.rank, self.world = rank, world
        self.dim = None
        self.options = {}
        for name, value in options.items():
            if value is None:
                continue
            self.set(name, value)
        rc = lib.gw_member_open(self._m, rank, world)
        if rc < 0:
            detail = _detail()
            self.close()
            if rc == -1:   # GW_EINVAL: the arguments
                raise ValueError("gradwire: " + detail)
            raise Error("open", rc, detail)
        buf = ctypes.create_string_buffer(96)
        rc = lib.gw_member_endpoint(self._m, buf, len(buf))
        if rc < 0:
            raise Error("endpoint", rc, _detail())
        self.endpoint = buf.value.decode()
        self.totals = dict.fromkeys(INFO[4:8], 0)
        self.rounds = 0

    def set(self, name, value):
        key = name.replace("_", "-")
        try:
            text = _text(value)
        except TypeError as e:
            raise ValueError("%s: %r is %s" % (name, value, e))
        rc = lib.gw_member_set(self._m, key.encode(), text.encode())
        if rc < 0:
            raise ValueError("gradwire: " + _detail().replace(key + ":", name + ":", 1))
        self.options[name] = value

    def connect(self, dim, endpoints=None):
        """Starts the job over dim float32 elements; endpoints: every
        rank's .endpoint in rank order (co-located shards), else None."""
        if not isinstance(dim, int) or dim <= 0:
            raise ValueError("dim: %r is not a positive whole number" % (dim,))
        text = ",".join(endpoints).encode() if endpoints is not None else None
        rc = lib.gw_member_connect(self._m, dim, text)
        if rc < 0:
            raise Error("connect", rc, _detail())
        self.dim = dim

    def allreduce(self, buf):
        """buf (a contiguous float32 torch tensor of dim elements, or any
        object with a writable float32 buffer) <- the sum over ranks. The
        GIL is released during the call. Returns this round's counters."""
        ptr, n = _pointer(buf, self.options.get("gpu"))
        if n != self.dim:
            raise ValueError("buf: %d elements, but the job has %s" % (n, self.dim))
        info = (ctypes.c_uint64 * len(INFO))()
        rc = lib.gw_member_allreduce(self._m, ptr, info)
        if rc < 0:
            raise Error("allreduce", rc, _detail())
        out = dict(zip(INFO, info))
        for k in self.totals:
            self.totals[k] += out[k]
        self.rounds += 1
        return out

    # ---- pipelined rounds (gw_member_allreduce_pipelined) --------------
    # Tensors of the layout handed over while the round runs, from
    # another thread; their results written in place. ptr: the address of
    # a tensor's values (dtype DTYPES[...]), read and then overwritten.

    def tensor_ready(self, tag, tensor, ptr, dtype, scale):
        rc = lib.gw_member_tensor_ready(self._m, tag, tensor, ptr, dtype, scale)
        if rc < 0:
            raise Error("tensor_ready", rc, _detail())

    def allreduce_pipelined(self, tag):
        info = (ctypes.c_uint64 * len(INFO))()
        rc = lib.gw_member_allreduce_pipelined(self._m, tag, info)
        if rc < 0:
            raise Error("allreduce", rc, _detail())
        out = dict(zip(INFO, info))
        for k in self.totals:
            self.totals[k] += out[k]
        self.rounds += 1
        return out

    def tensor_wait(self, tag, tensor, timeout_ms):
        """0, or the round's GW_E* code and its detail (rc, text)."""
        rc = lib.gw_member_tensor_wait(self._m, tag, tensor, timeout_ms)
        return (rc, _detail()) if rc < 0 else (0, "")

    def round_cancel(self, tag, rc):
        lib.gw_member_round_cancel(self._m, tag, rc)

    def close(self):
        if getattr(self, "_m", None):
            lib.gw_member_free(self._m)
            self._m = None

    def __del__(self):
        self.close()


def _pointer(buf, gpu=None):
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
