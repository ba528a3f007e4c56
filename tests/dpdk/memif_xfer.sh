#!/usr/bin/env bash
# Two processes over net_memif (server and client, socket in a temp dir,
# no hugepages, distinct file prefixes): every payload size 1..payload_max is
# echoed back intact, a windowed run of 100000 mixed-size packets arrives
# complete and intact, and gw-bench raw moves a bounded count at 64 B and at
# the MTU with none lost or corrupt.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
memif_eal gwm
memif_server 150 --local 10.9.0.2:7000 --timeout 120
timeout 150 "$peer" "${cli[@]}" -- --role client --local 10.9.0.1:7001 \
  --peer 10.9.0.2:7000 --test xfer --count 100000 >"$tmp/client.log" 2>&1
crc=$?
peers_end $crc "memif client exited $crc"
grep -q "client: PASS" "$tmp/client.log" || fail "client did not pass"

# gw-bench raw: a bounded count, every byte checked, nothing lost.
[ -n "$bench" ] || exit 0
for size in 64 max; do
  rm -f "$sock"
  memif_eal gwb
  timeout 60 "$bench" raw "${srv[@]}" -- --backend dpdk --role rx --local 10.9.0.2:7000 \
    --size "$size" --count 200000 --duration 30 --idle 5 --verify --json \
    >"$tmp/rx.json" 2>"$tmp/rx.err" &
  rpid=$!
  wait_for "$rpid" 100 test -e "$sock" || { show "$tmp/rx.err"; fail "gw-bench raw rx made no memif socket"; }
  timeout 60 "$bench" raw "${cli[@]}" -- --backend dpdk --role tx --local 10.9.0.1:7001 \
    --peer 10.9.0.2:7000 --size "$size" --count 200000 --verify --json \
    >"$tmp/tx.json" 2>"$tmp/tx.err"
  trc=$?
  wait "$rpid"; rrc=$?
  show "$tmp/tx.json" "$tmp/rx.json"
  [ $trc -eq 0 ] && [ $rrc -eq 0 ] || { show "$tmp/tx.err" "$tmp/rx.err"; fail "gw-bench raw --size $size: tx $trc rx $rrc"; }
  python3 - "$tmp/tx.json" "$tmp/rx.json" <<'PY' || fail "gw-bench raw --size $size lost or damaged packets"
import json, sys
tx = json.load(open(sys.argv[1])); rx = json.load(open(sys.argv[2]))
ok = tx["packets"] == 200000 and rx["packets"] == 200000 and rx["drops"] == 0 \
     and rx["corrupt"] == 0 and rx["wrong_size"] == 0 and rx["rx_bad"] == 0
print("raw size %d: tx %d rx %d drops %d corrupt %d: %s" % (rx["size"], tx["packets"],
      rx["packets"], rx["drops"], rx["corrupt"], "ok" if ok else "BAD"))
sys.exit(0 if ok else 1)
PY
done
echo "PASS"
