/* deepreduce, every index codec with every value codec, on the real traces
 * (the sparse spam gradient as it is; the CNN gradient through top-r 1%):
 * frames stay inside the budget; lossless combinations (raw, rle, delta,
 * Bloom-P0 indices with f32 or deflate values) reconstruct exactly; every
 * value of a lossy one is within the bound its frame states; frames decode
 * alone, in any order, each only inside its own key range. */
#include "gw_test.h"

#include <math.h>

#include <gw/sketch.h>

#define BUDGET (1500 - GW_PKT_RESERVE)

struct combo {
	const char *spec;
	bool exact_index;    /* the decoded positions include every selected key */
	bool exact_values;   /* value section lossless */
};

static void combos(struct combo *c, int *n)
{
	static const char *idx[] = {"raw", "rle", "delta", "bloom,policy=p0", "bloom,policy=p1",
				    "bloom,policy=p2"};
	static const char *val[] = {"f32", "deflate", "qsgd", "poly", "dexp"};
	static char specs[30][96];
	*n = 0;
	for (int i = 0; i < 6; i++)
		for (int v = 0; v < 5; v++) {
			snprintf(specs[*n], sizeof(specs[0]), "index=%s,value=%s", idx[i], val[v]);
			c[*n] = (struct combo){specs[*n], i < 4, v < 2};
			(*n)++;
		}
}

static gw_encoder *make(const char *spec, const char *extra)
{
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	char err[256];
	int rc = gw_encoder_set_params(enc, spec, err, sizeof(err));
	GW_CHECK(rc == 0, "%s: %s", spec, err);
	if (extra) {
		rc = gw_encoder_set_params(enc, extra, err, sizeof(err));
		GW_CHECK(rc == 0, "%s: %s", extra, err);
	}
	return enc;
}

/* Encodes t (dense values `ref` over dim, the values a position may carry)
 * and checks every frame alone, then all in reverse order. sel[i] marks
 * the keys the sparsifier or input selected. */
static void check(const struct combo *c, const gw_tensor *t, const float *ref,
		  const uint8_t *sel, uint64_t dim, const char *what)
{
	gw_encoder *enc = make(c->spec, t->keys ? NULL : "fraction=0.01");
	gw_test_frames fr = {0};
	GW_EXPECT_RC(gw_test_encode_all(enc, t, BUDGET, &fr), 0, "%s %s", what, c->spec);
	GW_CHECK(fr.n > 0, "%s %s: no frames", what, c->spec);
	float *one = calloc(dim, sizeof(float)), *sum = calloc(dim, sizeof(float));
	float *all = calloc(dim, sizeof(float));
	uint64_t covered = 0, last_end = 0;
	for (size_t f = 0; f < fr.n; f++) {
		GW_CHECK(fr.f[f].len <= BUDGET, "frame %zu: %zu bytes", f, fr.f[f].len);
		gw_frame_info h;
		GW_EXPECT_RC(gw_frame_verify(fr.f[f].data, fr.f[f].len, &h), 0, "verify");
		GW_CHECK(h.start >= last_end, "%s %s: frame %zu overlaps the previous one", what,
			 c->spec, f);
		last_end = h.start + h.span;
		float bound = -1;
		GW_EXPECT_RC(gw_frame_bound(fr.f[f].data, fr.f[f].len, &bound), 0, "bound");
		GW_CHECK(bound >= 0 && isfinite(bound), "bound %g", bound);
		if (c->exact_values)
			GW_CHECK(bound == 0, "%s: lossless values state bound %g", c->spec, bound);
		int n = gw_decode(fr.f[f].data, fr.f[f].len, one, dim);
		GW_CHECK(n == (int)h.count, "%s %s: decode %d of %u", what, c->spec, n, h.count);
		for (uint64_t x = h.start; x < h.start + h.span; x++) {
			/* A written value is within the bound of the value at that
			 * key; with an exact index every selected key is written. */
			float err = fabsf(one[x] - ref[x]);
			if (one[x] != 0.0f || (c->exact_index && sel[x]))
				GW_CHECK(err <= bound, "%s %s: key %llu decoded %.9g, sent %.9g, "
					 "bound %.9g", what, c->spec, (unsigned long long)x,
					 one[x], ref[x], bound);
			if (sel[x])
				covered++;
			sum[x] += one[x];
			one[x] = 0.0f;
		}
	}
	/* The frames' ranges were cleared as they were checked: anything left
	 * was written outside a frame's own range. */
	for (uint64_t x = 0; x < dim; x++)
		GW_CHECK(one[x] == 0.0f, "%s %s: key %llu written outside its frame's range",
			 what, c->spec, (unsigned long long)x);
	uint64_t nsel = 0;
	for (uint64_t x = 0; x < dim; x++)
		nsel += sel[x];
	GW_CHECK(covered == nsel, "%s %s: frames cover %llu of %llu selected keys", what,
		 c->spec, (unsigned long long)covered, (unsigned long long)nsel);
	/* Any order: reverse decoding gives the same sum, bit for bit (ranges
	 * are disjoint, so no addition is reordered). */
	for (size_t f = fr.n; f-- > 0;)
		GW_OK_CALL(gw_decode(fr.f[f].data, fr.f[f].len, all, dim));
	GW_CHECK(!memcmp(all, sum, dim * sizeof(float)), "%s %s: order changed the result",
		 what, c->spec);
	if (c->exact_index && c->exact_values)
		for (uint64_t x = 0; x < dim; x++)
			GW_CHECK(sel[x] ? all[x] == ref[x] : (all[x] == 0.0f || all[x] == ref[x]),
				 "%s %s: key %llu decoded %.9g, want %.9g", what, c->spec,
				 (unsigned long long)x, all[x], ref[x]);
	free(one);
	free(sum);
	free(all);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

static void test_spam_sparse(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_sparse s;
	gw_test_load_sparse(1, &s);
	/* A quarter of the key space keeps the test quick; still ~30k keys. */
	uint64_t dim = s.dim / 4;
	size_t nnz = 0;
	while (nnz < s.nnz && s.keys[nnz] < dim)
		nnz++;
	float *ref = calloc(dim, sizeof(float));
	uint8_t *sel = calloc(dim, 1);
	for (size_t i = 0; i < nnz; i++) {
		ref[s.keys[i]] = s.vals[i];
		sel[s.keys[i]] = 1;
	}
	gw_tensor t = gw_test_sparse_tensor(7, dim, s.keys, 32, s.vals, nnz);
	struct combo c[30];
	int n;
	combos(c, &n);
	for (int i = 0; i < n; i++)
		check(&c[i], &t, ref, sel, dim, s.name);
	free(ref);
	free(sel);
	gw_test_sparse_free(&s);
}

static void test_cnn_top1(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	size_t dim;
	float *g = gw_test_load_cnn_iter(2, &dim);
	/* The selection: top 1% by magnitude, as the codec makes it. */
	uint64_t r = (uint64_t)ceil(0.01 * (double)dim);
	uint64_t *top = malloc(r * sizeof(uint64_t));
	GW_CHECK(gw_top_abs(g, dim, r, top) == (int64_t)r, "top");
	uint8_t *sel = calloc(dim, 1);
	for (uint64_t i = 0; i < r; i++)
		sel[top[i]] = 1;
	gw_tensor t = gw_test_dense_tensor(3, g, dim);
	struct combo c[30];
	int n;
	combos(c, &n);
	for (int i = 0; i < n; i++)
		check(&c[i], &t, g, sel, dim, "cnn it100 top 1%");
	free(top);
	free(sel);
	free(g);
}

/* Small budgets still make progress, large ones hold more per frame. */
static void test_budgets(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	size_t dim;
	float *g = gw_test_load_cnn_iter(3, &dim);
	static const char *specs[] = {"index=bloom,policy=p0,value=deflate",
				      "index=rle,value=poly", "index=delta,value=qsgd",
				      "index=bloom,policy=p2,value=dexp"};
	for (int i = 0; i < 4; i++) {
		size_t counts[2];
		size_t budgets[2] = {160, GW_FRAME_MAX};
		for (int b = 0; b < 2; b++) {
			gw_encoder *enc = make(specs[i], "fraction=0.2");
			gw_tensor t = gw_test_dense_tensor(1, g, dim);
			gw_test_frames fr = {0};
			GW_EXPECT_RC(gw_test_encode_all(enc, &t, budgets[b], &fr), 0, "%s budget %zu",
				     specs[i], budgets[b]);
			counts[b] = fr.n;
			gw_test_frames_free(&fr);
			gw_encoder_free(enc);
		}
		GW_CHECK(counts[0] > counts[1], "%s: %zu frames at 160 B, %zu at 64 KiB", specs[i],
			 counts[0], counts[1]);
	}
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spam_sparse),
		cmocka_unit_test(test_cnn_top1),
		cmocka_unit_test(test_budgets),
	};
	return cmocka_run_group_tests_name("deepreduce_roundtrip", tests, NULL, NULL);
}
