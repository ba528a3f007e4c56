#!/usr/bin/env bash
# Two processes over net_memif: frames built by hand with one defect each
# (runt, ARP, IPv6, IP version, IHL, lying total length, TCP, wrong port,
# wrong destination IP, bad IPv4 or UDP checksum, payload flipped after
# the checksum, fragment, UDP length) are dropped and counted in rx_bad;
# the same frame built correctly (also with UDP checksum 0) is delivered.
. "$(dirname "$0")/lib.sh" "$@"
sock=$tmp/memif.sock
mapfile -t srv < <(eal 0 gwis$$ "net_memif0,role=server,socket=$sock,socket-abstract=no")
mapfile -t cli < <(eal "$lc2" gwic$$ "net_memif0,role=client,socket=$sock,socket-abstract=no")
timeout 100 "$peer" "${srv[@]}" -- --role server --local 10.9.1.2:7100 --timeout 80 \
  >"$tmp/server.log" 2>&1 &
spid=$!
wait_file "$sock" "$spid" || { show "$tmp/server.log"; fail "memif server made no socket"; }
timeout 100 "$peer" "${cli[@]}" -- --role client --local 10.9.1.1:7101 \
  --peer 10.9.1.2:7100 --test bad >"$tmp/client.log" 2>&1
crc=$?
wait "$spid"; src=$?
show "$tmp/server.log" "$tmp/client.log"
[ $crc -eq 0 ] || fail "client exited $crc"
[ $src -eq 0 ] || fail "server exited $src"
echo "PASS"
