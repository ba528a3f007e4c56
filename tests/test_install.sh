#!/usr/bin/env bash
# The library installs as a package should: headers under include/gw/, a
# gradwire.pc that a consumer builds and links with, and a shared object
# that exports gw_* symbols only, all under the GRADWIRE_ version node.
set -eu
builddir=$1
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

bad=$(nm -D --defined-only "$so" | awk '$3 != "" {print $3}' | grep -v '^gw_' | grep -v '^GRADWIRE_' || true)
[ -z "$bad" ] || { echo "FAIL: symbols outside gw_* exported: $bad"; exit 1; }
unversioned=$(nm -D --defined-only "$so" | awk '$3 ~ /^gw_/ && $3 !~ /@@GRADWIRE_/ {print $3}')
[ -z "$unversioned" ] || { echo "FAIL: unversioned symbols: $unversioned"; exit 1; }

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
export PKG_CONFIG_PATH=$(dirname "$pc")
prefix=$(pkg-config --variable=prefix gradwire)
flags=$(pkg-config --define-variable=prefix="$tmp/root$prefix" --cflags --libs gradwire)
cc -std=c11 -Wall -Werror "$tmp/consumer.c" -o "$tmp/consumer" $flags
LD_LIBRARY_PATH=$(dirname "$so") "$tmp/consumer"
