#!/usr/bin/env bash
# gw-dataprep writes PREFIX.*.svm.tmp and renames them only when both are
# complete: a run that fails part way (here: the test file's .tmp cannot be
# created) leaves the previous outputs as they were and no .tmp behind; so
# does a run killed by SIGTERM while writing.
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fixtures.sh
. "$here/fixtures.sh"

mnist_fixture "$t/in"
"$bin" mnist --in "$t/in" --out "$t/o" 2>/dev/null || die "first run"
sum=$(cat "$t"/o.train.svm "$t"/o.test.svm | md5sum)
mkdir "$t/o.test.svm.tmp"
out=$("$bin" mnist --in "$t/in" --out "$t/o" --seed 9 2>&1); rc=$?
[ $rc -eq 1 ] || die "blocked .tmp: rc=$rc, want 1"
printf '%s' "$out" | grep -qF "$t/o.test.svm.tmp" || die "message lacks the .tmp path: $out"
[ "$(cat "$t"/o.train.svm "$t"/o.test.svm | md5sum)" = "$sum" ] ||
  die "a failed run changed the previous outputs"
[ -e "$t/o.train.svm.tmp" ] && die "o.train.svm.tmp left behind"
rmdir "$t/o.test.svm.tmp"

# Killed: the train .tmp is a FIFO, so the open blocks while writing;
# SIGTERM then must remove it and end the process by that signal.
mkfifo "$t/o.train.svm.tmp"
"$bin" mnist --in "$t/in" --out "$t/o" --seed 9 2>/dev/null & pid=$!
for _ in $(seq 100); do  # until the handler is in (SIGTERM caught)
  cgt=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status 2>/dev/null)
  [ -n "$cgt" ] && [ $(( 0x$cgt & 0x4000 )) -ne 0 ] && break
  sleep 0.05
done
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 143 ] || die "killed run: rc=$rc, want 143 (SIGTERM)"
[ -e "$t/o.train.svm.tmp" ] && die "a killed run left o.train.svm.tmp"
[ "$(cat "$t"/o.train.svm "$t"/o.test.svm | md5sum)" = "$sum" ] ||
  die "a killed run changed the previous outputs"
[ $fail -eq 0 ] && echo "ok: outputs replaced whole or not at all"
exit $fail
