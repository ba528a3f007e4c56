#!/usr/bin/env bash
# The dataplane in one run: gw-bench raw (the ceiling: fixed-size packets,
# no protocol) and gw-bench stream (reliable codec frames) on the DPDK
# backend over net_memif and over AF_XDP on a veth pair between two
# namespaces, and gw-bench stream (and raw) on the kernel UDP backend over
# loopback — each at the small end and at the full MTU. The stream runs
# twice: "stream" encodes each frame into its packet as it goes (the codec
# is part of the cost), "stream_preencoded" copies frames encoded before
# the timed part (the transport's own cost); both decode-accumulate at the
# receiver and are checked bit-exact. Prints one JSON object: Mpps and
# Gbit/s (UDP payload, receiver side) of every run, and the ratios
# stream/raw and dpdk/udp, against the targets stream >= 0.8x raw over
# memif and DPDK stream >= 5x UDP stream (reported, not asserted).
#
# The ceiling, in the same run: DPDK's own dpdk-testpmd (Debian's
# dpdk-dev) over the same memif, --forward-mode=txonly (memif server,
# forwarding on lcore 1, as gw-bench's sender) into rxonly (client, on
# lcore 0, as gw-bench's receiver), 106- and 1514-byte frames (64 and 1472
# bytes of UDP payload, gw-bench raw's sizes). Its Rx-pps is sampled every
# second; the first and last samples (ramp, partial) are dropped and the
# median taken. Targets: gw-bench raw >= 0.9x testpmd at both sizes, the
# stream (1514 B) >= 0.5x testpmd. The client (rxonly) is stopped first:
# testpmd's memif server may crash when a client leaves after traffic.
# The stream decode-accumulates every payload into its tensor, so its
# memory-side limit is reported too: gw-bench codec's raw decode and
# memcpy GB/s in the same run, against the stream's payload GB/s.
#
# Usage: bench/dataplane.sh [BUILD_DIR] [--duration SEC] [--no-veth]
#
# Sizes: raw sends 64-byte payloads and payload_max (the port's MTU - 28);
# the stream's smallest packet is its header plus the 64-byte minimum frame
# budget (--mtu 140), its largest fills --mtu 1500. Each JSON row says the
# mean payload it really moved. Needs root for the namespaces; without them
# the veth rows say why they are missing.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
duration=3
no_veth=0   # flags bench_args sets (shellcheck cannot see printf -v)
bench_args "duration= no-veth" "$@"
veth=$((1 - no_veth))
bench=$build/apps/gw-bench
bench_need "$bench"
"$bench" raw --help | grep -q "built here:.*dpdk" ||
  bench_die "$bench has no DPDK backend (libdpdk not found at configure time)"
has_stream=0
"$bench" --help | grep -q '^  stream ' && has_stream=1
netns=tests/net/netns.sh

bench_tmp
out=$tmp
prefix=gwbd$$
cleanup() {
  for j in $(jobs -pr); do kill "$j" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ $veth = 0 ] || "$netns" down "$prefix" >/dev/null 2>&1
}
bench_at_exit cleanup

lc2=0; [ "$(nproc)" -ge 2 ] && lc2=1
eal() {  # LCORE FILE-PREFIX VDEV
  printf '%s\n' -l "$1" --no-huge --no-pci -m 512 --no-shconf "--file-prefix=$2" \
    --log-level=lib.eal:error "--vdev=$3"
}
# eal_pair TAG RX-VDEV TX-VDEV: $s and $c, the EAL arguments of the rx
# side (lcore 0) and the tx side of run TAG (the caller declares them local).
eal_pair() {
  mapfile -t s < <(eal 0 "${prefix}s$1" "$2")
  mapfile -t c < <(eal "$lc2" "${prefix}c$1" "$3")
}
# Stream workloads: rounds of one tensor for --duration seconds (the
# receiver stops at the sender's end-of-run marker).
stream_small=(--mtu 140 --synthetic 262144 --duration "$duration")
stream_mtu=(--mtu 1500 --synthetic 4194304 --duration "$duration")
# runs_after_small RUNNER...: a link's runs after raw at 64 B (each link
# starts with that one; veth picks its driver by it): RUNNER... MODE TAG
# APP-ARGS... for raw at the MTU and, when gw-bench has the stream mode,
# the stream encoding as it goes and pre-encoded, small and at the MTU.
runs_after_small() {
  "$@" raw raw_mtu --size max --duration "$duration"
  [ $has_stream = 1 ] || return 0
  "$@" stream stream_small "${stream_small[@]}"
  "$@" stream stream_mtu "${stream_mtu[@]}"
  "$@" stream stream_pre_small "${stream_small[@]}" --preencode
  "$@" stream stream_pre_mtu "${stream_mtu[@]}" --preencode
}

wait_ready() {  # FILE PID: the memif socket exists, or the rx has come up
  for _ in $(seq 100); do
    [ -e "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# pair NAME RXWRAP TXWRAP READY :: RX-ARGS... :: TX-ARGS...  (READY: a file
# to wait for, or "sleep")
# Runs rx in the background and tx in the foreground; keeps both JSON lines.
pair() {
  local name=$1 rxw=$2 txw=$3 ready=$4; shift 4
  local rx=() tx=()
  shift   # ::
  while [ "$1" != :: ]; do rx+=("$1"); shift; done
  shift
  tx=("$@")
  echo "bench/dataplane.sh: $name" >&2
  $rxw timeout 300 "$bench" "${rx[@]}" --json >"$out/$name.rx" 2>"$out/$name.rx.err" &
  local rpid=$!
  if [ "$ready" = sleep ]; then sleep 1.5; else wait_ready "$ready" "$rpid" || true; fi
  local trc=0 rrc=0
  $txw timeout 300 "$bench" "${tx[@]}" --json >"$out/$name.tx" 2>"$out/$name.tx.err" || trc=$?
  wait "$rpid" || rrc=$?
  if [ $trc -ne 0 ] || [ $rrc -ne 0 ]; then
    echo "bench/dataplane.sh: $name failed (tx $trc, rx $rrc):" >&2
    tail -n 5 "$out/$name.tx.err" "$out/$name.rx.err" >&2
    rm -f "$out/$name.rx" "$out/$name.tx"
  fi
}

# ---- memif -------------------------------------------------------------------
memif_runs() {  # MODE TAG APP-ARGS...
  local mode=$1 tag=$2; shift 2
  local sock=$out/memif-$tag.sock
  local s c
  eal_pair "$tag" "net_memif0,role=server,socket=$sock,socket-abstract=no" \
    "net_memif0,role=client,socket=$sock,socket-abstract=no"
  pair "memif_$tag" "" "" "$sock" \
    :: "$mode" "${s[@]}" -- --backend dpdk --role rx --local 10.88.0.2:9000 --peer 10.88.0.1:9001 "$@" \
    :: "$mode" "${c[@]}" -- --backend dpdk --role tx --local 10.88.0.1:9001 --peer 10.88.0.2:9000 "$@"
}
memif_runs raw raw_small --size 64 --duration "$duration"
runs_after_small memif_runs

# ---- testpmd over the same memif: the ceiling -----------------------------------
testpmd=$(command -v dpdk-testpmd || true)
testpmd_note=""
[ -n "$testpmd" ] || testpmd_note="dpdk-testpmd not found (Debian package dpdk-dev; scripts/install-deps.sh installs it)"
testpmd_run() {  # TAG FRAME-BYTES
  local tag=$1 len=$2 sock=$out/memif-tp-$1.sock
  local common=(--no-huge --no-pci -m 256 --no-shconf --log-level=lib.eal:error)
  local pmd=(--nb-cores=1 --auto-start --stats-period 1 --total-num-mbufs=16384)
  echo "bench/dataplane.sh: testpmd_$tag" >&2
  for _ in 1 2 3; do   # a client that starts too early is refused: try again
    rm -f "$sock"
    timeout $((duration + 40)) "$testpmd" -l 0,1 --main-lcore 0 "${common[@]}" \
      "--file-prefix=${prefix}tt$tag" "--vdev=net_memif0,role=server,socket=$sock,socket-abstract=no" \
      -- --forward-mode=txonly "--txpkts=$len" "${pmd[@]}" >"$out/tp_$tag.tx" 2>&1 </dev/null &
    local tpid=$!
    wait_ready "$sock" "$tpid" || true
    sleep 1
    timeout $((duration + 30)) "$testpmd" -l 0,1 --main-lcore 1 "${common[@]}" \
      "--file-prefix=${prefix}tr$tag" "--vdev=net_memif0,role=client,socket=$sock,socket-abstract=no" \
      -- --forward-mode=rxonly "${pmd[@]}" >"$out/tp_$tag.rx" 2>&1 </dev/null &
    local rpid=$!
    sleep $((duration + 8))   # its EAL start takes seconds; samples come every 1-2 s
    kill -INT "$rpid" 2>/dev/null || true; wait "$rpid" 2>/dev/null || true
    kill -INT "$tpid" 2>/dev/null || true; wait "$tpid" 2>/dev/null || true
    grep -Eq 'Rx-pps: +[1-9]' "$out/tp_$tag.rx" && return 0
  done
  echo "bench/dataplane.sh: testpmd_$tag moved nothing in 3 tries:" >&2
  tail -n 5 "$out/tp_$tag.rx" >&2
}
if [ -n "$testpmd" ]; then
  testpmd_run small 106
  testpmd_run mtu 1514
fi
# The receiver's memory-side work per payload byte, in the same run.
"$bench" codec --codec raw --synthetic 4194304 --min-time 0.5 --json >"$out/memory.json" 2>/dev/null || true

# ---- AF_XDP (or AF_PACKET) on a veth pair between two namespaces ------------
veth_driver=none; veth_note=""
if [ $veth = 1 ]; then
  if ! "$netns" check >/dev/null 2>&1; then
    veth_note="network namespaces cannot be made here"; veth=0
  elif ! "$netns" up "$prefix" 1500 >/dev/null; then
    veth_note="netns.sh up failed"; veth=0
  fi
fi
if [ $veth = 1 ]; then
  a_ip=$("$netns" addr "$prefix" a); b_ip=$("$netns" addr "$prefix" b)
  b_mac=$("$netns" mac "$prefix" b); a_mac=$("$netns" mac "$prefix" a)
  veth_runs() {  # DRIVER DRVARGS MODE TAG APP-ARGS...
    local drv=$1 dargs=$2 mode=$3 tag=$4; shift 4
    local s c
    eal_pair "$tag" "${drv}0,iface=${prefix}b0,$dargs" "${drv}0,iface=${prefix}a0,$dargs"
    pair "veth_$tag" "ip netns exec ${prefix}b" "ip netns exec ${prefix}a" sleep \
      :: "$mode" "${s[@]}" -- --backend dpdk --role rx --local "$b_ip:9000" \
         --peer "$a_ip:9001@$a_mac" "$@" \
      :: "$mode" "${c[@]}" -- --backend dpdk --role tx --local "$a_ip:9001" \
         --peer "$b_ip:9000@$b_mac" "$@"
  }
  veth_driver=net_af_xdp; dargs="start_queue=0,queue_count=1"
  veth_runs "$veth_driver" "$dargs" raw raw_small --size 64 --duration "$duration"
  if [ ! -s "$out/veth_raw_small.rx" ]; then
    veth_note="net_af_xdp failed here; net_af_packet used"
    veth_driver=net_af_packet; dargs="qpairs=1"
    veth_runs "$veth_driver" "$dargs" raw raw_small --size 64 --duration "$duration"
  fi
  runs_after_small veth_runs "$veth_driver" "$dargs"
fi

# ---- kernel UDP over loopback --------------------------------------------------
udp_runs() {  # MODE TAG APP-ARGS...
  local mode=$1 tag=$2; shift 2
  pair "udp_$tag" "" "" sleep \
    :: "$mode" --backend udp --role rx --local 127.0.0.1:9100 --peer 127.0.0.1:9101 "$@" \
    :: "$mode" --backend udp --role tx --local 127.0.0.1:9101 --peer 127.0.0.1:9100 "$@"
}
udp_runs raw raw_small --size 64 --duration "$duration"
runs_after_small udp_runs

python3 - "$out" "$veth_driver" "$veth_note" "$has_stream" "$duration" "$testpmd_note" <<'PY'
import json, os, platform, re, statistics, sys
out, veth_driver, veth_note, has_stream, duration, testpmd_note = sys.argv[1:7]

def testpmd(tag, frame):
    p = os.path.join(out, "tp_%s.rx" % tag)
    if not os.path.exists(p):
        return None
    pps = [int(m.group(1)) for m in re.finditer(r"Rx-pps: +(\d+)", open(p, errors="replace").read())]
    pps = [x for x in pps if x > 0][1:-1]
    if not pps:
        return None
    return {"mpps": round(statistics.median(pps) / 1e6, 4), "frame_bytes": frame,
            "payload_bytes": frame - 42, "samples": len(pps),
            "gbps": round(statistics.median(pps) * (frame - 42) * 8 / 1e9, 3)}

def load(name):
    p = os.path.join(out, name + ".rx")
    if not os.path.exists(p) or not os.path.getsize(p):
        return None
    r = json.loads(open(p).read().strip().splitlines()[-1])
    pk = r.get("packets", 0)
    row = {"mpps": r["mpps"], "gbps": r["gbps"], "packets": pk,
           "payload_bytes": round(r["bytes"] / pk, 1) if pk else 0,
           "seconds": r["seconds"]}
    for k in ("drops", "rx_bad", "duplicates", "verified"):
        if k in r:
            row[k] = r[k]
    tp = os.path.join(out, name + ".tx")
    if os.path.exists(tp) and os.path.getsize(tp):
        t = json.loads(open(tp).read().strip().splitlines()[-1])
        row["tx_mpps"] = t["mpps"]
        for k in ("retransmits", "tx_full"):
            if k in t:
                row["tx_" + k] = t[k]
    return row

def ratio(a, b, key):
    return round(a[key] / b[key], 3) if a and b and b[key] else None

res = {"machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                   "load_avg": [round(x, 2) for x in os.getloadavg()]},
       "duration_s": float(duration),
       "units": "receiver side; Gbit/s of UDP payload",
       "stream_mode": has_stream == "1"}
for link in ("memif", "veth", "udp"):
    sec = {}
    for size in ("small", "mtu"):
        raw = load("%s_raw_%s" % (link, size))
        sec[size] = {"raw": raw}
        for v, tag in (("stream", "stream"), ("stream_preencoded", "stream_pre")):
            st = load("%s_%s_%s" % (link, tag, size))
            sec[size][v] = st
            sec[size][v + "_over_raw_mpps"] = ratio(st, raw, "mpps")
            sec[size][v + "_over_raw_gbps"] = ratio(st, raw, "gbps")
    res[{"memif": "dpdk_memif", "veth": "dpdk_veth", "udp": "udp_loopback"}[link]] = sec
res["testpmd_memif"] = {"small": testpmd("small", 106), "mtu": testpmd("mtu", 1514)}
if testpmd_note:
    res["testpmd_memif"]["note"] = testpmd_note
mp = os.path.join(out, "memory.json")
if os.path.exists(mp) and os.path.getsize(mp):
    mj = json.load(open(mp))
    st = res["dpdk_memif"]["mtu"]["stream"]
    res["memory"] = {"memcpy_gbytes_s": mj["memcpy_gbps"], "raw_decode_gbytes_s": mj["decode_gbps"],
                     "stream_mtu_payload_gbytes_s": round(st["gbps"] / 8, 3) if st else None,
                     "stream_over_decode": round(st["gbps"] / 8 / mj["decode_gbps"], 3) if st else None,
                     "note": "the stream's receiver reads each payload and adds it into the "
                             "tensor (raw decode-accumulate): that rate bounds it"}
res["dpdk_veth"]["driver"] = veth_driver
if veth_note:
    res["dpdk_veth"]["note"] = veth_note

ratios = {}
for size in ("small", "mtu"):
    m, u = res["dpdk_memif"][size], res["udp_loopback"][size]
    for key in ("mpps", "gbps"):
        for v in ("stream", "stream_preencoded"):
            ratios["memif_%s_%s_over_raw_%s" % (size, v, key)] = m[v + "_over_raw_" + key]
            ratios["%s_dpdk_over_udp_%s_%s" % (size, v, key)] = ratio(m[v], u[v], key)
        ratios["%s_dpdk_over_udp_raw_%s" % (size, key)] = ratio(m["raw"], u["raw"], key)
res["ratios"] = ratios

# Small packets compare packet rates; at the MTU the stream's payload is
# the frame budget (1424 bytes) plus its header, a little under raw's 1472,
# so Gbit/s of payload compare like with like.
def target(v, bound):
    vals = {"small": ratios["memif_small_%s_over_raw_mpps" % v] if bound < 1 else
                     ratios["small_dpdk_over_udp_%s_mpps" % v],
            "mtu": ratios["memif_mtu_%s_over_raw_gbps" % v] if bound < 1 else
                   ratios["mtu_dpdk_over_udp_%s_gbps" % v]}
    got = [x for x in vals.values() if x is not None]
    return {"met": all(x >= bound for x in got) if got else None, "values": vals}
tp = res["testpmd_memif"]
for size in ("small", "mtu"):
    ratios["memif_%s_raw_over_testpmd_mpps" % size] = ratio(res["dpdk_memif"][size]["raw"], tp[size], "mpps")
ratios["memif_mtu_stream_over_testpmd_mpps"] = ratio(res["dpdk_memif"]["mtu"]["stream"], tp["mtu"], "mpps")
res["targets"] = {}
got = [ratios["memif_%s_raw_over_testpmd_mpps" % s] for s in ("small", "mtu")]
res["targets"]["raw_ge_0.9x_testpmd"] = {
    "met": all(x is not None and x >= 0.9 for x in got) if any(x is not None for x in got) else None,
    "values": {"small": got[0], "mtu": got[1]}}
x = ratios["memif_mtu_stream_over_testpmd_mpps"]
res["targets"]["stream_mtu_ge_0.5x_testpmd"] = {"met": None if x is None else x >= 0.5, "values": {"mtu": x}}
for v in ("stream", "stream_preencoded"):
    res["targets"]["%s_ge_0.8x_raw_over_memif" % v] = target(v, 0.8)
    res["targets"]["dpdk_%s_ge_5x_udp" % v] = target(v, 5.0)
print(json.dumps(res, indent=1))
PY
