/* SketchML's MinMax property on every element of the real sparse traces:
 * a decoded value never changes sign and never exceeds in magnitude the
 * mean of the original value's bucket. The bucket means come from the same
 * frames encoded without a sketch (groups = quantiles: every cell holds
 * the exact index), cut at the same entries (max_frame_elems), so the two
 * decodes share every frame's table. */
#include "gw_test.h"

#include <math.h>

#define FRAME_ENTRIES 2000

static float *decode_with(const gw_test_sparse *sp, double groups, size_t *frames)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_SKETCHML);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, FRAME_ENTRIES));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_GROUPS, groups));
	gw_tensor t = gw_test_sparse_tensor(1, sp->dim, sp->keys, 32, sp->vals, sp->nnz);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, GW_FRAME_MAX, &fr));
	float *out = calloc(sp->dim, sizeof(float));
	GW_CHECK(out, "out of memory");
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info fi;
		GW_OK_CALL(gw_frame_peek(fr.f[j].data, fr.f[j].len, &fi));
		GW_CHECK(fi.count == FRAME_ENTRIES || j + 1 == fr.n,
			 "frame %zu holds %u entries: tables would differ", j, fi.count);
		GW_CHECK(gw_decode(fr.f[j].data, fr.f[j].len, out, sp->dim) == (int)fi.count,
			 "decode of frame %zu", j);
	}
	*frames = fr.n;
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return out;
}

/* One sparse trace: MinMax keeps every sign and stays below its bucket mean. */
static void minmax_on_trace(const gw_test_sparse *sp, void *arg)
{
	(void)arg;
	size_t fa, fb;
	float *sk = decode_with(sp, 8, &fa);      /* the default: 8 groups */
	float *ex = decode_with(sp, 256, &fb);    /* one bucket per group */
	GW_CHECK(fa == fb, "%s: %zu and %zu frames", sp->name, fa, fb);
	size_t lower = 0;
	for (size_t i = 0; i < sp->nnz; i++) {
		float v = sp->vals[i], d = sk[sp->keys[i]], m = ex[sp->keys[i]];
		GW_CHECK(!(v > 0 && d < 0) && !(v < 0 && d > 0),
			 "%s: key %u: %g decoded as %g (sign changed)", sp->name,
			 sp->keys[i], v, d);
		GW_CHECK(!(v > 0 && m < 0) && !(v < 0 && m > 0),
			 "%s: key %u: bucket mean %g has the other sign of %g",
			 sp->name, sp->keys[i], m, v);
		GW_CHECK(fabsf(d) <= fabsf(m), "%s: key %u: |%g| above its bucket "
			 "mean |%g| (value %g)", sp->name, sp->keys[i], d, m, v);
		lower += fabsf(d) < fabsf(m);
	}
	print_message("  %s: %zu entries in %zu frames, %zu decoded below their "
		      "bucket mean (MinMax collisions)\n", sp->name, sp->nnz, fa, lower);
	free(sk);
	free(ex);
}

static void test_minmax_on_traces(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_each_trace(NULL, minmax_on_trace, NULL);
}

GW_TEST_MAIN("sketchml_minmax", 0,
	     cmocka_unit_test(test_minmax_on_traces))
