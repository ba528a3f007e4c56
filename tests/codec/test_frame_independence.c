/* Frames are independent: each frame alone writes only inside its own range and gives there, bit for bit, what all frames give (every codec and variant, every trace, several budgets), all frames in reverse order give what forward order gives; any subset, in any order, decodes to exactly what the in-order decode gives for its frames and leaves dropped frames' elements untouched; a duplicated frame adds twice. */
#include "gw_test.h"

#include <math.h>

/* Not 0: an untouched element must be told apart from a decoded zero of a
 * dropped frame, and S + v must be computed by the decoder itself. */
#define SENTINEL 0.375f

static void check_subset(int id, const char *name, const gw_test_frames *fr,
			 const gw_frame_info *info, const float *ref,
			 uint64_t dim, gw_test_rng *rng, unsigned drop_pct,
			 float *out)
{
	size_t *order = malloc((fr->n ? fr->n : 1) * sizeof(size_t));
	uint8_t *kept = calloc(fr->n ? fr->n : 1, 1);
	GW_CHECK(order && kept, "out of memory");
	for (size_t j = 0; j < fr->n; j++)
		order[j] = j;
	gw_test_shuffle(rng, order, fr->n);
	gw_test_fill(out, dim, SENTINEL);
	size_t nkept = 0;
	for (size_t i = 0; i < fr->n; i++) {
		size_t j = order[i];
		if (gw_test_below(rng, 100) < drop_pct)
			continue;
		kept[j] = 1;
		nkept++;
		int rc = gw_decode(fr->f[j].data, fr->f[j].len, out, dim);
		GW_CHECK(rc == (int)info[j].count, "%s on %s: frame %zu decoded out "
			 "of order returned %d (%s), want %u", gw_codec_name(id), name,
			 j, rc, gw_error_name(rc), info[j].count);
	}
	/* Elements of kept frames equal the in-order reference bit for bit;
	 * elements of dropped frames (and of no frame) are the sentinel. */
	uint8_t *owner_kept = malloc(dim);
	GW_CHECK(owner_kept, "out of memory");
	memset(owner_kept, 0, dim);
	for (size_t j = 0; j < fr->n; j++)
		if (kept[j])
			memset(owner_kept + info[j].start, 1, info[j].span);
	for (uint64_t k = 0; k < dim; k++) {
		if (owner_kept[k])
			GW_CHECK(gw_test_bits(out[k]) == gw_test_bits(ref[k]),
				 "%s on %s (%zu of %zu frames kept, shuffled): element "
				 "%llu is %a, in-order decode gave %a", gw_codec_name(id),
				 name, nkept, fr->n, (unsigned long long)k,
				 (double)out[k], (double)ref[k]);
		else
			GW_CHECK(gw_test_bits(out[k]) == gw_test_bits(SENTINEL),
				 "%s on %s: element %llu belongs to a dropped frame (or "
				 "none) but is %a, not the sentinel", gw_codec_name(id),
				 name, (unsigned long long)k, (double)out[k]);
	}
	free(owner_kept);
	free(kept);
	free(order);
}

/* Decoding the same frame twice adds its values twice. Frames carry no
 * sequence number: deduplication (retransmits, multipath) is the
 * dataplane's job, not the decoder's. */
static void check_duplicate(int id, const char *name, const gw_test_frames *fr,
			    const gw_frame_info *info, uint64_t dim, float *out,
			    float *once)
{
	size_t j = fr->n / 2;
	gw_test_fill(once, dim, 0.0f);
	GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, once, dim));
	gw_test_fill(out, dim, 0.0f);
	GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, out, dim));
	GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, out, dim));
	for (uint64_t k = info[j].start; k < info[j].start + info[j].span; k++) {
		float v = once[k];
		GW_CHECK(gw_test_bits(out[k]) == gw_test_bits(v + v),
			 "%s on %s: frame %zu decoded twice gives %a at %llu, want "
			 "twice %a", gw_codec_name(id), name, j, (double)out[k],
			 (unsigned long long)k, (double)v);
	}
}

static void independence(int id, const gw_tensor *t, const char *name,
			 size_t budget, uint64_t seed)
{
	gw_encoder *enc = gw_test_encoder(id);
	/* A codec that sends a fraction of the elements (top-k) sends a
	 * quarter here, so there are frames enough to shuffle and drop. */
	int frac = gw_param_by_name("fraction");
	if (frac >= 0 && gw_param_bounds(id, (gw_param)frac, NULL) == 0)
		GW_OK_CALL(gw_encoder_set_param(enc, (gw_param)frac, 0.25));
	gw_test_frames fr;
	size_t min = (size_t)gw_encode_min_budget(enc, t);
	if (budget < min)
		budget = min;
	for (;;) {
		GW_EXPECT_RC(gw_test_encode_all(enc, t, budget, &fr), 0,
			     "%s: encoding %s at budget %zu failed",
			     gw_codec_name(id), name, budget);
		/* A codec that packs tighter gets a smaller budget: the
		 * test wants frames enough to shuffle and drop. */
		if (fr.n >= 4 || budget <= min)
			break;
		gw_test_frames_free(&fr);
		budget = budget / 2 > min ? budget / 2 : min;
	}
	GW_CHECK(fr.n >= 4, "%s on %s budget %zu: only %zu frames; the test needs "
		 "several", gw_codec_name(id), name, budget, fr.n);
	uint64_t dim = t->dim;
	gw_frame_info *info = malloc(fr.n * sizeof(*info));
	float *ref = malloc(dim * sizeof(float));
	float *out = malloc(dim * sizeof(float));
	GW_CHECK(info && ref && out, "out of memory");
	gw_test_fill(ref, dim, SENTINEL);
	for (size_t j = 0; j < fr.n; j++) {
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &info[j]));
		GW_CHECK(info[j].start + info[j].span <= dim,
			 "%s on %s: frame %zu range beyond the tensor",
			 gw_codec_name(id), name, j);
		GW_CHECK(j == 0 || info[j].start >= info[j - 1].start + info[j - 1].span,
			 "%s on %s: frame %zu range overlaps frame %zu (frames must "
			 "come in ascending disjoint ranges)", gw_codec_name(id), name,
			 j, j - 1);
		GW_OK_CALL(gw_decode(fr.f[j].data, fr.f[j].len, ref, dim));
	}

	gw_test_rng rng = {seed};
	static const unsigned drops[] = {0, 10, 30, 50, 90, 100};
	for (size_t d = 0; d < sizeof(drops) / sizeof(drops[0]); d++)
		for (int trial = 0; trial < 2; trial++)
			check_subset(id, name, &fr, info, ref, dim, &rng, drops[d], out);
	check_duplicate(id, name, &fr, info, dim, out, ref);

	free(out);
	free(ref);
	free(info);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

/* ---- each frame alone ---------------------------------------------------- */

/* Each frame alone, into -0.0, changes only its own range and gives there
 * what all frames gave (frames decoded last to first); the whole output is
 * scanned for stray writes after every (n/8 + 1)-th frame and the first.
 * Then all frames in reverse order give bitwise what forward order gave. */
static void alone(gw_test_case *c, void *arg)
{
	(void)arg;
	uint64_t dim = c->in->dim;
	float *full = gw_test_scratch(0, dim * sizeof(float));
	float *one = gw_test_scratch(1, dim * sizeof(float));
	float *rev = gw_test_scratch(2, dim * sizeof(float));
	float *nz = gw_test_scratch(3, dim * sizeof(float));   /* all -0.0 */
	const gw_test_frames *fr = &c->fr;
	gw_test_fill(nz, dim, -0.0f);
	gw_test_fill(full, dim, -0.0f);
	gw_test_decode_all(fr, full, dim);
	gw_test_fill(one, dim, -0.0f);
	gw_test_fill(rev, dim, -0.0f);
	size_t every = fr->n / 8 + 1;
	for (size_t j = fr->n; j-- > 0;) {
		const gw_frame_info *h = &c->info[j];
		GW_EXPECT_RC(gw_decode(fr->f[j].data, fr->f[j].len, one, dim),
			     (int)h->count, "%s: frame %zu alone", c->what, j);
		size_t bytes = (size_t)h->span * sizeof(float);
		if (memcmp(one + h->start, full + h->start, bytes))
			for (uint64_t k = h->start; k < h->start + h->span; k++)
				GW_CHECK(gw_test_bits(one[k]) == gw_test_bits(full[k]),
					 "%s: frame %zu alone gives %a at %llu, all frames "
					 "%a", c->what, j, (double)one[k],
					 (unsigned long long)k, (double)full[k]);
		memcpy(one + h->start, nz + h->start, bytes);
		/* (memcmp first: the element loop only says where) */
		if (j % every == 0 && memcmp(one, nz, dim * sizeof(float)))
			for (uint64_t k = 0; k < dim; k++)
				GW_CHECK(gw_test_bits(one[k]) == 0x80000000u,
					 "%s: element %llu written outside frame %zu's "
					 "range [%llu,+%u) (or an earlier one's)", c->what,
					 (unsigned long long)k, j,
					 (unsigned long long)h->start, h->span);
		GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, rev, dim));
	}
	if (memcmp(rev, full, dim * sizeof(float)))
		for (uint64_t k = 0; k < dim; k++)
			GW_CHECK(gw_test_bits(rev[k]) == gw_test_bits(full[k]),
				 "%s: reverse order differs at %llu", c->what,
				 (unsigned long long)k);
}

static void test_each_frame_alone(void **state)
{
	(void)state;
	gw_test_each_case(GW_TEST_BUDGETS_COARSE, alone, NULL);
}

/* ---- subsets and duplicates ------------------------------------------------ */

static void test_dense_independence(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	gw_test_dense d;
	gw_test_load_dense(10, &d);   /* cnn/it010_fc.weight.f32 */
	gw_tensor t = gw_test_dense_tensor(77, d.v, d.n);
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		independence(ids[c], &t, d.name, 256, 1000 + c);
		independence(ids[c], &t, d.name, 1500 - 78, 2000 + c);
	}
	gw_test_dense_free(&d);
}

static void test_sparse_independence(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	gw_test_sparse s;
	gw_test_load_sparse(1, &s);   /* logreg_spam/it010 */
	gw_tensor t = gw_test_sparse_tensor(78, s.dim, s.keys, 32, s.vals, s.nnz);
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 1))
			continue;
		independence(ids[c], &t, s.name, 1500 - 78, 3000 + c);
		independence(ids[c], &t, s.name, 9000, 4000 + c);
	}
	gw_test_sparse_free(&s);
}

GW_TEST_MAIN("frame_independence", 1,
	     cmocka_unit_test(test_each_frame_alone),
	     cmocka_unit_test(test_dense_independence),
	     cmocka_unit_test(test_sparse_independence))
