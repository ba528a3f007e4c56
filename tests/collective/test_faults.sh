#!/usr/bin/env bash
# Faults (docs/collective.md, "Faults"): processes started here one by one
# (gw-launch would tear the job down at the first death itself), one
# aggregator and W workers on 127.0.0.1, liveness 1000 ms:
#  - reliable, a worker SIGKILLed mid-job: every survivor fails within 3 s
#    (the detection the docs promise on an unloaded loopback: suspected
#    after the 1 s interval, confirmed 1 s later), with GW_EPEER naming
#    that worker;
#  - loss-tolerant, the same: the survivors finish every round, the shard
#    counts the worker gone;
#  - the aggregator SIGKILLed: every worker fails naming shard 0; and in
#    a loss-tolerant job of 2 shards, killing shard 1 stops it too; one
#    started again at its address is named as restarted;
#  - a worker 2.5 s between calls (a long backward pass) is alive;
#  - a worker that leaves cleanly: reliable, the others fail naming it;
#    loss-tolerant, they go on;
#  - loss-tolerant, a worker stopped 2.5 s is evicted; heard again far
#    behind, it is not waited for and its call fails naming why;
#  - a live peer stopped (SIGSTOP) for 1.5 s, shard or worker, beside a
#    straggler, is not taken for dead: the job finishes;
#  - a peer that never comes up is named when the start-up time runs out;
#  - settings that differ (payload, window, dim) are named at the first
#    packet, in the workers' errors and the aggregator's log.
# "Within" is 3 s for a death (the call timeout, which these bounds tell
# apart, is 60 s), 5 s for the rest.
set -u
APPS=$1
T=$(mktemp -d /tmp/gw-faults.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail=0
now() { date +%s%N; }

# start W DIM "agg options" "worker options" ["per-rank options" ...]: an
# aggregator and W workers; their pids in AGG and W0..; logs in $T.
start() {
  local w=$1 dim=$2 aopt=$3 wopt=$4
  shift 4
  rm -f "$T"/*.out "$T"/*.err
  # shellcheck disable=SC2086
  "$APPS/gw-aggregator" --shard 0 --workers "$w" --dim "$dim" --local 127.0.0.1:0 --json \
    --idle-exit-ms 20000 $aopt > "$T/agg.out" 2> "$T/agg.err" &
  AGG=$!
  pids+=("$AGG")
  local ep="" i
  for ((i = 0; i < 100; i++)); do
    ep=$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$T/agg.out" 2>/dev/null | head -n1)
    [ -n "$ep" ] && break
    sleep 0.05
  done
  [ -n "$ep" ] || { echo "FAIL: the aggregator did not start"; cat "$T/agg.err"; fail=1; return 1; }
  local per=("$@")
  for ((r = 0; r < w; r++)); do
    local extra=${per[$r]:-}
    # shellcheck disable=SC2086
    "$APPS/gw-allreduce" --rank "$r" --workers "$w" --dim "$dim" --agg "$ep" \
      --local 127.0.0.1:0 --no-verify $wopt $extra > "$T/w.$r.out" 2> "$T/w.$r.err" &
    eval "W$r=\$!"
    pids+=("$!")
  done
}
# waitw R -> its exit status; TOOK: ms since T0
waitw() { local p; eval "p=\$W$1"; wait "$p"; local rc=$?; TOOK=$((($(now) - T0) / 1000000)); return $rc; }

# all_fail_naming LABEL ERE [MS]: workers 0-2 each fail within MS (5000) of T0 with
# an error matching ERE.
all_fail_naming() {
  local r rc
  for r in 0 1 2; do
    waitw $r; rc=$?
    if [ $rc -ne 0 ] && [ $TOOK -lt "${3:-5000}" ] && grep -qE "$2" "$T/w.$r.err"; then
      echo "ok: $1: rank $r failed ${TOOK} ms later: $(grep -oE "$2" "$T/w.$r.err" | head -n 1)"
    else
      echo "FAIL: $1: rank $r rc=$rc after ${TOOK} ms:"; tail -n 2 "$T/w.$r.err"; fail=1
    fi
  done
}

# A worker SIGKILLed mid-job. reliable W DIM VICTIM LABEL "job options":
# every survivor fails within the interval plus slack, with GW_EPEER
# naming the victim. tolerant W DIM VICTIM LABEL "job options": the
# survivors finish their 40 rounds, and the shard counts a worker gone.
survivors() { local r; for ((r = 0; r < $1; r++)); do [ "$r" -ne "$2" ] && echo $r; done; }
reliable() {
  local w=$1 dim=$2 v=$3 label=$4 jopt=$5 r rc
  start "$w" "$dim" "$jopt" "$jopt --rounds 1000" || return
  sleep 1.5; eval "kill -KILL \$W$v"; T0=$(now)
  for r in $(survivors "$w" "$v"); do
    waitw "$r"; rc=$?
    if [ $rc -ne 0 ] && [ $TOOK -lt 3000 ] &&
       grep -q "worker $v is dead: silent for .* ms.*GW_EPEER" "$T/w.$r.err"; then
      echo "ok: $label, reliable: rank $r failed ${TOOK} ms after rank $v's death: $(grep -o "worker $v is dead.*" "$T/w.$r.err")"
    else
      echo "FAIL: $label, reliable: rank $r rc=$rc after ${TOOK} ms:"; tail -n 2 "$T/w.$r.err"; fail=1
    fi
  done
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
}
tolerant() {
  local w=$1 dim=$2 v=$3 label=$4 jopt="$5 --mode loss-tolerant --deadline-us 5000" r rc n gone
  start "$w" "$dim" "$jopt" "$jopt --rounds 40 --lag-ms 50" || return
  sleep 1.5; eval "kill -KILL \$W$v"; T0=$(now)
  for r in $(survivors "$w" "$v"); do
    waitw "$r"; rc=$?
    n=$(grep -c "round" "$T/w.$r.out")
    if [ $rc -eq 0 ] && [ "$n" -eq 40 ]; then
      echo "ok: $label, loss-tolerant: rank $r finished its 40 rounds (${TOOK} ms after the death)"
    else
      echo "FAIL: $label, loss-tolerant: rank $r rc=$rc, $n of 40 rounds"; tail -n 2 "$T/w.$r.err"; fail=1
    fi
  done
  kill -INT "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
  # Every survivor that ends its job leaves (counted gone too): the
  # victim is counted only if gone reaches all W.
  gone=$(sed -n 's/.*"gone":\([0-9]*\).*/\1/p' "$T/agg.out" | tail -n1)
  if [ "${gone:-0}" -ge "$w" ]; then
    echo "ok: $label, loss-tolerant: the shard counted $gone of $w workers gone, the victim among them"
  else
    echo "FAIL: $label, loss-tolerant: the shard counted ${gone:-0} of $w workers gone (the $((w - 1)) survivors leave; the victim was not counted)"
    cat "$T/agg.out"; fail=1
  fi
}

# 1, 2. the dense allreduce and Sketched-SGD's two rounds, both ways.
reliable 4 400000 2 dense ""
tolerant 4 400000 2 dense ""
sk="--up countsketch --up-params rows=5,cols=2000 --topk 600"
reliable 3 100000 1 Sketched-SGD "$sk"
tolerant 3 100000 1 Sketched-SGD "$sk"

# 3. loss-tolerant: the killed worker restarted with its rank rejoins
# (gw-allreduce --rejoin: gw_comm_join) at the job's round and finishes.
# The deadline is 3 s: no round of the others may take that long, as it
# would if the shard held the chunks of the round the worker rejoined in
# waiting for a contribution it will never send. Plain, and with a layout
# and the shard's momentum (its state per chunk goes on across the
# eviction and the rejoin).
rejoin() {  # label "job options"
  local label=$1 tol="--mode loss-tolerant --deadline-us 3000000 $2" rc at n ok back first slowest r
  start 3 200000 "$tol" "$tol --rounds 80 --lag-ms 40 --json" || return
  sleep 1.5; eval "kill -KILL \$W1"; sleep 0.3
  # shellcheck disable=SC2086
  "$APPS/gw-allreduce" --rank 1 --workers 3 --dim 200000 $tol --agg "$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$T/agg.out" | head -n1)" \
    --local 127.0.0.1:0 --no-verify --rounds 10 --lag-ms 40 --rejoin 5000 --json \
    > "$T/w.1b.out" 2> "$T/w.1b.err"
  rc=$?
  at=$(sed -n 's/.*rejoins the job at round \([0-9]*\).*/\1/p' "$T/w.1b.err")
  n=$(grep -c '"round"' "$T/w.1b.out")
  ok=1
  for r in 0 2; do waitw $r || ok=0; done
  kill -INT "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
  back=$(sed -n 's/.*"back":\([0-9]*\).*/\1/p' "$T/agg.out" | tail -n1)
  first=$(sed -n 's/.*"job_round":\([0-9]*\).*/\1/p' "$T/w.1b.out" | head -n1)
  slowest=$(cat "$T/w.0.out" "$T/w.2.out" | sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' | sort -g | tail -n 1)
  if [ $rc -eq 0 ] && [ "$n" -eq 10 ] && [ "${at:-0}" -gt 0 ] && [ "$first" = "$at" ] &&
     [ $ok = 1 ] && [ "${back:-0}" -ge 1 ] && awk -v s="${slowest:-9}" 'BEGIN { exit !(s < 3) }'; then
    echo "ok: loss-tolerant$label: a restarted rank 1 rejoined at round $at and ran its 10 rounds; the others' slowest round took $slowest s"
  else
    echo "FAIL: rejoin$label: rc=$rc rounds=$n at=${at:-none} first=${first:-none} others=$ok back=${back:-0} slowest round ${slowest:-none} s (deadline 3 s)"
    tail -n 3 "$T/w.1b.err" "$T/w.0.err" "$T/w.2.err"; fail=1
  fi
}
rejoin "" ""
rejoin ", a layout, momentum at the shard" \
  "--up 3lc --down raw --layout 7,100000,33,99960 --min-elems 64 --down-momentum 0.9"

# 4. the aggregator killed: every worker names shard 0.
if start 3 400000 "" "--rounds 1000"; then
  sleep 1.5; kill -KILL "$AGG"; T0=$(now)
  all_fail_naming "shard killed" "shard 0 \([^)]*\) is dead: silent for [0-9]+ ms" 3000
fi

# 4b. loss-tolerant, S = 2, shard 1 killed: the job stops too, every
# worker naming shard 1 (docs/collective.md, "A dead shard": moving its
# chunks to shard 0 could sum a gradient twice).
rm -f "$T"/*.out "$T"/*.err
eps=""
for s in 0 1; do
  "$APPS/gw-aggregator" --shard $s --shards 2 --workers 3 --dim 400000 --local 127.0.0.1:0 \
    --json --idle-exit-ms 20000 --mode loss-tolerant > "$T/agg$s.out" 2> "$T/agg$s.err" &
  eval "A$s=\$!"; pids+=("$!")
  for ((i = 0; i < 100; i++)); do
    ep=$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$T/agg$s.out" 2>/dev/null | head -n1)
    [ -n "$ep" ] && break
    sleep 0.05
  done
  eps+=${eps:+,}$ep
done
for r in 0 1 2; do
  "$APPS/gw-allreduce" --rank $r --workers 3 --shards 2 --dim 400000 --agg "$eps" \
    --local 127.0.0.1:0 --no-verify --mode loss-tolerant --deadline-us 5000 --rounds 1000 \
    > "$T/w.$r.out" 2> "$T/w.$r.err" &
  eval "W$r=\$!"; pids+=("$!")
done
sleep 1.5; kill -KILL "$A1"; T0=$(now)
all_fail_naming "loss-tolerant, shard 1 of 2 killed" \
  "shard 1 \([^)]*\) is dead: silent for [0-9]+ ms \(suspected after [0-9]+ ms, [0-9]+ probes unanswered\); a loss-tolerant job stops too" 3000
kill "$A0" 2>/dev/null; wait "$A0" 2>/dev/null

# 4c. the aggregator SIGKILLed and started again at once at its address:
# the new process answers for shard 0 without the job's state; every
# worker finds the other incarnation and fails naming the restart.
if start 3 400000 "" "--rounds 1000"; then
  ep=$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$T/agg.out" | head -n1)
  sleep 1.5; kill -KILL "$AGG"; wait "$AGG" 2>/dev/null; T0=$(now)
  "$APPS/gw-aggregator" --shard 0 --workers 3 --dim 400000 --local "$ep" --json \
    --idle-exit-ms 20000 > "$T/agg2.out" 2> "$T/agg2.err" &
  AGG=$!; pids+=("$AGG")
  # (A restart slower than the liveness interval is only a dead shard.)
  named="shard 0 \([^)]*\) was restarted: a new process without the job's state"
  grep -q '"endpoint"' "$T/agg2.out" 2>/dev/null || named="$named|shard 0 \([^)]*\) is dead: silent"
  all_fail_naming "shard restarted at its address" "$named"
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
fi

# 5. a worker 2.5 s between calls is alive (its heartbeats come from a
# thread), reliable mode, liveness 1 s.
if start 3 100000 "" "--rounds 3" "" "--lag-ms 2500" ""; then
  ok=1
  for r in 0 1 2; do waitw $r || ok=0; done
  [ $ok = 1 ] && echo "ok: a worker 2.5 s between calls stayed alive; the job finished" ||
    { echo "FAIL: a slow worker was taken for dead"; tail -n 2 "$T"/w.*.err; fail=1; }
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
fi

# 6. a worker that leaves cleanly after 2 rounds (the others run 100).
if start 3 100000 "" "--rounds 100 --lag-ms 20" "" "--rounds 2" ""; then
  waitw 1; T0=$(now)
  for r in 0 2; do
    waitw $r; rc=$?
    if [ $rc -ne 0 ] && [ $TOOK -lt 5000 ] && grep -q "worker 1 left the job" "$T/w.$r.err"; then
      echo "ok: reliable: rank $r named the worker that left, ${TOOK} ms later"
    else
      echo "FAIL: reliable: rank $r after a worker left: rc=$rc ${TOOK} ms"; tail -n 2 "$T/w.$r.err"; fail=1
    fi
  done
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
fi
# Loss-tolerant, with every rank's received sums and error buffer dumped:
# rank 1 leaves after 3 rounds, the others run 30 without it, and
#   received + every residual = every gradient (rank 1's of 3 rounds)
# holds: nothing summed twice, nothing lost.
rm -rf "$T/dump"; mkdir -p "$T/dump"
if start 3 60000 "--mode loss-tolerant --deadline-us 20000" \
         "--mode loss-tolerant --deadline-us 20000 --rounds 30 --lag-ms 20 --dump $T/dump" \
         "" "--rounds 3" ""; then
  ok=1
  for r in 0 1 2; do waitw $r || ok=0; done
  n=$(grep -c round "$T/w.0.out")
  [ $ok = 1 ] && [ "$n" -eq 30 ] && echo "ok: loss-tolerant: the others went on after a worker left" ||
    { echo "FAIL: loss-tolerant: after a worker left: rank 0 has $n rounds"; tail -n 2 "$T"/w.*.err; fail=1; }
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
  if "$APPS/gw-allreduce" --check "$T/dump" --workers 3 --dim 60000 --rounds 30 --left 1:3; then
    echo "ok: loss-tolerant: no mass lost or summed twice across the eviction"
  else
    echo "FAIL: loss-tolerant: mass lost across the eviction"; fail=1
  fi
  # The check has teeth: rank 1's rounds told wrong, mass is missing.
  if "$APPS/gw-allreduce" --check "$T/dump" --workers 3 --dim 60000 --rounds 30 --left 1:2 \
       >/dev/null 2>&1; then
    echo "FAIL: --check took rank 1's 3 rounds as 2"; fail=1
  fi
fi

# 7. Loss-tolerant, a worker stopped (SIGSTOP) for 2.5 s: evicted after
# 1 s, the others go on; heard again far behind (its round's results are
# gone), it is not waited for (waiting for its acks stalled every worker
# for the call timeout) and is told: its call fails within seconds,
# naming the eviction and gw_comm_join. The others finish every round
# and receive the same sums. With a layout and the shard's momentum.
rm -rf "$T/dump"; mkdir -p "$T/dump"
mom="--mode loss-tolerant --deadline-us 20000 --up 3lc --down raw --layout 7,30000,33,29960"
mom="$mom --min-elems 64 --down-momentum 0.9"
if start 3 60000 "$mom" "$mom --rounds 40 --lag-ms 60 --dump $T/dump"; then
  sleep 1; kill -STOP "$W1"; sleep 2.5; kill -CONT "$W1"; T0=$(now)
  waitw 1; rc1=$?; took1=$TOOK
  ok=1
  for r in 0 2; do waitw $r || ok=0; done
  kill -INT "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
  n0=$(grep -c ' round [0-9]*:' "$T/w.0.out") n2=$(grep -c ' round [0-9]*:' "$T/w.2.out")
  named="rank 1 was evicted by shard 0 \([^)]*\) after [0-9]+ ms of silence and the job went on without it.*gw_comm_join rejoins"
  if [ $ok = 1 ] && [ "$n0" -eq 40 ] && [ "$n2" -eq 40 ] && [ $rc1 -ne 0 ] && [ "$took1" -lt 5000 ] &&
     grep -qE "$named" "$T/w.1.err" && cmp -s "$T/dump/recv.0.f32" "$T/dump/recv.2.f32"; then
    echo "ok: loss-tolerant: a worker stopped 2.5 s was told in ${took1} ms: $(grep -oE 'rank 1 was evicted.*' "$T/w.1.err" | head -c 200)"
    echo "ok: loss-tolerant: the others finished their 40 rounds with the same sums"
  else
    echo "FAIL: a stopped worker left behind: others ok=$ok ($n0, $n2 rounds), rank 1 rc=$rc1 after ${took1} ms"
    tail -n 2 "$T"/w.*.err; fail=1
  fi
fi

# 8. A live peer starved on purpose is not taken for dead (reliable, the
# default liveness): SIGSTOP for 1.5 s, then SIGCONT, of the shard, then
# of a worker; and a straggler 300 ms late into every call besides.
stopped() {  # label "victim pid expression"
  local r rc ok=1 v
  if start 3 200000 "" "--rounds 40 --lag-ms 40" "" "" "--lag-ms 300"; then
    sleep 1
    eval "v=$2"
    kill -STOP "$v"; sleep 1.5; kill -CONT "$v"
    for r in 0 1 2; do waitw $r || { ok=0; rc=$?; }; done
    if [ $ok = 1 ]; then
      echo "ok: $1 stopped for 1.5 s: every worker finished its 40 rounds"
    else
      echo "FAIL: $1 stopped for 1.5 s was taken for dead:"; tail -n 2 "$T"/w.*.err; fail=1
    fi
    kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
  fi
}
stopped "the shard" '$AGG'
stopped "worker 1" '$W1'

# 9. A peer that never comes up is named when the start-up time runs
# out, not taken for silent: a worker whose shard is not there, and the
# workers of a shard whose third worker never starts.
nobody=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
T0=$(now)
"$APPS/gw-allreduce" --rank 0 --workers 1 --dim 1000 --agg "127.0.0.1:$nobody" --local 127.0.0.1:0 \
  --no-verify --rounds 1 --startup-ms 2000 > "$T/n.out" 2> "$T/n.err"
rc=$?; TOOK=$((($(now) - T0) / 1000000))
if [ $rc -ne 0 ] && [ $TOOK -lt 5000 ] && grep -q "shard 0 (127.0.0.1:$nobody) never came up in 2 s" "$T/n.err"; then
  echo "ok: a shard that never came up, named after ${TOOK} ms: $(grep -o 'shard 0.*never came up in 2 s' "$T/n.err")"
else
  echo "FAIL: a shard that never came up: rc=$rc after ${TOOK} ms:"; cat "$T/n.err"; fail=1
fi
# (Rank 2 refuses its --rounds 0 before it says anything.)
if start 3 100000 "--startup-ms 2000" "--rounds 5" "" "" "--rounds 0"; then
  T0=$(now)
  for r in 0 1; do
    waitw $r; rc=$?
    if [ $rc -ne 0 ] && [ $TOOK -lt 5000 ] && grep -q "worker 2 never came up in 2 s" "$T/w.$r.err"; then
      echo "ok: rank $r named the worker that never came up: $(grep -o 'worker 2 never came up.*)' "$T/w.$r.err")"
    else
      echo "FAIL: a worker that never came up: rank $r rc=$rc after ${TOOK} ms:"; tail -n 2 "$T/w.$r.err"; fail=1
    fi
  done
  kill "$AGG" 2>/dev/null; wait "$AGG" 2>/dev/null
fi

# 7. settings that differ, named at the first packet.
mismatch() {  # label pattern "agg options" "worker options"
  if start 2 100000 "$3" "--rounds 3 $4"; then
    T0=$(now)
    local ok=1
    for r in 0 1; do
      waitw $r; rc=$?
      grep -q -- "$2.*GW_ECONFIG" "$T/w.$r.err" && [ $rc -ne 0 ] && [ $TOOK -lt 5000 ] || ok=0
    done
    wait "$AGG"; arc=$?
    grep -q -- "GW_ECONFIG" "$T/agg.err" && [ $arc -ne 0 ] || ok=0
    if [ $ok = 1 ]; then
      echo "ok: $1: $(grep -o 'was told otherwise.*' "$T/w.0.err" | head -n1)"
    else
      echo "FAIL: $1 (agg rc=$arc):"; tail -n 1 "$T"/w.*.err "$T/agg.err"; fail=1
    fi
  fi
}
mismatch "payload given to the workers only" "payload: 1472 there, 8000 here" "" "--opts payload=8000"
mismatch "window" "window: 64 there, 16 here" "" "--window 16"
mismatch "dim" "dim: 100000 there, 100001 here" "" "--dim 100001"
exit $fail
