/* The loops compiled once per ISA (GW_ISA_LOOP: int8's scan and quantize, bf16's conversion with fused feedback, onebit's sums and packing, terngrad's moments and draws, topk's filtering pass) give the bytes and float bits of the baseline copy: for each codec, every ISA level this CPU has (GW_FORCE_ISA's levels through gw_cpu_force_isa) encodes the same tensors — random values with NaN, +-Inf, values above bf16's range, subnormals, signed zeros and ties, lengths that leave every vector tail, and a real trace — dense and sparse, with and without error feedback over three rounds, at two budgets, and must produce the same frames byte for byte and the same error buffer bit for bit. Levels this CPU lacks are skipped. */
#include <math.h>

#include "gw_cpu.h"
#include "gw_test.h"

typedef struct {
	uint8_t *bytes;
	size_t len;
	float *ef;
} run_out;

/* All frames of `rounds` encodes of t (feedback on when ef), concatenated,
 * and the final error buffer. */
static void run(int id, const char *params, const gw_tensor *t, int ef, int rounds,
		size_t budget, run_out *o)
{
	gw_encoder *enc = gw_test_encoder_with(id, params);
	gw_ef *buf = NULL;
	if (ef) {
		buf = gw_ef_create(t->dim);
		GW_CHECK(buf, "out of memory");
		GW_OK_CALL(gw_encoder_set_ef(enc, buf));
	}
	size_t cap = 1 << 20;
	o->bytes = malloc(cap);
	o->len = 0;
	uint8_t *f = malloc(GW_FRAME_MAX);
	GW_CHECK(o->bytes && f, "out of memory");
	for (int r = 0; r < rounds; r++) {
		GW_OK_CALL(gw_encode_begin(enc, t));
		int n;
		while ((n = gw_encode_next(enc, f, budget)) > 0) {
			if (o->len + (size_t)n > cap) {
				cap *= 2;
				o->bytes = realloc(o->bytes, cap);
				GW_CHECK(o->bytes, "out of memory");
			}
			memcpy(o->bytes + o->len, f, (size_t)n);
			o->len += (size_t)n;
		}
		GW_OK_CALL(n);
	}
	o->ef = NULL;
	if (buf) {
		o->ef = malloc(t->dim * sizeof(float));
		GW_CHECK(o->ef, "out of memory");
		memcpy(o->ef, gw_ef_data(buf), t->dim * sizeof(float));
	}
	free(f);
	gw_encoder_free(enc);
	gw_ef_free(buf);
}

static void same(int id, const char *params, const gw_tensor *t, const char *what)
{
	for (int ef = 0; ef < 2; ef++)
		for (size_t budget = 300; budget <= 1424; budget += 1124) {
			GW_OK_CALL(gw_cpu_force_isa(GW_ISA_SCALAR));
			run_out ref;
			run(id, params, t, ef, ef ? 3 : 1, budget, &ref);
			for (int isa = GW_ISA_AVX2; isa <= gw_cpu_best_isa(); isa++) {
				GW_OK_CALL(gw_cpu_force_isa(isa));
				run_out got;
				run(id, params, t, ef, ef ? 3 : 1, budget, &got);
				GW_CHECK(got.len == ref.len && !memcmp(got.bytes, ref.bytes, ref.len),
					 "%s %s %s, feedback %d, budget %zu: %s frames differ from "
					 "the baseline's (%zu vs %zu bytes)", gw_codec_name(id), params,
					 what, ef, budget, gw_cpu_isa_name(isa), got.len, ref.len);
				if (ef)
					for (uint64_t i = 0; i < t->dim; i++)
						GW_CHECK(gw_test_bits(got.ef[i]) == gw_test_bits(ref.ef[i]),
							 "%s %s %s, budget %zu: %s error buffer [%llu] "
							 "%a, baseline %a", gw_codec_name(id), params,
							 what, budget, gw_cpu_isa_name(isa),
							 (unsigned long long)i, (double)got.ef[i],
							 (double)ref.ef[i]);
				free(got.bytes);
				free(got.ef);
			}
			free(ref.bytes);
			free(ref.ef);
		}
	gw_cpu_force_isa(-1);
}

/* n values: mostly gradient-like, with every special kind sprinkled in. */
static float *values(size_t n, uint64_t seed, int specials)
{
	float *v = malloc(n * sizeof(float));
	GW_CHECK(v, "out of memory");
	uint64_t st = seed;
	static const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0x1.fffffep127f, -3.4e38f,
				   0x1p-149f, -0x1p-140f, 0.0f, -0.0f, 0x1.008p0f, 0x1.018p0f};
	for (size_t i = 0; i < n; i++) {
		uint64_t r = gw_splitmix64(&st);
		v[i] = (float)((int64_t)(r >> 11) - (1ll << 52)) * 0x1p-60f;
		if (specials && r % 97 == 0)
			v[i] = sp[(r >> 8) % (sizeof(sp) / sizeof(sp[0]))];
	}
	return v;
}

static void codec_cases(int id, const char *params)
{
	static const size_t lens[] = {1, 7, 31, 64, 1000, 4099};
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (int specials = 0; specials < 2; specials++) {
			size_t n = lens[l];
			float *v = values(n, 17 + n, specials);
			gw_tensor t = gw_test_dense_tensor(4, v, n);
			char what[64];
			snprintf(what, sizeof(what), "dense %zu%s", n, specials ? " specials" : "");
			same(id, params, &t, what);
			uint32_t *keys = malloc(n * sizeof(uint32_t));
			GW_CHECK(keys, "out of memory");
			for (size_t i = 0; i < n; i++)
				keys[i] = (uint32_t)(3 * i + (i % 2));
			t = gw_test_sparse_tensor(5, 3 * n + 2, keys, 32, v, n);
			snprintf(what, sizeof(what), "sparse %zu%s", n, specials ? " specials" : "");
			same(id, params, &t, what);
			free(keys);
			free(v);
		}
	if (gw_test_have_traces()) {
		gw_test_dense d;
		gw_test_load_dense(0, &d);
		gw_tensor t = gw_test_dense_tensor(6, d.v, d.n);
		same(id, params, &t, gw_test_dense_traces[0]);
		gw_test_dense_free(&d);
	}
}

static int group_setup(void **state)
{
	(void)state;
	if (gw_cpu_best_isa() < GW_ISA_AVX2) {
		print_message("this CPU has neither AVX2 nor AVX-512: nothing to compare\n");
		return -1;
	}
	return 0;
}

static void test_int8(void **state)
{
	(void)state;
	codec_cases(GW_CODEC_INT8, "");
}

static void test_bf16(void **state)
{
	(void)state;
	codec_cases(GW_CODEC_BF16, "");
}

static void test_onebit(void **state)
{
	(void)state;
	codec_cases(GW_CODEC_ONEBIT, "");
}

static void test_terngrad(void **state)
{
	(void)state;
	codec_cases(GW_CODEC_TERNGRAD, "seed=9");
	codec_cases(GW_CODEC_TERNGRAD, "seed=9,clip=0");
}

/* topk's filtering pass (codec/select.c) runs on tensors of 2^18 and
 * more; the small cases take the plain radix select. */
static void test_topk(void **state)
{
	(void)state;
	codec_cases(GW_CODEC_TOPK, "fraction=0.01");
	for (int specials = 0; specials < 2; specials++) {
		size_t n = (1u << 18) + 13;
		float *v = values(n, 99, specials);
		gw_tensor t = gw_test_dense_tensor(4, v, n);
		same(GW_CODEC_TOPK, "fraction=0.01", &t, specials ? "2^18+13 specials" : "2^18+13");
		same(GW_CODEC_TOPK, "fraction=0.001", &t, specials ? "2^18+13 specials" : "2^18+13");
		free(v);
	}
}

GW_TEST_MAIN_GROUP("isa_loops", 0, group_setup, NULL, cmocka_unit_test(test_int8),
		   cmocka_unit_test(test_bf16), cmocka_unit_test(test_onebit),
		   cmocka_unit_test(test_topk),
		   cmocka_unit_test(test_terngrad))
