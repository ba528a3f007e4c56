#!/usr/bin/env bash
# Every CLI over a table of bad command lines (docs/cli.md): the first
# line of stderr starts with the program's name ("gw-allreduce: ") and
# names the argument, and the exit code is the table's (2: a bad command
# line; 77: not built here). DPDK rows (EAL options, hugepages) skip,
# visibly, where this build has no DPDK backend; the others run anyway.
#   test_cli_bad_args.sh APPS_DIR
set -u
apps=${1:?usage: test_cli_bad_args.sh APPS_DIR}
fail=0 ran=0 skipped=0
J="--workers 2 --dim 64"
L="--local 127.0.0.1:0"
W="--rank 0 $J --agg 127.0.0.1:1 $L"

# APP|ARGS (split at blanks)|EXIT|NAMED (a fixed string of the first line)
rows=(
  "gw-aggregator|--nosuch|2|--nosuch"
  "gw-aggregator|--shard|2|--shard"
  "gw-aggregator|--json=1|2|--json"
  "gw-aggregator|-x|2|-x"
  "gw-aggregator|$J|2|--shard"
  "gw-aggregator|--shard 0 $J|2|--local"
  "gw-aggregator|--shard 0 $J $L --window 0|2|--window"
  "gw-aggregator|--shard 1 $J $L|2|--shard"
  "gw-aggregator|--backend nosuch|2|--backend"
  "gw-aggregator|-l 0 --no-huge -- --shard 0 $J $L|2|-l"
  "gw-allreduce|--nosuch|2|--nosuch"
  "gw-allreduce|--rounds|2|--rounds"
  "gw-allreduce|--rank 0 $J --agg 127.0.0.1:1|2|--local"
  "gw-allreduce|$W --up nosuch|2|--up"
  "gw-allreduce|$W --rounds 0|2|--rounds"
  "gw-allreduce|--no-huge -- $W|2|--no-huge"
  "gw-flood|--nosuch|2|--nosuch"
  "gw-flood|$J|2|--agg"
  "gw-flood|--seconds 0|2|--seconds"
  "gw-bench||2|MODE"
  "gw-bench|nosuch|2|nosuch"
  "gw-bench|codec --nosuch|2|--nosuch"
  "gw-bench|codec --codec|2|--codec"
  "gw-bench|codec --codec nosuch|2|--codec"
  "gw-bench|raw --backend nosuch|2|--backend"
  "gw-bench|shard --workers 0|2|--workers"
  "gw-bench|stream --nosuch|2|--nosuch"
  "gw-bench|stream -l 0 -- --backend udp --role tx $L --peer 127.0.0.1:1|2|-l"
  "gw-dataprep/gw-dataprep||2|subcommand"
  "gw-dataprep/gw-dataprep|nosuch|2|nosuch"
  "gw-dataprep/gw-dataprep|spam --nosuch|2|--nosuch"
  "gw-dataprep/gw-dataprep|spam --bits x|2|--bits"
  "gw-train/gw-train|--nosuch|2|--nosuch"
  "gw-train/gw-train|--epochs|2|--epochs"
  "gw-train/gw-train|-l 0 -- --epochs 1|2|-l"
  "gw-launch|--nosuch|2|--nosuch"
  "gw-launch|--workers 0 -- gw-allreduce|2|--workers"
  "gw-launch|--link nosuch --workers 1 -- gw-allreduce|2|--link"
  "gw-launch|--workers 1|2|--"
)

# check NAME EXIT NAMED OUT RC: the first line and the exit code.
check() {
  local name=$1 want=$2 named=$3 out=$4 rc=$5 prog first
  prog=${name%% *}
  prog=${prog##*/}
  first=$(head -n1 "$out")
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $name: exit $rc, not $want; stderr:"; sed 's/^/  /' "$out"; fail=1
  elif [ "${first#"$prog: "}" = "$first" ]; then
    echo "FAIL: $name: the first line does not start with '$prog: ': $first"; fail=1
  elif [ "${first#*"$named"}" = "$first" ]; then
    echo "FAIL: $name: the first line does not name '$named': $first"; fail=1
  else
    echo "ok: $name (exit $rc): $first"
  fi
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for row in "${rows[@]}"; do
  IFS='|' read -r app args want named <<<"$row"
  if [ ! -x "$apps/$app" ]; then
    echo "skip: $app $args: $apps/$app not built"; skipped=$((skipped + 1)); continue
  fi
  read -r -a argv <<<"$args"
  timeout 20 "$apps/$app" "${argv[@]}" >/dev/null 2>"$out" </dev/null
  check "$app $args" "$want" "$named" "$out" $?
  ran=$((ran + 1))
done

# gw-launch quotes the first error of a process that refused its command
# line, once, and exits 2 as it did.
if [ -x "$apps/gw-launch" ] && [ -x "$apps/gw-allreduce" ]; then
  timeout 60 "$apps/gw-launch" --workers 1 --dim 64 --up nosuch -- "$apps/gw-allreduce" \
    --rounds 1 >/dev/null 2>"$out" </dev/null
  check "gw-launch --up nosuch" 2 "shard 0" "$out" $?
  n=$(grep -c "unknown codec 'nosuch'" "$out")
  [ "$n" = 1 ] || { echo "FAIL: gw-launch --up nosuch: the error shown $n times"; fail=1; }
  timeout 60 "$apps/gw-launch" --quiet --workers 1 --dim 64 -- "$apps/gw-allreduce" \
    --rounds 1 --nosuch >/dev/null 2>"$out" </dev/null
  check "gw-launch -- gw-allreduce --nosuch" 2 "worker 0" "$out" $?
  grep -q "gw-launch:   gw-allreduce: unknown option '--nosuch'" "$out" ||
    { echo "FAIL: gw-launch: the worker's error is not quoted:"; cat "$out"; fail=1; }
  ran=$((ran + 2))
fi

# DPDK: a bad EAL option is named without DPDK's 100 lines of usage; no
# hugepages get a hint of --no-huge; an unbuilt backend exits 77.
agg=$apps/gw-aggregator
probe=$(timeout 10 "$agg" --backend dpdk 2>&1 </dev/null)
if printf '%s' "$probe" | grep -q "not a backend built here"; then
  timeout 20 "$agg" --backend dpdk --shard 0 $J $L >/dev/null 2>"$out" </dev/null
  check "gw-aggregator --backend dpdk (not built)" 77 "--backend" "$out" $?
  timeout 20 "$apps/gw-bench" raw --backend dpdk >/dev/null 2>"$out" </dev/null
  check "gw-bench raw --backend dpdk (not built)" 77 "--backend" "$out" $?
  ran=$((ran + 2))
  echo "skip: DPDK rows (EAL options, hugepages): this build has no DPDK backend"
  skipped=$((skipped + 2))
else
  eal=(-l 0 --no-pci --no-shconf "--file-prefix=gwcli$$")
  timeout 20 "$agg" "${eal[@]}" --no-huge --nosuch -- --backend dpdk --shard 0 $J $L \
    >"$out.o" 2>"$out" </dev/null
  rc=$?
  # EAL's own start-up lines may come first: the program's come after.
  if [ "$rc" != 1 ] || grep -q "Usage:" "$out" "$out.o" ||
     ! grep -q "^gw-aggregator: .*--nosuch" "$out" ||
     ! tail -n1 "$out" | grep -q "^gw-aggregator: .*EAL option"; then
    echo "FAIL: a bad EAL option (exit $rc):"; cat "$out" "$out.o"; fail=1
  else
    echo "ok: a bad EAL option (exit $rc): $(grep -m1 -- --nosuch "$out"), no usage"
  fi
  rm -f "$out.o"
  ran=$((ran + 1))
  if grep -q '^HugePages_Total: *0$' /proc/meminfo; then
    timeout 20 "$agg" "${eal[@]}" -- --backend dpdk --shard 0 $J $L >/dev/null 2>"$out" </dev/null
    rc=$?
    if [ "$rc" != 1 ] || ! tail -n1 "$out" | grep -q "^gw-aggregator: .*--no-huge"; then
      echo "FAIL: no hugepages (exit $rc), no hint of --no-huge:"; cat "$out"; fail=1
    else
      echo "ok: no hugepages (exit $rc): $(tail -n1 "$out")"
    fi
    ran=$((ran + 1))
  else
    echo "skip: no-hugepages row: this machine has hugepages reserved"
    skipped=$((skipped + 1))
  fi
fi
echo "$ran checked, $skipped skipped"
exit $fail
