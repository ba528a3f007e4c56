#!/usr/bin/env python3
"""Writes a copy of gpudirect/gw_cuda.cu with __syncthreads() barriers
removed: drop_sync.py IN OUT WHICH, WHICH "all", "none" (a control) or the
1-based index of the one barrier to remove. test_gpu_nosync runs the
kernels of that copy on hostcuda's fibers and must see them go wrong."""
import re
import sys

src, out, which = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(src).read()
calls = [m.start() for m in re.finditer(r'__syncthreads\(\);', text)]
if not calls:
    sys.exit("drop_sync.py: no __syncthreads() in " + src)
drop = (calls if which == "all" else [] if which == "none"
        else [calls[int(which) - 1]])
for at in reversed(drop):
    text = text[:at] + "/* barrier removed */;" + text[at + len("__syncthreads();"):]
# Compiled from the build tree: gpudirect/ on the include path finds its
# headers as it finds gw_cuda.cu's own.
open(out, "w").write(text)
