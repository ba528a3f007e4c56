/* The receive path's checks on one UD completion (rdma_rx.h). */
#include <arpa/inet.h>
#include <string.h>

#include "rdma_rx.h"

/* Told apart as ib_core does (ib_get_rdma_header_version): RoCEv2 over
 * IPv4 leaves the first 20 bytes undefined (rxe zeroes them) and puts the
 * IPv4 header after them, so a first byte whose version is not 6 means
 * IPv4; with a 6 there, a 20-byte IPv4 header with a valid checksum still
 * means IPv4. Otherwise it is a GRH whose source GID must be IPv4-mapped
 * (::ffff:a.b.c.d). */
uint32_t rdma_grh_ip(const uint8_t *g)
{
	const uint8_t *ip4 = g + 20;
	int v4 = 0;
	if (g[0] >> 4 != 6) {
		v4 = ip4[0] >> 4 == 4;
		if (!v4)
			return 0;
	} else if (ip4[0] == 0x45) {
		uint32_t sum = 0;
		for (int i = 0; i < 20; i += 2)
			sum += (uint32_t)ip4[i] << 8 | ip4[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		v4 = sum == 0xffff;
	}
	if (v4)
		return (uint32_t)ip4[12] << 24 | (uint32_t)ip4[13] << 16 |
		       (uint32_t)ip4[14] << 8 | ip4[15];
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	if (!memcmp(g + 8, mapped, sizeof(mapped)))
		return (uint32_t)g[20] << 24 | (uint32_t)g[21] << 16 | (uint32_t)g[22] << 8 |
		       g[23];
	return 0;
}

int rdma_rx_classify(const rdma_rx_wc *wc, const uint8_t *grh, uint32_t room,
		     gw_endpoint *peer, uint32_t *len)
{
	/* A device never writes more than the buffer it was given; the check
	 * keeps a length the code would trust from being taken on faith. */
	if (!wc->ok || !wc->grh || !wc->imm || wc->byte_len <= RDMA_GRH_LEN ||
	    wc->byte_len - RDMA_GRH_LEN > room)
		return GW_ECORRUPT;
	uint32_t port = ntohl(wc->imm_data);
	if (!port || port > 0xffff)
		return GW_ECORRUPT;
	uint32_t ip = rdma_grh_ip(grh);
	if (!ip)
		return GW_ECORRUPT;
	memset(peer, 0, sizeof(*peer));
	peer->ip = ip;
	peer->port = (uint16_t)port;
	*len = wc->byte_len - RDMA_GRH_LEN;
	return GW_OK;
}
