/* Error feedback loses no gradient mass, for every codec that keeps a buffer, at its defaults and every variant (every ISA of a codec with SIMD paths): over 20 rounds of real traces (cnn gradients as they are and scaled, each dense trace alone, sparse traces with changing and with fixed key sets; deepreduce's variants 4 rounds of a dense and of a half-sparse gradient), sum of decoded + final buffer == sum of inputs within the codec's rounding tolerance (tests/gw_test_codecs.c), which leaving the buffer out, or running without feedback, misses by far (the tolerance has teeth); every round leaves e = fl(g + e) - decoded bit for bit, a lossless codec e = +0; decoded values keep the codec's promise for the corrected values (onebit's means of g + e, top-k's k largest of g + e); a fused codec sends exactly what encoding g + e without feedback sends; a zero buffer sends what no feedback sends, a detached one is left alone; a codec sending a fraction reaches every coordinate over rounds; and the buffer API. */
#include "gw_test.h"

#include <math.h>

enum { ROUNDS = 20, MAX_ROUNDS = 20 };

/* Round r sends source r % n times one of these factors, so rounds differ in
 * sign and magnitude as well as in content. */
static const float factors[] = {1.0f, -0.5f, 2.0f, 0.25f, -3.0f};

/* Rounds of gradients: round r holds n[r] values at keys[r] (NULL: dense). */
struct scenario {
	char name[64];
	uint64_t dim;
	int rounds;
	const float *g[MAX_ROUNDS];
	const uint32_t *keys[MAX_ROUNDS];
	uint64_t n[MAX_ROUNDS];
	size_t budgets[3];  /* 0 ends the list */
	int brief;          /* the scenarios of brief variants */
	int control;        /* also run without feedback, expecting a loss */
	int residual;       /* a lossy codec leaves residuals in 10% */
	int own_rounds;     /* g[r] are this scenario's to free */
	void *own[8];       /* freed with it */
};

#define MAX_SCEN 40
static struct scenario scen[MAX_SCEN];
static int nscen;

static struct scenario *add(const char *name, uint64_t dim, int rounds,
			    size_t b0, size_t b1, size_t b2)
{
	GW_CHECK(nscen < MAX_SCEN, "too many scenarios");
	struct scenario *s = &scen[nscen++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->dim = dim;
	s->rounds = rounds;
	s->budgets[0] = b0;
	s->budgets[1] = b1;
	s->budgets[2] = b2;
	return s;
}

static void *own(struct scenario *s, void *p)
{
	GW_CHECK(p, "out of memory");
	for (size_t i = 0; i < GW_ARRAY_SIZE(s->own); i++)
		if (!s->own[i])
			return s->own[i] = p;
	fail_msg("scenario %s owns too much", s->name);
	return NULL;
}

static float *scaled(const float *v, uint64_t n, float f)
{
	float *g = malloc((n ? n : 1) * sizeof(float));
	GW_CHECK(g, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		g[i] = v[i] * f;
	return g;
}

#define BUDGET_MTU (1500 - 78)
#define BUDGET_PKT (1500 - GW_PKT_RESERVE)

static void dense_scenarios(void)
{
	/* The cnn iterations as they are (25,290 parameters as one tensor),
	 * at a tiny, an MTU's and a packet's budget. */
	float *it[GW_TEST_CNN_ITERS];
	size_t n = 0;
	struct scenario *s = add("cnn", GW_TEST_CNN_PARAMS, ROUNDS, 64, BUDGET_MTU,
				 BUDGET_PKT);
	s->residual = 1;
	for (int i = 0; i < GW_TEST_CNN_ITERS; i++)
		it[i] = own(s, gw_test_load_cnn_iter(i, &n));
	for (int r = 0; r < ROUNDS; r++) {
		s->g[r] = it[r % GW_TEST_CNN_ITERS];
		s->n[r] = n;
	}
	/* Scaled by the factors. */
	s = add("cnn scaled", n, ROUNDS, BUDGET_MTU, 0, 0);
	s->control = s->residual = s->own_rounds = 1;
	for (int r = 0; r < ROUNDS; r++) {
		s->g[r] = scaled(it[r % GW_TEST_CNN_ITERS], n,
				 factors[r / GW_TEST_CNN_ITERS % 5]);
		s->n[r] = n;
	}
	/* Each dense trace alone, the same gradient every round. */
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		s = add(d.name, d.n, ROUNDS, BUDGET_PKT, 0, 0);
		own(s, d.v);
		for (int r = 0; r < ROUNDS; r++) {
			s->g[r] = d.v;
			s->n[r] = d.n;
		}
	}
	/* Brief: cnn iteration 10 four times, dense and with every other
	 * coordinate, a different half each round. */
	s = add("cnn it010", n, 4, BUDGET_PKT, 0, 0);
	s->brief = 1;
	for (int r = 0; r < 4; r++) {
		s->g[r] = it[1];
		s->n[r] = n;
	}
	s = add("cnn it010 halves", n, 4, BUDGET_PKT, 0, 0);
	s->brief = 1;
	for (int h = 0; h < 2; h++) {
		uint32_t *keys = own(s, malloc((n / 2 + 1) * sizeof(uint32_t)));
		float *vals = own(s, malloc((n / 2 + 1) * sizeof(float)));
		uint64_t m = 0;
		for (uint64_t x = (uint64_t)h; x < n; x += 2) {
			keys[m] = (uint32_t)x;
			vals[m++] = it[1][x];
		}
		for (int r = h; r < 4; r += 2) {
			s->g[r] = vals;
			s->keys[r] = keys;
			s->n[r] = m;
		}
	}
}

static void sparse_scenarios(void)
{
	gw_test_sparse sp[GW_TEST_N_SPARSE];
	for (int i = 0; i < GW_TEST_N_SPARSE; i++)
		gw_test_load_sparse(i, &sp[i]);
	/* Scaled by the factors: key sets differ between rounds, so
	 * residuals of keys absent in a round must wait in the buffer. */
	struct scenario *s = add("logreg sparse, scaled", GW_TEST_SPARSE_DIM, ROUNDS,
				 BUDGET_MTU, 0, 0);
	s->control = s->own_rounds = 1;
	for (int r = 0; r < ROUNDS; r++) {
		const gw_test_sparse *src = &sp[r % GW_TEST_N_SPARSE];
		s->g[r] = scaled(src->vals, src->nnz, factors[r / GW_TEST_N_SPARSE % 5]);
		s->keys[r] = src->keys;
		s->n[r] = src->nnz;
	}
	/* The keys of the first trace every round; round r's values those of
	 * trace r % 3, truncated or repeated (four sources in turn). */
	struct scenario *f = add("logreg sparse, fixed keys", GW_TEST_SPARSE_DIM,
				 ROUNDS, BUDGET_MTU, 0, 0);
	float *fixed[4];
	for (int r = 0; r < 4; r++) {
		const gw_test_sparse *src = &sp[r % GW_TEST_N_SPARSE];
		fixed[r] = own(f, malloc(sp[0].nnz * sizeof(float)));
		for (size_t i = 0; i < sp[0].nnz; i++)
			fixed[r][i] = src->vals[i % src->nnz];
	}
	for (int r = 0; r < ROUNDS; r++) {
		f->g[r] = fixed[r % 4];
		f->keys[r] = sp[0].keys;
		f->n[r] = sp[0].nnz;
	}
	for (int i = 0; i < GW_TEST_N_SPARSE; i++) {
		own(s, sp[i].keys);
		own(s, sp[i].vals);
	}
}

static int setup(void **state)
{
	(void)state;
	nscen = 0;
	if (!gw_test_have_traces())
		return 0;   /* the tests that need them skip */
	dense_scenarios();
	sparse_scenarios();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < nscen; i++) {
		struct scenario *s = &scen[i];
		for (int r = 0; s->own_rounds && r < s->rounds; r++)
			free((void *)s->g[r]);
		for (size_t k = 0; k < GW_ARRAY_SIZE(s->own); k++)
			free(s->own[k]);
	}
	nscen = 0;
	return 0;
}

/* ---- rounds -------------------------------------------------------------------- */

/* Per coordinate, in double: the sum of inputs, the sum of decoded outputs
 * and the rounding tolerance; and the float buffers of one round. */
struct acc {
	double *sum_g, *sum_d, *tol;
	float *eb, *c, *g, *out, *zero;   /* g: the round's input at its keys */
	uint8_t *present;
};

static void acc_reset(struct acc *a, uint64_t dim)
{
	a->sum_g = gw_test_scratch(0, dim * sizeof(double));
	a->sum_d = gw_test_scratch(1, dim * sizeof(double));
	a->tol = gw_test_scratch(2, dim * sizeof(double));
	a->eb = gw_test_scratch(3, dim * sizeof(float));
	a->c = gw_test_scratch(4, dim * sizeof(float));
	a->g = gw_test_scratch(5, dim * sizeof(float));
	a->out = gw_test_scratch(6, dim * sizeof(float));
	a->zero = gw_test_scratch(7, dim * sizeof(float));
	a->present = gw_test_scratch(8, dim);
	memset(a->sum_g, 0, dim * sizeof(double));
	memset(a->sum_d, 0, dim * sizeof(double));
	memset(a->tol, 0, dim * sizeof(double));
	memset(a->zero, 0, dim * sizeof(float));
}

struct run {
	int id;
	const gw_test_codec *cd;
	const char *variant;
	const struct scenario *s;
	size_t budget;
	int with_ef;
	char what[200];
};

/* A fused codec sends exactly what encoding the corrected values without
 * feedback sends. */
static void check_fused(const struct run *u, gw_encoder *plain, const gw_tensor *tc,
			const gw_test_frames *fr, int r)
{
	gw_test_frames fp;
	GW_OK_CALL(gw_test_encode_all(plain, tc, u->budget, &fp));
	GW_CHECK(fr->n == fp.n, "%s round %d: fused feedback made %zu frames, "
		 "encoding g + e directly %zu", u->what, r, fr->n, fp.n);
	for (size_t j = 0; j < fr->n; j++)
		GW_CHECK(fr->f[j].len == fp.f[j].len &&
				 !memcmp(fr->f[j].data, fp.f[j].data, fr->f[j].len),
			 "%s round %d: frame %zu differs between fused feedback and "
			 "encoding g + e directly", u->what, r, j);
	gw_test_frames_free(&fp);
}

/* After round r: e = fl(c - decoded) bit for bit at every coordinate
 * (c = g + e where the round has a key, e alone elsewhere); and the
 * tolerance and the sums grow. */
static void account(const struct run *u, struct acc *a, const float *e, int r)
{
	const struct scenario *s = u->s;
	const gw_test_ef_tol *tl = &u->cd->ef;
	const float *g = s->g[r];
	const uint32_t *keys = s->keys[r];
	uint64_t n = s->n[r], dim = s->dim;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = keys ? keys[i] : i;
		a->sum_g[k] += g[i];
		a->g[k] = g[i];
	}
	for (uint64_t k = 0; k < dim; k++) {
		float d = a->out[k], ea = u->with_ef ? e[k] : 0.0f;
		float eb = u->with_ef ? a->eb[k] : 0.0f;
		GW_CHECK(isfinite(d), "%s round %d: decoded %a at %llu", u->what, r,
			 (double)d, (unsigned long long)k);
		a->sum_d[k] += d;
		/* What was sent here: the corrected value of a key of the
		 * round; elsewhere only what a false positive carried. */
		int here = a->present[k];
		if (!here && gw_test_bits(d) == 0x80000000u) {
			GW_CHECK(gw_test_bits(ea) == gw_test_bits(eb), "%s round %d: e[%llu] "
				 "changed from %a to %a with nothing sent there", u->what,
				 r, (unsigned long long)k, (double)eb, (double)ea);
			continue;
		}
		double gk = here ? (double)a->g[k] : 0.0;
		a->tol[k] += tl->c_abs * fabs((double)a->c[k]) + tl->g_abs * fabs(gk) +
			     tl->eb_abs * fabs((double)eb) + tl->ea_abs * fabs((double)ea) +
			     tl->gd_abs * (fabs(gk) + fabs((double)d));
		float want = a->c[k] - d;
		GW_CHECK(!u->with_ef || gw_test_bits(ea) == gw_test_bits(want),
			 "%s round %d: e[%llu] = %a, fl(g + e) - decoded = %a", u->what, r,
			 (unsigned long long)k, (double)ea, (double)want);
	}
}

/* Largest |sum(d) + e - sum(g)| / bound; fails above 1 with feedback. */
static double conservation(const struct run *u, struct acc *a, const float *e,
			   double *worst_without_e)
{
	const gw_test_ef_tol *tl = &u->cd->ef;
	double worst = 0;
	*worst_without_e = 0;
	for (uint64_t k = 0; k < u->s->dim; k++) {
		double ek = e ? (double)e[k] : 0.0;
		double got = a->sum_d[k] + ek;
		double dev = fabs(got - a->sum_g[k]);
		double bound = a->tol[k] * (1 + tl->rel) + tl->abs;
		double b = bound > 0 ? bound : 0x1p-149;
		worst = fmax(worst, dev / b);
		*worst_without_e = fmax(*worst_without_e, fabs(a->sum_d[k] - a->sum_g[k]) / b);
		if (u->with_ef)
			GW_CHECK(dev <= bound, "%s: element %llu: sum of decoded %.9g + error "
				 "buffer %.9g = %.9g, sum of inputs %.9g, off by %.3g > "
				 "tolerance %.3g: feedback lost gradient mass", u->what,
				 (unsigned long long)k, a->sum_d[k], ek, got, a->sum_g[k], dev,
				 bound);
	}
	return worst;
}

/* The rounds of u->s with (or, as a control, without) feedback. */
static void run_rounds(struct run *u, struct acc *a)
{
	const struct scenario *s = u->s;
	uint64_t dim = s->dim;
	int lossy = (u->cd->caps & GW_CODEC_LOSSY) != 0;
	int fused = (gw_codec_ops(u->id)->flags & GW_OPS_FUSED_EF) != 0;
	gw_encoder *enc = gw_test_encoder_with(u->id, u->variant);
	gw_encoder *plain = fused ? gw_test_encoder_with(u->id, u->variant) : NULL;
	gw_ef *ef = u->with_ef ? gw_ef_create(dim) : NULL;
	GW_CHECK(!u->with_ef || ef, "gw_ef_create failed");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	const float *e = ef ? gw_ef_data(ef) : a->zero;
	acc_reset(a, dim);
	for (int r = 0; r < s->rounds; r++) {
		const uint32_t *keys = s->keys[r];
		uint64_t n = s->n[r];
		memcpy(a->eb, e, dim * sizeof(float));
		memcpy(a->c, e, dim * sizeof(float));
		memset(a->present, 0, dim);
		float *cx = malloc((n ? n : 1) * sizeof(float));
		GW_CHECK(cx, "out of memory");
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = keys ? keys[i] : i;
			cx[i] = a->c[k] = ef ? s->g[r][i] + a->eb[k] : s->g[r][i];
			a->present[k] = 1;
		}
		gw_tensor t = keys ? gw_test_sparse_tensor(100, dim, keys, 32, s->g[r], n)
				   : gw_test_dense_tensor(100, s->g[r], n);
		gw_test_frames fr;
		GW_EXPECT_RC(gw_test_encode_all(enc, &t, u->budget, &fr), 0,
			     "%s round %d: encode failed", u->what, r);
		gw_frame_info *info = calloc(fr.n ? fr.n : 1, sizeof(*info));
		GW_CHECK(info, "out of memory");
		uint64_t held = 0;
		for (size_t j = 0; j < fr.n; j++) {
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &info[j]));
			held += info[j].count;
		}
		if (!(u->cd->flags & (GW_TEST_SUBSET | GW_TEST_SUPERSET)))
			GW_CHECK(held == n, "%s round %d: frames hold %llu of %llu", u->what,
				 r, (unsigned long long)held, (unsigned long long)n);
		gw_test_fill(a->out, dim, -0.0f);
		gw_test_decode_all(&fr, a->out, dim);
		gw_test_input in = {.name = s->name, .keys = keys, .vals = cx, .n = n,
				    .dim = dim, .between = a->c};
		in.t = keys ? gw_test_sparse_tensor(100, dim, keys, 32, cx, n)
			    : gw_test_dense_tensor(100, cx, n);
		char what[240];
		snprintf(what, sizeof(what), "%s round %d (corrected values)", u->what, r);
		gw_test_check_promise(enc, &in, cx, &fr, info, a->out, what);
		/* A superset codec's false positives of a sparse round carry what
		 * the buffer holds there, which encoding g + e cannot know. */
		if (plain && ef && !(keys && (u->cd->flags & GW_TEST_SUPERSET)))
			check_fused(u, plain, &in.t, &fr, r);
		account(u, a, e, r);
		if (ef && !lossy)
			for (uint64_t k = 0; k < dim; k++)
				GW_CHECK(gw_test_bits(e[k]) == 0, "%s round %d: residual %a "
					 "at %llu, want exactly +0 (lossless)", u->what, r,
					 (double)e[k], (unsigned long long)k);
		free(info);
		free(cx);
		gw_test_frames_free(&fr);
	}
	double wo;
	double worst = conservation(u, a, ef ? e : NULL, &wo);
	uint64_t nonzero = 0;
	for (uint64_t k = 0; ef && k < dim; k++)
		nonzero += e[k] != 0.0f;
	if (ef && lossy)
		print_message("  %s: worst deviation %.3g of tolerance (%.3g without e)\n",
			      u->what, worst, wo);
	/* Where something was kept (deepreduce's lossless defaults on a
	 * sparse input keep nothing), leaving it out must show. */
	if (ef && lossy && nonzero)
		GW_CHECK(wo > 100, "%s: leaving e out is only %g tolerances off: the "
			 "tolerance has no teeth", u->what, wo);
	/* Control: without feedback a codec that loses anything on this input
	 * (deepreduce's defaults lose nothing of a sparse one) loses more than
	 * the tolerance, so the conservation check above can fail. */
	if (!ef && worst > 0)
		GW_CHECK(worst > 100, "%s: deviates only %g times the tolerance: the "
			 "tolerance is too loose to catch lost mass", u->what, worst);
	if (ef && lossy && s->residual)
		/* A lossy codec leaves a nonzero residual somewhere: otherwise
		 * this test would not be testing feedback at all. */
		GW_CHECK(nonzero > dim / 10, "%s: only %llu of %llu residuals nonzero",
			 u->what, (unsigned long long)nonzero, (unsigned long long)dim);
	gw_ef_free(ef);
	gw_encoder_free(plain);
	gw_encoder_free(enc);
}

static void describe(struct run *u, const gw_test_variant *v, const char *how)
{
	int n = snprintf(u->what, sizeof(u->what), "%s on %s, budget %zu%s", v->name,
			 u->s->name, u->budget, how);
	GW_CHECK(n > 0, "snprintf");
}

/* Every scenario a variant runs (brief variants: the brief ones), at each
 * of its budgets; the defaults of a lossy codec also without feedback where
 * the scenario is a control. */
static void conserve(const gw_test_variant *v, void *arg)
{
	struct acc *a = arg;
	for (int i = 0; i < nscen; i++) {
		const struct scenario *s = &scen[i];
		if ((v->brief && !s->brief) ||
		    !gw_test_codec_accepts(v->id, s->keys[0] != NULL))
			continue;
		for (int b = 0; b < 3 && s->budgets[b]; b++) {
			struct run u = {.id = v->id, .cd = v->codec, .variant = v->params,
					.s = s, .budget = s->budgets[b], .with_ef = 1};
			describe(&u, v, "");
			run_rounds(&u, a);
			if (v->first && s->control && (v->codec->caps & GW_CODEC_LOSSY)) {
				u.with_ef = 0;
				describe(&u, v, " without feedback");
				run_rounds(&u, a);
			}
		}
	}
}

/* Codecs that keep an error buffer: every one but the sketch tables. */
static void test_conservation(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	struct acc a;
	gw_test_each_variant(1, conserve, &a);
}

/* ---- the buffer at the edges of a run ------------------------------------------ */

/* A zero buffer sends exactly what no feedback sends (-0 + 0 is +0: a
 * codec whose frames carry the sign of zero gets no -0); detached again,
 * the buffer is left alone and the frames are those of no feedback; a
 * buffer of another size is refused at begin. */
static void test_first_round(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	size_t n;
	float *x = gw_test_load_cnn_iter(2, &n);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		const gw_test_codec *cd = gw_test_codec_of(ids[c]);
		x[3] = (cd->flags & GW_TEST_SIGNED_ZERO) ? 0.0f : -0.0f;
		gw_encoder *a = gw_test_encoder(ids[c]), *b = gw_test_encoder(ids[c]);
		gw_ef *ef = gw_ef_create(n);
		GW_CHECK(ef, "gw_ef_create failed");
		GW_OK_CALL(gw_encoder_set_ef(b, ef));
		gw_tensor t = gw_test_dense_tensor(1, x, n);
		gw_test_frames fa, fb, fc;
		GW_OK_CALL(gw_test_encode_all(a, &t, BUDGET_PKT, &fa));
		GW_OK_CALL(gw_test_encode_all(b, &t, BUDGET_PKT, &fb));
		GW_CHECK(fa.n == fb.n, "%s: %zu vs %zu frames", cd->name, fa.n, fb.n);
		for (size_t j = 0; j < fa.n; j++)
			GW_CHECK(fa.f[j].len == fb.f[j].len &&
					 !memcmp(fa.f[j].data, fb.f[j].data, fa.f[j].len),
				 "%s: frame %zu differs with a zero error buffer", cd->name, j);
		float *keep = malloc(n * sizeof(float));
		GW_CHECK(keep, "out of memory");
		memcpy(keep, gw_ef_data(ef), n * sizeof(float));
		GW_OK_CALL(gw_encoder_set_ef(b, NULL));
		GW_OK_CALL(gw_test_encode_all(b, &t, BUDGET_PKT, &fc));
		GW_CHECK(!memcmp(keep, gw_ef_data(ef), n * sizeof(float)),
			 "%s: detached buffer written", cd->name);
		GW_CHECK(fc.n == fa.n, "%s: detached encoder made %zu frames, not %zu",
			 cd->name, fc.n, fa.n);
		for (size_t j = 0; j < fa.n; j++)
			GW_CHECK(fc.f[j].len == fa.f[j].len &&
					 !memcmp(fc.f[j].data, fa.f[j].data, fa.f[j].len),
				 "%s: detached encoder differs at frame %zu", cd->name, j);
		gw_ef *small = gw_ef_create(n - 1);
		GW_OK_CALL(gw_encoder_set_ef(b, small));
		GW_EXPECT_RC(gw_encode_begin(b, &t), GW_EINVAL, "%s: ef of dim n - 1",
			     cd->name);
		free(keep);
		gw_test_frames_free(&fa);
		gw_test_frames_free(&fb);
		gw_test_frames_free(&fc);
		gw_ef_free(ef);
		gw_ef_free(small);
		gw_encoder_free(a);
		gw_encoder_free(b);
	}
	free(x);
}

/* A tensor abandoned after its first frame (10 values each) keeps in the
 * buffer g - decoded for what that frame sent and g for the rest, bit for
 * bit. A top-k selection folds the buffer at begin: mid-tensor already,
 * the values it selected but has not framed yet wait there. */
static void test_abandon_after_first_frame(void **state)
{
	(void)state;
	enum { N = 1000 };
	float v[N];
	for (int i = 0; i < N; i++)
		v[i] = (float)((i * 37) % 101) - 50.0f;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		const gw_test_codec *cd = gw_test_codec_of(ids[c]);
		gw_encoder *enc = gw_test_encoder(ids[c]);
		if (gw_param_bounds(ids[c], GW_PARAM_FRACTION, NULL) == 0)
			GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.2));
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 10));
		gw_ef *ef = gw_ef_create(N);
		GW_CHECK(ef, "gw_ef_create");
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		gw_tensor t = gw_test_dense_tensor(1, v, N);
		GW_OK_CALL(gw_encode_begin(enc, &t));
		uint8_t buf[1024];
		int len = gw_encode_next(enc, buf, sizeof(buf));
		GW_CHECK(len > 0, "%s: first frame: %s", cd->name, gw_error_name(len));
		float out[N];
		gw_test_fill(out, N, -0.0f);
		GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, N), 10, "%s: first frame",
			     cd->name);
		const float *e = gw_ef_data(ef);
		for (int mid = cd->promise == GW_TEST_TOP_K; mid >= 0; mid--) {
			if (!mid)
				GW_OK_CALL(gw_encode_abandon(enc));
			int sent = 0;
			for (int i = 0; i < N; i++) {
				float want = v[i] - out[i];
				sent += gw_test_bits(out[i]) != 0x80000000u;
				GW_CHECK(gw_test_bits(e[i]) == gw_test_bits(want),
					 "%s: element %d after the first frame%s: e %a, g - "
					 "decoded %a", cd->name, i, mid ? "" : " and abandon",
					 (double)e[i], (double)want);
			}
			if (cd->promise == GW_TEST_TOP_K)
				GW_CHECK(sent == 10, "%s: %d values sent", cd->name, sent);
		}
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
}

/* With feedback, a codec that sends a tenth of a constant gradient each
 * round has sent every coordinate within 12 rounds. */
static void test_every_coordinate_sent(void **state)
{
	(void)state;
	enum { D = 2000 };
	float g[D], total[D];
	for (int i = 0; i < D; i++)
		g[i] = 1.0f + (float)(i % 7) * 1e-3f;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids), tried = 0;
	for (int c = 0; c < nc; c++) {
		const gw_test_codec *cd = gw_test_codec_of(ids[c]);
		if (!cd->sweep)
			continue;
		gw_encoder *enc = gw_test_encoder_with(ids[c], cd->sweep);
		gw_ef *ef = gw_ef_create(D);
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		gw_test_fill(total, D, 0.0f);
		for (int round = 0; round < 12; round++) {
			gw_tensor t = gw_test_dense_tensor(1, g, D);
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, BUDGET_PKT, &fr));
			gw_test_decode_all(&fr, total, D);
			gw_test_frames_free(&fr);
		}
		int never = 0;
		for (int i = 0; i < D; i++)
			never += total[i] == 0.0f;
		GW_CHECK(never == 0, "%s [%s]: %d of %d coordinates never sent in 12 "
			 "rounds", cd->name, cd->sweep, never, D);
		tried++;
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
	GW_CHECK(tried >= 2, "only %d codecs send a fraction", tried);
}

/* gw_ef_reset zeroes the buffer; gw_ef_dim reports it; a mismatched
 * dimension is refused at begin. */
static void test_ef_api(void **state)
{
	(void)state;
	gw_ef *ef = gw_ef_create(100);
	GW_CHECK(ef && gw_ef_dim(ef) == 100 && gw_ef_data(ef),
		 "gw_ef_create(100) / gw_ef_dim");
	for (int i = 0; i < 100; i++)
		GW_CHECK(gw_ef_data(ef)[i] == 0.0f, "new error buffer not zero at %d", i);
	gw_ef_data(ef)[7] = 3.0f;
	gw_ef_reset(ef);
	GW_CHECK(gw_ef_data(ef)[7] == 0.0f, "gw_ef_reset left %a",
		 (double)gw_ef_data(ef)[7]);
	GW_CHECK(gw_ef_dim(NULL) == 0 && gw_ef_data(NULL) == NULL,
		 "NULL error buffer: dim 0 and no data");
	gw_ef_reset(NULL);
	gw_ef_free(NULL);
	float v[50] = {0};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_INT8);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = gw_test_dense_tensor(1, v, 50);
	GW_EXPECT_RC(gw_encode_begin(enc, &t), GW_EINVAL,
		     "a 50-element tensor with a 100-element error buffer");
	GW_OK_CALL(gw_encoder_set_ef(enc, NULL));
	GW_OK_CALL(gw_encode_begin(enc, &t));
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

GW_TEST_MAIN_GROUP("error_feedback", 0, setup, teardown,
		   cmocka_unit_test(test_conservation),
		   cmocka_unit_test(test_first_round),
		   cmocka_unit_test(test_abandon_after_first_frame),
		   cmocka_unit_test(test_every_coordinate_sent),
		   cmocka_unit_test(test_ef_api))
