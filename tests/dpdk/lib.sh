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
# wait_file PATH PID: until PATH exists (a memif server's socket: a client
# started before it never connects), while process PID lives; max 10 s.
wait_file() {
  for _ in $(seq 100); do
    [ -e "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
fail() { echo "FAIL: $*"; exit 1; }
show() { for f in "$@"; do echo "--- $(basename "$f")"; cat "$f"; done; }
