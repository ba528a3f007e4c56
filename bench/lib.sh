# shellcheck shell=bash
# shellcheck disable=SC2034  # what it sets is for the bench that sources it
# What every bench/*.sh shares; each sources it first:
#
#   source "$(dirname "$0")/lib.sh"     # set -euo pipefail, cd to the source
#                                       # root, prog=bench/NAME.sh
#   bench_args "json quick mtu= out=" "$@"
#
# bench_args SPEC ARGS...: ARGS are [BUILD_DIR] [options]. BUILD_DIR (a
#   first argument that is not an option; relative to the source root,
#   default build) goes to $build. SPEC names the options the bench takes:
#   NAME for a flag, which sets $NAME to 1 (0 when not given), NAME= for
#   one that takes a value, which sets $NAME to it (left as it was when
#   not given: set defaults first); dashes become underscores (--no-veth:
#   $no_veth). -h/--help prints the bench's usage (the "# Usage:" paragraph
#   of its header) and exits 0; anything else is refused with exit 2.
# bench_die MSG: MSG on stderr, named for the bench; exit 1.
# bench_need FILE...: exit 1 unless each FILE is an executable ("not built").
# bench_root: exit 1 unless run as root (network namespaces).
# bench_traces [SUBDIR]: $traces (GW_TRACES, default ../shared/data/grads);
#   exit 1 unless it (or its SUBDIR) is there.
# bench_codec_inputs: what gw-bench codec runs on: $bench (gw-bench, built),
#   $traces (bench_traces), $dense (the CNN gradient of iteration 100, its
#   tensors in one file under the build folder), $sk and $sv (the spam
#   gradient of iteration 10: keys, values).
# bench_tmp: $tmp, a fresh folder removed at exit.
# bench_at_exit CMD...: run CMD at exit (interrupted too); the last one
#   registered runs first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
prog=bench/$(basename "$0")

bench_usage() {  # [EXIT]: the usage on stdout with 0, else on stderr
  local text
  text=$(awk '/^# Usage:/ { on = 1 } on && !/^# ./ { exit } on { print substr($0, 3) }' "$0")
  if [ "${1:-2}" = 0 ]; then echo "$text"; exit 0; fi
  echo "$text" >&2
  exit "${1:-2}"
}
bench_die() { echo "$prog: $*" >&2; exit 1; }

bench_args() {
  local spec=" $1 " opt name
  shift
  build=build
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then build=$1; shift; fi
  for name in $spec; do
    # A flag starts at 0; an option with a value keeps its default.
    [ "${name%=}" != "$name" ] || printf -v "${name//-/_}" 0
  done
  while [ $# -gt 0 ]; do
    opt=$1 name=${1#--}
    shift
    case $opt in
      -h|--help) bench_usage 0 ;;
    esac
    if [ "${opt#--}" != "$opt" ] && [[ $spec == *" $name "* ]]; then
      printf -v "${name//-/_}" 1
    elif [ "${opt#--}" != "$opt" ] && [[ $spec == *" $name= "* ]]; then
      [ $# -gt 0 ] || { echo "$prog: $opt needs a value" >&2; bench_usage 2; }
      printf -v "${name//-/_}" '%s' "$1"
      shift
    else
      echo "$prog: unknown argument '$opt'" >&2
      bench_usage 2
    fi
  done
  [ ! -d "$build" ] || build=$(cd "$build" && pwd)
}

bench_need() {
  local f
  for f in "$@"; do [ -x "$f" ] || bench_die "$f not built"; done
}
bench_root() {
  [ "$(id -u)" = 0 ] || bench_die "needs root (network namespaces)"
}
# shellcheck disable=SC2120  # SUBDIR is optional
bench_traces() {
  traces=${GW_TRACES:-../shared/data/grads}
  [ -d "$traces/${1:-}" ] || bench_die "no traces at $traces${1:+/$1}"
}
bench_codec_inputs() {
  bench=$build/apps/gw-bench
  bench_need "$bench"
  bench_traces
  dense=$build/bench-cnn-it100.f32
  cat "$traces"/cnn/it100_*.f32 >"$dense"
  sk=$traces/logreg_spam/it010_weight.keys.u32
  sv=$traces/logreg_spam/it010_weight.vals.f32
}

bench_exit_cmds=()
bench_at_exit() { bench_exit_cmds+=("$(printf '%q ' "$@")"); }
bench_tmp() {
  tmp=$(mktemp -d "/tmp/gw-${prog#bench/}.XXXXXX")
  bench_at_exit rm -rf "$tmp"
}
bench_cleanup() {  # the commands of bench_at_exit, last first
  local i
  trap - EXIT
  trap '' INT TERM
  for ((i = ${#bench_exit_cmds[@]} - 1; i >= 0; i--)); do eval "${bench_exit_cmds[$i]}" || true; done
}
trap bench_cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 1' INT TERM
