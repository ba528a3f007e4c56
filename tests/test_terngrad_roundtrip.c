/* terngrad round-trips every real trace at several budgets: every decoded value is -m, 0 or +m (m the tensor's largest magnitude) with the input's sign, zeros stay zero, zero trits leave the output's bits untouched, the largest elements decode exactly, frames start on multiples of 5, and each frame decodes on its own, in any order, touching only its range. */
#include "gw_test.h"

#include <math.h>

static const size_t budgets[] = {64, 100, 1500 - 78, 9000, 65535};

static double max_abs(const float *v, size_t n)
{
	double m = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			m = fmax(m, fabs((double)v[i]));
	return m;
}

/* Value i decoded from input x with scale m: the terngrad contract. */
static void check_value(const char *what, size_t i, float x, float y, float m)
{
	GW_CHECK(y == 0.0f || y == m || y == -m,
		 "%s: element %zu: %a decoded to %a, not in {-m, 0, m} (m %a)",
		 what, i, (double)x, (double)y, (double)m);
	if (y != 0.0f)
		GW_CHECK((y > 0) == (x > 0), "%s: element %zu: %a decoded to %a "
			 "(sign flipped)", what, i, (double)x, (double)y);
	else   /* outputs start at -0.0; a zero trit leaves them untouched */
		GW_CHECK(gw_test_bits(y) == 0x80000000u, "%s: element %zu: zero "
			 "trit wrote %a into -0.0", what, i, (double)y);
	if (x == 0.0f)
		GW_CHECK(y == 0.0f, "%s: element %zu: 0 decoded to %a", what, i,
			 (double)y);
	if (fabsf(x) == m)
		GW_CHECK(y == x, "%s: element %zu: max-magnitude %a decoded to %a "
			 "(probability 1)", what, i, (double)x, (double)y);
}

/* Each frame alone changes only its own range and gives there what all
 * frames gave; the frames decoded in reverse order give bitwise what forward
 * order gave. Every frame's range is checked; the whole output is scanned
 * for stray writes after each of up to 8 sampled frames and at the end. */
static void check_independent(const gw_test_frames *fr, const float *full,
			      uint64_t dim, const char *what)
{
	float *one = malloc(dim * sizeof(float));
	float *rev = malloc(dim * sizeof(float));
	GW_CHECK(one && rev, "out of memory");
	gw_test_fill(rev, dim, -0.0f);
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
		if (j % every == 0 || j == 0)
			for (uint64_t k = 0; k < dim; k++)
				GW_CHECK(gw_test_bits(one[k]) == 0x80000000u,
					 "%s: element %llu written outside frame %zu's "
					 "range [%llu,+%u) (or an earlier one's)", what,
					 (unsigned long long)k, j,
					 (unsigned long long)h.start, h.span);
		GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, rev, dim));
	}
	for (uint64_t k = 0; k < dim; k++)
		GW_CHECK(gw_test_bits(rev[k]) == gw_test_bits(full[k]),
			 "%s: reverse order differs at %llu", what,
			 (unsigned long long)k);
	free(one);
	free(rev);
}

static void test_dense_traces(void **state)
{
	(void)state;
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		float m = (float)max_abs(d.v, d.n);
		gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, 1000 + i));
		gw_tensor t = gw_test_dense_tensor(7u + (uint32_t)i, d.v, d.n);
		float *out = malloc(d.n * sizeof(float));
		GW_CHECK(out, "out of memory");
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			uint64_t next = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(h.codec == GW_CODEC_TERNGRAD && h.flags == 0 &&
						 h.param_len == 4 && h.start == next,
					 "%s budget %zu: frame %zu header", d.name,
					 budgets[b], j);
				GW_CHECK(h.start % 5 == 0 &&
						 (h.count % 5 == 0 || h.start + h.count == d.n),
					 "%s budget %zu: frame %zu [%llu,+%u) not on a "
					 "multiple of 5", d.name, budgets[b], j,
					 (unsigned long long)h.start, h.count);
				GW_CHECK(h.payload_len == (h.count + 4) / 5,
					 "%s: frame %zu payload %u for %u trits", d.name,
					 j, h.payload_len, h.count);
				GW_CHECK(gw_test_bits(gw_test_float(gw_test_ld32(
						 fr.f[j].data + GW_FRAME_HDR_LEN))) ==
						 gw_test_bits(m),
					 "%s: frame %zu scale is not the tensor's max", d.name, j);
				next = h.start + h.count;
			}
			GW_CHECK(next == d.n, "%s budget %zu: frames cover %llu of %zu",
				 d.name, budgets[b], (unsigned long long)next, d.n);
			gw_test_fill(out, d.n, -0.0f);
			gw_test_decode_all(&fr, out, d.n);
			for (size_t k = 0; k < d.n; k++)
				check_value(d.name, k, d.v[k], out[k], m);
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
		float m = (float)max_abs(s.vals, s.nnz);
		gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
		gw_tensor t = gw_test_sparse_tensor(3, s.dim, keys, key_bits, s.vals,
						    s.nnz);
		float *out = malloc(s.dim * sizeof(float));
		GW_CHECK(out, "out of memory");
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			uint64_t total = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(h.flags == (GW_FF_SPARSE |
						     (key_bits == 64 ? GW_FF_KEY64 : 0)),
					 "%s: frame %zu flags %#x", s.name, j, h.flags);
				total += h.count;
			}
			GW_CHECK(total == s.nnz, "%s: frames hold %llu of %zu entries",
				 s.name, (unsigned long long)total, s.nnz);
			gw_test_fill(out, s.dim, -0.0f);
			gw_test_decode_all(&fr, out, s.dim);
			size_t ki = 0;
			for (uint64_t k = 0; k < s.dim; k++) {
				if (ki < s.nnz && s.keys[ki] == k) {
					check_value(s.name, ki, s.vals[ki], out[k], m);
					ki++;
				} else {
					GW_CHECK(gw_test_bits(out[k]) == 0x80000000u,
						 "%s: coordinate %llu has no key but was "
						 "written", s.name, (unsigned long long)k);
				}
			}
			check_independent(&fr, out, s.dim, s.name);
			gw_test_frames_free(&fr);
		}
		free(out);
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

/* An all-zero tensor has scale 0 and decodes to zeros; caps say lossy and
 * the seed is a whole number in [0, 2^53 - 1]. */
static void test_zero_tensor_and_caps(void **state)
{
	(void)state;
	int caps = gw_codec_caps(GW_CODEC_TERNGRAD);
	GW_CHECK(caps == (GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY),
		 "terngrad caps %#x", caps);
	GW_CHECK(gw_codec_by_name("terngrad") == GW_CODEC_TERNGRAD, "by name");
	gw_bounds b;
	GW_OK_CALL(gw_param_bounds(GW_CODEC_TERNGRAD, GW_PARAM_SEED, &b));
	GW_CHECK(b.lo == 0 && b.hi == 9007199254740991.0 && b.integer, "seed bounds");
	GW_EXPECT_RC(gw_param_bounds(GW_CODEC_TERNGRAD, GW_PARAM_FRACTION, NULL),
		     GW_EPARAM, "terngrad has no fraction");
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, 1.5), GW_EBOUNDS,
		     "fractional seed");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, -1), GW_EBOUNDS,
		     "negative seed");
	float z[23] = {0};
	gw_tensor t = gw_test_dense_tensor(1, z, 23);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	float out[23];
	gw_test_fill(out, 23, -0.0f);
	gw_test_decode_all(&fr, out, 23);
	for (int i = 0; i < 23; i++)
		GW_CHECK(out[i] == 0.0f, "zero input decoded to %a", (double)out[i]);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_traces),
		cmocka_unit_test(test_sparse_traces_key32),
		cmocka_unit_test(test_sparse_traces_key64),
		cmocka_unit_test(test_zero_tensor_and_caps),
	};
	return cmocka_run_group_tests_name("terngrad_roundtrip", tests, NULL, NULL);
}
