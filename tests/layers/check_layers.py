#!/usr/bin/env python3
"""The layers test: no layer of libgradwire refers to a symbol of a layer
above or beside it.

For each layer archive (common, codec, dataplane, each dataplane backend,
collective) nm lists the global symbols it defines and those it leaves
undefined; an undefined symbol that another layer defines must belong to a
layer this one may use (docs/architecture.md). Symbols no layer defines
(libc, XXH3, libsodium, DPDK, ...) are not the layers' business.

Then the check must fail: the fixture archive (a function that calls
gw_dp_open(), as a codec file that reached into the dataplane would) is
added to the layer --fixture names, and the check must report exactly that
reference. Exit 0 when both hold, 1 otherwise, 2 on a bad command line.

usage: check_layers.py [--nm NM] --fixture LAYER=ARCHIVE:SYMBOL
                       NAME=ARCHIVE[:ALLOWED,...] ...
"""
import subprocess
import sys


def nm(tool, archive, undefined):
    """Global symbols an archive defines, or those it leaves undefined."""
    args = [tool, "-A", "-g"] + (["-u"] if undefined else ["--defined-only"])
    out = subprocess.run(args + [archive], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("layers: nm %s failed: %s" % (archive, out.stderr.strip()))
    syms = set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        if undefined and kind != "U":
            continue   # weak references ('w', 'v') need nobody's definition
        syms.add(name)
    return syms


def violations(tool, layers):
    """[(layer, symbol, owner)] for every reference to a forbidden layer,
    and how many references between layers there are."""
    defs = {name: set() for name in layers}
    for name, (archives, _) in layers.items():
        for a in archives:
            defs[name] |= nm(tool, a, False)
    found, crossing = [], 0
    for name, (archives, allowed) in layers.items():
        undef = set()
        for a in archives:
            undef |= nm(tool, a, True)
        for sym in sorted(undef - defs[name]):
            owners = [o for o in layers if o != name and sym in defs[o]]
            crossing += bool(owners)
            if owners and not any(o in allowed for o in owners):
                found.append((name, sym, owners[0]))
    return found, crossing


def main(argv):
    tool, fixture, layers = "nm", None, {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--nm", "--fixture") and i + 1 < len(argv):
            if arg == "--nm":
                tool = argv[i + 1]
            else:
                fixture = argv[i + 1]
            i += 2
            continue
        name, eq, rest = arg.partition("=")
        if not eq or not rest:
            print("layers: '%s' is not NAME=ARCHIVE[:ALLOWED,...]" % arg, file=sys.stderr)
            return 2
        archive, _, allowed = rest.partition(":")
        layers[name] = ([archive], [a for a in allowed.split(",") if a])
        i += 1
    if not layers or not fixture:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2

    bad, crossing = violations(tool, layers)
    for name, sym, owner in bad:
        print("layers: %s refers to %s, which %s defines; %s may use only %s"
              % (name, sym, owner, name, ", ".join(layers[name][1]) or "nothing"))
    print("layers: %d layers, %d symbols used across them, %d forbidden"
          % (len(layers), crossing, len(bad)))

    target, _, rest = fixture.partition("=")
    archive, _, symbol = rest.partition(":")
    if target not in layers or not archive or not symbol:
        print("layers: --fixture '%s' is not LAYER=ARCHIVE:SYMBOL of a layer" % fixture,
              file=sys.stderr)
        return 2
    broken = dict(layers)
    broken[target] = (layers[target][0] + [archive], layers[target][1])
    caught = [v for v in violations(tool, broken)[0] if v[0] == target]
    if [v[1] for v in caught] != [symbol]:
        print("layers: the fixture in %s calling %s was not caught as the one "
              "violation (got %s): the check cannot fail" % (target, symbol, caught))
        return 1
    print("layers: the fixture (%s calling %s of %s) is caught"
          % (target, symbol, caught[0][2]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
