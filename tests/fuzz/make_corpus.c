/* Writes the seed corpora of the fuzz harnesses, one directory per harness:
 *
 *	make_corpus OUTDIR [NAME...]      seeds into OUTDIR/<name>/
 *	make_corpus --hostile OUTDIR      the golden hostile frames, as
 *	                                  committed in tests/fuzz/regress/
 *
 * NAME is a codec name (a decoder harness, fuzz_<codec>), "frame",
 * "roundtrip", "pkt", "libsvm", or another harness's name ("agg_rx",
 * "worker_rx": seeds_coll.c; the DeepReduce sections: seeds_dr_*.c);
 * without names, all of them.
 * Everything is built from synthetic tensors with a fixed seed, through the
 * public encoder, so the output is the same on every run and machine.
 *
 * Decoder seeds are valid frames of the codec — dense, sparse with 32-bit
 * and with 64-bit keys (one jump past 2^32), several budgets, with and
 * without max_frame_elems and error feedback — plus copies whose checksum
 * field holds control words of fuzz_common.c, which steer the re-sealing
 * step; countsketch gets slices of small tables and key sets besides
 * (seeds_countsketch()); hq gets frames of other params, on a shared
 * scale, and sum frames of three workers (seeds_hq()). Roundtrip seeds
 * follow the input layout of fuzz_roundtrip.c.
 * Packet seeds (fuzz_pkt.c) are valid DATA (plain, LAST, RETX, FRAME with
 * a real frame, the empty-tensor marker), ACK, UP and RESULT packets (real
 * frames, with and without a MAC, bitmaps of 1 to 255 bytes), copies whose
 * checksum field is a control word of fuzz_pkt.c, and the payload-length
 * limits (64 KiB each, so generated, not committed). LIBSVM seeds
 * (fuzz_libsvm.c) are text data sets with comments, blank lines, CRLF and
 * every number notation; the hand-written ones are committed in
 * regress/libsvm/. The MACs are random
 * bytes: the packet parser only makes room for them (the aggregation
 * layer, with the job key, verifies them).
 *
 * The hostile set: each file is a frame broken in one way, named
 * <what>.<GW_E code it must be rejected with> (or .ok), so regress_main
 * checks the exact code; the set of fuzz_pkt.c is packets (§5 of
 * docs/wire-format.md) broken the same way. Regenerate it only when the
 * format changes, and review the diff. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include <gw/sketch.h>

#include "codec_internal.h"
#include "delta_binary.h"
#include "seeds_dr.h"
#include "fuzz_coll.h"
#include "fuzz_common.h"
#include <gw/wire.h>

/* ---- deterministic synthetic data -------------------------------------- */

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_u64(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Every seed set starts from its own fixed state, so that writing one
 * harness's seeds gives the same files as writing all of them. */
static void reseed(const char *name)
{
	rng = 0x243f6a8885a308d3ull;
	for (const char *c = name; *c; c++)
		rng = (rng ^ (uint8_t)*c) * 0x100000001b3ull;
	if (!rng)
		rng = 1;
}

static float uniform(void)
{
	return (float)((next_u64() >> 40) * 0x1p-24);
}

/* roughly normal, gradient-like: sum of uniforms, times a scale */
static float gradient(float scale)
{
	float s = 0;
	for (int i = 0; i < 4; i++)
		s += uniform();
	return (s - 2.0f) * scale;
}

enum special {
	SP_NONE,      /* smooth gradient values */
	SP_NONFINITE, /* a NaN and an Inf in the middle */
	SP_EDGES,     /* -0, denormals, huge and tiny magnitudes */
	SP_ZERO,      /* all zero */
};

static void fill_values(float *v, size_t n, enum special sp)
{
	for (size_t i = 0; i < n; i++)
		v[i] = sp == SP_ZERO ? 0.0f : gradient(1e-3f);
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
			if (next_u64() % 3 == 0)
				v[i] = edges[next_u64() % GW_ARRAY_SIZE(edges)];
	}
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

static void write_file(const char *sub, const char *name, const void *data,
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

/* ---- tensors ----------------------------------------------------------- */

struct tensor {
	gw_tensor t;
	float *vals;
	uint32_t *k32;
	uint64_t *k64;
	const char *kind;   /* "dense", "sparse32", "sparse64" */
};

static void tensor_free(struct tensor *s)
{
	free(s->vals);
	free(s->k32);
	free(s->k64);
}

static struct tensor make_dense(uint64_t dim, enum special sp)
{
	struct tensor s = {0};
	s.vals = malloc((dim ? dim : 1) * sizeof(float));
	if (!s.vals)
		abort();
	fill_values(s.vals, dim, sp);
	s.t = (gw_tensor){.id = 7, .dim = dim, .values = s.vals};
	s.kind = "dense";
	return s;
}

/* keys with gaps below max_gap; key64 tensors start above 2^32 and take
 * one jump of more than 2^32, so encoders must split the span */
static struct tensor make_sparse(uint64_t nnz, unsigned bits, uint64_t max_gap,
				 enum special sp)
{
	struct tensor s = {0};
	s.vals = malloc((nnz ? nnz : 1) * sizeof(float));
	if (!s.vals)
		abort();
	fill_values(s.vals, nnz, sp);
	uint64_t k = bits == 64 ? (1ull << 33) + 12345 : next_u64() % 100;
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
			k += 1 + next_u64() % max_gap;
		if (bits == 64 && i == nnz / 2 && i)
			k += (1ull << 32) + 77;
		if (bits == 64)
			s.k64[i] = k;
		else
			s.k32[i] = (uint32_t)k;
	}
	s.t = (gw_tensor){.id = 11, .dim = k + 1 + next_u64() % 10,
			  .values = s.vals, .nnz = nnz, .key_bits = bits};
	s.t.keys = bits == 64 ? (const void *)s.k64 : (const void *)s.k32;
	s.kind = bits == 64 ? "sparse64" : "sparse32";
	return s;
}

/* ---- frames ------------------------------------------------------------ */

#define MAX_FRAMES 4096

struct frames {
	size_t n;
	uint8_t *buf[MAX_FRAMES];
	size_t len[MAX_FRAMES];
};

static void frames_free(struct frames *fr)
{
	for (size_t i = 0; i < fr->n; i++)
		free(fr->buf[i]);
	fr->n = 0;
}

/* All frames of t under codec id at budget; false if the codec refuses. */
static bool encode(int id, const gw_tensor *t, size_t budget, uint32_t max_elems,
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
		frames_free(fr);
	return ok;
}

/* Control words for fuzz_common.c's re-sealing step (see its comment). */
static uint32_t ctrl_words(const char *kind, uint32_t *w)
{
	uint32_t flags = !strcmp(kind, "dense") ? 1 : !strcmp(kind, "sparse32") ? 2 : 3;
	uint32_t shape = 2u << 3, start_small = 1u << 5, fix_keys = 1u << 16;
	uint32_t n = 0;
	w[n++] = flags | 4 | shape | start_small | fix_keys;            /* accepted */
	w[n++] = flags | 4 | shape | start_small | fix_keys | (1u << 6);/* one short */
	w[n++] = flags | 4 | (1u << 3) | start_small | (2u << 6) | (17u << 8);
	w[n++] = flags | 4 | (3u << 3) | start_small | (5u << 19);      /* cut */
	w[n++] = flags | 4 | (3u << 3) | start_small | (2u << 19);      /* grown */
	w[n++] = flags | 4 | shape | start_small | fix_keys | (1u << 22) | (3u << 6) |
		 (9u << 8);
	w[n++] = flags | 4 | shape | (1u << 17);                        /* out NULL */
	return n;
}

static void seeds_decoder(const char *name, int id)
{
	static const size_t budgets[] = {64, 100, 256, 1424, 8924};
	int caps = gw_codec_caps(id);
	char fname[256];
	unsigned variant = 0;
	reseed(name);
	for (int kind = 0; kind < 3; kind++) {
		if (!(caps & (kind ? GW_CODEC_SPARSE : GW_CODEC_DENSE)))
			continue;
		for (int sp = SP_NONE; sp <= SP_ZERO; sp++) {
			struct tensor s = kind == 0 ? make_dense(sp ? 300 : 3000, sp)
					: make_sparse(sp ? 60 : 600, kind == 1 ? 32 : 64,
						      40, sp);
			for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
				if (sp && b != 1 && b != 3)
					continue;
				struct frames fr;
				bool ef = b == 2;
				uint32_t max_elems = b == 4 ? 500 : 0;
				if (!encode(id, &s.t, budgets[b], max_elems, ef, &fr))
					continue;
				/* first, second and last frame */
				size_t pick[3] = {0, 1, fr.n - 1};
				for (int p = 0; p < 3; p++) {
					size_t i = pick[p];
					if (i >= fr.n || (p == 2 && fr.n - 1 <= 1))
						continue;
					snprintf(fname, sizeof(fname), "%s-%s-sp%d-b%zu-f%zu",
						 name, s.kind, sp, budgets[b], i);
					write_file(name, fname, fr.buf[i], fr.len[i]);
				}
				/* control-word copies of the first frame */
				uint32_t w[16];
				uint32_t nw = ctrl_words(s.kind, w);
				uint8_t *c = fr.buf[0];
				for (uint32_t j = 0; j < nw; j++) {
					if ((variant++ % 3) && j)
						continue;
					gw_fuzz_st32(c + GW_FUZZ_OFF_CHECKSUM, w[j]);
					snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s-sp%d-b%zu",
						 w[j], name, s.kind, sp, budgets[b]);
					write_file(name, fname, c, fr.len[0]);
				}
				frames_free(&fr);
			}
			tensor_free(&s);
		}
	}
	/* short inputs */
	static const uint8_t hdr[] = {'G', 'W', 1};
	write_file(name, "short-3", hdr, sizeof(hdr));
	write_file(name, "empty", "", 0);
}

/* countsketch beyond seeds_decoder(), whose default table (5 x 16384
 * cells) outgrows the outputs the harness allocates: slices of small
 * tables, and key sets (gw_keyset_encode) with and without values, with
 * 32- and 64-bit keys; then copies of each with byte 35 (the selector of
 * fuzz_countsketch.c, the top byte of fuzz_common.c's control word) set. */
static void seeds_countsketch(void)
{
	static const struct {
		uint32_t rows, cols, dim;
		size_t budget;
	} tables[] = {
		{1, 1, 1, 64}, {3, 10, 50, 100}, {5, 328, 20480, 1424},
		{16, 64, 300, 256}, {2, 4096, 100, 8924},
	};
	char fname[128];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	if (!buf)
		abort();
	reseed("countsketch-extra");
	for (size_t t = 0; t < GW_ARRAY_SIZE(tables); t++) {
		struct tensor s = make_dense(tables[t].dim, t == 3 ? SP_NONFINITE : SP_NONE);
		gw_encoder *enc = gw_encoder_create(GW_CODEC_COUNTSKETCH);
		if (!enc || gw_encoder_set_param(enc, GW_PARAM_ROWS, tables[t].rows) < 0 ||
		    gw_encoder_set_param(enc, GW_PARAM_COLS, tables[t].cols) < 0 ||
		    gw_encoder_set_param(enc, GW_PARAM_SEED, (double)t) < 0 ||
		    gw_encode_begin(enc, &s.t) < 0)
			abort();
		int n;
		for (unsigned f = 0; (n = gw_encode_next(enc, buf, tables[t].budget)) > 0; f++) {
			if (f > 2 && f % 16)
				continue;
			snprintf(fname, sizeof(fname), "cs-slice-%ux%u-f%u", tables[t].rows,
				 tables[t].cols, f);
			write_file("countsketch", fname, buf, (size_t)n);
			buf[GW_FUZZ_OFF_CHECKSUM + 3] = (uint8_t)(f % 8);
			snprintf(fname, sizeof(fname), "cs-slice-%ux%u-f%u-sel%u",
				 tables[t].rows, tables[t].cols, f, f % 8);
			write_file("countsketch", fname, buf, (size_t)n);
		}
		if (n < 0)
			abort();
		gw_encoder_free(enc);
		tensor_free(&s);
	}
	static const uint32_t counts[] = {1, 2, 5, 100, 3000};
	for (size_t c = 0; c < GW_ARRAY_SIZE(counts); c++)
		for (int bits = 32; bits <= 64; bits += 32) {
			uint32_t n = counts[c];
			struct tensor s = make_sparse(n, (unsigned)bits, c == 3 ? 70000 : 40,
						      c == 2 ? SP_EDGES : SP_NONE);
			uint64_t *k = malloc(n * sizeof(uint64_t));
			if (!k)
				abort();
			/* one frame: no jump of 2^32 (make_sparse puts one in
			 * the middle of 64-bit keys) */
			for (uint32_t i = 0; i < n; i++)
				k[i] = bits == 64 ? (1ull << 33) + 3 * (uint64_t)i : s.k32[i];
			for (int v = 0; v < 2; v++) {
				int len = gw_keyset_encode(5, k, v ? s.vals : NULL, n, buf,
							   GW_FRAME_MAX);
				if (len < 0)
					abort();
				snprintf(fname, sizeof(fname), "cs-keys%d-n%u-%s", bits, n,
					 v ? "values" : "keys");
				write_file("countsketch", fname, buf, (size_t)len);
				buf[GW_FUZZ_OFF_CHECKSUM + 3] = (uint8_t)(c + v);
				snprintf(fname, sizeof(fname), "cs-keys%d-n%u-%s-sel%zu", bits,
					 n, v ? "values" : "keys", c + v);
				write_file("countsketch", fname, buf, (size_t)len);
			}
			free(k);
			tensor_free(&s);
		}
	free(buf);
}

/* deepreduce beyond seeds_decoder(), which sees only the default
 * combination: two frames of every index codec (Bloom under each policy)
 * with every value codec, from a gradient-like tensor's top 20%. */
static void seeds_deepreduce(void)
{
	static const char *idx[] = {"raw", "rle", "delta", "bloom,policy=p0",
				    "bloom,policy=p1", "bloom,policy=p2"};
	static const char *val[] = {"f32", "deflate", "qsgd", "poly", "dexp"};
	char spec[96], fname[128];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	if (!buf)
		abort();
	reseed("deepreduce-extra");
	struct tensor s = make_dense(2000, SP_NONE);
	for (size_t i = 0; i < GW_ARRAY_SIZE(idx); i++)
		for (size_t v = 0; v < GW_ARRAY_SIZE(val); v++) {
			snprintf(spec, sizeof(spec), "deepreduce:index=%s,value=%s,fraction=0.2,fpr=0.05",
				 idx[i], val[v]);
			if (i < 3)   /* fpr belongs to the Bloom filter only */
				*strstr(spec, ",fpr=") = '\0';
			gw_encoder *enc = gw_encoder_from_string(spec);
			if (!enc || gw_encode_begin(enc, &s.t) < 0)
				abort();
			int n;
			for (unsigned f = 0; f < 2 && (n = gw_encode_next(enc, buf, 600)) > 0; f++) {
				snprintf(fname, sizeof(fname), "dr-%zu-%zu-f%u", i, v, f);
				write_file("deepreduce", fname, buf, (size_t)n);
			}
			gw_encode_abandon(enc);
			gw_encoder_free(enc);
		}
	tensor_free(&s);
	free(buf);
}

/* hq beyond seeds_decoder(), which sees only the defaults: workers' frames
 * under other params, on their own scale and on a shared one, and a
 * shard's sum frames of three workers (gw_sum_add, gw_sum_encode), one
 * poisoned, one as wide as 32 bits; then copies with byte 35 (the
 * selector of fuzz_hq.c's gw_sum_add step) set. */
static void hq_write(const char *what, unsigned f, uint8_t *buf, size_t len)
{
	char fname[128];
	snprintf(fname, sizeof(fname), "hq-%s-f%u", what, f);
	write_file("hq", fname, buf, len);
	uint8_t sel = (uint8_t)(next_u64() % 16);
	buf[GW_FUZZ_OFF_CHECKSUM + 3] = sel;
	snprintf(fname, sizeof(fname), "hq-%s-f%u-sel%u", what, f, sel);
	write_file("hq", fname, buf, len);
	gw_frame_seal(buf, len);
}

static void seeds_hq(void)
{
	static const char *params[] = {"rotate=0", "bits=2", "bits=3", "bits=8",
				       "bits=2,rotate=0", "bits=5,rounding=stochastic"};
	static const size_t budgets[] = {100, 600, 2000};
	enum { W = 3 };
	char spec[96], what[96];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	uint8_t *wf[W];
	int wlen[W];
	int32_t *acc = malloc(GW_FRAME_MAX * 8 * sizeof(int32_t));
	if (!buf || !acc)
		abort();
	for (int w = 0; w < W; w++)
		if (!(wf[w] = malloc(GW_FRAME_MAX)))
			abort();
	reseed("hq-extra");
	/* workers' frames on their own scale */
	for (size_t p = 0; p < GW_ARRAY_SIZE(params); p++) {
		struct tensor s = make_dense(700, p % 3 == 2 ? SP_EDGES : SP_NONE);
		snprintf(spec, sizeof(spec), "hq:%s", params[p]);
		gw_encoder *enc = gw_encoder_from_string(spec);
		if (!enc || gw_encode_begin(enc, &s.t) < 0)
			abort();
		int n;
		for (unsigned f = 0; f < 2 && (n = gw_encode_next(enc, buf, budgets[p % 3])) > 0;
		     f++) {
			snprintf(what, sizeof(what), "own-%zu", p);
			hq_write(what, f, buf, (size_t)n);
		}
		gw_encode_abandon(enc);
		gw_encoder_free(enc);
		tensor_free(&s);
	}
	/* W workers on a shared scale and seed, and their sums */
	static const char *sum_params[] = {"", "rotate=0", "bits=2", "bits=8"};
	for (size_t p = 0; p < GW_ARRAY_SIZE(sum_params); p++)
		for (int poison = 0; poison < 2; poison++) {
			struct tensor s[W];
			gw_encoder *enc[W];
			for (int w = 0; w < W; w++) {
				s[w] = make_dense(300, poison && w == 1 ? SP_NONFINITE : SP_NONE);
				snprintf(spec, sizeof(spec), "hq%s%s", *sum_params[p] ? ":" : "",
					 sum_params[p]);
				enc[w] = gw_encoder_from_string(spec);
				if (!enc[w] || gw_encode_begin(enc[w], &s[w].t) < 0)
					abort();
			}
			for (unsigned f = 0; f < 3; f++) {
				float scale = f == 1 ? 1e-3f : 4e-3f;
				for (int w = 0; w < W; w++) {
					if (gw_encoder_set_shared(enc[w], scale, 1000 + f) < 0)
						abort();
					wlen[w] = gw_encode_next(enc[w], wf[w], 120);
					if (wlen[w] < 0 || (wlen[w] == 0) != (wlen[0] == 0))
						abort();
				}
				if (!wlen[0])
					break;   /* 2 bits: two frames hold it */
				gw_frame_info fi;
				if (gw_frame_peek(wf[0], (size_t)wlen[0], &fi) < 0)
					abort();
				memset(acc, 0, fi.count * sizeof(int32_t));
				gw_sum_info si, sum;
				for (int w = 0; w < W; w++) {
					if (gw_sum_add(wf[w], (size_t)wlen[w], acc, fi.start, fi.count,
						       &si) != (int)fi.count)
						abort();
					if (!w)
						sum = si;
					sum.next = GW_MAX(sum.next, si.next);
					sum.poisoned |= si.poisoned;
				}
				snprintf(what, sizeof(what), "shared-%zu-%d", p, poison);
				hq_write(what, f, wf[0], (size_t)wlen[0]);
				sum.contributors = W;
				int n = gw_sum_encode(buf, GW_FRAME_MAX, 11, fi.start, acc, fi.count,
						      &sum);
				if (n <= 0)
					abort();
				snprintf(what, sizeof(what), "sum-%zu-%d", p, poison);
				hq_write(what, f, buf, (size_t)n);
				/* as if 2^22 - 1 such sums were summed again */
				for (uint32_t i = 0; i < fi.count; i++)
					acc[i] *= (1 << 22) - 1;
				sum.contributors *= (1u << 22) - 1;
				n = gw_sum_encode(buf, GW_FRAME_MAX, 11, fi.start, acc, fi.count, &sum);
				if (n <= 0)
					abort();
				snprintf(what, sizeof(what), "wide-%zu-%d", p, poison);
				hq_write(what, f, buf, (size_t)n);
			}
			for (int w = 0; w < W; w++) {
				gw_encode_abandon(enc[w]);
				gw_encoder_free(enc[w]);
				tensor_free(&s[w]);
			}
		}
	for (int w = 0; w < W; w++)
		free(wf[w]);
	free(acc);
	free(buf);
}

static void seeds_frame(void)
{
	int ids[256];
	int n = gw_codec_list(ids, 256);
	char fname[256];
	reseed("frame");
	for (int i = 0; i < n && i < 256; i++) {
		int caps = gw_codec_caps(ids[i]);
		for (int kind = 0; kind < 3; kind++) {
			if (!(caps & (kind ? GW_CODEC_SPARSE : GW_CODEC_DENSE)))
				continue;
			struct tensor s = kind == 0 ? make_dense(200, SP_NONE)
					: make_sparse(40, kind == 1 ? 32 : 64, 50, SP_NONE);
			struct frames fr;
			if (encode(ids[i], &s.t, 256, 0, false, &fr)) {
				snprintf(fname, sizeof(fname), "%s-%s",
					 gw_codec_name(ids[i]), s.kind);
				write_file("frame", fname, fr.buf[0], fr.len[0]);
				/* steered: magic/version forced, fitted, sealed */
				uint8_t *c = fr.buf[0];
				gw_fuzz_st32(c + GW_FUZZ_OFF_CHECKSUM, 0x1f);
				c[GW_FUZZ_OFF_CODEC] = (uint8_t)(200 + i);
				snprintf(fname, sizeof(fname), "ctrl-%s-%s-codec%d",
					 gw_codec_name(ids[i]), s.kind, 200 + i);
				write_file("frame", fname, c, fr.len[0]);
				frames_free(&fr);
			}
			tensor_free(&s);
		}
	}
	uint8_t hdr[GW_FRAME_HDR_LEN] = {'G', 'W', 1, 1};
	write_file("frame", "header-only", hdr, sizeof(hdr));
}

/* fuzz_roundtrip.c's layout: mode, budget (2), max_elems-1, ef codec,
 * then values (dense) or (gap, value) entries (sparse). */
static void seeds_roundtrip(void)
{
	static const struct {
		uint8_t mode;
		uint16_t budget;
		uint8_t max_elems;
		unsigned n;
		enum special sp;
	} cases[] = {
		{0x00, 64, 0, 64, SP_NONE},
		{0x00, 1424, 0, 2000, SP_NONE},
		{0x04, 100, 0, 300, SP_NONE},      /* error feedback */
		{0x0c, 8924, 9, 1000, SP_NONE},    /* feedback, max_frame_elems 10 */
		{0x00, 200, 0, 100, SP_NONFINITE},
		{0x00, 200, 0, 100, SP_EDGES},
		{0x10, 1000, 0, 500, SP_NONE},     /* budget above GW_FRAME_MAX */
		{0x00, 10, 0, 50, SP_NONE},        /* budget below the minimum */
		{0x01, 64, 0, 50, SP_NONE},
		{0x01, 1424, 0, 1500, SP_NONE},
		{0x25, 256, 0, 200, SP_NONE},      /* sparse32, feedback, extra dim */
		{0x02, 100, 0, 100, SP_EDGES},
		{0x06, 300, 0, 300, SP_NONE},
		{0x0a, 1424, 4, 300, SP_NONFINITE},
		{0x03, 100, 0, 200, SP_NONE},      /* gaps past 2^32 */
		{0x03, 8924, 0, 1000, SP_NONE},
		{0x00, 64, 0, 0, SP_NONE},         /* empty tensor */
		{0x01, 64, 0, 0, SP_NONE},
	};
	char fname[64];
	reseed("roundtrip");
	for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
		bool sparse = cases[c].mode & 3;
		bool huge = (cases[c].mode & 3) == 3;
		unsigned n = cases[c].n;
		size_t len = 5 + (size_t)n * (sparse ? 5 : 4);
		uint8_t *b = malloc(len);
		float *v = malloc((n ? n : 1) * sizeof(float));
		if (!b || !v)
			abort();
		fill_values(v, n, cases[c].sp);
		b[0] = cases[c].mode;
		b[1] = (uint8_t)cases[c].budget;
		b[2] = (uint8_t)(cases[c].budget >> 8);
		b[3] = cases[c].max_elems;
		/* feedback codec; with feedback, also frame losses */
		b[4] = (uint8_t)((c % 16) | ((cases[c].mode & 4) ? (c % 4) << 4 : 0));
		for (unsigned i = 0; i < n; i++) {
			uint32_t u;
			memcpy(&u, &v[i], 4);
			if (sparse) {
				uint8_t gap = (uint8_t)(next_u64() % 32);
				if (huge && i % 50 == 49)
					gap = (uint8_t)(0xf8 + next_u64() % 8);
				b[5 + 5 * (size_t)i] = gap;
				gw_fuzz_st32(b + 5 + 5 * (size_t)i + 1, u);
			} else {
				gw_fuzz_st32(b + 5 + 4 * (size_t)i, u);
			}
		}
		snprintf(fname, sizeof(fname), "rt-%02zu-mode%02x-b%u-n%u", c,
			 cases[c].mode, cases[c].budget, n);
		write_file("roundtrip", fname, b, len);
		free(b);
		free(v);
	}
}

/* ---- hostile frames ----------------------------------------------------- */

/* A valid frame of codec id: dense (kind 0) or sparse with 32/64-bit keys. */
static size_t valid_frame(int id, int kind, uint64_t n, uint8_t *out)
{
	struct tensor s = kind == 0 ? make_dense(n, SP_NONE)
				    : make_sparse(n, kind == 1 ? 32 : 64, 10, SP_NONE);
	if (kind == 2) {
		/* one frame: no jump past 2^32 */
		for (uint64_t i = 0; i < n; i++)
			s.k64[i] = (1ull << 33) + 3 * i;
		s.t.dim = s.k64[n - 1] + 1;
	}
	struct frames fr;
	if (!encode(id, &s.t, GW_FRAME_MAX, 0, false, &fr) || fr.n != 1) {
		fprintf(stderr, "make_corpus: cannot build a %d-entry frame of codec %d\n",
			(int)n, id);
		exit(1);
	}
	memcpy(out, fr.buf[0], fr.len[0]);
	size_t len = fr.len[0];
	frames_free(&fr);
	tensor_free(&s);
	return len;
}

/* true while writing fuzz_frame's set: it only verifies, so a frame that
 * only gw_decode() rejects is "ok" there */
static bool header_only;

/* code for a decoder harness, "ok" for fuzz_frame */
static const char *dec(const char *code)
{
	return header_only ? "ok" : code;
}

static void put_hostile(const char *harness, const char *what, const char *code,
			uint8_t *f, size_t len, bool seal)
{
	if (seal && len >= GW_FRAME_HDR_LEN)
		gw_frame_seal(f, len);
	char fname[256];
	snprintf(fname, sizeof(fname), "%s.%s", what, code);
	write_file(harness, fname, f, len);
}

static void hostile_common(const char *harness, int id)
{
	uint8_t f[GW_FRAME_MAX + 16];
	size_t len;
	uint8_t *fl = f + GW_FUZZ_OFF_FLAGS;

	len = valid_frame(id, 0, 8, f);
	put_hostile(harness, "valid-dense", "ok", f, len, false);
	put_hostile(harness, "empty", "GW_ETRUNC", f, 0, false);
	put_hostile(harness, "truncated-header", "GW_ETRUNC", f, 20, false);
	put_hostile(harness, "truncated-payload", "GW_ETRUNC", f, len - 1, false);
	f[len] = 0;
	put_hostile(harness, "trailing-byte", "GW_ELENGTH", f, len + 1, false);

	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 0xffffffffu);
	put_hostile(harness, "huge-payload-len", "GW_ELENGTH", f, len, true);

	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN,
		     gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) + 4);
	put_hostile(harness, "payload-len-past-buffer", "GW_ETRUNC", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 255;
	put_hostile(harness, "param-len-past-buffer", "GW_ETRUNC", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[0] = 'g';
	put_hostile(harness, "bad-magic", "GW_EMAGIC", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_VERSION] = 2;
	put_hostile(harness, "version-2", "GW_EVERSION", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_RESERVED] = 1;
	put_hostile(harness, "reserved-byte", "GW_ERESERVED", f, len, true);

	len = valid_frame(id, 0, 8, f);
	fl[1] = 0x80;
	put_hostile(harness, "reserved-flag", "GW_ERESERVED", f, len, true);

	len = valid_frame(id, 0, 8, f);
	fl[0] = GW_FF_KEY64;
	put_hostile(harness, "key64-without-sparse", "GW_ERESERVED", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_CODEC] = 0;
	put_hostile(harness, "codec-0", "GW_ECODEC", f, len, true);
	f[GW_FUZZ_OFF_CODEC] = 255;
	put_hostile(harness, "codec-255", "GW_ECODEC", f, len, true);

	len = valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_CHECKSUM] ^= 1;
	put_hostile(harness, "checksum-flipped", "GW_ECHECKSUM", f, len, false);
	len = valid_frame(id, 0, 8, f);
	f[len - 1] ^= 0x40;
	put_hostile(harness, "payload-bit-flip", "GW_ECHECKSUM", f, len, false);

	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0);
	put_hostile(harness, "dense-count-0", "GW_ELENGTH", f, len, true);

	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 9);
	put_hostile(harness, "dense-span-not-count", "GW_ELENGTH", f, len, true);

	/* start + span wraps around 2^64 */
	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, UINT64_MAX - 3);
	put_hostile(harness, "start-wraps", "GW_ERANGE", f, len, true);

	/* count far beyond the payload: caught by the output range first */
	len = valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0xffffffffu);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0xffffffffu);
	put_hostile(harness, "dense-count-overflow", dec("GW_ERANGE"), f, len, true);

	len = valid_frame(id, 1, 8, f);
	put_hostile(harness, "valid-sparse32", "ok", f, len, false);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 7);
	put_hostile(harness, "sparse-count-above-span", "GW_ELENGTH", f, len, true);

	/* count whose payload size, multiplied in 32 bits, wraps around to
	 * the real payload_len: such a decoder would read ~2^29 entries */
	len = valid_frame(id, 1, 1, f);
	uint32_t per = gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN);
	uint64_t low = per & (0u - per);   /* gcd(per, 2^32) */
	uint64_t wrap = low > 1 ? (1ull << 32) / low + 1 : 0xffffffffull;
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, (uint32_t)wrap);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0xffffffffu);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, 0);
	put_hostile(harness, "sparse-count-wraps-32bit", dec("GW_ELENGTH"), f, len,
		    true);

	/* keys above 2^33: no output the harness allocates holds them */
	len = valid_frame(id, 2, 8, f);
	put_hostile(harness, "sparse64-beyond-output", dec("GW_ERANGE"), f, len,
		    false);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, UINT64_MAX - 2);
	put_hostile(harness, "sparse64-start-wraps", "GW_ERANGE", f, len, true);

	/* count 0: "nothing in this range", valid */
	len = valid_frame(id, 1, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 0);
	f[GW_FUZZ_OFF_PARAM_LEN] = (uint8_t)(id == GW_CODEC_INT8 ? 4 : 0);
	len = GW_FRAME_HDR_LEN + f[GW_FUZZ_OFF_PARAM_LEN];
	put_hostile(harness, "sparse-count-0", "ok", f, len, true);
}

/* Sparse key sections of the codecs whose payload is keys + values. */
static void hostile_keys(const char *harness, int id)
{
	uint8_t f[1024];
	size_t len = valid_frame(id, 1, 8, f);
	uint8_t *keys = f + GW_FRAME_HDR_LEN + f[GW_FUZZ_OFF_PARAM_LEN];
	uint8_t save[32];
	memcpy(save, keys, 32);

	memcpy(keys, save + 4, 4);
	memcpy(keys + 4, save, 4);
	put_hostile(harness, "keys-unsorted", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	memcpy(keys + 8, keys + 4, 4);
	put_hostile(harness, "keys-duplicate", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	gw_fuzz_st32(keys, gw_fuzz_ld32(keys) - 1);
	put_hostile(harness, "key-below-start", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	gw_fuzz_st32(keys + 28, gw_fuzz_ld32(f + GW_FUZZ_OFF_SPAN) +
				       (uint32_t)gw_fuzz_ld64(f + GW_FUZZ_OFF_START));
	put_hostile(harness, "key-at-span-end", "GW_ECORRUPT", f, len, true);
}

/* hq (§4.11.2): each rule broken once, on a valid 8-value frame (4-bit
 * codes, rotated) or, for the padding, a 7-value one. */
static void hostile_hq(void)
{
	uint8_t f[1024];
	uint8_t *p = f + GW_FRAME_HDR_LEN;
	size_t len;
	reseed("hostile-hq");
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	put_hostile("hq", "valid-dense", "ok", f, len, false);
	p[2] |= 0x4;
	put_hostile("hq", "poisoned", "ok", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] |= 0x2;
	put_hostile("hq", "sum-of-1", "ok", f, len, true);
	gw_fuzz_st32(p + 4, 0);
	put_hostile("hq", "sum-of-0", "GW_ECORRUPT", f, len, true);
	gw_fuzz_st32(p + 4, 1);
	p[1] = 33;
	put_hostile("hq", "sum-width-33", "GW_ECORRUPT", f, len, true);

	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 19;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) + 1);
	put_hostile("hq", "params-19", "GW_ELENGTH", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] |= 0x8;
	p[0] = 9;
	put_hostile("hq", "reserved-flag-and-bits-9", "GW_ERESERVED", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[3] = 1;
	put_hostile("hq", "reserved-byte", "GW_ERESERVED", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[0] = p[1] = 9;
	put_hostile("hq", "bits-9", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[1] = 5;
	put_hostile("hq", "width-not-bits", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	gw_fuzz_st32(p + 4, 2);
	put_hostile("hq", "worker-of-2", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] &= (uint8_t)~0x1;
	gw_fuzz_st32(p + 8, 5);
	put_hostile("hq", "seed-unrotated", "GW_ECORRUPT", f, len, true);
	static const struct {
		const char *what;
		unsigned at;
		uint32_t bits;
	} mags[] = {
		{"scale-minus-zero", 12, 0x80000000u}, {"scale-nan", 12, 0x7fc00000u},
		{"scale-inf", 12, 0x7f800000u},        {"scale-negative", 12, 0xbf800000u},
		{"next-minus-zero", 16, 0x80000000u},  {"next-inf", 16, 0x7f800000u},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(mags); i++) {
		len = valid_frame(GW_CODEC_HQ, 0, 8, f);
		gw_fuzz_st32(p + mags[i].at, mags[i].bits);
		put_hostile("hq", mags[i].what, "GW_ECORRUPT", f, len, true);
	}
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) - 1);
	put_hostile("hq", "payload-short", "GW_ELENGTH", f, len - 1, true);
	len = valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[20] = (uint8_t)((p[20] & 0xf0) | 0x8);
	put_hostile("hq", "code-minus-8", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_HQ, 0, 7, f);
	f[len - 1] |= 0x80;
	put_hostile("hq", "padding-bit", "GW_ECORRUPT", f, len, true);
}

static void hostile_pkt(void);

static void hostile(void)
{
	uint8_t f[1024];
	size_t len;
	reseed("hostile");
	hostile_common("raw", GW_CODEC_RAW);
	hostile_keys("raw", GW_CODEC_RAW);
	len = valid_frame(GW_CODEC_RAW, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 4;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 28);
	put_hostile("raw", "params-not-allowed", "GW_ELENGTH", f, len, true);
	len = valid_frame(GW_CODEC_RAW, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 7);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 7);
	put_hostile("raw", "payload-not-4-per-value", "GW_ELENGTH", f, len, true);

	hostile_common("bf16", GW_CODEC_BF16);
	hostile_keys("bf16", GW_CODEC_BF16);
	len = valid_frame(GW_CODEC_BF16, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 15);
	put_hostile("bf16", "odd-payload", "GW_ELENGTH", f, len - 1, true);

	hostile_common("int8", GW_CODEC_INT8);
	hostile_keys("int8", GW_CODEC_INT8);
	static const struct {
		const char *what, *code;
		float scale;
	} scales[] = {
		{"scale-negative", "GW_ECORRUPT", -1.0f},
		{"scale-inf", "GW_ECORRUPT", INFINITY},
		{"scale-minus-inf", "GW_ECORRUPT", -INFINITY},
		{"scale-nan-poisoned", "ok", NAN},
		{"scale-minus-zero", "ok", -0.0f},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(scales); i++) {
		len = valid_frame(GW_CODEC_INT8, 0, 8, f);
		gw_stf32(f + GW_FRAME_HDR_LEN, scales[i].scale);
		put_hostile("int8", scales[i].what, scales[i].code, f, len, true);
	}
	len = valid_frame(GW_CODEC_INT8, 0, 8, f);
	f[len - 3] = 0x80;
	put_hostile("int8", "level-minus-128", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_INT8, 1, 8, f);
	f[len - 1] = 0x80;
	put_hostile("int8", "sparse-level-minus-128", "GW_ECORRUPT", f, len, true);
	len = valid_frame(GW_CODEC_INT8, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 0;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 12);
	put_hostile("int8", "scale-missing", "GW_ELENGTH", f, len, true);

	/* the header layer alone */
	header_only = true;
	hostile_common("frame", GW_CODEC_RAW);
	header_only = false;

	hostile_pkt();
	hostile_hq();
}

/* ---- packets (fuzz_pkt.c) ------------------------------------------------ */

/* A packet of header h and payload[0..plen) into out, sealed by the
 * dataplane's own writer; returns its length. */
static size_t make_pkt(uint8_t *out, const gw_pkt_hdr *h, const uint8_t *payload,
		       size_t plen)
{
	if (plen)
		memmove(out + GW_PKT_HDR_LEN, payload, plen);
	gw_pkt_write(out, h, gw_pkt_payload_seed(h->flags, h->sack_len,
						 out + GW_PKT_HDR_LEN, plen));
	return GW_PKT_HDR_LEN + plen;
}

/* Re-seals a packet whose header bytes were changed after gw_pkt_write()
 * (magic, version: fields gw_pkt_write() does not take), as §5.3 says. */
static void reseal_pkt(uint8_t *p, size_t len)
{
	size_t plen = len - GW_PKT_HDR_LEN;
	uint8_t type = p[GW_PKT_OFF_TYPE];
	bool frame = p[GW_PKT_OFF_FLAGS] & GW_PKT_F_FRAME;
	uint64_t seed;
	if (frame && (type == GW_PKT_DATA || type == GW_PKT_UP))
		seed = (uint64_t)plen;
	else if (frame && type == GW_PKT_RESULT)
		seed = XXH3_64bits_withSeed(p + GW_PKT_HDR_LEN,
					    p[GW_PKT_OFF_SACK_LEN], (uint64_t)plen);
	else
		seed = XXH3_64bits(p + GW_PKT_HDR_LEN, plen);
	gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM,
		     (uint32_t)XXH3_64bits_withSeed(p, GW_PKT_OFF_CHECKSUM, seed));
}

static void random_bytes(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(next_u64() >> 56);
}

/* A DATA header as a stream sends it; an ACK with a cumulative ack. */
static gw_pkt_hdr pkt_data(uint32_t chunk, uint8_t flags)
{
	return (gw_pkt_hdr){.type = GW_PKT_DATA, .flags = flags, .rank = 3,
			    .job = 0x6a6f6231u, .round = 17, .tensor = 5,
			    .chunk = chunk, .seq = 1000 + chunk};
}

static gw_pkt_hdr pkt_ack(uint32_t cum, uint8_t sack_len)
{
	return (gw_pkt_hdr){.type = GW_PKT_ACK, .sack_len = sack_len, .rank = 4,
			    .job = 0x6a6f6231u, .round = 17, .tensor = 5,
			    .chunk = cum, .seq = 77};
}

/* An UP of worker 2, and a RESULT of shard 1, as the allreduce sends them
 * (tensor 0, FRAME always; flags adds RETX or MAC). */
static gw_pkt_hdr pkt_up(uint32_t chunk, uint8_t flags)
{
	return (gw_pkt_hdr){.type = GW_PKT_UP, .flags = GW_PKT_F_FRAME | flags,
			    .rank = 2, .job = 0x6a6f6231u, .round = 17, .tensor = 0,
			    .chunk = chunk, .seq = 500 + chunk};
}

static gw_pkt_hdr pkt_result(uint32_t chunk, uint8_t flags, uint8_t sack_len)
{
	return (gw_pkt_hdr){.type = GW_PKT_RESULT, .flags = GW_PKT_F_FRAME | flags,
			    .sack_len = sack_len, .rank = 1, .job = 0x6a6f6231u,
			    .round = 17, .tensor = 0, .chunk = chunk, .seq = 900 + chunk};
}

/* The payload of an UP (bm = 0) or RESULT into out: bitmap[0..bm), the
 * frame, then 16 random bytes in the place of a MAC if mac; its length. */
static size_t agg_payload(uint8_t *out, const uint8_t *bitmap, size_t bm,
			  const uint8_t *frame, size_t flen, bool mac)
{
	if (bm)
		memcpy(out, bitmap, bm);
	memcpy(out + bm, frame, flen);
	if (mac)
		random_bytes(out + bm + flen, GW_PKT_MAC_LEN);
	return bm + flen + (mac ? GW_PKT_MAC_LEN : 0);
}

/* sack bytes of bitmap: random, bit 0 (the cumulative chunk) clear */
static void sack_bitmap(uint8_t *b, size_t n)
{
	random_bytes(b, n);
	if (n)
		b[0] &= 0xfe;
}

/* UP and RESULT seeds, appended after the others (whose bytes do not
 * change with them); p and pay hold GW_PKT_HDR_LEN + room and room bytes. */
static void seeds_pkt_agg(uint8_t *p, uint8_t *pay, size_t room)
{
	uint8_t frame[GW_FRAME_MAX], bm[255];
	char fname[96];
	size_t len, plen;
	gw_pkt_hdr h;

	/* UP: real frames, every allowed flag, the largest chunk number */
	static const struct {
		uint32_t chunk;
		uint8_t flags;
		unsigned n;
	} ups[] = {
		{0, 0, 8},
		{1, GW_PKT_F_MAC, 8},
		{2, GW_PKT_F_RETX | GW_PKT_F_MAC, 100},
		{3, GW_PKT_F_RETX, 40},
		{0xfffffffeu, GW_PKT_F_MAC, 8},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(ups); i++) {
		size_t flen = valid_frame(GW_CODEC_RAW, 0, ups[i].n, frame);
		plen = agg_payload(pay, NULL, 0, frame, flen,
				   ups[i].flags & GW_PKT_F_MAC);
		h = pkt_up(ups[i].chunk, ups[i].flags);
		len = make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "up-c%u-f%u-n%u", ups[i].chunk,
			 h.flags, ups[i].n);
		write_file("pkt", fname, p, len);
	}
	/* RESULT: bitmaps of 4, 12 (one missing), 1024 and 2040 workers */
	static const struct {
		uint32_t chunk;
		uint8_t flags, sack_len;
	} results[] = {
		{0, 0, 1},
		{5, GW_PKT_F_MAC, 2},
		{6, GW_PKT_F_MAC, 128},
		{7, GW_PKT_F_RETX | GW_PKT_F_MAC, 255},
		{0xfffffffeu, 0, 16},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(results); i++) {
		uint8_t sl = results[i].sack_len;
		memset(bm, 0xff, sl);
		if (sl == 1)
			bm[0] = 0x0f;
		else if (sl == 2)
			bm[1] = 0x0b;    /* workers 8..11 but 10 */
		else if (sl == 255)
			random_bytes(bm, sl);
		size_t flen = valid_frame(GW_CODEC_RAW, 0, 8 + 8 * i, frame);
		plen = agg_payload(pay, bm, sl, frame, flen,
				   results[i].flags & GW_PKT_F_MAC);
		h = pkt_result(results[i].chunk, results[i].flags, sl);
		len = make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "result-c%u-f%u-s%u", results[i].chunk,
			 h.flags, sl);
		write_file("pkt", fname, p, len);
	}

	/* control words: header bit (low byte), payload bit (the rest) */
	static const struct {
		uint8_t type, flags;
		uint32_t hbit, pbit;   /* pbit ~0: the payload's last bit */
		const char *what;
	} ctrl[] = {
		{GW_PKT_UP, GW_PKT_F_MAC, 35, 0, "mac-flag"},
		{GW_PKT_UP, 0, 25, 300, "type-to-data"},
		{GW_PKT_UP, GW_PKT_F_MAC, 40, ~0u, "sack-len-mac"},
		{GW_PKT_RESULT, 0, 40, 3, "sack-len-bitmap"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 26, ~0u, "type-mac"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 34, 17, "frame-flag-bitmap"},
	};
	size_t flen = valid_frame(GW_CODEC_RAW, 0, 16, frame);
	static const uint8_t bm3[3] = {0xff, 0xfd, 0x03};   /* 18 workers, 9 out */
	for (size_t i = 0; i < GW_ARRAY_SIZE(ctrl); i++) {
		bool res = ctrl[i].type == GW_PKT_RESULT;
		plen = agg_payload(pay, bm3, res ? 3 : 0, frame, flen,
				   ctrl[i].flags & GW_PKT_F_MAC);
		h = res ? pkt_result(4, ctrl[i].flags, 3) : pkt_up(4, ctrl[i].flags);
		len = make_pkt(p, &h, pay, plen);
		uint32_t pbit = ctrl[i].pbit == ~0u ? 8u * (uint32_t)plen - 1 : ctrl[i].pbit;
		uint32_t c = pbit << 8 | ctrl[i].hbit;
		gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM, c);
		snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s", c, res ? "result" : "up",
			 ctrl[i].what);
		write_file("pkt", fname, p, len);
	}

	/* the frame-length limit, beside a bitmap and a MAC: random bytes,
	 * which the parser does not read as a frame */
	static const struct {
		uint8_t type, flags, sack_len;
		size_t frame;
		const char *code;
	} lim[] = {
		{GW_PKT_UP, 0, 0, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_UP, 0, 0, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_UP, GW_PKT_F_MAC, 0, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_UP, GW_PKT_F_MAC, 0, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 128, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 128, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_RESULT, 0, 255, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_RESULT, 0, 255, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(lim); i++) {
		bool res = lim[i].type == GW_PKT_RESULT;
		plen = lim[i].sack_len + lim[i].frame +
		       ((lim[i].flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0);
		if (plen > room)
			exit(1);
		random_bytes(pay, plen);
		h = res ? pkt_result(8, lim[i].flags, lim[i].sack_len)
			: pkt_up(8, lim[i].flags);
		len = make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "%s-f%u-s%u-frame-%zu.%s",
			 res ? "result" : "up", h.flags, lim[i].sack_len, lim[i].frame,
			 lim[i].code);
		write_file("pkt", fname, p, len);
	}
}

static void seeds_pkt(void)
{
	/* room for the largest RESULT: a 255-byte bitmap, a frame one byte
	 * above the limit, a MAC */
	enum { PAY_MAX = 255 + GW_PKT_PAYLOAD_MAX + 1 + GW_PKT_MAC_LEN };
	static uint8_t p[GW_PKT_HDR_LEN + PAY_MAX];
	static uint8_t pay[PAY_MAX];
	uint8_t frame[GW_FRAME_MAX];
	char fname[96];
	size_t len;
	reseed("pkt");

	/* DATA: sizes up to a jumbo frame's budget, every flag */
	static const struct {
		uint32_t chunk;
		uint8_t flags;
		size_t plen;
	} data[] = {
		{0, 0, 1},
		{1, 0, 100},
		{2, GW_PKT_F_RETX, 1424},
		{41, GW_PKT_F_LAST, 64},
		{7, GW_PKT_F_LAST | GW_PKT_F_RETX, 8924},
		{0xfffffffeu, GW_PKT_F_LAST, 3},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(data); i++) {
		random_bytes(pay, data[i].plen);
		gw_pkt_hdr h = pkt_data(data[i].chunk, data[i].flags);
		len = make_pkt(p, &h, pay, data[i].plen);
		snprintf(fname, sizeof(fname), "data-c%u-f%u-n%zu", data[i].chunk,
			 data[i].flags, data[i].plen);
		write_file("pkt", fname, p, len);
	}
	/* DATA flagged FRAME, carrying real frames */
	for (int kind = 0; kind < 3; kind++) {
		size_t flen = valid_frame(GW_CODEC_RAW, kind, 8 + 20 * kind, frame);
		uint8_t fl = (uint8_t)(GW_PKT_F_FRAME | (kind == 1 ? GW_PKT_F_LAST : 0) |
				       (kind == 2 ? GW_PKT_F_RETX : 0));
		gw_pkt_hdr h = pkt_data((uint32_t)kind * 3, fl);
		len = make_pkt(p, &h, frame, flen);
		snprintf(fname, sizeof(fname), "data-frame-kind%d-f%u", kind, fl);
		write_file("pkt", fname, p, len);
	}
	/* the empty-tensor marker, plain and FRAME */
	gw_pkt_hdr h = pkt_data(0, GW_PKT_F_LAST);
	len = make_pkt(p, &h, NULL, 0);
	write_file("pkt", "data-empty-tensor", p, len);
	h = pkt_data(0, GW_PKT_F_LAST | GW_PKT_F_FRAME);
	len = make_pkt(p, &h, NULL, 0);
	write_file("pkt", "data-empty-tensor-frame", p, len);

	/* ACK: no bitmap, short, the window's, the largest, at the limit */
	static const struct {
		uint32_t cum;
		uint8_t sack_len;
	} acks[] = {{0, 0}, {16, 0}, {3, 1}, {100, 32}, {1000, 128},
		    {0xffffffffu - 8 * 16, 16}, {0xffffffffu, 0}};
	for (size_t i = 0; i < GW_ARRAY_SIZE(acks); i++) {
		sack_bitmap(pay, acks[i].sack_len);
		h = pkt_ack(acks[i].cum, acks[i].sack_len);
		len = make_pkt(p, &h, pay, acks[i].sack_len);
		snprintf(fname, sizeof(fname), "ack-c%u-s%u", acks[i].cum,
			 acks[i].sack_len);
		write_file("pkt", fname, p, len);
	}

	/* control words: the derived packet's header bit (low byte) and
	 * payload bit; the packet as it is then fails its checksum */
	static const struct {
		uint32_t ctrl;
		uint8_t type, flags;
		const char *what;
	} ctrl[] = {
		{0x00000000u, GW_PKT_DATA, 0, "magic"},
		{0x00000011u, GW_PKT_ACK, 0, "version"},
		{0x00000018u, GW_PKT_DATA, GW_PKT_F_FRAME, "type"},
		{0x00000022u, GW_PKT_DATA, GW_PKT_F_FRAME, "frame-flag"},
		{0x0000002bu, GW_PKT_ACK, 0, "sack-len"},
		{0x000000a0u, GW_PKT_DATA, GW_PKT_F_LAST, "chunk"},
		{0x000001e0u, GW_PKT_ACK, 0, "checksum"},
		{0x00012345u, GW_PKT_DATA, GW_PKT_F_FRAME, "job"},
	};
	random_bytes(pay, 200);
	for (size_t i = 0; i < GW_ARRAY_SIZE(ctrl); i++) {
		bool ack = ctrl[i].type == GW_PKT_ACK;
		h = ack ? pkt_ack(9, 24) : pkt_data(9, ctrl[i].flags);
		if (ack)
			pay[0] &= 0xfe;
		len = make_pkt(p, &h, pay, ack ? 24 : 200);
		gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM, ctrl[i].ctrl);
		snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s", ctrl[i].ctrl,
			 ack ? "ack" : "data", ctrl[i].what);
		write_file("pkt", fname, p, len);
	}

	/* the payload-length limit; names say what the parse must return */
	random_bytes(pay, GW_PKT_PAYLOAD_MAX + 1);
	h = pkt_data(5, 0);
	len = make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX);
	write_file("pkt", "data-payload-65535.ok", p, len);
	len = make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX + 1);
	write_file("pkt", "data-payload-65536.GW_ELENGTH", p, len);
	h = pkt_data(5, GW_PKT_F_FRAME);
	len = make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX + 1);
	write_file("pkt", "data-frame-payload-65536.GW_ELENGTH", p, len);

	static const uint8_t shorts[] = {'G', 'P', 1};
	write_file("pkt", "short-3", shorts, sizeof(shorts));
	write_file("pkt", "empty", "", 0);

	seeds_pkt_agg(p, pay, PAY_MAX);
}

static void put_pkt(const char *what, const char *code, const uint8_t *p,
		    size_t len)
{
	char fname[256];
	snprintf(fname, sizeof(fname), "%s.%s", what, code);
	write_file("pkt", fname, p, len);
}

/* The UP and RESULT part of hostile_pkt(), after the rest (whose bytes do
 * not change with it): valid packets with and without a MAC (random bytes;
 * the parser only makes room for it), each rule of UP and RESULT broken
 * once, and the parts of the payload the packet checksum does and does
 * not read. */
static void hostile_pkt_agg(void)
{
	uint8_t p[1024], pay[512], frame[256], pay2[512];
	size_t len, plen, flen;
	gw_pkt_hdr h;
	static const uint8_t bm1[1] = {0x07};           /* 3 workers, all in */
	static const uint8_t bm2[2] = {0xff, 0x05};     /* 11 workers, 9 out */
	flen = valid_frame(GW_CODEC_RAW, 0, 8, frame);

	/* valid */
	plen = agg_payload(pay, NULL, 0, frame, flen, false);
	h = pkt_up(3, 0);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up", "ok", p, len);
	put_pkt("up-truncated", "GW_ECHECKSUM", p, len - 1);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 5] ^= 0x20;
	put_pkt("up-frame-flip", "ok", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_FLAGS] |= GW_PKT_F_MAC;
	put_pkt("up-mac-flag-set", "GW_ECHECKSUM", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_TYPE] = GW_PKT_DATA;
	put_pkt("up-as-data", "GW_ECHECKSUM", p, len);

	plen = agg_payload(pay, NULL, 0, frame, flen, true);
	h = pkt_up(3, GW_PKT_F_MAC);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-mac", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 1] ^= 0x01;
	put_pkt("up-mac-flip", "ok", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_FLAGS] &= (uint8_t)~GW_PKT_F_MAC;
	put_pkt("up-mac-flag-cleared", "GW_ECHECKSUM", p, len);
	h = pkt_up(4, GW_PKT_F_RETX | GW_PKT_F_MAC);
	len = make_pkt(p, &h, pay2, plen);
	put_pkt("up-retx-mac", "ok", p, len);

	plen = agg_payload(pay, bm1, 1, frame, flen, false);
	h = pkt_result(3, 0, 1);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[GW_PKT_HDR_LEN] ^= 0x08;   /* a fourth contributor */
	put_pkt("result-bitmap-flip", "GW_ECHECKSUM", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[len - 5] ^= 0x20;
	put_pkt("result-frame-flip", "ok", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[len] = 0;
	put_pkt("result-trailing-byte", "GW_ECHECKSUM", p, len + 1);

	plen = agg_payload(pay, bm2, 2, frame, flen, true);
	h = pkt_result(3, GW_PKT_F_MAC, 2);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-mac", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 16] ^= 0x80;
	put_pkt("result-mac-flip", "ok", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[GW_PKT_HDR_LEN + 1] ^= 0x04;   /* worker 10 */
	put_pkt("result-mac-bitmap-flip", "GW_ECHECKSUM", p, len);
	len = make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_SACK_LEN] = 1;      /* still room for all of it */
	put_pkt("result-sack-len-changed", "GW_ECHECKSUM", p, len);

	/* chunk numbers */
	plen = agg_payload(pay, NULL, 0, frame, flen, true);
	h = pkt_up(0xfffffffeu, GW_PKT_F_MAC);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-chunk-max", "ok", p, len);
	h = pkt_up(0xffffffffu, GW_PKT_F_MAC);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-chunk-limit", "GW_ERANGE", p, len);
	plen = agg_payload(pay, bm1, 1, frame, flen, false);
	h = pkt_result(0xffffffffu, 0, 1);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-chunk-limit", "GW_ERANGE", p, len);

	/* flags */
	plen = agg_payload(pay, NULL, 0, frame, flen, false);
	h = pkt_up(3, 0);
	h.flags = 0;
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-no-frame", "GW_ERESERVED", p, len);
	h = pkt_up(3, GW_PKT_F_LAST);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-last", "GW_ERESERVED", p, len);
	h = pkt_up(3, 0x10);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-flag-4", "GW_ERESERVED", p, len);
	h = pkt_up(3, 0);
	h.sack_len = 1;
	len = make_pkt(p, &h, pay, plen);
	put_pkt("up-sack-len", "GW_ERESERVED", p, len);
	plen = agg_payload(pay, bm1, 1, frame, flen, false);
	h = pkt_result(3, 0, 1);
	h.flags = GW_PKT_F_MAC;
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-no-frame", "GW_ERESERVED", p, len);
	h = pkt_result(3, GW_PKT_F_LAST, 1);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-last", "GW_ERESERVED", p, len);
	h = pkt_result(3, 0x80, 1);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-flag-7", "GW_ERESERVED", p, len);
	/* MAC is no flag of DATA or ACK */
	h = pkt_data(3, GW_PKT_F_FRAME | GW_PKT_F_MAC);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("data-frame-mac", "GW_ERESERVED", p, len);
	h = pkt_ack(12, 0);
	h.flags = GW_PKT_F_MAC;
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("ack-mac-flag", "GW_ERESERVED", p, len);
	h = pkt_up(3, 0);
	h.type = 5;
	len = make_pkt(p, &h, pay, plen);
	put_pkt("type-5", "GW_ERESERVED", p, len);

	/* lengths: bitmap, one frame byte at least, MAC */
	h = pkt_result(3, 0, 0);
	plen = agg_payload(pay, NULL, 0, frame, flen, false);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-sack-len-0", "GW_ELENGTH", p, len);
	h = pkt_up(3, 0);
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("up-empty", "GW_ELENGTH", p, len);
	h = pkt_up(3, GW_PKT_F_MAC);
	random_bytes(pay, GW_PKT_MAC_LEN + 1);
	len = make_pkt(p, &h, pay, GW_PKT_MAC_LEN);
	put_pkt("up-mac-only", "GW_ELENGTH", p, len);
	len = make_pkt(p, &h, pay, GW_PKT_MAC_LEN + 1);
	put_pkt("up-mac-one-byte", "ok", p, len);
	len = make_pkt(p, &h, pay, 9);
	put_pkt("up-mac-short", "GW_ELENGTH", p, len);
	h = pkt_result(3, 0, 2);
	len = make_pkt(p, &h, bm2, 2);
	put_pkt("result-bitmap-only", "GW_ELENGTH", p, len);
	h = pkt_result(3, GW_PKT_F_MAC, 2);
	plen = agg_payload(pay, bm2, 2, frame, 0, true);
	len = make_pkt(p, &h, pay, plen);
	put_pkt("result-bitmap-mac-only", "GW_ELENGTH", p, len);
	h = pkt_result(3, 0, 16);
	len = make_pkt(p, &h, bm2, 2);
	put_pkt("result-bitmap-cut", "GW_ELENGTH", p, len);
}

/* Committed packets of fuzz_pkt.c: the valid kinds, and each rule of §5.1
 * broken once, in a packet sealed otherwise (a checksum that matches). */
static void hostile_pkt(void)
{
	uint8_t p[1024], pay[256], frame[1024];
	size_t len;
	gw_pkt_hdr h;
	reseed("hostile-pkt");

	random_bytes(pay, sizeof(pay));
	h = pkt_data(5, 0);
	len = make_pkt(p, &h, pay, 40);
	put_pkt("data", "ok", p, len);
	put_pkt("empty", "GW_ETRUNC", p, 0);
	put_pkt("truncated-header", "GW_ETRUNC", p, GW_PKT_HDR_LEN - 1);
	put_pkt("data-truncated", "GW_ECHECKSUM", p, len - 1);
	p[len] = 0;
	put_pkt("data-trailing-byte", "GW_ECHECKSUM", p, len + 1);
	p[GW_PKT_HDR_LEN + 17] ^= 0x10;
	put_pkt("data-payload-bit-flip", "GW_ECHECKSUM", p, len);
	len = make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_CHUNK] ^= 0x01;   /* chunk 5 -> 4: never marks another */
	put_pkt("data-chunk-flipped", "GW_ECHECKSUM", p, len);

	len = make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_MAGIC + 1] = 'W';   /* a frame's magic, "GW" */
	reseal_pkt(p, len);
	put_pkt("frame-magic", "GW_EMAGIC", p, len);
	len = make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_VERSION] = 2;
	reseal_pkt(p, len);
	put_pkt("version-2", "GW_EVERSION", p, len);
	h.type = 0;
	len = make_pkt(p, &h, pay, 40);
	put_pkt("type-0", "GW_ERESERVED", p, len);
	h = pkt_data(5, 0x08);
	len = make_pkt(p, &h, pay, 40);
	put_pkt("data-reserved-flag", "GW_ERESERVED", p, len);
	h = pkt_data(5, 0);
	h.sack_len = 4;
	len = make_pkt(p, &h, pay, 40);
	put_pkt("data-sack-len", "GW_ERESERVED", p, len);

	h = pkt_data(9, GW_PKT_F_LAST | GW_PKT_F_RETX);
	len = make_pkt(p, &h, pay, 64);
	put_pkt("data-last-retx", "ok", p, len);
	h = pkt_data(0xfffffffeu, 0);
	len = make_pkt(p, &h, pay, 8);
	put_pkt("data-chunk-max", "ok", p, len);
	h = pkt_data(0xffffffffu, GW_PKT_F_LAST);
	len = make_pkt(p, &h, pay, 8);
	put_pkt("data-chunk-limit", "GW_ERANGE", p, len);

	/* FRAME: the packet checksum covers the length, not the frame */
	size_t flen = valid_frame(GW_CODEC_RAW, 0, 8, frame);
	h = pkt_data(0, GW_PKT_F_FRAME);
	len = make_pkt(p, &h, frame, flen);
	put_pkt("data-frame", "ok", p, len);
	p[len - 3] ^= 0x04;
	put_pkt("data-frame-payload-flip", "ok", p, len);
	put_pkt("data-frame-truncated", "GW_ECHECKSUM", p, len - 1);

	/* the empty-tensor marker, and empty DATA that is not it */
	h = pkt_data(0, GW_PKT_F_LAST);
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("empty-tensor-marker", "ok", p, len);
	h = pkt_data(0, 0);
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("data-empty-not-last", "GW_ELENGTH", p, len);
	h = pkt_data(1, GW_PKT_F_LAST);
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("data-empty-chunk-1", "GW_ELENGTH", p, len);

	/* ACK */
	h = pkt_ack(12, 0);
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("ack-cumulative-only", "ok", p, len);
	static const uint8_t bm[4] = {0xfe, 0x00, 0x81, 0x00};
	h = pkt_ack(12, 4);
	len = make_pkt(p, &h, bm, 4);
	put_pkt("ack-sack", "ok", p, len);
	sack_bitmap(pay, 128);
	h = pkt_ack(1000, 128);
	len = make_pkt(p, &h, pay, 128);
	put_pkt("ack-sack-max", "ok", p, len);
	h = pkt_ack(0xffffffffu - 8 * 2, 2);
	len = make_pkt(p, &h, pay, 2);
	put_pkt("ack-chunk-at-limit", "ok", p, len);
	h = pkt_ack(0xffffffffu - 8 * 2 + 1, 2);
	len = make_pkt(p, &h, pay, 2);
	put_pkt("ack-chunk-overflow", "GW_ERANGE", p, len);
	h = pkt_ack(12, 0);
	h.flags = GW_PKT_F_LAST;
	len = make_pkt(p, &h, NULL, 0);
	put_pkt("ack-flag", "GW_ERESERVED", p, len);
	random_bytes(pay, 129);
	h = pkt_ack(12, 129);
	len = make_pkt(p, &h, pay, 129);
	put_pkt("ack-sack-len-129", "GW_ELENGTH", p, len);
	h = pkt_ack(12, 4);
	len = make_pkt(p, &h, bm, 4);
	p[len] = 0;
	put_pkt("ack-sack-len-mismatch", "GW_ELENGTH", p, len + 1);
	static const uint8_t self[2] = {0x01, 0x00};
	h = pkt_ack(12, 2);
	len = make_pkt(p, &h, self, 2);
	put_pkt("ack-sacks-cumulative", "GW_ECORRUPT", p, len);

	hostile_pkt_agg();
}

/* ---- LIBSVM text (fuzz_libsvm.c) -------------------------------------- */

/* delta_binary: header (wide, n, base, limit) + a block gw_db_encode()
 * wrote, for narrow and wide blocks of runs, gaps of every width, one key
 * and none; then one with a flag bit set past the last key. */
static void seeds_delta_binary(void)
{
	static const uint64_t gaps[] = {0, 1, 255, 256, 65535, 65536, 0xffffff, 0x1000000, 0xffffffffull};
	uint64_t keys[64];
	uint8_t buf[11 + 16 + 64 * 8];
	int f = 0;
	for (int wide = 0; wide < 2; wide++)
		for (uint32_t n = 0; n <= 40; n += 1 + n) {
			uint64_t k = 7;
			for (uint32_t i = 0; i < n; i++) {
				k += gaps[(i * 5 + n) % 9] + (i ? 1 : 0);
				keys[i] = k;
			}
			memset(buf, 0, 11);
			buf[0] = (uint8_t)wide;
			buf[1] = (uint8_t)n;
			gw_st32(buf + 3, 7);
			size_t len = gw_db_encode(keys, n, 7, wide, buf + 11);
			char name[32];
			snprintf(name, sizeof(name), "block-%d", f++);
			write_file("delta_binary", name, buf, 11 + len);
		}
	buf[0] = 0;
	buf[1] = 1;
	buf[2] = 0;
	buf[11] = 0x04;   /* key 1's flag in a block of one key */
	buf[12] = 3;
	write_file("delta_binary", "reserved-flag", buf, 13);
}

/* quantile: k, log2 q, a merge split and a seed, then values: ascending,
 * descending, all equal, mixed signs and magnitudes, with non-finite ones. */
static void seeds_quantile(void)
{
	float v[1000];
	uint8_t buf[11 + sizeof(v)];
	for (int f = 0; f < 5; f++) {
		uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(f + 1);
		for (int i = 0; i < 1000; i++) {
			switch (f) {
			case 0: v[i] = (float)i; break;
			case 1: v[i] = (float)(1000 - i) * 1e-3f; break;
			case 2: v[i] = 0.25f; break;
			case 3: v[i] = (float)((i * 7919) % 1000 - 500) * (i % 3 ? 1e-6f : 1e3f); break;
			default: v[i] = i % 10 ? (float)i : (i % 20 ? INFINITY : NAN); break;
			}
		}
		buf[0] = (uint8_t)(f * 60);
		buf[1] = (uint8_t)(f + 3);
		buf[2] = (uint8_t)(f * 50);
		memcpy(buf + 3, &seed, 8);
		memcpy(buf + 11, v, sizeof(v));
		char name[32];
		snprintf(name, sizeof(name), "values-%d", f);
		write_file("quantile", name, buf, sizeof(buf));
	}
}

static void seeds_libsvm(void)
{
	static const char *const fmt[] = {"%g", "%.9g", "%.3e", "%a"};
	static const char *const names[] = {"rows-g.ok", "rows-g9.ok",
					    "rows-e.ok", "rows-hex.ok"};
	static char text[1 << 15];
	reseed("libsvm");
	for (int f = 0; f < 4; f++) {
		size_t n = 0;
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "# seed %d\n", f);
		for (int r = 0; r < 60 && n < sizeof(text) - 4096; r++) {
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      r % 3 ? "%d" : "%+d",
					      (int)(next_u64() % 3) - 1);
			unsigned idx = 0;
			for (int k = 0; k < 12; k++) {
				idx += 1 + (unsigned)(next_u64() % (k == 11 ? 100000 : 9));
				n += (size_t)snprintf(text + n, sizeof(text) - n,
						      next_u64() % 4 ? " %u:" : "\t%u:",
						      idx);
				n += (size_t)snprintf(text + n, sizeof(text) - n,
						      fmt[f], gradient(10));
			}
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s",
					      r % 7 == 3 ? "  # note\r\n"
					      : r % 5 == 0 ? "\r\n\n"
							   : "\n");
		}
		/* ".ok": regress_main checks that each is accepted */
		write_file("libsvm", names[f], text, n - 1);   /* last '\n' cut */
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s OUTDIR [NAME...] | --hostile OUTDIR\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "--hostile")) {
		if (argc != 3)
			return 2;
		outdir = argv[2];
		make_dir(outdir);
		hostile();
		printf("make_corpus: %lu hostile inputs in %s\n", written, outdir);
		return 0;
	}
	outdir = argv[1];
	make_dir(outdir);
	int ids[256];
	int n = gw_codec_list(ids, 256);
	for (int a = 2; a <= argc; a++) {
		const char *name = a < argc ? argv[a] : NULL;
		if (argc > 2 && !name)
			break;
		/* no names: everything */
		for (int i = 0; i < n && i < 256; i++)
			if (!name || !strcmp(name, gw_codec_name(ids[i])))
				seeds_decoder(gw_codec_name(ids[i]), ids[i]);
		if (!name || !strcmp(name, "countsketch"))
			seeds_countsketch();
		if (!name || !strcmp(name, "deepreduce"))
			seeds_deepreduce();
		if (!name || !strcmp(name, "hq"))
			seeds_hq();
		if (!name || !strcmp(name, "frame"))
			seeds_frame();
		if (!name || !strcmp(name, "roundtrip"))
			seeds_roundtrip();
		if (!name || !strcmp(name, "pkt"))
			seeds_pkt();
		if (!name || !strcmp(name, "libsvm"))
			seeds_libsvm();
		if (!name || !strcmp(name, "delta_binary"))
			seeds_delta_binary();
		if (!name || !strcmp(name, "quantile"))
			seeds_quantile();
		int dr = seeds_dr_index(name, write_file);
		dr += seeds_dr_value(name, write_file);
		dr += seeds_coll(name, write_file);
		dr += seeds_rdma(name, write_file);
		dr += seeds_hq_kern(name, write_file);
		if (name && strcmp(name, "frame") && strcmp(name, "roundtrip") &&
		    strcmp(name, "pkt") && strcmp(name, "libsvm") &&
		    strcmp(name, "delta_binary") && strcmp(name, "quantile") &&
		    !dr && gw_codec_by_name(name) < 0) {
			fprintf(stderr, "make_corpus: no harness called %s\n", name);
			return 1;
		}
	}
	printf("make_corpus: %lu seeds in %s\n", written, outdir);
	return 0;
}
