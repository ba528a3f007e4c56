"""Runs examples/ddp_minimal.py as a user would, with its own launcher:
W ranks, each codec given, and checks that every run exits 0 and that
rank 0's loss fell (last below half the first): the example must stay a
working program, not just importable text.

  test_example.py W CODEC [CODEC ...]

Exits 77 when torch cannot be imported.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLE = os.path.join(ROOT, "examples", "ddp_minimal.py")

try:
    import torch  # noqa: F401
except ImportError as e:
    print("skip: torch cannot be imported (%s); scripts/install-deps.sh installs "
          "python3-torch" % e)
    sys.exit(77)


def run(world, codec):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), OMP_NUM_THREADS="1")
    cmd = [sys.executable, EXAMPLE, "--world", str(world), "--codec", codec,
           "--timeout", "240"]
    try:
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300)
    except subprocess.TimeoutExpired as e:
        print(e.stdout or "")
        print("FAIL: %s: the example did not finish in 300 s" % codec)
        return 1
    print(r.stdout)
    if r.returncode != 0:
        print("FAIL: %s W=%d: the example exited %d" % (codec, world, r.returncode))
        return 1
    m = re.search(r"^loss ([0-9.e+-]+) -> ([0-9.e+-]+)$", r.stdout, re.M)
    if not m:
        print("FAIL: %s: no 'loss FIRST -> LAST' line" % codec)
        return 1
    first, last = float(m.group(1)), float(m.group(2))
    if not last < first / 2:
        print("FAIL: %s W=%d: the loss went %g -> %g, not below half" % (codec, world, first, last))
        return 1
    print("ok: %s W=%d: loss %g -> %g" % (codec, world, first, last))
    return 0


def main():
    world, codecs = int(sys.argv[1]), sys.argv[2:]
    sys.exit(1 if any([run(world, c) for c in codecs]) else 0)


if __name__ == "__main__":
    main()
