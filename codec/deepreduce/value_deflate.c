/* DeepReduce value codec "deflate": the n float32 little-endian values (4n
 * bytes, as value_f32.c writes them) compressed by zlib's compress2() at
 * cfg->zlevel — a zlib stream (RFC 1950: 2-byte header, deflate data,
 * Adler-32 of the 4n bytes), so corruption the deflate layer cannot see is
 * still caught by the checksum. Lossless, bit for bit.
 *
 * The decoder inflates straight into the caller's n floats: zlib never
 * writes past avail_out = 4n, so a stream that would expand further (a
 * "zlib bomb") stops there and is refused, and work is O(len + 4n). The
 * section must be exactly one stream that ends (Z_STREAM_END) at its last
 * byte and yields exactly 4n bytes. */
#define ZLIB_CONST
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../codec_internal.h"
#include "dr.h"
#include "value_le.h"

#define LE_HOST (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

static int deflate_encode(const float *v, uint32_t n,
			  const struct dr_value_cfg *cfg, uint8_t *out,
			  size_t cap)
{
	/* 0 is zlib's own default (6), the others its levels. */
	int level = cfg->zlevel ? cfg->zlevel : Z_DEFAULT_COMPRESSION;
	if (cfg->zlevel < 0 || cfg->zlevel > 9)
		return GW_ERR(GW_EINVAL);
	uint64_t raw = (uint64_t)n * 4;
	if (raw > UINT_MAX)
		return GW_ERR(GW_EINVAL);
	const Bytef *src = (const Bytef *)v;
#if !LE_HOST
	uint8_t *tmp = malloc(raw ? raw : 1);
	if (!tmp)
		return GW_ERR(GW_ENOMEM);
	dr_f32_put_le(tmp, v, n);
	src = tmp;
#endif
	/* compress2 writes at most destLen bytes; a stream that does not fit
	 * is Z_BUF_ERROR. */
	uLongf dlen = cap > INT_MAX ? INT_MAX : (uLongf)cap;
	int rc = compress2(out, &dlen, src, (uLong)raw, level);
#if !LE_HOST
	free(tmp);
#endif
	if (rc == Z_BUF_ERROR)
		return GW_ERR(GW_EBUDGET);
	if (rc == Z_MEM_ERROR)
		return GW_ERR(GW_ENOMEM);
	if (rc != Z_OK)
		return GW_ERR(GW_EINVAL);
	return (int)dlen;
}

static int deflate_decode(const uint8_t *in, size_t len, uint32_t n, float *v)
{
	uint64_t raw = (uint64_t)n * 4;
	if (len > UINT_MAX || raw > UINT_MAX)
		return GW_ERR(GW_ELENGTH);   /* zlib counts in 32 bits */
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	int rc = inflateInit(&zs);
	if (rc != Z_OK)
		return GW_ERR(rc == Z_MEM_ERROR ? GW_ENOMEM : GW_EINVAL);
	zs.next_in = in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)v;
	zs.avail_out = (uInt)raw;
	/* One call: all input and output space are there, so anything but
	 * Z_STREAM_END means the stream is truncated, corrupt or longer than
	 * 4n bytes (Z_BUF_ERROR, Z_DATA_ERROR, Z_NEED_DICT). */
	rc = inflate(&zs, Z_FINISH);
	int ok = rc == Z_STREAM_END && zs.avail_in == 0 && zs.avail_out == 0;
	inflateEnd(&zs);
	if (rc == Z_MEM_ERROR)
		return GW_ERR(GW_ENOMEM);
	if (!ok)
		return GW_ERR(GW_ECORRUPT);
	dr_f32_get_le(v, (const uint8_t *)v, n);   /* in place */
	return GW_OK;
}

const struct dr_value_ops dr_value_deflate = {
	.name = "deflate",
	.encode = deflate_encode,
	.decode = deflate_decode,
};
