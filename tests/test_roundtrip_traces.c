/* Every registered codec round-trips every real trace at every budget: frames fit the budget, cover each element once, and decode to raw bits / bf16 RNE / int8 within scale/2. */
#include "gw_test.h"

#include <math.h>

/* Budgets besides gw_encode_min_budget() and min + 1: a tiny one, a few
 * packet-ish sizes (1500 - 78: an MTU minus IPv6/UDP/tunnel headers), jumbo
 * and the frame maximum (budgets above it: test_frame_header). A budget
 * equal to an earlier one (min is often 64) is run once. */
static const size_t budgets[] = {64, 100, 256, 1000, 1500 - 78, 4096, 9000,
				 65535};
#define N_BUDGETS (2 + sizeof(budgets) / sizeof(budgets[0]))

static size_t budget_at(int min, int i)
{
	if (i == 0)
		return (size_t)min;
	if (i == 1)
		return (size_t)min + 1;
	return budgets[i - 2];
}

/* int8 error bound for an element of a frame whose largest magnitude is m:
 * with s = fl(m/127), inv = fl(127/m), q = rne(fl(c * inv)) and the decoded
 * value fl(q * s), |c - q*s| <= s/2 plus a few float roundings of
 * magnitude <= 2^-24 * m each (the c*inv product, inv, s and the final
 * product): 2^-21 * m covers them with room. Frames with m below ~2^-121
 * send scale 0 and decode to 0: the 2^-120 absolute term covers those. */
static double int8_bound(double m)
{
	return m / 127.0 / 2.0 + m * 0x1p-21 + 0x1p-120;
}

/* raw, bf16, int8: the codecs whose per-element promise this file checks
 * exactly. Other codecs get the promises every codec makes. */
static int known(int id)
{
	return id == GW_CODEC_RAW || id == GW_CODEC_BF16 || id == GW_CODEC_INT8;
}

/* A codec with a "fraction" parameter (top-k) sends a subset of the
 * elements; every other codec sends each element exactly once. */

/* The tensor under test: dense (keys == NULL: element i is key i) or
 * sparse with 32-bit keys for range queries (t may carry them as 64-bit). */
struct input {
	const char *name;
	const gw_tensor *t;
	const uint32_t *keys;
	const float *vals;
	uint64_t n;     /* elements / entries */
	uint64_t dim;   /* output length */
	int coarse;     /* only min, min + 1, 1422 and 65535 (a repeat run) */
};

/* Index of the first entry whose key is >= k. */
static uint64_t lower_bound(const struct input *in, uint64_t k)
{
	if (!in->keys)
		return k < in->n ? k : in->n;
	uint64_t lo = 0, hi = in->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (in->keys[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t key_of(const struct input *in, uint64_t i)
{
	return in->keys ? in->keys[i] : i;
}

static int cmp_start(const void *a, const void *b)
{
	const gw_frame_info *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Header checks for every frame; fills info[j]. */
static void check_headers(int id, const struct input *in, size_t budget,
			  const gw_test_frames *fr, gw_frame_info *info)
{
	const gw_tensor *t = in->t;
	size_t eff = budget < GW_FRAME_MAX ? budget : GW_FRAME_MAX;
	uint16_t want_flags = 0;
	if (t->keys)
		want_flags = GW_FF_SPARSE | (t->key_bits == 64 ? GW_FF_KEY64 : 0);
	for (size_t j = 0; j < fr->n; j++) {
		const gw_test_frame *f = &fr->f[j];
		GW_CHECK(f->len > 0 && f->len <= eff,
			 "%s on %s: frame %zu is %zu bytes, budget %zu",
			 gw_codec_name(id), in->name, j, f->len, budget);
		int rc = gw_frame_verify(f->data, f->len, &info[j]);
		GW_CHECK(rc == 0, "%s on %s, budget %zu: frame %zu fails verify: %s",
			 gw_codec_name(id), in->name, budget, j, gw_error_name(rc));
		GW_CHECK(info[j].codec == id && info[j].tensor == t->id &&
				 info[j].frame_len == f->len,
			 "%s on %s, budget %zu: frame %zu header codec %u tensor %u "
			 "len %u does not match the tensor encoded",
			 gw_codec_name(id), in->name, budget, j, info[j].codec,
			 info[j].tensor, info[j].frame_len);
		if (known(id) || t->keys)
			/* A sparse input never becomes dense frames; the
			 * known codecs keep the input's kind and key width. */
			GW_CHECK(known(id) ? info[j].flags == want_flags
					   : (info[j].flags & GW_FF_SPARSE) != 0,
				 "%s on %s: frame %zu has flags %#x, want %#x",
				 gw_codec_name(id), in->name, j, info[j].flags,
				 want_flags);
		GW_CHECK(info[j].count > 0, "%s on %s: frame %zu has no entries",
			 gw_codec_name(id), in->name, j);
	}
}

/* Value promise of the known codecs for input x decoded (into -0.0) as y,
 * m being the largest magnitude of x's frame. */
static void check_value(int id, const struct input *in, size_t budget,
			uint64_t key, float x, float y, double m)
{
	GW_CHECK(isfinite(y), "%s on %s budget %zu: finite input %a at %llu "
		 "decoded to %a", gw_codec_name(id), in->name, budget, (double)x,
		 (unsigned long long)key, (double)y);
	if (id == GW_CODEC_RAW || !(gw_codec_caps(id) & GW_CODEC_LOSSY)) {
		GW_CHECK(gw_test_bits(x) == gw_test_bits(y),
			 "%s on %s budget %zu: element %llu: %a decoded as %a "
			 "(lossless codec)", gw_codec_name(id), in->name, budget,
			 (unsigned long long)key, (double)x, (double)y);
	} else if (id == GW_CODEC_BF16) {
		uint32_t want = (uint32_t)gw_test_bf16_rne(x) << 16;
		GW_CHECK(gw_test_bits(y) == want,
			 "bf16 on %s budget %zu: element %llu: %a decoded as %a, "
			 "RNE reference %a", in->name, budget,
			 (unsigned long long)key, (double)x, (double)y,
			 (double)gw_test_float(want));
	} else if (id == GW_CODEC_INT8) {
		double err = fabs((double)y - (double)x);
		GW_CHECK(err <= int8_bound(m),
			 "int8 on %s budget %zu: element %llu: %a decoded as %a, "
			 "error %g > bound %g (frame max %g)", in->name, budget,
			 (unsigned long long)key, (double)x, (double)y, err,
			 int8_bound(m), m);
	}
}

static void roundtrip(int id, const struct input *in)
{
	gw_encoder *enc = gw_test_encoder(id);
	const gw_tensor *t = in->t;
	int min = gw_encode_min_budget(enc, t);
	GW_CHECK(min >= (int)GW_BUDGET_MIN && min <= (int)GW_FRAME_MAX,
		 "%s: min budget %d out of [64, 65535]", gw_codec_name(id), min);
	float *out = malloc(in->dim * sizeof(float));
	uint8_t *written = malloc(in->dim);
	GW_CHECK(out && written, "out of memory");

	const int superset = gw_test_sends_superset(id);
	const int exact = !gw_test_sends_subset(id) && !superset;
	for (size_t b = 0; b < N_BUDGETS; b++) {
		size_t budget = budget_at(min, (int)b);
		int seen = 0;
		for (size_t p = 0; p < b; p++)
			seen |= budget_at(min, (int)p) == budget;
		if (seen || (in->coarse && b >= 2 && budget != 1500 - 78 && budget != 65535))
			continue;
		gw_test_frames fr;
		int rc = gw_test_encode_all(enc, t, budget, &fr);
		GW_CHECK(rc == 0, "%s on %s, budget %zu: encode failed: %s",
			 gw_codec_name(id), in->name, budget, gw_error_name(rc));
		gw_frame_info *info = calloc(fr.n ? fr.n : 1, sizeof(*info));
		GW_CHECK(info, "out of memory");
		check_headers(id, in, budget, &fr, info);

		/* Decode into -0.0, the identity of +: -0 + x == x bitwise. */
		gw_test_fill(out, in->dim, -0.0f);
		for (size_t j = 0; j < fr.n; j++) {
			rc = gw_decode(fr.f[j].data, fr.f[j].len, out, in->dim);
			GW_CHECK(rc == (int)info[j].count,
				 "%s on %s budget %zu: decode of frame %zu returned %d "
				 "(%s), header count %u", gw_codec_name(id), in->name,
				 budget, j, rc, gw_error_name(rc), info[j].count);
		}

		/* Coverage: ranges are disjoint, inside the tensor, and each
		 * holds exactly (subset codecs: at most) its count of the
		 * tensor's keys; together every key once. */
		qsort(info, fr.n, sizeof(*info), cmp_start);
		memset(written, 0, in->dim);
		uint64_t covered = 0;
		for (size_t j = 0; j < fr.n; j++) {
			uint64_t lo = info[j].start, hi = lo + info[j].span;
			GW_CHECK(hi <= in->dim, "%s on %s budget %zu: frame range "
				 "[%llu,+%u) beyond dim %llu", gw_codec_name(id),
				 in->name, budget, (unsigned long long)lo,
				 info[j].span, (unsigned long long)in->dim);
			GW_CHECK(j == 0 || info[j - 1].start + info[j - 1].span <= lo,
				 "%s on %s budget %zu: frame ranges overlap at %llu",
				 gw_codec_name(id), in->name, budget,
				 (unsigned long long)lo);
			uint64_t a = lower_bound(in, lo), z = lower_bound(in, hi);
			GW_CHECK(exact ? z - a == info[j].count :
				 superset && in->keys ? z - a <= info[j].count : z - a >= info[j].count,
				 "%s on %s budget %zu: range [%llu,+%u) holds %llu keys "
				 "of the tensor, frame says %u", gw_codec_name(id),
				 in->name, budget, (unsigned long long)lo, info[j].span,
				 (unsigned long long)(z - a), info[j].count);
			covered += info[j].count;
			memset(written + lo, 1, info[j].span);

			double m = 0;
			for (uint64_t i = a; i < z; i++)
				m = fmax(m, fabs((double)in->vals[i]));
			for (uint64_t i = a; known(id) && i < z; i++)
				check_value(id, in, budget, key_of(in, i), in->vals[i],
					    out[key_of(in, i)], m);
		}
		if (exact)
			GW_CHECK(covered == in->n, "%s on %s budget %zu: frames hold "
				 "%llu of %llu elements", gw_codec_name(id), in->name,
				 budget, (unsigned long long)covered,
				 (unsigned long long)in->n);

		/* Every codec: finite in, finite out; nothing written outside
		 * the frames' ranges nor (sparse input) at a coordinate
		 * without a key. */
		uint64_t ki = 0;
		for (uint64_t k = 0; k < in->dim; k++) {
			int has_key = !in->keys || (ki < in->n && in->keys[ki] == k);
			if (in->keys && has_key)
				ki++;
			if (has_key && written[k]) {
				GW_CHECK(isfinite(out[k]), "%s on %s budget %zu: "
					 "coordinate %llu decoded to %a",
					 gw_codec_name(id), in->name, budget,
					 (unsigned long long)k, (double)out[k]);
				continue;
			}
			/* a superset codec's false positive adds a 0 there */
			GW_CHECK(gw_test_bits(out[k]) == 0x80000000u ||
					 (superset && written[k] && out[k] == 0.0f),
				 "%s on %s budget %zu: coordinate %llu is in no frame "
				 "(or has no key) but was written (%a)",
				 gw_codec_name(id), in->name, budget,
				 (unsigned long long)k, (double)out[k]);
		}
		free(info);
		gw_test_frames_free(&fr);
	}
	free(written);
	free(out);
	gw_encoder_free(enc);
}

static void test_dense_traces(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		gw_tensor t = gw_test_dense_tensor(0x1000u + (uint32_t)i, d.v, d.n);
		struct input in = {d.name, &t, NULL, d.v, d.n, d.n, 0};
		for (int c = 0; c < nc; c++)
			if (gw_test_codec_accepts(ids[c], 0))
				roundtrip(ids[c], &in);
		gw_test_dense_free(&d);
	}
}

static void sparse_traces(unsigned key_bits)
{
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
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
		gw_tensor t = gw_test_sparse_tensor(0x2000u + (uint32_t)i, s.dim,
						    keys, key_bits, s.vals, s.nnz);
		/* 64-bit keys repeat the 32-bit run on the same data: the
		 * key width matters at the frame edges, not at every budget. */
		struct input in = {s.name, &t, s.keys, s.vals, s.nnz, s.dim,
				   key_bits == 64};
		for (int c = 0; c < nc; c++)
			if (gw_test_codec_accepts(ids[c], 1))
				roundtrip(ids[c], &in);
		free(k64);
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

/* A codec that takes neither kind of tensor is refused at begin. */
static void test_unsupported_kind_refused(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	float v[2] = {1, 2};
	uint32_t k[2] = {0, 1};
	for (int c = 0; c < nc; c++) {
		gw_encoder *enc = gw_test_encoder(ids[c]);
		gw_tensor td = gw_test_dense_tensor(1, v, 2);
		gw_tensor ts = gw_test_sparse_tensor(1, 2, k, 32, v, 2);
		if (!gw_test_codec_accepts(ids[c], 0))
			GW_EXPECT_RC(gw_encode_begin(enc, &td), GW_EUNSUPPORTED,
				     "%s lacks GW_CODEC_DENSE but took a dense tensor",
				     gw_codec_name(ids[c]));
		if (!gw_test_codec_accepts(ids[c], 1))
			GW_EXPECT_RC(gw_encode_begin(enc, &ts), GW_EUNSUPPORTED,
				     "%s lacks GW_CODEC_SPARSE but took a sparse tensor",
				     gw_codec_name(ids[c]));
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
		cmocka_unit_test(test_unsupported_kind_refused),
	};
	return cmocka_run_group_tests_name("roundtrip_traces", tests, NULL, NULL);
}
