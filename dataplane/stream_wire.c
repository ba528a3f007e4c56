/* The reliable stream's packet types, DATA and ACK (docs/wire-format.md
 * §5.3, §5.4), registered with the packet header (wire.c) when a stream is
 * made: the header knows no type of its own. */
#include <gw/wire.h>

#include "gw_util.h"
#include "stream_internal.h"

static int data_shape(const gw_pkt_hdr *h, size_t payload)
{
	if (h->sack_len)
		return GW_ERR(GW_ERESERVED);
	if (payload > GW_PKT_PAYLOAD_MAX)
		return GW_ERR(GW_ELENGTH);
	return GW_OK;
}

static int data_fields(const gw_pkt_hdr *h, const uint8_t *payload, size_t len)
{
	(void)payload;
	if (h->chunk >= GW_PKT_CHUNK_LIMIT)
		return GW_ERR(GW_ERANGE);
	/* An empty DATA packet only says "this tensor has no chunks". */
	if (!len && (h->chunk || !(h->flags & GW_PKT_F_LAST)))
		return GW_ERR(GW_ELENGTH);
	return GW_OK;
}

static int ack_shape(const gw_pkt_hdr *h, size_t payload)
{
	if (h->sack_len > GW_PKT_SACK_MAX || payload != h->sack_len)
		return GW_ERR(GW_ELENGTH);
	return GW_OK;
}

static int ack_fields(const gw_pkt_hdr *h, const uint8_t *payload, size_t len)
{
	(void)len;
	if ((uint64_t)h->chunk + 8u * h->sack_len > GW_PKT_CHUNK_LIMIT)
		return GW_ERR(GW_ERANGE);
	/* Bit 0 is the cumulative chunk itself, which the ACK says is missing. */
	if (h->sack_len && (payload[0] & 1u))
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}

static const gw_pkt_type data_type = {
	.type = GW_PKT_DATA, .name = "DATA",
	.flags = GW_PKT_F_LAST | GW_PKT_F_RETX | GW_PKT_F_FRAME,
	.shape = data_shape, .fields = data_fields,
};

static const gw_pkt_type ack_type = {
	.type = GW_PKT_ACK, .name = "ACK", .flags = 0,
	.shape = ack_shape, .fields = ack_fields,
};

int gw_stream_wire_register(void)
{
	int rc = gw_pkt_register(&data_type);
	return rc < 0 ? rc : gw_pkt_register(&ack_type);
}
