/* DPDK backend: the mempool, and gw_dp alloc/free over it.
 *
 * One pool feeds both directions: the rx queue fills its ring from it and
 * the application allocates tx packets from it, so a received packet can
 * be sent back as it is. Every mbuf carries its gw_pkt in the private area
 * right after struct rte_mbuf; alloc only resets it. */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "dpdk_internal.h"

/* Mbufs a PMD may hold beyond its rx/tx rings (af_xdp's fill ring, memif's
 * ring slots, a NIC's rx batch refill). */
#define PMD_SLACK 2048u
#define POOL_CACHE 256u

static void init_priv(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	(void)mp, (void)arg, (void)idx;
	struct rte_mbuf *m = obj;
	gw_pkt *p = dpdk_pkt(m);
	memset(p, 0, sizeof(*p));
	p->priv = m;
}

int gw_dpdk_pool_create(struct dpdk_dp *d, uint32_t pkts, uint16_t nb_rxd, uint16_t nb_txd,
			uint16_t min_room)
{
	static unsigned serial;
	uint64_t n = (uint64_t)pkts + nb_rxd + nb_txd + 2ull * d->dp.burst + DPDK_BURST_MAX +
		     (uint64_t)POOL_CACHE * rte_lcore_count() + PMD_SLACK;
	/* A ring-backed pool is most compact at 2^k - 1 elements. */
	uint64_t sz = 1;
	while (sz - 1 < n)
		sz <<= 1;
	if (sz - 1 > UINT32_MAX)
		return GW_ERR(GW_EINVAL);

	/* Headroom, the largest frame the port may deliver (MTU, Ethernet
	 * header, one VLAN tag, CRC), and never less than DPDK's default,
	 * which some PMDs assume. */
	uint32_t room = RTE_PKTMBUF_HEADROOM + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN + d->mtu +
			RTE_ETHER_CRC_LEN;
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(d->port, &info) == 0 &&
	    room < RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize)
		room = RTE_PKTMBUF_HEADROOM + info.min_rx_bufsize;
	if (room < RTE_MBUF_DEFAULT_BUF_SIZE)
		room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (room < RTE_PKTMBUF_HEADROOM + (uint32_t)min_room)
		room = RTE_PKTMBUF_HEADROOM + (uint32_t)min_room;
	if (room > UINT16_MAX)
		return GW_ERR(GW_EINVAL);

	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "gw_dp%u_%u", d->port, serial++);
	int socket = rte_eth_dev_socket_id(d->port);
	d->pool = rte_pktmbuf_pool_create(name, (unsigned)(sz - 1), POOL_CACHE,
					  RTE_ALIGN(sizeof(gw_pkt), RTE_MBUF_PRIV_ALIGN),
					  (uint16_t)room, socket);
	if (!d->pool) {
		return GW_ERRF(GW_ENOMEM, "dpdk: mempool of %llu x %u bytes: %s",
			(unsigned long long)(sz - 1), room, rte_strerror(rte_errno));
	}
	rte_mempool_obj_iter(d->pool, init_priv, NULL);
	return GW_OK;
}

void gw_dpdk_pool_free(struct dpdk_dp *d)
{
	rte_mempool_free(d->pool);
	d->pool = NULL;
}

static inline gw_pkt *reset(struct dpdk_dp *d, struct rte_mbuf *m)
{
	gw_pkt *p = dpdk_pkt(m);
	p->data = rte_pktmbuf_mtod(m, uint8_t *) + DPDK_HDR_LEN;
	p->len = 0;
	p->room = d->dp.payload_max;
	memset(&p->peer, 0, sizeof(p->peer));
	return p;
}

/* gw_dp_regions(): the mempool's memory chunks (one, or a few without
 * hugepages); mbufs, their private areas and data rooms lie inside. */
struct regions_arg {
	gw_dp_region *r;
	unsigned max, n;
};

static void region_cb(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *mh,
		      unsigned idx)
{
	(void)mp;
	(void)idx;
	struct regions_arg *a = opaque;
	if (a->n < a->max)
		a->r[a->n] = (gw_dp_region){mh->addr, mh->len};
	a->n++;
}

int gw_dpdk_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct regions_arg a = {r, max, 0};
	rte_mempool_mem_iter(d->pool, region_cb, &a);
	return (int)a.n;
}

int gw_dpdk_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct rte_mbuf *m[DPDK_BURST_MAX];
	unsigned done = 0;
	while (done < n) {
		unsigned b = GW_MIN(n - done, DPDK_BURST_MAX);
		if (rte_pktmbuf_alloc_bulk(d->pool, m, b) != 0) {
			/* Bulk allocation is all or nothing; near exhaustion
			 * hand out what is left one by one. */
			for (; done < n; done++) {
				struct rte_mbuf *one = rte_pktmbuf_alloc(d->pool);
				if (!one)
					break;
				pkts[done] = reset(d, one);
			}
			break;
		}
		for (unsigned i = 0; i < b; i++)
			pkts[done + i] = reset(d, m[i]);
		done += b;
	}
	return (int)done;
}

void gw_dpdk_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	(void)dp;
	struct rte_mbuf *m[DPDK_BURST_MAX];
	while (n) {
		unsigned b = GW_MIN(n, DPDK_BURST_MAX);
		for (unsigned i = 0; i < b; i++)
			m[i] = dpdk_mbuf(pkts[i]);
		rte_pktmbuf_free_bulk(m, b);
		pkts += b;
		n -= b;
	}
}
