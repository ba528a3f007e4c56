/* The collective's packet types, UP and RESULT (docs/wire-format.md §5.6,
 * §5.7), and the MAC rule: registered with the packet header (the
 * dataplane's wire.c) by every job layout, since the header knows no type
 * of its own. The MAC itself is checked by coll_accept() with the job's
 * key; here only its room is. */
#include <gw/wire.h>

#include "coll_internal.h"

/* Both carry a frame (FRAME required), may be re-sends and may be MACed. */
#define AGG_FLAGS (GW_PKT_F_RETX | GW_PKT_F_FRAME | GW_PKT_F_MAC)

/* A body (bitmap + frame) of at least one frame byte, and a frame no
 * larger than any frame may be. */
static int body_fits(const gw_pkt_hdr *h, size_t payload)
{
	size_t mac = (h->flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0;
	if (payload < (size_t)h->sack_len + 1 + mac ||
	    payload - mac - h->sack_len > GW_PKT_PAYLOAD_MAX)
		return GW_ERR(GW_ELENGTH);
	return GW_OK;
}

static int up_shape(const gw_pkt_hdr *h, size_t payload)
{
	if (h->sack_len)
		return GW_ERR(GW_ERESERVED);
	return body_fits(h, payload);
}

static int result_shape(const gw_pkt_hdr *h, size_t payload)
{
	if (!h->sack_len)
		return GW_ERR(GW_ELENGTH);   /* a RESULT names its contributors */
	return body_fits(h, payload);
}

static int agg_fields(const gw_pkt_hdr *h, const uint8_t *payload, size_t len)
{
	(void)payload;
	(void)len;
	return h->chunk < GW_PKT_CHUNK_LIMIT ? GW_OK : GW_ERR(GW_ERANGE);
}

static const gw_pkt_type up_type = {
	.type = GW_PKT_UP, .name = "UP", .flags = AGG_FLAGS, .need = GW_PKT_F_FRAME,
	.shape = up_shape, .fields = agg_fields,
};

static const gw_pkt_type result_type = {
	.type = GW_PKT_RESULT, .name = "RESULT", .flags = AGG_FLAGS,
	.need = GW_PKT_F_FRAME, .shape = result_shape, .fields = agg_fields,
};

/* CTRL: a fixed body, MACed in a keyed job; never a frame. */
static int ctrl_shape(const gw_pkt_hdr *h, size_t payload)
{
	if (h->sack_len)
		return GW_ERR(GW_ERESERVED);
	size_t mac = (h->flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0;
	return payload == COLL_CTRL_LEN + mac ? GW_OK : GW_ERR(GW_ELENGTH);
}

static int ctrl_fields(const gw_pkt_hdr *h, const uint8_t *payload, size_t len)
{
	(void)len;
	if (h->tensor || h->chunk || payload[1] > COLL_ROLE_SHARD)
		return GW_ERR(GW_ERESERVED);
	/* Reserved body bytes (§5.10): 2-3, 65-71 (24-31 were until 0.5:
	 * the layout's tensors and hash now). */
	static const uint8_t reserved[][2] = {{2, 4}, {65, 72}};
	for (size_t r = 0; r < GW_ARRAY_SIZE(reserved); r++)
		for (unsigned i = reserved[r][0]; i < reserved[r][1]; i++)
			if (payload[i])
				return GW_ERR(GW_ERESERVED);
	return payload[0] >= COLL_CTRL_HEARTBEAT && payload[0] <= COLL_CTRL_KIND_MAX
		       ? GW_OK : GW_ERR(GW_ECORRUPT);
}

static const gw_pkt_type ctrl_type = {
	.type = GW_PKT_CTRL, .name = "CTRL", .flags = GW_PKT_F_MAC, .need = 0,
	.shape = ctrl_shape, .fields = ctrl_fields,
};

int coll_wire_register(void)
{
	int rc = gw_pkt_register(&up_type);
	if (rc >= 0)
		rc = gw_pkt_register(&result_type);
	return rc < 0 ? rc : gw_pkt_register(&ctrl_type);
}
