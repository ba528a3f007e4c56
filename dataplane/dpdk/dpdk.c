/* DPDK backend ("dpdk"): gradwire packets as Ethernet/IPv4/UDP frames on one
 * ethdev port — a PCI NIC or a virtual device (net_memif, net_af_xdp,
 * net_af_packet, net_tap). cfg->argv holds the EAL arguments; cfg->opts:
 *
 *   port=N         ethdev port (default 0)
 *   mtu=N          set the port's MTU (default: keep the port's own)
 *   link_wait=S    seconds open waits for link up before failing (default
 *                  10; 0: do not wait)
 *   rxd=N, txd=N   rx/tx ring sizes (default 1024, adjusted by the port)
 *   room=N         smallest mbuf data room after the headroom, for drivers
 *                  that need more than the MTU (net_af_packet with a large
 *                  framesz=); default: what the MTU needs, at least 2048
 *   spin_us=N      gw_dp_wait() polls this long before it sleeps, while
 *                  packets came in the last millisecond (default 20; 0:
 *                  sleep at once, as gw_dp_set_wait(GW_DP_WAIT_SLEEP) does)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dpdk_internal.h"

struct dpdk_opts {
	uint16_t port, mtu, rxd, txd, room;
	unsigned link_wait_s, spin_us;
	bool udp_csum;
};

static int opt_u(const char *val, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || *val == '-' || v < lo || v > hi)
		return GW_ERR(GW_EINVAL);
	*out = v;
	return GW_OK;
}

static int dpdk_opt(void *arg, const char *key, const char *val)
{
	struct dpdk_opts *o = arg;
	unsigned long v;
	int rc = GW_ERR(GW_EINVAL);
	if (!strcmp(key, "port") && (rc = opt_u(val, 0, RTE_MAX_ETHPORTS - 1, &v)) == 0)
		o->port = (uint16_t)v;
	else if (!strcmp(key, "mtu") && (rc = opt_u(val, 96, 65535 - 64, &v)) == 0)
		o->mtu = (uint16_t)v;
	else if (!strcmp(key, "rxd") && (rc = opt_u(val, 32, 32768, &v)) == 0)
		o->rxd = (uint16_t)v;
	else if (!strcmp(key, "txd") && (rc = opt_u(val, 32, 32768, &v)) == 0)
		o->txd = (uint16_t)v;
	else if (!strcmp(key, "room") && (rc = opt_u(val, 64, 65535 - RTE_PKTMBUF_HEADROOM, &v)) == 0)
		o->room = (uint16_t)v;
	else if (!strcmp(key, "link_wait") && (rc = opt_u(val, 0, 3600, &v)) == 0)
		o->link_wait_s = (unsigned)v;
	else if (!strcmp(key, "spin_us") && (rc = opt_u(val, 0, 10000, &v)) == 0)
		o->spin_us = (unsigned)v;
	else if (!strcmp(key, "udp_csum") && (rc = opt_u(val, 0, 1, &v)) == 0)
		o->udp_csum = v;
	if (rc < 0)
		return gw__detail(rc, "dpdk: option '%s=%s' not understood or out of range "
				  "(port, mtu, rxd, txd, room, link_wait, spin_us, udp_csum)", key,
				  val);
	return rc;
}

static void dpdk_close(gw_dp *dp)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	gw_dpdk_telemetry_remove(d);
	if (d->stash_i < d->stash_n)
		rte_pktmbuf_free_bulk(d->stash + d->stash_i, (unsigned)(d->stash_n - d->stash_i));
	gw_dpdk_port_stop(d);
	/* Packets the application still holds point into the pool: they must
	 * all be freed before close. */
	gw_dpdk_pool_free(d);
	gw_dpdk_port_release(d->port);
	free(d);
}

static int dpdk_open(const gw_dp_config *cfg, gw_dp **out)
{
	struct dpdk_opts o = {.port = 0, .rxd = 1024, .txd = 1024, .link_wait_s = 10,
			      .spin_us = 20};
	int rc = gw_dp_opts_each(cfg->opts, dpdk_opt, &o);
	if (rc < 0)
		return rc;
	rc = gw_dpdk_eal_init(cfg);
	if (rc < 0)
		return rc;
	rc = gw_dpdk_port_claim(o.port);
	if (rc < 0)
		return rc;
	/* The PMDs are loaded now: a memif one's unmap waits for our bursts. */
	gw_dpdk_guard_install();
	struct dpdk_dp *d = calloc(1, sizeof(*d));
	if (!d) {
		rc = GW_ERR(GW_ENOMEM);
		goto fail_claim;
	}
	d->port = o.port;
	d->epfd = -1;
	d->guard = gw_dpdk_guard_port(o.port);
	d->dp.local = cfg->local;
	if (!d->dp.local.port)   /* like an unbound socket: an ephemeral port */
		d->dp.local.port = (uint16_t)(49152 + (getpid() ^ rte_get_timer_cycles()) % 16384);
	d->dp.burst = cfg->burst ? GW_MIN(cfg->burst, DPDK_BURST_MAX) : 32;
	d->ip_id = (uint16_t)getpid();
	d->udp_csum_sw = o.udp_csum;
	d->spin_cycles = o.spin_us * GW_MAX(rte_get_timer_hz() / 1000000, 1u);
	d->active_cycles = GW_MAX(rte_get_timer_hz() / 1000, 1u);
	/* The back-off's short sleeps must be short: the default 50 us timer
	 * slack of a normal thread turns an 8 us sleep into ~60 us, longer
	 * than a peer's whole burst takes. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

	uint16_t nb_rxd = o.rxd, nb_txd = o.txd;
	rc = gw_dpdk_port_configure(d, o.mtu, &nb_rxd, &nb_txd);
	if (rc < 0)
		goto fail_free;
	d->dp.payload_max = (uint32_t)d->mtu - 20 - 8;
	rc = gw_dpdk_pool_create(d, cfg->pool ? cfg->pool : 4096, nb_rxd, nb_txd, o.room);
	if (rc < 0)
		goto fail_port;
	rc = gw_dpdk_port_start(d, nb_rxd, nb_txd, o.link_wait_s * 1000);
	if (rc < 0)
		goto fail_pool;
	if (o.link_wait_s && !gw_dpdk_link_wait(d->port, o.link_wait_s * 1000)) {
		rc = GW_ERRF(GW_EIO, "dpdk: port %u: link still down after %u s",
			d->port, o.link_wait_s);
		goto fail_pool;
	}
	gw_dpdk_telemetry_add(d);
	*out = &d->dp;
	return GW_OK;

fail_pool:
	gw_dpdk_port_stop(d);
	gw_dpdk_pool_free(d);
	goto fail_free;
fail_port:
	gw_dpdk_port_stop(d);
fail_free:
	free(d);
fail_claim:
	gw_dpdk_port_release(o.port);
	return rc;
}

/* gw_dp_drops(): what the port could not take (no descriptor, no mbuf). */
static uint64_t dpdk_drops(gw_dp *dp)
{
	struct rte_eth_stats st;
	if (rte_eth_stats_get(((struct dpdk_dp *)dp)->port, &st) != 0)
		return 0;
	return st.imissed + st.rx_nombuf;
}

/* Global, not static: linkers of the static archive name it (-u). */
const struct gw_dp_ops gw_dp_dpdk_ops = {
	.name = "dpdk",
	.open = dpdk_open,
	.close = dpdk_close,
	.alloc = gw_dpdk_alloc,
	.free = gw_dpdk_free,
	.tx_burst = gw_dpdk_tx_burst,
	.rx_burst = gw_dpdk_rx_burst,
	.wait = gw_dpdk_wait,
	.ready = gw_dpdk_ready,
	.arm = gw_dpdk_arm,
	.disarm = gw_dpdk_disarm,
	.regions = gw_dpdk_regions,
	.publish = gw_dpdk_publish,
	.drops = dpdk_drops,
};
GW_DP_BACKEND(gw_dp_dpdk_ops)

