#!/usr/bin/env bash
# Two processes over net_memif: frames built by hand with one defect each
# (runt, ARP, IPv6, IP version, IHL, lying total length, TCP, wrong port,
# wrong destination IP, bad IPv4 or UDP checksum, payload flipped after
# the checksum, fragment, UDP length) are dropped and counted in rx_bad;
# the same frame built correctly (also with UDP checksum 0) is delivered.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
memif_eal gwi
memif_server 100 --local 10.9.1.2:7100 --timeout 80
timeout 100 "$peer" "${cli[@]}" -- --role client --local 10.9.1.1:7101 \
  --peer 10.9.1.2:7100 --test bad >"$tmp/client.log" 2>&1
crc=$?
peers_end $crc "client exited $crc"
echo "PASS"
