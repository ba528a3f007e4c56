#!/usr/bin/env bash
# The GPU checks, for the machine that has the GPU (no internet there):
#
#   scripts/gpu-check.sh pack [BUILD_DIR] [OUT]   here, after a build with
#       nvcc: copies what the GPU machine needs into OUT (default gpu-pack/,
#       git-ignored, a few MB): test_gpu_device, gpu_bench, gw-bench, the
#       CUDA runtime they link, the cnn traces, bench/gpu.sh.
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
    for f in tests/gpu/test_gpu_device bench/gpu_bench apps/gw-bench; do
      [ -x "$build/$f" ] || { echo "gpu-check: $build/$f not built (needs nvcc: scripts/build.sh)" >&2; exit 2; }
    done
    rm -rf "$out"; mkdir -p "$out/lib" "$out/traces/cnn"
    cp "$build/tests/gpu/test_gpu_device" "$build/bench/gpu_bench" "$build/apps/gw-bench" "$out/"
    cp bench/gpu.sh "$out/"
    # The CUDA runtime these link (the GPU machine may have the driver only).
    ldd "$out/test_gpu_device" | awk '/libcudart/ { print $3 }' | xargs -r -I{} cp -L {} "$out/lib/"
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
