#!/usr/bin/env bash
# The GPU checks, for the machine that has the GPU (no internet there):
#
#   scripts/gpu-check.sh pack [BUILD_DIR] [OUT]   here, after a build with
#       nvcc: copies what the GPU machine needs into OUT (default gpu-pack/,
#       git-ignored): test_gpu_device, gpu_bench, gw-bench, and for the
#       end-to-end bench gw-allreduce, gw-aggregator and gw-launch, every
#       shared library they link but glibc's and the C++ runtime's (the GPU
#       machine has another distribution), the cnn traces, bench/gpu.sh.
#   scripts/gpu-check.sh run [OUT]                there: the device test (the
#       device's frames byte for byte the host emulation's, hence codec/'s),
#       then bench/gpu.sh (one JSON object). Exit 1 if the test fails, 77 if
#       no GPU answers.
#
# With the device tool: scripts/gpu-check.sh pack, then
#   run(command="bash scripts/gpu-check.sh run gpu-pack", carry=["gpu-pack"]).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
case $mode in
  pack)
    build=${2:-build} out=${3:-gpu-pack}
    bins=(tests/gpu/test_gpu_device bench/gpu_bench apps/gw-bench apps/gw-allreduce
          apps/gw-aggregator)
    for f in "${bins[@]}" apps/gw-launch; do
      [ -x "$build/$f" ] || { echo "gpu-check: $build/$f not built (needs nvcc: scripts/build.sh)" >&2; exit 2; }
    done
    rm -rf "$out"; mkdir -p "$out/lib" "$out/traces/cnn"
    for f in "${bins[@]}" apps/gw-launch; do cp "$build/$f" "$out/"; done
    cp bench/gpu.sh "$out/"
    # What they link, the CUDA runtime among it (the GPU machine may have
    # the driver only), but the C and C++ runtimes, which it has.
    for f in "${bins[@]}"; do ldd "$build/$f"; done | awk '$3 ~ /^\// { print $3 }' | sort -u |
      grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' |
      xargs -r -I{} cp -L {} "$out/lib/"
    traces=${GW_TRACES:-../shared/data/grads}
    cp "$traces"/cnn/*.f32 "$out/traces/cnn/"
    du -sh "$out"
    ;;
  run)
    out=${2:-gpu-pack}
    [ -d "$out" ] || { echo "gpu-check: no $out (scripts/gpu-check.sh pack first)" >&2; exit 2; }
    export LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
    rc=0
    GW_TRACES="$out/traces" "$out/test_gpu_device" || rc=$?
    [ "$rc" -eq 0 ] || { echo "gpu-check: test_gpu_device exit $rc" >&2; exit "$rc"; }
    bash "$out/gpu.sh" "$out"
    ;;
  *)
    echo "usage: scripts/gpu-check.sh pack [BUILD_DIR] [OUT] | run [OUT]" >&2; exit 2 ;;
esac
