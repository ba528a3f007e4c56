#!/bin/sh
# meson test wrapper (suite fuzz-regress): writes the seed corpus of one
# harness, then replays it and the committed inputs through regress_<name>.
#   replay.sh MAKE_CORPUS REGRESS_BIN NAME CORPUS_DIR [REGRESS_DIR]
set -eu
make_corpus=$1 regress=$2 name=$3 corpus=$4 committed=${5:-}

rm -rf "${corpus:?}/$name"
mkdir -p "$corpus"
"$make_corpus" "$corpus" "$name"
set -- "$corpus/$name"
if [ -n "$committed" ] && [ -d "$committed" ]; then
  set -- "$@" "$committed"
fi
exec "$regress" "$@"
