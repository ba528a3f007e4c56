/* DPDK's telemetry socket for gradwire's DPDK processes (readable with
 * dpdk-telemetry.py): /gradwire/ports lists the ports gradwire has open,
 * /gradwire/stats,PORT gives that port's dataplane counters and the
 * counters the layer above published with gw_dp_publish (a shard's or a
 * worker's: ups, results, gone workers, ...). The telemetry thread never
 * reads live counters: it reads the copy the data thread made at its last
 * publish, under a lock. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_telemetry.h>

#include "dpdk_internal.h"

#define TEL_MAX_DPS 32

static pthread_mutex_t tel_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dpdk_dp *tel_dps[TEL_MAX_DPS];
static int tel_registered;

static int tel_ports(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_array(out, RTE_TEL_INT_VAL);
	pthread_mutex_lock(&tel_mu);
	for (unsigned i = 0; i < TEL_MAX_DPS; i++)
		if (tel_dps[i])
			rte_tel_data_add_array_int(out, tel_dps[i]->port);
	pthread_mutex_unlock(&tel_mu);
	return 0;
}

static void add(struct rte_tel_data *out, const char *k, uint64_t v)
{
	rte_tel_data_add_dict_u64(out, k, v);
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *out)
{
	(void)cmd;
	char *end;
	if (!params || !*params)
		return -EINVAL;
	unsigned long port = strtoul(params, &end, 10);
	if (*end)
		return -EINVAL;
	int found = 0;
	rte_tel_data_start_dict(out);
	pthread_mutex_lock(&tel_mu);
	for (unsigned i = 0; i < TEL_MAX_DPS && !found; i++) {
		struct dpdk_dp *d = tel_dps[i];
		if (!d || d->port != port)
			continue;
		found = 1;
		const struct dpdk_pub *p = &d->pub;
		add(out, "published", p->count);
		add(out, "rx_pkts", p->st.rx_pkts);
		add(out, "rx_bytes", p->st.rx_bytes);
		add(out, "tx_pkts", p->st.tx_pkts);
		add(out, "tx_bytes", p->st.tx_bytes);
		add(out, "rx_bad", p->st.rx_bad);
		add(out, "tx_full", p->st.tx_full);
		add(out, "idle_waits", p->st.idle_waits);
		for (unsigned k = 0; k < p->n; k++)
			add(out, p->names[k], p->vals[k]);
	}
	pthread_mutex_unlock(&tel_mu);
	return found ? 0 : -ENOENT;
}

void gw_dpdk_telemetry_add(struct dpdk_dp *d)
{
	pthread_mutex_lock(&tel_mu);
	for (unsigned i = 0; i < TEL_MAX_DPS; i++)
		if (!tel_dps[i]) {
			tel_dps[i] = d;
			break;
		}
	if (!tel_registered) {
		/* Once per process; a process without telemetry (EAL
		 * --no-telemetry) refuses, which costs nothing else. */
		rte_telemetry_register_cmd("/gradwire/ports", tel_ports,
					   "gradwire's DPDK ports. No parameters");
		rte_telemetry_register_cmd("/gradwire/stats", tel_stats,
					   "A gradwire port's counters: dataplane and protocol. "
					   "Parameters: int port_id");
		tel_registered = 1;
	}
	pthread_mutex_unlock(&tel_mu);
}

void gw_dpdk_telemetry_remove(struct dpdk_dp *d)
{
	pthread_mutex_lock(&tel_mu);
	for (unsigned i = 0; i < TEL_MAX_DPS; i++)
		if (tel_dps[i] == d)
			tel_dps[i] = NULL;
	pthread_mutex_unlock(&tel_mu);
}

int gw_dpdk_publish(gw_dp *dp, const char *const *names, const uint64_t *vals, unsigned n)
{
	struct dpdk_dp *d = (struct dpdk_dp *)dp;
	struct dpdk_pub *p = &d->pub;
	pthread_mutex_lock(&tel_mu);
	p->st = dp->stats;
	p->n = 0;
	for (unsigned k = 0; k < n && p->n < DPDK_PUB_MAX; k++) {
		snprintf(p->names[p->n], sizeof(p->names[0]), "%s", names[k]);
		p->vals[p->n++] = vals[k];
	}
	p->count++;
	pthread_mutex_unlock(&tel_mu);
	return GW_OK;
}
