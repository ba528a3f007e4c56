/* Packet header: writing, sealing and validating (docs/wire-format.md §5). */
#include <xxhash.h>

#include "gw_util.h"
#include "pkt.h"

uint64_t gw_pkt_payload_hash(const uint8_t *payload, size_t len)
{
	/* XXH3 of zero bytes is defined; any non-NULL pointer will do. */
	static const uint8_t none[1];
	return XXH3_64bits(len ? payload : none, len);
}

uint64_t gw_pkt_payload_seed(uint8_t type, uint8_t flags, uint8_t sack_len,
			     const uint8_t *payload, size_t len)
{
	if (!(flags & GW_PKT_F_FRAME) || type == GW_PKT_ACK)
		return gw_pkt_payload_hash(payload, len);
	if (type == GW_PKT_RESULT)   /* parse checked sack_len < len; callers may not */
		return XXH3_64bits_withSeed(payload, GW_MIN((size_t)sack_len, len),
					    (uint64_t)len);
	return (uint64_t)len;
}

/* checksum = low 32 bits of XXH3_64(header[0..28), seed = XXH3_64(payload),
 * or the payload length for FRAME) */
static uint32_t hdr_checksum(const uint8_t *p, uint64_t payload_hash)
{
	return (uint32_t)XXH3_64bits_withSeed(p, GW_PKT_OFF_CHECKSUM, payload_hash);
}

void gw_pkt_write(uint8_t *p, const gw_pkt_hdr *h, uint64_t payload_hash)
{
	gw_st16(p + GW_PKT_OFF_MAGIC, GW_PKT_MAGIC);
	p[GW_PKT_OFF_VERSION] = GW_PKT_VERSION;
	p[GW_PKT_OFF_TYPE] = h->type;
	p[GW_PKT_OFF_FLAGS] = h->flags;
	p[GW_PKT_OFF_SACK_LEN] = h->sack_len;
	gw_st16(p + GW_PKT_OFF_RANK, h->rank);
	gw_st32(p + GW_PKT_OFF_JOB, h->job);
	gw_st32(p + GW_PKT_OFF_ROUND, h->round);
	gw_st32(p + GW_PKT_OFF_TENSOR, h->tensor);
	gw_st32(p + GW_PKT_OFF_CHUNK, h->chunk);
	gw_st32(p + GW_PKT_OFF_SEQ, h->seq);
	gw_st32(p + GW_PKT_OFF_CHECKSUM, hdr_checksum(p, payload_hash));
}

int gw_pkt_parse(const uint8_t *p, size_t len, gw_pkt_hdr *h)
{
	if (len < GW_PKT_HDR_LEN)
		return GW_ERR(GW_ETRUNC);
	if (gw_ld16(p + GW_PKT_OFF_MAGIC) != GW_PKT_MAGIC)
		return GW_ERR(GW_EMAGIC);
	if (p[GW_PKT_OFF_VERSION] != GW_PKT_VERSION)
		return GW_ERR(GW_EVERSION);
	uint8_t type = p[GW_PKT_OFF_TYPE], flags = p[GW_PKT_OFF_FLAGS];
	uint8_t sack_len = p[GW_PKT_OFF_SACK_LEN];
	size_t payload = len - GW_PKT_HDR_LEN;
	/* Room a MAC takes at the end of the payload; the rest is the body. */
	size_t mac = (flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0;
	if (type == GW_PKT_DATA) {
		if ((flags & ~GW_PKT_F_KNOWN) || sack_len)
			return GW_ERR(GW_ERESERVED);
		if (payload > GW_PKT_PAYLOAD_MAX)
			return GW_ERR(GW_ELENGTH);
	} else if (type == GW_PKT_ACK) {
		if (flags)
			return GW_ERR(GW_ERESERVED);
		if (sack_len > GW_PKT_SACK_MAX || payload != sack_len)
			return GW_ERR(GW_ELENGTH);
	} else if (type == GW_PKT_UP || type == GW_PKT_RESULT) {
		if ((flags & ~GW_PKT_F_AGG) || !(flags & GW_PKT_F_FRAME))
			return GW_ERR(GW_ERESERVED);
		if (type == GW_PKT_UP && sack_len)
			return GW_ERR(GW_ERESERVED);
		if (type == GW_PKT_RESULT && !sack_len)
			return GW_ERR(GW_ELENGTH);
		/* A body (bitmap + frame) of at least one frame byte, and a
		 * frame no larger than any frame may be. */
		if (payload < (size_t)sack_len + 1 + mac ||
		    payload - mac - sack_len > GW_PKT_PAYLOAD_MAX)
			return GW_ERR(GW_ELENGTH);
	} else {
		return GW_ERR(GW_ERESERVED);
	}
	uint64_t ph = gw_pkt_payload_seed(type, flags, sack_len, p + GW_PKT_HDR_LEN,
					  payload);
	if (gw_ld32(p + GW_PKT_OFF_CHECKSUM) != hdr_checksum(p, ph))
		return GW_ERR(GW_ECHECKSUM);

	h->type = type;
	h->flags = flags;
	h->sack_len = sack_len;
	h->rank = gw_ld16(p + GW_PKT_OFF_RANK);
	h->job = gw_ld32(p + GW_PKT_OFF_JOB);
	h->round = gw_ld32(p + GW_PKT_OFF_ROUND);
	h->tensor = gw_ld32(p + GW_PKT_OFF_TENSOR);
	h->chunk = gw_ld32(p + GW_PKT_OFF_CHUNK);
	h->seq = gw_ld32(p + GW_PKT_OFF_SEQ);
	if (type != GW_PKT_ACK) {
		if (h->chunk >= GW_PKT_CHUNK_LIMIT)
			return GW_ERR(GW_ERANGE);
	}
	if (type == GW_PKT_DATA) {
		/* An empty DATA packet only says "this tensor has no chunks". */
		if (!payload && (h->chunk || !(flags & GW_PKT_F_LAST)))
			return GW_ERR(GW_ELENGTH);
	} else if (type == GW_PKT_ACK) {
		if ((uint64_t)h->chunk + 8u * sack_len > GW_PKT_CHUNK_LIMIT)
			return GW_ERR(GW_ERANGE);
		if (sack_len && (p[GW_PKT_HDR_LEN] & 1u))
			return GW_ERR(GW_ECORRUPT);
	}
	return GW_OK;
}
