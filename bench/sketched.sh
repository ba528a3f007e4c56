#!/usr/bin/env bash
# Sketched-SGD through the aggregator: per worker and step, the bytes sent
# and received (first transmissions and results taken: what the protocol
# costs without loss), the paper's compression factor 2d / (|S| + P k + k)
# in elements, the same factor measured in bytes (2 * 4d against bytes up +
# down), and the time of a step — W = 4 workers and one shard on 127.0.0.1
# (UDP), the default sizes (k = d/100, P = 4, a 1 x 2Pk sketch), for
# d = 100K and 1M; raw allreduce of the same tensor for the time.
# Usage: bench/sketched.sh [BUILD_DIR] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then build=$1; shift; fi
json=0
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    *) echo "bench/sketched.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
apps=$(cd "$build/apps" && pwd)
[ -x "$apps/gw-allreduce" ] || { echo "bench/sketched.sh: $apps/gw-allreduce not built" >&2; exit 1; }
source tests/collective/job.sh "$apps"
W=4
rows=()
for d in 100000 1000000; do
  for codec in sketched-sgd raw; do
    run_job $W 1 "--dim $d --up $codec" "--dim $d --up $codec --rounds 4 --no-verify --json" >&2 \
      || { echo "bench/sketched.sh: d=$d $codec failed" >&2; exit 1; }
    # Rounds 1..3 (round 0 includes the processes' start-up skew).
    r=$(grep -h '"round":[123],' "$JOB_DIR"/w.*.out | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
n = len(recs)
print(json.dumps({k: sum(r[k] for r in recs) / n for k in
    ("seconds", "bytes_up", "bytes_down", "bytes_up_once", "bytes_down_once")}))')
    rows+=("{\"d\":$d,\"codec\":\"$codec\",\"m\":$r}")
  done
done
printf '%s\n' "${rows[@]}" | python3 -c '
import json, math, sys
W = '"$W"'
rows = [json.loads(l) for l in sys.stdin]
out = []
for r in rows:
    d, m = r["d"], r["m"]
    o = {"d": d, "workers": W, "codec": r["codec"], "step_ms": round(1e3 * m["seconds"], 2),
         "bytes_up": int(m["bytes_up_once"]), "bytes_down": int(m["bytes_down_once"]),
         "bytes_up_with_resends": int(m["bytes_up"])}
    if r["codec"] == "sketched-sgd":
        k = math.ceil(d / 100); pk = min(4 * k, d); S = 2 * pk   # 1 x 2Pk
        o.update(k=k, candidates=pk, sketch=S,
                 factor_paper=round(2 * d / (S + pk + k), 2),
                 factor_bytes=round(2 * 4 * d / (m["bytes_up_once"] + m["bytes_down_once"]), 2))
    out.append(o)
if '"$json"':
    print(json.dumps({"tool": "bench/sketched.sh", "rows": out}))
else:
    for o in out:
        print(" ".join("%s=%s" % kv for kv in o.items()))
'
