/* Seeds of fuzz_rdma_rx.c (its input layout is there): completions as
 * soft-RoCE and an InfiniBand HCA deliver them, carrying a DATA packet
 * sealed by the dataplane's writer, and the ways a datagram that is not
 * gradwire's differs from them. Each name carries the verdict regress_main
 * checks: .ok or .GW_ECORRUPT. */
#include <string.h>

#include <gw/dataplane.h>
#include <gw/wire.h>

#include "seeds_dr.h"

enum { HDR = 11, GRH = 40, PKT = 96 };

static void st32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/* The completion fields and a RoCEv2 GRH area from 10.0.0.1 (IPv4 header
 * with its checksum), then a DATA packet of PKT bytes. */
static size_t base(uint8_t *in, uint32_t port)
{
	memset(in, 0, HDR + GRH + PKT);
	in[0] = 1 | 2 | 4;
	in[1] = (uint8_t)(port >> 24), in[2] = (uint8_t)(port >> 16);
	in[3] = (uint8_t)(port >> 8), in[4] = (uint8_t)port;
	in[9] = 0x00, in[10] = 0x10;  /* room 4096 */
	uint8_t *ip = in + HDR + 20;
	static const uint8_t v4[20] = {0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0,
				       10, 0, 0, 1, 10, 0, 0, 1};
	memcpy(ip, v4, sizeof(v4));
	ip[2] = (uint8_t)((20 + 8 + 12 + PKT + 4) >> 8), ip[3] = (uint8_t)(20 + 8 + 12 + PKT + 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8), ip[11] = (uint8_t)~sum;
	uint8_t *p = in + HDR + GRH;
	for (int i = GW_PKT_HDR_LEN; i < PKT; i++)
		p[i] = (uint8_t)(i * 7);
	gw_pkt_hdr h = {.type = GW_PKT_DATA, .rank = 1, .job = 7, .round = 3, .tensor = 1,
			.chunk = 5, .seq = 9};
	gw_pkt_write(p, &h, gw_pkt_payload_seed(0, 0, p + GW_PKT_HDR_LEN,
						PKT - GW_PKT_HDR_LEN));
	return HDR + GRH + PKT;
}

/* An InfiniBand GRH instead: version 6, source GID ::ffff:10.0.0.2. */
static void ib_grh(uint8_t *in)
{
	uint8_t *g = in + HDR;
	memset(g, 0, GRH);
	g[0] = 0x60;
	g[18] = g[19] = 0xff;
	g[20] = 10, g[23] = 2;
}

int seeds_rdma(const char *name, seed_write_fn write)
{
	if (name && strcmp(name, "rdma_rx"))
		return 0;
	uint8_t in[HDR + GRH + PKT];
	size_t n = base(in, 7000);
	write("rdma_rx", "rocev2.ok", in, n);
	ib_grh(in);
	write("rdma_rx", "ib-mapped-gid.ok", in, n);
	in[HDR + 10] = 1;             /* a GID that is not IPv4-mapped */
	write("rdma_rx", "ib-native-gid.GW_ECORRUPT", in, n);
	n = base(in, 7000);
	in[HDR] = 0x60;               /* version 6 first, IPv4 header valid */
	write("rdma_rx", "rocev2-v6-first.ok", in, n);
	in[HDR + 20 + 11] ^= 1;       /* ... with a wrong checksum: a GRH */
	write("rdma_rx", "rocev2-bad-csum.GW_ECORRUPT", in, n);
	n = base(in, 7000);
	in[0] &= (uint8_t)~4;
	write("rdma_rx", "no-imm.GW_ECORRUPT", in, n);
	n = base(in, 7000);
	in[0] &= (uint8_t)~2;
	write("rdma_rx", "no-grh.GW_ECORRUPT", in, n);
	n = base(in, 7000);
	in[0] &= (uint8_t)~1;
	write("rdma_rx", "error-status.GW_ECORRUPT", in, n);
	n = base(in, 0);
	write("rdma_rx", "port-0.GW_ECORRUPT", in, n);
	n = base(in, 65536 + 7000);
	write("rdma_rx", "imm-above-port.GW_ECORRUPT", in, n);
	n = base(in, 65535);
	write("rdma_rx", "port-65535.ok", in, n);
	n = base(in, 7000);
	in[9] = PKT - 1, in[10] = 0;  /* one byte more than the buffer holds */
	write("rdma_rx", "over-room.GW_ECORRUPT", in, n);
	in[9] = PKT;
	write("rdma_rx", "room-exact.ok", in, n);
	n = base(in, 7000);
	write("rdma_rx", "grh-only.GW_ECORRUPT", in, HDR + GRH);
	in[0] |= 8;                   /* the device's byte_len: beyond the bytes here */
	st32le(in + 5, GRH + 4096);
	write("rdma_rx", "byte-len-4096.ok", in, n);
	st32le(in + 5, 0xffffffffu);
	write("rdma_rx", "byte-len-huge.GW_ECORRUPT", in, n);
	st32le(in + 5, 3);
	write("rdma_rx", "byte-len-short.GW_ECORRUPT", in, n);
	return 1;
}
