/* Count sketches add up on the wire: the countsketch frames of W workers'
 * vectors, decode-accumulated in any order into one r x c table, give the
 * sketch of the summed vector, up to float rounding (bound below, checked
 * per cell); slices never cross a row; and the table is the specified one
 * (XXH3 bucket and sign recomputed by hand, as docs/wire-format.md §4.9
 * defines them). */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include <gw/sketch.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define W 4
#define BUDGET (1500 - GW_PKT_RESERVE)   /* 1424: many slices per row */
#define DENSE_PARAMS 24u

/* ---- the hash, by hand from the spec -------------------------------------- */

/* h = XXH3_64(le64(i), seed + (j + 1) * 0x9E3779B97F4A7C15); bucket is the
 * high half of h scaled to [0, cols), sign is - for an odd h. */
static uint32_t spec_bucket(uint64_t seed, uint32_t cols, uint32_t row,
			    uint64_t i, float *sign)
{
	uint8_t le[8];
	for (int b = 0; b < 8; b++)
		le[b] = (uint8_t)(i >> (8 * b));
	uint64_t h = XXH3_64bits_withSeed(le, 8, seed + (row + 1ull) * 0x9E3779B97F4A7C15ull);
	*sign = (h & 1) ? -1.0f : 1.0f;
	return (uint32_t)(((h >> 32) * cols) >> 32);
}

static void test_hash_is_specified(void **state)
{
	(void)state;
	static const gw_csk shapes[] = {
		{5, 16384, 0x5ce7c41u}, {1, 1, 0}, {16, 1000, UINT64_MAX},
		{3, 4194304, 0x0123456789abcdefull},
	};
	static const uint64_t coords[] = {0, 1, 2, 255, 256, 65537, 1ull << 32,
					  (1ull << 40) + 3, UINT64_MAX - 1};
	for (size_t s = 0; s < GW_ARRAY_SIZE(shapes); s++)
		for (uint32_t j = 0; j < shapes[s].rows; j++)
			for (size_t c = 0; c < GW_ARRAY_SIZE(coords); c++) {
				float ws, gs = 0;
				uint32_t wb = spec_bucket(shapes[s].seed, shapes[s].cols, j,
							  coords[c], &ws);
				uint32_t gb = gw_csk_bucket(&shapes[s], j, coords[c], &gs);
				GW_CHECK(wb == gb && ws == gs,
					 "rows %u cols %u seed %llx row %u i %llu: bucket %u "
					 "sign %g, spec says %u %g", shapes[s].rows,
					 shapes[s].cols, (unsigned long long)shapes[s].seed,
					 j, (unsigned long long)coords[c], gb, (double)gs,
					 wb, (double)ws);
				GW_CHECK(gb < shapes[s].cols, "bucket %u of %u columns", gb,
					 shapes[s].cols);
			}
}

/* One coordinate on the wire: the decoded table holds +-x at (j, bucket_j)
 * of every row j, 0 elsewhere — the codec sketches with the spec's hashes. */
static void test_one_coordinate_on_the_wire(void **state)
{
	(void)state;
	enum { D = 50000, ROWS = 7, COLS = 300 };
	const uint64_t seed = 0xfeedbeefu, i0 = 31337;
	float *x = calloc(D, sizeof(float));
	float *table = calloc(ROWS * COLS, sizeof(float));
	GW_CHECK(x && table, "out of memory");
	x[i0] = 1.5f;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_COUNTSKETCH);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_ROWS, ROWS));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, COLS));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, (double)seed));
	gw_tensor t = gw_test_dense_tensor(3, x, D);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, BUDGET, &fr));
	gw_test_decode_all(&fr, table, ROWS * COLS);
	for (uint32_t j = 0; j < ROWS; j++) {
		float sign;
		uint32_t b = spec_bucket(seed, COLS, j, i0, &sign);
		for (uint32_t c = 0; c < COLS; c++) {
			float want = c == b ? sign * 1.5f : 0.0f;
			GW_CHECK(table[j * COLS + c] == want,
				 "row %u column %u: %g, want %g (bucket %u)", j, c,
				 (double)table[j * COLS + c], (double)want, b);
		}
	}
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	free(x);
	free(table);
}

/* ---- linearity ------------------------------------------------------------- */

/* All frames of one worker: dense countsketch slices of the (rows x cols)
 * table, each inside one row, in table order, covering it exactly once. */
static void encode_worker(const gw_csk *k, uint32_t id, const float *x, uint64_t d,
			  gw_test_frames *fr)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_COUNTSKETCH);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_ROWS, k->rows));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, k->cols));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, (double)k->seed));
	gw_tensor t = gw_test_dense_tensor(id, x, d);
	GW_OK_CALL(gw_test_encode_all(enc, &t, BUDGET, fr));
	gw_encoder_free(enc);
	uint64_t next = 0, cells = (uint64_t)k->rows * k->cols;
	for (size_t f = 0; f < fr->n; f++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr->f[f].data, fr->f[f].len, &h));
		const uint8_t *p = fr->f[f].data + GW_FRAME_HDR_LEN;
		GW_CHECK(h.codec == GW_CODEC_COUNTSKETCH && !(h.flags & GW_FF_SPARSE) &&
			 h.param_len == DENSE_PARAMS && h.tensor == id,
			 "frame %zu: codec %u flags %x param_len %u", f, h.codec,
			 h.flags, h.param_len);
		GW_CHECK(gw_test_ld32(p) == k->rows && gw_test_ld32(p + 4) == k->cols &&
			 gw_test_ld64(p + 8) == k->seed && gw_test_ld64(p + 16) == d,
			 "frame %zu: params rows %u (+reserved) cols %u seed %llx dim "
			 "%llu", f, gw_test_ld32(p), gw_test_ld32(p + 4),
			 (unsigned long long)gw_test_ld64(p + 8),
			 (unsigned long long)gw_test_ld64(p + 16));
		GW_CHECK(h.start == next, "frame %zu starts at %llu, not %llu", f,
			 (unsigned long long)h.start, (unsigned long long)next);
		GW_CHECK(h.start % k->cols + h.count <= k->cols,
			 "frame %zu [%llu, +%u) crosses a row of %u columns", f,
			 (unsigned long long)h.start, h.count, k->cols);
		/* a slice is as long as the budget or the row allows */
		uint32_t room = (BUDGET - GW_FRAME_HDR_LEN - DENSE_PARAMS) / 4;
		uint32_t left = k->cols - (uint32_t)(h.start % k->cols);
		GW_CHECK(h.count == GW_MIN(room, left), "frame %zu holds %u cells, "
			 "want min(%u, %u)", f, h.count, room, left);
		next += h.count;
	}
	GW_CHECK(next == cells, "frames cover %llu of %llu cells",
		 (unsigned long long)next, (unsigned long long)cells);
}

/*
 * Rounding bound. Cell (j, b) is, exactly, E = sum over workers w and over
 * the m coordinates i that hash to it of sign_j(i) * x_w[i]; let S be the
 * same sum of |x_w[i]|. The decoded table is each worker's table (a
 * recursive float32 sum of its m terms, signs exact) summed over the W
 * workers in arrival order: a recursive sum of at most m + W - 1 terms
 * in all, so (Higham, Accuracy and Stability, §4.2) |table - E| <=
 * gamma(m + W - 2) * S with gamma(n) = n u / (1 - n u), u = FLT_EPSILON / 2,
 * whatever the order of the frames. The sketch of the summed vector
 * (s = x_1 + ... + x_W in float32, then sketched) obeys the same bound,
 * so the two tables differ by at most 2 * gamma(m + W - 2) * S per cell.
 * E and S are computed in double from gw_csk_bucket()'s buckets (their own
 * error, below m * W * 2^-53 * S, is covered by the slack factor).
 */
static double gamma_n(uint64_t n)
{
	double nu = (double)n * (FLT_EPSILON / 2);
	return nu / (1 - nu);
}

struct ref {
	double *e, *s;   /* exact cell sums and sums of magnitudes */
	uint32_t *m;     /* terms per cell */
};

static void ref_build(const gw_csk *k, float *const x[W], uint64_t d, struct ref *r)
{
	size_t cells = (size_t)k->rows * k->cols;
	r->e = calloc(cells, sizeof(double));
	r->s = calloc(cells, sizeof(double));
	r->m = calloc(cells, sizeof(uint32_t));
	GW_CHECK(r->e && r->s && r->m, "out of memory");
	for (uint32_t j = 0; j < k->rows; j++)
		for (uint64_t i = 0; i < d; i++) {
			float sign;
			size_t c = (size_t)j * k->cols + gw_csk_bucket(k, j, i, &sign);
			r->m[c]++;
			for (int w = 0; w < W; w++) {
				r->e[c] += (double)sign * x[w][i];
				r->s[c] += fabs((double)x[w][i]);
			}
		}
}

static void ref_free(struct ref *r)
{
	free(r->e);
	free(r->s);
	free(r->m);
}

/* Every cell of table within gamma(m + W - 2) * S of E; returns the
 * largest error seen in units of FLT_EPSILON * S. */
static double check_table(const gw_csk *k, const float *table, const struct ref *r,
			  const char *what)
{
	double worst = 0;
	for (size_t c = 0; c < (size_t)k->rows * k->cols; c++) {
		double err = fabs((double)table[c] - r->e[c]);
		double bound = gamma_n(r->m[c] + W - 2) * r->s[c] * (1 + 0x1p-20);
		GW_CHECK(err <= bound, "%s: cell %zu (row %zu): %.9g, exact %.17g, error "
			 "%.3g above the bound %.3g (m = %u, S = %.9g)", what, c,
			 c / k->cols, (double)table[c], r->e[c], err, bound, r->m[c],
			 r->s[c]);
		if (r->s[c] > 0)
			worst = fmax(worst, err / (FLT_EPSILON * r->s[c]));
	}
	return worst;
}

static void linearity(const gw_csk *k, float *const x[W], uint64_t d,
		      const char *what)
{
	size_t cells = (size_t)k->rows * k->cols;
	gw_test_frames fr[W];
	size_t total = 0;
	for (int w = 0; w < W; w++) {
		encode_worker(k, (uint32_t)w, x[w], d, &fr[w]);
		total += fr[w].n;
	}
	/* every frame of every worker, in a shuffled order */
	size_t *order = malloc(total * sizeof(size_t));
	GW_CHECK(order, "out of memory");
	for (size_t i = 0; i < total; i++)
		order[i] = i;
	gw_test_rng rng = {d};
	gw_test_shuffle(&rng, order, total);

	float *in_order = calloc(cells, sizeof(float));
	float *shuffled = calloc(cells, sizeof(float));
	float *sum_sketch = calloc(cells, sizeof(float));
	float *sum = malloc(d * sizeof(float));
	GW_CHECK(in_order && shuffled && sum_sketch && sum, "out of memory");
	for (int w = 0; w < W; w++)
		gw_test_decode_all(&fr[w], in_order, cells);
	for (size_t i = 0; i < total; i++) {
		size_t f = order[i];
		int w = 0;
		while (f >= fr[w].n)
			f -= fr[w++].n;
		GW_EXPECT_RC(gw_decode(fr[w].f[f].data, fr[w].f[f].len, shuffled, cells),
			     (int)gw_test_ld32(fr[w].f[f].data + GW_TEST_OFF_COUNT),
			     "%s: worker %d frame %zu", what, w, f);
	}
	for (uint64_t i = 0; i < d; i++) {
		float s = 0;
		for (int w = 0; w < W; w++)
			s += x[w][i];
		sum[i] = s;
	}
	GW_OK_CALL(gw_csk_add(k, sum, d, sum_sketch));

	struct ref r;
	ref_build(k, x, d, &r);
	double e1 = check_table(k, in_order, &r, what);
	double e2 = check_table(k, shuffled, &r, what);
	double e3 = check_table(k, sum_sketch, &r, what);
	size_t differ = 0;
	for (size_t c = 0; c < cells; c++) {
		double bound = 2 * gamma_n(r.m[c] + W - 2) * r.s[c] * (1 + 0x1p-20);
		GW_CHECK(fabs((double)shuffled[c] - sum_sketch[c]) <= bound,
			 "%s: cell %zu: decoded %.9g, sketch of the sum %.9g", what, c,
			 (double)shuffled[c], (double)sum_sketch[c]);
		differ += gw_test_bits(in_order[c]) != gw_test_bits(shuffled[c]);
	}
	print_message("  %s: d %llu, %u x %u, %zu frames; worst error / (eps S): "
		      "in order %.3f, shuffled %.3f, sketch of the sum %.3f; %zu "
		      "cells differ between the two orders (allowed)\n",
		      what, (unsigned long long)d, k->rows, k->cols, total, e1, e2, e3,
		      differ);
	ref_free(&r);
	free(order);
	free(in_order);
	free(shuffled);
	free(sum_sketch);
	free(sum);
	for (int w = 0; w < W; w++)
		gw_test_frames_free(&fr[w]);
}

static void test_linearity_random(void **state)
{
	(void)state;
	static const struct {
		uint64_t d;
		gw_csk k;
	} cases[] = {
		{5000, {5, 1000, 0x5ce7c41u}},      /* ~5 coordinates a cell */
		{20000, {3, 700, 42}},              /* ~29 a cell, rows of 3 slices */
		{3000, {16, 341, UINT32_MAX}},      /* a row is exactly one slice */
		{777, {1, 5000, 0}},                /* more cells than coordinates */
	};
	for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
		uint64_t d = cases[c].d;
		float *x[W];
		gw_test_rng rng = {1000 + c};
		for (int w = 0; w < W; w++) {
			x[w] = malloc(d * sizeof(float));
			GW_CHECK(x[w], "out of memory");
			/* gradient-like: mixed signs and scales, some zeros */
			for (uint64_t i = 0; i < d; i++)
				x[w][i] = gw_test_below(&rng, 10) == 0 ? 0.0f
					: gw_test_uniform(&rng, -1, 1) *
					  (gw_test_below(&rng, 4) ? 1e-3f : 1.0f);
		}
		char what[64];
		snprintf(what, sizeof(what), "random case %zu", c);
		linearity(&cases[c].k, x, d, what);
		for (int w = 0; w < W; w++)
			free(x[w]);
	}
}

/* The W workers hold the four cnn iterations' fc.weight gradients (20,480
 * values each), sketched at Sketched-SGD's default size for that d. */
static void test_linearity_trace(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_dense g[W];
	float *x[W];
	for (int w = 0; w < W; w++) {
		gw_test_load_dense(w * GW_TEST_CNN_TENSORS + 4, &g[w]);
		GW_CHECK(g[w].n == g[0].n, "%s: %zu values, not %zu", g[w].name,
			 g[w].n, g[0].n);
		x[w] = g[w].v;
	}
	gw_sketched_sizes sz;
	GW_OK_CALL(gw_sketched_sizes_default(g[0].n, &sz));
	gw_csk k = {sz.rows, sz.cols, 0x5ce7c41u};
	linearity(&k, x, g[0].n, "cnn fc.weight x 4 iterations");
	for (int w = 0; w < W; w++)
		gw_test_dense_free(&g[w]);
}

GW_TEST_MAIN("countsketch_linearity", 0,
	     cmocka_unit_test(test_hash_is_specified),
	     cmocka_unit_test(test_one_coordinate_on_the_wire),
	     cmocka_unit_test(test_linearity_random),
	     cmocka_unit_test(test_linearity_trace))
