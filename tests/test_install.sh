#!/usr/bin/env bash
# The library installs as a package should: headers under include/gw/, a
# gradwire.pc that a consumer builds and links with, and a shared object
# whose dynamic symbols are exactly what gradwire.map lists, each under its
# version node (a call listed in two nodes: name@@<newest> and
# name@<older>); and a program written for 0.1 (tests/abi_0_1.c) still
# works through the 0.1 forms of the calls 0.2 changed.
set -eu
builddir=$1
srcdir=$(cd "$(dirname "$0")/.." && pwd)
if [ "${2:-none}" != none ]; then
  # A consumer built without the sanitizer runtime cannot load a sanitized
  # library; the plain build runs this test.
  echo "SKIP: build uses -fsanitize=$2"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$builddir" --destdir "$tmp/root" --no-rebuild --quiet >/dev/null

pc=$(find "$tmp/root" -name gradwire.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: gradwire.pc not installed"; exit 1; }
[ -f "$(find "$tmp/root" -path '*include/gw/codec.h' | head -n1)" ] \
  || { echo "FAIL: include/gw/codec.h not installed"; exit 1; }
so=$(find "$tmp/root" -name 'libgradwire.so.*' -type f | head -n1)
[ -n "$so" ] || { echo "FAIL: libgradwire.so not installed"; exit 1; }

# What the map promises: name@@NODE for the first (newest) node that lists
# a name, name@NODE for every later one.
python3 - "$srcdir/gradwire.map" > "$tmp/want" <<'PY'
import re, sys
text = re.sub(r"/\*.*?\*/", "", open(sys.argv[1]).read(), flags=re.S)
seen = set()
for node, body in re.findall(r"(GRADWIRE_[0-9.]+)\s*\{(.*?)\}", text, flags=re.S):
    body = body.split("local:")[0].replace("global:", "")
    for name in re.findall(r"(gw_\w+)\s*;", body):
        print("%s%s%s" % (name, "@" if name in seen else "@@", node))
        seen.add(name)
PY
sort -o "$tmp/want" "$tmp/want"
nm -D --defined-only "$so" | awk '$3 != "" && $2 != "A" {print $3}' | sort > "$tmp/have"
if ! cmp -s "$tmp/want" "$tmp/have"; then
  echo "FAIL: exported symbols differ from gradwire.map (< map only, > library only):"
  diff "$tmp/want" "$tmp/have" | grep '^[<>]'
  exit 1
fi
echo "exports: $(wc -l < "$tmp/have") symbols, as gradwire.map lists them"

cat > "$tmp/consumer.c" <<'C'
#include <gw/codec.h>
#include <stdio.h>
int main(void)
{
	float x[3] = {1, -2, 3}, y[3] = {0};
	unsigned char f[256];
	gw_encoder *e = gw_encoder_create(gw_codec_by_name("raw"));
	gw_tensor t = {.id = 1, .dim = 3, .values = x};
	int n;
	if (!e || gw_encode_begin(e, &t) < 0 || (n = gw_encode_next(e, f, sizeof f)) <= 0)
		return 1;
	if (gw_decode(f, (size_t)n, y, 3) != 3 || y[1] != -2)
		return 1;
	gw_encoder_free(e);
	printf("consumer: gradwire %s ok\n", gw_version_string());
	return 0;
}
C
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
prefix=$(pkg-config --variable=prefix gradwire)
flags=$(pkg-config --define-variable=prefix="$tmp/root$prefix" --cflags --libs gradwire)
cc -std=c11 -Wall -Werror "$tmp/consumer.c" -o "$tmp/consumer" $flags
LD_LIBRARY_PATH=$(dirname "$so") "$tmp/consumer"

# Every installed header stands alone, in C11 and in C++.
for h in "$(dirname "$(find "$tmp/root" -path '*include/gw/codec.h' | head -n1)")"/*.h; do
  printf '#include <gw/%s>\n' "$(basename "$h")" > "$tmp/one.c"
  cc -std=c11 -Wall -Werror -fsyntax-only $flags "$tmp/one.c" \
    || { echo "FAIL: $(basename "$h") does not compile on its own"; exit 1; }
  if command -v c++ >/dev/null; then
    c++ -x c++ -std=c++17 -Wall -Werror -fsyntax-only $flags "$tmp/one.c" \
      || { echo "FAIL: $(basename "$h") does not compile as C++"; exit 1; }
  fi
done

cc -std=c11 -Wall -Werror "$srcdir/tests/abi_0_1.c" -o "$tmp/abi01" $flags
LD_LIBRARY_PATH=$(dirname "$so") "$tmp/abi01"

# The Python package installs beside the library and finds it through the
# dynamic loader (no build tree, no GRADWIRE_LIB): ctypes declares every
# call it uses at import, so a missing export fails here.
pkgdir=$(dirname "$(find "$tmp/root" -path '*dist-packages/gradwire/__init__.py' | head -n1)")
[ -d "$pkgdir" ] || { echo "FAIL: python/gradwire not installed"; exit 1; }
if [ -x /usr/bin/python3 ]; then
  (cd "$tmp" && env -u GRADWIRE_LIB LD_LIBRARY_PATH="$(dirname "$so")" \
    PYTHONPATH="$(dirname "$pkgdir")" /usr/bin/python3 -c \
    'import gradwire; print("python: gradwire", gradwire.version, "from", gradwire.library_path)') \
    || { echo "FAIL: the installed python package does not load"; exit 1; }
fi
