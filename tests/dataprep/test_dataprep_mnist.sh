#!/usr/bin/env bash
# gw-dataprep mnist on ten synthetic images: both files byte for byte as
# reference.py writes them (rows digit by digit, pixels 1..784 without the
# zeros, %.6g values, the documented seeded split), for two seeds.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fixtures.sh
. "$here/fixtures.sh"

mnist_fixture "$t/in"
for run in "1 0.2" "12345678901234567890 0.35"; do
  set -- $run
  "$bin" mnist --in "$t/in" --out "$t/got" --seed "$1" --test-frac "$2" 2>"$t/err" ||
    die "mnist --seed $1 exited $?: $(cat "$t/err")"
  python3 "$here/reference.py" mnist "$t/in" "$1" "$2" "$t/want"
  for part in train test; do
    cmp -s "$t/got.$part.svm" "$t/want.$part.svm" ||
      die "seed $1: $part differs: $(diff "$t/got.$part.svm" "$t/want.$part.svm" | head -5)"
  done
done
grep -q '^gw-dataprep mnist: 10 rows (6 train, 4 test), 784 features, nnz [0-9]*.*per digit 1 1 1 2 1 0 1 1 1 1$' "$t/err" ||
  die "summary: $(cat "$t/err")"
grep -q ':1e-07' "$t/got.train.svm" "$t/got.test.svm" || die "no 1e-07 value in the output"
ls "$t"/*.tmp >/dev/null 2>&1 && die ".tmp files left: $(ls "$t")"
[ $fail -eq 0 ] && echo "ok: mnist output exact for two seeds"
exit $fail
