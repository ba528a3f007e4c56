/* Every codec follows its NaN/Inf policy (docs/wire-format.md 2.5, tests/gw_test_codecs.c), on every ISA of a codec with SIMD paths, dense and sparse, with and without feedback: a NaN, -NaN, signalling NaN or +-Inf in the values encoded (in g, in the error buffer, or g + e overflowing) is carried as itself, whatever made it non-finite (raw bit-exact but quieted, bf16 a NaN of its sign, top-k and deepreduce's f32/deflate ranked above every finite value, ties by index), poisons its frame (all NaN, the other frames as if it were absent) or the whole tensor (3lc), or is refused at begin (deepreduce's lossy values); no error buffer keeps a non-finite residual (poisoned entries restart at +0, the rest hold fl(c - decoded)), and the next finite round decodes finite (3lc: as if the buffer had been reset); special values (payload NaNs, infinities, signed zeros, FLT_MAX, subnormals) and a tensor of finite frames around poisoned ones; a NaN at a key a lossy Bloom index loses restarts at +0 (regression: deepreduce kept it for sparse tensors); gw_ef_restore() of a poisoned frame keeps the buffer finite. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

/* One encoding: n values x (at keys, or dense), over dim, optionally with
 * an error buffer starting at e0 (dim values). */
struct nf {
	int id;
	const gw_test_codec *cd;
	const char *variant;
	const float *x;
	const uint32_t *keys;
	uint64_t n, dim;
	const float *e0;      /* NULL: no feedback */
	uint32_t frame_elems; /* max_frame_elems, 0: the budget decides */
	size_t budget;
	double fraction;      /* 0: the codec's default */
	int brief;            /* a variant of a GW_TEST_BRIEF codec: fewer cases */
	size_t want_frames;   /* 0, or how many frames the encoding must be */
	char what[200];
};

static const uint32_t bad_bits[] = {
	0x7fc00000u,  /* NaN */
	0xffc00001u,  /* -NaN with payload */
	0x7f800001u,  /* signalling NaN */
	0x7f800000u,  /* +Inf */
	0xff800000u,  /* -Inf */
};

static int is_snan(uint32_t u)
{
	return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) &&
	       !(u & 0x00400000u);
}

/* y is what a carried value x decodes to. */
static void check_carried(const struct nf *k, uint64_t key, float x, float y)
{
	uint32_t u = gw_test_bits(x), w = gw_test_bits(y);
	if (k->cd->promise == GW_TEST_BF16) {
		if (isnan(x))
			GW_CHECK(isnan(y) && (w >> 31) == (u >> 31), "%s: NaN %08x at %llu "
				 "decoded as %08x, want a NaN of the same sign", k->what, u,
				 (unsigned long long)key, w);
		else
			GW_CHECK(w == (uint32_t)gw_test_bf16_rne(x) << 16, "%s: %08x at %llu "
				 "decoded as %08x", k->what, u, (unsigned long long)key, w);
	} else if (is_snan(u)) {
		/* Decode-accumulate is a float add, which quiets a signalling
		 * NaN (sets bit 22); sign and payload survive. */
		GW_CHECK((w | 0x00400000u) == (u | 0x00400000u), "%s: signalling NaN "
			 "%08x at %llu decoded as %08x", k->what, u,
			 (unsigned long long)key, w);
	} else {
		GW_CHECK(u == w, "%s: %08x at %llu decoded as %08x (must be bit-exact)",
			 k->what, u, (unsigned long long)key, w);
	}
}

/* How many entries a selecting codec sends (0: it sends all). */
static uint64_t selected(const struct nf *k, gw_encoder *enc)
{
	if (k->cd->promise == GW_TEST_TOP_K || (k->cd->promise == GW_TEST_STATED &&
						!k->keys)) {
		double v, topr;
		GW_OK_CALL(gw_param_value(GW_PARAM_SPARSIFIER, "topr", &topr));
		if (k->cd->promise == GW_TEST_STATED &&
		    (gw_encoder_get_param(enc, GW_PARAM_SPARSIFIER, &v) != 0 || v != topr))
			return 0;
		GW_OK_CALL(gw_encoder_get_param(enc, GW_PARAM_FRACTION, &v));
		double r = ceil(v * (double)k->n);
		return r < 1 ? 1 : r >= (double)k->n ? k->n : (uint64_t)r;
	}
	return 0;
}

/* A carrying codec: each non-finite value travels as itself, a selecting
 * one ranks them above every finite value (ties to the lowest index), and
 * fills the rest of its k with the largest finite ones, exactly. */
static void check_carrying(const struct nf *k, gw_encoder *enc, const float *c,
			   const uint8_t *bad, const float *out)
{
	uint64_t sel = selected(k, enc), nbad = 0, sent_bad = 0, sent_fin = 0;
	uint64_t neg_zeros = 0;   /* a -0 sent into -0 is invisible */
	int may_drop = gw_test_may_drop(enc);
	float min_sent = INFINITY, max_unsent = 0;
	for (uint64_t i = 0; i < k->n; i++) {
		uint64_t key = k->keys ? k->keys[i] : i;
		float y = out[key];
		int written = gw_test_bits(y) != 0x80000000u;
		if (bad[i]) {
			int want_sent = !sel || nbad < sel;
			nbad++;
			if (want_sent && may_drop && !written) {
				/* a lossy index lost it */
			} else if (want_sent) {
				check_carried(k, key, c[i], y);
				sent_bad++;
			} else {
				GW_CHECK(!written || (k->cd->flags & GW_TEST_SUPERSET),
					 "%s: non-finite %a at %llu sent beyond the "
					 "first k = %llu by index", k->what, (double)c[i],
					 (unsigned long long)key, (unsigned long long)sel);
			}
			continue;
		}
		if (!sel) {
			if (!(may_drop && !written))
				check_carried(k, key, c[i], y);
			continue;
		}
		if (written) {
			GW_CHECK(gw_test_bits(y) == gw_test_bits(c[i]), "%s: key %llu "
				 "decoded %a, sent %a", k->what, (unsigned long long)key,
				 (double)y, (double)c[i]);
			min_sent = fminf(min_sent, fabsf(c[i]));
			sent_fin++;
		} else if (c[i] != 0.0f) {
			max_unsent = fmaxf(max_unsent, fabsf(c[i]));
		} else {
			neg_zeros += gw_test_bits(c[i]) == 0x80000000u;
		}
	}
	/* A superset codec's false positives carry more (exactly, as checked
	 * above). */
	if (sel && !(k->cd->flags & GW_TEST_SUPERSET))
		GW_CHECK(sent_fin + sent_bad <= sel &&
				 sent_fin + sent_bad + neg_zeros >= sel &&
				 min_sent >= max_unsent && (sent_bad == nbad || sent_fin == 0),
			 "%s: k %llu: %llu non-finite and %llu finite sent; smallest "
			 "finite sent %a, largest unsent %a", k->what,
			 (unsigned long long)sel, (unsigned long long)sent_bad,
			 (unsigned long long)sent_fin, (double)min_sent,
			 (double)max_unsent);
}

/* The entries each frame covers: poisoned[i] gets 1 for every entry of a
 * frame holding a bad one. Returns how many frames are poisoned. */
static size_t mark_frames(const gw_test_input *in, const gw_frame_info *info,
			  size_t nf, const uint8_t *bad, uint8_t *poisoned,
			  uint8_t *frame_bad)
{
	size_t np = 0;
	for (size_t j = 0; j < nf; j++) {
		uint64_t a = gw_test_lower_bound(in, info[j].start);
		uint64_t z = gw_test_lower_bound(in, info[j].start + info[j].span);
		frame_bad[j] = 0;
		for (uint64_t i = a; i < z; i++)
			frame_bad[j] |= bad[i];
		for (uint64_t i = a; i < z; i++)
			poisoned[i] = frame_bad[j];
		np += frame_bad[j];
	}
	return np;
}

/* After a poisoned tensor the buffer restarts at 0: the round after, f2,
 * is what a fresh encoder without feedback sends. */
static void expect_fresh(const struct nf *k, const gw_tensor *t, size_t budget,
			 const gw_test_frames *f2)
{
	gw_encoder *ref = gw_test_encoder_with(k->id, k->variant);
	if (k->frame_elems)
		GW_OK_CALL(gw_encoder_set_param(ref, GW_PARAM_MAX_FRAME_ELEMS,
						k->frame_elems));
	gw_test_frames f3;
	GW_OK_CALL(gw_test_encode_all(ref, t, budget, &f3));
	GW_CHECK(f2->n == f3.n, "%s: %zu vs %zu frames after the poison", k->what,
		 f2->n, f3.n);
	for (size_t j = 0; j < f2->n; j++)
		GW_CHECK(f2->f[j].len == f3.f[j].len &&
				 !memcmp(f2->f[j].data, f3.f[j].data, f2->f[j].len),
			 "%s: frame %zu after the poison differs from a fresh encode",
			 k->what, j);
	gw_test_frames_free(&f3);
	gw_encoder_free(ref);
}

/* Encodes k, checks the policy; then a finite round (x with every
 * non-finite value replaced by 0.25) decodes finite. */
static void run(struct nf *k)
{
	gw_encoder *enc = k->fraction > 0
				  ? gw_test_encoder_fraction(k->id, k->variant, k->fraction)
				  : gw_test_encoder_with(k->id, k->variant);
	if (k->frame_elems)
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS,
						k->frame_elems));
	gw_ef *ef = gw_test_ef_set(enc, k->e0, k->dim);
	uint64_t n = k->n, dim = k->dim;
	float *c = malloc(n * sizeof(float)), *out = malloc(dim * sizeof(float));
	uint8_t *bad = calloc(n, 1), *poisoned = calloc(n, 1);
	GW_CHECK(c && out && bad && poisoned, "out of memory");
	uint64_t nbad = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t key = k->keys ? k->keys[i] : i;
		c[i] = k->e0 ? k->x[i] + k->e0[key] : k->x[i];
		bad[i] = !isfinite(c[i]);
		nbad += bad[i];
	}
	gw_test_input in = {.name = k->what, .keys = k->keys, .vals = c, .n = n,
			    .dim = dim, .between = k->e0};
	in.t = k->keys ? gw_test_sparse_tensor(4, dim, k->keys, 32, k->x, n)
		       : gw_test_dense_tensor(4, k->x, n);
	gw_test_poison policy = gw_test_poison_of(enc);
	if (policy == GW_TEST_REFUSED && nbad) {
		GW_EXPECT_RC(gw_encode_begin(enc, &in.t), GW_EINVAL,
			     "%s: non-finite input must be refused", k->what);
		for (uint64_t i = 0; ef && i < dim; i++)
			GW_CHECK(gw_test_bits(gw_ef_data(ef)[i]) == gw_test_bits(k->e0[i]),
				 "%s: refused, but the buffer changed at %llu", k->what,
				 (unsigned long long)i);
		goto out;
	}
	int min = gw_encode_min_budget(enc, &in.t);
	size_t budget = k->budget > (size_t)min ? k->budget : (size_t)min;
	gw_test_frames fr;
	GW_EXPECT_RC(gw_test_encode_all(enc, &in.t, budget, &fr), 0, "%s: encode",
		     k->what);
	gw_frame_info *info = calloc(fr.n ? fr.n : 1, sizeof(*info));
	uint8_t *frame_bad = calloc(fr.n ? fr.n : 1, 1);
	GW_CHECK(info && frame_bad, "out of memory");
	for (size_t j = 0; j < fr.n; j++)
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &info[j]));
	GW_CHECK(!k->want_frames || fr.n == k->want_frames, "%s: %zu frames, want %zu",
		 k->what, fr.n, k->want_frames);
	gw_test_fill(out, dim, -0.0f);
	gw_test_decode_all(&fr, out, dim);

	int carried = policy == GW_TEST_CARRIED;
	if (carried) {
		check_carrying(k, enc, c, bad, out);
		memcpy(poisoned, bad, n);
	} else if (policy == GW_TEST_TENSOR) {
		memset(poisoned, nbad > 0, n);
		memset(frame_bad, nbad > 0, fr.n ? fr.n : 1);
	} else {
		mark_frames(&in, info, fr.n, bad, poisoned, frame_bad);
	}
	if (!carried) {
		/* (A zero a subset codec drops is no key of the frame.) */
		int subset = (k->cd->flags & GW_TEST_SUBSET) != 0;
		for (uint64_t i = 0; i < n; i++) {
			float y = out[k->keys ? k->keys[i] : i];
			GW_CHECK(!poisoned[i] || isnan(y) ||
					 (subset && c[i] == 0.0f &&
					  gw_test_bits(y) == 0x80000000u),
				 "%s: element %llu of a poisoned %s decoded to %a, not NaN",
				 k->what, (unsigned long long)(k->keys ? k->keys[i] : i),
				 policy == GW_TEST_TENSOR ? "tensor" : "frame", (double)y);
		}
		/* The other frames decode as if the bad values were absent. */
		gw_test_frames clean = {malloc((fr.n + 1) * sizeof(gw_test_frame)), 0};
		gw_frame_info *ci = malloc((fr.n + 1) * sizeof(*ci));
		GW_CHECK(clean.f && ci, "out of memory");
		for (size_t j = 0; j < fr.n; j++)
			if (!frame_bad[j]) {
				ci[clean.n] = info[j];
				clean.f[clean.n++] = fr.f[j];
			}
		gw_test_check_promise(enc, &in, c, &clean, ci, out, k->what);
		free(clean.f);
		free(ci);
	}

	if (ef) {
		const float *e = gw_ef_data(ef);
		uint64_t ki = 0;
		for (uint64_t key = 0; key < dim; key++) {
			int has = !k->keys || (ki < n && k->keys[ki] == key);
			uint64_t i = k->keys ? ki : key;
			ki += k->keys && has;
			GW_CHECK(isfinite(e[key]), "%s: error buffer entry %llu is %a, must "
				 "stay finite", k->what, (unsigned long long)key, (double)e[key]);
			if (has && poisoned[i]) {
				GW_CHECK(gw_test_bits(e[key]) == 0, "%s: error buffer at %llu "
					 "of a poisoned %s is %a, want +0", k->what,
					 (unsigned long long)key,
					 carried ? "value" : "frame",
					 (double)e[key]);
				continue;
			}
			float cv = has ? c[i] : k->e0[key];
			float want = cv - out[key];
			if (!isfinite(want))   /* e.g. bf16 rounding FLT_MAX to Inf */
				want = 0.0f;
			GW_CHECK(gw_test_bits(e[key]) == gw_test_bits(want),
				 "%s: error buffer at %llu (clean) is %a, want fl(c - "
				 "decoded) = %a", k->what, (unsigned long long)key,
				 (double)e[key], (double)want);
		}
	}
	free(frame_bad);
	free(info);
	gw_test_frames_free(&fr);

	/* The next round, finite and moderate (bf16 would round FLT_MAX to
	 * Inf): decodes finite, the buffer stays finite; a poisoned tensor
	 * restarts as if the buffer had been reset. */
	float *x2 = malloc(n * sizeof(float));
	GW_CHECK(x2, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		x2[i] = isfinite(k->x[i]) && fabsf(k->x[i]) < 2.0f ? k->x[i] : 0.25f;
	gw_tensor t2 = k->keys ? gw_test_sparse_tensor(4, dim, k->keys, 32, x2, n)
			       : gw_test_dense_tensor(4, x2, n);
	/* (A poisoned tensor's round after at a packet's budget.) */
	size_t b2 = policy == GW_TEST_TENSOR ? 1500 - GW_PKT_RESERVE : budget;
	gw_test_frames f2;
	GW_EXPECT_RC(gw_test_encode_all(enc, &t2, b2, &f2), 0, "%s: the round "
		     "after", k->what);
	gw_test_fill(out, dim, 0.0f);
	gw_test_decode_all(&f2, out, dim);
	for (uint64_t i = 0; i < dim; i++) {
		GW_CHECK(isfinite(out[i]), "%s: the round after decodes %a at %llu",
			 k->what, (double)out[i], (unsigned long long)i);
		GW_CHECK(!ef || isfinite(gw_ef_data(ef)[i]), "%s: the round after leaves "
			 "%a in the buffer at %llu", k->what, (double)gw_ef_data(ef)[i],
			 (unsigned long long)i);
	}
	if (ef && policy == GW_TEST_TENSOR && nbad)
		expect_fresh(k, &t2, b2, &f2);
	gw_test_frames_free(&f2);
	free(x2);
out:
	free(c);
	free(out);
	free(bad);
	free(poisoned);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

/* ---- the cases --------------------------------------------------------------- */

struct each {
	void (*fn)(struct nf *k, void *arg);
	void *arg;
};

static void variant(const gw_test_variant *v, void *arg)
{
	const struct each *e = arg;
	struct nf k = {.id = v->id, .cd = v->codec, .variant = v->params,
		       .budget = GW_FRAME_MAX, .brief = v->brief};
	snprintf(k.what, sizeof(k.what), "%s", v->name);
	e->fn(&k, e->arg);
}

/* Calls fn(k, arg) for every codec (but the sketch tables), its defaults
 * and variants, on every ISA it has. */
static void each_codec(void (*fn)(struct nf *k, void *arg), void *arg)
{
	struct each e = {fn, arg};
	gw_test_each_variant(1, variant, &e);
}

/* Appends fmt to k->what for one run, restoring it after. */
__attribute__((format(printf, 2, 3)))
static void run_as(struct nf *k, const char *fmt, ...)
{
	char keep[sizeof(k->what)];
	memcpy(keep, k->what, sizeof(keep));
	size_t l = strlen(k->what);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(k->what + l, sizeof(k->what) - l, fmt, ap);
	va_end(ap);
	run(k);
	memcpy(k->what, keep, sizeof(keep));
}

/* run_as() k's k->n values dense (dim k->n), then at keys (dim sparse_dim)
 * sparse, each kind codec k->id accepts: ": what, dense|sparse tail". */
static void run_kinds(struct nf *k, const uint32_t *keys, uint64_t sparse_dim,
		      const char *what, const char *tail)
{
	for (int sparse = 0; sparse < 2; sparse++) {
		if (!gw_test_codec_accepts(k->id, sparse))
			continue;
		k->keys = sparse ? keys : NULL;
		k->dim = sparse ? sparse_dim : k->n;
		run_as(k, ": %s, %s%s", what, sparse ? "sparse" : "dense", tail);
	}
}

/* Shapes: n values in frames of fe, the bad value at each of pos[]. */
struct shape {
	uint32_t n, fe;
	uint32_t pos[8];
	float e0;
};

static const struct shape shapes[] = {
	{5003, 100, {0, 1, 99, 100, 319, 320, 2501, 5002}, 0.5f},
	{48, 16, {0, 15, 20, 33, 47}, 0.125f},
	{40, 10, {0, 9, 17, 25, 39}, 0.125f},
};

/* Uniform in [-1, 1], with +-1 every 50: every frame holds the largest
 * magnitude, so a poisoned frame takes no scale away from the others. */
static void fill_shape(float *x, uint32_t n, uint64_t seed)
{
	gw_test_rng r = {seed};
	for (uint32_t i = 0; i < n; i++)
		x[i] = i % 50 == 7 ? (i % 100 == 7 ? 1.0f : -1.0f)
				   : gw_test_uniform(&r, -1.0f, 1.0f);
	if (n < 50)
		for (uint32_t i = 0; i < n; i++)
			x[i] = (float)((int)(i % 7) - 3) * 0.125f;   /* max 0.375 every 7 */
}

/* where: 0 in g, 1 in the error buffer. A brief variant: the first shape
 * at two places, NaN and +Inf. */
static void sweep(struct nf *k, void *arg)
{
	int where = *(const int *)arg;
	for (size_t s = 0; s < (k->brief ? 1 : GW_ARRAY_SIZE(shapes)); s++) {
		const struct shape *sh = &shapes[s];
		uint32_t n = sh->n;
		float *x = malloc(n * sizeof(float)), *e0 = malloc(3 * n * sizeof(float));
		uint32_t *keys = malloc(n * sizeof(uint32_t));
		GW_CHECK(x && e0 && keys, "out of memory");
		for (uint32_t i = 0; i < n; i++)
			keys[i] = 3 * i + 1;
		for (int sparse = 0; sparse < 2; sparse++) {
			if (!gw_test_codec_accepts(k->id, sparse))
				continue;
			k->keys = sparse ? keys : NULL;
			k->n = n;
			k->dim = sparse ? 3 * (uint64_t)n : n;
			k->frame_elems = sh->fe;
			for (size_t b = 0; b < GW_ARRAY_SIZE(bad_bits); b += k->brief ? 3 : 1) {
				for (int p = 0; p < 8 && (p == 0 || sh->pos[p]);
				     p += k->brief ? 6 : 1) {
					uint32_t at = sh->pos[p];
					fill_shape(x, n, 3 + b);
					gw_test_fill(e0, k->dim, sh->e0);
					if (where == 0)
						x[at] = gw_test_float(bad_bits[b]);
					else
						e0[sparse ? keys[at] : at] = gw_test_float(bad_bits[b]);
					k->x = x;
					for (int fb = where; fb < 2; fb++) {
						k->e0 = fb ? e0 : NULL;
						run_as(k, ": %s n %u, %08x in %s at %u%s",
						       sparse ? "sparse" : "dense", n, bad_bits[b],
						       where ? "the buffer" : "g", at,
						       fb ? ", with feedback" : "");
					}
				}
			}
		}
		free(x);
		free(e0);
		free(keys);
	}
}

static void test_nonfinite_in_g(void **state)
{
	(void)state;
	int where = 0;
	each_codec(sweep, &where);
}

static void test_nonfinite_in_buffer(void **state)
{
	(void)state;
	int where = 1;
	each_codec(sweep, &where);
}

/* Finite values whose sum with the buffer overflows to Inf: four values
 * (one frame), and FLT_MAX + FLT_MAX at 777 of 5003. */
static void overflow(struct nf *k, void *arg)
{
	(void)arg;
	float v[4] = {0x1p127f, 1, -1, 2}, e[4] = {0x1p127f, 0, 0, 0};
	k->x = v;
	k->keys = NULL;
	k->n = k->dim = 4;
	k->e0 = e;
	k->frame_elems = 0;
	k->fraction = 0.25;
	k->budget = 64;
	run_as(k, ": 2^127 + 2^127 of four");
	enum { N = 5003 };
	float *x = malloc(N * sizeof(float)), *e0 = calloc(N, sizeof(float));
	GW_CHECK(x && e0, "out of memory");
	fill_shape(x, N, 9);
	x[777] = FLT_MAX;
	e0[777] = FLT_MAX;
	k->x = x;
	k->n = k->dim = N;
	k->e0 = e0;
	k->fraction = 0;
	k->budget = 1500 - GW_PKT_RESERVE;
	run_as(k, ": FLT_MAX + FLT_MAX at 777 of %d", N);
	k->budget = GW_FRAME_MAX;
	free(x);
	free(e0);
}

static void test_overflowing_correction(void **state)
{
	(void)state;
	each_codec(overflow, NULL);
}

/* More non-finite values than a selection holds: all seven; every tenth
 * but three NaN and +Inf among ones (top-k sends the first four by
 * index); three among 1..100 (top-k at 5% sends them and 99, 100). */
static void many(struct nf *k, void *arg)
{
	(void)arg;
	float all[7] = {NAN, INFINITY, -INFINITY, NAN, NAN, INFINITY, NAN};
	float tenth[100], mixed[100], e0[100];
	for (int i = 0; i < 100; i++) {
		tenth[i] = i % 10 == 3 ? NAN : (i % 10 == 7 ? INFINITY : 1.0f);
		mixed[i] = (float)(i + 1);
	}
	mixed[10] = NAN;
	mixed[20] = -INFINITY;
	mixed[30] = INFINITY;
	gw_test_fill(e0, 100, 0.0f);
	struct {
		const float *x;
		uint64_t n;
		double fraction;
		size_t budget;
		const char *what;
	} cases[] = {
		{all, 7, 0, 64, "seven non-finite"},
		{tenth, 100, 0.04, GW_FRAME_MAX, "every tenth but three NaN, +Inf"},
		{mixed, 100, 0.05, GW_FRAME_MAX, "NaN, -Inf, +Inf among 1..100"},
	};
	k->keys = NULL;
	k->frame_elems = 0;
	for (size_t i = 0; i < GW_ARRAY_SIZE(cases); i++) {
		k->x = cases[i].x;
		k->n = k->dim = cases[i].n;
		k->fraction = cases[i].fraction;
		k->budget = cases[i].budget;
		for (int fb = 0; fb < 2; fb++) {
			k->e0 = fb ? e0 : NULL;
			run_as(k, ": %s%s", cases[i].what, fb ? ", with feedback" : "");
		}
	}
	k->fraction = 0;
	k->budget = GW_FRAME_MAX;
}

/* +Inf at 5 and NaN at 9 of 64 small values, dense and at keys 3 i, with
 * feedback, in frames of 256 bytes. */
static void pair(struct nf *k, void *arg)
{
	(void)arg;
	enum { N = 64 };
	float g[N], e0[3 * N];
	uint32_t keys[N];
	for (int i = 0; i < N; i++) {
		g[i] = 0.01f * (float)(i - N / 2);
		keys[i] = 3u * (uint32_t)i;
	}
	g[5] = INFINITY;
	g[9] = NAN;
	gw_test_fill(e0, 3 * N, 0.0f);
	k->x = g;
	k->n = N;
	k->e0 = e0;
	k->frame_elems = 0;
	k->budget = 256;
	run_kinds(k, keys, 3 * N, "+Inf and NaN among 64", ", with feedback");
	k->budget = GW_FRAME_MAX;
}

static void test_many_nonfinite(void **state)
{
	(void)state;
	each_codec(many, NULL);
	each_codec(pair, NULL);
}

/* NaN payloads, infinities, signed zeros, the extremes, subnormals, dense
 * and at keys 10 i + 3. */
static const uint32_t special_bits[] = {
	0x7fc12345u,  /* quiet NaN with payload */
	0xffc00001u,  /* negative quiet NaN */
	0x7fffffffu,  /* all-ones quiet NaN */
	0x7f800000u,  /* +Inf */
	0xff800000u,  /* -Inf */
	0x80000000u,  /* -0.0 */
	0x00000000u,  /* +0.0 */
	0x7f7fffffu,  /* FLT_MAX */
	0xff7fffffu,  /* -FLT_MAX */
	0x00800000u,  /* FLT_MIN */
	0x00000001u,  /* smallest subnormal */
	0x807fffffu,  /* largest negative subnormal */
	0x3f800000u,  /* 1.0 */
	0x7f800001u,  /* signalling NaN */
	0xff812345u,  /* negative signalling NaN */
};
#define N_SPECIAL GW_ARRAY_SIZE(special_bits)

static void specials(struct nf *k, void *arg)
{
	(void)arg;
	float v[N_SPECIAL];
	uint32_t keys[N_SPECIAL];
	for (size_t i = 0; i < N_SPECIAL; i++) {
		v[i] = gw_test_float(special_bits[i]);
		keys[i] = (uint32_t)(10 * i + 3);
	}
	k->x = v;
	k->n = N_SPECIAL;
	k->e0 = NULL;
	k->frame_elems = 0;
	k->budget = 9000;
	run_kinds(k, keys, 10 * N_SPECIAL + 3, "special values", "");
}

static void test_special_values(void **state)
{
	(void)state;
	each_codec(specials, NULL);
}

/* 1000 values in frames of 100: NaN in frame 2, +Inf in frame 5, -Inf in
 * frame 9, FLT_MAX and -FLT_MAX (finite) in frame 7; dense and at keys
 * 2 i, with and without feedback. */
static void poisoned_frames(struct nf *k, void *arg)
{
	(void)arg;
	enum { NI = 1000, FI = 100 };
	float *v = malloc(NI * sizeof(float)), *e0 = calloc(2 * NI, sizeof(float));
	uint32_t *keys = malloc(NI * sizeof(uint32_t));
	GW_CHECK(v && e0 && keys, "out of memory");
	gw_test_rng r = {42};
	for (int i = 0; i < NI; i++) {
		v[i] = gw_test_uniform(&r, -1.0f, 1.0f);
		keys[i] = 2 * (uint32_t)i;
	}
	v[250] = NAN;
	v[520] = INFINITY;
	v[999] = -INFINITY;
	v[700] = FLT_MAX;
	v[705] = -FLT_MAX;
	k->x = v;
	k->n = NI;
	k->frame_elems = FI;
	k->budget = 9000;
	/* Frames of 100 fit 9000 bytes where the frame keeps every value. */
	k->want_frames = (k->cd->flags & GW_TEST_KEEPS_KIND) ? NI / FI : 0;
	for (int fb = 0; fb < 2; fb++) {
		k->e0 = fb ? e0 : NULL;
		run_kinds(k, keys, 2 * NI, "frames of 100 around NaN/Inf",
			  fb ? ", with feedback" : "");
	}
	k->budget = GW_FRAME_MAX;
	k->want_frames = 0;
	free(v);
	free(e0);
	free(keys);
}

static void test_poisoned_frames_among_finite(void **state)
{
	(void)state;
	each_codec(poisoned_frames, NULL);
}

/* The first of the n keys cand[] that encoding k leaves untouched (a
 * lossy index lost it), or -1. */
static int64_t first_lost(const struct nf *k, const uint32_t *cand, size_t n)
{
	gw_encoder *enc = gw_test_encoder_fraction(k->id, k->variant, k->fraction);
	GW_CHECK(k->e0, "first_lost: no error buffer");
	gw_ef *ef = gw_test_ef_set(enc, k->e0, k->dim);
	gw_tensor t = k->keys ? gw_test_sparse_tensor(4, k->dim, k->keys, 32, k->x, k->n)
			      : gw_test_dense_tensor(4, k->x, k->n);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, k->budget, &fr));
	float *out = malloc(k->dim * sizeof(float));
	GW_CHECK(out, "out of memory");
	gw_test_fill(out, k->dim, -0.0f);
	gw_test_decode_all(&fr, out, k->dim);
	int64_t lost = -1;
	for (size_t i = 0; i < n && lost < 0; i++)
		if (gw_test_bits(out[cand[i]]) == 0x80000000u)
			lost = cand[i];
	free(out);
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
	return lost;
}

/* Puts a NaN in g (where 0) or in the buffer (1) at a key the index of
 * variant loses, dense (top 10% of x: every tenth) or at keys[], and
 * checks the policy with run(). */
static void nan_at_lost_key(const char *variant, float *x, const uint32_t *keys,
			    uint32_t n, int where)
{
	float *e0 = calloc(3 * (size_t)n, sizeof(float));
	uint32_t *cand = malloc(n * sizeof(uint32_t));
	GW_CHECK(e0 && cand, "out of memory");
	struct nf k = {.id = GW_CODEC_DEEPREDUCE,
		       .cd = gw_test_codec_of(GW_CODEC_DEEPREDUCE), .variant = variant,
		       .x = x, .keys = keys, .n = n, .dim = keys ? 3 * (uint64_t)n : n,
		       .e0 = e0, .budget = GW_FRAME_MAX, .fraction = 0.1};
	size_t nc = 0;
	for (uint32_t i = 0; i < n; i += keys ? 1 : 10)
		cand[nc++] = keys ? keys[i] : i;
	int64_t at = first_lost(&k, cand, nc);
	GW_CHECK(at >= 0, "%s: the index loses no selected key: the test needs one",
		 variant);
	uint32_t i = keys ? (uint32_t)(at - 1) / 3 : (uint32_t)at;
	float keep = x[i];
	if (where)
		e0[at] = NAN;
	else
		x[i] = NAN;
	snprintf(k.what, sizeof(k.what), "deepreduce [%s]: NaN in %s at lost key %lld, %s",
		 variant, where ? "the buffer" : "g", (long long)at,
		 keys ? "sparse" : "dense");
	uint32_t key = (uint32_t)at;
	GW_CHECK(first_lost(&k, &key, 1) == at, "%s: no longer lost", k.what);
	run(&k);
	x[i] = keep;
	free(e0);
	free(cand);
}

/* Regression: deepreduce kept in the error buffer the non-finite value of
 * a sparse tensor's key that a lossy Bloom index (P1, P2) lost, and every
 * later round sent it again. The slot restarts at +0, dense or sparse. */
static void test_nonfinite_lost_by_lossy_index(void **state)
{
	(void)state;
	enum { N = 1000 };
	static const char *const variants[] = {
		"index=bloom,policy=p1,fpr=0.05,value=f32",
		"index=bloom,policy=p2,fpr=0.05,value=deflate",
	};
	float x[N];
	uint32_t keys[N];
	for (int i = 0; i < N; i++) {
		x[i] = i % 10 ? 0.001f * (float)(i % 7 + 1) : 1.0f + 0.001f * (float)i;
		keys[i] = 3u * (uint32_t)i + 1;
	}
	for (size_t v = 0; v < GW_ARRAY_SIZE(variants); v++)
		for (int where = 0; where < 2; where++) {
			nan_at_lost_key(variants[v], x, NULL, N, where);
			nan_at_lost_key(variants[v], x, keys, N, where);
		}
}

/* gw_ef_restore() of a poisoned frame (scale NaN) must not put NaN into the
 * buffer either: every lossy dense codec, one NaN in the tensor. */
static void test_restore_of_poisoned_frame(void **state)
{
	(void)state;
	enum { N = 200 };
	float g[N];
	for (int i = 0; i < N; i++)
		g[i] = 0.001f * (float)((i * 37) % 101 - 50);
	g[17] = NAN;
	int ids[GW_TEST_MAX_CODECS], nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		if (!(gw_codec_caps(ids[c]) & GW_CODEC_LOSSY) || !gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
		gw_ef *ef = gw_ef_create(N);
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		gw_tensor t = gw_test_dense_tensor(1, g, N);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 128, &fr));
		for (size_t f = 0; f < fr.n; f++)   /* none delivered */
			GW_CHECK(gw_ef_restore(ef, fr.f[f].data, fr.f[f].len) >= 0,
				 "%s: restore refused frame %zu", gw_codec_name(ids[c]), f);
		for (int i = 0; i < N; i++)
			GW_CHECK(isfinite(gw_ef_data(ef)[i]), "%s: error buffer entry %d "
				 "is %g after restoring a poisoned tensor",
				 gw_codec_name(ids[c]), i, gw_ef_data(ef)[i]);
		gw_test_frames_free(&fr);
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
}

GW_TEST_MAIN("nonfinite_input", 0,
	     cmocka_unit_test(test_nonfinite_in_g),
	     cmocka_unit_test(test_nonfinite_in_buffer),
	     cmocka_unit_test(test_overflowing_correction),
	     cmocka_unit_test(test_many_nonfinite),
	     cmocka_unit_test(test_special_values),
	     cmocka_unit_test(test_poisoned_frames_among_finite),
	     cmocka_unit_test(test_nonfinite_lost_by_lossy_index),
	     cmocka_unit_test(test_restore_of_poisoned_frame))
