#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the main job:
# PyTorch DDP over gradwire against PyTorch's own choices, in small —
# W = 4 ranks, each in its own network namespace behind a 100 Mbit/s link
# (scripts/netns-star.sh), a 1.08M-parameter CNN on Fashion-MNIST: DDP's
# default allreduce (the baseline: its final accuracy less 0.5 points is
# the target), PowerSGD rank 2, gradwire 3LC with co-located shards, and
# the no-op floor. A few minutes; it ends with one line per run (accuracy,
# time to target, bytes sent per rank, step time) and the plot's path.
# Extra arguments go to bench/torch.sh (e.g. --steps 300; the full
# comparison is bash bench/torch.sh build). Needs root (namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
bash bench/torch.sh build --quick "$@"
