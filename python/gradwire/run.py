"""torchrun, usable with Debian 12's torch 1.13 under Python 3.11:

    python3 -m gradwire.run --nproc_per_node=4 train.py ...

takes torchrun's arguments unchanged. torch 1.13's launcher parses its
--redirects and --tee values ("0" by default) by iterating its Std flag
enum, and Python 3.11 no longer yields the zero member NONE or the
composite ALL when iterating a flag enum: every default launch fails
with "'NoneType' object has no attribute 'get'". This parses the values
by number instead, then runs torch.distributed.run's own main.
"""
from __future__ import annotations

import re

from torch.distributed.elastic.multiprocessing import api as _api


def _from_str(vm: str) -> _api.Std | dict[int, _api.Std]:
    if re.fullmatch(r"[0-3]", vm):
        return _api.Std(int(vm))
    if re.fullmatch(r"(\d+:[0-3],)*\d+:[0-3]", vm):
        return {int(i): _api.Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError("%s does not match <0-3> or <local rank>:<0-3>,..." % vm)


def main() -> None:
    _api.Std.from_str = staticmethod(_from_str)
    from torch.distributed import run
    run.main()


if __name__ == "__main__":
    main()
