/* dpdk_peer --test bad: frames built by hand and sent with rte_eth_tx_burst
 * on the port the client's gw_dp drives (port 0), next to its own traffic.
 * Each kind is a correct frame with one thing wrong; the server must drop
 * every one and count it in rx_bad, and must deliver the correct frames
 * (which it echoes). */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dpdk_peer.h"

#define PORT 0
#define PAYLOAD 64
#define COPIES 3
enum { T_STATS = 4 };

enum kind {
	K_VALID, K_VALID_NO_UDP_CSUM,
	K_RUNT, K_ARP, K_IPV6, K_VERSION, K_IHL, K_TOTLEN_LONG, K_TOTLEN_SHORT,
	K_TCP, K_PORT, K_DST_IP, K_IP_CSUM, K_UDP_CSUM, K_PAYLOAD_FLIP, K_FRAGMENT,
	K_UDP_LEN, K_COUNT
};

static const char *const names[K_COUNT] = {
	"valid", "valid, UDP checksum 0 (none)",
	"runt (30 bytes)", "ARP ethertype", "IPv6 ethertype", "IP version 6 in an IPv4 frame",
	"IHL 4", "total length beyond the frame", "total length below IHL + 8",
	"TCP protocol", "wrong UDP port", "wrong destination IP", "bad IPv4 checksum",
	"bad UDP checksum", "payload bit flipped after the checksum", "fragment (MF)",
	"UDP length != IP payload",
};

static void ip_csum(struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static void udp_csum(struct rte_ipv4_hdr *ip, struct rte_udp_hdr *udp)
{
	udp->dgram_cksum = 0;
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
}

static struct rte_mbuf *build(struct rte_mempool *mp, enum kind k, const gw_endpoint *local,
			      const gw_endpoint *srv)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (!m)
		return NULL;
	uint32_t len = RTE_ETHER_HDR_LEN + 20 + 8 + PAYLOAD;
	uint8_t *b = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)b;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *pl = (uint8_t *)(udp + 1);

	memset(&eth->dst_addr, 0xff, 6);
	rte_eth_macaddr_get(PORT, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(20 + 8 + PAYLOAD);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(local->ip);
	ip->dst_addr = rte_cpu_to_be_32(srv->ip);
	udp->src_port = rte_cpu_to_be_16(local->port);
	udp->dst_port = rte_cpu_to_be_16(srv->port);
	udp->dgram_len = rte_cpu_to_be_16(8 + PAYLOAD);
	peer_echo_fill(pl, PAYLOAD, 1000 + k);
	ip_csum(ip);
	udp_csum(ip, udp);

	switch (k) {
	case K_VALID: break;
	case K_VALID_NO_UDP_CSUM: udp->dgram_cksum = 0; break;
	case K_RUNT: rte_pktmbuf_trim(m, (uint16_t)(len - 30)); break;
	case K_ARP: eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP); break;
	case K_IPV6: eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6); break;
	case K_VERSION: ip->version_ihl = 0x65; ip_csum(ip); break;
	case K_IHL: ip->version_ihl = 0x44; ip_csum(ip); break;
	case K_TOTLEN_LONG:
		ip->total_length = rte_cpu_to_be_16(20 + 8 + PAYLOAD + 600);
		ip_csum(ip);
		break;
	case K_TOTLEN_SHORT: ip->total_length = rte_cpu_to_be_16(20 + 4); ip_csum(ip); break;
	case K_TCP: ip->next_proto_id = IPPROTO_TCP; ip_csum(ip); break;
	case K_PORT:
		udp->dst_port = rte_cpu_to_be_16((uint16_t)(srv->port + 1));
		udp_csum(ip, udp);
		break;
	case K_DST_IP:
		ip->dst_addr = rte_cpu_to_be_32(srv->ip + 1);
		ip_csum(ip);
		udp_csum(ip, udp);
		break;
	case K_IP_CSUM: ip->hdr_checksum ^= 0x1234; break;
	case K_UDP_CSUM: udp->dgram_cksum ^= 0x0101; break;
	case K_PAYLOAD_FLIP: pl[PAYLOAD / 2] ^= 0x10; break;
	case K_FRAGMENT:
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
		ip_csum(ip);
		break;
	case K_UDP_LEN:
		udp->dgram_len = rte_cpu_to_be_16(8 + PAYLOAD / 2);
		udp_csum(ip, udp);
		break;
	case K_COUNT: break;
	}
	return m;
}

static bool inject(struct rte_mempool *mp, enum kind k, unsigned copies,
		   const gw_endpoint *local, const gw_endpoint *srv)
{
	for (unsigned i = 0; i < copies; i++) {
		struct rte_mbuf *m = build(mp, k, local, srv);
		if (!m)
			return false;
		double end = peer_now() + 1;
		while (rte_eth_tx_burst(PORT, 0, &m, 1) != 1)
			if (peer_now() > end) {
				rte_pktmbuf_free(m);
				return false;
			}
	}
	return true;
}

int peer_test_bad(gw_dp *dp, const gw_endpoint *local, const gw_endpoint *srv)
{
	struct rte_mempool *mp = rte_pktmbuf_pool_create("inject", 255, 0, 0,
							 RTE_MBUF_DEFAULT_BUF_SIZE,
							 rte_socket_id());
	if (!mp) {
		fprintf(stderr, "client: FAIL: inject mempool\n");
		return 1;
	}
	int fails = 0;
	uint64_t seq = 1000;
	uint64_t v[5];
	if (!peer_stats(dp, srv, T_STATS, seq++, v)) {
		fprintf(stderr, "client: FAIL: server does not answer STATS\n");
		rte_mempool_free(mp);
		return 1;
	}
	uint64_t bad0 = v[2];
	for (int k = 0; k < K_COUNT; k++) {
		bool valid = k == K_VALID || k == K_VALID_NO_UDP_CSUM;
		unsigned copies = valid ? 1 : COPIES;
		if (!inject(mp, (enum kind)k, copies, local, srv)) {
			fprintf(stderr, "client: FAIL: could not send '%s'\n", names[k]);
			fails++;
			continue;
		}
		if (valid) {
			gw_pkt *r = peer_await(dp, 0, 0, 1.0);
			uint8_t want[PAYLOAD];
			peer_echo_fill(want, PAYLOAD, 1000 + (uint32_t)k);
			if (!r || r->len != PAYLOAD || memcmp(r->data, want, PAYLOAD)) {
				fprintf(stderr, "client: FAIL: hand-built '%s' frame not delivered\n",
					names[k]);
				fails++;
			}
			if (r)
				gw_dp_free(dp, &r, 1);
		}
		/* STATS goes out after the injected frames on the same queue,
		 * so the server has seen them when it answers. */
		if (!peer_stats(dp, srv, T_STATS, seq++, v)) {
			fprintf(stderr, "client: FAIL: no STATS after '%s'\n", names[k]);
			fails++;
			continue;
		}
		uint64_t want = valid ? 0 : copies;
		if (v[2] - bad0 != want) {
			fprintf(stderr, "client: FAIL: '%s': server rx_bad grew by %llu, not %llu\n",
				names[k], (unsigned long long)(v[2] - bad0), (unsigned long long)want);
			fails++;
		} else {
			printf("client: %-40s %s\n", names[k],
			       valid ? "delivered" : "dropped and counted");
		}
		bad0 = v[2];
	}
	rte_mempool_free(mp);
	return fails ? 1 : 0;
}
