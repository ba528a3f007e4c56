#!/usr/bin/env bash
# gw-dataprep spam on nine synthetic mails: the row count and split (row
# by row, against reference.py), labels, ascending columns, unit norms,
# the feature count of each mail (unigrams + bigrams), case folding, the
# 32-char token cap, log1p(count) values, a fixed hash (the same word in
# two mails, one column), and determinism across runs and seeds.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fixtures.sh
. "$here/fixtures.sh"

spam_fixture "$t/in"
# (label:features) of each mail in reading order: folders, then names.
SIGS='-1:3 -1:9 -1:1 -1:7 -1:4 +1:1 +1:2 +1:3 +1:4'

"$bin" spam --in "$t/in" --out "$t/a" 2>"$t/err" || die "spam exited $?: $(cat "$t/err")"
grep -q '^gw-dataprep spam: 9 rows (7 train, 2 test), 1048576 features' "$t/err" ||
  die "summary: $(cat "$t/err")"
[ "$(wc -l <"$t/a.train.svm")" -eq 7 ] || die "train has $(wc -l <"$t/a.train.svm") lines, want 7"
[ "$(wc -l <"$t/a.test.svm")" -eq 2 ] || die "test has $(wc -l <"$t/a.test.svm") lines, want 2"
ls "$t"/*.tmp >/dev/null 2>&1 && die ".tmp files left: $(ls "$t")"
python3 "$here/reference.py" check "$t/a" 20 "$SIGS" 1 0.2 || die "check seed 1"

python3 - "$t/a" <<'PY' || fail=1
import math, sys
rows = {}
for part in ('train', 'test'):
    for line in open('%s.%s.svm' % (sys.argv[1], part)):
        p = line.split()
        rows[(p[0], len(p) - 1)] = [(int(a), float(b)) for a, b in
                                    (t.split(':') for t in p[1:])]
bad = []
hello = rows[('-1', 1)][0][0]
if rows[('+1', 1)][0][0] != hello:
    bad.append('"HELLO" (spam) and "hello" (ham) in different columns')
if hello not in [c for c, _ in rows[('-1', 3)]]:
    bad.append('"hello" of "Hello, world" not in the column of "hello"')
def near(row, want):
    got = sorted(v for _, v in row)
    n = math.sqrt(sum(w * w for w in want))
    return all(abs(g - w / n) < 1e-5 for g, w in zip(got, sorted(want)))
L = math.log1p
if not near(rows[('-1', 4)], [L(1), L(3), L(1), L(2)]):
    bad.append('"Subject: re: RE re" values %s' % rows[('-1', 4)])
if not near(rows[('+1', 4)], [L(2), L(2), L(2), L(1)]):
    bad.append('"buy now buy now" values %s' % rows[('+1', 4)])
for key in (('-1', 1), ('-1', 3), ('-1', 9), ('-1', 7), ('+1', 2), ('+1', 3)):
    if not near(rows[key], [1] * key[1]):
        bad.append('distinct words %s: values %s' % (key, rows[key]))
for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
PY

# Deterministic: the same arguments give the same bytes.
"$bin" spam --in "$t/in" --out "$t/b" 2>/dev/null || die "second run"
cmp -s "$t/a.train.svm" "$t/b.train.svm" && cmp -s "$t/a.test.svm" "$t/b.test.svm" ||
  die "two runs with seed 1 differ"
# Another seed: another split, the same rows.
"$bin" spam --in "$t/in" --out "$t/c" --seed 7 2>/dev/null || die "seed 7 run"
cmp -s "$t/a.test.svm" "$t/c.test.svm" && die "seeds 1 and 7 give the same test file"
python3 "$here/reference.py" check "$t/c" 20 "$SIGS" 7 0.2 || die "check seed 7"
[ "$(cat "$t"/a.*.svm | sort | md5sum)" = "$(cat "$t"/c.*.svm | sort | md5sum)" ] ||
  die "seeds 1 and 7 give different rows"
# --test-frac: round(0.5 * 9) = 5 test rows.
"$bin" spam --in "$t/in" --out "$t/d" --test-frac 0.5 --seed 0x2a 2>/dev/null || die "frac 0.5"
python3 "$here/reference.py" check "$t/d" 20 "$SIGS" 42 0.5 || die "check frac 0.5"
# --bits 10: every column within 1..1024 (collisions merged, still unit norm).
"$bin" spam --in "$t/in" --out "$t/e" --bits 10 2>/dev/null || die "bits 10"
python3 "$here/reference.py" check "$t/e" 10 || die "check bits 10"

[ $fail -eq 0 ] && echo "ok: spam rows, features, split and determinism"
exit $fail
