#!/usr/bin/env bash
# Every shell script of the tree through shellcheck, at the error and warning
# levels (.shellcheckrc: a script sources its libraries from its own
# folder, each source line naming the file). A script is a *.sh file or a
# file whose first line runs sh or bash; build folders are left out. A
# control first: a script with a known warning must be flagged, so that
# a checker that checks nothing cannot pass.
#   test_shellcheck.sh SOURCE_ROOT
set -u
root=${1:?usage: test_shellcheck.sh SOURCE_ROOT}
if ! command -v shellcheck >/dev/null 2>&1; then
  echo "SKIP: shellcheck is not installed (scripts/install-deps.sh installs it)"
  exit 77
fi
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/usr/bin/env bash\ncd $1\nrm -rf "$1/"\n' >"$tmp/bad.sh"
if shellcheck -S warning "$tmp/bad.sh" >/dev/null 2>&1; then
  echo "FAIL: the control: shellcheck found nothing in a script with an unquoted cd"
  exit 1
fi
files=()
while IFS= read -r -d '' f; do
  case $f in
    *.sh) files+=("$f") ;;
    *) head -n1 "$f" 2>/dev/null | grep -qE '^#!.*[/ ](ba)?sh( |$)' && files+=("$f") ;;
  esac
done < <(find . \( -path './build*' -o -path './.git' -o -path './subprojects' \) -prune \
           -o -type f \( -name '*.sh' -o -perm -u+x \) -print0)
if [ ${#files[@]} -lt 50 ]; then
  echo "FAIL: found ${#files[@]} scripts (more than 50 expected): the finder is broken"
  exit 1
fi
if shellcheck -x -S warning "${files[@]}"; then
  echo "ok: ${#files[@]} scripts clean at the error and warning levels ($(shellcheck --version |
    sed -n 's/^version: //p'))"
  exit 0
fi
echo "FAIL: shellcheck (above) over ${#files[@]} scripts"
exit 1
