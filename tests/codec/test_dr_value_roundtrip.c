/* DeepReduce value codecs round-trip: f32 and deflate give back every bit (NaN payloads, infinities, -0, subnormals; n = 1 and n = 100,000; zlib levels 0 to 9); qsgd, poly and dexp decode to n finite values within the bound their section states; every encoder is deterministic, writes exactly the length it returns into a buffer of exactly that size, and says GW_EBUDGET (writing nothing past cap) one byte short; non-finite input is refused by the lossy codecs with GW_EINVAL. Real traces: the CNN's fc.weight top 1% by magnitude and whole tensors, the spam gradient's values in windows of 4096. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/deepreduce/dr.h"

static const struct dr_value_ops *const codecs[] = {
	&dr_value_f32, &dr_value_deflate, &dr_value_qsgd, &dr_value_poly,
	&dr_value_dexp,
};
#define NCODECS 5

static const struct dr_value_cfg cfg_default = {
	.degree = 2, .pieces = 0, .levels = 127, .bucket = 512, .zlevel = 6,
	.seed = 0x5eed,
};

static int lossless(const struct dr_value_ops *ops)
{
	return ops == &dr_value_f32 || ops == &dr_value_deflate;
}

/* Encodes v[0..n) with ops into a buffer of exactly the section's length
 * (ending at a PROT_NONE page), checks determinism and GW_EBUDGET one byte
 * short, decodes from an exact-size copy into exactly n floats, and checks
 * the contract. Returns the section's length. */
static size_t roundtrip(const char *what, const struct dr_value_ops *ops,
			const struct dr_value_cfg *cfg, const float *v,
			uint32_t n, double *maxerr)
{
	size_t big = 8 * (size_t)n + 65536;
	uint8_t *first = malloc(big);
	GW_CHECK(first, "out of memory");
	int len = ops->encode(v, n, cfg, first, big);
	GW_CHECK(len > 0, "%s/%s: encode of %u values: %s", what, ops->name, n,
		 gw_error_name(len));

	gw_test_guard sec, shortg, out;
	gw_test_guard_alloc(&sec, (size_t)len);
	int again = ops->encode(v, n, cfg, sec.p, (size_t)len);
	GW_CHECK(again == len && !memcmp(sec.p, first, (size_t)len),
		 "%s/%s: second encode into exactly %d bytes gave %d bytes%s",
		 what, ops->name, len, again,
		 again == len ? " that differ" : "");
	gw_test_guard_alloc(&shortg, (size_t)len - 1);
	GW_EXPECT_RC(ops->encode(v, n, cfg, shortg.p, (size_t)len - 1), GW_EBUDGET,
		     "%s/%s: one byte short of %d", what, ops->name, len);

	gw_test_guard_alloc(&out, (size_t)n * sizeof(float));
	float *d = (float *)(void *)out.p;
	GW_OK_CALL(ops->decode(sec.p, (size_t)len, n, d));
	float bound = 0;
	if (ops->bound)
		GW_OK_CALL(ops->bound(sec.p, (size_t)len, n, &bound));
	double mx = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (lossless(ops)) {
			GW_CHECK(gw_test_bits(d[i]) == gw_test_bits(v[i]),
				 "%s/%s: value %u: %08x decoded as %08x", what,
				 ops->name, i, gw_test_bits(v[i]), gw_test_bits(d[i]));
			continue;
		}
		double e = fabs((double)d[i] - (double)v[i]);
		GW_CHECK(isfinite(d[i]) && e <= bound,
			 "%s/%s: value %u: %a decoded as %a, error %.3g > bound %.3g",
			 what, ops->name, i, (double)v[i], (double)d[i], e,
			 (double)bound);
		mx = fmax(mx, e);
	}
	if (maxerr)
		*maxerr = mx;
	gw_test_guard_free(&out);
	gw_test_guard_free(&shortg);
	gw_test_guard_free(&sec);
	free(first);
	return (size_t)len;
}

/* Bit patterns a lossless codec must carry: NaNs with payloads (quiet,
 * signaling, negative), infinities, zeros, subnormals, extremes. */
static const uint32_t specials[] = {
	0x7fc00000u, 0x7f800001u, 0xffc12345u, 0x7fbfffffu, 0x7f800000u,
	0xff800000u, 0x80000000u, 0x00000000u, 0x00000001u, 0x807fffffu,
	0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0x00800000u,
};

static float *special_values(uint32_t n, uint64_t seed)
{
	float *v = malloc((size_t)n * sizeof(float));
	GW_CHECK(v, "out of memory");
	gw_test_rng r = {seed};
	for (uint32_t i = 0; i < n; i++) {
		if (gw_test_below(&r, 4) == 0)
			v[i] = gw_test_float(specials[gw_test_below(&r, GW_ARRAY_SIZE(specials))]);
		else
			v[i] = gw_test_uniform(&r, -1e-2f, 1e-2f);
	}
	return v;
}

static void test_lossless_specials(void **state)
{
	(void)state;
	static const uint32_t ns[] = {1, 2, 14, 1000, 100000};
	for (size_t k = 0; k < GW_ARRAY_SIZE(ns); k++) {
		float *v = special_values(ns[k], 7 + k);
		if (ns[k] == 14)   /* every special once */
			for (uint32_t i = 0; i < 14; i++)
				v[i] = gw_test_float(specials[i]);
		roundtrip("specials", &dr_value_f32, &cfg_default, v, ns[k], NULL);
		for (int level = 0; level <= 9; level += ns[k] > 1000 ? 3 : 1) {
			struct dr_value_cfg c = cfg_default;
			c.zlevel = level;
			roundtrip("specials", &dr_value_deflate, &c, v, ns[k], NULL);
		}
		free(v);
	}
	struct dr_value_cfg c = cfg_default;
	c.zlevel = 10;
	float one = 1.0f;
	uint8_t buf[64];
	GW_EXPECT_RC(dr_value_deflate.encode(&one, 1, &c, buf, sizeof(buf)),
		     GW_EINVAL, "zlib level 10");
}

static void test_f32_length(void **state)
{
	(void)state;
	float v[3] = {1, 2, 3};
	uint8_t buf[12];
	GW_EXPECT_RC(dr_value_f32.encode(v, 3, &cfg_default, buf, 12), 12, "3 values");
	GW_EXPECT_RC(dr_value_f32.encode(v, 3, &cfg_default, buf, 11), GW_EBUDGET,
		     "11 bytes");
	GW_CHECK(!memcmp(buf, "\x00\x00\x80\x3f", 4), "float32 little-endian");
}

/* Lossy codecs on synthetic data, n = 1 included, and their refusals. */
static void test_lossy_synthetic(void **state)
{
	(void)state;
	static const uint32_t ns[] = {1, 2, 3, 4, 5, 9, 100, 4096, 100000};
	for (size_t k = 0; k < GW_ARRAY_SIZE(ns); k++) {
		uint32_t n = ns[k];
		float *v = malloc(n * sizeof(float));
		GW_CHECK(v, "out of memory");
		gw_test_rng r = {100 + k};
		for (uint32_t i = 0; i < n; i++)
			v[i] = gw_test_uniform(&r, -1.0f, 1.0f) *
			       expf(gw_test_uniform(&r, -6.0f, 0.0f));
		for (int c = 2; c < NCODECS; c++)
			roundtrip("synthetic", codecs[c], &cfg_default, v, n, NULL);
		for (uint32_t i = 0; i < n; i++)
			v[i] = 0.0f;
		for (int c = 2; c < NCODECS; c++) {
			double e;
			roundtrip("zeros", codecs[c], &cfg_default, v, n, &e);
			GW_CHECK(e == 0, "%s: zeros decode with error %g", codecs[c]->name, e);
		}
		free(v);
	}
}

static void test_lossy_nonfinite(void **state)
{
	(void)state;
	static const uint32_t bad[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x7f800001u};
	float v[10];
	uint8_t buf[4096];
	for (size_t b = 0; b < GW_ARRAY_SIZE(bad); b++)
		for (int c = 2; c < NCODECS; c++) {
			for (int i = 0; i < 10; i++)
				v[i] = 0.1f * (float)i;
			v[b * 3] = gw_test_float(bad[b]);
			GW_EXPECT_RC(codecs[c]->encode(v, 10, &cfg_default, buf, sizeof(buf)),
				     GW_EINVAL, "%s: %08x at %zu", codecs[c]->name,
				     bad[b], b * 3);
		}
	struct dr_value_cfg c = cfg_default;
	c.levels = 0;
	GW_EXPECT_RC(dr_value_qsgd.encode(v, 1, &c, buf, sizeof(buf)), GW_EINVAL, "s = 0");
	c.levels = DR_LEVELS_MAX + 1;
	GW_EXPECT_RC(dr_value_qsgd.encode(v, 1, &c, buf, sizeof(buf)), GW_EINVAL, "s too big");
	c = cfg_default;
	c.bucket = 0;
	GW_EXPECT_RC(dr_value_qsgd.encode(v, 1, &c, buf, sizeof(buf)), GW_EINVAL, "bucket 0");
	c = cfg_default;
	c.degree = DR_DEGREE_MAX + 1;
	GW_EXPECT_RC(dr_value_poly.encode(v, 1, &c, buf, sizeof(buf)), GW_EINVAL, "degree 9");
}

/* Budgets from 0 up to the section's length: GW_EBUDGET below it, nothing
 * written past cap (the guard faults), success at it. */
static void test_budgets(void **state)
{
	(void)state;
	float v[37];
	gw_test_rng r = {5};
	for (int i = 0; i < 37; i++)
		v[i] = gw_test_uniform(&r, -1.0f, 1.0f);
	for (int c = 0; c < NCODECS; c++) {
		uint8_t full[4096];
		int len = codecs[c]->encode(v, 37, &cfg_default, full, sizeof(full));
		GW_CHECK(len > 0, "%s: %d", codecs[c]->name, len);
		for (int cap = 0; cap <= len; cap++) {
			gw_test_guard g;
			gw_test_guard_alloc(&g, (size_t)cap);
			int rc = codecs[c]->encode(v, 37, &cfg_default, g.p, (size_t)cap);
			GW_CHECK(rc == (cap == len ? len : GW_EBUDGET),
				 "%s: cap %d of %d: %d", codecs[c]->name, cap, len, rc);
			gw_test_guard_free(&g);
		}
	}
}

/* ---- real traces --------------------------------------------------------- */

static int dense_index(const char *name)
{
	for (int i = 0; i < GW_TEST_N_DENSE; i++)
		if (!strcmp(gw_test_dense_traces[i], name))
			return i;
	fail_msg("no trace %s", name);
	return -1;
}


static void all_codecs(const char *what, const float *v, uint32_t n)
{
	print_message("  %-28s n %6u:", what, n);
	for (int c = 0; c < NCODECS; c++) {
		double e;
		size_t len = roundtrip(what, codecs[c], &cfg_default, v, n, &e);
		print_message(" %s %.2f B/v", codecs[c]->name, (double)len / n);
	}
	print_message("\n");
}

static void test_cnn(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_dense d;
	gw_test_load_dense(dense_index("cnn/it100_fc.weight.f32"), &d);
	uint32_t k = (uint32_t)(d.n / 100);
	float *t = gw_test_top_k_values(d.v, d.n, k);
	all_codecs("fc.weight top 1%", t, k);
	all_codecs("fc.weight", d.v, (uint32_t)d.n);
	free(t);
	gw_test_dense_free(&d);
	for (int it = 0; it < GW_TEST_CNN_ITERS; it += 3) {
		size_t n;
		float *all = gw_test_load_cnn_iter(it, &n);
		all_codecs(it ? "cnn iteration 135" : "cnn iteration 1", all, (uint32_t)n);
		free(all);
	}
}

static void test_spam(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_sparse s;
	gw_test_load_sparse(1, &s);
	for (size_t w = 0; w + 4096 <= s.nnz; w += 4096 * 8) {
		char what[64];
		snprintf(what, sizeof(what), "spam it010 [%zu, +4096)", w);
		all_codecs(what, s.vals + w, 4096);
	}
	gw_test_sparse_free(&s);
}

GW_TEST_MAIN("dr_value_roundtrip", 0,
	     cmocka_unit_test(test_f32_length),
	     cmocka_unit_test(test_lossless_specials),
	     cmocka_unit_test(test_lossy_synthetic),
	     cmocka_unit_test(test_lossy_nonfinite),
	     cmocka_unit_test(test_budgets), cmocka_unit_test(test_cnn),
	     cmocka_unit_test(test_spam))
