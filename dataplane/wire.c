/* The packet header: writing, sealing, validating, and the registry of
 * the types whose rules their protocols register (docs/wire-format.md §5).
 * Nothing here knows a type: stream_wire.c and collective/coll_wire.c do. */
#include <stdatomic.h>

#include "gw_hash.h"

#include <gw/wire.h>

#include "gw_util.h"

/* Written once per type by its protocol's create call, read on every
 * receive: an atomic pointer, no lock on the receive path. */
static _Atomic(const gw_pkt_type *) types[256];

int gw_pkt_register(const gw_pkt_type *t)
{
	if (!t || !t->shape)
		return GW_ERR(GW_EINVAL);
	const gw_pkt_type *none = NULL;
	if (atomic_compare_exchange_strong(&types[t->type], &none, t) || none == t)
		return GW_OK;
	return GW_ERR(GW_EINVAL);
}

uint64_t gw_pkt_payload_hash(const uint8_t *payload, size_t len)
{
	/* XXH3 of zero bytes is defined; any non-NULL pointer will do. */
	static const uint8_t nothing[1];
	return gw_xxh3(len ? payload : nothing, len, 0);
}

uint64_t gw_pkt_payload_seed(uint8_t flags, uint8_t sack_len, const uint8_t *payload,
			     size_t len)
{
	if (!(flags & GW_PKT_F_FRAME))
		return gw_pkt_payload_hash(payload, len);
	if (sack_len)   /* the type's shape checked sack_len < len; callers may not */
		return gw_xxh3_short(payload, GW_MIN((size_t)sack_len, len),
					    (uint64_t)len);
	return (uint64_t)len;
}

/* checksum = low 32 bits of XXH3_64(header[0..28), seed) */
static uint32_t hdr_checksum(const uint8_t *p, uint64_t seed)
{
	return (uint32_t)gw_xxh3_short(p, GW_PKT_OFF_CHECKSUM, seed);
}

void gw_pkt_write(uint8_t *p, const gw_pkt_hdr *h, uint64_t payload_seed)
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
	gw_st32(p + GW_PKT_OFF_CHECKSUM, hdr_checksum(p, payload_seed));
}

int gw_pkt_parse(const uint8_t *p, size_t len, gw_pkt_hdr *h)
{
	if (len < GW_PKT_HDR_LEN)
		return GW_ERR(GW_ETRUNC);
	if (gw_ld16(p + GW_PKT_OFF_MAGIC) != GW_PKT_MAGIC)
		return GW_ERR(GW_EMAGIC);
	if (p[GW_PKT_OFF_VERSION] != GW_PKT_VERSION)
		return GW_ERR(GW_EVERSION);
	const gw_pkt_type *t = atomic_load_explicit(&types[p[GW_PKT_OFF_TYPE]],
						     memory_order_acquire);
	gw_pkt_hdr sh = {.type = p[GW_PKT_OFF_TYPE], .flags = p[GW_PKT_OFF_FLAGS],
			 .sack_len = p[GW_PKT_OFF_SACK_LEN]};
	if (!t || (sh.flags & ~t->flags) || (t->need & ~sh.flags))
		return GW_ERR(GW_ERESERVED);
	size_t payload = len - GW_PKT_HDR_LEN;
	int rc = t->shape(&sh, payload);
	if (rc < 0)
		return rc;
	uint64_t seed = gw_pkt_payload_seed(sh.flags, sh.sack_len, p + GW_PKT_HDR_LEN,
					    payload);
	if (gw_ld32(p + GW_PKT_OFF_CHECKSUM) != hdr_checksum(p, seed))
		return GW_ERR(GW_ECHECKSUM);

	*h = sh;
	h->rank = gw_ld16(p + GW_PKT_OFF_RANK);
	h->job = gw_ld32(p + GW_PKT_OFF_JOB);
	h->round = gw_ld32(p + GW_PKT_OFF_ROUND);
	h->tensor = gw_ld32(p + GW_PKT_OFF_TENSOR);
	h->chunk = gw_ld32(p + GW_PKT_OFF_CHUNK);
	h->seq = gw_ld32(p + GW_PKT_OFF_SEQ);
	return t->fields ? t->fields(h, p + GW_PKT_HDR_LEN, payload) : GW_OK;
}
