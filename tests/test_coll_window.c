/* The worker's self-tuned window (collective/coll_window.h): slow start,
 * Swift's delay response on its own smoothed RTT (proportional, at most
 * a quarter per RTT), a
 * loss halving it once per window, the floor and the cap, and
 * GW_COLL_WINDOW=fixed leaving it at the cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coll_window.h"

#define MS 1000000ull

static struct coll_window fresh(uint32_t shards, uint32_t slots)
{
	unsetenv("GW_COLL_WINDOW");
	struct coll_window w;
	coll_window_init(&w, shards, slots);
	return w;
}

/* Twice the floor to start; one more per result under the target. */
static void slow_start_grows_one_per_result(void **st)
{
	(void)st;
	struct coll_window w = fresh(4, 64);
	assert_true(w.cwnd == 8.0 && w.floor == 4.0 && w.cap == 256.0);
	for (int i = 0; i < 10; i++)
		coll_window_sample(&w, 1 * MS, (uint64_t)(100 + i) * MS);
	assert_true(w.cwnd == 18.0);
	assert_true(w.slow_start);
	assert_true(coll_window_allows(&w, 17) && !coll_window_allows(&w, 18));
}

static int near(double a, double b)
{
	return a > b - 1e-9 && a < b + 1e-9;
}

/* A smoothed RTT above base + 5 ms cuts in proportion to the excess, by
 * a quarter at most, once per RTT; growth is then one per window. */
static void delay_cuts_once_per_rtt(void **st)
{
	(void)st;
	struct coll_window w = fresh(1, 256);
	w.cwnd = 100;
	coll_window_sample(&w, 1 * MS, 1000 * MS);    /* base and srtt 1 ms: target 6 ms */
	assert_true(w.cwnd == 101.0);
	coll_window_sample(&w, 57 * MS, 1001 * MS);   /* srtt 8 ms: x (1 - 0.8 * 2/8) */
	assert_false(w.slow_start);
	assert_true(near(w.cwnd, 101.0 * 0.8));
	double after = w.cwnd;
	coll_window_sample(&w, 57 * MS, 1005 * MS);   /* srtt 14.1 ms, 4 ms after the cut */
	assert_true(w.cwnd == after);
	coll_window_sample(&w, 57 * MS, 1100 * MS);   /* srtt 19.5 ms: a quarter only */
	assert_true(near(w.cwnd, after * 0.75));
	assert_int_equal(w.cuts, 2);
	while (w.srtt_ns > 6 * MS)                   /* the queue drains */
		coll_window_sample(&w, 1 * MS, 1200 * MS);
	double c = w.cwnd;
	coll_window_sample(&w, 1 * MS, 1300 * MS);    /* under again: + 1 / cwnd */
	assert_true(near(w.cwnd, c + 1.0 / c));
}

/* One sample delayed by scheduling does not cut while the smoothed RTT
 * stays under the target. */
static void one_late_sample_does_not_cut(void **st)
{
	(void)st;
	struct coll_window w = fresh(1, 256);
	w.cwnd = 50;
	coll_window_sample(&w, 1 * MS, 10 * MS);
	coll_window_sample(&w, 40 * MS, 11 * MS);     /* srtt 5.9 ms, under 6 */
	assert_int_equal(w.cuts, 0);
	assert_true(w.cwnd > 51.0);
}

/* A loss halves the window; losses of chunks sent before that cut belong
 * to the same window and do not cut again. */
static void loss_halves_once_per_window(void **st)
{
	(void)st;
	struct coll_window w = fresh(2, 128);
	w.cwnd = 200;
	coll_window_loss(&w, 50 * MS, 100 * MS);
	assert_true(w.cwnd == 100.0);
	coll_window_loss(&w, 60 * MS, 101 * MS);    /* sent before the cut */
	assert_true(w.cwnd == 100.0);
	coll_window_loss(&w, 102 * MS, 150 * MS);   /* sent after it: a new loss */
	assert_true(w.cwnd == 50.0);
	assert_int_equal(w.losses, 2);
}

/* Never below one chunk per shard (at least 4), never above the slots. */
static void floor_and_cap(void **st)
{
	(void)st;
	struct coll_window w = fresh(3, 4);
	for (uint64_t t = 1; t < 40; t++)
		coll_window_loss(&w, t * 10 * MS, t * 10 * MS + 1);
	assert_true(w.cwnd == 4.0);
	for (int i = 0; i < 100; i++)
		coll_window_sample(&w, 1 * MS, 1000 * MS + (uint64_t)i);
	assert_true(w.cwnd == 12.0);
	struct coll_window six = fresh(6, 8);
	assert_true(six.floor == 6.0 && six.cwnd == 12.0);
	struct coll_window one = fresh(1, 1);
	assert_true(one.floor == 1.0 && one.cwnd == 1.0);
}

/* GW_COLL_WINDOW=fixed: the slots, whatever the path says. */
static void fixed_stays_at_the_cap(void **st)
{
	(void)st;
	setenv("GW_COLL_WINDOW", "fixed", 1);
	struct coll_window w;
	coll_window_init(&w, 2, 32);
	unsetenv("GW_COLL_WINDOW");
	assert_true(w.fixed && w.cwnd == 64.0);
	coll_window_sample(&w, 1 * MS, 10 * MS);
	coll_window_sample(&w, 90 * MS, 100 * MS);
	coll_window_loss(&w, 100 * MS, 200 * MS);
	assert_true(w.cwnd == 64.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_start_grows_one_per_result),
		cmocka_unit_test(delay_cuts_once_per_rtt),
		cmocka_unit_test(one_late_sample_does_not_cut),
		cmocka_unit_test(loss_halves_once_per_window),
		cmocka_unit_test(floor_and_cap),
		cmocka_unit_test(fixed_stays_at_the_cap),
	};
	return cmocka_run_group_tests_name("coll_window", tests, NULL, NULL);
}
