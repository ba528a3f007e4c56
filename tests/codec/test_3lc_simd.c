/* The AVX2 and AVX-512 paths of 3LC equal the scalar reference: bit for bit in the error-feedback buffer and the decoded floats, byte for byte in the packed stream and the frames, on random and real inputs, with tails of every length, subnormal and huge m, every byte value, every budget; GW_FORCE_ISA and gw_cpu_force_isa select the path. An ISA this CPU lacks is skipped (the whole test exits 77 if it has neither). */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "gw_cpu.h"
#include "../../codec/threelc_internal.h"

/* Inputs of the kernels: random floats of a few shapes. */
static void fill(gw_test_rng *r, float *x, size_t n, int shape, float scale)
{
	for (size_t i = 0; i < n; i++) {
		float u = gw_test_uniform(r, -scale, scale);
		switch (shape) {
		case 0:
			x[i] = u;
			break;
		case 1:   /* sparse: mostly small, a few large */
			x[i] = gw_test_below(r, 30) ? u * 0.01f : u;
			break;
		case 2:   /* exact zeros, -0, ties at +-scale/2 */
			x[i] = (float)((int)gw_test_below(r, 5) - 2) * scale / 2;
			if (gw_test_below(r, 7) == 0)
				x[i] = -0.0f;
			break;
		default:  /* heavy tail */
			x[i] = u * ldexpf(1.0f, -(int)gw_test_below(r, 24));
		}
	}
}

static int have(int isa)
{
	return gw_cpu_best_isa() >= isa;
}

/* Sizes around the block lengths of the SIMD loops (320, 160, 64, 16). */
static size_t pick_n(gw_test_rng *r, int round)
{
	static const size_t fixed[] = {0, 1, 4, 5, 6, 15, 16, 17, 39, 40, 41, 63, 64, 65,
				       159, 160, 161, 319, 320, 321, 639, 640, 645, 1000};
	if ((size_t)round < GW_ARRAY_SIZE(fixed))
		return fixed[round];
	return (size_t)gw_test_below(r, 5000);
}

static void kernels_fold_quantize(int isa)
{
	const struct tlc_kernels *ref = tlc_kernels_for(GW_ISA_SCALAR);
	const struct tlc_kernels *k = tlc_kernels_for(isa);
	gw_test_rng r = {100 + (uint64_t)isa};
	for (int round = 0; round < 300; round++) {
		size_t n = pick_n(&r, round);
		size_t nb = (n + 4) / 5;
		float *g = malloc((n + 1) * sizeof(float));
		float *e1 = malloc((n + 1) * sizeof(float));
		float *e2 = malloc((n + 1) * sizeof(float));
		uint8_t *b1 = malloc(nb + 64), *b2 = malloc(nb + 64);
		GW_CHECK(g && e1 && e2 && b1 && b2, "out of memory");
		float scale = ldexpf(1.0f, (int)gw_test_below(&r, 60) - 30);
		fill(&r, g, n, round % 4, scale);
		fill(&r, e1, n, (round / 4) % 4, scale / 4);
		memcpy(e2, e1, n * sizeof(float));
		/* Pass 1, with and without feedback. */
		uint32_t m1 = ref->maxabs(g, NULL, n), m2 = k->maxabs(g, NULL, n);
		GW_CHECK(m1 == m2, "%s maxabs n=%zu no ef: %08x vs %08x", k->name, n, m1, m2);
		m1 = ref->maxabs(g, e1, n);
		m2 = k->maxabs(g, e2, n);
		GW_CHECK(m1 == m2, "%s maxabs n=%zu: %08x vs %08x", k->name, n, m1, m2);
		/* Pass 2 with several m: s * max, an exact tie, a subnormal. */
		float mx = gw_test_float(m1);
		float ms[4] = {mx, mx * 1.9f, scale, 0x3p-149f};
		for (int j = 0; j < 4; j++) {
			float m = ms[j] < mx ? mx : ms[j];   /* m >= max |c| */
			if (j == 3) {
				/* Tiny data, m = 3 * 2^-149 (m/2 inexact). */
				for (size_t i = 0; i < n; i++) {
					g[i] = (float)((int)gw_test_below(&r, 7) - 3) * 0x1p-149f;
					e1[i] = e2[i] = 0.0f;
				}
				m = 0x3p-149f;
			}
			float *c1 = malloc((n + 1) * sizeof(float)), *c2 = malloc((n + 1) * sizeof(float));
			GW_CHECK(c1 && c2, "out of memory");
			memcpy(c1, e1, n * sizeof(float));
			memcpy(c2, e2, n * sizeof(float));
			memset(b1, 0xaa, nb + 64);
			memset(b2, 0xaa, nb + 64);
			ref->quantize(g, NULL, n, m, b1);
			k->quantize(g, NULL, n, m, b2);
			GW_CHECK(!memcmp(b1, b2, nb + 64), "%s quantize n=%zu m=%a no ef: bytes differ",
				 k->name, n, (double)m);
			ref->quantize(g, c1, n, m, b1);
			k->quantize(g, c2, n, m, b2);
			GW_CHECK(!memcmp(b1, b2, nb + 64), "%s quantize n=%zu m=%a: bytes differ",
				 k->name, n, (double)m);
			for (size_t i = 0; i < n; i++)
				GW_CHECK(gw_test_bits(c1[i]) == gw_test_bits(c2[i]),
					 "%s quantize n=%zu m=%a: error %zu: %a vs %a", k->name,
					 n, (double)m, i, (double)c1[i], (double)c2[i]);
			free(c1);
			free(c2);
		}
		free(g);
		free(e1);
		free(e2);
		free(b1);
		free(b2);
	}
	/* The folded path (fold + quantize_folded), where the ISA has one,
	 * against maxabs + quantize, as the encoder drives it. */
	if (!k->fold)
		return;
	for (int round = 0; round < 300; round++) {
		size_t n = 320 + pick_n(&r, round);
		size_t nb = (n + 4) / 5;
		float *g = malloc(n * sizeof(float)), *e0 = malloc(n * sizeof(float));
		float *e1 = malloc(n * sizeof(float)), *e2 = malloc(n * sizeof(float));
		uint8_t *b1 = malloc(nb + 64), *b2 = malloc(nb + 64);
		uint8_t *sc = malloc(TLC_SCRATCH_LEN(n));
		GW_CHECK(g && e0 && e1 && e2 && b1 && b2 && sc, "out of memory");
		float scale = ldexpf(1.0f, (int)gw_test_below(&r, 60) - 30);
		fill(&r, g, n, round % 4, scale);
		fill(&r, e0, n, (round / 4) % 4, scale / 4);
		if (round % 5 == 1)   /* growing magnitudes: the max comes last */
			for (size_t i = 0; i < n; i++)
				g[i] = scale * (float)(i + 1) / (float)n * (i % 2 ? -1.0f : 1.0f);
		if (round % 5 == 2)   /* the max first */
			g[0] = scale * 8;
		if (round % 7 == 3)   /* values near the s = 1 threshold */
			for (size_t i = 0; i < n; i++)
				g[i] = scale * (0.5f + (float)((int)gw_test_below(&r, 3) - 1) * 0x1p-23f);
		double s = 1.0 + (double)gw_test_below(&r, 4) / 4 - (round % 3 == 0 ? 0 : 0x1p-30);
		if (s < 1.0)
			s = 1.0;
		memcpy(e1, e0, n * sizeof(float));
		memcpy(e2, e0, n * sizeof(float));
		uint32_t m1 = ref->maxabs(g, e1, n);
		float s_lo = (float)(s * (1.0 - 0x1p-20));   /* as tlc_begin */
		uint32_t m2 = k->fold(g, e2, n, (uint16_t *)sc, s_lo);
		GW_CHECK(m1 == m2, "%s fold n=%zu: max %08x vs %08x", k->name, n, m1, m2);
		float m = (float)(s * (double)gw_test_float(m1));
		if (!(m <= FLT_MAX) || gw_test_float(m1) < 0x1p-100f)
			memset(sc, 0xff, TLC_SCRATCH_GROUPS(n) * sizeof(uint16_t));
		if (!(m <= FLT_MAX))
			m = FLT_MAX;
		memset(b1, 0xaa, nb + 64);
		memset(b2, 0xaa, nb + 64);
		ref->quantize(g, e1, n, m, b1);
		k->quantize_folded(e2, n, m, b2, sc);
		GW_CHECK(!memcmp(b1, b2, nb + 64), "%s folded n=%zu s=%g: bytes differ",
			 k->name, n, s);
		for (size_t i = 0; i < n; i++)
			GW_CHECK(gw_test_bits(e1[i]) == gw_test_bits(e2[i]),
				 "%s folded n=%zu s=%g: error %zu: %a vs %a", k->name, n, s,
				 i, (double)e1[i], (double)e2[i]);
		free(g);
		free(e0);
		free(e1);
		free(e2);
		free(b1);
		free(b2);
		free(sc);
	}
}

/* A valid ZRE stream for count elements, of random shape: literal bytes,
 * 121s and run bytes (not necessarily canonical), last byte with pad 1s. */
static size_t random_stream(gw_test_rng *r, uint32_t count, int shape, uint8_t *p)
{
	uint64_t nb = ((uint64_t)count + 4) / 5, have_b = 0;
	size_t n = 0;
	while (have_b < nb) {
		unsigned b;
		uint64_t pick = gw_test_below(r, 100);
		int lit_pct = shape == 0 ? 90 : shape == 1 ? 50 : 5;
		if (pick < (uint64_t)lit_pct)
			b = (unsigned)gw_test_below(r, 243);
		else if (pick < (uint64_t)lit_pct + 10)
			b = 121;
		else
			b = 243 + (unsigned)gw_test_below(r, 13);
		unsigned e = b < 243 ? 1 : b - 241;
		if (have_b + e > nb) {
			b = 121;
			e = 1;
		}
		p[n++] = (uint8_t)b;
		have_b += e;
	}
	unsigned rem = count % 5;
	if (rem && p[n - 1] < 243) {
		static const unsigned pow3[5] = {1, 3, 9, 27, 81};
		unsigned mod = pow3[5 - rem];
		p[n - 1] = (uint8_t)(p[n - 1] - p[n - 1] % mod + (mod - 1) / 2);
	}
	return n;
}

static void kernels_decode(int isa)
{
	const struct tlc_kernels *ref = tlc_kernels_for(GW_ISA_SCALAR);
	const struct tlc_kernels *k = tlc_kernels_for(isa);
	gw_test_rng r = {200 + (uint64_t)isa};
	/* Every literal byte value, alone and in 16-byte blocks. */
	for (unsigned b = 0; b < 243; b++) {
		uint8_t p[48];
		memset(p, (int)b, sizeof(p));
		for (size_t len = 1; len <= sizeof(p); len += 15) {
			uint32_t count = (uint32_t)(5 * len);
			float o1[240], o2[240];
			for (uint32_t i = 0; i < count; i++)
				o1[i] = o2[i] = (float)i - 7.5f;
			GW_CHECK(k->expanded(p, len) == len, "%s expanded", k->name);
			ref->decode(p, len, count, 0.375f, o1);
			k->decode(p, len, count, 0.375f, o2);
			for (uint32_t i = 0; i < count; i++) {
				unsigned t = tlc_trits[b][i % 5];
				float want = (float)i - 7.5f + (t == 2 ? 0.375f : t == 0 ? -0.375f : 0.0f);
				GW_CHECK(gw_test_bits(o1[i]) == gw_test_bits(want) &&
						 gw_test_bits(o2[i]) == gw_test_bits(want),
					 "%s: byte %u element %u: %a / %a, expected %a", k->name,
					 b, i, (double)o1[i], (double)o2[i], (double)want);
			}
		}
	}
	/* The trit table itself. */
	for (unsigned b = 0; b < 243; b++)
		GW_CHECK(tlc_trits[b][0] * 81 + tlc_trits[b][1] * 27 + tlc_trits[b][2] * 9 +
				 tlc_trits[b][3] * 3 + tlc_trits[b][4] == (int)b,
			 "trit table at %u", b);
	/* Random streams. */
	uint8_t *p = malloc(70000);
	float *o1 = malloc(100000 * sizeof(float)), *o2 = malloc(100000 * sizeof(float));
	GW_CHECK(p && o1 && o2, "out of memory");
	for (int round = 0; round < 600; round++) {
		uint32_t count = 1 + (uint32_t)gw_test_below(&r, round < 300 ? 400 : 90000);
		size_t n = random_stream(&r, count, round % 3, p);
		GW_CHECK(ref->expanded(p, n) == k->expanded(p, n) &&
				 ref->expanded(p, n) == ((uint64_t)count + 4) / 5,
			 "%s expanded of %zu bytes", k->name, n);
		float s = gw_test_uniform(&r, -4.0f, 4.0f);
		if (round % 10 == 0)
			s = -0.0f;
		for (uint32_t i = 0; i < count + 8; i++) {
			float v = gw_test_below(&r, 4) ? gw_test_uniform(&r, -1, 1) : -0.0f;
			if (gw_test_below(&r, 50) == 0)   /* NaN payloads stay put */
				v = gw_test_float(0x7fa00000u | (uint32_t)gw_test_below(&r, 1000));
			o1[i] = o2[i] = v;
		}
		ref->decode(p, n, count, s, o1);
		k->decode(p, n, count, s, o2);
		for (uint32_t i = 0; i < count + 8; i++)
			GW_CHECK(gw_test_bits(o1[i]) == gw_test_bits(o2[i]),
				 "%s decode round %d (count %u, %zu bytes): element %u: %08x vs %08x",
				 k->name, round, count, n, i, gw_test_bits(o1[i]), gw_test_bits(o2[i]));
	}
	free(p);
	free(o1);
	free(o2);
}

/* Greedy reference: byte by byte. */
static size_t zre_ref(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
		      size_t *used)
{
	return tlc_zre_tail(src, n, dst, cap, used, 0, 0);
}

static void kernels_zre(int isa)
{
	const struct tlc_kernels *k = tlc_kernels_for(isa);
	gw_test_rng r = {300 + (uint64_t)isa};
	for (int round = 0; round < 400; round++) {
		size_t n = (size_t)gw_test_below(&r, round < 200 ? 300 : 20000);
		uint8_t *src = malloc(n + TLC_ZRE_OVERREAD);
		uint8_t *d1 = malloc(n + 16), *d2 = malloc(n + 16);
		GW_CHECK(src && d1 && d2, "out of memory");
		unsigned pz = (unsigned)gw_test_below(&r, 101);   /* % of 121 */
		unsigned burst = 1 + (unsigned)gw_test_below(&r, 200);
		for (size_t i = 0; i < n;) {
			int z = gw_test_below(&r, 100) < pz;
			size_t len = 1 + (size_t)gw_test_below(&r, burst);
			for (size_t j = 0; j < len && i < n; j++, i++)
				src[i] = z ? 121 : (uint8_t)gw_test_below(&r, 243);
		}
		for (size_t i = n; i < n + TLC_ZRE_OVERREAD; i++)
			src[i] = (uint8_t)gw_test_below(&r, 2) ? 121 : 7;   /* must not matter */
		for (size_t cap = 1; cap <= n + 16; cap += 1 + cap / 4 + (size_t)gw_test_below(&r, 9)) {
			size_t u1, u2, u3;
			size_t l1 = zre_ref(src, n, d1, cap, &u1);
			size_t l2 = k->zre(src, n, d2, cap, &u2);
			GW_CHECK(l1 == l2 && u1 == u2 && !memcmp(d1, d2, l1),
				 "%s zre n=%zu cap=%zu: %zu/%zu bytes, used %zu/%zu", k->name,
				 n, cap, l1, l2, u1, u2);
			l2 = tlc_zre(src, n, d2, cap, &u3);
			GW_CHECK(l1 == l2 && u1 == u3 && !memcmp(d1, d2, l1),
				 "scalar zre n=%zu cap=%zu", n, cap);
			GW_CHECK(l1 <= cap, "zre wrote %zu > cap %zu", l1, cap);
		}
		free(src);
		free(d1);
		free(d2);
	}
}

/* ---- through the API -------------------------------------------------------- */

struct encoded {
	gw_test_frames fr;
	float *ef;      /* error buffer after the rounds */
	float *out;     /* all frames of the last round decoded into -0.0 */
};

/* rounds of encoding x with feedback (if ef) under isa; frames of the
 * last round. */
static void run_api(int isa, const float *x, size_t n, double s, size_t budget,
		    int ef, int rounds, struct encoded *res)
{
	GW_OK_CALL(gw_cpu_force_isa(isa));
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, s));
	gw_ef *e = ef ? gw_ef_create(n) : NULL;
	if (ef) {
		GW_CHECK(e, "out of memory");
		GW_OK_CALL(gw_encoder_set_ef(enc, e));
	}
	gw_tensor t = gw_test_dense_tensor(2, x, n);
	for (int k = 0; k < rounds; k++) {
		GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &res->fr));
		if (k + 1 < rounds)
			gw_test_frames_free(&res->fr);
	}
	res->ef = NULL;
	if (e) {
		res->ef = malloc((n + 1) * sizeof(float));
		GW_CHECK(res->ef, "out of memory");
		memcpy(res->ef, gw_ef_data(e), n * sizeof(float));
	}
	res->out = malloc((n + 1) * sizeof(float));
	GW_CHECK(res->out, "out of memory");
	gw_test_fill(res->out, n, -0.0f);
	gw_test_decode_all(&res->fr, res->out, n);
	gw_ef_free(e);
	gw_encoder_free(enc);
	gw_cpu_force_isa(-1);
}

static void free_encoded(struct encoded *r)
{
	gw_test_frames_free(&r->fr);
	free(r->ef);
	free(r->out);
}

static void compare_api(int isa, const char *what, const float *x, size_t n,
			double s, size_t budget, int ef, int rounds)
{
	struct encoded a, b;
	run_api(GW_ISA_SCALAR, x, n, s, budget, ef, rounds, &a);
	run_api(isa, x, n, s, budget, ef, rounds, &b);
	GW_CHECK(a.fr.n == b.fr.n, "%s (%s): %zu vs %zu frames", what,
		 gw_cpu_isa_name(isa), a.fr.n, b.fr.n);
	for (size_t j = 0; j < a.fr.n; j++)
		GW_CHECK(a.fr.f[j].len == b.fr.f[j].len &&
				 !memcmp(a.fr.f[j].data, b.fr.f[j].data, a.fr.f[j].len),
			 "%s (%s): frame %zu differs", what, gw_cpu_isa_name(isa), j);
	if (ef)
		GW_CHECK(!memcmp(a.ef, b.ef, n * sizeof(float)),
			 "%s (%s): error buffers differ", what, gw_cpu_isa_name(isa));
	GW_CHECK(!memcmp(a.out, b.out, n * sizeof(float)), "%s (%s): decoded differ",
		 what, gw_cpu_isa_name(isa));
	/* Cross-decode: frames of one path decoded by the other. */
	float *o = malloc((n + 1) * sizeof(float));
	GW_CHECK(o, "out of memory");
	GW_OK_CALL(gw_cpu_force_isa(isa));
	gw_test_fill(o, n, -0.0f);
	gw_test_decode_all(&a.fr, o, n);
	gw_cpu_force_isa(-1);
	GW_CHECK(!memcmp(a.out, o, n * sizeof(float)), "%s (%s): cross-decode differs",
		 what, gw_cpu_isa_name(isa));
	free(o);
	free_encoded(&a);
	free_encoded(&b);
}

static void api_random(int isa)
{
	gw_test_rng r = {400 + (uint64_t)isa};
	for (int round = 0; round < 60; round++) {
		size_t n = 1 + (size_t)gw_test_below(&r, 30000);
		float *x = malloc(n * sizeof(float));
		GW_CHECK(x, "out of memory");
		fill(&r, x, n, round % 4, ldexpf(1.0f, (int)gw_test_below(&r, 40) - 20));
		double s = 1.0 + gw_test_uniform(&r, 0.0f, 0.99f);
		size_t budget = 64 + (size_t)gw_test_below(&r, 9000);
		compare_api(isa, "random", x, n, s, budget, round % 2, 1 + round % 3);
		free(x);
	}
}

static void api_traces(int isa)
{
	static const double sp[] = {1.0, 1.5, 1.75, 1.9};
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++) {
		size_t n;
		float *x = gw_test_load_cnn_iter(it, &n);
		for (size_t k = 0; k < GW_ARRAY_SIZE(sp); k++) {
			compare_api(isa, "cnn iteration", x, n, sp[k], 1424, 1, 5);
			compare_api(isa, "cnn iteration", x, n, sp[k], 64, 0, 1);
		}
		free(x);
	}
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		compare_api(isa, d.name, d.v, d.n, 1.0, 1424, 1, 3);
		gw_test_dense_free(&d);
	}
}

#define ISA_TESTS(isa, tag)                                                   \
	static void test_##tag##_kernels(void **state)                        \
	{                                                                     \
		(void)state;                                                  \
		if (!have(isa))                                               \
			skip();                                               \
		kernels_fold_quantize(isa);                                   \
		kernels_decode(isa);                                          \
		kernels_zre(isa);                                             \
	}                                                                     \
	static void test_##tag##_api(void **state)                            \
	{                                                                     \
		(void)state;                                                  \
		if (!have(isa))                                               \
			skip();                                               \
		api_random(isa);                                              \
		if (gw_test_have_traces())                                    \
			api_traces(isa);                                      \
	}

ISA_TESTS(GW_ISA_AVX2, avx2)
ISA_TESTS(GW_ISA_AVX512, avx512)

static void test_scalar_zre(void **state)
{
	(void)state;
	kernels_zre(GW_ISA_SCALAR);
}

static void test_dispatch(void **state)
{
	(void)state;
	int best = gw_cpu_best_isa();
	GW_CHECK(gw_cpu_isa() == best || getenv("GW_FORCE_ISA"), "default ISA");
	static const char *const names[] = {"scalar", "avx2", "avx512"};
	for (int i = 0; i < 3; i++) {
		GW_CHECK(gw_cpu_isa_by_name(names[i]) == i && !strcmp(gw_cpu_isa_name(i), names[i]),
			 "ISA name %s", names[i]);
		setenv("GW_FORCE_ISA", names[i], 1);
		gw_cpu_force_isa(-1);   /* re-read the environment */
		GW_CHECK(gw_cpu_isa() == GW_MIN(i, best), "GW_FORCE_ISA=%s gives %s",
			 names[i], gw_cpu_isa_name(gw_cpu_isa()));
		GW_CHECK(tlc_kernels() == tlc_kernels_for(GW_MIN(i, best)), "kernels for %s",
			 names[i]);
		int rc = gw_cpu_force_isa(i);
		GW_CHECK(i <= best ? rc == 0 : rc == GW_EUNSUPPORTED, "force %s: %d", names[i], rc);
	}
	setenv("GW_FORCE_ISA", "bogus", 1);
	gw_cpu_force_isa(-1);
	GW_CHECK(gw_cpu_isa() == best, "GW_FORCE_ISA=bogus");
	unsetenv("GW_FORCE_ISA");
	gw_cpu_force_isa(-1);
	GW_CHECK(gw_cpu_isa() == best, "no GW_FORCE_ISA");
	GW_EXPECT_RC(gw_cpu_force_isa(7), GW_EINVAL, "force 7");
}

int main(void)
{
	if (gw_cpu_best_isa() == GW_ISA_SCALAR) {
		fprintf(stderr, "test_3lc_simd: SKIP: this CPU has neither AVX2 nor "
				"AVX-512 F/BW/VL/VBMI\n");
		return 77;
	}
	if (!have(GW_ISA_AVX512))
		fprintf(stderr, "test_3lc_simd: AVX-512 F/BW/VL/VBMI not on this CPU: "
				"its tests are skipped\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_scalar_zre),
		cmocka_unit_test(test_avx2_kernels),
		cmocka_unit_test(test_avx512_kernels),
		cmocka_unit_test(test_avx2_api),
		cmocka_unit_test(test_avx512_api),
	};
	return cmocka_run_group_tests_name("3lc_simd", tests, NULL, NULL);
}
