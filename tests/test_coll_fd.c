/* The failure detector of one peer (collective/coll_fd.h) on synthetic
 * arrival times: no suspicion before the floor whatever the history; a
 * peer that kept time suspected soon after it; a peer whose packets came
 * late under load not suspected at a silence it showed before, yet still
 * at the ceiling; bursts are not samples; a rebase restarts the silence;
 * a suspect is probed every period and dead a floor later unless heard;
 * and the histogram's quantiles bound the truth within a bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coll_fd.h"

#define MS 1000000ull

static struct coll_fd_cfg cfg(void)
{
	return coll_fd_config(1000 * MS);   /* hb 125 ms, floor 1 s, ceiling 5 s */
}

/* Heartbeats every hb ms from t0 (with a jitter of +-j ms, alternating),
 * n of them; returns the time of the last. */
static uint64_t beats(struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t t0, uint64_t hb,
		      uint64_t j, unsigned n)
{
	uint64_t t = t0;
	for (unsigned i = 0; i < n; i++) {
		t += (hb + ((i & 1) ? j : 0) - ((i & 1) ? 0 : j)) * MS;
		coll_fd_heard(f, c, t, NULL);
	}
	return t;
}

/* A fresh detector of a steady peer: n heartbeats every 125 +- 2 ms from
 * 1 s; returns the time of the last. */
static uint64_t steady(struct coll_fd *f, const struct coll_fd_cfg *c, unsigned n)
{
	coll_fd_reset(f);
	return beats(f, c, 1000 * MS, 125, 2, n);
}

static void never_heard_is_never_suspected(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	coll_fd_reset(&f);
	assert_int_equal(coll_fd_suspect(&f, &c, 3600 * 1000 * MS), 0);
	assert_true(coll_fd_phi(&f, &c, 3600 * 1000 * MS) == 0.0);
}

static void steady_peer_suspected_soon_after_the_floor(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	uint64_t t = steady(&f, &c, 100);
	/* Even a peer like a clock is not suspected before the floor... */
	assert_int_equal(coll_fd_suspect(&f, &c, t + 999 * MS), 0);
	/* ...and is at it: 1 s is far out in its distribution. */
	assert_int_equal(coll_fd_suspect(&f, &c, t + 1000 * MS), 1);
	assert_true(coll_fd_phi(&f, &c, t + 1000 * MS) >= c.phi);
	/* Heard again: nothing to suspect. */
	coll_fd_heard(&f, &c, t + 1001 * MS, NULL);
	assert_int_equal(coll_fd_suspect(&f, &c, t + 1002 * MS), 0);
}

static void starved_peer_gets_longer_but_not_past_the_ceiling(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	coll_fd_reset(&f);
	/* Under load: gaps of 125 ms with one of 1.5 s in every eight. */
	uint64_t t = 1000 * MS;
	for (unsigned i = 0; i < 64; i++) {
		t += (i % 8 == 7 ? 1500 : 125) * MS;
		coll_fd_heard(&f, &c, t, NULL);
	}
	/* A silence it has shown before is no suspicion... */
	assert_int_equal(coll_fd_suspect(&f, &c, t + 1600 * MS), 0);
	/* ...where the steady peer's would be one. */
	struct coll_fd g;
	uint64_t u = steady(&g, &c, 64);
	assert_int_equal(coll_fd_suspect(&g, &c, u + 1600 * MS), 1);
	/* The ceiling holds whatever the history. */
	assert_int_equal(coll_fd_suspect(&f, &c, t + 5000 * MS), 1);
}

static void bursts_are_not_samples(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	coll_fd_reset(&f);
	uint64_t t = beats(&f, &c, 1000 * MS, 125, 0, 20);
	uint32_t n = f.n;
	/* A thousand packets 10 us apart: no gap a quarter period long. */
	for (unsigned i = 0; i < 1000; i++)
		coll_fd_heard(&f, &c, t + (i + 1) * 10000ull, NULL);
	assert_int_equal(f.n, n);
	assert_int_equal(f.last_ns, t + 1000 * 10000ull);
}

static void rebase_restarts_the_silence(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	uint64_t t = steady(&f, &c, 50);
	uint32_t n = f.n;
	/* Ten seconds not read (between calls): not the peer's silence. */
	coll_fd_rebase(&f, t + 10000 * MS);
	assert_int_equal(f.n, n);
	assert_int_equal(coll_fd_suspect(&f, &c, t + 10500 * MS), 0);
	assert_int_equal(coll_fd_suspect(&f, &c, t + 11000 * MS), 1);
	/* A peer never heard stays never heard. */
	struct coll_fd g;
	coll_fd_reset(&g);
	coll_fd_rebase(&g, t);
	assert_int_equal(g.last_ns, 0);
}

static void suspect_probed_then_dead_unless_heard(void **st)
{
	(void)st;
	struct coll_fd_cfg c = cfg();
	struct coll_fd f;
	uint64_t t = steady(&f, &c, 64);
	assert_int_equal(coll_fd_judge(&f, &c, t + 900 * MS), COLL_FD_FINE);
	uint64_t s0 = t + 1000 * MS;
	assert_int_equal(coll_fd_judge(&f, &c, s0), COLL_FD_SUSPECT);
	assert_int_equal(f.probes, 1);
	/* Probed again each period, not in between. */
	assert_int_equal(coll_fd_judge(&f, &c, s0 + 100 * MS), COLL_FD_FINE);
	assert_int_equal(coll_fd_judge(&f, &c, s0 + 125 * MS), COLL_FD_PROBE);
	assert_int_equal(f.probes, 2);
	/* Confirmed a floor after the suspicion, not before. */
	assert_int_equal(coll_fd_judge(&f, &c, s0 + 999 * MS) == COLL_FD_DEAD, 0);
	assert_int_equal(coll_fd_judge(&f, &c, s0 + 1000 * MS), COLL_FD_DEAD);
	/* Heard while suspected (a probe's answer): cleared, fine again,
	 * and the probes it took still readable. */
	struct coll_fd g;
	uint64_t u = steady(&g, &c, 64);
	assert_int_equal(coll_fd_judge(&g, &c, u + 1000 * MS), COLL_FD_SUSPECT);
	assert_int_equal(coll_fd_heard(&g, &c, u + 1500 * MS, NULL), 1);
	assert_int_equal(g.probes, 1);
	assert_int_equal(coll_fd_judge(&g, &c, u + 2000 * MS), COLL_FD_FINE);
	assert_int_equal(coll_fd_heard(&g, &c, u + 2001 * MS, NULL), 0);
	/* A rebase drops a suspicion too. (The 1.5 s gap it was just heard
	 * after widened its history: the ceiling suspects it for sure.) */
	assert_int_equal(coll_fd_judge(&g, &c, u + 7001 * MS), COLL_FD_SUSPECT);
	coll_fd_rebase(&g, u + 7100 * MS);
	assert_int_equal(coll_fd_judge(&g, &c, u + 7200 * MS), COLL_FD_FINE);
}

static void hist_quantiles_bound_the_truth(void **st)
{
	(void)st;
	struct coll_hist h = {0};
	assert_int_equal(coll_hist_quantile(&h, 0.5), 0);
	/* 1..1000 µs once each. */
	for (uint64_t us = 1; us <= 1000; us++)
		coll_hist_add(&h, us);
	uint64_t p50 = coll_hist_quantile(&h, 0.5), p99 = coll_hist_quantile(&h, 0.99);
	assert_true(p50 >= 500 && p50 <= 500 * 1.19 + 1);
	assert_true(p99 >= 990 && p99 <= 1000);
	assert_int_equal(coll_hist_quantile(&h, 1.0), 1000);
	assert_int_equal(h.count, 1000);
	/* Hours do not overflow the buckets. */
	coll_hist_add(&h, 4ull * 3600 * 1000000);
	assert_int_equal(coll_hist_quantile(&h, 1.0), 4ull * 3600 * 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(never_heard_is_never_suspected),
		cmocka_unit_test(steady_peer_suspected_soon_after_the_floor),
		cmocka_unit_test(starved_peer_gets_longer_but_not_past_the_ceiling),
		cmocka_unit_test(bursts_are_not_samples),
		cmocka_unit_test(rebase_restarts_the_silence),
		cmocka_unit_test(suspect_probed_then_dead_unless_heard),
		cmocka_unit_test(hist_quantiles_bound_the_truth),
	};
	return cmocka_run_group_tests_name("coll-fd", tests, NULL, NULL);
}
