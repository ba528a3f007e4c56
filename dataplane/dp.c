/* Backend registry and the backend-neutral entry points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp_internal.h"
#include "impair.h"

/* Filled by the backends' constructors (GW_DP_BACKEND) before main() or
 * dlopen() returns, one thread; read-only afterwards. */
static const struct gw_dp_ops *backends[GW_DP_BACKENDS_MAX];
static const char *backend_names[GW_DP_BACKENDS_MAX + 1];
static unsigned nbackends;

void gw_dp_register(const struct gw_dp_ops *ops)
{
	for (unsigned i = 0; i < nbackends; i++)
		if (backends[i] == ops)
			return;
	if (!ops || nbackends == GW_DP_BACKENDS_MAX)
		return;
	backends[nbackends] = ops;
	backend_names[nbackends++] = ops->name;
}

const char *const *gw_dp_backends(void)
{
	return backend_names;
}

size_t gw_dp_backends_text(char *buf, size_t len)
{
	size_t k = 0;
	for (unsigned i = 0; i < nbackends; i++) {
		int fits = buf && k < len;   /* past the end: only count */
		int n = snprintf(fits ? buf + k : NULL, fits ? len - k : 0, "%s%s",
				 i ? ", " : "", backend_names[i]);
		k += n > 0 ? (size_t)n : 0;
	}
	if (buf && len && !nbackends)
		buf[0] = '\0';
	return k;
}

int gw_dp_open(const gw_dp_config *cfg, gw_dp **out)
{
	gw__detail_clear();
	if (!cfg || !cfg->backend || !out)
		return GW_ERRF(GW_EINVAL, "%s: missing", !out ? "out" : !cfg ? "cfg" : "backend");
	for (unsigned i = 0; i < nbackends; i++) {
		if (strcmp(backends[i]->name, cfg->backend))
			continue;
		/* impair_* options are every backend's (impair.c); the backend
		 * parses the rest. */
		struct gw_impair *im;
		char *rest;
		int rc = gw_impair_split(cfg->opts, &im, &rest);
		if (rc < 0)
			return rc;
		gw_dp_config bcfg = *cfg;
		bcfg.opts = rest;
		rc = backends[i]->open(&bcfg, out);
		free(rest);
		if (rc == 0) {
			(*out)->ops = backends[i];
			(*out)->impair = im;
		} else {
			free(im);
		}
		return rc;
	}
	char built[64];
	gw_dp_backends_text(built, sizeof(built));
	return GW_ERRF(GW_EUNSUPPORTED, "backend '%s': not built into this library (built: %s)",
		       cfg->backend, built);
}

void gw_dp_close(gw_dp *dp)
{
	if (!dp)
		return;
	gw_impair_free(dp, dp->impair);
	dp->impair = NULL;
	dp->ops->close(dp);
}

const char *gw_dp_backend_name(const gw_dp *dp)
{
	return dp ? dp->ops->name : NULL;
}

int gw_dp_local(const gw_dp *dp, gw_endpoint *ep)
{
	if (!dp || !ep)
		return GW_ERR(GW_EINVAL);
	*ep = dp->local;
	return GW_OK;
}

uint32_t gw_dp_payload_max(const gw_dp *dp)
{
	return dp ? dp->payload_max : 0;
}

int gw_dp_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	return dp->ops->alloc(dp, pkts, n);
}

void gw_dp_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	dp->ops->free(dp, pkts, n);
}

int gw_dp_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	if (GW_UNLIKELY(dp->impair != NULL))
		return gw_impair_tx(dp, pkts, n);
	return dp->ops->tx_burst(dp, pkts, n);
}

int gw_dp_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	int got = GW_UNLIKELY(dp->impair != NULL) ? gw_impair_rx(dp, pkts, n)
						  : dp->ops->rx_burst(dp, pkts, n);
	if (got > 0)
		dp->last_rx_ns = gw_now_ns();
	return got;
}

int gw_dp_wait(gw_dp *dp, unsigned timeout_us)
{
	if (GW_UNLIKELY(dp->impair != NULL)) {
		timeout_us = gw_impair_wait_us(dp, timeout_us);
		if (!timeout_us)
			return GW_OK;   /* a held packet is due now */
	}
	return dp->ops->wait(dp, timeout_us);
}

int gw_dp_set_wait(gw_dp *dp, gw_dp_wait_policy policy)
{
	if (!dp)
		return GW_ERRF(GW_EINVAL, "gw_dp_set_wait: dp is NULL");
	if (policy != GW_DP_WAIT_SPIN && policy != GW_DP_WAIT_SLEEP)
		return GW_ERRF(GW_EINVAL, "gw_dp_set_wait: policy %d is not GW_DP_WAIT_SPIN "
			       "or GW_DP_WAIT_SLEEP", (int)policy);
	dp->wait_sleep = policy == GW_DP_WAIT_SLEEP;
	return GW_OK;
}

int gw_dp_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	if (!dp || (!r && max))
		return GW_ERRF(GW_EINVAL, "gw_dp_regions: %s", !dp ? "dp is NULL" : "r is NULL");
	if (!dp->ops->regions)
		return GW_ERRF(GW_EUNSUPPORTED, "gw_dp_regions: the %s backend cannot say",
			       dp->ops->name);
	return dp->ops->regions(dp, r, max);
}

int64_t gw_dp_drops(gw_dp *dp)
{
	if (!dp)
		return GW_ERR(GW_EINVAL);
	if (!dp->ops->drops)
		return GW_ERR(GW_EUNSUPPORTED);
	return (int64_t)dp->ops->drops(dp);
}

int gw_dp_publish(gw_dp *dp, const char *const *names, const uint64_t *vals, unsigned n)
{
	if (!dp || (n && (!names || !vals)))
		return GW_ERR(GW_EINVAL);
	if (!dp->ops->publish)
		return GW_ERR(GW_EUNSUPPORTED);
	return dp->ops->publish(dp, names, vals, n);
}

int gw_dp_dmabuf(gw_dp *dp)
{
	if (!dp)
		return GW_ERRF(GW_EINVAL, "gw_dp_dmabuf: dp is NULL");
	if (!dp->ops->dmabuf) {
		gw__detail(GW_OK, "dma-buf: the %s backend sends from host memory only",
			   dp->ops->name);
		return 0;
	}
	return dp->ops->dmabuf(dp);
}

void gw_dp_stats_get(const gw_dp *dp, gw_dp_stats *st)
{
	if (dp && st)
		*st = dp->stats;
}

int gw_dp_paths_get(const gw_dp *dp, gw_dp_paths *p)
{
	if (!dp || !p)
		return GW_ERRF(GW_EINVAL, "gw_dp_paths_get: %s is NULL", !dp ? "dp" : "p");
	memset(p, 0, sizeof(*p));
	if (!dp->ops->paths)
		return GW_ERR(GW_EUNSUPPORTED);
	dp->ops->paths(dp, p);
	return GW_OK;
}

int gw_dp_opts_each(const char *opts, int (*fn)(void *, const char *, const char *),
		    void *arg)
{
	if (!opts || !*opts)
		return GW_OK;
	char *copy = strdup(opts), *save = NULL;
	if (!copy)
		return GW_ERR(GW_ENOMEM);
	int rc = GW_OK;
	for (char *kv = strtok_r(copy, ",", &save); kv && rc >= 0;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq) {
			rc = GW_ERRF(GW_EINVAL, "option '%s': expected key=value", kv);
			break;
		}
		*eq = 0;
		rc = fn(arg, kv, eq + 1);
	}
	free(copy);
	return rc;
}

/* ---- endpoints ------------------------------------------------------------ */

int gw_endpoint_parse(const char *s, gw_endpoint *ep)
{
	unsigned a, b, c, d, port, m[6];
	int used = 0;
	if (!s || !ep)
		return GW_ERR(GW_EINVAL);
	memset(ep, 0, sizeof(*ep));
	if (sscanf(s, "%3u.%3u.%3u.%3u:%5u%n", &a, &b, &c, &d, &port, &used) != 5 ||
	    a > 255 || b > 255 || c > 255 || d > 255 || port > 65535)
		return GW_ERR(GW_EINVAL);
	ep->ip = a << 24 | b << 16 | c << 8 | d;
	ep->port = (uint16_t)port;
	s += used;
	if (!*s)
		return GW_OK;
	int used2 = 0;
	if (sscanf(s, "@%2x:%2x:%2x:%2x:%2x:%2x%n", &m[0], &m[1], &m[2], &m[3],
		   &m[4], &m[5], &used2) != 6 || s[used2])
		return GW_ERR(GW_EINVAL);
	for (int i = 0; i < 6; i++)
		ep->mac[i] = (uint8_t)m[i];
	return GW_OK;
}

int gw_endpoint_format(const gw_endpoint *ep, char *buf, size_t len)
{
	if (!ep || !buf)
		return GW_ERR(GW_EINVAL);
	static const uint8_t zero[6];
	int n = snprintf(buf, len, "%u.%u.%u.%u:%u", ep->ip >> 24, (ep->ip >> 16) & 255,
			 (ep->ip >> 8) & 255, ep->ip & 255, ep->port);
	if (n >= 0 && (size_t)n < len && memcmp(ep->mac, zero, 6))
		n += snprintf(buf + n, len - (size_t)n, "@%02x:%02x:%02x:%02x:%02x:%02x",
			      ep->mac[0], ep->mac[1], ep->mac[2], ep->mac[3],
			      ep->mac[4], ep->mac[5]);
	return (n < 0 || (size_t)n >= len) ? GW_ERR(GW_EINVAL) : GW_OK;
}
