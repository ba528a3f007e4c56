"""torchrun, usable with Debian 12's torch 1.13 under Python 3.11:

    python3 -m gradwire.run --nproc_per_node=4 train.py ...

takes torchrun's arguments unchanged. torch 1.13 parses its
--redirects and --tee values ("0" by default) in Std.from_str by
iterating its Std flag enum for the member equal to the number, and
Python 3.11 no longer yields the zero member NONE or the composite ALL
when iterating a flag enum: from_str returns None for "0" and "3", and
every default launch fails with "'NoneType' object has no attribute
'get'". Later torch releases ask `Std(int(v)) in Std` instead, which
every Python answers. The defect is a pair (a torch and a Python), not
one version to test: this probes from_str itself (_needs_patch), and
only where it does not parse every value torchrun takes replaces it
with a parser by number; then it runs torch.distributed.run's own main.
"""
from __future__ import annotations

import re
from typing import Any

try:
    from torch.distributed.elastic.multiprocessing import api as _api
except ImportError:   # no torch (main says so), or one that moved it: nothing to patch
    _api = None


def _needs_patch(std: Any) -> bool:
    """Whether std.from_str (std: torch's Std) is the defective one: it
    must map each value torchrun accepts, "0" to "3" and a per-rank map,
    to the Std of that number. A torch without from_str parses them
    some other way: nothing to patch."""
    from_str = getattr(std, "from_str", None)
    if from_str is None:
        return False
    try:
        for v in range(4):
            got = from_str(str(v))
            if not isinstance(got, std) or got != std(v):
                return True
        return from_str("0:3,1:0") != {0: std(3), 1: std(0)}
    except Exception:  # noqa: BLE001 - a parser that raises on valid input is the defect
        return True


def _from_str(vm: str) -> Any:
    std = _api.Std
    if re.fullmatch(r"[0-3]", vm):
        return std(int(vm))
    if re.fullmatch(r"(\d+:[0-3],)*\d+:[0-3]", vm):
        return {int(i): std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError("%s does not match <0-3> or <local rank>:<0-3>,..." % vm)


def main() -> None:
    if _api is not None and _needs_patch(getattr(_api, "Std", None)):
        _api.Std.from_str = staticmethod(_from_str)
    from torch.distributed import run
    run.main()


if __name__ == "__main__":
    main()
