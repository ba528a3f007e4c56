/* Bloom policy P2 (conflict sets) loses no more than P1 (random draw) at
 * the same false-positive rate, as the DeepReduce paper claims (§4): on
 * windows of 4096 consecutive keys of the three real spam traces and on
 * the top 1% (by magnitude) of each cnn iteration's 25,290 gradients, at
 * fpr 0.01, 0.05 and 0.1, the true keys P2 recovers, summed over the
 * windows, are at least P1's, and its error — the sum of the squared true
 * values of the keys not recovered — at most P1's. Both use the same
 * filter (same seed); the numbers are printed, with P0's extra values
 * (|P| - n, what losslessness costs) for comparison. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/deepreduce/dr.h"

#define W 4096u
static const double fprs[] = {0.01, 0.05, 0.1};
#define NF GW_ARRAY_SIZE(fprs)

struct tally {
	uint64_t keys, got[3], extra;   /* got: P0, P1, P2 */
	double energy, err[3];
};

static struct tally total[NF];

/* One window: offsets off[0..n) with values v[0..n) over span. */
static void window(const uint32_t *off, const float *v, uint32_t n, uint32_t span,
		   uint32_t seed, const char *what)
{
	size_t cap = 64 + dr_bloom_bits(n, 0.01) / 8 + 16;
	uint8_t *sec = malloc(cap);
	uint32_t *pos = malloc(((size_t)span + 1) * sizeof(uint32_t));
	GW_CHECK(sec && pos, "out of memory");
	for (unsigned f = 0; f < NF; f++) {
		struct tally *t = &total[f];
		t->keys += n;
		for (uint32_t i = 0; i < n; i++)
			t->energy += (double)v[i] * v[i];
		for (unsigned p = DR_P0; p <= DR_P2; p++) {
			struct dr_index_cfg cfg = {.fpr = fprs[f], .policy = p, .seed = seed};
			uint32_t nv = 0;
			int len = dr_index_bloom.encode(off, n, span, &cfg, sec, cap, &nv);
			GW_CHECK(len > 0, "%s fpr %g P%u: encode %s", what, fprs[f], p,
				 gw_error_name(len));
			GW_OK_CALL(dr_index_bloom.decode(sec, (size_t)len, span, nv, pos));
			if (p == DR_P0)
				t->extra += nv - n;
			/* Which keys are recovered: both lists ascend. */
			uint32_t j = 0, got = 0;
			double err = 0;
			for (uint32_t i = 0; i < n; i++) {
				while (j < nv && pos[j] < off[i])
					j++;
				if (j < nv && pos[j] == off[i])
					got++;
				else
					err += (double)v[i] * v[i];
			}
			t->got[p] += got;
			t->err[p] += err;
		}
	}
	free(sec);
	free(pos);
}

static void test_spam(void **state)
{
	(void)state;
	uint32_t off[W];
	uint32_t seed = 1;
	for (int tr = 0; tr < GW_TEST_N_SPARSE; tr++) {
		gw_test_sparse s;
		gw_test_load_sparse(tr, &s);
		for (size_t w0 = 0; w0 + W <= s.nnz; w0 += W) {
			for (uint32_t i = 0; i < W; i++)
				off[i] = s.keys[w0 + i] - s.keys[w0];
			window(off, s.vals + w0, W, off[W - 1] + 1, seed++, s.name);
		}
		gw_test_sparse_free(&s);
	}
}

struct mag {
	float a;
	uint32_t i;
};

static int by_mag_desc(const void *x, const void *y)
{
	const struct mag *a = x, *b = y;
	if (a->a != b->a)
		return a->a > b->a ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int by_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

static void test_cnn_top1(void **state)
{
	(void)state;
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++) {
		size_t d;
		float *g = gw_test_load_cnn_iter(it, &d);
		GW_CHECK(g && d == GW_TEST_CNN_PARAMS, "cnn iteration %d", it);
		struct mag *m = malloc(d * sizeof(*m));
		uint32_t r = (uint32_t)((d + 99) / 100);
		uint32_t *idx = malloc(r * sizeof(*idx)), *off = malloc(r * sizeof(*off));
		float *v = malloc(r * sizeof(*v));
		GW_CHECK(m && idx && off && v, "out of memory");
		for (size_t i = 0; i < d; i++)
			m[i] = (struct mag){fabsf(g[i]), (uint32_t)i};
		qsort(m, d, sizeof(*m), by_mag_desc);
		for (uint32_t i = 0; i < r; i++)
			idx[i] = m[i].i;
		qsort(idx, r, sizeof(*idx), by_u32);
		for (uint32_t i = 0; i < r; i++) {
			off[i] = idx[i] - idx[0];
			v[i] = g[idx[i]];
		}
		window(off, v, r, off[r - 1] + 1, 1000u + (uint32_t)it, "cnn top 1%");
		free(m);
		free(idx);
		free(off);
		free(v);
		free(g);
	}
}

/* Runs last: the assertion is over all windows of both sets. */
static void test_p2_not_worse(void **state)
{
	(void)state;
	print_message("  %-5s %8s %9s | %8s %8s %8s | %10s %10s | %s\n", "fpr", "keys",
		      "P0 extra", "P0 got", "P1 got", "P2 got", "P1 err", "P2 err",
		      "err / energy P1, P2");
	for (unsigned f = 0; f < NF; f++) {
		const struct tally *t = &total[f];
		GW_CHECK(t->keys > 0, "no windows");
		print_message("  %-5g %8llu %9llu | %8llu %8llu %8llu | %10.4g %10.4g | "
			      "%.4f %.4f\n", fprs[f], (unsigned long long)t->keys,
			      (unsigned long long)t->extra, (unsigned long long)t->got[0],
			      (unsigned long long)t->got[1], (unsigned long long)t->got[2],
			      t->err[1], t->err[2], t->err[1] / t->energy,
			      t->err[2] / t->energy);
		GW_CHECK(t->got[0] == t->keys && t->err[0] == 0, "P0 lost keys");
		GW_CHECK(t->got[2] >= t->got[1], "fpr %g: P2 recovered %llu < P1's %llu",
			 fprs[f], (unsigned long long)t->got[2],
			 (unsigned long long)t->got[1]);
		GW_CHECK(t->err[2] <= t->err[1], "fpr %g: P2 error %g > P1's %g", fprs[f],
			 t->err[2], t->err[1]);
	}
}

GW_TEST_MAIN("dr_bloom_policies", 1,
	     cmocka_unit_test(test_spam), cmocka_unit_test(test_cnn_top1),
	     cmocka_unit_test(test_p2_not_worse))
