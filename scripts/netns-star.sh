#!/usr/bin/env bash
# A star of hosts on one machine, for benchmarks that need W ranks on a
# real (and optionally rate-limited) network: a hub namespace holding a
# Linux bridge, and N leaf namespaces each joined to it by a veth pair.
# Nothing is created in, or changed in, the root namespace.
#
#   netns-star.sh up N [RATE]    namespaces gwhub (bridge gwbr0) and gwn0..gwn(N-1);
#                                in gwnI: veth0, 10.77.0.(I+1)/24, MTU 9000; its peer
#                                gwvI is a port of gwbr0. With RATE (tc units, e.g.
#                                1gbit, 100mbit) every link is limited to RATE each way.
#                                gwbr0 holds 10.77.0.254/24, so a launcher run in gwhub
#                                (bench/mpi_netns.sh runs mpirun there) reaches every leaf.
#   netns-star.sh down N         removes them; no error for what is already gone
#
# N is 1..253. Needs root. Exit 2 on a bad command line.
set -euo pipefail

hub=gwhub
br=gwbr0
mtu=9000

usage() {
  [ $# -gt 0 ] && echo "netns-star.sh: $*" >&2
  echo "usage:" >&2
  sed -n '7,15p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Bits per second of a tc rate (bit/kbit/mbit/gbit/tbit, or bps/kbps/...
# for bytes per second, as tc reads them); empty when it is not one.
rate_bits() {
  awk -v r="$1" 'BEGIN {
    if (!match(tolower(r), /^[0-9]+(\.[0-9]+)?/)) exit
    v = substr(r, 1, RLENGTH) + 0; u = tolower(substr(r, RLENGTH + 1))
    m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9; m["tbit"] = 1e12
    m["bps"] = 8; m["kbps"] = 8e3; m["mbps"] = 8e6; m["gbps"] = 8e9; m["tbps"] = 8e12
    if (!(u in m) || v <= 0) exit
    printf "%.0f\n", v * m[u]
  }'
}

# The kernel's timer frequency, for the tbf burst; 100 (the lowest Linux
# offers, so the largest burst) when the config cannot be read.
kernel_hz() {
  local hz=""
  if [ -r /proc/config.gz ]; then
    hz=$(zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p') || true
  elif [ -r "/boot/config-$(uname -r)" ]; then
    hz=$(sed -n 's/^CONFIG_HZ=//p' "/boot/config-$(uname -r)")
  fi
  echo "${hz:-100}"
}

down() {
  local i
  for ((i = 0; i < $1; i++)); do
    ip netns del "gwn$i" 2>/dev/null || true
  done
  # Deleting the hub also deletes the bridge and every gwvI, and with them
  # the veth0 ends of leaves beyond N.
  ip netns del "$hub" 2>/dev/null || true
}

up() {
  local n=$1 rate=${2:-} burst="" latency="" i
  if [ -n "$rate" ]; then
    local bits hz tsq
    bits=$(rate_bits "$rate")
    hz=$(kernel_hz)
    tsq=$(cat /proc/sys/net/ipv4/tcp_limit_output_bytes 2>/dev/null || echo 4194304)
    # burst: tbf needs at least rate/HZ bytes, or it cannot send the rate
    # between two timer ticks (tc-tbf(8)); and at least a whole GSO packet
    # (64 KiB plus headers), so tbf never has to split the 64 KiB packets
    # veth passes. 128 KiB covers both up to 250 Mbit/s at HZ=250; at
    # 1gbit it is 500 KB, 4 ms of line rate, which lets a rep's first
    # 0.5 MB go unshaped: under 1% of a 64 MB allreduce.
    burst=$(awk -v b="$bits" -v hz="$hz" 'BEGIN {
      x = b / 8 / hz; if (x < 131072) x = 131072; printf "%.0f\n", x }')
    # latency: tbf drops what would wait longer, so it sizes the queue
    # (RATE x latency + burst). A host's own NIC queue does not drop its
    # TCP: a socket stops at tcp_limit_output_bytes queued (4 MiB on 6.x
    # kernels). So the queue holds that much, and at least 20 ms: 336 ms
    # at 100mbit, 34 ms at 1gbit. (With 20 ms flat, each 100mbit MPI run
    # lost 50-135 packets at the senders' own veths.) It is a ceiling, not
    # a delay every packet sees: once TCP has measured the rate it keeps
    # its own queue short, so it fills only when several ranks send to one.
    latency=$(awk -v b="$bits" -v q="$tsq" 'BEGIN {
      ms = q * 8 / b * 1000; if (ms < 20) ms = 20; printf "%dms\n", ms + 0.999 }')
  fi

  [ "$(id -u)" = 0 ] || { echo "netns-star.sh: needs root (network namespaces)" >&2; exit 1; }
  down "$n"
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add "$br" type bridge
  for ((i = 0; i < n; i++)); do
    ip netns add "gwn$i"
    ip -n "gwn$i" link set lo up
    # Made inside the hub with its peer sent straight to the leaf, so no
    # interface ever appears in the root namespace.
    ip -n "$hub" link add "gwv$i" mtu "$mtu" type veth peer name veth0 mtu "$mtu" netns "gwn$i"
    ip -n "$hub" link set "gwv$i" master "$br" up
    ip -n "gwn$i" addr add "10.77.0.$((i + 1))/24" dev veth0
    ip -n "gwn$i" link set veth0 up
    if [ -n "$rate" ]; then
      # veth0's qdisc limits what rank I sends, gwvI's what it receives.
      ip netns exec "gwn$i" tc qdisc replace dev veth0 root tbf rate "$rate" burst "$burst" latency "$latency"
      ip netns exec "$hub" tc qdisc replace dev "gwv$i" root tbf rate "$rate" burst "$burst" latency "$latency"
    fi
  done
  # A bridge takes the smallest MTU of its ports; set it once they are in.
  ip -n "$hub" link set "$br" mtu "$mtu" up
  ip -n "$hub" addr add 10.77.0.254/24 dev "$br"
}

[ $# -ge 1 ] || usage "missing command (up or down)"
cmd=$1; shift
case $cmd in
up) { [ $# -ge 1 ] && [ $# -le 2 ]; } || usage "up: takes N [RATE]" ;;
down) [ $# -eq 1 ] || usage "down: takes N" ;;
*) usage "unknown command '$cmd'" ;;
esac
n=$1
if ! [[ $n =~ ^[0-9]{1,3}$ ]] || [ "$((10#$n))" -lt 1 ] || [ "$((10#$n))" -gt 253 ]; then
  usage "N: '$n' is not an integer in [1, 253]"
fi
n=$((10#$n))
if [ "$cmd" = up ]; then
  [ $# -lt 2 ] || [ -n "$(rate_bits "$2")" ] ||
    usage "RATE: '$2' is not a tc rate (e.g. 1gbit, 100mbit, 12.5mbps)"
  up "$n" "${2:-}"
else
  [ "$(id -u)" = 0 ] || { echo "netns-star.sh: needs root (network namespaces)" >&2; exit 1; }
  down "$n"
fi
