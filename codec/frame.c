/* Frame header: layout, validation and checksum (docs/wire-format.md §2). */
#include "gw_hash.h"

#include "codec_internal.h"

/* Byte offsets of the header fields. */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 2,
	OFF_CODEC = 3,
	OFF_FLAGS = 4,
	OFF_PARAM_LEN = 6,
	OFF_RESERVED = 7,
	OFF_TENSOR = 8,
	OFF_COUNT = 12,
	OFF_START = 16,
	OFF_SPAN = 24,
	OFF_PAYLOAD_LEN = 28,
	OFF_CHECKSUM = 32,
};
_Static_assert(OFF_CHECKSUM + 4 == GW_FRAME_HDR_LEN, "header is 36 bytes");

void gw_frame_write_header(uint8_t *b, const struct gw_frame_info *h)
{
	gw_st16(b + OFF_MAGIC, GW_FRAME_MAGIC);
	b[OFF_VERSION] = GW_FRAME_VERSION;
	b[OFF_CODEC] = h->codec;
	gw_st16(b + OFF_FLAGS, h->flags);
	b[OFF_PARAM_LEN] = (uint8_t)h->param_len;
	b[OFF_RESERVED] = 0;
	gw_st32(b + OFF_TENSOR, h->tensor);
	gw_st32(b + OFF_COUNT, h->count);
	gw_st64(b + OFF_START, h->start);
	gw_st32(b + OFF_SPAN, h->span);
	gw_st32(b + OFF_PAYLOAD_LEN, h->payload_len);
	gw_st32(b + OFF_CHECKSUM, 0);
}

/* The checksum covers the header up to the checksum field and everything
 * after it, as two one-shot XXH3 calls (the first seeds the second) so the
 * field itself never has to be zeroed in place. */
uint32_t gw_frame_checksum(const uint8_t *b, size_t len)
{
	uint64_t h = gw_xxh3_short(b, OFF_CHECKSUM, 0);
	h = gw_xxh3(b + GW_FRAME_HDR_LEN, len - GW_FRAME_HDR_LEN, h);
	return (uint32_t)h;
}

void gw_frame_seal(uint8_t *b, size_t len)
{
	gw_st32(b + OFF_CHECKSUM, gw_frame_checksum(b, len));
}

int gw_frame_peek(const void *buf, size_t len, gw_frame_info *info)
{
	const uint8_t *b = buf;
	gw_frame_info h;

	if (!buf || !info)
		return GW_ERR(GW_EINVAL);
	if (len < GW_FRAME_HDR_LEN)
		return GW_ERR(GW_ETRUNC);
	if (gw_ld16(b + OFF_MAGIC) != GW_FRAME_MAGIC)
		return GW_ERR(GW_EMAGIC);
	h.version = b[OFF_VERSION];
	if (h.version != GW_FRAME_VERSION)
		return GW_ERR(GW_EVERSION);
	h.flags = gw_ld16(b + OFF_FLAGS);
	if (b[OFF_RESERVED] != 0 || (h.flags & ~GW_FF_KNOWN) ||
	    ((h.flags & GW_FF_KEY64) && !(h.flags & GW_FF_SPARSE)))
		return GW_ERR(GW_ERESERVED);
	h.codec = b[OFF_CODEC];
	const struct gw_codec_ops *ops = gw_codec_ops(h.codec);
	if (!ops)
		return GW_ERR(GW_ECODEC);
	h.param_len = b[OFF_PARAM_LEN];
	h.tensor = gw_ld32(b + OFF_TENSOR);
	h.count = gw_ld32(b + OFF_COUNT);
	h.start = gw_ld64(b + OFF_START);
	h.span = gw_ld32(b + OFF_SPAN);
	h.payload_len = gw_ld32(b + OFF_PAYLOAD_LEN);
	/* 64-bit sum: header fields may be hostile and must not wrap. */
	uint64_t flen = (uint64_t)GW_FRAME_HDR_LEN + h.param_len + h.payload_len;
	if (h.payload_len > GW_FRAME_MAX || flen > GW_FRAME_MAX)
		return GW_ERR(GW_ELENGTH);
	if (flen > len)
		return GW_ERR(GW_ETRUNC);
	if (flen < len)
		return GW_ERR(GW_ELENGTH);
	h.frame_len = (uint32_t)flen;
	if (h.flags & GW_FF_SPARSE) {
		if (!(ops->frames & GW_FRAME_KIND_SPARSE))
			return GW_ERR(GW_EUNSUPPORTED);
		/* Keys are strictly ascending inside the span. */
		if (h.count > h.span)
			return GW_ERR(GW_ELENGTH);
	} else {
		if (!(ops->frames & GW_FRAME_KIND_DENSE))
			return GW_ERR(GW_EUNSUPPORTED);
		if (h.count == 0 || h.span != h.count)
			return GW_ERR(GW_ELENGTH);
	}
	if (h.start > UINT64_MAX - h.span)
		return GW_ERR(GW_ERANGE);
	*info = h;
	return GW_OK;
}

int gw_frame_verify(const void *buf, size_t len, gw_frame_info *info)
{
	int rc = gw_frame_peek(buf, len, info);
	if (rc < 0)
		return rc;
	const uint8_t *b = buf;
	if (gw_ld32(b + OFF_CHECKSUM) != gw_frame_checksum(b, info->frame_len))
		return GW_ERR(GW_ECHECKSUM);
	return GW_OK;
}

int gw_decode(const void *buf, size_t len, float *out, uint64_t out_len)
{
	return gw_decode_window(buf, len, out, 0, out_len);
}

int gw_decode_window(const void *buf, size_t len, float *out, uint64_t base,
		     uint64_t n)
{
	gw_frame_info h;
	int rc = gw_frame_verify(buf, len, &h);
	if (rc < 0)
		return rc;
	if (!out && n)
		return GW_ERR(GW_EINVAL);
	if (h.flags & GW_FF_SPARSE) {
		/* Sparse keys index out directly; the codec checks them. */
		if (base)
			return GW_ERR(GW_EUNSUPPORTED);
	} else {
		/* Dense ranges are checked here once (start + count cannot wrap:
		 * peek bounded start + span). The codec indexes out by start, so
		 * it gets the start relative to the window; a group codec's
		 * start % 5 check then needs base % 5 == 0 (documented). */
		if (h.start < base || h.start - base + h.count > n)
			return GW_ERR(GW_ERANGE);
		h.start -= base;
	}
	const uint8_t *params = (const uint8_t *)buf + GW_FRAME_HDR_LEN;
	return gw_codec_ops(h.codec)->decode(&h, params, params + h.param_len,
					     out, n, 1.0f);
}

int gw_frame_parts_of(const void *buf, size_t len, gw_frame_parts *parts)
{
	gw_frame_info h;
	int rc = gw_frame_verify(buf, len, &h);
	if (rc < 0)
		return rc;
	const struct gw_codec_ops *ops = gw_codec_ops(h.codec);
	if (!ops->parts || !parts)
		return GW_ERR(ops->parts ? GW_EINVAL : GW_EUNSUPPORTED);
	*parts = (gw_frame_parts){.header = GW_FRAME_HDR_LEN, .params = h.param_len};
	const uint8_t *params = (const uint8_t *)buf + GW_FRAME_HDR_LEN;
	return ops->parts(&h, params, params + h.param_len, parts);
}

int gw_frame_bound(const void *buf, size_t len, float *bound)
{
	gw_frame_info h;
	int rc = gw_frame_verify(buf, len, &h);
	if (rc < 0)
		return rc;
	const struct gw_codec_ops *ops = gw_codec_ops(h.codec);
	if (!ops->bound || !bound)
		return GW_ERR(ops->bound ? GW_EINVAL : GW_EUNSUPPORTED);
	const uint8_t *params = (const uint8_t *)buf + GW_FRAME_HDR_LEN;
	return ops->bound(&h, params, params + h.param_len, bound);
}
