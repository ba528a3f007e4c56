#!/usr/bin/env bash
# The many-machine path on one machine: mpirun (OpenMPI) starts one shard
# and W = 2 and 4 workers, each MPI rank in its own network namespace of a
# star joined by veths (scripts/netns-star.sh); MPI only swaps addresses,
# the gradients go over gradwire's UDP backend between the namespaces. The
# results are bit-exact. Skips (77) without mpirun or an MPI build.
set -u
apps=$1 star=$2
command -v mpirun >/dev/null || { echo "SKIP: no mpirun (scripts/install-deps.sh)"; exit 77; }
if "$apps/gw-allreduce" --mpi --workers 1 --dim 1 2>&1 | grep -q "no MPI"; then
  echo "SKIP: gradwire built without MPI"; exit 77
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
fail=0
n=0
trap 'bash "$star" down $n >/dev/null 2>&1' EXIT
for W in 2 4; do
  n=$((W + 1))
  bash "$star" up $n >/dev/null || { echo "FAIL: netns-star up $n"; exit 1; }
  # The PMIx server in mpirun must be reachable from the namespaces: run it
  # in the hub, on the bridge's address (see bench/mpi_netns.sh).
  wrap=(sh -c 'exec ip netns exec "gwn$OMPI_COMM_WORLD_RANK" "$0" "$@"')
  job=(--mpi --workers "$W" --dim 200000 --backend udp)
  # Under ASan: Open MPI unloads its components at MPI_Finalize and what
  # they allocated shows up as leaks of "<unknown module>" that no
  # suppression can name; leaks of the apps themselves are checked by the
  # other collective tests, which run the same code without MPI.
  out=$(LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0" \
    PMIX_MCA_ptl_base_if_include=10.77.0.0/24 timeout 120 \
    ip netns exec gwhub mpirun --allow-run-as-root --oversubscribe \
      -np 1 "${wrap[@]}" "$apps/gw-aggregator" "${job[@]}" --local auto:7000 --idle-exit-ms 2000 : \
      -np $W "${wrap[@]}" "$apps/gw-allreduce" "${job[@]}" --local auto:7100 --rounds 3 2>&1)
  rc=$?
  k=$(printf '%s\n' "$out" | grep -c bit-exact)
  if [ $rc -ne 0 ] || [ "$k" -ne $((3 * W)) ]; then
    echo "FAIL: mpirun W=$W: rc=$rc, $k of $((3 * W)) rounds bit-exact"; printf '%s\n' "$out" | tail -20
    fail=1
  else
    echo "ok: mpirun W=$W across $n namespaces: $k rounds bit-exact"
  fi
  bash "$star" down $n >/dev/null
done
exit $fail
