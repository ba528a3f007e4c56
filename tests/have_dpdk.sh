# have_dpdk APPS_DIR: 0 when this build's gw-aggregator has the DPDK
# backend (memif tests need it), 1 when it says the backend is not built.
# It starts the shard on a null device, no hugepages, for 3 s at most.
#   source "$(dirname "$0")/../have_dpdk.sh"
have_dpdk() {
  local probe
  probe=$(timeout 3 "$1/gw-aggregator" -l 0 --no-huge --no-pci -m 256 --no-shconf \
    --file-prefix=gwdp$$ --vdev=net_null0 -- --backend dpdk --shard 0 --workers 1 \
    --dim 64 --local 10.0.0.1:1 --opts link_wait=0 2>&1 </dev/null)
  ! printf '%s' "$probe" | grep -q "not built\|unsupported\|not supported"
}
