#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test suite:
# unit tests and corpus replays (gcc, release), the same under ASan+UBSan
# (clang), then each libFuzzer harness for a bounded time. Ends with one
# line "N passed, N failed, N skipped" over all suites.
# Env: GW_FUZZ_SECONDS (per harness, default 10; 0 skips fuzzing). The
# corpora replay in both suites; longer campaigns: scripts/fuzz.sh SECONDS.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/install-deps.sh || exit 1

status=0
run_suite() {  # build-dir, label
  meson test -C "$1" --print-errorlogs --num-processes 2 --timeout-multiplier "${3:-1}" || status=1
  cp "$1/meson-logs/testlog.json" "$1/meson-logs/testlog-$2.json" 2>/dev/null || true
}

echo "== build + tests (release)"
bash scripts/build.sh build || exit 1
run_suite build release

echo "== build + tests (ASan + UBSan)"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
CC=clang CXX=clang++ bash scripts/build.sh build-asan -Dbuildtype=debug \
  -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled || exit 1
run_suite build-asan asan 3

fuzz=skipped
secs=${GW_FUZZ_SECONDS:-10}
if [ "$secs" != 0 ]; then
  echo "== fuzzing, ${secs}s per harness"
  if bash scripts/fuzz.sh "$secs"; then fuzz=passed; else fuzz=failed; status=1; fi
fi

python3 - "$fuzz" build/meson-logs/testlog-release.json build-asan/meson-logs/testlog-asan.json <<'PY'
import json, sys
counts = {"passed": 0, "failed": 0, "skipped": 0}
for path in sys.argv[2:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        counts["failed"] += 1
        continue
    for line in lines:
        r = json.loads(line).get("result")
        key = {"OK": "passed", "SKIP": "skipped", "EXPECTEDFAIL": "passed"}.get(r, "failed")
        counts[key] += 1
if sys.argv[1] != "skipped":
    counts["passed" if sys.argv[1] == "passed" else "failed"] += 1
print("== release and ASan+UBSan test suites, then fuzzing (%s)" % sys.argv[1])
print("%d passed, %d failed, %d skipped" % (counts["passed"], counts["failed"], counts["skipped"]))
PY
exit $status
