#!/usr/bin/env bash
# The DPDK backend on net_tap inside a namespace, talking to the kernel's own
# UDP stack: every payload size 1..payload_max sent by a kernel socket is
# echoed back intact — so the kernel accepted the IPv4 and UDP checksums
# the backend wrote: none by default (0, RFC 768), computed in software
# with GW_TAP_UDP_CSUM=1 (backend option udp_csum=1) where the tap port
# offers no checksum offload — and the server sleeps in gw_dp_wait() on the tap
# queue's rx interrupt between packets. Skips (77) without namespaces or
# python3.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
netns=$(dirname "$0")/../net/netns.sh
"$netns" check || exit 77
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
ns=gwtk$$; tap=${ns}t
cleanups+=("ip netns del $ns")
ip netns add "$ns" || fail "cannot make namespace $ns"
ip -n "$ns" link set lo up
mapfile -t srv < <(eal 0 "${ns}s" "net_tap0,iface=$tap")
csum=${GW_TAP_UDP_CSUM:-0}
ip netns exec "$ns" timeout 100 "$peer" "${srv[@]}" -- --role server \
  --local 10.98.0.2:7400 --opts "udp_csum=$csum" --timeout 80 >"$tmp/server.log" 2>&1 &
spid=$!
# The tap device appears when the EAL probes it; the port's link follows
# the kernel side, which is brought up here.
wait_for "$spid" 100 ip -n "$ns" link show "$tap" >/dev/null 2>&1
ip -n "$ns" addr add 10.98.0.1/24 dev "$tap" || { show "$tmp/server.log"; fail "no tap device"; }
ip -n "$ns" link set "$tap" up
# The backend answers no ARP: a static neighbour (tap takes any MAC).
ip -n "$ns" neigh add 10.98.0.2 lladdr 02:00:00:00:00:02 dev "$tap"
wait_for "$spid" 150 grep -q "server: ready" "$tmp/server.log" \
  || { show "$tmp/server.log"; fail "server did not come up"; }
max=$(sed -n 's/.*payload_max \([0-9]*\).*/\1/p' "$tmp/server.log")

ip netns exec "$ns" python3 - "$max" >"$tmp/client.log" 2>&1 <<'PY'
import socket, struct, sys
mx = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.98.0.1", 7401))
s.settimeout(0.5)
bad = []
for size in range(1, mx + 1):
    msg = bytes(((size * 13 + i * 7) & 0xFF) for i in range(size))
    for attempt in range(5):
        s.sendto(msg, ("10.98.0.2", 7400))
        try:
            got, _ = s.recvfrom(65536)
            break
        except socket.timeout:
            got = None
    if got != msg:
        bad.append(size)
bye = struct.pack("<IBBHQ", 0x53545747, 5, 0, 0, 9)
s.sendto(bye, ("10.98.0.2", 7400))
try:
    s.recvfrom(100)
except socket.timeout:
    print("no answer to BYE")
print("kernel client: %d of %d sizes echoed intact" % (mx - len(bad), mx))
if bad:
    print("FAIL sizes:", bad[:20])
    sys.exit(1)
PY
peers_end $? "kernel UDP client saw missing or damaged echoes"
echo "PASS"
