/* The KLL quantile sketch (codec/quantile.h) against exact quantiles of the
 * real sparse traces' magnitudes: every one of the 255 splits of q = 256
 * lies within the documented all-quantiles rank error of k = 256 (1.31% of
 * n), for one sketch fed everything and for four sketches merged; the same
 * seed gives the same splits. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/quantile.h"

#define Q 256u
#define EPS 0.0131

static int cmp_f(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* Exact rank (values < v) in sorted[0..n), against the target rank. */
static void check_splits(const float *sorted, size_t n, const float *splits,
			 const char *what)
{
	double worst = 0;
	for (uint32_t i = 1; i < Q; i++) {
		/* Any rank in [#below, #at-or-below] is exact for a tie. */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (sorted[mid] < splits[i - 1]) lo = mid + 1; else hi = mid;
		}
		size_t below = lo, upto = lo;
		while (upto < n && sorted[upto] == splits[i - 1])
			upto++;
		double want = (double)i * (double)n / Q, err = 0;
		if (want < (double)below)
			err = (double)below - want;
		else if (want > (double)upto)
			err = want - (double)upto;
		worst = fmax(worst, err / (double)n);
	}
	print_message("  %s: worst normalized rank error %.4f%% (bound %.2f%%)\n", what,
		      100 * worst, 100 * EPS);
	GW_CHECK(worst <= EPS, "%s: rank error %.4f > %.4f", what, worst, EPS);
}

/* One sparse trace: the sketch's splits, alone and merged, reproducible. */
static void trace_quantiles(const gw_test_sparse *sp, void *arg)
{
	(void)arg;
	float *mag = malloc(sp->nnz * sizeof(float));
	GW_CHECK(mag, "out of memory");
	gw_kll one, part[4];
	GW_OK_CALL(gw_kll_init(&one, 256, 1));
	for (int p = 0; p < 4; p++)
		GW_OK_CALL(gw_kll_init(&part[p], 256, 10 + (uint64_t)p));
	for (size_t i = 0; i < sp->nnz; i++) {
		mag[i] = fabsf(sp->vals[i]);
		GW_OK_CALL(gw_kll_add(&one, mag[i]));
		GW_OK_CALL(gw_kll_add(&part[i % 4], mag[i]));
	}
	for (int p = 1; p < 4; p++)
		GW_OK_CALL(gw_kll_merge(&part[0], &part[p]));
	GW_CHECK(one.n == sp->nnz && part[0].n == sp->nnz, "weights lost");
	GW_CHECK(one.held < sp->nnz / 20, "%s: sketch holds %llu of %zu values",
		 sp->name, (unsigned long long)one.held, sp->nnz);
	qsort(mag, sp->nnz, sizeof(float), cmp_f);
	float splits[Q - 1], again[Q - 1];
	GW_OK_CALL(gw_kll_splits(&one, Q, splits));
	check_splits(mag, sp->nnz, splits, sp->name);
	GW_OK_CALL(gw_kll_splits(&part[0], Q, splits));
	check_splits(mag, sp->nnz, splits, "four merged");
	/* Same seed, same input: same sketch. */
	gw_kll_reset(&one, 1);
	for (size_t i = 0; i < sp->nnz; i++)
		GW_OK_CALL(gw_kll_add(&one, fabsf(sp->vals[i])));
	GW_OK_CALL(gw_kll_splits(&one, Q, again));
	gw_kll two;
	GW_OK_CALL(gw_kll_init(&two, 256, 1));
	for (size_t i = 0; i < sp->nnz; i++)
		GW_OK_CALL(gw_kll_add(&two, fabsf(sp->vals[i])));
	GW_OK_CALL(gw_kll_splits(&two, Q, splits));
	GW_CHECK(!memcmp(splits, again, sizeof(splits)), "not reproducible");
	gw_kll_free(&two);
	gw_kll_free(&one);
	for (int p = 0; p < 4; p++)
		gw_kll_free(&part[p]);
	free(mag);
}

static void test_trace_quantiles(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_each_trace(NULL, trace_quantiles, NULL);
}

static void test_refusals(void **state)
{
	(void)state;
	gw_kll s, t;
	GW_EXPECT_RC(gw_kll_init(&s, 4, 0), GW_EINVAL, "k below 8");
	GW_OK_CALL(gw_kll_init(&s, 64, 0));
	GW_OK_CALL(gw_kll_init(&t, 128, 0));
	float sp[3];
	GW_EXPECT_RC(gw_kll_splits(&s, 4, sp), GW_EINVAL, "empty sketch");
	GW_EXPECT_RC(gw_kll_merge(&s, &t), GW_EINVAL, "different k");
	gw_kll_free(&s);
	gw_kll_free(&t);
}

GW_TEST_MAIN("kll", 0,
	     cmocka_unit_test(test_trace_quantiles),
	     cmocka_unit_test(test_refusals))
