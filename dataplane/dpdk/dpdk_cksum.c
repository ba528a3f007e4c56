/* DPDK backend: UDP checksums computed in software, for ports that do not
 * offload them (memif, af_xdp, af_packet, tap).
 *
 * DPDK's rte_raw_cksum() is an inline loop over 16-bit words; at our
 * -O2 and the baseline x86-64 target it stays a word-at-a-time loop, and
 * at full-MTU packets it was the single largest cost of the receive path
 * (perf: 40% of a memif receiver, capping the raw loop at 1.0 Mpps). The
 * same DPDK function compiled once more for AVX2, picked at load time,
 * vectorises (2.7 Mpps). No checksum code of our own: only the target.
 */
#include <rte_byteorder.h>
#include <rte_ip.h>

#include "dpdk_internal.h"

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CKSUM_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef CKSUM_CLONES
#define CKSUM_CLONES
#endif

CKSUM_CLONES uint32_t gw_dpdk_raw_sum(const void *p, size_t len)
{
	return rte_raw_cksum(p, len);
}

/* The ones' complement sum of the UDP datagram and the IPv4 pseudo header,
 * folded to 16 bits. */
static uint16_t udp_sum(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp,
			uint32_t l4_len)
{
	uint32_t sum = gw_dpdk_raw_sum(udp, l4_len);
	sum += rte_ipv4_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

uint16_t gw_dpdk_udp_cksum(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp)
{
	uint16_t ck = (uint16_t)~udp_sum(ip, udp, rte_be_to_cpu_16(udp->dgram_len));
	/* RFC 768: a computed zero is sent as all ones (zero means "none"). */
	return ck ? ck : 0xffff;
}

bool gw_dpdk_udp_cksum_ok(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp,
			  uint32_t l4_len)
{
	return udp_sum(ip, udp, l4_len) == 0xffff;
}
