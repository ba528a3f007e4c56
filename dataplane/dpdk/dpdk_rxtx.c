/* DPDK backend: the hot path. tx writes Ethernet/IPv4/UDP in front of
 * gw_pkt.data and hands the mbufs to the PMD with an extra reference, so
 * the caller keeps them; rx validates every header before it believes a
 * length in it; wait sleeps on the rx interrupt or backs off. No
 * allocation and no syscall per packet. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_epoll.h>
#include <rte_pause.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpdk_internal.h"

#define IPV4_HDR_LEN 20
#define UDP_HDR_LEN 8
/* Sleeping back-off of gw_dp_wait() without interrupts: each idle wait
 * sleeps longer, up to the cap; a received packet resets it. */
#define BACKOFF_MIN_US 8u
#define BACKOFF_MAX_US 256u
/* ... and at most this while the port is active (spin()): a reply that
 * lands early in a long sleep waits out the rest of it. */
#define BACKOFF_ACTIVE_MAX_US 32u
/* Interrupt wake-ups that found nothing before wait() stops trusting the
 * interrupt and falls back to backing off. */
#define SPURIOUS_MAX 64u

static const struct rte_ether_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

/* ---- tx ------------------------------------------------------------------- */

static inline void build(struct dpdk_dp *d, gw_pkt *p, struct rte_mbuf *m)
{
	uint8_t *l2 = p->data - DPDK_HDR_LEN;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)l2;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(l2 + RTE_ETHER_HDR_LEN);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)((uint8_t *)ip + IPV4_HDR_LEN);
	static const uint8_t zero[6];

	m->data_off = (uint16_t)(l2 - (uint8_t *)m->buf_addr);
	m->data_len = (uint16_t)(DPDK_HDR_LEN + p->len);
	m->pkt_len = m->data_len;

	if (memcmp(p->peer.mac, zero, 6))
		memcpy(&eth->dst_addr, p->peer.mac, 6);
	else
		eth->dst_addr = bcast;
	eth->src_addr = d->mac;
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(IPV4_HDR_LEN + UDP_HDR_LEN + p->len));
	ip->packet_id = rte_cpu_to_be_16(d->ip_id++);
	ip->fragment_offset = RTE_BE16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(d->dp.local.ip);
	ip->dst_addr = rte_cpu_to_be_32(p->peer.ip);

	udp->src_port = rte_cpu_to_be_16(d->dp.local.port);
	udp->dst_port = rte_cpu_to_be_16(p->peer.port);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(UDP_HDR_LEN + p->len));
	udp->dgram_cksum = 0;

	/* A packet that came in through rx carries rx flags: keep only what
	 * describes the buffer itself. */
	uint64_t ol = m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL);
	if (d->tx_ip_offload || d->tx_udp_offload) {
		m->l2_len = RTE_ETHER_HDR_LEN;
		m->l3_len = IPV4_HDR_LEN;
		ol |= RTE_MBUF_F_TX_IPV4;
	}
	if (d->tx_ip_offload)
		ol |= RTE_MBUF_F_TX_IP_CKSUM;
	else
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	if (d->tx_udp_offload) {
		ol |= RTE_MBUF_F_TX_UDP_CKSUM;
		udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, ol);
	} else if (d->udp_csum_sw) {
		udp->dgram_cksum = gw_dpdk_udp_cksum(ip, udp);
	}
	/* Else 0, "no checksum" (RFC 768, allowed over IPv4): every gradwire
	 * packet carries its own header checksum over a hash of its payload,
	 * or over the length of a frame whose XXH3 the receiver verifies
	 * (wire-format §5.3), so a software UDP checksum only re-checks
	 * those bytes, at a pass over each packet on the sender. */
	m->ol_flags = ol;
}

int gw_dpdk_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct rte_mbuf *m[DPDK_BURST_MAX];
	unsigned sent = 0;
	while (sent < n) {
		unsigned b = GW_MIN(n - sent, DPDK_BURST_MAX);
		uint64_t bytes = 0;
		for (unsigned i = 0; i < b; i++) {
			gw_pkt *p = pkts[sent + i];
			if (GW_UNLIKELY(p->len > dp->payload_max)) {
				/* Larger than one frame: refused, with the
				 * packets before it still sent. */
				if (!i && !sent)
					return GW_ERR(GW_EINVAL);
				b = i;
				n = sent + i;
				break;
			}
			m[i] = dpdk_mbuf(p);
			build(d, p, m[i]);
			bytes += p->len;
			/* The caller keeps the packet: the PMD frees only
			 * the reference it is given here. */
			rte_mbuf_refcnt_update(m[i], 1);
		}
		uint16_t q = 0;
		if (b && gw_dpdk_enter(d)) {
			q = rte_eth_tx_burst(d->port, 0, m, (uint16_t)b);
			gw_dpdk_leave(d);
		}
		for (unsigned i = q; i < b; i++) {
			rte_mbuf_refcnt_update(m[i], -1);
			bytes -= pkts[sent + i]->len;
		}
		dp->stats.tx_pkts += q;
		dp->stats.tx_bytes += bytes;
		sent += q;
		if (q < b) {
			dp->stats.tx_full += n - sent;
			break;
		}
	}
	return (int)sent;
}

/* ---- rx ------------------------------------------------------------------- */

/* What the checksum flags of an rx mbuf say: 1 good, -1 bad, 0 unknown. */
static inline int ck_flag(uint64_t ol, uint64_t mask, uint64_t good, uint64_t bad)
{
	uint64_t f = ol & mask;
	if (f == good || f == mask)   /* mask: NONE, data verified intact */
		return 1;
	return f == bad ? -1 : 0;
}

bool gw_dpdk_rx_parse(struct dpdk_dp *d, struct rte_mbuf *m)
{
	/* Only whole frames in one buffer of our pool: the payload must be
	 * contiguous and the gw_pkt must live in the private area. */
	if (m->nb_segs != 1 || m->pool != d->pool || m->pkt_len != m->data_len)
		return false;
	uint32_t len = m->data_len;
	uint8_t *b = rte_pktmbuf_mtod(m, uint8_t *);
	if (len < RTE_ETHER_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN)
		return false;
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)b;
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4))
		return false;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(b + RTE_ETHER_HDR_LEN);
	uint32_t ihl = (ip->version_ihl & 0x0f) * 4u;
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	/* After these, the IPv4 header with its options and the UDP header
	 * lie inside the frame (Ethernet padding may follow tot). */
	if ((ip->version_ihl >> 4) != 4 || ihl < IPV4_HDR_LEN ||
	    tot < ihl + UDP_HDR_LEN || RTE_ETHER_HDR_LEN + tot > len)
		return false;
	if (ip->next_proto_id != IPPROTO_UDP ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return false;
	if (d->dp.local.ip && ip->dst_addr != rte_cpu_to_be_32(d->dp.local.ip))
		return false;
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + ihl);
	if (udp->dst_port != rte_cpu_to_be_16(d->dp.local.port) ||
	    rte_be_to_cpu_16(udp->dgram_len) != tot - ihl)
		return false;

	int ipck = d->rx_ip_offload ? ck_flag(m->ol_flags, RTE_MBUF_F_RX_IP_CKSUM_MASK,
					      RTE_MBUF_F_RX_IP_CKSUM_GOOD,
					      RTE_MBUF_F_RX_IP_CKSUM_BAD) : 0;
	if (ipck < 0 || (ipck == 0 && rte_ipv4_cksum(ip) != 0))
		return false;
	/* A zero UDP checksum means the sender computed none (RFC 768); the
	 * gradwire frame inside carries its own. */
	if (udp->dgram_cksum != 0) {
		int l4ck = d->rx_udp_offload ? ck_flag(m->ol_flags, RTE_MBUF_F_RX_L4_CKSUM_MASK,
						       RTE_MBUF_F_RX_L4_CKSUM_GOOD,
						       RTE_MBUF_F_RX_L4_CKSUM_BAD) : 0;
		if (l4ck < 0)
			return false;
		if (l4ck == 0 && !gw_dpdk_udp_cksum_ok(ip, udp, tot - ihl))
			return false;
	}

	gw_pkt *p = dpdk_pkt(m);
	p->data = (uint8_t *)udp + UDP_HDR_LEN;
	p->len = tot - ihl - UDP_HDR_LEN;
	uint32_t end = (uint32_t)(p->data - (uint8_t *)m->buf_addr);
	p->room = GW_MIN(d->dp.payload_max, m->buf_len > end ? m->buf_len - end : 0u);
	p->peer.ip = rte_be_to_cpu_32(ip->src_addr);
	p->peer.port = rte_be_to_cpu_16(udp->src_port);
	memcpy(p->peer.mac, &eth->src_addr, 6);
	return true;
}

int gw_dpdk_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct rte_mbuf *m[DPDK_BURST_MAX], *bad[DPDK_BURST_MAX];
	unsigned got, nbad = 0, out = 0;
	n = GW_MIN(n, DPDK_BURST_MAX);
	if (d->stash_i < d->stash_n) {
		/* What wait() saw first goes out first. */
		got = GW_MIN(n, (unsigned)(d->stash_n - d->stash_i));
		memcpy(m, d->stash + d->stash_i, got * sizeof(m[0]));
		d->stash_i = (uint16_t)(d->stash_i + got);
	} else if (n && gw_dpdk_enter(d)) {
		got = rte_eth_rx_burst(d->port, 0, m, (uint16_t)n);
		gw_dpdk_leave(d);
	} else {
		got = 0;
	}
	uint64_t bytes = 0;
	for (unsigned i = 0; i < got; i++) {
		if (i + 1 < got)
			rte_prefetch0(rte_pktmbuf_mtod(m[i + 1], void *));
		if (GW_LIKELY(gw_dpdk_rx_parse(d, m[i]))) {
			gw_pkt *p = dpdk_pkt(m[i]);
			bytes += p->len;
			pkts[out++] = p;
		} else {
			bad[nbad++] = m[i];
		}
	}
	if (nbad) {
		rte_pktmbuf_free_bulk(bad, nbad);
		dp->stats.rx_bad += nbad;
	}
	if (got) {
		d->backoff_us = 0;
		d->last_rx = rte_get_timer_cycles();
	}
	dp->stats.rx_pkts += out;
	dp->stats.rx_bytes += bytes;
	return (int)out;
}

/* ---- wait ----------------------------------------------------------------- */

/* Whether a packet is waiting: receives into the stash, which rx_burst
 * empties before it polls the port again. */
static bool peek(struct dpdk_dp *d)
{
	if (d->stash_i < d->stash_n)
		return true;
	d->stash_i = 0;
	d->stash_n = 0;
	if (gw_dpdk_enter(d)) {
		d->stash_n = rte_eth_rx_burst(d->port, 0, d->stash, DPDK_BURST_MAX);
		gw_dpdk_leave(d);
	}
	return d->stash_n > 0;
}

/* The rx interrupt on or off; false (nothing done) while a guarded
 * port's link is down: memif keeps the switch in its shared ring. */
static bool intr_set(struct dpdk_dp *d, bool on)
{
	if (!gw_dpdk_enter(d))
		return false;
	if (on)
		rte_eth_dev_rx_intr_enable(d->port, 0);
	else
		rte_eth_dev_rx_intr_disable(d->port, 0);
	gw_dpdk_leave(d);
	return true;
}

static int wait_intr(struct dpdk_dp *d, unsigned timeout_us)
{
	if (!intr_set(d, true)) {
		/* Link down: nothing to wake us; look again a little later. */
		rte_delay_us_sleep(GW_MAX(1u, GW_MIN(timeout_us, BACKOFF_MAX_US)));
		return GW_OK;
	}
	/* A packet that arrived before the interrupt was armed raised none. */
	if (peek(d)) {
		intr_set(d, false);
		return GW_OK;
	}
	d->dp.stats.idle_waits++;
	struct pollfd pfd = {.fd = d->epfd, .events = POLLIN};
	struct timespec ts = {.tv_sec = timeout_us / 1000000,
			      .tv_nsec = (long)(timeout_us % 1000000) * 1000};
	int r = ppoll(&pfd, 1, &ts, NULL);
	if (r > 0) {
		/* Let the EAL consume the event (it reads the event fd of
		 * drivers that need it). */
		struct rte_epoll_event ev[4];
		rte_epoll_wait(d->epfd, ev, 4, 0);
	}
	intr_set(d, false);
	if (r < 0 && errno != EINTR)
		return GW_ERR(GW_EIO);
	if (r > 0) {
		if (peek(d))
			d->spurious = 0;
		else if (++d->spurious >= SPURIOUS_MAX)
			d->intr = false;   /* an event that never clears: back off */
	}
	return GW_OK;
}

/* Polls for up to spin_cycles (and timeout_us) while the port was active
 * in the last active_cycles: a peer in the middle of a transfer answers in
 * microseconds, and the first sleep would cost more than that. An idle
 * port sleeps at once, so idle processes leave the cores to others, and
 * so does every port whose policy is GW_DP_WAIT_SLEEP. True if a packet
 * came. */
static bool spin(struct dpdk_dp *d, unsigned timeout_us)
{
	uint64_t now = rte_get_timer_cycles();
	if (!d->spin_cycles || d->dp.wait_sleep || now - d->last_rx > d->active_cycles)
		return false;
	uint64_t per_us = GW_MAX(rte_get_timer_hz() / 1000000, 1u);
	uint64_t end = now + GW_MIN(d->spin_cycles, per_us * timeout_us);
	do {
		if (peek(d)) {
			d->last_rx = rte_get_timer_cycles();
			return true;
		}
		rte_pause();
	} while (rte_get_timer_cycles() < end);
	return false;
}

/* gw_dp_wait_any(): the rx interrupt's epoll set is the wake-up. */
bool gw_dpdk_ready(gw_dp *dp)
{
	return peek((struct dpdk_dp *)dp);
}

int gw_dpdk_arm(gw_dp *dp)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	if (!d->intr || !intr_set(d, true))
		return GW_ERR(GW_EUNSUPPORTED);
	return d->epfd;
}

void gw_dpdk_disarm(gw_dp *dp)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct rte_epoll_event ev[4];
	rte_epoll_wait(d->epfd, ev, 4, 0);   /* consumes what fired */
	intr_set(d, false);
}

int gw_dpdk_wait(gw_dp *dp, unsigned timeout_us)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	if (d->stash_i < d->stash_n || !timeout_us)
		return GW_OK;
	if (spin(d, timeout_us))
		return GW_OK;
	if (d->intr)
		return wait_intr(d, timeout_us);
	/* No interrupt: sleep in growing steps, looking in between. Sleeping
	 * (not spinning) lets more pollers than cores progress; the EAL's
	 * sleep is used because some PMDs' signals (tap's SIGIO) cut sleep()
	 * short. */
	uint64_t per_us = GW_MAX(rte_get_timer_hz() / 1000000, 1u);
	uint64_t now = rte_get_timer_cycles();
	uint64_t end = now + per_us * timeout_us;
	dp->stats.idle_waits++;
	unsigned cap = now - d->last_rx <= d->active_cycles ? BACKOFF_ACTIVE_MAX_US
							     : BACKOFF_MAX_US;
	while (now < end) {
		d->backoff_us = d->backoff_us ? GW_MIN(d->backoff_us * 2, cap) : BACKOFF_MIN_US;
		uint64_t left_us = (end - now) / per_us;
		rte_delay_us_sleep((unsigned)GW_MAX(1u, GW_MIN(left_us, (uint64_t)d->backoff_us)));
		if (peek(d))
			break;
		now = rte_get_timer_cycles();
	}
	return GW_OK;
}
