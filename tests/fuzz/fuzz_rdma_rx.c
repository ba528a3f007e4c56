/* Fuzzes the RDMA backend's receive checks (dataplane/rdma/rdma_rx.c,
 * docs/wire-format.md §5.9): what rdma_rx_burst() makes of one UD receive
 * completion and the buffer the device wrote, before the packet header
 * parser sees it. The input is a completion and its buffer:
 *
 *   byte 0       bit 0 status success, bit 1 IBV_WC_GRH, bit 2
 *                IBV_WC_WITH_IMM, bit 3 byte_len from bytes 5..8 (a
 *                device's word, taken as it comes) instead of the bytes
 *                present
 *   bytes 1..4   imm_data as the completion holds it (network order)
 *   bytes 5..8   byte_len (little endian), with bit 3
 *   bytes 9..10  room: the receive buffer's bytes after the GRH area
 *                (little endian; 0 means 4096)
 *   bytes 11..   the buffer: the 40-byte GRH area (zero-padded when short),
 *                then the packet
 *
 * The GRH area is passed in a heap block of exactly 40 bytes, so
 * AddressSanitizer sees any read past it. The verdict must be the model's,
 * written here from the spec's words: accepted exactly when the status is
 * success, both flags are set, 40 < byte_len ≤ 40 + room, the immediate is
 * a port 1..65535 and the GRH area yields an IPv4 source (RoCEv2: bytes
 * 20..39 an IPv4 header, told by a first byte whose version is not 6 and a
 * version-4 byte 20, or a first byte of version 6 with byte 20 = 0x45 and
 * a valid header checksum; else a GRH whose source GID, bytes 8..23, is
 * ::ffff:a.b.c.d). A refusal is GW_ECORRUPT and writes nothing; an
 * accepted completion gives that IP and port, no MAC, and byte_len − 40
 * bytes. The accepted bytes present then go, in a block of exactly their
 * size, to gw_pkt_parse() as the stream's receive path would: any code,
 * no fault. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <gw/wire.h>

#include "fuzz_common.h"
#include "rdma_rx.h"

static uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One's-complement sum of the ten 16-bit words, folded: 0xffff when the
 * header's checksum field is right. */
static int ipv4_csum_ok(const uint8_t *h)
{
	uint64_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint64_t)(h[i] * 256u + h[i + 1]);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static uint32_t model_ip(const uint8_t *g)
{
	int v6_first = (g[0] & 0xf0) == 0x60;
	int v4 = v6_first ? g[20] == 0x45 && ipv4_csum_ok(g + 20) : (g[20] & 0xf0) == 0x40;
	if (!v4 && !v6_first)
		return 0;
	const uint8_t *a = v4 ? g + 32 : g + 20;
	if (!v4)
		for (int i = 8; i < 20; i++)
			if (g[i] != (i < 18 ? 0 : 0xff))
				return 0;
	return ntohl((uint32_t)a[0] | (uint32_t)a[1] << 8 | (uint32_t)a[2] << 16 |
		     (uint32_t)a[3] << 24);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 11)
		return 0;
	size_t body = size - 11;
	const uint8_t *buf = data + 11;
	uint8_t *grh = malloc(RDMA_GRH_LEN);
	GW_FUZZ_CHECK(grh);
	memset(grh, 0, RDMA_GRH_LEN);
	memcpy(grh, buf, body < RDMA_GRH_LEN ? body : RDMA_GRH_LEN);
	size_t present = body > RDMA_GRH_LEN ? body - RDMA_GRH_LEN : 0;

	rdma_rx_wc wc = {.ok = data[0] & 1, .grh = !!(data[0] & 2), .imm = !!(data[0] & 4)};
	memcpy(&wc.imm_data, data + 1, 4);
	wc.byte_len = data[0] & 8 ? rd32le(data + 5) : (uint32_t)(RDMA_GRH_LEN + present);
	uint32_t room = (uint32_t)data[9] | (uint32_t)data[10] << 8;
	if (!room)
		room = 4096;

	uint32_t port = ntohl(wc.imm_data), ip = model_ip(grh);
	int want = wc.ok && wc.grh && wc.imm && wc.byte_len > RDMA_GRH_LEN &&
		   wc.byte_len <= RDMA_GRH_LEN + (uint64_t)room && port >= 1 && port <= 65535 &&
		   ip != 0;

	gw_endpoint peer, before;
	memset(&peer, 0xa5, sizeof(peer));
	before = peer;
	uint32_t len = 0xdeadbeef;
	int rc = rdma_rx_classify(&wc, grh, room, &peer, &len);
	gw_fuzz_last_rc = rc;
	GW_FUZZ_CHECKF(rc == GW_OK || rc == GW_ECORRUPT, "rdma_rx_classify returned %d", rc);
	GW_FUZZ_CHECKF((rc == GW_OK) == want, "verdict %d, the model says %s", rc,
		       want ? "accept" : "refuse");
	if (rc < 0) {
		GW_FUZZ_CHECK(!memcmp(&peer, &before, sizeof(peer)) && len == 0xdeadbeef);
		free(grh);
		return 0;
	}
	static const uint8_t nomac[6];
	GW_FUZZ_CHECKF(peer.ip == ip && peer.port == port, "peer %08x:%u, want %08x:%u",
		       peer.ip, peer.port, ip, port);
	GW_FUZZ_CHECK(!memcmp(peer.mac, nomac, sizeof(nomac)));
	GW_FUZZ_CHECK(len == wc.byte_len - RDMA_GRH_LEN && len <= room);
	/* The packet bytes the input holds, as the stream would parse them. */
	size_t have = len < present ? len : present;
	uint8_t *pkt = malloc(have ? have : 1);
	GW_FUZZ_CHECK(pkt);
	memcpy(pkt, buf + RDMA_GRH_LEN, have);
	gw_pkt_hdr h;
	int prc = gw_pkt_parse(pkt, have, &h);
	GW_FUZZ_CHECK(prc <= 0);
	free(pkt);
	free(grh);
	return 0;
}
