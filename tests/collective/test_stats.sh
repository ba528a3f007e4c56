#!/usr/bin/env bash
# Counters while running: --stats-interval streams JSON lines from a shard
# and a worker (UDP), counters that only grow; and a DPDK process answers
# on DPDK's telemetry socket (dpdk-telemetry.py: /gradwire/ports,
# /gradwire/stats,PORT) with its dataplane and protocol counters; the UDP
# dataplane's lines say which kernel paths it takes. A bad interval is
# refused by name.
set -u
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$1"
fail=0
# Sections that can be skipped here are named as they are; every other
# one runs everywhere, or fails: the script never ends as a skip.
# shellcheck source=../skip_section.sh
source "$(dirname "$0")/../skip_section.sh"

if job --workers 2 --dim 400000 --stats-interval 100 -- --rounds 20 --lag-ms 30; then
  for f in agg.0.out w.0.out w.1.out; do
    n=$(grep -c '"kind":"stats"' "$LOGS/$f")
    key=$([ "$f" = agg.0.out ] && echo ups || echo results)
    # The counter never goes back from one line to the next.
    mono=$(grep '"kind":"stats"' "$LOGS/$f" | sed -n "s/.*\"$key\":\([0-9]*\).*/\1/p" |
           awk 'NR > 1 && $1 < prev { bad = 1 } { prev = $1 } END { print bad ? "no" : "yes" }')
    last=$(grep '"kind":"stats"' "$LOGS/$f" | tail -n1 | sed -n "s/.*\"$key\":\([0-9]*\).*/\1/p")
    if [ "$n" -ge 5 ] && [ "$mono" = yes ] && [ "${last:-0}" -gt 0 ]; then
      echo "ok: $f: $n stats lines while running, $key growing to $last"
    else
      echo "FAIL: $f: $n stats lines, monotonic $mono, last $key ${last:-none}"; fail=1
    fi
  done
  # The UDP dataplane's kernel paths (gw_dp_paths_get) are in the lines:
  # batching is on by default, and the calls that took the packets counted.
  line=$(grep '"kind":"stats"' "$LOGS/w.0.out" | tail -n1)
  if echo "$line" | grep -q '"path_mmsg":1,' && echo "$line" | grep -q '"tx_calls":[1-9]' &&
     echo "$line" | grep -q '"rx_gro_pkts":'; then
    echo "ok: w.0.out: paths $(echo "$line" | grep -o '"path_mmsg.*"rx_gro_pkts":[0-9]*')"
  else
    echo "FAIL: w.0.out: no path counters in $line"; fail=1
  fi
else
  echo "FAIL: the job with --stats-interval failed"; fail=1
fi

out=$("$APPS/gw-allreduce" --rank 0 --workers 1 --dim 10 --agg 127.0.0.1:9 --stats-interval 5 2>&1)
echo "$out" | grep -q -- "--stats-interval: '5'" && echo "ok: --stats-interval 5 refused: $out" ||
  { echo "FAIL: --stats-interval 5: $out"; fail=1; }

# DPDK telemetry, on a null device (no NIC, no hugepages).
tel=$(command -v dpdk-telemetry.py)
pre=gwtel$$
if [ -z "$tel" ]; then
  skip_section telemetry "dpdk-telemetry.py not installed"
else
  "$APPS/gw-aggregator" -l 0 --no-huge --no-pci -m 256 --no-shconf --file-prefix=$pre \
    --vdev=net_null0 --log-level=lib.eal:error -- --backend dpdk --shard 0 --workers 1 \
    --dim 64 --local 10.0.0.1:7000 --opts link_wait=0 >"$LOGS/tel.out" 2>"$LOGS/tel.err" &
  p=$!
  ans=""
  for ((i = 0; i < 40; i++)); do
    sleep 0.25
    kill -0 $p 2>/dev/null || break
    ans=$(printf '/gradwire/ports\n/gradwire/stats,0\n' | timeout 10 "$tel" -f $pre 2>/dev/null)
    echo "$ans" | grep -q '"published": [1-9]' && break
  done
  kill -INT $p 2>/dev/null; wait $p 2>/dev/null
  if grep -q "not built" "$LOGS/tel.err"; then
    skip_section telemetry "this build has no DPDK backend"
  elif echo "$ans" | grep -q '"/gradwire/ports": \[0\]' &&
       echo "$ans" | grep -q '"published": [1-9]' &&
       echo "$ans" | grep -q '"ups": 0' && echo "$ans" | grep -q '"rx_pkts": '; then
    echo "ok: telemetry: $(echo "$ans" | tail -n1 | cut -c1-160)..."
  else
    echo "FAIL: telemetry answered: $ans"; cat "$LOGS/tel.err"; fail=1
  fi
fi
skips_summary
exit $fail
