"""Finds and loads libgradwire and declares the C calls the package uses.

ctypes is the binding (not a C++ extension against libtorch-dev): the C
surface is flat (gw/member.h: strings, integers, one float pointer), so
no struct layout is mirrored here; ctypes releases the GIL for the whole
of every call, so training threads run while gradwire works; and nothing
is compiled against one torch version, so the package works with any
torch that has DDP comm hooks and without a compiler on the host.

Where the library is looked for, first found wins:

1. GRADWIRE_LIB, a path (nothing else is tried);
2. a built source tree's build*/ directories, when this package is the
   tree's python/gradwire (not an ASan build: the interpreter would need
   libasan preloaded);
3. the lib directories of the prefix this package is installed under
   (meson's <prefix>/lib/python3/dist-packages, a venv's or ~/.local's
   lib/python3.X/site-packages): a library installed beside the package;
4. the dynamic loader's search (LD_LIBRARY_PATH, the ldconfig cache);
5. /usr/local's lib directories, meson's default prefix, where a library
   lies before ldconfig has been run;
6. ctypes.util.find_library("gradwire").
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import logging
import os
import sysconfig
from typing import Iterator

log = logging.getLogger("gradwire")

SONAME = "libgradwire.so.0"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _lib_dirs(prefix: str) -> list[str]:
    """Where meson (Debian's multiarch libdir) or another build system
    puts a prefix's shared libraries."""
    dirs = []
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs.append(os.path.join(prefix, "lib", multiarch))
    return dirs + [os.path.join(prefix, "lib64"), os.path.join(prefix, "lib")]


def _install_prefix(here: str) -> str | None:
    """The prefix of <prefix>/lib/python3[.X]/{dist,site}-packages/gradwire,
    or None when the package does not lie so (a source tree)."""
    parts = here.split(os.sep)
    if (len(parts) >= 5 and parts[-4] == "lib" and parts[-3].startswith("python3")
            and parts[-2] in ("dist-packages", "site-packages")):
        return os.sep.join(parts[:-4]) or os.sep
    return None


def _candidates() -> Iterator[str]:
    env = os.environ.get("GRADWIRE_LIB")
    if env:
        yield env
        return
    # A source tree: python/gradwire/ sits two levels under the root,
    # beside build directories (build/, build-*/, or any meson builddir).
    # Only there: an installed package's grandparent is no source tree.
    root = os.path.dirname(os.path.dirname(_HERE))
    if os.path.exists(os.path.join(root, "gradwire.map")):
        for d in ["build"] + sorted(glob.glob(os.path.join(root, "build*"))):
            p = os.path.join(root, d, SONAME)
            if os.path.exists(p) and "asan" not in os.path.basename(d):
                yield p
    # Installed: the library beside the package first (the one it was
    # installed with), then whatever the loader knows.
    prefix = _install_prefix(_HERE)
    if prefix:
        for d in _lib_dirs(prefix):
            p = os.path.join(d, SONAME)
            if os.path.exists(p):
                yield p
    yield SONAME
    for d in _lib_dirs("/usr/local"):
        p = os.path.join(d, SONAME)
        if os.path.exists(p):
            yield p
    found = ctypes.util.find_library("gradwire")
    if found:
        yield found


def _load() -> tuple[ctypes.CDLL, str]:
    tried = []
    seen = set()
    for path in _candidates():
        if path in seen:
            continue
        seen.add(path)
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            log.debug("not %s: %s", path, e)
            tried.append("%s (%s)" % (path, e))
            continue
        log.debug("loaded %s", path)
        return lib, path
    raise ImportError("gradwire: libgradwire not found; build the tree (bash "
                      "scripts/build.sh build), install it (meson install, then "
                      "ldconfig), or set GRADWIRE_LIB to its path. Tried: " + "; ".join(tried))


lib, path = _load()

_P = ctypes.c_void_p
_S = ctypes.c_char_p
_I = ctypes.c_int
_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
for _name, _res, _args in [
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
    ("gw_member_residual", _I, [_P, _P, _U64]),
    ("gw_member_info_name", _S, [_I]),
    ("gw_codec_list", _I, [ctypes.POINTER(_I), _I]),
    ("gw_codec_name", _S, [_I]),
    ("gw_error_detail", _S, []),
    ("gw_error_name", _S, [_I]),
    ("gw_strerror", _S, [_I]),
    ("gw_version_string", _S, []),
    ("gw_dp_backends", ctypes.POINTER(_S), []),
]:
    try:
        _f = getattr(lib, _name)
    except AttributeError:
        raise ImportError("gradwire: %s lacks %s: a library older than this "
                          "package (GRADWIRE_0.6)" % (path, _name)) from None
    _f.restype = _res
    _f.argtypes = _args


def error_name(rc: int) -> str:
    """The GW_E* name of a negative return code, as the library spells it
    ("GW_EINVAL"; "GW_E?" for a code it does not know)."""
    return lib.gw_error_name(rc).decode()


def _error_codes() -> dict[str, int]:
    """Every GW_E* code the loaded library names, by its name: the codes
    are part of the ABI (-1, -2, ... with no gaps), the names the
    library's (gw_error_name), so enum gw_error is not mirrored here."""
    codes: dict[str, int] = {}
    for rc in range(-1, -1024, -1):
        name = error_name(rc)
        if name == "GW_E?":
            break
        codes[name] = rc
    return codes


# "GW_EINVAL" -> -1, ...: what Python passes to the library (a round's
# cancellation) by name, as Error.code names what it returns.
ERRORS: dict[str, int] = _error_codes()


def strerror(rc: int) -> str:
    return lib.gw_strerror(rc).decode(errors="replace")


def detail() -> str:
    """What the last failed call of this thread said (the option, the peer)."""
    return lib.gw_error_detail().decode(errors="replace")


def _info_names() -> tuple[str, ...]:
    names: list[str] = []
    while True:
        name = lib.gw_member_info_name(len(names))
        if name is None:
            return tuple(names)
        names.append(name.decode())


# gw_member_allreduce's counters, named and counted by the library loaded
# (enum gw_member_info): info[] is sized by it, not by this package.
INFO: tuple[str, ...] = _info_names()


def codecs() -> list[str]:
    """Names of the codecs built into the library, in its registry's order."""
    n = lib.gw_codec_list(None, 0)
    ids = (_I * n)()
    n = min(n, lib.gw_codec_list(ids, n))
    names = (lib.gw_codec_name(i) for i in ids[:n])
    return [s.decode() for s in names if s is not None]


def backends() -> list[bytes]:
    """Names (bytes) of the dataplane backends built into the library."""
    out, names = [], lib.gw_dp_backends()
    i = 0
    while names[i]:
        out.append(names[i])
        i += 1
    return out
