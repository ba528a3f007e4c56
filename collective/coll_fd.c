/* The failure detector of one peer and the liveness histograms
 * (coll_fd.h says what they decide and why). */
#include <math.h>
#include <string.h>

#include <gw/collective.h>

#include "coll_fd.h"
#include "gw_util.h"

struct coll_fd_cfg coll_fd_config(uint64_t liveness_ns)
{
	return (struct coll_fd_cfg){.hb_ns = liveness_ns / 8, .floor_ns = liveness_ns,
				    .ceiling_ns = 5 * liveness_ns, .phi = COLL_FD_PHI};
}

void coll_fd_reset(struct coll_fd *f)
{
	memset(f, 0, sizeof(*f));
}

static void sample(struct coll_fd *f, uint64_t gap_ns)
{
	uint32_t us = (uint32_t)GW_MIN(gap_ns / 1000u, (uint64_t)UINT32_MAX);
	if (f->n == COLL_FD_SAMPLES) {
		double old = f->gap_us[f->next];
		f->sum -= old;
		f->sumsq -= old * old;
	} else {
		f->n++;
	}
	f->gap_us[f->next] = us;
	f->next = (f->next + 1) % COLL_FD_SAMPLES;
	f->sum += us;
	f->sumsq += (double)us * us;
}

int coll_fd_heard(struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now,
		  struct coll_hist *gaps)
{
	if (f->last_ns && now > f->last_ns) {
		uint64_t gap = now - f->last_ns;
		if (gap >= c->hb_ns / 4) {
			sample(f, gap);
			if (gaps)
				coll_hist_add(gaps, gap / 1000u);
		}
	}
	if (now > f->last_ns)
		f->last_ns = now;
	int cleared = f->suspect_ns != 0;
	f->suspect_ns = 0;
	return cleared;
}

void coll_fd_rebase(struct coll_fd *f, uint64_t now)
{
	if (f->last_ns && now > f->last_ns)
		f->last_ns = now;
	f->suspect_ns = 0;
}

/* μ and σ of the gaps in ns. Until a few samples came, the heartbeat
 * period with a wide spread: a new peer is judged by the floor. */
static void moments(const struct coll_fd *f, const struct coll_fd_cfg *c, double *mu,
		    double *sigma)
{
	double hb = (double)c->hb_ns, min_sigma = hb / COLL_FD_SIGMA_DIV;
	if (f->n < 4) {
		*mu = hb;
		*sigma = hb / 2;
		return;
	}
	double m = f->sum / f->n;
	/* The running sums lose a little to rounding: never below 0. */
	double var = GW_MAX(f->sumsq / f->n - m * m, 0.0);
	*mu = 1000.0 * m;
	*sigma = GW_MAX(1000.0 * sqrt(var), min_sigma);
}

double coll_fd_phi(const struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now)
{
	if (!f->last_ns)
		return 0;
	double mu, sigma;
	moments(f, c, &mu, &sigma);
	double y = ((double)coll_fd_silence(f, now) - mu) / sigma;
	double p = 0.5 * erfc(y / sqrt(2.0));
	/* Far in the tail erfc is 0: any φ above every threshold will do. */
	return p > 1e-300 ? -log10(p) : 300.0;
}

int coll_fd_suspect(const struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now)
{
	uint64_t t = coll_fd_silence(f, now);
	if (!f->last_ns || t < c->floor_ns)
		return 0;
	return t >= c->ceiling_ns || coll_fd_phi(f, c, now) >= c->phi;
}

enum coll_fd_verdict coll_fd_judge(struct coll_fd *f, const struct coll_fd_cfg *c,
				   uint64_t now)
{
	enum coll_fd_verdict v = COLL_FD_FINE;
	if (!f->suspect_ns) {
		if (!coll_fd_suspect(f, c, now))
			return COLL_FD_FINE;
		f->suspect_ns = now;
		f->probes = 0;
		v = COLL_FD_SUSPECT;
	} else if (now - f->suspect_ns >= c->floor_ns) {
		return COLL_FD_DEAD;   /* confirmed: a further floor of silence */
	} else if (now >= f->probe_ns) {
		v = COLL_FD_PROBE;
	} else {
		return COLL_FD_FINE;
	}
	f->probes++;
	f->probe_ns = now + c->hb_ns;
	return v;
}

/* Bucket of us: 4 per octave, exact below 4 µs. */
static unsigned bucket(uint64_t us)
{
	if (us < 4)
		return (unsigned)us;
	unsigned b = 63u - (unsigned)__builtin_clzll(us);
	unsigned i = 4 * b + (unsigned)((us >> (b - 2)) & 3u) - 4u;
	return GW_MIN(i, COLL_HIST_BUCKETS - 1);
}

/* The largest value of bucket i. */
static uint64_t bucket_top(unsigned i)
{
	if (i < 4)
		return i;
	unsigned b = (i + 4) / 4, sub = (i + 4) % 4;
	return ((4ull + sub + 1) << (b - 2)) - 1;
}

void coll_hist_add(struct coll_hist *h, uint64_t us)
{
	h->n[bucket(us)]++;
	h->count++;
	if (us > h->max_us)
		h->max_us = us;
}

uint64_t coll_hist_quantile(const struct coll_hist *h, double q)
{
	if (!h->count)
		return 0;
	if (q >= 1.0)
		return h->max_us;
	uint64_t want = (uint64_t)ceil(q * (double)h->count), seen = 0;
	want = GW_MAX(want, 1ull);
	for (unsigned i = 0; i < COLL_HIST_BUCKETS; i++) {
		seen += h->n[i];
		if (seen >= want)
			return GW_MIN(bucket_top(i), h->max_us);
	}
	return h->max_us;
}

void coll_liveness_stats(gw_liveness_stats *s, const gw_liveness_stats *counters,
			 const struct coll_hist *late, const struct coll_hist *gaps)
{
	*s = *counters;
	s->hb_late_p50_us = coll_hist_quantile(late, 0.5);
	s->hb_late_p99_us = coll_hist_quantile(late, 0.99);
	s->hb_late_max_us = late->max_us;
	s->gaps = gaps->count;
	s->gap_p50_us = coll_hist_quantile(gaps, 0.5);
	s->gap_p99_us = coll_hist_quantile(gaps, 0.99);
	s->gap_p999_us = coll_hist_quantile(gaps, 0.999);
	s->gap_max_us = gaps->max_us;
}
