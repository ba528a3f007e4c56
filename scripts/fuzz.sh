#!/usr/bin/env bash
# Bounded fuzzing of every harness in tests/fuzz/ (libFuzzer + ASan + UBSan).
#
#   scripts/fuzz.sh [SECONDS_PER_HARNESS]      default 20
#
# Configures (once) a clang build in build-fuzz/ with -Dfuzz=true and the
# sanitizers, builds the fuzz_<name> binaries, writes seed corpora with
# make_corpus, then runs each harness for the given time. The growing
# corpus is kept in build-fuzz/fuzz/corpus/<name>/ between runs.
#
# Exit status: 0 if no harness crashed; 1 otherwise. Each input that made a
# harness fail is copied to tests/fuzz/regress/<name>/, where the
# fuzz-regress suite of every build replays it from then on.
#
# Environment: CC (default clang), CXX (default its C++ twin),
# FUZZ_HARNESSES (default: every fuzz_<name>.c), FUZZ_JOBS (parallel
# harnesses, default 1), FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail

secs=${1:-20}
case $secs in
'' | *[!0-9]*) echo "usage: $0 [SECONDS_PER_HARNESS]" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
bd=$root/build-fuzz
cc=${CC:-clang}
cxx=${CXX:-${cc/clang/clang++}}   # of the same family: gpudirect's kernels are C++
# shellcheck disable=SC2054  # address,undefined is one meson value
opts=(-Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
      -Dbuildtype=debugoptimized -Dtests=enabled
      -Ddpdk=disabled -Dibverbs=disabled -Dcuda=disabled)

if ! command -v "$cc" >/dev/null; then
  echo "fuzz.sh: $cc not found (scripts/install-deps.sh installs clang)" >&2
  exit 2
fi

# --- configure (idempotent) ---------------------------------------------
if [ -f "$bd/build.ninja" ] &&
   ! grep -q '^C compiler for the host machine: .*clang' "$bd/meson-logs/meson-log.txt" 2>/dev/null; then
  echo "fuzz.sh: $bd was not configured with clang; reconfiguring from scratch"
  rm -rf "$bd"
fi
if [ -f "$bd/build.ninja" ]; then
  cmd=(meson configure "$bd" "${opts[@]}")
else
  cmd=(env CC="$cc" CXX="$cxx" meson setup "$bd" "$root" "${opts[@]}")
fi
if ! out=$("${cmd[@]}" 2>&1); then
  printf '%s\n' "$out" >&2
  echo "fuzz.sh: configuring $bd failed" >&2
  exit 2
fi

# --- build ---------------------------------------------------------------
if [ -n "${FUZZ_HARNESSES:-}" ]; then
  read -r -a names <<<"$FUZZ_HARNESSES"
else
  names=()
  for f in "$root"/tests/fuzz/fuzz_*.c; do
    n=${f##*/fuzz_}
    n=${n%.c}
    [ "$n" = common ] && continue
    names+=("$n")
  done
fi
# regenerate if meson files changed since
if ! out=$(ninja -C "$bd" build.ninja 2>&1); then
  printf '%s\n' "$out" >&2
  echo "fuzz.sh: configuring $bd failed" >&2
  exit 2
fi
# Only harnesses listed in tests/fuzz/meson.build have a target.
known=$(ninja -C "$bd" -t targets all 2>/dev/null | sed -n 's|^tests/fuzz/fuzz_\([A-Za-z0-9_]*\): .*|\1|p')
listed=()
for n in "${names[@]}"; do
  if grep -qx "$n" <<<"$known"; then
    listed+=("$n")
  else
    echo "fuzz.sh: WARNING: tests/fuzz/fuzz_$n.c is not in fuzz_harnesses of tests/fuzz/meson.build; skipped" >&2
  fi
done
names=("${listed[@]}")
[ ${#names[@]} -gt 0 ] || { echo "fuzz.sh: no harness to run" >&2; exit 2; }
targets=(tests/fuzz/make_corpus)
for n in "${names[@]}"; do targets+=("tests/fuzz/fuzz_$n"); done
if ! out=$(ninja -C "$bd" "${targets[@]}" 2>&1); then
  printf '%s\n' "$out" | tail -40 >&2
  echo "fuzz.sh: build failed: ninja -C $bd ${targets[*]}" >&2
  exit 2
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# --- seeds ---------------------------------------------------------------
work=$bd/fuzz
rm -rf "$work/seeds" "$work/artifacts" "$work/logs"
mkdir -p "$work/seeds" "$work/corpus" "$work/artifacts" "$work/logs"
if ! "$bd/tests/fuzz/make_corpus" "$work/seeds" "${names[@]}" >/dev/null; then
  echo "fuzz.sh: make_corpus failed: an encoder broke on the seed tensors" \
       "(sanitizer report above; reproduce: $bd/tests/fuzz/make_corpus /tmp/seeds)" >&2
  exit 1
fi


# --- run -----------------------------------------------------------------
run_one() {
  local n=$1 bin=$bd/tests/fuzz/fuzz_$1
  local corpus=$work/corpus/$n art=$work/artifacts/$n
  mkdir -p "$corpus" "$art"
  local dirs=("$corpus" "$work/seeds/$n")
  [ -d "$root/tests/fuzz/regress/$n" ] && dirs+=("$root/tests/fuzz/regress/$n")
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -max_len=9100 -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$art/" ${FUZZ_ARGS:-} \
    "${dirs[@]}" >"$work/logs/$n.log" 2>&1
}

declare -A status
jobs_max=${FUZZ_JOBS:-1}
pids=()
for n in "${names[@]}"; do
  echo "fuzz.sh: fuzz_$n for ${secs}s"
  if [ "$jobs_max" -gt 1 ]; then
    run_one "$n" & pids+=("$!:$n")
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  else
    if run_one "$n"; then status[$n]=0; else status[$n]=$?; fi
  fi
done
for p in "${pids[@]}"; do
  if wait "${p%%:*}"; then status[${p#*:}]=0; else status[${p#*:}]=$?; fi
done

# --- report --------------------------------------------------------------
log_stat() { sed -n "s/^stat::$2: *//p" "$work/logs/$1.log" | tail -1; }
fail=0
printf '\n%-10s %6s %12s %10s %7s %7s %8s\n' harness status executions exec/s cov ft corpus
for n in "${names[@]}"; do
  log=$work/logs/$n.log
  done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  crp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<<"$done_line")
  st=${status[$n]:-?}
  word=ok
  [ "$st" = 0 ] || word="FAIL($st)"
  printf '%-10s %6s %12s %10s %7s %7s %8s\n' "$n" "$word" \
    "$(log_stat "$n" number_of_executed_units)" "$(log_stat "$n" average_exec_per_sec)" \
    "${cov:-?}" "${ft:-?}" "${crp:-?}"
  if [ "$st" != 0 ]; then
    fail=1
    dest=$root/tests/fuzz/regress/$n
    mkdir -p "$dest"
    found=0
    for a in "$work/artifacts/$n"/*; do
      [ -f "$a" ] || continue
      base=${a##*/}
      # crash-*, leak-*, timeout-* are .gitignore'd: store them as found-*
      cp "$a" "$dest/found-${base//[^A-Za-z0-9]/-}"
      echo "  $n: saved $dest/found-${base//[^A-Za-z0-9]/-}"
      found=1
    done
    [ $found = 1 ] || echo "  $n: exited $st without an artifact; see $log"
    grep -m1 -E 'ERROR: |gw-fuzz: check failed|runtime error' "$log" | sed 's/^/  /' || true
  fi
done

if [ $fail = 1 ]; then
  cat >&2 <<EOF

fuzz.sh: a harness failed. For each saved input:
  1. reproduce:   $bd/tests/fuzz/fuzz_<name> tests/fuzz/regress/<name>/found-...
     (or, without libFuzzer: build/tests/fuzz/regress_<name> FILE)
  2. fix the code (or the harness, if its check was wrong), and re-run
  3. keep the input: it is replayed by 'meson test --suite fuzz-regress';
     rename it to <what>.<GW_E code> if it must be rejected with that code
  4. commit it with the fix. Logs: $work/logs/
EOF
  exit 1
fi
echo "fuzz.sh: no crashes ($secs s per harness; logs in $work/logs/)"
