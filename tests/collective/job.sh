# Shared by the allreduce tests: starts an aggregator per shard and W
# workers (gw-allreduce) on 127.0.0.1 over the UDP backend, waits for all
# of them with a time bound, and kills whatever is left on exit.
#   source job.sh BUILD_APPS_DIR
#   run_job W S "aggregator args" "worker args"   -> 0 if every worker exit 0
#   RANK_ARGS[r] (optional) adds arguments for rank r only.
# Logs: $JOB_DIR/agg.S.{out,err}, $JOB_DIR/w.R.{out,err}.
APPS=$1
JOB_DIR=$(mktemp -d /tmp/gw-coll-test.XXXXXX)
# Ports from the PID so parallel test runs do not collide.
BASE_PORT=$((20000 + ($$ % 2000) * 16))
JOB_PIDS=()
RANK_ARGS=()
cleanup() {
  # "|| true": a script under set -e (bench/sketched.sh) would otherwise
  # exit 1 here for a process that already ended.
  for p in "${JOB_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$JOB_DIR"
}
trap cleanup EXIT

aggs_list() {  # S -> comma list of shard endpoints
  local s out=""
  for ((s = 0; s < $1; s++)); do out+="${out:+,}127.0.0.1:$((BASE_PORT + s))"; done
  echo "$out"
}

run_job() {
  local W=$1 S=$2 AX=$3 WX=$4 s r rc=0
  local apids=() wpids=()
  for ((s = 0; s < S; s++)); do
    # shellcheck disable=SC2086
    timeout 120 "$APPS/gw-aggregator" --shard $s --shards $S --workers $W \
      --local 127.0.0.1:$((BASE_PORT + s)) --idle-exit-ms 3000 --json $AX \
      >"$JOB_DIR/agg.$s.out" 2>"$JOB_DIR/agg.$s.err" &
    apids+=($!)
  done
  JOB_PIDS+=("${apids[@]}")
  sleep 0.3
  for ((r = 0; r < W; r++)); do
    # shellcheck disable=SC2086
    timeout 120 "$APPS/gw-allreduce" --rank $r --workers $W --shards $S \
      --agg "$(aggs_list $S)" --local 127.0.0.1:$((BASE_PORT + 8 + r)) $WX \
      ${RANK_ARGS[$r]:-} \
      >"$JOB_DIR/w.$r.out" 2>"$JOB_DIR/w.$r.err" &
    wpids+=($!)
  done
  JOB_PIDS+=("${wpids[@]}")
  for ((r = 0; r < W; r++)); do
    if ! wait "${wpids[$r]}"; then
      echo "worker $r failed:"; cat "$JOB_DIR/w.$r.err"; rc=1
    fi
  done
  # Aggregators leave on their own 3 s after the last packet.
  for p in "${apids[@]}"; do wait "$p" || { echo "aggregator failed"; rc=1; }; done
  return $rc
}

# agg_stat S KEY -> the counter from shard S's JSON line
agg_stat() {
  sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$JOB_DIR/agg.$1.out" | tail -n1
}

# rounds_with VERDICT R -> how many rounds worker R reported with it
rounds_with() {
  grep -c "$1" "$JOB_DIR/w.$2.out"
}
