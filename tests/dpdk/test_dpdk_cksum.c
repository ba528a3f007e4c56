/* The DPDK backend's software UDP checksum (dataplane/dpdk/dpdk_cksum.c,
 * DPDK's rte_raw_cksum built for AVX2 as well and picked at load time)
 * agrees with DPDK's reference rte_ipv4_udptcp_cksum() on every datagram
 * length from an empty payload to a jumbo frame, at every alignment; the
 * verifier accepts what it computed and rejects every single-bit flip of a
 * datagram. Runs on whatever clone this CPU selects. */
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "../gw_test.h"
#include "dpdk/dpdk_internal.h"

#define MAX_L4 9000u

static uint8_t buf[8 + 20 + MAX_L4] __attribute__((aligned(64)));

/* An IPv4 header and a UDP datagram of l4_len bytes (random payload) at
 * buf + off; returns the UDP header. */
static struct rte_udp_hdr *make(uint32_t off, uint32_t l4_len, gw_test_rng *rng,
				struct rte_ipv4_hdr **ipp)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + l4_len));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32((uint32_t)gw_test_rand(rng));
	ip->dst_addr = rte_cpu_to_be_32((uint32_t)gw_test_rand(rng));
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = (uint16_t)gw_test_rand(rng);
	udp->dst_port = (uint16_t)gw_test_rand(rng);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)l4_len);
	udp->dgram_cksum = 0;
	uint8_t *pl = (uint8_t *)(udp + 1);
	for (uint32_t i = 0; i < l4_len - 8; i++)
		pl[i] = (uint8_t)gw_test_rand(rng);
	*ipp = ip;
	return udp;
}

static void matches_dpdk(void **state)
{
	(void)state;
	gw_test_rng rng = {1};
	for (uint32_t l4 = 8; l4 <= MAX_L4; l4 += l4 < 300 ? 1 : 37) {
		for (uint32_t off = 0; off < 8; off++) {
			struct rte_ipv4_hdr *ip;
			struct rte_udp_hdr *udp = make(off, l4, &rng, &ip);
			uint16_t want = rte_ipv4_udptcp_cksum(ip, udp);
			uint16_t got = gw_dpdk_udp_cksum(ip, udp);
			GW_CHECK(got == want, "length %u offset %u: 0x%04x, DPDK says 0x%04x",
				 l4, off, got, want);
			udp->dgram_cksum = got;
			GW_CHECK(gw_dpdk_udp_cksum_ok(ip, udp, l4),
				 "length %u offset %u: own checksum rejected", l4, off);
		}
	}
}

/* The all-zero datagram whose sum is 0xffff must be sent as 0xffff, never
 * 0 (which means "no checksum"). */
static void zero_is_sent_as_ones(void **state)
{
	(void)state;
	gw_test_rng rng = {2};
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp = make(0, 10, &rng, &ip);
	/* Choose the 2 payload bytes so that the whole sum is 0xffff. */
	uint8_t *pl = (uint8_t *)(udp + 1);
	pl[0] = pl[1] = 0;
	/* The checksum of the rest is ~sum(rest): as payload, it brings the
	 * sum to 0xffff, whose complement is 0. */
	uint16_t fill = gw_dpdk_udp_cksum(ip, udp);
	memcpy(pl, &fill, 2);
	GW_CHECK(gw_dpdk_udp_cksum(ip, udp) == 0xffff,
		 "a zero checksum was not turned into 0xffff (got 0x%04x)",
		 gw_dpdk_udp_cksum(ip, udp));
	GW_CHECK(rte_ipv4_udptcp_cksum(ip, udp) == 0xffff, "DPDK disagrees");
}

static void every_bit_flip_rejected(void **state)
{
	(void)state;
	gw_test_rng rng = {3};
	const uint32_t lens[] = {9, 64, 137, 1480};
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		struct rte_ipv4_hdr *ip;
		struct rte_udp_hdr *udp = make(1, lens[k], &rng, &ip);
		udp->dgram_cksum = gw_dpdk_udp_cksum(ip, udp);
		uint8_t *d = (uint8_t *)udp;
		for (uint32_t bit = 0; bit < lens[k] * 8; bit++) {
			d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			GW_CHECK(!gw_dpdk_udp_cksum_ok(ip, udp, lens[k]),
				 "length %u: flip of bit %u accepted", lens[k], bit);
			d[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
		GW_CHECK(gw_dpdk_udp_cksum_ok(ip, udp, lens[k]), "restored datagram rejected");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_dpdk),
		cmocka_unit_test(zero_is_sent_as_ones),
		cmocka_unit_test(every_bit_flip_rejected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
