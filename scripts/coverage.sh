#!/usr/bin/env bash
# Line coverage of codec/, dataplane/ and collective/ under every test suite
# meson runs by default: a gcc build instrumented with gcov (-Db_coverage)
# in its own build directory, `meson test` with nothing excluded, then
# gcovr's per-file line counts summed per directory. Prints one line per
# directory and a total; exits non-zero if a test failed (the numbers are
# printed either way, but a failed test leaves them lower than they are).
# Usage: scripts/coverage.sh [BUILD_DIR]        (default build-cov)
# Env: GW_COV_JOBS  parallel compile and test processes (default 2)
#
# Unoptimised (buildtype plain) so that a line maps to code, NDEBUG as in a
# release build so that assert() adds no lines of its own. Counts are reset
# before the run, so a second run measures that run only.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bash scripts/install-deps.sh || exit 1

dir=${1:-build-cov}
jobs=${GW_COV_JOBS:-2}
dirs=(codec dataplane collective)

if [ ! -f "$dir/build.ninja" ]; then
  CC=gcc meson setup "$dir" -Db_coverage=true -Dbuildtype=plain \
    -Db_ndebug=true -Dcuda=disabled || exit 1
fi
ninja -C "$dir" -j "$jobs" || exit 1

find "$dir" -name '*.gcda' -delete
echo "== meson test -C $dir (all default suites)"
meson test -C "$dir" --num-processes "$jobs" --timeout-multiplier 4 \
  --print-errorlogs
tests_rc=$?

filters=()
for d in "${dirs[@]}"; do filters+=(--filter "$d/"); done
summary=$dir/coverage-summary.json
gcovr -r . -j "$jobs" "${filters[@]}" --json-summary "$summary" "$dir" \
  >/dev/null || exit 1

python3 - "$summary" "${dirs[@]}" <<'PY'
import json, sys
files = json.load(open(sys.argv[1]))["files"]
dirs = sys.argv[2:]
tot = {d: [0, 0] for d in dirs}
for f in files:
    top = f["filename"].split("/", 1)[0]   # relative to the source root
    if top in tot:
        tot[top][0] += f["line_covered"]
        tot[top][1] += f["line_total"]
print("== line coverage (gcovr, %d files)" % sum(1 for f in files
      if f["filename"].split("/", 1)[0] in tot))
def line(name, c, t):
    print("%-12s %6d / %6d lines  %5.1f%%" % (name, c, t, 100.0 * c / t if t else 0))
for d in dirs:
    line(d + "/", *tot[d])
line("total", sum(v[0] for v in tot.values()), sum(v[1] for v in tot.values()))
PY
exit $tests_rc
