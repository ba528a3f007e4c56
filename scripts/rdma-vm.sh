#!/usr/bin/env bash
# Runs a command in a QEMU guest with soft-RoCE (rxe0) up: real verbs on a
# host whose kernel has none (ENVIRONMENT.md, "RDMA").
#
# Usage: scripts/rdma-vm.sh [--timeout S] CMD [ARG...]
#   CMD runs as root in the guest, in this directory (the host's / is the
#   guest's, read-only under a tmpfs overlay: builds and results must be
#   written by the host, or under $GW_VM_OUT, which is this run's
#   read-write folder shared with the host and printed at the end). Its
#   output comes back on stdout/stderr, its exit status is the script's.
#   --timeout S   give up after S seconds of guest time (default 600): 124
#   The GW_*, GRADWIRE_* and sanitizer (ASAN_OPTIONS, ...) variables of
#   the caller's environment are set in the guest too.
#
# The guest: Debian's own kernel (linux-image-6.1.0-N-amd64-unsigned,
# fetched with apt-get download, never installed), a busybox initramfs
# with the modules for virtio, 9p, overlay, dummy and rdma_rxe, TCG (no
# KVM here), 2 CPUs, 2 GiB, and always -nic none: nothing leaves it. In
# it, dummy0 (10.0.0.1/24, MTU 4200 so rxe's active path MTU reaches 4096)
# carries rxe0. Every process of a test shares rxe0: two rxe devices on a
# veth pair cannot create address handles.
#
# Built once into $GW_VM_CACHE (default .cache/rdma-vm, ignored by git).
# Exit 77 when QEMU, busybox-static, kmod or the kernel package cannot be
# had, saying which (scripts/install-deps.sh installs the first three).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${GW_VM_CACHE:-$root/.cache/rdma-vm}
# Bumped whenever build_guest's output changes: a cache of another format
# is built again. 2: /tmp is the overlay's (the host's /tmp shows through,
# so a checkout under /tmp runs), not a tmpfs of its own.
guest_format=2
timeout_s=600
if [ "${1:-}" = --timeout ]; then
  [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "rdma-vm.sh: --timeout: '${2:-}' is not a positive whole number of seconds" >&2; exit 2; }
  timeout_s=$2
  shift 2
fi
[ $# -gt 0 ] || { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }

skip() { echo "rdma-vm.sh: skipped: $*" >&2; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing (apt package qemu-system-x86)"
# grep reads all of the list: with -q it would stop at the match and the
# list's SIGPIPE would fail the pipeline (pipefail) now and then.
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -x cpio >/dev/null \
  || skip "a static busybox with cpio is missing (apt package busybox-static)"
command -v depmod >/dev/null || [ -x /sbin/depmod ] || skip "depmod is missing (apt package kmod)"

# Modules in an order that loads (dependencies first: no modprobe here).
modules="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
failover net_failover virtio_net 9pnet 9pnet_virtio netfs fscache 9p overlay dummy
crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe configfs ib_cm
iw_cm rdma_cm rdma_ucm"

build_guest() {
  local tmp pkg kver k m f
  tmp=$(mktemp -d "${cache%/}.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' RETURN
  pkg=$(apt-cache pkgnames linux-image-6.1.0- 2>/dev/null \
        | grep -E '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | sort -V | tail -n 1) || true
  [ -n "$pkg" ] || skip "no linux-image-6.1.0-*-amd64-unsigned package is known to apt (apt-get update?)"
  echo "rdma-vm.sh: building the guest once from $pkg into $cache" >&2
  (cd "$tmp" && apt-get download "$pkg" >/dev/null 2>&1) || skip "apt-get download $pkg failed"
  dpkg -x "$tmp"/*.deb "$tmp/k"
  kver=${pkg#linux-image-}
  kver=${kver%-unsigned}
  k=$tmp/k/lib/modules/$kver
  [ -d "$k" ] && [ -f "$tmp/k/boot/vmlinuz-$kver" ] || skip "$pkg has no kernel $kver"
  PATH=$PATH:/sbin:/usr/sbin depmod -b "$tmp/k" "$kver"
  mkdir -p "$tmp/rd"/{bin,dev,proc,sys,mnt/host,mnt/rw,mnt/out,mnt/root,lib/modules}
  cp /bin/busybox "$tmp/rd/bin/busybox"
  for m in $modules; do
    f=$(awk -v m="$m" -F: '{ n = $1; sub(/.*\//, "", n); sub(/\.ko.*/, "", n);
          gsub(/-/, "_", n); if (n == m) { print $1; exit } }' "$k/modules.dep")
    [ -n "$f" ] || { echo "rdma-vm.sh: module $m is not in $pkg" >&2; exit 1; }
    case $f in
      *.ko) cp "$k/$f" "$tmp/rd/lib/modules/$m.ko" ;;
      *.ko.xz) xz -dc "$k/$f" >"$tmp/rd/lib/modules/$m.ko" ;;
      *.ko.zst) zstd -qdc "$k/$f" >"$tmp/rd/lib/modules/$m.ko" ;;
      *) echo "rdma-vm.sh: cannot unpack $f" >&2; exit 1 ;;
    esac
  done
  {
    echo '#!/bin/busybox sh'
    echo '/bin/busybox --install -s /bin'
    echo 'export PATH=/bin'
    echo 'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev'
    echo "for m in $(echo $modules); do insmod /lib/modules/\$m.ko || echo \"init: insmod \$m failed\"; done"
    cat <<'EOF'
mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /mnt/host
mount -t 9p -o trans=virtio,version=9p2000.L out /mnt/out
mount -t tmpfs tmpfs /mnt/rw
mkdir -p /mnt/rw/up /mnt/rw/work
mount -t overlay overlay -o lowerdir=/mnt/host,upperdir=/mnt/rw/up,workdir=/mnt/rw/work /mnt/root
mount -t proc proc /mnt/root/proc
mount -t sysfs sys /mnt/root/sys
mount -t devtmpfs dev /mnt/root/dev
mount -t tmpfs tmpfs /mnt/root/run
mkdir -p /mnt/root/dev/pts /mnt/root/dev/shm /mnt/root/gw-out
mount -t tmpfs tmpfs /mnt/root/dev/shm
mount -t configfs configfs /mnt/root/sys/kernel/config 2>/dev/null
mount --bind /mnt/out /mnt/root/gw-out
chroot /mnt/root /bin/sh /gw-out/guest.sh >/mnt/out/output 2>&1
echo $? >/mnt/out/rc
sync
poweroff -f
EOF
  } >"$tmp/rd/init"
  chmod +x "$tmp/rd/init"
  (cd "$tmp/rd" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$tmp/initrd.gz"
  mkdir -p "$cache.new"
  cp "$tmp/k/boot/vmlinuz-$kver" "$cache.new/vmlinuz"
  mv "$tmp/initrd.gz" "$cache.new/initrd.gz"
  echo "$pkg" >"$cache.new/package"
  echo "$guest_format" >"$cache.new/format"
  rm -rf "$cache"
  mv "$cache.new" "$cache"
}

[ -f "$cache/initrd.gz" ] && [ -f "$cache/vmlinuz" ] &&
  [ "$(cat "$cache/format" 2>/dev/null)" = "$guest_format" ] ||
  { mkdir -p "$(dirname "$cache")"; build_guest; }

out=$(mktemp -d /tmp/gw-vm.XXXXXX)
trap 'rm -rf "$out"' EXIT
args=$(printf '%q ' "$@")
cat >"$out/guest.sh" <<EOF
set -e
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root GW_VM_OUT=/gw-out/files
mkdir -p /gw-out/files
ip link set lo up
ip link set dummy0 mtu 4200
ip addr add 10.0.0.1/24 dev dummy0
ip link set dummy0 up
rdma link add rxe0 type rxe netdev dummy0
$(for v in $(compgen -e | grep -E '^(GW_|GRADWIRE_|ASAN_OPTIONS$|UBSAN_OPTIONS$|LSAN_OPTIONS$)' | grep -v '^GW_VM_'); do printf 'export %s=%q\n' "$v" "${!v}"; done)
cd $(printf '%q' "$PWD")
set +e
cut -d' ' -f1 /proc/uptime >/gw-out/booted
# Should the command hang, what every process was doing shortly before
# the host gives up: the host shows it (a hang is otherwise silent).
( sleep $((timeout_s > 60 ? timeout_s - 25 : timeout_s * 2 / 3))
  { echo "uptime \$(cut -d' ' -f1 /proc/uptime) s"
    ps -N --ppid 2 -p 2 -o pid,ppid,stat,wchan:24,etimes,args 2>&1 || ps 2>&1
    for s in /proc/[0-9]*/stack; do
      case \$(cat "\${s%stack}stat" 2>/dev/null | cut -d' ' -f3) in D)
        echo "\$s:"; cat "\$s" 2>/dev/null;; esac
    done; } >/gw-out/hang 2>&1 ) &
$args
EOF
# -nic none: the guest has no network device, so nothing reaches outside.
boot() {
  rm -f "$out/rc" "$out/booted" "$out/hang" "$out/output"
  timeout "$1" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 2G -smp 2 \
    -display none -nic none -no-reboot -serial "file:$out/console" \
    -kernel "$cache/vmlinuz" -initrd "$cache/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 rdinit=/init clocksource=tsc tsc=reliable" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap" \
    </dev/null >/dev/null 2>&1 &
  qpid=$!
}
# A guest boots in about 5 s; one that has not reached the command in 60 s
# (an emulator stalled at boot, seen once in CI on a loaded host) is
# stopped and booted once more, within the same time limit.
t0=$SECONDS
boot "$timeout_s"
retried=0
while kill -0 $qpid 2>/dev/null; do
  if [ $retried = 0 ] && [ ! -f "$out/booted" ] && [ $((SECONDS - t0)) -ge 60 ] &&
     [ $((timeout_s - (SECONDS - t0))) -gt 30 ]; then
    kill $qpid 2>/dev/null; wait $qpid 2>/dev/null || true
    echo "rdma-vm.sh: the guest did not boot in 60 s; its console's end, then a second boot:" >&2
    tail -n 10 "$out/console" >&2
    retried=1
    boot $((timeout_s - (SECONDS - t0)))
  fi
  sleep 1
done
wait $qpid && qrc=0 || qrc=$?
cat "$out/output" 2>/dev/null || true
if [ -d "$out/files" ] && [ -n "$(ls -A "$out/files" 2>/dev/null)" ]; then
  keep=${GW_VM_KEEP:-/tmp/gw-vm-out}
  rm -rf "$keep"
  cp -r "$out/files" "$keep"
  echo "rdma-vm.sh: the guest's \$GW_VM_OUT is in $keep" >&2
fi
if [ ! -f "$out/rc" ]; then
  [ $qrc = 124 ] && { echo "rdma-vm.sh: the guest ran past $timeout_s s" \
      "($( [ -f "$out/booted" ] && echo "booted in $(cat "$out/booted") s" || echo "never booted"));" \
      "its console's end, then its processes $((timeout_s > 60 ? 25 : timeout_s / 3)) s before:"
    tail -n 20 "$out/console"; cat "$out/hang" 2>/dev/null; } >&2 \
    || { echo "rdma-vm.sh: the guest stopped without a result (qemu exit $qrc); its console:" >&2
         tail -n 20 "$out/console" >&2; }
  exit "$([ $qrc = 124 ] && echo 124 || echo 1)"
fi
exit "$(cat "$out/rc")"
