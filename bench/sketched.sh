#!/usr/bin/env bash
# Sketched-SGD through the aggregator: per worker and step, the bytes sent
# and received (first transmissions and results taken: what the protocol
# costs without loss), the paper's compression factor 2d / (|S| + P k + k)
# in elements, the same factor measured in bytes (2 * 4d against bytes up +
# down), and the time of a step — W = 4 workers and one shard on 127.0.0.1
# (UDP), the default sizes (k = d/100, P = 4, a 1 x 2Pk sketch), for
# d = 100K and 1M; raw allreduce of the same tensor for the time.
# Usage: bench/sketched.sh [BUILD_DIR] [--json]
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
json=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "json" "$@"
apps=$build/apps
bench_need "$apps/gw-launch" "$apps/gw-aggregator" "$apps/gw-allreduce"
bench_tmp
W=4
rows=()
for d in 100000 1000000; do
  for codec in sketched-sgd raw; do
    "$apps/gw-launch" --workers $W --dim $d --up $codec --quiet --logs "$tmp" --timeout 120 \
      -- "$apps/gw-allreduce" --rounds 4 --no-verify --json >&2 \
      || bench_die "d=$d $codec failed"
    # Rounds 1..3 (round 0 includes the processes' start-up skew).
    r=$(grep -h '"round":[123],' "$tmp"/w.*.out | python3 -c '
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
