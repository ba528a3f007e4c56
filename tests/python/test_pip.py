"""The package as pip installs it, away from the source tree:

  test_pip.py BUILDDIR PROJECT_VERSION

1. meson-installs BUILDDIR into a temporary root (as tests/test_install.sh
   does), so the library is an installed one, not the build tree's;
2. makes a fresh venv (--system-site-packages: Debian's torch) and
   `pip install --no-build-isolation --no-index` a copy of python/ with
   the [torch] extra: offline, and an in-tree build's leftovers (build/,
   *.egg-info) land in the copy, not in the source tree;
3. imports gradwire from the venv in a directory outside the source tree,
   without PYTHONPATH or GRADWIRE_LIB, the installed library on
   LD_LIBRARY_PATH (what ldconfig gives an install under /usr/local): the
   package must be the venv's, the library the installed one, and the
   package's version (its metadata's and __version__) the library's
   gw_version_string() and meson.build's;
4. runs tests/python/test_torch.py's `exact 2` with the venv's python,
   from a copy of test_torch.py and ddp_cases.py two levels under an
   empty directory: both put <two levels up>/python on the path, which
   from the source tree would be the tree's package; from the copy it
   does not exist, so every rank imports the venv's;
5. puts the library under the venv's own prefix (where `meson install`
   with --prefix=$VIRTUAL_ENV puts it) and imports again without
   LD_LIBRARY_PATH: the package finds it beside itself.

Exits 77 when torch cannot be imported or the interpreter cannot make a
venv with pip (python3-venv) or build a wheel offline (python3-setuptools,
python3-wheel); scripts/install-deps.sh installs them.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

for mod, pkg in (("torch", "python3-torch"), ("ensurepip", "python3-venv"),
                 ("setuptools", "python3-setuptools"), ("wheel", "python3-wheel")):
    if importlib.util.find_spec(mod) is None:
        print("skip: %s cannot import %s; scripts/install-deps.sh installs %s"
              % (sys.executable, mod, pkg))
        sys.exit(77)

# What the child reports: where gradwire came from, the library file the
# process mapped (library_path is the name given to the loader, not
# always a path), and the versions.
PROBE = r"""
import importlib.metadata, json, os, sys
import gradwire
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libgradwire.so" in l]
print(json.dumps({
    "file": gradwire.__file__, "mapped": sorted(set(maps)),
    "version": gradwire.__version__, "alias": gradwire.version,
    "library": gradwire.library_version,
    "dist": importlib.metadata.version("gradwire"),
    "typed": os.path.exists(os.path.join(os.path.dirname(gradwire.__file__), "py.typed")),
    "codecs": gradwire.codecs(), "path": sys.path}))
"""


def sh(cmd, timeout=300, **kw):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, **kw)
    return r


def clean_env(**extra):
    """The environment of a user of the installed package: nothing that
    points into the source or build tree (meson's own LD_LIBRARY_PATH
    included), and pip without this host's configuration (find-links, a
    local wheel directory), so the install is offline from python/ alone."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "GRADWIRE_LIB",
                        "LD_LIBRARY_PATH", "VIRTUAL_ENV") and not k.startswith("PIP_")}
    env.update(PYTHONNOUSERSITE="1", PIP_CONFIG_FILE=os.devnull,
               PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", OMP_NUM_THREADS="1")
    env.update(extra)
    return env


def under(path, top):
    path, top = os.path.realpath(path), os.path.realpath(top)
    return os.path.commonpath([path, top]) == top


def probe(python, cwd, env, want_lib_dir, venv, version):
    r = sh([python, "-c", PROBE], cwd=cwd, env=env, timeout=120)
    if r.returncode != 0:
        print(r.stdout)
        print("FAIL: the venv's python cannot import gradwire")
        return 1
    got = json.loads(r.stdout.strip().splitlines()[-1])
    print(json.dumps(got, indent=1))
    bad = []
    if not under(got["file"], venv):
        bad.append("gradwire came from %s, not the venv %s" % (got["file"], venv))
    if under(got["file"], ROOT) or any(p and under(p, os.path.join(ROOT, "python"))
                                       for p in got["path"]):
        bad.append("the source tree's python/ is on the path")
    if len(got["mapped"]) != 1 or not under(got["mapped"][0], want_lib_dir):
        bad.append("the library mapped is %s, not the one in %s" % (got["mapped"], want_lib_dir))
    versions = {k: got[k] for k in ("version", "alias", "library", "dist")}
    if set(versions.values()) != {version}:
        bad.append("versions differ: %s, meson.build's %s" % (versions, version))
    if not got["typed"]:
        bad.append("py.typed is not installed")
    if "raw" not in got["codecs"]:
        bad.append("codecs() = %s" % got["codecs"])
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


def main():
    builddir, version = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="gw-pip.")
    try:
        return run(builddir, version, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(builddir, version, tmp):
    # 1. The library, installed.
    r = sh(["meson", "install", "-C", builddir, "--destdir", os.path.join(tmp, "root"),
            "--no-rebuild", "--quiet"])
    if r.returncode != 0:
        print(r.stdout)
        print("FAIL: meson install")
        return 1
    sos = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(tmp, "root"))
           for f in fs if f == "libgradwire.so.0"]
    if len(sos) != 1:
        print("FAIL: meson install gave %s as libgradwire.so.0" % sos)
        return 1
    libdir = os.path.dirname(sos[0])

    # 2. A fresh venv; the package from a copy of python/.
    src = os.path.join(tmp, "src")
    shutil.copytree(os.path.join(ROOT, "python"), src,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "dist", "*.egg-info"))
    venv = os.path.join(tmp, "venv")
    r = sh([sys.executable, "-m", "venv", "--system-site-packages", venv], env=clean_env())
    if r.returncode != 0:
        print(r.stdout)
        if "ensurepip" in r.stdout:
            print("skip: no venv with pip here; scripts/install-deps.sh installs python3-venv")
            return 77
        print("FAIL: python3 -m venv")
        return 1
    py = os.path.join(venv, "bin", "python")
    r = sh([os.path.join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index",
            "--no-cache-dir", src + "[torch]"], cwd=tmp, env=clean_env())
    print(r.stdout)
    if r.returncode != 0:
        print("FAIL: pip install --no-build-isolation --no-index ./python[torch]")
        return 1

    # 3. Import, outside the source tree, the installed library found by
    # the loader.
    env = clean_env(LD_LIBRARY_PATH=libdir)
    if probe(py, tmp, env, libdir, venv, version):
        return 1
    print("ok: the venv's gradwire %s loads the installed library" % version)

    # 4. DDP over the installed package: test_torch.py's exact case, W=2.
    t = os.path.join(tmp, "t")
    os.makedirs(os.path.join(t, "tests", "python"))
    for f in ("test_torch.py", "ddp_cases.py"):
        shutil.copy(os.path.join(HERE, f), os.path.join(t, "tests", "python", f))
    assert not os.path.exists(os.path.join(t, "python"))
    r = sh([py, os.path.join(t, "tests", "python", "test_torch.py"), "exact", "2"],
           cwd=t, env=env, timeout=360)
    print(r.stdout)
    if r.returncode != 0:
        print("FAIL: test_torch.py exact 2 with the venv's python exited %d" % r.returncode)
        return 1
    print("ok: exact W=2 over the pip-installed package")

    # 5. The library under the venv's prefix: found beside the package.
    multiarch = sysconfig.get_config_var("MULTIARCH")
    vlib = os.path.join(venv, "lib", multiarch) if multiarch else os.path.join(venv, "lib")
    os.makedirs(vlib, exist_ok=True)
    for f in os.listdir(libdir):
        if f.startswith("libgradwire.so"):
            shutil.copy(os.path.join(libdir, f), os.path.join(vlib, f), follow_symlinks=False)
    if probe(py, tmp, clean_env(), vlib, venv, version):
        return 1
    print("ok: a library under the venv's prefix is found without LD_LIBRARY_PATH")
    return 0


if __name__ == "__main__":
    sys.exit(main())
