/* onebit round-trips every real trace at several budgets: each frame decodes to exactly two values, the means of its non-negative and of its negative inputs (sums in double in the encoder's documented lane order, rounded once to float) (so no other pair of float levels for that sign split has a smaller squared error, checked against nudged, extreme and symmetric alternatives); bits are packed LSB-first; each frame decodes on its own, touching only its range. */
#include "gw_test.h"

#include <math.h>

static const size_t budgets[] = {64, 100, 1500 - 78, 9000, 65535};

struct split {
	double sp, sn;        /* sums of non-negative / negative values */
	uint32_t np, nn;
	float a, b;           /* reference levels */
};

/* The encoder's documented summation order: value i to lane i mod 8, each
 * lane in double in index order, lanes combined pairwise. */
static double lane_sum(const double *l)
{
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

static struct split split_of(const float *x, uint32_t n)
{
	struct split s = {0};
	double lp[8] = {0}, ln[8] = {0};
	for (uint32_t i = 0; i < n; i++) {
		if (x[i] >= 0.0f) {
			lp[i % 8] += x[i];
			s.np++;
		} else {
			ln[i % 8] += x[i];
			s.nn++;
		}
	}
	s.sp = lane_sum(lp);
	s.sn = lane_sum(ln);
	s.a = s.np ? (float)(s.sp / s.np) : 0.0f;
	s.b = s.nn ? (float)(s.sn / s.nn) : 0.0f;
	return s;
}

static double sq_err(const float *x, uint32_t n, double a, double b)
{
	double e = 0;
	for (uint32_t i = 0; i < n; i++) {
		double d = (double)x[i] - (x[i] >= 0.0f ? a : b);
		e += d * d;
	}
	return e;
}

/* x[0..n) is the frame's input, y its decoded values. */
static void check_frame(const char *what, size_t j, const float *x,
			const float *y, uint32_t n)
{
	struct split s = split_of(x, n);
	for (uint32_t i = 0; i < n; i++) {
		float want = x[i] >= 0.0f ? s.a : s.b;
		GW_CHECK(gw_test_bits(y[i]) == gw_test_bits(want),
			 "%s frame %zu: value %u (%a) decoded to %a, expected the "
			 "%s mean %a", what, j, i, (double)x[i], (double)y[i],
			 x[i] >= 0.0f ? "non-negative" : "negative", (double)want);
	}
	/* Among floats, a and b are nearest the exact means: their nudged
	 * neighbours are no closer, so no better for the squared error. */
	if (s.np) {
		double m = s.sp / s.np;
		GW_CHECK(fabs(s.a - m) <= fabs(nextafterf(s.a, INFINITY) - m) &&
				 fabs(s.a - m) <= fabs(nextafterf(s.a, -INFINITY) - m),
			 "%s frame %zu: a %a is not the float nearest %a", what, j,
			 (double)s.a, m);
	}
	if (s.nn) {
		double m = s.sn / s.nn;
		GW_CHECK(fabs(s.b - m) <= fabs(nextafterf(s.b, INFINITY) - m) &&
				 fabs(s.b - m) <= fabs(nextafterf(s.b, -INFINITY) - m),
			 "%s frame %zu: b %a is not the float nearest %a", what, j,
			 (double)s.b, m);
	}
	/* Coarser alternatives, directly. */
	double mx = 0, mn = 0, mabs = 0;
	for (uint32_t i = 0; i < n; i++) {
		mx = fmax(mx, x[i]);
		mn = fmin(mn, x[i]);
		mabs += fabs((double)x[i]) / n;
	}
	double alts[][2] = {
		{mx, mn}, {mabs, -mabs}, {s.a * 1.01, s.b}, {s.a * 0.99, s.b},
		{s.a, s.b * 1.01}, {s.a, s.b * 0.99}, {0, 0},
	};
	/* Levels travel as float32: compare with float alternatives (a double
	 * level between two floats can beat the float nearest the mean by a
	 * rounding error, which no frame could carry). */
	double best = sq_err(x, n, s.a, s.b);
	for (size_t k = 0; k < GW_ARRAY_SIZE(alts); k++) {
		double e = sq_err(x, n, (float)alts[k][0], (float)alts[k][1]);
		GW_CHECK(best <= e * (1 + 1e-12), "%s frame %zu: squared error %.17g "
			 "of the means exceeds %.17g of levels (%g, %g)", what, j,
			 best, e, alts[k][0], alts[k][1]);
	}
}

/* Each frame alone changes only its range and gives there what all frames
 * gave (stray writes: whole output scanned for up to 8 sampled frames and
 * at the end). */
static void check_independent(const gw_test_frames *fr, const float *full,
			      uint64_t dim, const char *what)
{
	float *one = malloc(dim * sizeof(float));
	GW_CHECK(one, "out of memory");
	gw_test_fill(one, dim, -0.0f);
	size_t every = fr->n / 8 + 1;
	for (size_t j = fr->n; j-- > 0;) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr->f[j].data, fr->f[j].len, &h));
		GW_EXPECT_RC(gw_decode(fr->f[j].data, fr->f[j].len, one, dim),
			     (int)h.count, "%s: frame %zu alone", what, j);
		for (uint64_t k = h.start; k < h.start + h.span; k++) {
			if (gw_test_bits(one[k]) != 0x80000000u)
				GW_CHECK(gw_test_bits(one[k]) == gw_test_bits(full[k]),
					 "%s: frame %zu alone gives %a at %llu, all "
					 "frames %a", what, j, (double)one[k],
					 (unsigned long long)k, (double)full[k]);
			one[k] = -0.0f;
		}
		if (j % every == 0)
			for (uint64_t k = 0; k < dim; k++)
				GW_CHECK(gw_test_bits(one[k]) == 0x80000000u,
					 "%s: element %llu written outside frame %zu",
					 what, (unsigned long long)k, j);
	}
	free(one);
}

static void test_dense_traces(void **state)
{
	(void)state;
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
		gw_tensor t = gw_test_dense_tensor(1, d.v, d.n);
		float *out = malloc(d.n * sizeof(float));
		GW_CHECK(out, "out of memory");
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			gw_test_fill(out, d.n, -0.0f);
			gw_test_decode_all(&fr, out, d.n);
			uint64_t next = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(h.flags == 0 && h.param_len == 8 &&
						 h.payload_len == (h.count + 7) / 8 &&
						 h.start == next,
					 "%s budget %zu frame %zu: header", d.name,
					 budgets[b], j);
				/* bit i of the frame is byte i/8, bit i%8 */
				const uint8_t *bits = fr.f[j].data + GW_FRAME_HDR_LEN + 8;
				for (uint32_t k = 0; k < h.count; k++)
					GW_CHECK(((bits[k / 8] >> (k % 8)) & 1) ==
							 (d.v[h.start + k] >= 0.0f),
						 "%s frame %zu: bit %u", d.name, j, k);
				check_frame(d.name, j, d.v + h.start, out + h.start,
					    h.count);
				next += h.count;
			}
			GW_CHECK(next == d.n, "%s: frames cover %llu of %zu", d.name,
				 (unsigned long long)next, d.n);
			check_independent(&fr, out, d.n, d.name);
			gw_test_frames_free(&fr);
		}
		free(out);
		gw_encoder_free(enc);
		gw_test_dense_free(&d);
	}
}

static void sparse_traces(unsigned key_bits)
{
	for (int i = 0; i < GW_TEST_N_SPARSE; i++) {
		gw_test_sparse s;
		gw_test_load_sparse(i, &s);
		uint64_t *k64 = NULL;
		const void *keys = s.keys;
		if (key_bits == 64) {
			k64 = malloc(s.nnz * sizeof(*k64));
			GW_CHECK(k64, "out of memory");
			for (size_t j = 0; j < s.nnz; j++)
				k64[j] = s.keys[j];
			keys = k64;
		}
		gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
		gw_tensor t = gw_test_sparse_tensor(2, s.dim, keys, key_bits, s.vals,
						    s.nnz);
		float *out = malloc(s.dim * sizeof(float));
		float *y = malloc(s.nnz * sizeof(float));
		GW_CHECK(out && y, "out of memory");
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			gw_test_fill(out, s.dim, -0.0f);
			gw_test_decode_all(&fr, out, s.dim);
			for (size_t k = 0; k < s.nnz; k++)
				y[k] = out[s.keys[k]];
			/* frames come in key order: entries [e, e + count) */
			size_t e = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(e + h.count <= s.nnz && s.keys[e] == h.start &&
						 s.keys[e + h.count - 1] ==
							 h.start + h.span - 1,
					 "%s frame %zu: range [%llu,+%u)", s.name, j,
					 (unsigned long long)h.start, h.span);
				check_frame(s.name, j, s.vals + e, y + e, h.count);
				e += h.count;
			}
			GW_CHECK(e == s.nnz, "%s: frames hold %zu of %zu entries",
				 s.name, e, s.nnz);
			check_independent(&fr, out, s.dim, s.name);
			gw_test_frames_free(&fr);
		}
		free(out);
		free(y);
		free(k64);
		gw_encoder_free(enc);
		gw_test_sparse_free(&s);
	}
}

static void test_sparse_traces_key32(void **state)
{
	(void)state;
	sparse_traces(32);
}

static void test_sparse_traces_key64(void **state)
{
	(void)state;
	sparse_traces(64);
}

/* All non-negative: b is 0 and unused; all negative: a is 0. */
static void test_one_sided(void **state)
{
	(void)state;
	float pos[9] = {0, 1, 2, 3, 0, 5, 6, 7, 8};
	float neg[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
	float *ins[2] = {pos, neg};
	for (int c = 0; c < 2; c++) {
		gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
		gw_tensor t = gw_test_dense_tensor(1, ins[c], 9);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
		GW_CHECK(fr.n == 1, "%zu frames", fr.n);
		const uint8_t *p = fr.f[0].data + GW_FRAME_HDR_LEN;
		float a = gw_test_float(gw_test_ld32(p));
		float b = gw_test_float(gw_test_ld32(p + 4));
		GW_CHECK(c == 0 ? (a == (float)(32.0 / 9) && gw_test_bits(b) == 0)
				: (gw_test_bits(a) == 0 && b == -5.0f),
			 "levels %a %a", (double)a, (double)b);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_traces),
		cmocka_unit_test(test_sparse_traces_key32),
		cmocka_unit_test(test_sparse_traces_key64),
		cmocka_unit_test(test_one_sided),
	};
	return cmocka_run_group_tests_name("onebit_roundtrip", tests, NULL, NULL);
}
