#!/usr/bin/env bash
# README command 2: install what is missing, build, run every test suite:
# unit tests and corpus replays (gcc, release), the same under ASan+UBSan
# (clang), then each libFuzzer harness for a bounded time.
# Env: GW_FUZZ_SECONDS (per harness, default 20; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

echo "== build + tests (release)"
bash scripts/build.sh build
meson test -C build --print-errorlogs --num-processes 2

echo "== build + tests (ASan + UBSan)"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
CC=clang bash scripts/build.sh build-asan -Dbuildtype=debug \
  -Db_sanitize=address,undefined -Db_lundef=false -Dcuda=disabled
meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3

secs=${GW_FUZZ_SECONDS:-20}
if [ "$secs" != 0 ]; then
  echo "== fuzzing, ${secs}s per harness"
  bash scripts/fuzz.sh "$secs"
fi
echo "== all test suites passed"
