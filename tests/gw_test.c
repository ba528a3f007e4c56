/* Helpers shared by the cmocka unit tests (see gw_test.h). */
#include "gw_test.h"

#include <math.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

const char *const gw_test_dense_traces[GW_TEST_N_DENSE] = {
#define GW_CNN_ITER(it)                                                        \
	"cnn/it" it "_conv1.weight.f32", "cnn/it" it "_conv1.bias.f32",        \
	"cnn/it" it "_conv2.weight.f32", "cnn/it" it "_conv2.bias.f32",        \
	"cnn/it" it "_fc.weight.f32", "cnn/it" it "_fc.bias.f32"
	GW_CNN_ITER("001"), GW_CNN_ITER("010"), GW_CNN_ITER("100"),
	GW_CNN_ITER("135"),
#undef GW_CNN_ITER
};

const char *const gw_test_sparse_traces[GW_TEST_N_SPARSE] = {
	"logreg_spam/it001_weight",
	"logreg_spam/it010_weight",
	"logreg_spam/it050_weight",
};

const char *gw_test_traces_dir(void)
{
	const char *d = getenv("GW_TRACES");
	return d && *d ? d : NULL;
}

static char *trace_path(const char *rel, const char *suffix)
{
	const char *dir = gw_test_traces_dir();
	if (!dir)
		return NULL;
	size_t n = strlen(dir) + strlen(rel) + strlen(suffix) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s%s", dir, rel, suffix);
	return p;
}

/* Whether a trace file can be opened; names the first few missing ones. */
static int readable(const char *rel, const char *suffix, int *reported, int quiet)
{
	char *p = trace_path(rel, suffix);
	FILE *f = p ? fopen(p, "rb") : NULL;
	if (f)
		fclose(f);
	else if (!quiet && (*reported)++ < 3)
		fprintf(stderr, "  missing: %s\n", p ? p : rel);
	free(p);
	return f != NULL;
}

static int traces_present(int quiet)
{
	if (!gw_test_traces_dir())
		return 0;
	int ok = 1, reported = 0;
	for (int i = 0; i < GW_TEST_N_DENSE; i++)
		ok &= readable(gw_test_dense_traces[i], "", &reported, quiet);
	for (int i = 0; i < GW_TEST_N_SPARSE; i++) {
		ok &= readable(gw_test_sparse_traces[i], ".keys.u32", &reported, quiet);
		ok &= readable(gw_test_sparse_traces[i], ".vals.f32", &reported, quiet);
	}
	return ok;
}

void gw_test_require_traces(const char *prog)
{
	if (!gw_test_traces_dir()) {
		fprintf(stderr,
			"%s: SKIP: GW_TRACES is not set; it must name the directory "
			"of real gradient traces (cnn/, logreg_spam/), e.g. "
			"/work/shared/data/grads (meson sets it from -Dtraces_dir)\n",
			prog);
		exit(77);
	}
	if (!traces_present(0)) {
		fprintf(stderr, "%s: SKIP: trace files missing under GW_TRACES=%s\n",
			prog, gw_test_traces_dir());
		exit(77);
	}
}

void gw_test_init(const char *prog, int need_traces)
{
	if (need_traces)
		gw_test_require_traces(prog);
#ifdef __GLIBC__
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_TOP_PAD, 16 << 20);
#endif
}

int gw_test_have_traces(void)
{
	return traces_present(1);
}

static void *load_words(const char *path, size_t *n)
{
	*n = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return NULL;
	}
	uint8_t *buf = NULL;
	long sz = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		sz = ftell(f);
	if (sz < 0 || sz % 4 != 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: size %ld is not a multiple of 4\n", path, sz);
		goto out;
	}
	buf = malloc(sz ? (size_t)sz : 4);
	if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "%s: read failed\n", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	/* Files are little-endian; convert in place on big-endian hosts. */
	for (long i = 0; i < sz / 4; i++) {
		uint32_t v = gw_test_ld32(buf + 4 * i);
		memcpy(buf + 4 * i, &v, 4);
	}
	*n = (size_t)sz / 4;
out:
	fclose(f);
	return buf;
}

float *gw_test_load_f32(const char *path, size_t *n)
{
	return load_words(path, n);
}

uint32_t *gw_test_load_u32(const char *path, size_t *n)
{
	return load_words(path, n);
}

void gw_test_load_dense(int i, gw_test_dense *d)
{
	GW_CHECK(i >= 0 && i < GW_TEST_N_DENSE, "dense trace index %d", i);
	char *p = trace_path(gw_test_dense_traces[i], "");
	GW_CHECK(p, "GW_TRACES unset");
	d->name = gw_test_dense_traces[i];
	d->v = gw_test_load_f32(p, &d->n);
	free(p);
	GW_CHECK(d->v && d->n > 0, "cannot load dense trace %s", d->name);
}

void gw_test_load_sparse(int i, gw_test_sparse *s)
{
	GW_CHECK(i >= 0 && i < GW_TEST_N_SPARSE, "sparse trace index %d", i);
	char *pk = trace_path(gw_test_sparse_traces[i], ".keys.u32");
	char *pv = trace_path(gw_test_sparse_traces[i], ".vals.f32");
	GW_CHECK(pk && pv, "GW_TRACES unset");
	size_t nk = 0, nv = 0;
	s->name = gw_test_sparse_traces[i];
	s->keys = gw_test_load_u32(pk, &nk);
	s->vals = gw_test_load_f32(pv, &nv);
	free(pk);
	free(pv);
	s->dim = GW_TEST_SPARSE_DIM;
	s->nnz = nk;
	GW_CHECK(s->keys && s->vals && nk == nv && nk > 0,
		 "cannot load sparse trace %s (%zu keys, %zu values)", s->name,
		 nk, nv);
	for (size_t j = 0; j < nk; j++)
		GW_CHECK(s->keys[j] < s->dim && (j == 0 || s->keys[j] > s->keys[j - 1]),
			 "trace %s: key %zu (%u) not ascending below 2^20", s->name,
			 j, s->keys[j]);
}

void gw_test_dense_free(gw_test_dense *d)
{
	free(d->v);
	d->v = NULL;
}

void gw_test_sparse_free(gw_test_sparse *s)
{
	free(s->keys);
	free(s->vals);
	s->keys = NULL;
	s->vals = NULL;
}

void gw_test_each_trace(void (*dense)(const gw_test_dense *d, void *arg),
			void (*sparse)(const gw_test_sparse *s, void *arg), void *arg)
{
	for (int i = 0; dense && i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		dense(&d, arg);
		gw_test_dense_free(&d);
	}
	for (int i = 0; sparse && i < GW_TEST_N_SPARSE; i++) {
		gw_test_sparse s;
		gw_test_load_sparse(i, &s);
		sparse(&s, arg);
		gw_test_sparse_free(&s);
	}
}

float *gw_test_load_cnn_iter(int it, size_t *n)
{
	GW_CHECK(it >= 0 && it < GW_TEST_CNN_ITERS, "cnn iteration %d", it);
	float *all = malloc(GW_TEST_CNN_PARAMS * sizeof(float));
	GW_CHECK(all, "out of memory");
	size_t off = 0;
	for (int j = 0; j < GW_TEST_CNN_TENSORS; j++) {
		gw_test_dense d;
		gw_test_load_dense(it * GW_TEST_CNN_TENSORS + j, &d);
		GW_CHECK(off + d.n <= GW_TEST_CNN_PARAMS,
			 "cnn iteration %d has more than %u parameters", it,
			 GW_TEST_CNN_PARAMS);
		memcpy(all + off, d.v, d.n * sizeof(float));
		off += d.n;
		gw_test_dense_free(&d);
	}
	GW_CHECK(off == GW_TEST_CNN_PARAMS, "cnn iteration %d has %zu parameters, not %u",
		 it, off, GW_TEST_CNN_PARAMS);
	*n = off;
	return all;
}

gw_tensor gw_test_dense_tensor(uint32_t id, const float *v, uint64_t n)
{
	gw_tensor t = {0};
	t.id = id;
	t.dim = n;
	t.values = v;
	return t;
}

gw_tensor gw_test_sparse_tensor(uint32_t id, uint64_t dim, const void *keys,
				unsigned key_bits, const float *vals,
				uint64_t nnz)
{
	gw_tensor t = {0};
	t.id = id;
	t.dim = dim;
	t.keys = keys;
	t.key_bits = key_bits;
	t.values = vals;
	t.nnz = nnz;
	return t;
}

/* ---- frames -------------------------------------------------------------- */

int gw_test_encode_all(gw_encoder *enc, const gw_tensor *t, size_t budget,
		       gw_test_frames *out)
{
	out->f = NULL;
	out->n = 0;
	int rc = gw_encode_begin(enc, t);
	if (rc < 0)
		return rc;
	uint64_t total = t->keys ? t->nnz : t->dim;
	size_t cap = 0;
	size_t buflen = budget < GW_FRAME_MAX ? budget : GW_FRAME_MAX;
	/* The guarded buffer of the last call is kept for the next one of
	 * the same budget: a mapping per call costs the tests seconds. */
	static gw_test_guard g;
	if (!g.map || g.len != buflen) {
		gw_test_guard_free(&g);
		gw_test_guard_alloc(&g, buflen);
	}
	for (;;) {
		GW_CHECK(out->n <= total, "encoder emitted more frames (%zu) than "
			 "the tensor has elements (%llu)", out->n,
			 (unsigned long long)total);
		/* The encoder may be given more budget than the buffer holds
		 * only if it clamps to GW_FRAME_MAX, which the buffer honours. */
		rc = gw_encode_next(enc, g.p, budget);
		if (rc <= 0)
			break;
		GW_CHECK((size_t)rc <= buflen, "frame of %d bytes exceeds budget %zu",
			 rc, budget);
		if (out->n == cap) {
			cap = cap ? 2 * cap : 16;
			gw_test_frame *f = realloc(out->f, cap * sizeof(*f));
			GW_CHECK(f, "out of memory");
			out->f = f;
		}
		gw_test_frame *f = &out->f[out->n++];
		f->len = (size_t)rc;
		f->data = malloc(f->len);
		GW_CHECK(f->data, "out of memory");
		memcpy(f->data, g.p, f->len);
	}
	return rc < 0 ? rc : 0;
}

void gw_test_frames_free(gw_test_frames *fr)
{
	for (size_t i = 0; i < fr->n; i++)
		free(fr->f[i].data);
	free(fr->f);
	fr->f = NULL;
	fr->n = 0;
}

void gw_test_decode_all(const gw_test_frames *fr, float *out, uint64_t out_len)
{
	for (size_t i = 0; i < fr->n; i++) {
		int rc = gw_decode(fr->f[i].data, fr->f[i].len, out, out_len);
		GW_CHECK(rc > 0, "decoding frame %zu of %zu (%zu bytes) failed: %s",
			 i, fr->n, fr->f[i].len, gw_error_name(rc));
	}
}

static const float *top_v;

static int by_mag_desc(const void *a, const void *b)
{
	float x = fabsf(top_v[*(const uint32_t *)a]);
	float y = fabsf(top_v[*(const uint32_t *)b]);
	return x < y ? 1 : x > y ? -1 : 0;
}

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

float *gw_test_top_k_values(const float *v, size_t n, uint32_t k)
{
	uint32_t *idx = malloc((n ? n : 1) * sizeof(*idx));
	float *out = malloc((k ? k : 1) * sizeof(*out));
	GW_CHECK(idx && out, "out of memory");
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	top_v = v;
	qsort(idx, n, sizeof(*idx), by_mag_desc);
	qsort(idx, k, sizeof(*idx), by_u32);
	for (uint32_t i = 0; i < k; i++)
		out[i] = v[idx[i]];
	free(idx);
	return out;
}

/* ---- guarded memory ------------------------------------------------------ */

void gw_test_guard_alloc(gw_test_guard *g, size_t len)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	size_t data = (len + ps - 1) / ps * ps;
	if (!data)
		data = ps;
	g->map_len = data + ps;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	GW_CHECK(g->map != MAP_FAILED, "mmap of %zu bytes failed", g->map_len);
	uint8_t *guard = (uint8_t *)g->map + data;
	GW_CHECK(mprotect(guard, ps, PROT_NONE) == 0, "mprotect of guard page failed");
	g->p = guard - len;
	g->len = len;
}

void gw_test_guard_free(gw_test_guard *g)
{
	if (g->map && g->map != MAP_FAILED)
		munmap(g->map, g->map_len);
	g->map = NULL;
	g->p = NULL;
}

void gw_test_guard_copy(gw_test_guard *g, const void *src, size_t len)
{
	gw_test_guard_alloc(g, len);
	if (len)
		memcpy(g->p, src, len);
}

/* ---- PRNG / floats ---------------------------------------------------------- */

void gw_test_shuffle(gw_test_rng *r, size_t *idx, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)gw_test_below(r, i);
		size_t t = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = t;
	}
}

void gw_test_fill(float *out, size_t n, float v)
{
	for (size_t i = 0; i < n; i++)
		out[i] = v;
}

uint16_t gw_test_bf16_rne(float x)
{
	uint32_t u = gw_test_bits(x);
	if (isnan(x))
		return (uint16_t)((u >> 16) | 0x0040u);
	if (isinf(x))
		return (uint16_t)(u >> 16);
	/* The two bf16 neighbours of |x|: truncation and one step up (which
	 * may be the infinity, at distance 2^128 - |lo| as IEEE rounding says:
	 * overflow rounds as if the exponent range were unbounded). */
	uint32_t lo = u & 0xffff0000u;
	uint32_t hi = lo + 0x10000u;
	double dx = fabs((double)x);
	double dlo = fabs((double)gw_test_float(lo));
	double dhi = (hi & 0x7fffffffu) == 0x7f800000u
			     ? 0x1p128
			     : fabs((double)gw_test_float(hi));
	double below = dx - dlo, above = dhi - dx;   /* exact in double */
	if (below < above)
		return (uint16_t)(lo >> 16);
	if (below > above)
		return (uint16_t)(hi >> 16);
	return (uint16_t)(((lo >> 16) & 1u) ? hi >> 16 : lo >> 16);
}

/* ---- codecs -------------------------------------------------------------- */

int gw_test_codecs(int *ids)
{
	int all[GW_TEST_MAX_CODECS];
	int n = gw_codec_list(all, GW_TEST_MAX_CODECS), k = 0;
	GW_CHECK(n > 0 && n <= GW_TEST_MAX_CODECS, "gw_codec_list returned %d", n);
	for (int i = 0; i < n; i++) {
		GW_CHECK(gw_codec_name(all[i]) != NULL,
			 "listed codec id %d has no name", all[i]);
		/* Frames that decode into a sketch table, not the tensor, have
		 * their own tests (test_countsketch_*). */
		if (!(gw_codec_caps(all[i]) & GW_CODEC_TABLE))
			ids[k++] = all[i];
	}
	return k;
}

int gw_test_codecs_taking(int sparse, int *ids)
{
	int all[GW_TEST_MAX_CODECS];
	int n = gw_test_codecs(all), k = 0;
	for (int i = 0; i < n; i++)
		if (gw_test_codec_accepts(all[i], sparse))
			ids[k++] = all[i];
	return k;
}

int gw_test_codec_accepts(int id, int sparse)
{
	int caps = gw_codec_caps(id);
	GW_CHECK(caps >= 0, "gw_codec_caps(%d) failed: %s", id, gw_error_name(caps));
	return (caps & (sparse ? GW_CODEC_SPARSE : GW_CODEC_DENSE)) != 0;
}

gw_encoder *gw_test_encoder(int id)
{
	gw_encoder *e = gw_encoder_create(id);
	GW_CHECK(e, "gw_encoder_create(%d = %s) returned NULL", id,
		 gw_codec_name(id) ? gw_codec_name(id) : "?");
	return e;
}

gw_encoder *gw_test_encoder_with(int id, const char *params)
{
	gw_encoder *e = gw_test_encoder(id);
	if (params && *params) {
		int rc = gw_encoder_set_params(e, params);
		GW_CHECK(rc == 0, "%s: parameters \"%s\" refused: %s (%s)",
			 gw_codec_name(id), params, gw_error_detail(), gw_error_name(rc));
	}
	return e;
}

void gw_test_encode_with(int id, const char *params, const gw_tensor *t,
			 size_t budget, gw_test_frames *fr, const char *what)
{
	gw_encoder *enc = gw_test_encoder_with(id, params);
	int rc = gw_test_encode_all(enc, t, budget, fr);
	GW_CHECK(rc == 0, "%s: encoding %s at budget %zu failed: %s", gw_codec_name(id),
		 what, budget, gw_error_name(rc));
	gw_encoder_free(enc);
}

gw_encoder *gw_test_encoder_fraction(int id, const char *params, double f)
{
	if (gw_param_bounds(id, GW_PARAM_FRACTION, NULL) != 0 ||
	    (params && strstr(params, "fraction=")))
		return gw_test_encoder_with(id, params);
	char spec[512];
	int n = snprintf(spec, sizeof(spec), "%s%sfraction=%.17g", params ? params : "",
			 params && *params ? "," : "", f);
	GW_CHECK(n > 0 && (size_t)n < sizeof(spec), "parameters too long");
	gw_encoder *e = gw_test_encoder_with(id, spec);
	if (gw_encoder_check_params(e) == 0)
		return e;
	gw_encoder_free(e);   /* e.g. no sparsifier: no fraction either */
	return gw_test_encoder_with(id, params);
}

gw_ef *gw_test_ef_set(gw_encoder *enc, const float *e, uint64_t n)
{
	if (!e)
		return NULL;
	gw_ef *ef = gw_ef_create(n);
	GW_CHECK(ef, "gw_ef_create(%llu): out of memory", (unsigned long long)n);
	memcpy(gw_ef_data(ef), e, n * sizeof(float));
	int rc = gw_encoder_set_ef(enc, ef);
	GW_CHECK(rc == 0, "gw_encoder_set_ef: %s", gw_error_name(rc));
	return ef;
}

/* ---- forged frames ---------------------------------------------------------- */

static float forged_pattern(uint64_t i)
{
	return (float)i + 0.25f;
}

int gw_test_decode_forged(const uint8_t *frame, size_t len, uint64_t out_len,
			  int want, const char *what)
{
	gw_test_guard fg, og;
	gw_test_guard_copy(&fg, frame, len);
	gw_test_guard_alloc(&og, (size_t)out_len * sizeof(float));
	float *out = (float *)(void *)og.p;
	for (uint64_t i = 0; i < out_len; i++)
		out[i] = forged_pattern(i);
	int rc = gw_decode(fg.p, len, out, out_len);
	GW_CHECK(want == GW_TEST_ANY_RESULT || (want == GW_TEST_ANY_ERROR ? rc < 0 : rc == want),
		 "%s (%zu bytes into %llu outputs): gw_decode returned %d (%s), "
		 "expected %s", what, len, (unsigned long long)out_len, rc,
		 gw_error_name(rc),
		 want == GW_TEST_ANY_ERROR ? "an error" : gw_error_name(want));
	if (rc < 0)
		for (uint64_t i = 0; i < out_len; i++)
			GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(forged_pattern(i)),
				 "%s: rejected (%s) but element %llu changed", what,
				 gw_error_name(rc), (unsigned long long)i);
	gw_test_guard_free(&fg);
	gw_test_guard_free(&og);
	return rc;
}

/* ---- scratch ------------------------------------------------------------------- */

void *gw_test_scratch(unsigned slot, size_t bytes)
{
	static void *buf[16];
	static size_t cap[16];
	GW_CHECK(slot < 16, "scratch slot %u", slot);
	if (cap[slot] < bytes) {
		free(buf[slot]);
		buf[slot] = malloc(bytes);
		GW_CHECK(buf[slot], "out of memory (%zu bytes)", bytes);
		cap[slot] = bytes;
	}
	return buf[slot];
}

/* ---- keys -------------------------------------------------------------------- */

uint64_t *gw_test_keys64(const uint32_t *keys, size_t n)
{
	uint64_t *k = malloc((n ? n : 1) * sizeof(*k));
	GW_CHECK(k, "out of memory");
	for (size_t i = 0; i < n; i++)
		k[i] = keys[i];
	return k;
}

uint32_t gw_test_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

uint64_t gw_test_ld64(const uint8_t *p)
{
	return (uint64_t)gw_test_ld32(p) | (uint64_t)gw_test_ld32(p + 4) << 32;
}

void gw_test_st32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void gw_test_st64(uint8_t *p, uint64_t v)
{
	gw_test_st32(p, (uint32_t)v);
	gw_test_st32(p + 4, (uint32_t)(v >> 32));
}
