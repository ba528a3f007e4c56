#!/usr/bin/env bash
# scripts/gpu-check.sh end to end without a GPU: `pack` from this build into
# a temporary folder (with or without nvcc), then the dry run
# (`GW_GPU=emu ... run`: test_allreduce_gpu's cases, gw-allreduce W=2 and
# bench/gpu.sh's end-to-end jobs, all on the host emulation). The JSON must
# name every step, each ok or skipped, the emulated ones ok, the bench's
# ten jobs with their rounds; the pack must hold every trace of GW_TRACES.
# Then the bench's ten jobs again with the model on (the bench itself
# cannot verify what it times: see below), every round bit-exact.
# It guards the one command the GPU machine runs; nothing here is timed.
#   test_gpu_e2e_script.sh BUILD_DIR SCRIPT
set -u
build=$1 script=$2
tmp=$(mktemp -d /tmp/gw-gpu-e2e.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

bash "$script" pack "$build" "$tmp/pack" || fail "pack: exit $?"
cat "$tmp/pack/pack.txt"
# The traces: all of them (test_gpu_device's helpers need cnn/ and
# logreg_spam/), or none where this machine has none.
traces=no
[ -n "${GW_TRACES:-}" ] && [ -d "$GW_TRACES/cnn" ] && [ -d "$GW_TRACES/logreg_spam" ] && traces=yes
if [ $traces = yes ]; then
  diff <(cd "$GW_TRACES" && find . -type f \( -name '*.f32' -o -name '*.u32' \) | sort) \
       <(cd "$tmp/pack/traces" && find . -type f | sort) || fail "the pack's traces differ from GW_TRACES's"
  echo "ok: every trace packed"
fi
if [ -x "$build/tests/gpu/test_gpu_device" ] && [ $traces = yes ]; then
  [ -x "$tmp/pack/test_gpu_device" ] || fail "the build has test_gpu_device, the pack not"
fi

mkdir -p "$tmp/out"
OUT=$tmp/out GW_GPU=emu timeout 900 bash "$script" run "$tmp/pack" > "$tmp/stdout"
rc=$?
cat "$tmp/stdout"
[ "$rc" -eq 0 ] || fail "run: exit $rc"
[ -s "$tmp/out/gpu-check.json" ] || fail "no \$OUT/gpu-check.json"
[ "$(tail -n1 "$tmp/stdout")" = "$(cat "$tmp/out/gpu-check.json")" ] ||
  fail "stdout's last line is not \$OUT/gpu-check.json"
python3 - "$tmp/out/gpu-check.json" <<'PY' || fail "the JSON"
import json, sys
r = json.load(open(sys.argv[1]))
want = ["pack", "nvidia_smi", "test_gpu_device", "sanitizer_memcheck", "sanitizer_racecheck",
        "sanitizer_synccheck", "sanitizer_initcheck", "allreduce_gpu_cases", "allreduce_1m",
        "bench_gpu"]
bad = []
steps = r["steps"]
if [s["name"] for s in steps] != want:
    bad.append("steps %s, not %s" % ([s["name"] for s in steps], want))
for s in steps:
    for k, t in (("name", str), ("status", str), ("seconds", (int, float)), ("exit", (int, type(None))),
                 ("detail", str)):
        if not isinstance(s.get(k), t):
            bad.append("%s: no %s" % (s.get("name"), k))
    if s["status"] not in ("ok", "skipped"):
        bad.append("%s: %s (%s)" % (s["name"], s["status"], s.get("detail")))
    if s["name"] in ("pack", "allreduce_gpu_cases", "allreduce_1m", "bench_gpu") and s["status"] != "ok":
        bad.append("%s: %s, not ok, in the dry run" % (s["name"], s["status"]))
    if s["name"].startswith("sanitizer_") and s["detail"] != "emu":
        bad.append("%s: skipped for '%s', not emu" % (s["name"], s["detail"]))
bench = next((s.get("bench") for s in steps if s["name"] == "bench_gpu"), None)
jobs = bench.get("e2e", []) if isinstance(bench, dict) else []
timed = [j for j in jobs if isinstance(j.get("seconds"), list) and j["seconds"] and "error" not in j]
if len(timed) != 10:
    bad.append("bench: %d of 10 end-to-end jobs with rounds: %s" % (len(timed), bench))
if r.get("exec") != "emu" or r.get("exit") != 0:
    bad.append("exec %s, exit %s" % (r.get("exec"), r.get("exit")))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "ok: the dry run: every step ok or skipped, the bench's 10 jobs timed"

# The bench's end-to-end jobs, verified. bench/gpu.sh runs them with
# --no-verify --same-grad (since edcd693, which made them): every round
# sends round 0's gradient, so that a profile sees the allreduce and not
# the synthesis of the next gradient, and those rounds are timed. The
# model cannot check such rounds (it expects a new gradient every round:
# gw-allreduce refuses --same-grad with verification), so the bench's
# figures are times, not checks. Here the same jobs, read from its JSON
# (the pack's programs, the codec, the path: the emulated device or the
# CPU, W and the dim), run again with the model on and a new gradient
# each round: all 3 rounds bit-exact on every rank. (The dry run's
# allreduce_1m checks --gpu emu so too, at its own dim, hq among them.)
jobs=$(python3 - "$tmp/out/gpu-check.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bench = next(s["bench"] for s in r["steps"] if s["name"] == "bench_gpu")
for j in bench["e2e"]:
    print(j["codec"], j["path"], j["workers"], j["dim"])
PY
) || fail "the bench's jobs: not in its JSON"
n=0
while read -r codec path w dim; do
  logs=$tmp/verify/$codec.$path
  mkdir -p "$logs"
  dev=()
  [ "$path" = cpu ] || dev=(--gpu "$path")
  LD_LIBRARY_PATH="$tmp/pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$tmp/pack/gw-launch" --link udp --quiet --logs "$logs" --timeout 300 --idle-exit 30000 \
    --workers "$w" --dim "$dim" --up "$codec" --down "$codec" -- "$tmp/pack/gw-allreduce" \
    --rounds 3 --json "${dev[@]}" >/dev/null 2>&1 ||
    fail "$codec on $path, verified: gw-launch exit $?: $(head -c 300 "$logs/w.0.err" 2>/dev/null)"
  for ((r = 0; r < w; r++)); do
    k=$(grep -c '"verdict":"bit-exact"' "$logs/w.$r.out" 2>/dev/null)
    [ "${k:-0}" -eq 3 ] || fail "$codec on $path, verified: rank $r: ${k:-0} of 3 rounds bit-exact"
  done
  n=$((n + 1))
done <<< "$jobs"
[ "$n" -eq 10 ] || fail "the bench's jobs, verified: $n of 10"
echo "ok: the bench's $n end-to-end jobs again with the model: 3 rounds bit-exact on every rank"
