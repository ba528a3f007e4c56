/* Implementer's header for dataplane backends: the ops table each backend
 * folder fills in, and the common part of every gw_dp. */
#ifndef GW_DP_INTERNAL_H
#define GW_DP_INTERNAL_H

#include <stdbool.h>

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
	/* Optional, for gw_dp_wait_any() over several dataplanes (dp_wait.c):
	 * ready() says whether a packet is waiting now (it may receive it
	 * into a stash that rx_burst empties first); arm() sets up a wake-up
	 * and returns a file descriptor that poll() sees readable once a
	 * packet may have come, or GW_EUNSUPPORTED when the device has none (the
	 * caller then sleeps in short steps and asks ready()); disarm()
	 * follows every arm() that returned a descriptor. Without ready and
	 * arm, gw_dp_wait_any() waits on each dataplane in turn. */
	bool (*ready)(gw_dp *dp);
	int (*arm)(gw_dp *dp);
	void (*disarm)(gw_dp *dp);
	/* Optional (gw_dp_regions): the regions packet data lies in; returns
	 * their count, filling at most max. */
	int (*regions)(gw_dp *dp, gw_dp_region *r, unsigned max);
	/* Optional (gw_dp_dmabuf): 1 if the device registers dma-buf memory,
	 * else 0 with a detail. */
	int (*dmabuf)(gw_dp *dp);
	/* Optional (gw_dp_publish): keeps a copy of the layer above's
	 * counters, with the dataplane's own, for the backend's monitoring. */
	int (*publish)(gw_dp *dp, const char *const *names, const uint64_t *vals, unsigned n);
	/* Optional (gw_dp_drops): packets the device or kernel dropped before
	 * the backend saw them. */
	uint64_t (*drops)(gw_dp *dp);
	/* Optional (gw_dp_paths_get): the kernel paths in use and their
	 * counters; p arrives zeroed. */
	void (*paths)(const gw_dp *dp, gw_dp_paths *p);
};

/* Every backend's handle begins with this. */
struct gw_dp {
	const struct gw_dp_ops *ops;
	gw_endpoint local;
	uint32_t payload_max;
	uint32_t burst;
	gw_dp_stats stats;
	/* When rx_burst last returned packets (gw_now_ns; dp.c keeps it):
	 * gw_dp_wait_any() spins before it sleeps only on an active link. */
	uint64_t last_rx_ns;
	/* gw_dp_wait_any() calls over two or more dataplanes that slept out
	 * their timeout with nothing ready (poll() or the stepped sleep ran
	 * to the end), counted on each of them. Why it exists: gw_dp_wait_any()
	 * returns GW_OK either way, and a test must tell a wait that woke for
	 * a packet from one that slept its time out without timing it
	 * (tests/dataplane/test_dp_wait_any.c). Internal, not in gw_dp_stats,
	 * whose layout is public. */
	uint64_t wait_any_timeouts;
	/* gw_dp_set_wait(GW_DP_WAIT_SLEEP): waits skip their polling phase
	 * (dp_wait.c, and a backend's wait that polls before it sleeps). */
	bool wait_sleep;
	/* Set by dp.c after open when impair_* options were given (impair.h);
	 * backends leave it alone. */
	struct gw_impair *impair;
};

/* Adds a backend to the list gw_dp_open() picks from (the ops are kept,
 * not copied). The core names no backend: each backend's folder registers
 * itself at load time with GW_DP_BACKEND, as rdma-core's providers do, so
 * a backend is one folder, built when its dependency is found, and nothing
 * else. At most GW_DP_BACKENDS_MAX; more are ignored. */
#define GW_DP_BACKENDS_MAX 8
void gw_dp_register(const struct gw_dp_ops *ops);

/* Registers ops when the program or library is loaded. A static archive
 * drops an object nothing refers to, constructor and all: whatever links a
 * backend's archive (not libgradwire.so, which takes every object) also
 * passes -Wl,-u,<ops> (dataplane/meson.build does). */
#define GW_DP_BACKEND(ops)                                                     \
	__attribute__((constructor)) static void gw_dp_register_##ops(void)    \
	{                                                                      \
		gw_dp_register(&(ops));                                        \
	}

/* Backends receive cfg->opts with the impair_* keys taken out (dp.c
 * handles those for every backend), and must copy whatever they keep of
 * cfg: the opts string is freed when open returns. */

/* Parses "key=value,key=value" backend options: calls fn for each pair;
 * stops at and returns the first negative return. */
int gw_dp_opts_each(const char *opts, int (*fn)(void *arg, const char *key,
					       const char *val), void *arg);

#endif /* GW_DP_INTERNAL_H */
