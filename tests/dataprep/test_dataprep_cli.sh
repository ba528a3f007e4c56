#!/usr/bin/env bash
# gw-dataprep refuses bad arguments with exit 2 and bad input data or I/O
# with exit 1, each time with a message naming the argument or the file,
# and never crashes (an exit above 2 fails too).
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=fixtures.sh
. "$here/fixtures.sh"
expect() {  # rc word args...
  local want=$1 word=$2; shift 2
  out=$("$bin" "$@" 2>&1); rc=$?
  if [ $rc -ne "$want" ] || ! printf '%s' "$out" | grep -qF -- "$word"; then
    echo "FAIL: gw-dataprep $* -> rc=$rc (want $want), output lacks '$word': $out"; fail=1
  fi
}
spam_fixture "$t/spam"
mnist_fixture "$t/mnist"
S=(spam --in "$t/spam" --out "$t/o")
M=(mnist --in "$t/mnist" --out "$t/o")

# Arguments: exit 2.
expect 2 usage
expect 2 "unknown subcommand 'cifar'" cifar --in "$t" --out "$t/o"
expect 2 "missing --in" spam --out "$t/o"
expect 2 "missing --out" mnist --in "$t/mnist"
expect 2 "--in: needs a value" spam --out "$t/o" --in
expect 2 "--frobnicate" "${S[@]}" --frobnicate 1
expect 2 "'stray'" "${S[@]}" stray
for b in 9 29 -1 20x ""; do expect 2 "--bits '$b'" "${S[@]}" --bits "$b"; done
expect 2 "--bits: only for spam" "${M[@]}" --bits 20
for f in 0 1 -0.5 1.5 abc nan 0.2x; do
  expect 2 "--test-frac '$f'" "${M[@]}" --test-frac "$f"
  expect 2 "--test-frac '$f'" "${S[@]}" --test-frac "$f"
done
for s in -1 abc 18446744073709551616 1.5; do expect 2 "--seed '$s'" "${S[@]}" --seed "$s"; done

# Input folders: exit 1.
expect 1 "--in $t/none" spam --in "$t/none" --out "$t/o"
expect 1 "--in $t/none" mnist --in "$t/none" --out "$t/o"
: >"$t/file"
expect 1 "not a folder" spam --in "$t/file" --out "$t/o"
cp -r "$t/spam" "$t/nospam2"; rm -r "$t/nospam2/spam-2"
expect 1 "$t/nospam2/spam-2" spam --in "$t/nospam2" --out "$t/o"
mkdir -p "$t/empty"/{easy-ham-1,easy-ham-2,hard-ham-1,spam-1,spam-2}
expect 1 "no mails" spam --in "$t/empty" --out "$t/o"
cp -r "$t/empty" "$t/one"; printf 'hi\n' >"$t/one/spam-1/1.txt"
expect 1 "at least 2" spam --in "$t/one" --out "$t/o"
cp -r "$t/spam" "$t/dirmail"; mkdir "$t/dirmail/spam-1/00003.zz.txt"
expect 1 "$t/dirmail/spam-1/00003.zz.txt" spam --in "$t/dirmail" --out "$t/o"
expect 1 "$t/nodir/o.train.svm.tmp" "${S[@]}" --out "$t/nodir/o"

# MNIST JSON: exit 1, naming the file (and the value).
bad_json() {  # digit content word
  rm -rf "$t/m"; cp -r "$t/mnist" "$t/m"; printf '%s' "$2" >"$t/m/$1.json"
  expect 1 "$3" mnist --in "$t/m" --out "$t/o"
}
z783=$(printf '0,%.0s' $(seq 783))
bad_json 3 '{"data": [0, 1' "$t/m/3.json:"
bad_json 4 '{"data": [0, 1, 0]}' "$t/m/4.json: \"data\" has 3 values, not a multiple of 784"
bad_json 6 "{\"data\": [$z783 \"x\"]}" "$t/m/6.json: data[783] is not a number"
bad_json 6 "{\"data\": [$z783 null]}" "$t/m/6.json: data[783] is not a number"
bad_json 7 "{\"data\": [1.5, ${z783%,}]}" "$t/m/7.json: data[0] = 1.5 is outside [0,1]"
bad_json 7 "{\"data\": [$z783 -0.1]}" "$t/m/7.json: data[783] = -0.1 is outside [0,1]"
bad_json 8 "{\"data\": [1e999, ${z783%,}]}" "$t/m/8.json:"
bad_json 9 '[0]' "$t/m/9.json: not an object with a \"data\" array"
bad_json 9 '{"pixels": []}' "$t/m/9.json: not an object with a \"data\" array"
bad_json 9 '{"data": 5}' "$t/m/9.json: not an object with a \"data\" array"
bad_json 0 '' "$t/m/0.json"
rm -rf "$t/m"; cp -r "$t/mnist" "$t/m"; rm "$t/m/2.json"
expect 1 "$t/m/2.json" mnist --in "$t/m" --out "$t/o"
for d in 0 1 2 3 4 5 6 7 8 9; do printf '{"data": []}' >"$t/m/$d.json"; done
expect 1 "no images" mnist --in "$t/m" --out "$t/o"

ls "$t"/o.* >/dev/null 2>&1 && { echo "FAIL: a refused run left $(ls "$t"/o.*)"; fail=1; }
"$bin" --help | grep -q -- '--test-frac' || { echo "FAIL: --help"; fail=1; }
[ $fail -eq 0 ] && echo "ok: every bad argument and bad input refused, named"
exit $fail
