"""Finds and loads libgradwire and declares the C calls the package uses.

ctypes is the binding (not a C++ extension against libtorch-dev): the C
surface is flat (gw/member.h: strings, integers, one float pointer), so
no struct layout is mirrored here; ctypes releases the GIL for the whole
of every call, so training threads run while gradwire works; and nothing
is compiled against one torch version, so the package works with any
torch that has DDP comm hooks and without a compiler on the host.
"""
import ctypes
import ctypes.util
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("GRADWIRE_LIB")
    if env:
        yield env
        return
    # A built tree: python/gradwire/ sits two levels under the source root,
    # beside build directories (build/, build-*/, or any meson builddir).
    root = os.path.dirname(os.path.dirname(_HERE))
    for d in ["build"] + sorted(glob.glob(os.path.join(root, "build*"))):
        p = os.path.join(root, d, "libgradwire.so.0")
        if os.path.exists(p) and "asan" not in os.path.basename(d):
            yield p
    # Installed: the dynamic loader's path, then the name ldconfig knows.
    yield "libgradwire.so.0"
    found = ctypes.util.find_library("gradwire")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("gradwire: libgradwire not found; build the tree (bash "
                      "scripts/build.sh build), install it (meson install), or set "
                      "GRADWIRE_LIB. Tried: " + "; ".join(tried))


lib, path = _load()

_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int
_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
for name, res, args in [
    ("gw_member_new", _P, []),
    ("gw_member_free", None, [_P]),
    ("gw_member_set", _I, [_P, _S, _S]),
    ("gw_member_open", _I, [_P, _U32, _U32]),
    ("gw_member_endpoint", _I, [_P, _S, ctypes.c_size_t]),
    ("gw_member_connect", _I, [_P, _U64, _S]),
    ("gw_member_allreduce", _I, [_P, _P, ctypes.POINTER(_U64)]),
    ("gw_member_allreduce_pipelined", _I, [_P, _U32, ctypes.POINTER(_U64)]),
    ("gw_member_tensor_ready", _I, [_P, _U32, _U32, _P, _I, ctypes.c_float]),
    ("gw_member_tensor_wait", _I, [_P, _U32, _U32, _U32]),
    ("gw_member_round_cancel", _I, [_P, _U32, _I]),
    ("gw_error_detail", _S, []),
    ("gw_error_name", _S, [_I]),
    ("gw_strerror", _S, [_I]),
    ("gw_version_string", _S, []),
    ("gw_dp_backends", ctypes.POINTER(_S), []),
]:
    try:
        f = getattr(lib, name)
    except AttributeError:
        raise ImportError("gradwire: %s lacks %s: a library older than this "
                          "package (GRADWIRE_0.6)" % (path, name))
    f.restype = res
    f.argtypes = args

# gw/member.h's enum gw_member_info, in order.
INFO = ("round", "chunks", "short_chunks", "left_out", "bytes_up", "bytes_down",
        "bytes_up_once", "bytes_down_once", "nnz", "applied")


def backends():
    """Names (bytes) of the dataplane backends built into the library."""
    out, names = [], lib.gw_dp_backends()
    i = 0
    while names[i]:
        out.append(names[i])
        i += 1
    return out
