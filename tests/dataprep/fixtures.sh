# shellcheck shell=bash
# shellcheck disable=SC2034  # what it sets is for the script that sources it
# Tiny synthetic inputs for the gw-dataprep tests (sourced). The npm data
# is not needed: CI may run before scripts/fetch-data.sh.

# Every test: a scratch folder removed on exit, and die() to record a
# failure without stopping (the test exits with $fail).
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# spam_fixture DIR: the five folders with nine mails, each row told apart
# by (label, feature count) (counted by hand below, at the default 2^20
# columns, where these words do not collide), plus files the reader must
# skip (a .json twin, a hidden .txt).
spam_fixture() {
  local d=$1 b32 a33
  mkdir -p "$d"/easy-ham-1 "$d"/easy-ham-2 "$d"/hard-ham-1 "$d"/spam-1 "$d"/spam-2
  b32=$(printf 'b%.0s' $(seq 32)); a33=$(printf 'a%.0s' $(seq 33))
  # ham, 3: hello world "hello world"
  printf 'Hello, world\n' >"$d"/easy-ham-1/00001.aa.txt
  # ham, 9: five words, four bigrams
  printf 'alpha beta\ngamma delta epsilon\n' >"$d"/easy-ham-1/00002.bb.txt
  printf '{"not":"a mail"}\n' >"$d"/easy-ham-1/00002.bb.json
  printf 'ignored hidden mail\n' >"$d"/easy-ham-1/.00003.cc.txt
  # ham, 1: hello
  printf 'hello' >"$d"/easy-ham-2/00001.dd.txt
  # ham, 7: bytes >= 0x80 separate tokens: caf na ve ok
  printf 'caf\351 na\357ve ok' >"$d"/easy-ham-2/00002.ee.txt
  # ham, 4: subject:1 re:3 "subject re":1 "re re":2
  printf 'Subject: re: RE re\n' >"$d"/hard-ham-1/00001.ff.txt
  # spam, 1: hello, same column as the ham "hello"
  printf 'HELLO\n' >"$d"/spam-1/00001.gg.txt
  # spam, 2: a 33-char token is dropped and breaks the bigram chain
  printf 'x %s y\n' "$a33" >"$d"/spam-1/00002.hh.txt
  # spam, 3: a 32-char token is kept: b32 z "b32 z"
  printf '%s z\n' "$b32" >"$d"/spam-2/00001.ii.txt
  # spam, 4: buy:2 now:2 "buy now":2 "now buy":1
  printf 'buy now buy now\n' >"$d"/spam-2/00002.jj.txt
}

# mnist_fixture DIR: 0.json .. 9.json, ten images (digit 3 has two, digit
# 5 none) whose pixels mix integers, reals that %.6g rounds, and 1e-07.
mnist_fixture() {
  python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
vals = [1, 0.5, 0.123456789, 1e-07, 0.996078431372549, 0]
for digit in range(10):
    k = {3: 2, 5: 0}.get(digit, 1)
    data = []
    for j in range(k):
        for p in range(784):
            h = (p * 7 + digit * 13 + j * 5) % 53
            data.append(vals[h % len(vals)] if h < 6 else 0)
    with open(os.path.join(d, '%d.json' % digit), 'w') as f:
        json.dump({'data': data}, f)
PY
}
