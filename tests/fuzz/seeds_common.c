/* The kit make_corpus's seeders share (seeds_common.h): one generator
 * whose state every seed set resets, the synthetic tensors and their
 * frames, and the corpus files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codec_internal.h"
#include "seeds_common.h"

/* ---- deterministic synthetic data -------------------------------------- */

static uint64_t rng = 0x243f6a8885a308d3ull;

uint64_t mc_next_u64(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

void mc_reseed(const char *name)
{
	rng = 0x243f6a8885a308d3ull;
	for (const char *c = name; *c; c++)
		rng = (rng ^ (uint8_t)*c) * 0x100000001b3ull;
	if (!rng)
		rng = 1;
}

static float uniform(void)
{
	return (float)((mc_next_u64() >> 40) * 0x1p-24);
}

float mc_gradient(float scale)
{
	float s = 0;
	for (int i = 0; i < 4; i++)
		s += uniform();
	return (s - 2.0f) * scale;
}

void mc_fill_values(float *v, size_t n, enum special sp)
{
	for (size_t i = 0; i < n; i++)
		v[i] = sp == SP_ZERO ? 0.0f : mc_gradient(1e-3f);
	if (sp == SP_NONFINITE && n) {
		v[n / 2] = NAN;
		v[n / 3] = -INFINITY;
	}
	if (sp == SP_EDGES) {
		/* bf16 ties (even, odd), the bf16 overflow edge, denormals */
		static const float edges[] = {
			-0.0f, 0x1p-149f, -0x1p-140f, 0x1p-126f, 3.0e38f,
			-3.3e38f, 1.0f, 0x1.01p0f, 0x1.03p0f, -0x1.01p0f,
			0x1.0101p0f, 0x1.ffp127f, 0x1.fe8p127f, -0x1.fffffep127f};
		for (size_t i = 0; i < n; i++)
			if (mc_next_u64() % 3 == 0)
				v[i] = edges[mc_next_u64() % GW_ARRAY_SIZE(edges)];
	}
}

void mc_random_bytes(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(mc_next_u64() >> 56);
}

/* ---- files ------------------------------------------------------------- */

static const char *outdir;
static unsigned long written;

static void make_dir(const char *path)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		fprintf(stderr, "make_corpus: mkdir %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

void mc_write_file(const char *sub, const char *name, const void *data,
		   size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", outdir, sub);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	FILE *f = fopen(path, "wb");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
		fprintf(stderr, "make_corpus: write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	written++;
}

void mc_open_outdir(const char *dir)
{
	outdir = dir;
	make_dir(outdir);
}

unsigned long mc_written(void)
{
	return written;
}

/* ---- tensors ----------------------------------------------------------- */

void mc_tensor_free(struct tensor *s)
{
	free(s->vals);
	free(s->k32);
	free(s->k64);
}

struct tensor mc_make_dense(uint64_t dim, enum special sp)
{
	struct tensor s = {0};
	s.vals = malloc((dim ? dim : 1) * sizeof(float));
	if (!s.vals)
		abort();
	mc_fill_values(s.vals, dim, sp);
	s.t = (gw_tensor){.id = 7, .dim = dim, .values = s.vals};
	s.kind = "dense";
	return s;
}

struct tensor mc_make_sparse(uint64_t nnz, unsigned bits, uint64_t max_gap,
			     enum special sp)
{
	struct tensor s = {0};
	s.vals = malloc((nnz ? nnz : 1) * sizeof(float));
	if (!s.vals)
		abort();
	mc_fill_values(s.vals, nnz, sp);
	uint64_t k = bits == 64 ? (1ull << 33) + 12345 : mc_next_u64() % 100;
	if (bits == 64) {
		s.k64 = malloc((nnz ? nnz : 1) * sizeof(uint64_t));
		if (!s.k64)
			abort();
	} else {
		s.k32 = malloc((nnz ? nnz : 1) * sizeof(uint32_t));
		if (!s.k32)
			abort();
	}
	for (uint64_t i = 0; i < nnz; i++) {
		if (i)
			k += 1 + mc_next_u64() % max_gap;
		if (bits == 64 && i == nnz / 2 && i)
			k += (1ull << 32) + 77;
		if (bits == 64)
			s.k64[i] = k;
		else
			s.k32[i] = (uint32_t)k;
	}
	s.t = (gw_tensor){.id = 11, .dim = k + 1 + mc_next_u64() % 10,
			  .values = s.vals, .nnz = nnz, .key_bits = bits};
	s.t.keys = bits == 64 ? (const void *)s.k64 : (const void *)s.k32;
	s.kind = bits == 64 ? "sparse64" : "sparse32";
	return s;
}

/* ---- frames ------------------------------------------------------------ */

void mc_frames_free(struct frames *fr)
{
	for (size_t i = 0; i < fr->n; i++)
		free(fr->buf[i]);
	fr->n = 0;
}

bool mc_encode(int id, const gw_tensor *t, size_t budget, uint32_t max_elems,
	       bool ef, struct frames *fr)
{
	fr->n = 0;
	gw_encoder *enc = gw_encoder_create(id);
	if (!enc)
		abort();
	/* feedback needs dim floats: only for tensors that fit in memory */
	gw_ef *e = ef && t->dim <= (1u << 24) ? gw_ef_create(t->dim) : NULL;
	if (e && gw_encoder_set_ef(enc, e) < 0) {
		gw_ef_free(e);
		e = NULL;
	}
	if (max_elems)
		gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, max_elems);
	bool ok = gw_encode_begin(enc, t) == 0;
	uint8_t *buf = malloc(GW_FRAME_MAX);
	if (!buf)
		abort();
	int n;
	while (ok && fr->n < MAX_FRAMES && (n = gw_encode_next(enc, buf, budget)) != 0) {
		if (n < 0) {
			ok = false;
			break;
		}
		fr->buf[fr->n] = malloc((size_t)n);
		if (!fr->buf[fr->n])
			abort();
		memcpy(fr->buf[fr->n], buf, (size_t)n);
		fr->len[fr->n++] = (size_t)n;
	}
	free(buf);
	gw_encoder_free(enc);
	gw_ef_free(e);
	if (!ok)
		mc_frames_free(fr);
	return ok;
}

size_t mc_valid_frame(int id, int kind, uint64_t n, uint8_t *out)
{
	struct tensor s = kind == 0 ? mc_make_dense(n, SP_NONE)
				    : mc_make_sparse(n, kind == 1 ? 32 : 64, 10, SP_NONE);
	if (kind == 2) {
		/* one frame: no jump past 2^32 */
		for (uint64_t i = 0; i < n; i++)
			s.k64[i] = (1ull << 33) + 3 * i;
		s.t.dim = s.k64[n - 1] + 1;
	}
	struct frames fr;
	if (!mc_encode(id, &s.t, GW_FRAME_MAX, 0, false, &fr) || fr.n != 1) {
		fprintf(stderr, "make_corpus: cannot build a %d-entry frame of codec %d\n",
			(int)n, id);
		exit(1);
	}
	memcpy(out, fr.buf[0], fr.len[0]);
	size_t len = fr.len[0];
	mc_frames_free(&fr);
	mc_tensor_free(&s);
	return len;
}

