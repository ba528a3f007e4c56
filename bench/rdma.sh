#!/usr/bin/env bash
# The RDMA backend against perftest, in one run on one RDMA device: at each
# message size, perftest's ib_send_bw over UD twice — posting one send per
# call (its default) and a list of 32 per call (-l 32: one doorbell per
# 32, as gradwire posts a burst; the device's ceiling for send/receive of
# that size, which the ratios are taken against) — gw-bench raw over the rdma backend (the
# dataplane alone: fixed-size packets, tx to rx), gw-bench stream over it
# (codec frames over the reliable stream, raw codec, --preencode: the
# protocol's cost without the codec's) and gw-bench raw over the kernel
# UDP backend on the same host, as message rates and their ratios to
# ib_send_bw's.
#
# On a host without RDMA it runs itself inside scripts/rdma-vm.sh's guest
# (soft-RoCE: rxe is slow, tens of MB/s, and TCG slower still; the ratios
# are what it measures, not the absolute rates). On a host with an RDMA
# device, give --dev, --ip (an address of that device) and --gid.
#
# Usage: bench/rdma.sh [BUILD_DIR] [--json] [--sizes "1024 4096"] [--seconds S]
#                      [--dev rxe0] [--ip 10.0.0.1] [--gid 1]
#   --json     one JSON object on stdout (else a table)
#   --sizes    message sizes in bytes, each at most the path MTU
#   --seconds  each measurement's duration (default 4)
#   --dev, --ip, --gid  the device, its IP, the RoCEv2 GID index of that IP
#              (ib_send_bw -x); defaults: the guest's rxe0, 10.0.0.1, 1
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
json=0 sizes="1024 4096" seconds=4 dev=rxe0 ip=10.0.0.1 gid=1
bench_args "json sizes= seconds= dev= ip= gid=" "$@"
bench_need "$build/apps/gw-bench"
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --seconds: '$seconds' is not a positive whole number" >&2; exit 2; }
for s in $sizes; do
  [[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 64 ] && [ "$s" -le 4096 ] \
    || { echo "$prog: --sizes: '$s' is not a size in 64..4096" >&2; exit 2; }
done

if ! ibv_devices 2>/dev/null | grep -w -- "$dev" >/dev/null; then
  [ -z "${GW_IN_RDMA_VM:-}" ] || bench_die "no RDMA device $dev even in the guest"
  echo "$prog: no RDMA device $dev here: running in scripts/rdma-vm.sh's guest" >&2
  args=("$build")
  [ $json = 0 ] || args+=(--json)
  exec env GW_IN_RDMA_VM=1 bash scripts/rdma-vm.sh --timeout 900 \
    bash bench/rdma.sh "${args[@]}" --sizes "$sizes" --seconds "$seconds" \
    --dev "$dev" --ip "$ip" --gid "$gid"
fi
command -v ib_send_bw >/dev/null || bench_die "ib_send_bw is missing (apt package perftest)"
bench_tmp
B=$build/apps/gw-bench

# ib_send_bw over UD: its report's last line holds
#   #bytes #iterations BW_peak BW_average MsgRate(Mpps)
perftest() {  # size post_list -> Mpps
  local s=$1 l=$2 port=$((18515 + RANDOM % 1000))
  ib_send_bw -d "$dev" -c UD -s "$s" -D "$seconds" -x "$gid" -p "$port" -F -l "$l" \
    >"$tmp/ps.$s" 2>&1 &
  local srv=$!
  sleep 1
  ib_send_bw -d "$dev" -c UD -s "$s" -D "$seconds" -x "$gid" -p "$port" -F -l "$l" "$ip" \
    >"$tmp/pc.$s" 2>&1 || true
  wait "$srv" || true
  awk -v s="$s" '$1 == s && NF >= 5 { r = $5 } END { if (r == "") exit 1; print r }' "$tmp/ps.$s" \
    || { cat "$tmp/ps.$s" "$tmp/pc.$s" >&2; bench_die "ib_send_bw at $s bytes (-l $l) gave no rate"; }
}

jget() {  # file key -> number
  sed -n "s/.*\"$2\": *\([0-9.eE+-]*\).*/\1/p" "$1" | head -n 1
}

# gw-bench raw, tx to rx on one backend; the receiver's rate.
raw() {  # backend size -> Mpps
  local be=$1 s=$2 rip=$ip opts=()
  # UDP over loopback: datagrams of the same size (its default payload is
  # what a 1500-byte MTU carries).
  [ "$be" = rdma ] || { rip=127.0.0.1; opts=(--opts "payload=$s"); }
  "$B" raw --backend "$be" --role rx --local "$rip:7301" --size "$s" "${opts[@]}" \
    --duration $((seconds + 5)) --idle 2 --json >"$tmp/rx.$be.$s" 2>"$tmp/rx.$be.$s.err" &
  local r=$!
  sleep 0.5
  "$B" raw --backend "$be" --role tx --local "$rip:7302" --peer "$rip:7301" --size "$s" "${opts[@]}" \
    --duration "$seconds" --json >"$tmp/tx.$be.$s" 2>"$tmp/tx.$be.$s.err" || true
  wait "$r" || { cat "$tmp/rx.$be.$s.err" >&2; bench_die "gw-bench raw rx ($be, $s B) failed"; }
  jget "$tmp/rx.$be.$s" mpps
}

# gw-bench stream over rdma, raw codec, frames sized to the message size.
stream() {  # size -> Mpps (the sender's packets: data, not acks)
  local s=$1 mtu=$(( $1 + 76 - 32 ))
  "$B" stream --backend rdma --role rx --local "$ip:7311" --peer "$ip:7312" --codec raw \
    --synthetic 1048576 --preencode --mtu "$mtu" --json >"$tmp/srx.$s" 2>"$tmp/srx.$s.err" &
  local r=$!
  sleep 0.5
  "$B" stream --backend rdma --role tx --local "$ip:7312" --peer "$ip:7311" --codec raw \
    --synthetic 1048576 --preencode --mtu "$mtu" --duration "$seconds" --json \
    >"$tmp/stx.$s" 2>"$tmp/stx.$s.err" || { cat "$tmp/stx.$s.err" >&2; bench_die "gw-bench stream tx ($s B) failed"; }
  wait "$r" || { cat "$tmp/srx.$s.err" >&2; bench_die "gw-bench stream rx ($s B) failed"; }
  jget "$tmp/stx.$s" mpps
}

rows=()
for s in $sizes; do
  p1=$(perftest "$s" 1)
  p=$(perftest "$s" 32)
  r=$(raw rdma "$s")
  st=$(stream "$s")
  u=$(raw udp "$s")
  rows+=("$s $p $r $st $u $p1")
  echo "$prog: $s B: ib_send_bw $p1 Mpps (-l 32: $p), raw $r, stream $st, udp $u" >&2
done

printf '%s\n' "${rows[@]}" | awk -v json=$json -v dev="$dev" -v secs="$seconds" '
function ratio(a, b) { return b > 0 ? a / b : 0 }
{ n++; s[n] = $1; p[n] = $2; r[n] = $3; st[n] = $4; u[n] = $5; p1[n] = $6 }
END {
  if (json) {
    printf "{\"tool\":\"bench/rdma.sh\",\"device\":\"%s\",\"seconds\":%d,\"sizes\":[", dev, secs
    for (i = 1; i <= n; i++)
      printf "%s{\"size\":%d,\"ib_send_bw_ud_mpps\":%s,\"ib_send_bw_ud_post1_mpps\":%s," \
             "\"raw_mpps\":%s,\"stream_mpps\":%s," \
             "\"udp_raw_mpps\":%s,\"raw_over_perftest\":%.3f,\"stream_over_perftest\":%.3f," \
             "\"udp_over_perftest\":%.3f}", (i > 1 ? "," : ""), s[i], p[i], p1[i], r[i], st[i], u[i],
             ratio(r[i], p[i]), ratio(st[i], p[i]), ratio(u[i], p[i])
    printf "]}\n"
  } else {
    printf "%-6s %10s %12s %10s %10s %10s %9s %9s\n", "size", "ib_send_bw", "ib_s_bw -l32", "raw", "stream", "udp", "raw/pt", "strm/pt"
    for (i = 1; i <= n; i++)
      printf "%-6d %10s %12s %10s %10s %10s %9.2f %9.2f\n", s[i], p1[i], p[i], r[i], st[i], u[i],
             ratio(r[i], p[i]), ratio(st[i], p[i])
    printf "(Mpps: messages per second, the receiver'"'"'s for raw; ratios to ib_send_bw -l 32; %s, %d s each)\n", dev, secs
  }
}'
