"""The Python package's own surface, without torch:

  test_api.py PROJECT_VERSION       (GRADWIRE_LIB: the library to load)

- gradwire.__version__ (python/gradwire/_version.py, which pip's metadata
  reads) equals meson.build's project version and the library's
  gw_version_string(); gradwire.version is the same;
- INFO, the counters' names, comes from gw_member_info_name: GW_MI_N of
  them, NULL past either end, and allreduce's dict has exactly those keys;
- codecs() is the library's registry, and an unknown codec raises
  ValueError naming the argument (up, down) and listing the codecs;
- Error.code is gw_error_name's, for known and unknown codes and for a
  failure the library raised;
- the package logs to the "gradwire" logger and prints nothing; py.typed
  ships beside it; _install_prefix recognises the installed layouts;
- _lib.ERRORS is gw_error_name's table (the codes Python passes by name);
- Member closes as a context manager, close() twice is fine, one dropped
  unclosed is freed when collected, and a process that leaves one open
  (its co-located shard's thread running) exits promptly and cleanly;
- gradwire.run patches torch's Std.from_str only where it is defective
  (torch 1.13's, under Python 3.11 on), probing it rather than versions.
"""
import array
import ast
import ctypes
import enum
import gc
import logging
import time
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PKG = os.path.join(ROOT, "python", "gradwire")
sys.path.insert(0, os.path.dirname(PKG))

import gradwire  # noqa: E402
from gradwire import _lib  # noqa: E402

failures = 0


def check(ok, what):
    global failures
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    failures += not ok


def main():
    project = sys.argv[1]
    lib = _lib.lib
    check(os.path.realpath(gradwire.__file__) == os.path.realpath(os.path.join(PKG, "__init__.py")),
          "gradwire is the source tree's (%s)" % gradwire.__file__)
    have = lib.gw_version_string().decode()
    check(gradwire.__version__ == project == have == gradwire.version
          == gradwire.library_version,
          "__version__ %s, meson.build %s, gw_version_string() %s, version %s"
          % (gradwire.__version__, project, have, gradwire.version))

    # Counters: named and counted by the library.
    names = []
    while lib.gw_member_info_name(len(names)) is not None:
        names.append(lib.gw_member_info_name(len(names)).decode())
    check(tuple(names) == gradwire.INFO and len(names) == 10,
          "INFO = gw_member_info_name(0..%d) = %s" % (len(names) - 1, names))
    check(lib.gw_member_info_name(-1) is None, "gw_member_info_name(-1) is NULL")
    m = gradwire.Member(0, 1, up="raw")
    m.connect(8, [m.endpoint])
    buf = array.array("f", range(8))
    info = m.allreduce(buf)
    check(list(info) == names and info["chunks"] >= 1 and list(buf) == list(range(8)),
          "allreduce's counters: %s" % info)
    check(m.totals["bytes_up"] == info["bytes_up"] > 0, "totals: %s" % m.totals)
    m.close()

    # Codecs.
    cs = gradwire.codecs()
    n = lib.gw_codec_list(None, 0)
    check(len(cs) == n == len(set(cs)) and {"raw", "3lc", "topk", "int8"} <= set(cs),
          "codecs() = %s (gw_codec_list: %d)" % (cs, n))
    for arg, value in (("up", "nope"), ("down", "nope:x=1")):
        try:
            gradwire.Member(0, 1, **{arg: value})
            check(False, "%s=%r accepted" % (arg, value))
        except ValueError as e:
            msg = str(e)
            check(("%s: unknown codec 'nope'" % arg) in msg and all(c in msg for c in cs),
                  "%s=%r -> ValueError: %s" % (arg, value, msg))
    try:   # a known codec's bad parameter: the library's message, no list
        gradwire.Member(0, 1, up="3lc:sparsity=3")
        check(False, "3lc:sparsity=3 accepted")
    except ValueError as e:
        check("up: parameter sparsity" in str(e) and "codecs this library" not in str(e),
              "up='3lc:sparsity=3' -> ValueError: %s" % e)

    # Error codes by the library's names.
    for rc, want in ((-1, "GW_EINVAL"), (-8, "GW_ECODEC"), (-9999, "GW_E?")):
        e = gradwire.Error("call", rc, "")
        check(e.code == want == lib.gw_error_name(rc).decode() and want in str(e),
              "Error(rc=%d).code = %s: %s" % (rc, e.code, e))
    m = gradwire.Member(0, 2)
    try:
        m.connect(8, ["127.0.0.1:1"])     # one endpoint for two ranks
        check(False, "connect with one endpoint for W=2 accepted")
    except gradwire.Error as e:
        check(e.code == _lib.error_name(e.rc) and e.code.startswith("GW_E") and e.code != "GW_E?",
              "a library failure: %s (code %s)" % (e, e.code))
    m.close()

    # Error codes by name, from the library.
    errors = _lib.ERRORS
    check(errors.get("GW_EINVAL") == -1 and errors.get("GW_ESTATE") == -15
          and all(lib.gw_error_name(rc).decode() == n for n, rc in errors.items())
          and sorted(errors.values(), reverse=True) == list(range(-1, -len(errors) - 1, -1)),
          "_lib.ERRORS: %d codes, GW_EINVAL ... %s" % (len(errors), min(errors, key=errors.get)))

    # Closing: with, close() twice, dropped unclosed, left open at exit.
    with gradwire.Member(0, 1, up="raw") as m:
        m.connect(8, [m.endpoint])
        m.allreduce(array.array("f", range(8)))
        fin = m._finalizer
        check(fin.alive, "an open Member's finalizer is pending")
    check(not fin.alive and m._m is None, "with Member(...): closed at the block's end")
    try:
        m.close()
        m.close()
        check(True, "close() twice more: a no-op")
    except Exception as e:  # noqa: BLE001
        check(False, "close() again raised %r" % e)
    try:
        m.allreduce(array.array("f", range(8)))
        check(False, "allreduce on a closed Member accepted")
    except gradwire.Error as e:
        check(e.code == "GW_EINVAL", "allreduce on a closed Member: %s" % e)
    m = gradwire.Member(0, 1, up="raw")
    m.connect(8, [m.endpoint])
    fin = m._finalizer
    del m
    gc.collect()
    check(not fin.alive, "a Member dropped unclosed is freed when collected")
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", "import array, gradwire\n"
                        "m = gradwire.Member(0, 1, up='raw')\n"
                        "m.connect(8, [m.endpoint])\n"
                        "m.allreduce(array.array('f', range(8)))\n"
                        "kept = gradwire.Member(0, 1)\n"
                        "print('exiting')\n"],
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(PKG)),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(r.returncode == 0 and r.stdout.strip() == "exiting",
          "a process leaving Members open exits 0 in %.1f s, saying nothing more: %r"
          % (time.monotonic() - t0, r.stdout.strip()))

    # gradwire.run's probe, against the two ways torch has parsed
    # --redirects: by iterating Std (torch 1.13), by `in` (later).
    from gradwire import run

    def std_with(parse):
        class Std(enum.IntFlag):
            NONE = 0
            OUT = 1
            ERR = 2
            ALL = OUT | ERR
        Std.from_str = classmethod(parse)
        return Std

    def parser(one):
        def from_str(cls, vm):
            if ":" in vm:
                return {int(i): one(cls, v) for i, v in (x.split(":") for x in vm.split(","))}
            return one(cls, vm)
        return from_str

    def by_iteration(cls, v):
        for s in cls:
            if s == int(v):
                return s
        return None

    def by_membership(cls, v):
        s = cls(int(v))
        return s if s in cls else None

    old, new = std_with(parser(by_iteration)), std_with(parser(by_membership))
    want = sys.version_info >= (3, 11)
    check(run._needs_patch(old) == want and not run._needs_patch(new)
          and not run._needs_patch(None),
          "gradwire.run patches torch 1.13's Std.from_str %s Python %d.%d, not a "
          "parser that works" % ("under" if want else "not under", *sys.version_info[:2]))
    saved, run._api = run._api, type("api", (), {"Std": old})
    try:
        check(run._from_str("0") is old.NONE and run._from_str("3") is old.ALL
              and run._from_str("0:3,1:0") == {0: old.ALL, 1: old.NONE},
              "gradwire.run's parser maps 0..3 and per-rank maps by number")
    finally:
        run._api = saved

    # Logging, no prints.
    r = subprocess.run([sys.executable, "-c", "import logging; logging.basicConfig("
                        "level=logging.DEBUG); import gradwire"],
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(PKG)),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(r.returncode == 0 and "DEBUG:gradwire:loaded " in r.stdout,
          "the 'gradwire' logger says which library: %r" % r.stdout.strip())
    check(_lib.log is logging.getLogger("gradwire"), "_lib.log is logging.getLogger('gradwire')")
    prints = []
    for f in sorted(os.listdir(PKG)):
        if f.endswith(".py"):
            tree = ast.parse(open(os.path.join(PKG, f)).read(), f)
            prints += ["%s:%d" % (f, n.lineno) for n in ast.walk(tree)
                       if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"]
    check(not prints, "no print() in the package %s" % prints)
    check(os.path.exists(os.path.join(PKG, "py.typed")), "py.typed")

    # Where an installed package looks for its library.
    ip = _lib._install_prefix
    for here, want in (("/usr/local/lib/python3/dist-packages/gradwire", "/usr/local"),
                       ("/v/lib/python3.11/site-packages/gradwire", "/v"),
                       ("/home/u/.local/lib/python3.11/site-packages/gradwire", "/home/u/.local"),
                       (PKG, None)):
        check(ip(here) == want, "_install_prefix(%s) = %s" % (here, ip(here)))
    assert isinstance(lib, ctypes.CDLL)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
