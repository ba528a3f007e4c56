# shellcheck shell=bash
# shellcheck disable=SC2034  # what it sets is for the script that sources it
# Shared by the allreduce tests: a job is one gw-launch of gw-allreduce
# workers over UDP on 127.0.0.1, bounded in time, with its logs in $LOGS.
# GW_LINK=rdma runs them over the RDMA backend instead, on GW_RDMA_IP
# (default 10.0.0.1: the 'rdma' suite runs them in scripts/rdma-vm.sh's
# guest); $BACKEND and $LOCAL_IP are what a process of the job binds.
#   source lib.sh BUILD_APPS_DIR
#   job [gw-launch options and job options] -- [worker options]
#                                  -> 0 if every worker and shard exit 0
# The shards print JSON counters. Logs (gw-launch --logs): $LOGS/agg.S.out,
# agg.S.err, w.R.out, w.R.err, aggs; each job replaces the last one's.
APPS=$1
LINK=${GW_LINK:-udp}
case $LINK in
  udp) BACKEND=udp LOCAL_IP=127.0.0.1 ;;
  rdma) BACKEND=rdma LOCAL_IP=${GW_RDMA_IP:-10.0.0.1} ;;
  *) echo "lib.sh: GW_LINK: '$LINK' is not udp or rdma" >&2; exit 2 ;;
esac
LOGS=$(mktemp -d /tmp/gw-coll-test.XXXXXX)
trap 'rm -rf "$LOGS"' EXIT

job() {
  local opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  rm -f "$LOGS"/agg.* "$LOGS"/w.*
  # --idle-exit: should this script be killed outright, the shards leave
  # by themselves (the workers time out).
  "$APPS/gw-launch" --link "$LINK" --rdma-ip "$LOCAL_IP" --quiet --logs "$LOGS" --timeout 120 --idle-exit 30000 \
    --agg-args --json "${opts[@]}" -- "$APPS/gw-allreduce" "$@"
}

# agg_stat S KEY -> the counter from shard S's JSON line
agg_stat() {
  sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$LOGS/agg.$1.out" | tail -n1
}

# rounds_with VERDICT R -> how many rounds worker R reported with it
rounds_with() {
  grep -c "$1" "$LOGS/w.$2.out"
}

# every_rank W N LABEL -> 0 if each of the W workers reported N rounds
# bit-exact against the model; else says which did not, and 1
every_rank() {
  local r n ok=0
  for ((r = 0; r < $1; r++)); do
    n=$(rounds_with bit-exact $r)
    [ "$n" -eq "$2" ] || { echo "FAIL: $3: rank $r: $n of $2 rounds as modelled"; ok=1; }
  done
  return $ok
}
