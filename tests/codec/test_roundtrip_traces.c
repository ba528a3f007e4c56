/* Every registered codec, at its defaults and every variant of tests/gw_test_codecs.c, round-trips every real trace at every budget: frames fit the budget, name their codec and tensor, come in ascending disjoint ranges that tile a dense tensor and cover each element once (subsets and supersets where the codec says), start on multiples of 5 where it cuts groups, decode to the value promise of the codec (raw bits, bf16 RNE, int8 within scale/2, 3LC's sign(x) m, terngrad's {-m, 0, m}, onebit's two means, top-k's k largest, sketchml's kept sign, deepreduce's stated bound), write nothing outside their ranges, and add what they decode (twice decoded is twice the values, at the packet budget); smaller budgets make more frames; a kind a codec lacks is refused at begin. */
#include "gw_test.h"

#include <math.h>

static int cmp_start(const void *a, const void *b)
{
	const gw_frame_info *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Header checks for every frame of c. */
static void check_headers(const gw_test_case *c)
{
	const gw_tensor *t = &c->in->t;
	uint16_t want_flags = 0;
	if (t->keys)
		want_flags = GW_FF_SPARSE | (t->key_bits == 64 ? GW_FF_KEY64 : 0);
	int keeps = (c->codec->flags & GW_TEST_KEEPS_KIND) != 0;
	int tiles = !(c->codec->flags & (GW_TEST_SUBSET | GW_TEST_SUPERSET)) && !t->keys;
	uint64_t next = 0;
	for (size_t j = 0; j < c->fr.n; j++) {
		const gw_frame_info *h = &c->info[j];
		/* Frames come in ascending, disjoint ranges; a dense tensor's
		 * frames tile it from 0 unless the codec sends a subset. */
		GW_CHECK(tiles ? h->start == next : h->start >= next, "%s: frame %zu "
			 "[%llu,+%u) starts before the end of the previous one (%llu)%s",
			 c->what, j, (unsigned long long)h->start, h->span,
			 (unsigned long long)next, tiles ? " or leaves a gap" : "");
		GW_CHECK(h->codec == c->id && h->tensor == t->id &&
				 h->frame_len == c->fr.f[j].len,
			 "%s: frame %zu header codec %u tensor %u len %u does not "
			 "match the tensor encoded", c->what, j, h->codec, h->tensor,
			 h->frame_len);
		if (keeps || t->keys)
			/* A sparse input never becomes dense frames; the codecs
			 * that keep the kind keep the key width too. */
			GW_CHECK(keeps ? h->flags == want_flags
				       : (h->flags & GW_FF_SPARSE) != 0,
				 "%s: frame %zu has flags %#x, want %#x", c->what, j,
				 h->flags, want_flags);
		GW_CHECK(h->count > 0, "%s: frame %zu has no entries", c->what, j);
		if ((c->codec->flags & GW_TEST_GROUPS5) && !t->keys)
			GW_CHECK(h->start % 5 == 0 &&
					 (h->count % 5 == 0 || h->start + h->count == t->dim),
				 "%s: frame %zu [%llu,+%u) not on a multiple of 5", c->what,
				 j, (unsigned long long)h->start, h->count);
		next = h->start + h->span;
	}
}

/* Ranges are disjoint, inside the tensor, and each holds exactly (subset
 * codecs: at least; superset codecs with a sparse input: at most) its
 * count of the tensor's keys; together, unless a subset, every key once.
 * Marks in written[] the coordinates inside some frame's range. */
static void check_coverage(const gw_test_case *c, gw_frame_info *sorted,
			   uint8_t *written)
{
	const gw_test_input *in = c->in;
	const int superset = (c->codec->flags & GW_TEST_SUPERSET) != 0;
	const int exact = !(c->codec->flags & GW_TEST_SUBSET) && !superset;
	memcpy(sorted, c->info, c->fr.n * sizeof(*sorted));
	qsort(sorted, c->fr.n, sizeof(*sorted), cmp_start);
	memset(written, 0, in->dim);
	uint64_t covered = 0;
	for (size_t j = 0; j < c->fr.n; j++) {
		uint64_t lo = sorted[j].start, hi = lo + sorted[j].span;
		GW_CHECK(hi <= in->dim, "%s: frame range [%llu,+%u) beyond dim %llu",
			 c->what, (unsigned long long)lo, sorted[j].span,
			 (unsigned long long)in->dim);
		GW_CHECK(j == 0 || sorted[j - 1].start + sorted[j - 1].span <= lo,
			 "%s: frame ranges overlap at %llu", c->what,
			 (unsigned long long)lo);
		uint64_t a = gw_test_lower_bound(in, lo), z = gw_test_lower_bound(in, hi);
		GW_CHECK(exact ? z - a == sorted[j].count :
			 superset && in->keys ? z - a <= sorted[j].count
					      : z - a >= sorted[j].count,
			 "%s: range [%llu,+%u) holds %llu keys of the tensor, frame "
			 "says %u", c->what, (unsigned long long)lo, sorted[j].span,
			 (unsigned long long)(z - a), sorted[j].count);
		covered += sorted[j].count;
		memset(written + lo, 1, sorted[j].span);
	}
	if (exact)
		GW_CHECK(covered == in->n, "%s: frames hold %llu of %llu elements",
			 c->what, (unsigned long long)covered,
			 (unsigned long long)in->n);
}

/* Finite in, finite out; nothing written outside the frames' ranges nor
 * (sparse input) at a coordinate without a key, but a superset codec's
 * false positive (a 0 within the frame's stated bound: the promise). */
static void check_untouched(const gw_test_case *c, const uint8_t *written,
			    const float *out)
{
	const gw_test_input *in = c->in;
	const int superset = (c->codec->flags & GW_TEST_SUPERSET) != 0;
	uint64_t ki = 0;
	for (uint64_t k = 0; k < in->dim; k++) {
		int has_key = !in->keys || (ki < in->n && in->keys[ki] == k);
		if (in->keys && has_key)
			ki++;
		if ((has_key || superset) && written[k]) {
			GW_CHECK(isfinite(out[k]), "%s: coordinate %llu decoded to %a",
				 c->what, (unsigned long long)k, (double)out[k]);
			continue;
		}
		GW_CHECK(gw_test_bits(out[k]) == 0x80000000u, "%s: coordinate %llu is in no frame (or has no key) but was "
			 "written (%a)", c->what, (unsigned long long)k, (double)out[k]);
	}
}

static void roundtrip(gw_test_case *c, void *arg)
{
	(void)arg;
	const gw_test_input *in = c->in;
	float *out = gw_test_scratch(0, in->dim * sizeof(float));
	float *once = gw_test_scratch(1, in->dim * sizeof(float));
	uint8_t *written = gw_test_scratch(2, in->dim);
	gw_frame_info *sorted = malloc((c->fr.n ? c->fr.n : 1) * sizeof(*sorted));
	GW_CHECK(sorted, "out of memory");
	check_headers(c);

	/* Decode into -0.0, the identity of +: -0 + x == x bitwise. */
	gw_test_fill(out, in->dim, -0.0f);
	for (size_t j = 0; j < c->fr.n; j++) {
		int rc = gw_decode(c->fr.f[j].data, c->fr.f[j].len, out, in->dim);
		GW_CHECK(rc == (int)c->info[j].count, "%s: decode of frame %zu returned "
			 "%d (%s), header count %u", c->what, j, rc, gw_error_name(rc),
			 c->info[j].count);
	}
	check_coverage(c, sorted, written);
	check_untouched(c, written, out);
	gw_test_check_promise(c->enc, in, in->vals, &c->fr, c->info, out, c->what);

	/* Decode-accumulate: a second pass adds the same again (at the packet
	 * budget: the rule does not depend on it). */
	if (c->budget != 1500 - GW_PKT_RESERVE) {
		free(sorted);
		return;
	}
	memcpy(once, out, in->dim * sizeof(float));
	gw_test_decode_all(&c->fr, out, in->dim);
	for (uint64_t k = 0; k < in->dim; k++)
		GW_CHECK(gw_test_bits(out[k]) == gw_test_bits(once[k] + once[k]),
			 "%s: coordinate %llu decoded twice gives %a, once %a", c->what,
			 (unsigned long long)k, (double)out[k], (double)once[k]);
	free(sorted);
}

static void test_every_codec_every_trace(void **state)
{
	(void)state;
	gw_test_each_case(GW_TEST_BUDGETS_ALL, roundtrip, NULL);
}

/* Small budgets still make progress, large ones hold more per frame: the
 * cnn iteration 135 (25,290 values; a fifth of them where a codec sends
 * a fraction) in more frames at 160 bytes than at 65,535. */
static void more_frames(const gw_test_variant *v, void *arg)
{
	const gw_tensor *t = arg;
	if (!gw_test_codec_accepts(v->id, 0))
		return;
	size_t counts[2], budgets[2] = {160, GW_FRAME_MAX};
	for (int b = 0; b < 2; b++) {
		gw_encoder *enc = gw_test_encoder_fraction(v->id, v->params, 0.2);
		gw_test_frames fr;
		GW_EXPECT_RC(gw_test_encode_all(enc, t, budgets[b], &fr), 0,
			     "%s budget %zu", v->name, budgets[b]);
		counts[b] = fr.n;
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	GW_CHECK(counts[0] > counts[1], "%s: %zu frames at 160 B, %zu at 64 KiB",
		 v->name, counts[0], counts[1]);
}

static void test_smaller_budgets_more_frames(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	size_t n;
	float *g = gw_test_load_cnn_iter(3, &n);
	gw_tensor t = gw_test_dense_tensor(1, g, n);
	gw_test_each_variant(0, more_frames, &t);
	free(g);
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

GW_TEST_MAIN("roundtrip_traces", 1,
	     cmocka_unit_test(test_every_codec_every_trace),
	     cmocka_unit_test(test_smaller_budgets_more_frames),
	     cmocka_unit_test(test_unsupported_kind_refused))
