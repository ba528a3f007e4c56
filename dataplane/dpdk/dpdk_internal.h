/* DPDK backend, private to dataplane/dpdk/: one ethdev port, one rx and one
 * tx queue, one mempool whose mbufs carry their gw_pkt in the private area
 * between the rte_mbuf and its data room, so alloc never allocates.
 *
 *   dpdk.c        ops table, open/close, backend options
 *   dpdk_port.c   EAL init (once per process), port configure/start, link,
 *                 rx interrupt set-up
 *   dpdk_pool.c   mempool sizing and creation, alloc/free
 *   dpdk_rxtx.c   tx (Ethernet/IPv4/UDP header build, checksums), rx
 *                 (validation), wait (spin, then interrupt or sleeping
 *                 back-off)
 *   dpdk_cksum.c  software UDP checksums (DPDK's, built for AVX2 too)
 *   dpdk_guard.c  memif: a peer's departure waits for our bursts
 */
#ifndef GW_DPDK_INTERNAL_H
#define GW_DPDK_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../dp_internal.h"

/* Ethernet + IPv4 (no options on tx) + UDP in front of gw_pkt.data. */
#define DPDK_HDR_LEN (RTE_ETHER_HDR_LEN + 20 + 8)
/* Largest rx/tx burst handed to the PMD in one call. */
#define DPDK_BURST_MAX 64u

/* What the layer above published last (gw_dp_publish), for telemetry. */
#define DPDK_PUB_MAX 48
struct dpdk_pub {
	uint64_t count;
	gw_dp_stats st;
	unsigned n;
	char names[DPDK_PUB_MAX][32];
	uint64_t vals[DPDK_PUB_MAX];
};

struct dpdk_dp {
	struct gw_dp dp;
	struct dpdk_pub pub;
	struct rte_mempool *pool;
	uint16_t port;
	uint16_t mtu;
	bool started;
	bool tx_ip_offload, tx_udp_offload;   /* port computes checksums */
	bool rx_ip_offload, rx_udp_offload;   /* port checks them, sets flags */
	bool udp_csum_sw;   /* udp_csum=1: compute the UDP checksum in software
			     * where the port has no offload (else 0: none) */
	struct rte_ether_addr mac;            /* the port's own address */
	uint16_t ip_id;                       /* IPv4 identification counter */

	/* gw_dp_wait(): rx interrupts through an epoll set when the port has
	 * them (intr), else a sleeping back-off. Packets wait() saw
	 * while checking for work before it sleeps are kept for rx_burst. */
	int epfd;
	bool intr;
	uint64_t spin_cycles;       /* poll this long before sleeping ... */
	uint64_t active_cycles;     /* ... if a packet came in this recently */
	uint64_t last_rx;           /* timer cycles of the last packet */
	unsigned spurious;          /* wake-ups with nothing to receive */
	unsigned backoff_us;
	uint16_t stash_n, stash_i;
	struct rte_mbuf *stash[DPDK_BURST_MAX];
	bool guard;         /* memif: calls into the PMD enter the guard */
	bool was_down;      /* the guard found the link down */
};

/* The gw_pkt of an mbuf of our pool, and back. */
static inline gw_pkt *dpdk_pkt(struct rte_mbuf *m)
{
	return (gw_pkt *)rte_mbuf_to_priv(m);
}
static inline struct rte_mbuf *dpdk_mbuf(gw_pkt *p)
{
	return (struct rte_mbuf *)p->priv;
}

/* dpdk_guard.c: memif's unmap waits for bursts inside a guarded port
 * (the file says why). install hooks the PMD once it is loaded; port says
 * whether a port needs the guard (and warns once if it cannot have it). */
void gw_dpdk_guard_install(void);
bool gw_dpdk_guard_installed(void);
bool gw_dpdk_guard_port(uint16_t port);
extern _Atomic unsigned gw_dpdk_guard_inside;
/* Around every call into a guarded port's PMD that touches its rings
 * (bursts, interrupt enable): false, with nothing entered, while its link
 * is down. */
bool gw_dpdk_enter_slow(struct dpdk_dp *d);
static inline bool gw_dpdk_enter(struct dpdk_dp *d)
{
	return !d->guard || gw_dpdk_enter_slow(d);
}
static inline void gw_dpdk_leave(struct dpdk_dp *d)
{
	if (d->guard)
		atomic_fetch_sub(&gw_dpdk_guard_inside, 1);
}

/* dpdk_telemetry.c: /gradwire/ports and /gradwire/stats,PORT. */
void gw_dpdk_telemetry_add(struct dpdk_dp *d);
void gw_dpdk_telemetry_remove(struct dpdk_dp *d);
int gw_dpdk_publish(gw_dp *dp, const char *const *names, const uint64_t *vals, unsigned n);

/* dpdk_port.c */
int gw_dpdk_eal_init(const gw_dp_config *cfg);
int gw_dpdk_port_claim(uint16_t port);
void gw_dpdk_port_release(uint16_t port);
/* Configures d->port for one queue pair at the port's own MTU (or mtu, if
 * not 0): fills d->mtu, the offload flags, d->mac, and the descriptor
 * counts the port accepts. */
int gw_dpdk_port_configure(struct dpdk_dp *d, uint16_t mtu, uint16_t *nb_rxd,
			   uint16_t *nb_txd);
/* Sets up the queues on d->pool, starts the port, arms rx interrupts; a
 * memif client whose server is not up yet is retried for up to wait_ms. */
int gw_dpdk_port_start(struct dpdk_dp *d, uint16_t nb_rxd, uint16_t nb_txd,
		       unsigned wait_ms);
/* Waits up to timeout_ms for link up; true if up. */
bool gw_dpdk_link_wait(uint16_t port, unsigned timeout_ms);
void gw_dpdk_port_stop(struct dpdk_dp *d);

/* dpdk_pool.c */
/* A pool for pkts application packets plus what the rings and caches hold;
 * min_room: smallest data room after the headroom (0: from the MTU). */
int gw_dpdk_pool_create(struct dpdk_dp *d, uint32_t pkts, uint16_t nb_rxd,
			uint16_t nb_txd, uint16_t min_room);
void gw_dpdk_pool_free(struct dpdk_dp *d);
int gw_dpdk_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n);
int gw_dpdk_regions(gw_dp *dp, gw_dp_region *r, unsigned max);
void gw_dpdk_free(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* dpdk_cksum.c */
/* rte_raw_cksum(), picked at load time from a baseline and an AVX2 build. */
uint32_t gw_dpdk_raw_sum(const void *p, size_t len);
/* The UDP checksum field for ip/udp (dgram_len set, checksum field 0). */
uint16_t gw_dpdk_udp_cksum(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp);
/* Whether the l4_len bytes at udp, checksum field included, verify. */
bool gw_dpdk_udp_cksum_ok(const struct rte_ipv4_hdr *ip, const struct rte_udp_hdr *udp,
			  uint32_t l4_len);

/* dpdk_rxtx.c */
int gw_dpdk_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n);
int gw_dpdk_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n);
int gw_dpdk_wait(gw_dp *dp, unsigned timeout_us);
bool gw_dpdk_ready(gw_dp *dp);
int gw_dpdk_arm(gw_dp *dp);
void gw_dpdk_disarm(gw_dp *dp);
/* Validates one received frame and fills its gw_pkt; false: drop it. */
bool gw_dpdk_rx_parse(struct dpdk_dp *d, struct rte_mbuf *m);

#endif /* GW_DPDK_INTERNAL_H */
