# shellcheck shell=bash
# have_dpdk APPS_DIR: 0 when this build's gw-aggregator has the DPDK
# backend and this machine's DPDK can load its vdev drivers (memif tests
# need both), 1 when not, with the reason in HAVE_DPDK_WHY. The drivers
# are plugins in the system's DPDK folder: a machine that has the
# libraries only (scripts/gpu-check.sh's pack on another distribution)
# cannot make a vdev. It starts the shard on a null device, no hugepages,
# for 3 s at most.
#   source "$(dirname "$0")/../have_dpdk.sh"
# shellcheck disable=SC2034  # HAVE_DPDK_WHY: the caller reads it
have_dpdk() {
  local probe
  HAVE_DPDK_WHY=
  probe=$(timeout 3 "$1/gw-aggregator" -l 0 --no-huge --no-pci -m 256 --no-shconf \
    --file-prefix=gwdp$$ --vdev=net_null0 -- --backend dpdk --shard 0 --workers 1 \
    --dim 64 --local 10.0.0.1:1 --opts link_wait=0 2>&1 </dev/null)
  local rc=$?
  # 77: the CLIs' code for a backend this build lacks (docs/cli.md).
  if [ "$rc" -eq 77 ] || printf '%s' "$probe" | grep -q "not built\|unsupported\|not supported"; then
    HAVE_DPDK_WHY="this build has no DPDK backend"
    return 1
  fi
  if printf '%s' "$probe" | grep -q "failed to parse device"; then
    HAVE_DPDK_WHY="this machine's DPDK has no vdev drivers (net_null0: failed to parse device)"
    return 1
  fi
  return 0
}
