/* topk on real traces, dense and sparse, at several fractions and budgets: frames are sparse (keys below dim, ascending, start/span the first and last key), hold exactly k = ceil(fraction * n) entries in all, which are the k largest magnitudes (ties to the lowest index) and decode bitwise to the input; each frame decodes alone; adversarial patterns (sorted, reversed, all equal, few values) over 2^20 elements select correctly. */
#include "gw_test.h"

#include <math.h>

static const size_t budgets[] = {64, 1500 - 78, 65535};
static const double fractions[] = {0.001, 0.01, 0.1, 0.5, 1.0};

static uint64_t k_of(double f, uint64_t n)
{
	uint64_t k = (uint64_t)ceil(f * (double)n);
	return k < 1 ? 1 : k > n ? n : k;
}

/* Reference parser of a topk payload (docs/wire-format-baselines.part.md):
 * count float32 values, then count - 1 LEB128 varints of (gap - 1); the
 * first key is the header's start. Fills keys[] and vals[]. */
static void parse_frame(const gw_test_frame *f, const gw_frame_info *h,
			uint64_t *keys, float *vals)
{
	const uint8_t *p = f->data + GW_FRAME_HDR_LEN + h->param_len;
	const uint8_t *end = p + h->payload_len;
	for (uint32_t i = 0; i < h->count; i++)
		vals[i] = gw_test_float(gw_test_ld32(p + 4 * (size_t)i));
	const uint8_t *q = p + 4 * (size_t)h->count;
	keys[0] = h->start;
	for (uint32_t i = 1; i < h->count; i++) {
		uint64_t d = 0;
		for (unsigned sh = 0;; sh += 7) {
			GW_CHECK(q < end && sh < 35, "varint %u runs off", i);
			d |= (uint64_t)(*q & 0x7f) << sh;
			if (!(*q++ & 0x80))
				break;
		}
		keys[i] = keys[i - 1] + d + 1;
	}
	GW_CHECK(q == end, "payload has %td bytes after the last gap", end - q);
}

static uint64_t entry_of(const void *keys, unsigned key_bits, uint64_t n,
			 uint64_t key)
{
	if (!keys)
		return key;
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint64_t k = key_bits == 64 ? ((const uint64_t *)keys)[mid]
					    : ((const uint32_t *)keys)[mid];
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t key_at(const void *keys, unsigned key_bits, uint64_t e)
{
	if (!keys)
		return e;
	return key_bits == 64 ? ((const uint64_t *)keys)[e]
			      : ((const uint32_t *)keys)[e];
}

/* Encodes v (n entries, keys NULL for dense) and checks everything above;
 * returns the number of frames. */
static size_t check_topk(const float *v, uint64_t n, const void *keys,
			 unsigned key_bits, uint64_t dim, double f, size_t budget,
			 const char *what)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, f));
	gw_tensor t = keys ? gw_test_sparse_tensor(6, dim, keys, key_bits, v, n)
			   : gw_test_dense_tensor(6, v, n);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
	uint64_t k = k_of(f, n);
	GW_CHECK(k == 1 || (double)(k - 1) < f * (double)n,
		 "k %llu is not ceil(%g * %llu)", (unsigned long long)k, f,
		 (unsigned long long)n);

	uint8_t *sent = calloc(n, 1);
	float *one = malloc(dim * sizeof(float));
	uint64_t *fk = malloc(65536 / 4 * sizeof(uint64_t));
	float *fv = malloc(65536 / 4 * sizeof(float));
	GW_CHECK(sent && one && fk && fv, "out of memory");
	gw_test_fill(one, dim, -0.0f);
	uint64_t total = 0, prev_key = 0;
	int have_prev = 0;
	uint16_t want = GW_FF_SPARSE | (key_bits == 64 ? GW_FF_KEY64 : 0);
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		GW_CHECK(h.flags == want && h.param_len == 0 && h.count >= 1 &&
				 h.count <= 65536 / 4,
			 "%s f %g budget %zu frame %zu: flags %#x param_len %u "
			 "count %u", what, f, budget, j, h.flags, h.param_len, h.count);
		GW_CHECK(!have_prev || h.start > prev_key, "%s frame %zu starts at "
			 "%llu, not after the previous frame's last key %llu", what,
			 j, (unsigned long long)h.start, (unsigned long long)prev_key);
		parse_frame(&fr.f[j], &h, fk, fv);
		GW_CHECK(fk[h.count - 1] == h.start + h.span - 1, "%s frame %zu: "
			 "last key %llu, span says %llu", what, j,
			 (unsigned long long)fk[h.count - 1],
			 (unsigned long long)(h.start + h.span - 1));
		GW_EXPECT_RC(gw_decode(fr.f[j].data, fr.f[j].len, one, dim),
			     (int)h.count, "%s frame %zu alone", what, j);
		for (uint32_t i = 0; i < h.count; i++) {
			GW_CHECK(fk[i] < dim && (i == 0 || fk[i] > fk[i - 1]),
				 "%s frame %zu: key %llu", what, j,
				 (unsigned long long)fk[i]);
			uint64_t e = entry_of(keys, key_bits, n, fk[i]);
			GW_CHECK(e < n && key_at(keys, key_bits, e) == fk[i],
				 "%s: key %llu is not an input key", what,
				 (unsigned long long)fk[i]);
			GW_CHECK(gw_test_bits(fv[i]) == gw_test_bits(v[e]),
				 "%s: key %llu sent as %a, input %a", what,
				 (unsigned long long)fk[i], (double)fv[i], (double)v[e]);
			GW_CHECK(gw_test_bits(one[fk[i]]) == gw_test_bits(-0.0f + v[e]),
				 "%s: key %llu decoded to %a, input %a", what,
				 (unsigned long long)fk[i], (double)one[fk[i]],
				 (double)v[e]);
			GW_CHECK(!sent[e], "%s: key %llu sent twice", what,
				 (unsigned long long)fk[i]);
			sent[e] = 1;
			one[fk[i]] = -0.0f;
		}
		total += h.count;
		prev_key = h.start + h.span - 1;
		have_prev = 1;
	}
	GW_CHECK(total == k, "%s f %g budget %zu: %llu entries sent, k = %llu",
		 what, f, budget, (unsigned long long)total, (unsigned long long)k);
	for (uint64_t key = 0; key < dim; key++)
		GW_CHECK(gw_test_bits(one[key]) == 0x80000000u,
			 "%s: coordinate %llu written but not a sent key", what,
			 (unsigned long long)key);

	/* Largest magnitudes: every sent |v| >= every unsent |v|; on ties the
	 * sent ones come first in index order. */
	float min_sent = INFINITY, max_unsent = -1;
	for (uint64_t i = 0; i < n; i++) {
		if (sent[i])
			min_sent = fminf(min_sent, fabsf(v[i]));
		else
			max_unsent = fmaxf(max_unsent, fabsf(v[i]));
	}
	GW_CHECK(min_sent >= max_unsent, "%s f %g: a sent magnitude %a is below "
		 "an unsent one %a", what, f, (double)min_sent, (double)max_unsent);
	uint64_t last_sent_tie = 0, first_unsent_tie = UINT64_MAX;
	for (uint64_t i = 0; i < n; i++) {
		if (fabsf(v[i]) != min_sent)
			continue;
		if (sent[i])
			last_sent_tie = i;
		else if (first_unsent_tie == UINT64_MAX)
			first_unsent_tie = i;
	}
	if (first_unsent_tie != UINT64_MAX)
		GW_CHECK(last_sent_tie < first_unsent_tie, "%s: tie at %a: entry "
			 "%llu sent but %llu not", what, (double)min_sent,
			 (unsigned long long)last_sent_tie,
			 (unsigned long long)first_unsent_tie);
	size_t nf = fr.n;
	free(sent);
	free(one);
	free(fk);
	free(fv);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return nf;
}

/* One dense trace at every fraction and budget. */
static void dense_trace(const gw_test_dense *d, void *arg)
{
	(void)arg;
	for (size_t fi = 0; fi < GW_ARRAY_SIZE(fractions); fi++)
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++)
			check_topk(d->v, d->n, NULL, 32, d->n, fractions[fi], budgets[b], d->name);
}

static void test_dense_traces(void **state)
{
	(void)state;
	gw_test_each_trace(dense_trace, NULL, NULL);
}

/* One sparse trace at the first three fractions, 32- and 64-bit keys. */
static void sparse_trace(const gw_test_sparse *s, void *arg)
{
	(void)arg;
	uint64_t *k64 = malloc(s->nnz * sizeof(*k64));
	GW_CHECK(k64, "out of memory");
	for (size_t j = 0; j < s->nnz; j++)
		k64[j] = s->keys[j];
	for (size_t fi = 0; fi < 3; fi++) {
		check_topk(s->vals, s->nnz, s->keys, 32, s->dim, fractions[fi], 1500 - 78,
			   s->name);
		check_topk(s->vals, s->nnz, k64, 64, s->dim, fractions[fi], 65535, s->name);
	}
	free(k64);
}

static void test_sparse_traces(void **state)
{
	(void)state;
	gw_test_each_trace(NULL, sparse_trace, NULL);
}

static void test_ties_lowest_index(void **state)
{
	(void)state;
	float v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (i % 2) ? -1.0f : 1.0f;
	v[70] = 2.0f;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.05));
	gw_tensor t = gw_test_dense_tensor(1, v, 100);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	float out[100];
	gw_test_fill(out, 100, 0.0f);
	gw_test_decode_all(&fr, out, 100);
	for (int i = 0; i < 100; i++) {
		bool want = i < 4 || i == 70;
		GW_CHECK((out[i] != 0.0f) == want && (!want || out[i] == v[i]),
			 "element %d decoded %a", i, (double)out[i]);
	}
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

static void test_fraction_param(void **state)
{
	(void)state;
	gw_bounds b;
	GW_OK_CALL(gw_param_bounds(GW_CODEC_TOPK, GW_PARAM_FRACTION, &b));
	GW_CHECK(b.lo > 0 && b.lo < 1e-300 && b.hi == 1 && b.def == 0.01 && !b.integer,
		 "fraction bounds [%g, %g] default %g", b.lo, b.hi, b.def);
	GW_CHECK(gw_codec_caps(GW_CODEC_TOPK) ==
			 (GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY),
		 "topk caps");
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	double v;
	GW_OK_CALL(gw_encoder_get_param(enc, GW_PARAM_FRACTION, &v));
	GW_CHECK(v == 0.01, "default fraction %g", v);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0), GW_EBOUNDS, "0");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 1.0000001),
		     GW_EBOUNDS, "above 1");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_FRACTION, NAN), GW_EBOUNDS,
		     "NaN");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, 1), GW_EPARAM, "seed");
	/* a tiny fraction still sends one entry; an empty tensor none */
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 1e-300));
	float x[3] = {1, -3, 2};
	gw_tensor t = gw_test_dense_tensor(1, x, 3);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	gw_frame_info h;
	GW_CHECK(fr.n == 1, "%zu frames", fr.n);
	GW_OK_CALL(gw_frame_verify(fr.f[0].data, fr.f[0].len, &h));
	GW_CHECK(h.count == 1 && h.start == 1 && h.span == 1, "tiny fraction");
	gw_test_frames_free(&fr);
	t = gw_test_dense_tensor(1, x, 0);
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	GW_CHECK(fr.n == 0, "empty tensor gave %zu frames", fr.n);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

/* 1 when value i of n lies in one of the runs the sampled threshold of
 * codec/select.c reads (64 runs of 256 spread evenly), else 0. */
static int in_sample(uint64_t i, uint64_t n)
{
	for (uint64_t b = 0; b < 64; b++) {
		uint64_t at = (n - 256) * b / 63;
		if (i >= at && i < at + 256)
			return 1;
	}
	return 0;
}

/* Large tensors in the orders that break naive quickselects, and two
 * that defeat a sampled threshold: large values only where the sample
 * reads (it guesses too high: fewer than k reach it) and only where it
 * does not (too low); at 0.01, 0.05 and 0.37 the selection goes through
 * the filter, its fallbacks and the plain radix select. */
static void test_adversarial_patterns(void **state)
{
	(void)state;
	const uint64_t n = 1u << 20;
	float *v = malloc(n * sizeof(float));
	GW_CHECK(v, "out of memory");
	gw_test_rng r = {12345};
	for (int pat = 0; pat < 8; pat++) {
		for (uint64_t i = 0; i < n; i++) {
			switch (pat) {
			case 0: v[i] = (float)i; break;                /* ascending */
			case 1: v[i] = -(float)(n - i); break;         /* descending */
			case 2: v[i] = 0.5f; break;                    /* all equal */
			case 3: v[i] = (float)(i % 3) - 1.0f; break;   /* 3 values */
			case 4: v[i] = (float)(i < n / 2 ? i : n - i); break; /* organ */
			case 6: v[i] = in_sample(i, n) ? 1.0f : gw_test_uniform(&r, -0.5f, 0.5f); break;
			case 7: v[i] = in_sample(i, n) ? gw_test_uniform(&r, -0.5f, 0.5f) : 1.0f; break;
			default: v[i] = gw_test_uniform(&r, -1, 1); break;
			}
		}
		char what[32];
		snprintf(what, sizeof(what), "pattern %d", pat);
		check_topk(v, n, NULL, 32, n, 0.01, 65535, what);
		check_topk(v, n, NULL, 32, n, 0.05, 65535, what);
		check_topk(v, n, NULL, 32, n, 0.37, 65535, what);
	}
	free(v);
}

GW_TEST_MAIN("topk_select", 1,
	     cmocka_unit_test(test_dense_traces),
	     cmocka_unit_test(test_sparse_traces),
	     cmocka_unit_test(test_ties_lowest_index),
	     cmocka_unit_test(test_fraction_param),
	     cmocka_unit_test(test_adversarial_patterns))
