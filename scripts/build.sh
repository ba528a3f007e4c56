#!/usr/bin/env bash
# Configures (once) and builds gradwire in build/. Warnings are errors when
# CI is set, as in CI. Usage: scripts/build.sh [BUILD_DIR [meson options]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
opts=("$@")
[ -n "${CI:-}" ] && opts+=(-Dwerror=true)
if [ -f "$dir/build.ninja" ]; then
  meson configure "$dir" "${opts[@]}" >/dev/null
else
  meson setup "$dir" "${opts[@]}"
fi
ninja -C "$dir"
