#!/usr/bin/env bash
# Test hosts on one machine: two network namespaces joined by a veth pair,
# created and removed by the tests themselves. Addresses live only inside
# these namespaces.
#
#   netns.sh up PREFIX [MTU]        namespaces PREFIXa, PREFIXb; veth PREFIXa0 <-> PREFIXb0
#                                   10.77.N.1/24 in a, 10.77.N.2/24 in b (N from PREFIX)
#   netns.sh netem PREFIX "ARGS"    tc netem ARGS on both veth ends (e.g. "loss 5% reorder 25% 50%")
#   netns.sh tbf PREFIX RATE        tc tbf rate RATE on both veth ends (e.g. 100mbit)
#   netns.sh lo-netem NS "ARGS"     netem on the loopback of namespace NS
#   netns.sh addr PREFIX a|b        prints the address of that end
#   netns.sh mac PREFIX a|b         prints the MAC of that end's veth
#   netns.sh down PREFIX            removes both namespaces (and the veth pair)
#   netns.sh check                  exit 0 if namespaces can be made here, 77 if not
#
# Exit 77 (skip) when this machine cannot make namespaces (not root, no
# CAP_NET_ADMIN, no netns support).
set -euo pipefail

die_skip() { echo "SKIP: $*" >&2; exit 77; }

subnet() {  # a stable /24 per prefix, so parallel tests do not collide
  local sum
  sum=$(printf '%s' "$1" | cksum | cut -d' ' -f1)
  echo $(( sum % 200 + 20 ))
}

check() {
  [ "$(id -u)" = 0 ] || die_skip "network namespaces need root"
  command -v ip >/dev/null || die_skip "iproute2 (ip) not installed"
  local probe=gwprobe$$
  ip netns add "$probe" 2>/dev/null || die_skip "cannot create a network namespace here"
  ip netns del "$probe"
}

cmd=${1:-}
case $cmd in
check) check ;;
up)
  p=$2; mtu=${3:-1500}; n=$(subnet "$p")
  check
  "$0" down "$p" 2>/dev/null || true
  ip netns add "${p}a"
  ip netns add "${p}b"
  ip link add "${p}a0" type veth peer name "${p}b0"
  ip link set "${p}a0" netns "${p}a"
  ip link set "${p}b0" netns "${p}b"
  for s in a b; do
    ip -n "${p}$s" link set lo up
    ip -n "${p}$s" link set "${p}${s}0" mtu "$mtu" up
  done
  ip -n "${p}a" addr add "10.77.$n.1/24" dev "${p}a0"
  ip -n "${p}b" addr add "10.77.$n.2/24" dev "${p}b0"
  ;;
netem)
  p=$2
  for s in a b; do
    # shellcheck disable=SC2086
    ip netns exec "${p}$s" tc qdisc replace dev "${p}${s}0" root netem $3
  done
  ;;
tbf)
  p=$2
  for s in a b; do
    ip netns exec "${p}$s" tc qdisc replace dev "${p}${s}0" root tbf rate "$3" burst 256kb latency 50ms
  done
  ;;
lo-netem)
  # shellcheck disable=SC2086
  ip netns exec "$2" tc qdisc replace dev lo root netem $3
  ;;
addr)
  n=$(subnet "$2"); [ "$3" = a ] && echo "10.77.$n.1" || echo "10.77.$n.2" ;;
mac)
  ip -n "$2$3" link show "$2${3}0" | awk '/link\/ether/ {print $2}' ;;
down)
  p=$2
  ip netns del "${p}a" 2>/dev/null || true
  ip netns del "${p}b" 2>/dev/null || true
  ;;
*)
  sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
