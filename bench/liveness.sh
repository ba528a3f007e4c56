#!/usr/bin/env bash
# How late heartbeats are under the allreduce bench's own load, and what
# the failure detector makes of it (docs/collective.md, "Faults"). The
# heaviest cells of bench/allreduce.sh, where eight DPDK processes start
# and poll on this machine's cores: memif W = 4 through one shard (3lc)
# and through four ("memif-sharded", raw), 16M elements (--elems), four
# rounds, the default liveness and start-up times. Every process reports
# its liveness counters (--stats-interval); the last report of each says:
#
#   hb_late    how late its heartbeats left after their time (p50, p99,
#              max, µs): its own starvation
#   gap        the gaps between its peers' packets that its detector
#              learned from (p50, p99, p99.9, max, µs)
#   suspected, cleared, probes_sent: peers it suspected, of them heard
#              again, probes it sent
#
# and every job must succeed (a cell that fails is reported with its
# error). Prints one JSON object (and writes it to --out FILE); a table
# goes to stderr.
#
# Usage: bench/liveness.sh [BUILD_DIR] [--elems N] [--runs N] [--out FILE]
#   --elems N   tensor elements (default 16777216)
#   --runs N    jobs per cell (default 3)
#   --out FILE  also write the JSON to FILE
#
# Run nothing else meanwhile: the load is the point, and it must be the
# bench's. Exit 2 on a bad command line, 1 when a job failed.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
elems=16777216 runs=3 out=""
bench_args "elems= runs= out=" "$@"
[[ $elems =~ ^[0-9]{4,10}$ ]] || { echo "$prog: --elems: '$elems' is not a whole number" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]?$ ]] || { echo "$prog: --runs: '$runs' is not a number in 1..99" >&2; exit 2; }
bench_need "$build/apps/gw-launch" "$build/apps/gw-aggregator" "$build/apps/gw-allreduce"
exec python3 -B bench/liveness.py "$build" "$elems" "$runs" "$out"
