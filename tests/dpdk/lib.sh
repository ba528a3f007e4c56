# shellcheck shell=bash
# shellcheck disable=SC2034  # what it sets is for the script that sources it
# Sourced by the DPDK test scripts: skip checks, EAL arguments, clean-up of
# the processes and files a test made, even when it fails.
# usage in a script:  . "$(dirname "$0")/lib.sh" "$@"
set -u
peer=${1:-none}
bench=${2:-}
if [ "$peer" = none ] || [ ! -x "$peer" ]; then
  echo "SKIP: the DPDK backend is not built here (libdpdk not found at configure time)"
  exit 77
fi
tmp=$(mktemp -d /tmp/gw-dpdk-test.XXXXXX)
cleanups=()
cleanup() {
  # Only this shell's own children that are still running.
  for j in $(jobs -pr); do kill "$j" 2>/dev/null; done
  wait 2>/dev/null
  for c in "${cleanups[@]}"; do eval "$c" >/dev/null 2>&1; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# Second lcore when there is a second CPU: the two processes poll at once.
lc2=0
[ "$(nproc)" -ge 2 ] && lc2=1
# eal LCORE PREFIX VDEV: the EAL arguments, one per line (read into arrays).
eal() {
  printf '%s\n' -l "$1" --no-huge --no-pci -m 256 --no-shconf \
    "--file-prefix=$2" --log-level=lib.eal:error "--vdev=$3"
}
# wait_for PID TENTHS CMD...: runs CMD every 0.1 s until it succeeds, while
# process PID lives, TENTHS times at most; returns its last verdict.
wait_for() {
  local pid=$1 n=$2
  shift 2
  for _ in $(seq "$n"); do
    "$@" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  "$@"
}
fail() { echo "FAIL: $*"; exit 1; }
show() { for f in "$@"; do echo "--- $(basename "$f")"; cat "$f"; done; }
# memif_eal PREFIX: $sock ($tmp/memif.sock), and $srv and $cli, the EAL
# arguments of a memif server (lcore 0, file prefix PREFIXs$$) and client.
memif_eal() {
  sock=$tmp/memif.sock
  mapfile -t srv < <(eal 0 "${1}s$$" "net_memif0,role=server,socket=$sock,socket-abstract=no")
  mapfile -t cli < <(eal "$lc2" "${1}c$$" "net_memif0,role=client,socket=$sock,socket-abstract=no")
}
# memif_server SECONDS ARGS...: dpdk_peer as that server, ARGS after
# --role server, in the background ($spid, log $tmp/server.log) for at most
# SECONDS; returns once its socket is there (a client started before it
# never connects), else fails.
memif_server() {
  local t=$1
  shift
  timeout "$t" "$peer" "${srv[@]}" -- --role server "$@" >"$tmp/server.log" 2>&1 &
  spid=$!
  wait_for "$spid" 100 test -e "$sock" || { show "$tmp/server.log"; fail "memif server made no socket"; }
}
# peers_end CRC MSG: the client has exited with CRC: waits for the server
# ($spid), shows both logs ($tmp/server.log, $tmp/client.log), and fails
# with MSG unless CRC is 0, or unless the server exited 0.
peers_end() {
  local crc=$1 src
  wait "$spid"; src=$?
  show "$tmp/server.log" "$tmp/client.log"
  [ "$crc" -eq 0 ] || fail "$2"
  [ $src -eq 0 ] || fail "server exited $src"
}
