/* Impairment layer (see impair.h). Applied on receive, so one process's
 * options impair the packets it gets: give both ends the same options to
 * impair both directions. No allocation after open: held packets sit in a
 * fixed ring, and duplicates are packets of the backend's own pool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_rand.h"
#include "impair.h"

#define IMPAIR_HOLD_MAX 256u      /* packets held back at once */
#define IMPAIR_HOLD_US 1000u      /* a held packet is released after this */
#define IMPAIR_SCRATCH 64u        /* packets taken from the backend per call */

struct held {
	gw_pkt *pkt;
	uint64_t since_ns;
	uint32_t after;            /* released once this many later ones went up */
	uint8_t corrupted;
};

struct gw_impair {
	double loss, reorder, dup, corrupt, txfull;
	uint64_t rng;
	uint64_t tx_rng;     /* its own stream: tx calls do not shift rx draws */
	struct held held[IMPAIR_HOLD_MAX];   /* FIFO ring */
	unsigned head, count;
	gw_pkt *scratch[IMPAIR_SCRATCH];
	uint8_t scratch_corrupted[IMPAIR_SCRATCH];
};

static uint64_t rnd(struct gw_impair *im)
{
	return gw_splitmix64(&im->rng);
}

/* One draw per decision, always, so the sequence does not depend on P. */
static int chance(struct gw_impair *im, double p)
{
	double u = (double)(rnd(im) >> 11) * 0x1p-53;
	return u < p;
}

/* ---- options ---------------------------------------------------------------- */

struct split {
	struct gw_impair cfg;
	int any;
	char *rest;
	size_t rest_len;
};

static int parse_prob(const char *key, const char *val, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (!*val || *end || errno || !(v >= 0.0 && v <= 1.0))
		return GW_ERRF(GW_EINVAL, "%s=%s: not a probability in [0, 1]", key, val);
	*out = v;
	return GW_OK;
}

static int split_one(void *arg, const char *key, const char *val)
{
	struct split *sp = arg;
	if (!strncmp(key, "impair_", 7)) {
		const char *k = key + 7;
		sp->any = 1;
		if (!strcmp(k, "loss"))
			return parse_prob(key, val, &sp->cfg.loss);
		if (!strcmp(k, "reorder"))
			return parse_prob(key, val, &sp->cfg.reorder);
		if (!strcmp(k, "dup"))
			return parse_prob(key, val, &sp->cfg.dup);
		if (!strcmp(k, "corrupt"))
			return parse_prob(key, val, &sp->cfg.corrupt);
		if (!strcmp(k, "txfull"))
			return parse_prob(key, val, &sp->cfg.txfull);
		if (!strcmp(k, "seed")) {
			char *end;
			errno = 0;
			unsigned long long s = strtoull(val, &end, 0);
			if (!*val || *end || errno || val[0] == '-')
				return GW_ERRF(GW_EINVAL, "%s=%s: not a whole number", key, val);
			sp->cfg.rng = s;
			return GW_OK;
		}
		return GW_ERRF(GW_EINVAL, "option '%s' not understood (impair_loss, "
			       "impair_reorder, impair_dup, impair_corrupt, impair_txfull, "
			       "impair_seed)", key);
	}
	size_t kl = strlen(key), vl = strlen(val);
	char *r = realloc(sp->rest, sp->rest_len + kl + vl + 3);
	if (!r)
		return GW_ERR(GW_ENOMEM);
	sp->rest = r;
	if (sp->rest_len)
		r[sp->rest_len++] = ',';
	memcpy(r + sp->rest_len, key, kl);
	r[sp->rest_len + kl] = '=';
	memcpy(r + sp->rest_len + kl + 1, val, vl);
	sp->rest_len += kl + vl + 1;
	r[sp->rest_len] = 0;
	return GW_OK;
}

int gw_impair_split(const char *opts, struct gw_impair **im, char **rest)
{
	struct split sp = {.cfg.rng = 1};
	*im = NULL;
	*rest = NULL;
	int rc = gw_dp_opts_each(opts, split_one, &sp);
	if (rc < 0) {
		free(sp.rest);
		return rc;
	}
	if (sp.any) {
		*im = malloc(sizeof(**im));
		if (!*im) {
			free(sp.rest);
			return GW_ERR(GW_ENOMEM);
		}
		**im = sp.cfg;
		uint64_t seed = sp.cfg.rng ^ 0x7478667531ull;   /* "txfu1" */
		(*im)->tx_rng = gw_splitmix64(&seed);
	}
	*rest = sp.rest;
	return GW_OK;
}

void gw_impair_free(gw_dp *dp, struct gw_impair *im)
{
	if (!im)
		return;
	for (unsigned i = 0; i < im->count; i++)
		dp->ops->free(dp, &im->held[(im->head + i) % IMPAIR_HOLD_MAX].pkt, 1);
	free(im);
}

/* ---- receive ---------------------------------------------------------------- */

struct out {
	gw_pkt **pkts;
	unsigned n, used;
};

static int hold(struct gw_impair *im, gw_pkt *p, uint32_t after, uint8_t corrupted,
		uint64_t now)
{
	if (im->count == IMPAIR_HOLD_MAX)
		return 0;
	struct held *h = &im->held[(im->head + im->count++) % IMPAIR_HOLD_MAX];
	*h = (struct held){p, now, after, corrupted};
	return 1;
}

static void hand_up(gw_dp *dp, struct out *o, gw_pkt *p, uint8_t corrupted)
{
	o->pkts[o->used++] = p;
	if (corrupted)
		dp->stats.impair_corrupted++;
}

/* Hands up held packets that are due (after == 0 or held long enough), in
 * FIFO order among the due ones, while there is room. */
static void release(gw_dp *dp, struct gw_impair *im, struct out *o, uint64_t now)
{
	unsigned keep = 0;
	for (unsigned i = 0; i < im->count; i++) {
		struct held h = im->held[(im->head + i) % IMPAIR_HOLD_MAX];
		int due = h.after == 0 || now - h.since_ns >= IMPAIR_HOLD_US * 1000ull;
		if (due && o->used < o->n)
			hand_up(dp, o, h.pkt, h.corrupted);
		else
			im->held[(im->head + keep++) % IMPAIR_HOLD_MAX] = h;
	}
	im->count = keep;
}

/* A packet went up: every held one has one fewer to wait for. */
static void count_later(struct gw_impair *im)
{
	for (unsigned i = 0; i < im->count; i++) {
		struct held *h = &im->held[(im->head + i) % IMPAIR_HOLD_MAX];
		if (h->after)
			h->after--;
	}
}

int gw_impair_rx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct gw_impair *im = dp->impair;
	uint64_t now = gw_now_ns();
	struct out o = {pkts, n, 0};
	release(dp, im, &o, now);
	if (o.used >= n)
		return (int)o.used;
	/* Each packet may go up twice (dup); keep room for that. */
	unsigned want = GW_MIN((n - o.used + 1) / 2, IMPAIR_SCRATCH);
	int got = dp->ops->rx_burst(dp, im->scratch, want);
	if (got <= 0)
		return o.used ? (int)o.used : got;
	for (int i = 0; i < got; i++) {
		gw_pkt *p = im->scratch[i];
		int lose = chance(im, im->loss);
		int corrupt = chance(im, im->corrupt);
		int dup = chance(im, im->dup);
		int reorder = chance(im, im->reorder);
		uint64_t r = rnd(im);
		if (lose) {
			dp->stats.impair_lost++;
			dp->ops->free(dp, &p, 1);
			continue;
		}
		if (corrupt && p->len) {
			uint64_t bit = r % ((uint64_t)p->len * 8);
			p->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		} else {
			corrupt = 0;
		}
		gw_pkt *copy = NULL;
		if (dup && dp->ops->alloc(dp, &copy, 1) == 1) {
			if (p->len <= copy->room) {
				memcpy(copy->data, p->data, p->len);
				copy->len = p->len;
				copy->peer = p->peer;
				dp->stats.impair_duplicated++;
			} else {
				dp->ops->free(dp, &copy, 1);
				copy = NULL;
			}
		}
		if (reorder && hold(im, p, 1 + (uint32_t)((r >> 32) % 4), (uint8_t)corrupt, now)) {
			dp->stats.impair_reordered++;
		} else if (o.used < o.n) {
			hand_up(dp, &o, p, (uint8_t)corrupt);
			count_later(im);
		} else if (!hold(im, p, 0, (uint8_t)corrupt, now)) {
			dp->ops->free(dp, &p, 1);   /* cannot happen: room was kept */
			dp->stats.impair_lost++;
		}
		if (copy) {
			if (o.used < o.n) {
				hand_up(dp, &o, copy, (uint8_t)corrupt);
				count_later(im);
			} else if (!hold(im, copy, 0, (uint8_t)corrupt, now)) {
				dp->ops->free(dp, &copy, 1);
				dp->stats.impair_duplicated--;
			}
		}
	}
	release(dp, im, &o, now);
	return (int)o.used;
}

unsigned gw_impair_wait_us(gw_dp *dp, unsigned timeout_us)
{
	struct gw_impair *im = dp->impair;
	if (!im->count)
		return timeout_us;
	uint64_t now = gw_now_ns(), oldest = UINT64_MAX;
	for (unsigned i = 0; i < im->count; i++) {
		struct held *h = &im->held[(im->head + i) % IMPAIR_HOLD_MAX];
		if (h->after == 0)
			return 0;
		oldest = GW_MIN(oldest, h->since_ns);
	}
	uint64_t due = oldest + IMPAIR_HOLD_US * 1000ull;
	if (due <= now)
		return 0;
	return (unsigned)GW_MIN((uint64_t)timeout_us, (due - now + 999) / 1000);
}

int gw_impair_tx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct gw_impair *im = dp->impair;
	if (im->txfull <= 0.0 || !n)
		return dp->ops->tx_burst(dp, pkts, n);
	double u = (double)(gw_splitmix64(&im->tx_rng) >> 11) * 0x1p-53;
	if (u >= im->txfull)
		return dp->ops->tx_burst(dp, pkts, n);
	/* The device queue "fills" after k of the n packets. */
	unsigned k = (unsigned)(gw_splitmix64(&im->tx_rng) % n);
	int r = k ? dp->ops->tx_burst(dp, pkts, k) : 0;
	if (r < 0)
		return r;
	dp->stats.tx_full += n - (unsigned)r;
	dp->stats.impair_txfull++;
	return r;
}
