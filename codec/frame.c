/* Frame header: layout, validation and checksum (docs/wire-format.md §2). */
#include "gw_hash.h"

#include "codec_internal.h"

/* The header's layout, writer and reader are common/gw_wire.h's, which
 * gpudirect's kernels compile too: the two sides cannot write different
 * bytes. */

void gw_frame_write_header(uint8_t *b, const struct gw_frame_info *h)
{
	struct gw_wire_hdr w = {
		.codec = h->codec, .flags = h->flags, .param_len = (uint8_t)h->param_len,
		.tensor = h->tensor, .count = h->count, .start = h->start, .span = h->span,
		.payload_len = h->payload_len,
	};
	gw_wire_hdr_write(b, &w);
}

/* The checksum covers the header up to the checksum field and everything
 * after it, as two one-shot XXH3 calls (the first seeds the second) so the
 * field itself never has to be zeroed in place. */
uint32_t gw_frame_checksum(const uint8_t *b, size_t len)
{
	uint64_t h = gw_xxh3_short(b, GW_WIRE_OFF_CHECKSUM, 0);
	h = gw_xxh3(b + GW_FRAME_HDR_LEN, len - GW_FRAME_HDR_LEN, h);
	return (uint32_t)h;
}

void gw_frame_seal(uint8_t *b, size_t len)
{
	gw_st32(b + GW_WIRE_OFF_CHECKSUM, gw_frame_checksum(b, len));
}

/* GW_E* code of a gw_wire_verdict. */
static int wire_err(int v)
{
	switch (v) {
	case GW_WIRE_OK: return GW_OK;
	case GW_WIRE_ETRUNC: return GW_ETRUNC;
	case GW_WIRE_EMAGIC: return GW_EMAGIC;
	case GW_WIRE_EVERSION: return GW_EVERSION;
	case GW_WIRE_ERESERVED: return GW_ERESERVED;
	default: return GW_ELENGTH;
	}
}

int gw_frame_peek(const void *buf, size_t len, gw_frame_info *info)
{
	const uint8_t *b = buf;
	struct gw_wire_hdr w;
	gw_frame_info h;

	if (!buf || !info)
		return GW_ERR(GW_EINVAL);
	/* §2.1 rules 1-4, then the codec (5), then the lengths (6). */
	int v = gw_wire_hdr_read(b, len, &w);
	if (v != GW_WIRE_OK)
		return GW_ERR(wire_err(v));
	const struct gw_codec_ops *ops = gw_codec_ops(w.codec);
	if (!ops)
		return GW_ERR(GW_ECODEC);
	v = gw_wire_hdr_lengths(&w, len, &h.frame_len);
	if (v != GW_WIRE_OK)
		return GW_ERR(wire_err(v));
	h.version = GW_WIRE_VERSION;
	h.codec = w.codec;
	h.flags = w.flags;
	h.param_len = w.param_len;
	h.tensor = w.tensor;
	h.count = w.count;
	h.start = w.start;
	h.span = w.span;
	h.payload_len = w.payload_len;
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
	if (gw_ld32(b + GW_WIRE_OFF_CHECKSUM) != gw_frame_checksum(b, info->frame_len))
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
