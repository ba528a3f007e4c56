#!/usr/bin/env bash
# gradwire's allreduce against Open MPI's MPI_Allreduce, in one run on this
# machine: a float32 tensor (16M elements unless --elems) summed by W = 2
# and 4 workers, gradwire with the codecs raw, int8 and 3lc (uplink and
# downlink alike), MPI with its default algorithm and with the ring, on
# three paths:
#
#   unlimited  gradwire: gw-launch --link memif (DPDK memif; one shard, and
#              "memif-sharded": a shard per worker, each worker a memif
#              port per shard), --link netns on the unlimited star of
#              scripts/netns-star.sh and --colocate on it ("netns-colo",
#              a shard in each worker); MPI: shared
#              memory (bench/mpi_netns.sh --no-netns, the real one-machine
#              baseline) and TCP across the same star
#   1gbit      every link of the star limited to 1 Gbit/s each way;
#              gradwire --link netns, MPI across the star
#   100mbit    the same at 100 Mbit/s
#
# Prints one JSON object (and writes it to --out FILE): for each cell the
# time of one allreduce, elements per second (elems / seconds), bytes each
# worker sends per allreduce, retransmissions and tbf drops, the job
# options used; gradwire / MPI ratios (speedup = t_mpi / t_gw against the
# better MPI variant on that path); and the issue's targets, "raw at least
# 2x MPI on the unlimited path" and "3lc at least 10x MPI on the 1 Gbit/s
# path" (reported, not asserted). A human table goes to stderr.
#
# Usage: bench/allreduce.sh [BUILD_DIR] [--elems N] [--quick] [--out FILE] [--window-check]
#   --elems N   tensor elements (default 16777216; --quick: 1048576)
#   --quick     smoke run: 1M elements and W = 2 only
#   --out FILE  also write the JSON to FILE
#   --window-check  also the fixed windows, raw at the largest W, per path
#
# Timing. gradwire: gw-allreduce --rounds R --no-verify --json; round 0 is
# a warm-up and dropped; a round takes as long as its slowest worker; the
# cell's time is the median over the remaining rounds. R = 4 on the
# unlimited and 1 Gbit/s paths, 3 at 100 Mbit/s (two timed rounds: a raw
# round there moves 64 MB per link, 5.5 s). MPI: mpi_allreduce's median of
# --reps 3 after one warm-up (--reps 2 at 100 Mbit/s), each rep timed by
# its slowest rank. Every run is bounded by timeout; a failed or timed-out
# run leaves {"error": ...} in its cell and the run goes on.
#
# Job options. gw-launch's --mtu only lowers the packet size, and the UDP
# backend defaults to 1472-byte payloads whatever the device's MTU, so on
# the star (veth MTU 9000) the netns runs pass --opts payload=8972 for
# 9000-byte packets (bigger chunks: raw 2200 elements instead of 320).
# memif stays at 1500 (its PMD refuses a larger frame as gw-launch makes
# the port). The window is 256 slots per shard on every path: each worker
# tunes how many chunks it keeps in flight to the path (delay and loss,
# collective/coll_window.h), so no window is picked per link any more.
# --window-check runs, per path, raw at the largest W again with fixed
# windows (GW_COLL_WINDOW=fixed: memif 64, 256, 512; star 16, 32, 64,
# 256), and reports the tuned cell against the fastest of them
# ("window_check"; the target is within 5%).
#
# Needs root (namespaces), Open MPI's mpirun and the build's gw-launch,
# gw-aggregator, gw-allreduce and bench/mpi_allreduce. Run nothing else
# meanwhile: every process of a job shares this machine's CPUs. Exit 2 on
# a bad command line, 1 when it cannot run at all.
#
# This script checks the command line; bench/allreduce.py makes the runs
# and bench/allreduce_report.py the JSON object and the table.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
elems="" out=""
quick=0 window_check=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "elems= quick out= window-check" "$@"
if [ -z "$elems" ]; then
  if [ "$quick" = 1 ]; then elems=1048576; else elems=16777216; fi
fi
if ! [[ $elems =~ ^[0-9]{4,10}$ ]] || [ "$elems" -lt 1000 ] || [ "$elems" -gt 1073741824 ]; then
  echo "$prog: --elems: '$elems' is not an integer in [1000, 2^30]" >&2; exit 2
fi
bench_need "$build/apps/gw-launch" "$build/apps/gw-aggregator" "$build/apps/gw-allreduce"
bench_root
exec python3 -B bench/allreduce.py "$build" "$elems" "$quick" "$out" "$window_check"
