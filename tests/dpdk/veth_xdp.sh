#!/usr/bin/env bash
# Two processes in two network namespaces joined by a veth pair
# (tests/net/netns.sh), each driving its end with net_af_xdp (net_af_packet
# if AF_XDP cannot be used here): every payload size is echoed back intact
# and a windowed run of mixed sizes arrives complete. Skips (77) when
# namespaces cannot be made.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
netns=$(dirname "$0")/../net/netns.sh
"$netns" check || exit 77
p=gwdx$$
cleanups+=("$netns down $p")
"$netns" up "$p" 1500 || fail "cannot make namespaces $p"
a_ip=$("$netns" addr "$p" a); b_ip=$("$netns" addr "$p" b)
b_mac=$("$netns" mac "$p" b)

run() {  # DRIVER VDEV-ARGS: 0 pass, 1 fail, 3 the driver could not open
  local drv=$1 args=$2
  mapfile -t srv < <(eal 0 "${p}s" "${drv}0,iface=${p}b0,$args")
  mapfile -t cli < <(eal "$lc2" "${p}c" "${drv}0,iface=${p}a0,$args")
  ip netns exec "${p}b" timeout 100 "$peer" "${srv[@]}" -- --role server \
    --local "$b_ip:7200" --timeout 80 >"$tmp/server.log" 2>&1 &
  spid=$!
  if ! wait_for "$spid" 100 grep -q "server: ready" "$tmp/server.log"; then
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    show "$tmp/server.log"
    return 3
  fi
  ip netns exec "${p}a" timeout 100 "$peer" "${cli[@]}" -- --role client \
    --local "$a_ip:7201" --peer "$b_ip:7200@$b_mac" --test xfer --count 20000 \
    >"$tmp/client.log" 2>&1
  local crc=$?
  wait "$spid"; local src=$?
  show "$tmp/server.log" "$tmp/client.log"
  [ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q "client: PASS" "$tmp/client.log"
}

run net_af_xdp "start_queue=0,queue_count=1"; rc=$?
if [ $rc -eq 3 ]; then
  echo "net_af_xdp cannot be used here; trying net_af_packet"
  run net_af_packet "qpairs=1"; rc=$?
  [ $rc -eq 3 ] && { echo "SKIP: neither net_af_xdp nor net_af_packet opens on a veth here"; exit 77; }
fi
[ $rc -eq 0 ] || fail "transfer over the veth pair failed"
echo "PASS"
