#!/usr/bin/env bash
# Runs the MPI_Allreduce baseline (bench/mpi_allreduce) with W ranks, rank
# I inside namespace gwnI of scripts/netns-star.sh, so every byte MPI moves
# crosses that rank's (possibly rate-limited) veth and the hub's bridge.
# --no-netns runs it the ordinary way in the root namespace instead, shared
# memory allowed: the unlimited path. Prints mpi_allreduce's output.
#
# Usage: bench/mpi_netns.sh BUILD_DIR W [--no-netns] [mpi_allreduce args...]
#   e.g. scripts/netns-star.sh up 4 1gbit
#        bench/mpi_netns.sh build 4 --elems 16777216 --reps 3 --json
#        scripts/netns-star.sh down 4
#
# How mpirun (Open MPI 4.1, PMIx 4.2) reaches ranks in other namespaces:
# each rank connects back to mpirun's PMIx server over TCP, and that server
# listens on loopback by default, which a rank in its own namespace cannot
# reach (PMIx 4 has no unix-socket transport any more). So mpirun runs in
# the hub namespace, and PMIX_MCA_ptl_base_if_include keeps loopback out of
# the PMIx server's interfaces: it then listens on the bridge's 10.77.0.254,
# which every leaf reaches through its veth. The launch itself is a local
# fork (one node, no orted, no ssh); each rank enters its namespace with
# ip netns exec, which execs in place, so mpirun still owns the pid.
#
# Open MPI settings pass through the environment, e.g. the ring instead of
# the tuned default (Rabenseifner-like at these sizes, slower than the ring
# on a rate-limited star): OMPI_MCA_coll_tuned_use_dynamic_rules=1
# OMPI_MCA_coll_tuned_allreduce_algorithm=4; or OMPI_MCA_btl_tcp_links=2,
# which lets W=2 fill both directions of its one link at once.
#
# Exit 2 on a bad command line, 1 when the run cannot start or fails.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
usage() { echo "$prog: $*" >&2; bench_usage 2; }

# BUILD_DIR and W, then mpi_allreduce's own arguments: bench_args would
# refuse those.
case ${1:-} in -h|--help) bench_usage 0 ;; esac
[ $# -ge 2 ] || usage "needs BUILD_DIR and W"
build=$1 w=$2
shift 2
if ! [[ $w =~ ^[0-9]{1,3}$ ]] || [ "$((10#$w))" -lt 1 ] || [ "$((10#$w))" -gt 253 ]; then
  usage "W: '$w' is not an integer in [1, 253]"
fi
w=$((10#$w))
netns=1
if [ "${1:-}" = --no-netns ]; then netns=0; shift; fi

bin=$build/bench/mpi_allreduce
[ -x "$bin" ] || bench_die "$bin not built (needs MPI at configure time)"
command -v mpirun >/dev/null || bench_die "mpirun not found (scripts/install-deps.sh)"
bin=$(realpath "$bin")

# --allow-run-as-root: namespaces need root, and mpirun refuses root
# without it. --oversubscribe: W may exceed the cores.
mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$w")

if [ $netns = 0 ]; then
  exec "${mpirun[@]}" "$bin" "$@"
fi

bench_root
for ns in gwhub $(seq -f 'gwn%g' 0 $((w - 1))); do
  [ -e "/var/run/netns/$ns" ] ||
    bench_die "namespace $ns missing; run scripts/netns-star.sh up $w [RATE] first"
done

# MPI on TCP over the veths only: ob1 with the tcp and self BTLs keeps out
# vader (shared memory) and UCX, whose shared-memory transports would skip
# the network since every rank sees the same host; the coll components
# that use shared memory are left out in case a site config raises them.
export PMIX_MCA_ptl_base_if_include=10.77.0.0/24
# The single quotes are meant: each rank expands its own rank number.
# shellcheck disable=SC2016
exec ip netns exec gwhub "${mpirun[@]}" \
  --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 \
  --mca coll ^sm,han \
  sh -c 'exec ip netns exec "gwn$OMPI_COMM_WORLD_RANK" "$0" "$@"' "$bin" "$@"
