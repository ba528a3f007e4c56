#!/usr/bin/env bash
# The GPU checks as one prepared command, for the machine that has the GPU
# (no network there, maybe another distribution):
#
#   scripts/gpu-check.sh pack [BUILD_DIR] [PACK_DIR]
#       here, after a build (with nvcc for the device programs; default
#       build/ and gpu-pack/, git-ignored): copies into PACK_DIR what `run`
#       needs: gw-allreduce, gw-aggregator, gw-launch, gw-bench, and where
#       the build has them test_gpu_device and gpu_bench; every shared
#       library they link but glibc's and the C++ runtime's (lib/); all the
#       gradient traces (traces/: cnn/ and logreg_spam/, which
#       test_gpu_device's helpers require); bench/gpu.sh;
#       tests/collective/test_allreduce_gpu.sh with its helpers; pack.txt
#       (commit, what was left out). Prints the pack's size and fails over
#       64 MiB (the device tool's carry limit). Without nvcc (-Dcuda=disabled)
#       it packs what exists, enough for the emu dry run.
#   scripts/gpu-check.sh run [PACK_DIR]
#       there: each step under a timeout, all of them in 470 s at most
#       (GW_CHECK_BUDGET; a step that would overrun it is cut short):
#         pack                 the pack is there (its commit)
#         nvidia_smi           the GPU, driver, memory, compute capability
#         test_gpu_device      the device's frames byte for byte the
#                              emulation's (hence codec/'s)
#         sanitizer_memcheck, _racecheck, _synccheck, _initcheck
#                              compute-sanitizer over test_gpu_device on
#                              one trace (GW_GPU_DEVICE_QUICK: two budgets,
#                              racecheck one); skipped, with the reason,
#                              where no compute-sanitizer is found on PATH,
#                              under /usr/local/cuda*/ or /opt/nvidia
#         allreduce_gpu_cases  tests/collective/test_allreduce_gpu.sh with
#                              GW_GPU=cuda: every case against the model
#         allreduce_1m         gw-allreduce --gpu cuda, W = 2, 1M floats,
#                              raw, bf16, int8, 3lc, top-k and hq, 3 rounds
#                              each, every round bit-exact
#         bench_gpu            bench/gpu.sh at 16M floats only
#       One JSON object (each step: name, status ok/fail/skipped, seconds,
#       exit, null where it did not run, detail; bench_gpu's output under
#       "bench") to $OUT/gpu-check.json when OUT is set (the device tool
#       brings back what is under $OUT), and as the last line of stdout;
#       each step's log under $OUT/gpu-check-logs/. Progress and
#       failing steps' log tails go to stderr. Exit 0 when every step not
#       skipped is ok, 1 otherwise, 77 when no GPU answers (the JSON is
#       written all the same), 2 on a bad command line.
#   GW_GPU=emu scripts/gpu-check.sh run [PACK_DIR]
#       the dry run, here: the same steps with the host emulation (--gpu
#       emu), small sizes; test_gpu_device and compute-sanitizer are
#       skipped ("emu"). tests/gpu/test_gpu_e2e_script.sh packs and runs
#       it in the test suite.
#
# With the device tool: scripts/gpu-check.sh pack, then
#   run(command="bash scripts/gpu-check.sh run gpu-pack", carry=["gpu-pack"],
#       timeout_s=540)
# and read gpu-check.json among its files.
set -uo pipefail
here=$PWD
cd "$(dirname "$0")/.." || exit 2
root=$PWD
self=$root/scripts/gpu-check.sh
limit_bytes=$((64 * 1024 * 1024))

die() { echo "gpu-check: $2" >&2; exit "$1"; }
abspath() { case $1 in /*) echo "$1" ;; *) echo "$here/$1" ;; esac; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# JSON string (quotes included): backslash, quote and control characters escaped.
json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\t'/\\t}
  s=${s//$'\r'/}
  printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037\177')"
}

# ---------------------------------------------------------------- pack
do_pack() {
  local build out traces f missing=() left=()
  build=$(abspath "${1:-$root/build}") out=$(abspath "${2:-$root/gpu-pack}")
  [ -x "$build/apps/gw-allreduce" ] || die 2 "$build/apps/gw-allreduce not built (scripts/build.sh)"
  if [ -e "$out" ] && [ ! -f "$out/pack.txt" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    die 2 "$out exists and is not a pack: refusing to replace it"
  fi
  rm -rf "$out"
  mkdir -p "$out/lib" "$out/traces" "$out/tests/collective" || die 2 "cannot make $out"
  # Programs: the apps always; the device programs where nvcc built them.
  local bins=(apps/gw-allreduce apps/gw-aggregator apps/gw-launch apps/gw-bench)
  local devbins=(tests/gpu/test_gpu_device bench/gpu_bench)
  for f in "${bins[@]}"; do
    [ -x "$build/$f" ] || die 2 "$build/$f not built"
  done
  traces=${GW_TRACES:-$root/../shared/data/grads}
  local have_traces=no
  if [ -d "$traces/cnn" ] && [ -d "$traces/logreg_spam" ]; then
    have_traces=yes
    # Every trace: test_gpu_device's helpers require cnn/ and logreg_spam/
    # (tests/gw_test.c), gpu_bench and bench/gpu.sh read cnn/.
    (cd "$traces" && find . -type f \( -name '*.f32' -o -name '*.u32' \) -print0) |
      (cd "$traces" && xargs -0 -r cp -L --parents -t "$out/traces") ||
      die 2 "cannot copy the traces from $traces"
  fi
  for f in "${devbins[@]}"; do
    if [ ! -x "$build/$f" ]; then
      left+=("${f##*/} (not built: no nvcc)")
    elif [ $have_traces = no ]; then
      left+=("${f##*/} (no traces at $traces)")
    else
      bins+=("$f")
    fi
  done
  for f in "${bins[@]}"; do cp "$build/$f" "$out/" || die 2 "cannot copy $f"; done
  cp bench/gpu.sh "$out/gpu.sh"
  cp tests/collective/test_allreduce_gpu.sh tests/collective/lib.sh "$out/tests/collective/"
  cp tests/have_dpdk.sh "$out/tests/"
  # What they link, the CUDA runtime among it (the GPU machine may have
  # the driver only), but the C and C++ runtimes, which it has.
  local libs
  libs=$(for f in "${bins[@]}"; do ldd "$build/$f"; done)
  missing=()
  while IFS= read -r f; do missing+=("$f"); done < <(printf '%s\n' "$libs" | awk '/not found/ { print $1 }' | sort -u)
  [ ${#missing[@]} -eq 0 ] || die 1 "libraries not found by ldd: ${missing[*]}"
  printf '%s\n' "$libs" | awk '$3 ~ /^\// { print $3 }' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' |
    xargs -r cp -L -t "$out/lib/" || die 1 "cannot copy the libraries"
  {
    echo "commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
      git -C "$root" diff --quiet HEAD 2>/dev/null || echo '+dirty')"
    echo "packed: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
    echo "build: $build"
    echo "traces: $have_traces"
    echo "device programs: $([ -x "$out/test_gpu_device" ] && echo yes || echo no)"
    echo "left out: ${left[*]:-nothing}"
  } > "$out/pack.txt"
  local size
  size=$(du -sb "$out" | cut -f1)
  [ ${#left[@]} -eq 0 ] || echo "gpu-check: left out: ${left[*]} (the emu dry run does not need them)" >&2
  echo "gpu-check: pack $out: $size bytes ($(( (size + 1048575) / 1048576 )) MiB), limit 64 MiB"
  [ "$size" -le "$limit_bytes" ] || die 1 "the pack is over 64 MiB"
}

# ---------------------------------------------------------------- steps
# Each step runs as `gpu-check.sh _step NAME` under timeout, with its log
# as stdout and stderr; it writes one line of detail to $DETAIL, and its
# JSON object, if it has one, to $EMBED. Exit 0 ok, 77 skipped, else fail.
detail() { printf '%s\n' "$*" | head -c 400 > "$DETAIL"; }
skip() { detail "$*"; exit 77; }

find_sanitizer() {
  local c
  c=$(command -v compute-sanitizer 2>/dev/null) && { echo "$c"; return 0; }
  for c in /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer; do
    [ -x "$c" ] && { echo "$c"; return 0; }
  done
  [ -d /opt/nvidia ] || return 1
  c=$(timeout 20 find /opt/nvidia -maxdepth 8 -name compute-sanitizer -type f -perm -u+x 2>/dev/null |
      sort -V | tail -n1)
  [ -n "$c" ] && echo "$c"
}

# rounds_ok LOGS W R -> 0 if each of the W ranks reported R rounds bit-exact
rounds_ok() {
  local r n
  for ((r = 0; r < $2; r++)); do
    n=$(grep -c '"verdict":"bit-exact"' "$1/w.$r.out" 2>/dev/null)
    [ "${n:-0}" -eq "$3" ] || { echo "rank $r: ${n:-0} of $3 rounds bit-exact"; return 1; }
  done
}

step() {
  local name=$1 rc out c n
  case $name in
    pack)
      [ -f "$PACK/pack.txt" ] || { detail "no pack at $PACK (scripts/gpu-check.sh pack first)"; exit 1; }
      cat "$PACK/pack.txt"
      detail "$(sed -n 's/^commit: //p' "$PACK/pack.txt"), device programs: $(
        sed -n 's/^device programs: //p' "$PACK/pack.txt"), left out: $(
        sed -n 's/^left out: //p' "$PACK/pack.txt")"
      ;;
    nvidia_smi)
      command -v nvidia-smi >/dev/null || {
        [ "$EXEC" = emu ] && skip "emu: no nvidia-smi here"
        skip "nvidia-smi not found"; }
      nvidia-smi -L
      out=$(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm \
            --format=csv,noheader 2>&1) ||
        out=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1) ||
        { detail "nvidia-smi: $out"; [ "$EXEC" = emu ] && exit 77; exit 1; }
      echo "$out"
      nvidia-smi 2>&1 | head -n 20
      detail "$(echo "$out" | paste -sd ';' -)"
      ;;
    test_gpu_device)
      [ "$EXEC" = emu ] && skip "emu: test_gpu_device needs a CUDA device (the emulation's own test is test_gpu_emu, in the unit suite)"
      [ -x "$PACK/test_gpu_device" ] || { detail "not in the pack: $(sed -n 's/^left out: //p' "$PACK/pack.txt")"; exit 1; }
      GW_TRACES=$PACK/traces "$PACK/test_gpu_device"; rc=$?
      out=$(grep -m1 'device frames byte-identical\|SKIP\|FAIL' "$LOG_SELF" | head -c 200)
      # Its 77 here (a GPU answered nvidia-smi) is a failure: traces missing
      # or CUDA unusable.
      detail "exit $rc: ${out:-no summary line}"
      [ $rc -eq 0 ] || exit 1
      ;;
    sanitizer_*)
      local tool=${name#sanitizer_} cs ver quick extra=()
      [ "$EXEC" = emu ] && skip "emu"
      cs=$(find_sanitizer) || skip "compute-sanitizer not found on PATH, under /usr/local/cuda*/ or /opt/nvidia"
      [ -x "$PACK/test_gpu_device" ] || { detail "not in the pack: $(sed -n 's/^left out: //p' "$PACK/pack.txt")"; exit 1; }
      [ "$tool" = memcheck ] && extra=(--leak-check full)
      ver=$("$cs" --version 2>&1 | grep -m1 -o 'Version .*')
      echo "$cs: ${ver:-version unknown}"
      # racecheck, the slowest tool, on fewer cases (tests/gpu/test_gpu_device.c).
      quick=1
      [ "$tool" = racecheck ] && quick=2
      GW_TRACES=$PACK/traces GW_GPU_DEVICE_QUICK=$quick "$cs" --tool "$tool" --error-exitcode 99 \
        ${extra[@]+"${extra[@]}"} "$PACK/test_gpu_device"; rc=$?
      out=$(grep -o 'ERROR SUMMARY: .*\|RACECHECK SUMMARY: .*' "$LOG_SELF" | tail -n1)
      detail "$cs (${ver:-version unknown}) exit $rc: ${out:-no summary line}$(
        grep -m1 -o '; [0-9]* device frames byte-identical' <(sed 's/^/; /' "$LOG_SELF"))"
      [ $rc -eq 0 ] || exit 1
      ;;
    allreduce_gpu_cases)
      GW_GPU=$EXEC bash "$PACK/tests/collective/test_allreduce_gpu.sh" "$PACK"; rc=$?
      c=$(grep -c '^ok:' "$LOG_SELF"); n=$(grep -c '^FAIL' "$LOG_SELF")
      out="$c ok, $n failed"
      grep -q '^skip:' "$LOG_SELF" && out+="; $(grep '^skip:' "$LOG_SELF" | paste -sd ';' -)"
      [ "$n" -gt 0 ] && out+="; $(grep -m2 '^FAIL' "$LOG_SELF" | paste -sd ';' -)"
      detail "exit $rc: $out"
      if [ $rc -ne 0 ] || [ "$n" -ne 0 ] || [ "$c" -eq 0 ]; then exit 1; fi
      ;;
    allreduce_1m)
      local logs bad=0 done_=()
      for c in raw bf16 int8 3lc topk hq; do
        logs=$(mktemp -d /tmp/gw-gpu-check.XXXXXX)
        echo "== $c: W=2, $DIM floats, --gpu $EXEC"
        "$PACK/gw-launch" --link udp --quiet --logs "$logs" --timeout "$JOB_TIMEOUT" \
          --idle-exit 30000 --workers 2 --dim "$DIM" --up "$c" --down "$c" -- \
          "$PACK/gw-allreduce" --rounds 3 --json --gpu "$EXEC"; rc=$?
        cat "$logs"/w.0.err "$logs"/w.0.out 2>/dev/null | tail -n 8
        if [ $rc -ne 0 ]; then
          out="$c: gw-launch exit $rc: $(head -c 160 "$logs"/w.0.err 2>/dev/null | tr '\n' ' ')"; bad=1
        elif ! out="$c: $(rounds_ok "$logs" 2 3)"; then
          bad=1
        else
          done_+=("$c")
        fi
        rm -rf "$logs"
        [ $bad = 0 ] || { detail "$out"; exit 1; }
      done
      detail "${done_[*]}: W=2, $DIM floats, 3 rounds bit-exact on both ranks (--gpu $EXEC)"
      ;;
    bench_gpu)
      if [ "$EXEC" = emu ]; then
        out=$(GW_E2E_ONLY=1 GW_E2E_EXEC=emu GW_E2E_DIM=$BENCH_DIM GW_E2E_TIMEOUT=$JOB_TIMEOUT \
              bash "$PACK/gpu.sh" "$PACK"); rc=$?
      else
        out=$(GW_GPU_ELEMS=16777216 GW_E2E_EXEC=cuda GW_E2E_DIM=$BENCH_DIM \
              GW_E2E_TIMEOUT=$JOB_TIMEOUT bash "$PACK/gpu.sh" "$PACK"); rc=$?
      fi
      echo "$out"
      out=$(printf '%s\n' "$out" | tail -n1)
      case $out in '{'*'}') printf '%s' "$out" > "$EMBED" ;; esac
      n=$(printf '%s' "$out" | grep -o '"error"' | wc -l)
      c=$(printf '%s' "$out" | grep -o '"seconds":\[[0-9.,]*\]' | wc -l)
      detail "exit $rc: $c end-to-end jobs with rounds ($BENCH_DIM floats), $n errors$(
        [ "$EXEC" = emu ] && echo "; emu: end to end only, no gpu_bench")"
      if [ $rc -ne 0 ] || [ "$n" -ne 0 ] || [ ! -s "$EMBED" ]; then exit 1; fi
      ;;
    *) die 2 "no step $name" ;;
  esac
  exit 0
}

# ---------------------------------------------------------------- run
do_run() {
  PACK=$(abspath "${1:-$root/gpu-pack}")
  EXEC=${GW_GPU:-cuda}
  case $EXEC in cuda|emu) ;; *) die 2 "GW_GPU: '$EXEC' is not cuda or emu" ;; esac
  local budget steps name t0 t1 secs rc status d lim used logs start no_gpu=0 json=() final
  # Bounds, not expectations: each step's timeout (s), and the whole run's.
  local -A lim_of
  if [ "$EXEC" = cuda ]; then
    budget=${GW_CHECK_BUDGET:-470} DIM=1048576 BENCH_DIM=16777216 JOB_TIMEOUT=40
    lim_of=([pack]=5 [nvidia_smi]=10 [test_gpu_device]=60 [sanitizer_memcheck]=50
            [sanitizer_racecheck]=60 [sanitizer_synccheck]=35 [sanitizer_initcheck]=40
            [allreduce_gpu_cases]=90 [allreduce_1m]=45 [bench_gpu]=130)
  else
    budget=${GW_CHECK_BUDGET:-540} DIM=65536 BENCH_DIM=50000 JOB_TIMEOUT=60
    lim_of=([pack]=5 [nvidia_smi]=10 [test_gpu_device]=5 [sanitizer_memcheck]=5
            [sanitizer_racecheck]=5 [sanitizer_synccheck]=5 [sanitizer_initcheck]=5
            [allreduce_gpu_cases]=300 [allreduce_1m]=90 [bench_gpu]=150)
  fi
  export PACK EXEC DIM BENCH_DIM JOB_TIMEOUT
  export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  steps=(pack nvidia_smi test_gpu_device sanitizer_memcheck sanitizer_racecheck
         sanitizer_synccheck sanitizer_initcheck allreduce_gpu_cases allreduce_1m bench_gpu)
  logs=$(mktemp -d /tmp/gw-gpu-check.XXXXXX)
  start=$(now_ms)
  local blocked=""
  for name in "${steps[@]}"; do
    d="" rc=null
    used=$(( ($(now_ms) - start) / 1000 ))
    lim=${lim_of[$name]}
    [ $((budget - used)) -lt "$lim" ] && lim=$((budget - used))
    : > "$logs/$name.detail"; rm -f "$logs/$name.json"
    t0=$(now_ms)
    if [ -n "$blocked" ]; then
      status=skipped d=$blocked
    elif [ "$lim" -lt 3 ]; then
      status=skipped d="out of time: the run's ${budget} s are spent"
    else
      echo "gpu-check: $name (timeout ${lim} s)" >&2
      DETAIL=$logs/$name.detail EMBED=$logs/$name.json LOG_SELF=$logs/$name.log \
        timeout -k 5 "$lim" bash "$self" _step "$name" > "$logs/$name.log" 2>&1 < /dev/null
      rc=$?
      d=$(cat "$logs/$name.detail")
      case $rc in
        0) status=ok ;;
        77) status=skipped ;;
        124|137) status=fail d="timed out after ${lim} s${d:+; $d}" ;;
        *) status=fail ;;
      esac
    fi
    t1=$(now_ms)
    secs=$(awk -v ms=$((t1 - t0)) 'BEGIN { printf "%.1f", ms / 1000 }')
    echo "gpu-check: $name: $status (${secs} s) $d" >&2
    [ "$status" = fail ] && tail -n 25 "$logs/$name.log" | sed 's/^/    /' >&2
    # No GPU answers: the device's steps are skipped, the run exits 77.
    if [ "$name" = nvidia_smi ] && [ "$EXEC" = cuda ] && [ "$status" != ok ] &&
       [ ! -e /dev/nvidia0 ]; then
      no_gpu=1 status=skipped d="no GPU answers (no /dev/nvidia0): $d"
      blocked="no GPU"
    fi
    [ "$name" = pack ] && [ "$status" = fail ] && blocked="no pack"
    local obj
    obj="{\"name\":\"$name\",\"status\":\"$status\",\"seconds\":$secs,\"exit\":$rc,\"detail\":$(json_str "$d")"
    [ -s "$logs/$name.json" ] && obj+=",\"bench\":$(cat "$logs/$name.json")"
    json+=("$obj}")
  done
  rc=0
  for d in "${json[@]}"; do case $d in *'"status":"fail"'*) rc=1 ;; esac; done
  [ $no_gpu = 1 ] && rc=77
  secs=$(awk -v ms=$(($(now_ms) - start)) 'BEGIN { printf "%.1f", ms / 1000 }')
  final="{\"tool\":\"scripts/gpu-check.sh\",\"exec\":\"$EXEC\",\"host\":$(json_str "$(uname -n)"),\"pack\":$(json_str "$PACK"),\"commit\":$(json_str "$(sed -n 's/^commit: //p' "$PACK/pack.txt" 2>/dev/null)"),\"started\":\"$(date -u -d "@$((start / 1000))" +%Y-%m-%dT%H:%M:%SZ)\",\"seconds\":$secs,\"exit\":$rc,\"steps\":[$(IFS=,; echo "${json[*]}")]}"
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/gpu-check-logs"
    printf '%s\n' "$final" > "$OUT/gpu-check.json"
    for f in "$logs"/*.log; do tail -c 200000 "$f" > "$OUT/gpu-check-logs/${f##*/}"; done
  fi
  rm -rf "$logs"
  printf '%s\n' "$final"
  exit $rc
}

case ${1:-} in
  pack) do_pack "${2:-}" "${3:-}" ;;
  run) do_run "${2:-}" ;;
  _step) step "$2" ;;
  *) die 2 "usage: scripts/gpu-check.sh pack [BUILD_DIR] [PACK_DIR] | run [PACK_DIR] (GW_GPU=emu: the dry run)" ;;
esac
