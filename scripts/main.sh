#!/usr/bin/env bash
# README command 1: install what is missing, build, fetch the data, and run
# the main job: W = 4 workers training an MLP on MNIST through the
# aggregator over memif links (DPDK, no NIC, no hugepages), with 3LC both
# ways, after the same training with raw float32 as the baseline. It ends
# with the accuracy and the speedup in time to accuracy. Extra arguments go
# to gw-train (e.g. --link netns after scripts/netns-star.sh up 4 10mbit).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
bash scripts/fetch-data.sh data build
build/apps/gw-train/gw-train --workers 4 --model mlp --epochs 3 --up 3lc --down 3lc \
  --baseline --plot build/train-mlp "$@"
