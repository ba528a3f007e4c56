/* What the behaviour tests know of each codec (gw_test.h): the one table of
 * promises, poison policies, variants and tolerances, and the inputs and
 * budgets every codec is tried on. The promises are checked in
 * gw_test_promise.c. */
#include "gw_test.h"

#include <math.h>

#include "gw_cpu.h"

/* ---- the table ------------------------------------------------------------ */

#define LOSSY_DS (GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY)

/* Feedback through the generic path or a fused one that subtracts the
 * decoded value: d + e' = g + e + r1 + r2, |r1| <= 2^-24 |g + e|,
 * |r2| <= 2^-24 |e'|; twice that, plus the test's own double sums. */
#define EF_GENERIC {.g_abs = 0x1p-23, .eb_abs = 0x1p-23, .ea_abs = 0x1p-23,         \
		    .gd_abs = 0x1p-40}

static const char *const threelc_variants[] = {
	"sparsity=1.5", "sparsity=1.75", "sparsity=1.9", NULL,
};

static const char *const terngrad_variants[] = {"clip=0", "clip=1", NULL};

static const char *const hq_variants[] = {
	"rotate=0", "bits=2", "bits=3,rotate=0", "bits=8", "rounding=stochastic",
	"bits=5,rounding=stochastic,rotate=0", NULL,
};

static const char *const topk_variants[] = {"fraction=0.1", "fraction=0.25", NULL};

/* Every index codec with every value codec, Bloom at its default and at a
 * coarse false-positive rate; random-r, and no sparsifier. */
#define DR_VALUES(index)                                                       \
	"index=" index ",value=f32", "index=" index ",value=deflate",          \
	"index=" index ",value=qsgd", "index=" index ",value=poly",            \
	"index=" index ",value=dexp"
static const char *const deepreduce_variants[] = {
	DR_VALUES("raw"), DR_VALUES("rle"), DR_VALUES("delta"),
	DR_VALUES("bloom,policy=p0"), DR_VALUES("bloom,policy=p1"),
	DR_VALUES("bloom,policy=p2"), DR_VALUES("bloom,policy=p0,fpr=0.05"),
	DR_VALUES("bloom,policy=p1,fpr=0.05"), DR_VALUES("bloom,policy=p2,fpr=0.05"),
	"sparsifier=randr,fraction=0.05,value=qsgd",
	"sparsifier=none,index=rle,value=poly",
	NULL,
};
#undef DR_VALUES

static const gw_test_codec codecs[] = {
	{.name = "raw", .caps = GW_CODEC_DENSE | GW_CODEC_SPARSE,
	 .promise = GW_TEST_EXACT, .poison = GW_TEST_CARRIED,
	 .flags = GW_TEST_KEEPS_KIND | GW_TEST_SIGNED_ZERO, .ef = EF_GENERIC},
	{.name = "bf16", .caps = LOSSY_DS, .promise = GW_TEST_BF16,
	 .poison = GW_TEST_CARRIED,
	 .flags = GW_TEST_KEEPS_KIND | GW_TEST_SIGNED_ZERO | GW_TEST_ISA, .ef = EF_GENERIC},
	{.name = "int8", .caps = LOSSY_DS, .promise = GW_TEST_INT8,
	 .poison = GW_TEST_FRAME, .flags = GW_TEST_KEEPS_KIND | GW_TEST_ISA, .ef = EF_GENERIC},
	/* e = c - decoded is exact: the rounding of g + e is all there is. */
	{.name = "3lc", .caps = GW_CODEC_DENSE | GW_CODEC_LOSSY,
	 .promise = GW_TEST_3LC, .poison = GW_TEST_TENSOR,
	 .flags = GW_TEST_KEEPS_KIND | GW_TEST_GROUPS5 | GW_TEST_ISA,
	 .variants = threelc_variants,
	 .ef = {.c_abs = 0x1p-24, .gd_abs = 0x1p-48, .abs = 0x1p-1074}},
	{.name = "terngrad", .caps = LOSSY_DS, .promise = GW_TEST_TERNARY,
	 .poison = GW_TEST_FRAME, .flags = GW_TEST_KEEPS_KIND | GW_TEST_GROUPS5 | GW_TEST_ISA,
	 .variants = terngrad_variants, .ef = EF_GENERIC},
	{.name = "onebit", .caps = LOSSY_DS, .promise = GW_TEST_TWO_MEANS,
	 .poison = GW_TEST_FRAME, .flags = GW_TEST_KEEPS_KIND | GW_TEST_ISA,
	 .ef = {.c_abs = 0x1p-24, .ea_abs = 0x1p-24, .rel = 1e-9, .abs = 1e-30}},
	/* A sent value leaves e = 0, an unsent one e = c: no second rounding. */
	{.name = "topk", .caps = LOSSY_DS, .promise = GW_TEST_TOP_K,
	 .poison = GW_TEST_CARRIED, .flags = GW_TEST_SUBSET,
	 .variants = topk_variants,
	 .ef = {.c_abs = 0x1p-24, .rel = 1e-9, .abs = 1e-30},
	 .sweep = "fraction=0.1"},
	/* Drops exact zeros. */
	{.name = "sketchml", .caps = LOSSY_DS, .promise = GW_TEST_MINMAX,
	 .poison = GW_TEST_FRAME, .flags = GW_TEST_SUBSET, .ef = EF_GENERIC},
	/* The sketch-table codec has tests of its own (test_countsketch_*). */
	{.name = "countsketch", .caps = LOSSY_DS | GW_CODEC_TABLE},
	{.name = "deepreduce", .caps = LOSSY_DS, .promise = GW_TEST_STATED,
	 .poison = GW_TEST_CARRIED,
	 .flags = GW_TEST_SUBSET | GW_TEST_SUPERSET | GW_TEST_BRIEF,
	 .variants = deepreduce_variants, .ef = EF_GENERIC,
	 .sweep = "fraction=0.1,index=bloom,policy=p2"},
	/* Fused feedback that subtracts the decoded value, as int8's. */
	{.name = "hq", .caps = GW_CODEC_DENSE | GW_CODEC_LOSSY, .promise = GW_TEST_HQ,
	 .poison = GW_TEST_FRAME, .flags = GW_TEST_KEEPS_KIND | GW_TEST_ISA,
	 .variants = hq_variants, .ef = EF_GENERIC},
};

const gw_test_codec *gw_test_codec_of(int id)
{
	const char *name = gw_codec_name(id);
	GW_CHECK(name, "codec id %d is not registered", id);
	for (size_t i = 0; i < GW_ARRAY_SIZE(codecs); i++)
		if (!strcmp(codecs[i].name, name))
			return &codecs[i];
	fail_msg("codec \"%s\" (id %d) is registered but tests/gw_test_codecs.c "
		 "does not say what it promises: add it to the table there",
		 name, id);
	return NULL;
}

size_t gw_test_variants(const gw_test_codec *cd, const char **out, size_t cap)
{
	size_t n = 0;
	out[n++] = "";
	for (const char *const *v = cd->variants; v && *v; v++) {
		GW_CHECK(n < cap, "%s has more than %zu variants", cd->name, cap - 1);
		out[n++] = *v;
	}
	return n;
}

int gw_test_isa_count(const gw_test_codec *cd)
{
	return (cd->flags & GW_TEST_ISA) ? gw_cpu_best_isa() + 1 : 1;
}

const char *gw_test_isa(const gw_test_codec *cd, int isa)
{
	if (!(cd->flags & GW_TEST_ISA))
		return "";
	if (isa < 0) {
		gw_cpu_force_isa(-1);
		return "";
	}
	GW_OK_CALL(gw_cpu_force_isa(isa));
	return gw_cpu_isa_name(isa);
}

static int enc_id(const gw_encoder *enc)
{
	return enc->ops->id;
}

double gw_test_param(const gw_encoder *enc, gw_param p)
{
	double v = 0;
	GW_OK_CALL(gw_encoder_get_param(enc, p, &v));
	return v;
}

int gw_test_named(const gw_encoder *enc, gw_param p, const char *name)
{
	double v;
	GW_OK_CALL(gw_param_value(p, name, &v));
	return gw_test_param(enc, p) == v;
}

int gw_test_may_drop(const gw_encoder *enc)
{
	return enc_id(enc) == GW_CODEC_DEEPREDUCE && gw_test_named(enc, GW_PARAM_INDEX, "bloom") &&
	       !gw_test_named(enc, GW_PARAM_POLICY, "p0");
}

gw_test_poison gw_test_poison_of(const gw_encoder *enc)
{
	const gw_test_codec *c = gw_test_codec_of(enc_id(enc));
	/* deepreduce's curve fits and QSGD cannot carry them; f32 and
	 * deflate do, bit for bit. */
	if (enc_id(enc) == GW_CODEC_DEEPREDUCE) {
		int v = (int)gw_test_param(enc, GW_PARAM_VALUE);
		double f32, deflate;
		GW_OK_CALL(gw_param_value(GW_PARAM_VALUE, "f32", &f32));
		GW_OK_CALL(gw_param_value(GW_PARAM_VALUE, "deflate", &deflate));
		if (v != (int)f32 && v != (int)deflate)
			return GW_TEST_REFUSED;
	}
	return c->poison;
}

/* ---- inputs ------------------------------------------------------------------ */

uint64_t gw_test_key(const gw_test_input *in, uint64_t i)
{
	return in->keys ? in->keys[i] : i;
}

uint64_t gw_test_lower_bound(const gw_test_input *in, uint64_t k)
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

static void dense_input(gw_test_input *in, const char *name, const float *v,
			size_t n, unsigned index)
{
	memset(in, 0, sizeof(*in));
	in->name = name;
	in->t = gw_test_dense_tensor(0x1000u + index, v, n);
	in->vals = v;
	in->n = in->dim = n;
	in->index = index;
}

static void sparse_input(gw_test_input *in, const gw_test_sparse *s, size_t nnz,
			 uint64_t dim, const uint64_t *k64, unsigned index)
{
	memset(in, 0, sizeof(*in));
	in->name = s->name;
	in->t = gw_test_sparse_tensor(0x2000u + index, dim,
				      k64 ? (const void *)k64 : s->keys,
				      k64 ? 64 : 32, s->vals, nnz);
	in->keys = s->keys;
	in->vals = s->vals;
	in->n = nnz;
	in->dim = dim;
	in->index = index;
	in->coarse = k64 != NULL;
}

static const char *const cnn_iter_names[GW_TEST_CNN_ITERS] = {
	"cnn iteration 1 (6 tensors)", "cnn iteration 10 (6 tensors)",
	"cnn iteration 100 (6 tensors)", "cnn iteration 135 (6 tensors)",
};

void gw_test_each_input(int id, int brief,
			void (*fn)(const gw_test_input *in, void *arg), void *arg)
{
	GW_TEST_NEED_TRACES();
	gw_test_input in;
	if (gw_test_codec_accepts(id, 0)) {
		for (int i = 0; !brief && i < GW_TEST_N_DENSE; i++) {
			gw_test_dense d;
			gw_test_load_dense(i, &d);
			dense_input(&in, d.name, d.v, d.n, (unsigned)i);
			fn(&in, arg);
			gw_test_dense_free(&d);
		}
		for (int it = brief ? 2 : 0; it < (brief ? 3 : GW_TEST_CNN_ITERS); it++) {
			size_t n;
			float *x = gw_test_load_cnn_iter(it, &n);
			dense_input(&in, cnn_iter_names[it], x, n,
				    GW_TEST_N_DENSE + (unsigned)it);
			fn(&in, arg);
			free(x);
		}
	}
	if (!gw_test_codec_accepts(id, 1))
		return;
	for (int i = brief ? 1 : 0; i < (brief ? 2 : GW_TEST_N_SPARSE); i++) {
		gw_test_sparse s;
		gw_test_load_sparse(i, &s);
		unsigned index = 100u + (unsigned)i;
		if (brief) {
			/* A quarter of the key space: still ~30k keys. */
			uint64_t dim = s.dim / 4;
			size_t nnz = (size_t)gw_test_lower_bound(
				&(gw_test_input){.keys = s.keys, .n = s.nnz}, dim);
			sparse_input(&in, &s, nnz, dim, NULL, index);
			fn(&in, arg);
		} else {
			sparse_input(&in, &s, s.nnz, s.dim, NULL, index);
			fn(&in, arg);
			/* 64-bit keys repeat the run on the same data: the key
			 * width matters at the frame edges, not at every budget. */
			uint64_t *k64 = gw_test_keys64(s.keys, s.nnz);
			sparse_input(&in, &s, s.nnz, s.dim, k64, index);
			fn(&in, arg);
			free(k64);
		}
		gw_test_sparse_free(&s);
	}
}

/* ---- budgets ------------------------------------------------------------------ */

size_t gw_test_budgets(int set, int min, size_t *out)
{
	/* A tiny budget, packet-ish sizes (1500 - 78: an MTU less IPv6/UDP
	 * and a tunnel; 1500 - GW_PKT_RESERVE, what the dataplane leaves),
	 * jumbo and the frame maximum; budgets above it: test_frame_header. */
	static const size_t all[] = {64, 100, 256, 1000, 1500 - 78,
				     1500 - GW_PKT_RESERVE, 4096, 9000, 65535};
	static const size_t coarse[] = {64, 100, 1500 - 78, 1500 - GW_PKT_RESERVE,
					9000, 65535};
	static const size_t brief[] = {1500 - GW_PKT_RESERVE};
	const size_t *list = set == GW_TEST_BUDGETS_ALL ? all
			     : set == GW_TEST_BUDGETS_COARSE ? coarse : brief;
	size_t n = set == GW_TEST_BUDGETS_ALL ? GW_ARRAY_SIZE(all)
		   : set == GW_TEST_BUDGETS_COARSE ? GW_ARRAY_SIZE(coarse)
						   : GW_ARRAY_SIZE(brief);
	size_t k = 0;
	size_t cand[2 + GW_ARRAY_SIZE(all)];
	cand[0] = (size_t)min;
	cand[1] = (size_t)min + 1;
	memcpy(cand + 2, list, n * sizeof(size_t));
	for (size_t i = set == GW_TEST_BUDGETS_BRIEF ? 2 : 0; i < n + 2; i++) {
		int seen = cand[i] < (size_t)min;
		for (size_t j = 0; j < k; j++)
			seen |= out[j] == cand[i];
		if (!seen)
			out[k++] = cand[i];
	}
	return k;
}

/* ---- the matrix ----------------------------------------------------------------- */

void gw_test_each_variant(int every_isa,
			  void (*fn)(const gw_test_variant *v, void *arg), void *arg)
{
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		const gw_test_codec *cd = gw_test_codec_of(ids[c]);
		const char *params[GW_TEST_MAX_VARIANTS];
		size_t nv = gw_test_variants(cd, params, GW_TEST_MAX_VARIANTS);
		int nisa = every_isa ? gw_test_isa_count(cd) : 1;
		for (int isa = 0; isa < nisa; isa++) {
			const char *isa_name = every_isa ? gw_test_isa(cd, isa) : "";
			for (size_t i = 0; i < nv; i++) {
				gw_test_variant v = {.id = ids[c], .codec = cd,
						     .params = params[i],
						     .first = i == 0 && isa == 0,
						     .brief = i > 0 && (cd->flags & GW_TEST_BRIEF)};
				int n = snprintf(v.name, sizeof(v.name), "%s%s%s%s%s%s",
						 cd->name, *isa_name ? " " : "", isa_name,
						 *params[i] ? " [" : "", params[i],
						 *params[i] ? "]" : "");
				GW_CHECK(n > 0, "snprintf");
				fn(&v, arg);
			}
		}
		if (every_isa)
			gw_test_isa(cd, -1);
	}
}

struct each {
	const gw_test_variant *v;
	int budget_set;
	void (*fn)(gw_test_case *c, void *arg);
	void *arg;
};

static void run_input(const gw_test_input *in, void *arg)
{
	const struct each *e = arg;
	const gw_test_variant *v = e->v;
	gw_test_case c = {.id = v->id, .codec = v->codec, .variant = v->params,
			  .in = in};
	c.enc = gw_test_encoder_with(v->id, v->params);
	if (gw_param_bounds(v->id, GW_PARAM_SEED, NULL) == 0 &&
	    !strstr(v->params, "seed="))
		GW_OK_CALL(gw_encoder_set_param(c.enc, GW_PARAM_SEED, 1000 + in->index));
	int min = gw_encode_min_budget(c.enc, &in->t);
	GW_CHECK(min >= (int)GW_BUDGET_MIN && min <= (int)GW_FRAME_MAX,
		 "%s on %s: min budget %d out of [64, 65535]", v->name, in->name, min);
	size_t budgets[16];
	int set = v->brief ? GW_TEST_BUDGETS_BRIEF
		  : in->coarse && e->budget_set == GW_TEST_BUDGETS_ALL
			  ? GW_TEST_BUDGETS_COARSE : e->budget_set;
	size_t nb = gw_test_budgets(set, min, budgets);
	for (size_t b = 0; b < nb; b++) {
		c.budget = budgets[b];
		snprintf(c.what, sizeof(c.what), "%s on %s (%s%s), budget %zu", v->name,
			 in->name, in->keys ? "sparse" : "dense",
			 in->keys && in->t.key_bits == 64 ? ", 64-bit keys" : "",
			 c.budget);
		int rc = gw_test_encode_all(c.enc, &in->t, c.budget, &c.fr);
		GW_CHECK(rc == 0, "%s: encode failed: %s", c.what, gw_error_name(rc));
		c.info = calloc(c.fr.n ? c.fr.n : 1, sizeof(*c.info));
		GW_CHECK(c.info, "out of memory");
		for (size_t j = 0; j < c.fr.n; j++) {
			rc = gw_frame_verify(c.fr.f[j].data, c.fr.f[j].len, &c.info[j]);
			GW_CHECK(rc == 0, "%s: frame %zu of %zu fails verify: %s", c.what,
				 j, c.fr.n, gw_error_name(rc));
		}
		e->fn(&c, e->arg);
		free(c.info);
		gw_test_frames_free(&c.fr);
	}
	gw_encoder_free(c.enc);
}

static void run_variant(const gw_test_variant *v, void *arg)
{
	struct each *e = arg;
	e->v = v;
	gw_test_each_input(v->id, v->brief, run_input, e);
}

void gw_test_each_case(int budget_set, void (*fn)(gw_test_case *c, void *arg),
		       void *arg)
{
	struct each e = {.budget_set = budget_set, .fn = fn, .arg = arg};
	gw_test_each_variant(0, run_variant, &e);
}
