#!/usr/bin/env bash
# README command 1: install what is missing, build, run the main job.
# Until the dataplane lands, the main job is the codec benchmark on the real
# gradient traces (bench/codecs.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
bash bench/codecs.sh build "$@"
