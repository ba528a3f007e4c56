/* Implementer's header for dataplane backends: the ops table each backend
 * folder fills in, and the common part of every gw_dp. */
#ifndef GW_DP_INTERNAL_H
#define GW_DP_INTERNAL_H

#include <gw/dataplane.h>

#include "gw_util.h"

struct gw_dp_ops {
	const char *name;
	/* Opens the backend; *out is a struct that starts with struct gw_dp. */
	int (*open)(const gw_dp_config *cfg, gw_dp **out);
	void (*close)(gw_dp *dp);
	int (*alloc)(gw_dp *dp, gw_pkt **pkts, unsigned n);
	void (*free)(gw_dp *dp, gw_pkt **pkts, unsigned n);
	int (*tx_burst)(gw_dp *dp, gw_pkt **pkts, unsigned n);
	int (*rx_burst)(gw_dp *dp, gw_pkt **pkts, unsigned n);
	int (*wait)(gw_dp *dp, unsigned timeout_us);
};

/* Every backend's handle begins with this. */
struct gw_dp {
	const struct gw_dp_ops *ops;
	gw_endpoint local;
	uint32_t payload_max;
	uint32_t burst;
	gw_dp_stats stats;
	/* Set by dp.c after open when impair_* options were given (impair.h);
	 * backends leave it alone. */
	struct gw_impair *impair;
};

/* Backends built into this library (dp.c lists them under their build
 * flags GW_HAVE_DPDK, ...). */
extern const struct gw_dp_ops gw_dp_udp_ops;
#ifdef GW_HAVE_DPDK
extern const struct gw_dp_ops gw_dp_dpdk_ops;
#endif

/* Backends receive cfg->opts with the impair_* keys taken out (dp.c
 * handles those for every backend), and must copy whatever they keep of
 * cfg: the opts string is freed when open returns. */

/* Parses "key=value,key=value" backend options: calls fn for each pair;
 * stops at and returns the first negative return. */
int gw_dp_opts_each(const char *opts, int (*fn)(void *arg, const char *key,
					       const char *val), void *arg);

#endif /* GW_DP_INTERNAL_H */
