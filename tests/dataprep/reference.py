#!/usr/bin/env python3
"""An independent model of gw-dataprep's output, for its tests.

  reference.py split N SEED FRAC             -> the test rows, then the train rows
  reference.py mnist FIXDIR SEED FRAC PREFIX -> PREFIX.{train,test}.svm expected
  reference.py check PREFIX BITS [SIGS SEED FRAC]
      every row: label +1/-1, columns strictly ascending in 1..2^BITS, unit
      L2 norm; with SIGS ("-1:3 +1:2 ...", the (label, feature count) of
      each mail in reading order) also the split, row by row.

The split, as documented in apps/gw-dataprep/split.c: splitmix64 seeded with
SEED; Fisher-Yates from the back (swap i with j uniform in [0, i], drawn by
rejecting x >= 2^64 - 2^64 % (i+1), then x % (i+1)); the first
round(FRAC * n) rows (at least 1, at most n - 1) are the test set.
"""
import math
import sys

M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def split(n, seed, frac):
    order = list(range(n))
    state = seed
    for i in range(n - 1, 0, -1):
        bound = i + 1
        lim = M64 - M64 % bound
        while True:
            state, x = splitmix64(state)
            if x < lim:
                break
        j = x % bound
        order[i], order[j] = order[j], order[i]
    nt = math.floor(frac * n + 0.5)
    nt = min(max(nt, 1), n - 1)
    return order[:nt], order[nt:]


def mnist(fixdir, seed, frac, prefix):
    import json
    rows = []
    for digit in range(10):
        with open('%s/%d.json' % (fixdir, digit)) as f:
            data = json.load(f)['data']
        for img in range(len(data) // 784):
            px = data[img * 784:(img + 1) * 784]
            rows.append(str(digit) + ''.join(
                ' %d:%s' % (p + 1, '%.6g' % v) for p, v in enumerate(px) if v != 0)
                + '\n')
    test, train = split(len(rows), seed, frac)
    for part, idx in (('train', train), ('test', test)):
        with open('%s.%s.svm' % (prefix, part), 'w') as f:
            f.write(''.join(rows[i] for i in idx))


def parse(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            cols = [int(t.split(':')[0]) for t in p[1:]]
            vals = [float(t.split(':')[1]) for t in p[1:]]
            rows.append((p[0], cols, vals, '%s:%d' % (path, n)))
    return rows


def check(prefix, bits, sigs=None, seed=None, frac=None):
    bad = []
    parts = {p: parse('%s.%s.svm' % (prefix, p)) for p in ('train', 'test')}
    for rows in parts.values():
        for label, cols, vals, where in rows:
            if label not in ('+1', '-1'):
                bad.append('%s: label %s' % (where, label))
            if any(a >= b for a, b in zip(cols, cols[1:])):
                bad.append('%s: columns not strictly ascending' % where)
            if cols and (cols[0] < 1 or cols[-1] > 1 << bits):
                bad.append('%s: column outside 1..2^%d' % (where, bits))
            if abs(math.sqrt(sum(v * v for v in vals)) - 1) > 1e-5:
                bad.append('%s: norm %g' % (where, math.sqrt(sum(v * v for v in vals))))
    if sigs is not None:
        sigs = sigs.split()
        test, train = split(len(sigs), seed, frac)
        for part, idx in (('train', train), ('test', test)):
            want = [sigs[i] for i in idx]
            got = ['%s:%d' % (r[0], len(r[1])) for r in parts[part]]
            if want != got:
                bad.append('%s rows (label:features) %s, want %s' % (part, got, want))
    for b in bad:
        print('FAIL:', b)
    return 1 if bad else 0


def main(a):
    if a[0] == 'split':
        test, train = split(int(a[1]), int(a[2], 0), float(a[3]))
        print(' '.join(map(str, test)))
        print(' '.join(map(str, train)))
        return 0
    if a[0] == 'mnist':
        mnist(a[1], int(a[2], 0), float(a[3]), a[4])
        return 0
    if a[0] == 'check':
        if len(a) > 3:
            return check(a[1], int(a[2]), a[3], int(a[4], 0), float(a[5]))
        return check(a[1], int(a[2]))
    print('usage: see the docstring', file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
