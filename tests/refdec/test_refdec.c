/* The library's decoder against the reference decoder written from the
 * spec (refdec.c): on every frame the library's encoders write for the real
 * traces (dense cnn tensors; the sparse logistic-regression gradients with
 * 32- and 64-bit keys; tensors with NaN and Inf), at budgets from 64 bytes
 * to 65535, hq's sum frames besides (gw_sum_add() of three workers' frames
 * on a shared scale, written by gw_sum_encode(), and sums as wide as 32
 * bits), and on mutations of them (bit flips with and without a new
 * checksum, every header field set to edge values, scale bit patterns,
 * random payload bytes, hq's params fields set to edges, truncation and
 * extension, smaller outputs), both must accept or reject alike, with the
 * same error code (normative for §2, §4.1–§4.7 and §4.11), and leave the
 * same output bits; a rejected frame leaves the output as it was.
 * Hand-built frames pin the rules an independent decoder once had to
 * guess (wire-format.md's version log) and hq's rules in their order. */
#include <math.h>

#include "../gw_test.h"
#include "gw_cpu.h"
#include "refdec.h"
#include "test_refdec.h"

static const int covered[] = {GW_CODEC_RAW, GW_CODEC_BF16, GW_CODEC_INT8, GW_CODEC_3LC,
			      GW_CODEC_TERNGRAD, GW_CODEC_ONEBIT, GW_CODEC_TOPK, GW_CODEC_HQ};
static const size_t budgets[] = {64, 100, 256, 1424, 8924, 65535};

/* What the comparisons saw, for the test's closing line. */
struct tally {
	uint64_t frames, accepted, rejected;
	uint64_t codes[32];   /* rejections by -code */
};

#define OFF_COUNT 12
#define OFF_START 16
#define OFF_SPAN 24
#define OFF_PLEN 28
/* hq's params (§4.11), from the frame's start. */
#define HQ_OFF_BITS 36
#define HQ_OFF_WIDTH 37
#define HQ_OFF_FLAGS 38
#define HQ_OFF_RESERVED 39
#define HQ_OFF_CONTRIB 40
#define HQ_OFF_SEED 44
#define HQ_OFF_SCALE 48
#define HQ_OFF_NEXT 52

void td_st32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The output buffers (struct bufs, test_refdec.h). */
static void bufs_init(struct bufs *b, uint64_t cap, uint64_t seed)
{
	b->cap = cap;
	b->used = 0;
	b->lib = malloc(cap * sizeof(float));
	b->ref = malloc(cap * sizeof(float));
	b->init = malloc(cap * sizeof(float));
	b->save = malloc(cap * sizeof(float));
	GW_CHECK(b->lib && b->ref && b->init && b->save, "out of memory");
	gw_test_rng r = {seed};
	for (uint64_t i = 0; i < cap; i++) {
		uint64_t x = gw_test_rand(&r);
		/* Mostly small values, some signed zeros. */
		b->init[i] = (x & 15) == 0 ? ((x & 16) ? -0.0f : 0.0f)
					   : gw_test_uniform(&r, -1.0f, 1.0f);
	}
	memcpy(b->lib, b->init, cap * sizeof(float));
	memcpy(b->ref, b->init, cap * sizeof(float));
}

/* The same bits, or both NaN: which NaN an addition of two NaNs gives is
 * not normative (wire-format §2, IEEE 754 leaves it open; gcc may swap
 * the operands of a commutative +). */
static int same(float a, float r)
{
	return gw_test_bits(a) == gw_test_bits(r) || (isnan(a) && isnan(r));
}

static void first_diff(const float *a, const float *r, uint64_t n, const char *what)
{
	for (uint64_t i = 0; i < n; i++)
		GW_CHECK(same(a[i], r[i]),
			 "%s: output %llu differs: library %08x, reference %08x", what,
			 (unsigned long long)i, gw_test_bits(a[i]), gw_test_bits(r[i]));
}

/* The whole outputs agree; both start over. */
static void settle(struct bufs *b, const char *what)
{
	if (memcmp(b->lib, b->ref, b->used * sizeof(float)) != 0)
		first_diff(b->lib, b->ref, b->used, what);
	memcpy(b->lib, b->init, b->used * sizeof(float));
	memcpy(b->ref, b->init, b->used * sizeof(float));
	b->used = 0;
}

static void bufs_free(struct bufs *b)
{
	GW_FREE_ALL(b->lib, b->ref, b->init, b->save);
}

/* Decodes f with both; fails on any difference. */
static void compare(struct bufs *b, const uint8_t *f, size_t len, uint64_t out_len,
		    struct tally *t, const char *what, size_t idx)
{
	GW_CHECK(out_len <= b->cap, "output of %llu > %llu", (unsigned long long)out_len,
		 (unsigned long long)b->cap);
	b->used = GW_MAX(b->used, out_len);
	/* The range the header names, clipped to the output. */
	uint64_t lo = 0, hi = out_len;
	if (len >= 36) {
		uint64_t start = 0;
		for (int i = 7; i >= 0; i--)
			start = start << 8 | f[OFF_START + i];
		uint32_t span = ld32(f + OFF_SPAN);
		lo = GW_MIN(start, out_len);
		hi = start >= out_len || span >= out_len - start ? out_len : start + span;
	}
	memcpy(b->save, b->lib + lo, (hi - lo) * sizeof(float));
	int lr = gw_decode(f, len, b->lib, out_len);
	int rr = refdec_decode(f, len, b->ref, out_len);
	if (rr == REFDEC_UNCOVERED) {
		/* Keep the outputs equal: the library's decode stands for both. */
		memcpy(b->ref + lo, b->lib + lo, (hi - lo) * sizeof(float));
		return;
	}
	t->frames++;
	char at[200];
	snprintf(at, sizeof(at), "%s (%zu)", what, idx);
	GW_CHECK(lr == rr, "%s: the library says %s, the reference %s", at,
		 lr < 0 ? gw_error_name(lr) : "accepted", rr < 0 ? gw_error_name(rr) : "accepted");
	if (memcmp(b->lib + lo, b->ref + lo, (hi - lo) * sizeof(float)) != 0)
		first_diff(b->lib, b->ref, out_len, at);
	if (lr < 0) {
		t->rejected++;
		t->codes[-lr < 32 ? -lr : 0]++;
		GW_CHECK(memcmp(b->lib + lo, b->save, (hi - lo) * sizeof(float)) == 0,
			 "%s: rejected (%s) but the output changed", at, gw_error_name(lr));
	} else {
		t->accepted++;
	}
}

/* ---- the real frames ------------------------------------------------------------- */

/* Every frame of codec id for t at every budget, as written; calls each
 * (frame set, budget) with fn as well. */
typedef void (*frames_fn)(struct bufs *b, const gw_test_frames *fr, uint64_t dim,
			  struct tally *t, const char *what, gw_test_rng *r);

static void each_budget(int id, const char *params, const gw_tensor *tn, struct bufs *b,
			struct tally *t, frames_fn fn, gw_test_rng *r, const char *name)
{
	for (size_t k = 0; k < GW_ARRAY_SIZE(budgets); k++) {
		gw_test_frames fr = {0};
		gw_encoder *enc = gw_test_encoder_with(id, params);
		int min = gw_encode_min_budget(enc, tn);
		if (min < 0 || (size_t)min > budgets[k]) {
			gw_encoder_free(enc);
			continue;
		}
		int rc = gw_test_encode_all(enc, tn, budgets[k], &fr);
		gw_encoder_free(enc);
		GW_CHECK(rc == 0, "%s %s at %zu: encode failed: %s", gw_codec_name(id), name,
			 budgets[k], gw_error_name(rc));
		char what[160];
		snprintf(what, sizeof(what), "%s%s%s %s budget %zu", gw_codec_name(id),
			 params ? ":" : "", params ? params : "", name, budgets[k]);
		for (size_t j = 0; j < fr.n; j++)
			compare(b, fr.f[j].data, fr.f[j].len, tn->dim, t, what, j);
		settle(b, what);
		if (fn) {
			fn(b, &fr, tn->dim, t, what, r);
			settle(b, what);
		}
		gw_test_frames_free(&fr);
	}
}

/* Parameter lists each codec runs with besides its defaults,
 * NULL-terminated: top-k at a larger fraction too (more entries, longer
 * gap runs); hq unrotated and at 2, 3 and 8 bits. */
static const char *const *params_of(int id)
{
	static const char *const topk[] = {"fraction=0.2", NULL};
	static const char *const hq[] = {"rotate=0", "bits=2", "bits=3", "bits=8", NULL};
	static const char *const none[] = {NULL};
	return id == GW_CODEC_TOPK ? topk : id == GW_CODEC_HQ ? hq : none;
}

/* ---- hq's sum frames ------------------------------------------------------------ */

#define HQ_WORKERS 3
static const size_t sum_budgets[] = {64, 256, 1424, 8924};
/* Worker parameters the sums run with (NULL: the defaults). */
static const char *const sum_params[] = {NULL, "rotate=0", "bits=2", "bits=8",
					 "bits=3,rotate=0"};

/* The shared scale of frame k: the workers' largest |value| m times a
 * factor (clipping at a quarter of it, the step 0 of scale 0, a step
 * below the normal range). */
static float sum_scale(float m, size_t k)
{
	switch (k % 6) {
	case 0: return m;
	case 1: return 0.25f * m;
	case 2: return 4.0f * m;
	case 3: return 0.0f;
	case 4: return 1e-36f;
	default: return 0.7f * m;
	}
}

static void frames_push(gw_test_frames *fr, size_t *cap, const uint8_t *f, size_t len)
{
	if (fr->n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		gw_test_frame *nf = realloc(fr->f, *cap * sizeof(*nf));
		GW_CHECK(nf, "out of memory");
		fr->f = nf;
	}
	gw_test_frame *x = &fr->f[fr->n++];
	x->len = len;
	x->data = malloc(len);
	GW_CHECK(x->data, "out of memory");
	memcpy(x->data, f, len);
}

/* Every worker's frames of tn (worker w encodes vals[w]) at budget, each
 * frame on the shared scale and seed of its index; then, frame by frame,
 * the sum frame of their codes (gw_sum_add, gw_sum_encode), and one as if
 * 2^22 - 1 such sums had been added again (codes up to 31 bits, widths to
 * 32). The workers' frames and the sums are compared as they come, then
 * handed to fn like each_budget's. */
static void each_sum(const char *params, float *const vals[HQ_WORKERS], uint64_t dim,
		     struct bufs *b, struct tally *t, frames_fn fn, gw_test_rng *r,
		     const char *name)
{
	float m = 0.0f;
	for (int w = 0; w < HQ_WORKERS; w++)
		for (uint64_t i = 0; i < dim; i++)
			if (isfinite(vals[w][i]))
				m = GW_MAX(m, fabsf(vals[w][i]));
	uint8_t *buf = malloc(GW_FRAME_MAX);
	int32_t *acc = malloc(GW_FRAME_MAX * 8 * sizeof(int32_t));
	GW_CHECK(buf && acc, "out of memory");
	for (size_t k = 0; k < GW_ARRAY_SIZE(sum_budgets); k++) {
		size_t budget = sum_budgets[k];
		gw_test_frames wf[HQ_WORKERS] = {{0}}, sums = {0};
		size_t wcap[HQ_WORKERS] = {0}, scap = 0;
		for (int w = 0; w < HQ_WORKERS; w++) {
			gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, params);
			gw_tensor tn = gw_test_dense_tensor(7, vals[w], dim);
			GW_OK_CALL(gw_encode_begin(enc, &tn));
			for (size_t j = 0;; j++) {
				GW_OK_CALL(gw_encoder_set_shared(enc, sum_scale(m, j),
								 (uint32_t)(j * 0x9e3779b9u + 1)));
				int n = gw_encode_next(enc, buf, budget);
				GW_CHECK(n >= 0, "hq worker %d at %zu: %s", w, budget,
					 gw_error_name(n));
				if (n == 0)
					break;
				frames_push(&wf[w], &wcap[w], buf, (size_t)n);
			}
			gw_encoder_free(enc);
			GW_CHECK(wf[w].n == wf[0].n, "hq workers cut the tensor differently");
		}
		char what[200];
		snprintf(what, sizeof(what), "hq%s%s %s sums of %d, budget %zu",
			 params ? ":" : "", params ? params : "", name, HQ_WORKERS, budget);
		for (size_t j = 0; j < wf[0].n; j++) {
			gw_frame_info fi;
			GW_OK_CALL(gw_frame_peek(wf[0].f[j].data, wf[0].f[j].len, &fi));
			memset(acc, 0, (size_t)fi.count * sizeof(int32_t));
			gw_sum_info si = {0}, sum = {0};
			for (int w = 0; w < HQ_WORKERS; w++) {
				compare(b, wf[w].f[j].data, wf[w].f[j].len, dim, t, what, j);
				int rc = gw_sum_add(wf[w].f[j].data, wf[w].f[j].len, acc,
						    fi.start, fi.count, &si);
				GW_CHECK(rc == (int)fi.count, "%s (%zu): gw_sum_add of worker %d: %s",
					 what, j, w, rc < 0 ? gw_error_name(rc) : "short");
				if (w == 0)
					sum = si;
				sum.next = GW_MAX(sum.next, si.next);
				sum.poisoned |= si.poisoned;
			}
			settle(b, what);
			sum.contributors = HQ_WORKERS;
			int n = gw_sum_encode(buf, GW_FRAME_MAX, 7, fi.start, acc, fi.count, &sum);
			GW_CHECK(n > 0, "%s (%zu): gw_sum_encode: %s", what, j, gw_error_name(n));
			frames_push(&sums, &scap, buf, (size_t)n);
			/* The same codes times 2^22 - 1, from as many times the
			 * contributors: as wide as the format goes. */
			uint32_t times = (1u << 22) - 1;
			for (uint32_t i = 0; i < fi.count; i++)
				acc[i] *= (int32_t)times;
			sum.contributors *= times;
			n = gw_sum_encode(buf, GW_FRAME_MAX, 7, fi.start, acc, fi.count, &sum);
			if (n == GW_EBUDGET)
				continue;   /* 4 bytes a code: not from the larger budgets */
			GW_CHECK(n > 0, "%s (%zu): wide gw_sum_encode: %s", what, j,
				 gw_error_name(n));
			frames_push(&sums, &scap, buf, (size_t)n);
		}
		for (size_t j = 0; j < sums.n; j++)
			compare(b, sums.f[j].data, sums.f[j].len, dim, t, what, j);
		settle(b, what);
		if (fn) {
			fn(b, &sums, dim, t, what, r);
			settle(b, what);
			fn(b, &wf[1], dim, t, what, r);
			settle(b, what);
		}
		for (int w = 0; w < HQ_WORKERS; w++)
			gw_test_frames_free(&wf[w]);
		gw_test_frames_free(&sums);
	}
	free(buf);
	free(acc);
}

/* Three workers' versions of the n values v: themselves, -v/2, and v
 * permuted; sums of their hq frames under each of sum_params. */
static void hq_sums(const float *v, uint64_t n, struct bufs *b, struct tally *t, frames_fn fn,
		    gw_test_rng *r, const char *name)
{
	float *vals[HQ_WORKERS];
	for (int w = 0; w < HQ_WORKERS; w++) {
		vals[w] = malloc(n * sizeof(float));
		GW_CHECK(vals[w], "out of memory");
	}
	for (uint64_t i = 0; i < n; i++) {
		vals[0][i] = v[i];
		vals[1][i] = -0.5f * v[i];
		vals[2][i] = v[(i * 7919) % n];
	}
	for (size_t p = 0; p < GW_ARRAY_SIZE(sum_params); p++)
		each_sum(sum_params[p], vals, n, b, t, fn, r, name);
	for (int w = 0; w < HQ_WORKERS; w++)
		free(vals[w]);
}

static void run_traces(frames_fn fn, struct tally *t, uint64_t seed)
{
	gw_test_rng r = {seed};
	struct bufs b;
	bufs_init(&b, GW_TEST_SPARSE_DIM, seed);
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		gw_tensor tn = gw_test_dense_tensor(7, d.v, d.n);
		for (size_t c = 0; c < GW_ARRAY_SIZE(covered); c++) {
			each_budget(covered[c], NULL, &tn, &b, t, fn, &r, d.name);
			for (const char *const *p = params_of(covered[c]); *p; p++)
				each_budget(covered[c], *p, &tn, &b, t, fn, &r, d.name);
		}
		hq_sums(d.v, d.n, &b, t, fn, &r, d.name);
		/* Poisoned: a NaN and an Inf in the tensor. */
		d.v[d.n / 3] = NAN;
		d.v[d.n - 1] = -INFINITY;
		for (size_t c = 0; c < GW_ARRAY_SIZE(covered); c++)
			each_budget(covered[c], NULL, &tn, &b, t, fn, &r, "poisoned");
		hq_sums(d.v, d.n, &b, t, fn, &r, "poisoned");
		gw_test_dense_free(&d);
	}
	for (int i = 0; i < GW_TEST_N_SPARSE; i++) {
		gw_test_sparse s;
		gw_test_load_sparse(i, &s);
		uint64_t *k64 = malloc(s.nnz * sizeof(uint64_t));
		GW_CHECK(k64, "out of memory");
		for (size_t j = 0; j < s.nnz; j++)
			k64[j] = s.keys[j];
		gw_tensor t32 = gw_test_sparse_tensor(9, s.dim, s.keys, 32, s.vals, s.nnz);
		gw_tensor t64 = gw_test_sparse_tensor(9, s.dim, k64, 64, s.vals, s.nnz);
		for (size_t c = 0; c < GW_ARRAY_SIZE(covered); c++) {
			if (!gw_test_codec_accepts(covered[c], 1))
				continue;
			each_budget(covered[c], NULL, &t32, &b, t, fn, &r, s.name);
			each_budget(covered[c], NULL, &t64, &b, t, fn, &r, "64-bit keys");
		}
		free(k64);
		gw_test_sparse_free(&s);
	}
	bufs_free(&b);
}

static void report(const char *what, const struct tally *t)
{
	printf("%s: %llu frames, %llu accepted, %llu rejected (", what,
	       (unsigned long long)t->frames, (unsigned long long)t->accepted,
	       (unsigned long long)t->rejected);
	const char *sep = "";
	for (int c = 1; c < 32; c++)
		if (t->codes[c]) {
			printf("%s%s %llu", sep, gw_error_name(-c), (unsigned long long)t->codes[c]);
			sep = ", ";
		}
	printf(")\n");
}

static void test_real_frames(void **state)
{
	(void)state;
	struct tally t = {0};
	run_traces(NULL, &t, 1);
	GW_CHECK(t.accepted == t.frames && t.frames > 10000,
		 "%llu of %llu real frames accepted", (unsigned long long)t.accepted,
		 (unsigned long long)t.frames);
	report("real frames", &t);
}

/* ---- mutations --------------------------------------------------------------------- */

/* Scale bit patterns (§2.5): zeros, NaNs of both signs, quiet and
 * signalling, infinities, the largest finite, negatives, ordinary. */
static const uint32_t scales[] = {0x00000000, 0x80000000, 0x7fc00000, 0xffc00000, 0x7f800001,
				  0xff812345, 0x7f800000, 0xff800000, 0x7f7fffff, 0xbf800000,
				  0x3f800000, 0x00000001};

/* hq's params (§4.11) set to the edges of its rules: bits, width, the
 * flags (reserved ones too), the reserved byte, contributors, seed. */
static void mutate_hq(uint8_t *f, gw_test_rng *r)
{
	uint8_t bits = f[HQ_OFF_BITS], width = f[HQ_OFF_WIDTH];
	uint32_t contrib = ld32(f + HQ_OFF_CONTRIB);
	switch (gw_test_below(r, 7)) {
	case 0: {
		static const uint8_t e[] = {0, 1, 2, 3, 7, 8, 9, 255};
		f[HQ_OFF_BITS] = e[gw_test_below(r, GW_ARRAY_SIZE(e))];
		break;
	}
	case 1: {
		uint8_t e[] = {0, 1, 2, bits, (uint8_t)(bits + 1), (uint8_t)(width - 1), 8, 9,
			       31, 32, 33, 255};
		f[HQ_OFF_WIDTH] = e[gw_test_below(r, GW_ARRAY_SIZE(e))];
		break;
	}
	case 2:   /* one flag flipped, reserved ones too */
		f[HQ_OFF_FLAGS] ^= (uint8_t)(1u << gw_test_below(r, 8));
		break;
	case 3:   /* SUM flipped: a worker's frame read as a sum, or back */
		f[HQ_OFF_FLAGS] ^= 0x2;
		if (gw_test_rand(r) & 1)
			td_st32(f + HQ_OFF_CONTRIB, 1 + (uint32_t)gw_test_below(r, 4));
		break;
	case 4:
		f[HQ_OFF_RESERVED] = (uint8_t)(1u << gw_test_below(r, 8));
		break;
	case 5: {
		uint32_t e[] = {0, 1, 2, 3, contrib + 1, contrib - 1, 0x80000000u, 0xffffffffu};
		td_st32(f + HQ_OFF_CONTRIB, e[gw_test_below(r, GW_ARRAY_SIZE(e))]);
		break;
	}
	default: {
		uint32_t e[] = {0, 1, ld32(f + HQ_OFF_SEED) ^ 1, (uint32_t)gw_test_rand(r)};
		td_st32(f + HQ_OFF_SEED, e[gw_test_below(r, GW_ARRAY_SIZE(e))]);
		break;
	}
	}
}

/* A mutated copy of f, decoded by both, at out_len or less. */
static void one(struct bufs *b, const uint8_t *src, size_t len, size_t extra, uint64_t dim,
		struct tally *t, const char *what, gw_test_rng *r, unsigned kind)
{
	uint8_t *f = malloc(len + extra + 8);
	GW_CHECK(f, "out of memory");
	memcpy(f, src, len);
	memset(f + len, 0, extra + 8);
	size_t n = len;
	uint64_t out_len = dim;
	int seal = 1;
	uint32_t plen = f[6];
	switch (kind) {
	case 0:   /* a bit flipped, checksum as it was */
		f[gw_test_below(r, len)] ^= (uint8_t)(1u << gw_test_below(r, 8));
		seal = 0;
		break;
	case 1:   /* a bit flipped outside the checksum, sealed again */
	{
		size_t at = gw_test_below(r, len - 4);
		at += at >= 32 ? 4 : 0;
		f[at] ^= (uint8_t)(1u << gw_test_below(r, 8));
		break;
	}
	case 2:   /* a payload or params byte set at random */
		if (len > 36)
			f[36 + gw_test_below(r, len - 36)] = (uint8_t)gw_test_rand(r);
		break;
	case 3:   /* a header field set to an edge */
	{
		static const unsigned offs[] = {OFF_COUNT, OFF_START, OFF_START + 4, OFF_SPAN,
						OFF_PLEN};
		unsigned off = offs[gw_test_below(r, GW_ARRAY_SIZE(offs))];
		uint32_t v = ld32(f + off);
		uint32_t edges[] = {0, 1, v - 1, v + 1, v + 5, v * 2, 0xffffffffu, 65535,
				    (uint32_t)gw_test_rand(r)};
		td_st32(f + off, edges[gw_test_below(r, GW_ARRAY_SIZE(edges))]);
		break;
	}
	case 4:   /* flags, codec, param_len, version or reserved byte */
	{
		static const unsigned offs[] = {3, 4, 5, 6, 2, 7};
		f[offs[gw_test_below(r, GW_ARRAY_SIZE(offs))]] = (uint8_t)gw_test_below(r, 12);
		break;
	}
	case 5:   /* a scale's bit pattern (hq: scale or next) */
		if (f[3] == GW_CODEC_HQ && plen == 20) {
			size_t at = (gw_test_rand(r) & 1) ? HQ_OFF_NEXT : HQ_OFF_SCALE;
			td_st32(f + at, scales[gw_test_below(r, GW_ARRAY_SIZE(scales))]);
		} else if (plen >= 4) {
			size_t at = 36 + (plen >= 8 && (gw_test_rand(r) & 1) ? 4 : 0);
			td_st32(f + at, scales[gw_test_below(r, GW_ARRAY_SIZE(scales))]);
		}
		break;
	case 6:   /* cut short or grown, lengths left or fixed */
	{
		size_t d = 1 + gw_test_below(r, 16);
		int grow = gw_test_rand(r) & 1;
		n = grow ? len + GW_MIN(d, extra) : (len > d ? len - d : 1);
		if (gw_test_rand(r) & 1)
			td_st32(f + OFF_PLEN, ld32(f + OFF_PLEN) + (uint32_t)(n - len));
		break;
	}
	case 7:   /* the output smaller than the frame's range */
		out_len = gw_test_below(r, dim);
		break;
	case 8:   /* hq: a params field set to an edge */
		if (f[3] == GW_CODEC_HQ && plen == 20 && len >= 56) {
			mutate_hq(f, r);
			break;
		}
		/* fall through */
	default:  /* two random bytes anywhere, sealed */
		f[gw_test_below(r, len)] = (uint8_t)gw_test_rand(r);
		f[gw_test_below(r, len)] = (uint8_t)gw_test_rand(r);
		break;
	}
	if (seal && n >= 36)
		gw_frame_seal(f, n);
	compare(b, f, n, out_len, t, what, kind);
	free(f);
}

/* Mutations of a sample of the frames: every frame of a set of up to 64,
 * one in 16 of a larger one. */
static void mutate(struct bufs *b, const gw_test_frames *fr, uint64_t dim, struct tally *t,
		   const char *what, gw_test_rng *r)
{
	size_t every = fr->n > 64 ? 16 : 1;
	for (size_t j = 0; j < fr->n; j += every)
		for (unsigned kind = 0; kind < 10; kind++)
			for (unsigned rep = 0; rep < 3; rep++)
				one(b, fr->f[j].data, fr->f[j].len, 16, dim, t, what, r, kind);
}

static void test_mutated_frames(void **state)
{
	(void)state;
	struct tally t = {0};
	run_traces(mutate, &t, 2);
	GW_CHECK(t.rejected > 10000 && t.accepted > 10000,
		 "too few mutated frames decided: %llu accepted, %llu rejected",
		 (unsigned long long)t.accepted, (unsigned long long)t.rejected);
	report("real and mutated frames", &t);
}

/* ---- hand-built frames ------------------------------------------------------------- */

/* A frame of codec id: header fields, params, payload; sealed. */
size_t td_build(uint8_t *f, int id, uint16_t flags, uint32_t count, uint64_t start,
		    uint32_t span, const void *params, uint32_t plen, const void *payload,
		    uint32_t paylen)
{
	memset(f, 0, 36);
	f[0] = 'G';
	f[1] = 'W';
	f[2] = 1;
	f[3] = (uint8_t)id;
	f[4] = (uint8_t)flags;
	f[6] = (uint8_t)plen;
	td_st32(f + OFF_COUNT, count);
	td_st32(f + OFF_START, (uint32_t)start);
	td_st32(f + OFF_START + 4, (uint32_t)(start >> 32));
	td_st32(f + OFF_SPAN, span);
	td_st32(f + OFF_PLEN, paylen);
	if (plen)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(f + 36, params, plen);
	if (paylen)
		memcpy(f + 36 + plen, payload, paylen);
	gw_frame_seal(f, 36 + plen + paylen);
	return 36 + plen + paylen;
}

/* Both decoders give want (a count or a code) for the frame. */
void td_expect(struct bufs *b, const uint8_t *f, size_t len, uint64_t out_len, int want,
		   const char *what)
{
	struct tally t = {0};
	/* The last td_expect() left its own decode in lib. */
	memcpy(b->lib, b->ref, b->cap * sizeof(float));
	compare(b, f, len, out_len, &t, what, 0);
	settle(b, what);
	int rc = gw_decode(f, len, b->lib, out_len);
	GW_CHECK(rc == want, "%s: %s, want %s", what, rc < 0 ? gw_error_name(rc) : "accepted",
		 want < 0 ? gw_error_name(want) : "accepted");
}

/* A hand-built frame (td_build's fields) and what decoding it into out_len
 * floats must give. */
struct hand {
	int id;
	uint16_t flags;
	uint32_t count;
	uint64_t start;
	uint32_t span;
	const void *params;
	uint32_t plen;
	const void *pay;
	uint32_t paylen;
	uint64_t out_len;
	int want;
	const char *what;
};

static void hand_frames(struct bufs *b, uint8_t *f, const struct hand *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = td_build(f, h[i].id, h[i].flags, h[i].count, h[i].start, h[i].span,
				      h[i].params, h[i].plen, h[i].pay, h[i].paylen);
		td_expect(b, f, len, h[i].out_len, h[i].want, h[i].what);
	}
}

static void test_hand_built(void **state)
{
	(void)state;
	struct bufs b;
	bufs_init(&b, 1 << 16, 3);
	uint8_t *f = calloc(1, 70000);
	uint8_t pay[65600] = {0};
	GW_CHECK(f, "out of memory");
	uint32_t nan_neg = 0xffc01234, zero_neg = 0x80000000, u_one = 0x3f800000;
	size_t n;

	const struct hand sizes[] = {
		/* 2: a raw frame of 36 + 65532 bytes is longer than GW_FRAME_MAX. */
		{GW_CODEC_RAW, 0, 16383, 0, 16383, NULL, 0, pay, 4 * 16383, 1 << 16, GW_ELENGTH,
		 "raw frame of 65568 bytes"},
		{GW_CODEC_RAW, 0, 16374, 0, 16374, NULL, 0, pay, 4 * 16374, 1 << 16, 16374,
		 "raw frame of 65532 bytes"},
		/* 1: dense frames of codecs that write sparse ones only. */
		{GW_CODEC_TOPK, 0, 2, 0, 2, NULL, 0, pay, 8, 100, GW_EUNSUPPORTED,
		 "dense topk frame"},
		{GW_CODEC_SKETCHML, 0, 2, 0, 2, NULL, 0, pay, 8, 100, GW_EUNSUPPORTED,
		 "dense sketchml frame"},
		{GW_CODEC_3LC, GW_FF_SPARSE, 2, 0, 2, &u_one, 4, pay, 1, 100, GW_EUNSUPPORTED,
		 "sparse 3lc frame"},
	};
	hand_frames(&b, f, sizes, GW_ARRAY_SIZE(sizes));
	/* 5: scales' signs. */
	uint8_t q[5] = {1, 2, 3, 4, 5};
	n = td_build(f, GW_CODEC_INT8, 0, 5, 0, 5, &zero_neg, 4, q, 5);
	td_expect(&b, f, n, 100, GW_ECORRUPT, "int8 scale -0");
	n = td_build(f, GW_CODEC_INT8, 0, 5, 0, 5, &nan_neg, 4, q, 5);
	td_expect(&b, f, n, 100, 5, "int8 scale -NaN");
	uint8_t tl[1] = {0};   /* digits 0,0,0,0,0: q = -1 five times */
	n = td_build(f, GW_CODEC_3LC, 0, 5, 0, 5, &nan_neg, 4, tl, 1);
	td_expect(&b, f, n, 100, 5, "3lc m = -NaN with q = -1 digits");
	GW_CHECK(gw_test_bits(b.lib[0]) == 0xffc01234, "3lc NaN m adds m itself: %08x",
		 gw_test_bits(b.lib[0]));
	n = td_build(f, GW_CODEC_TERNGRAD, 0, 5, 0, 5, &nan_neg, 4, tl, 1);
	td_expect(&b, f, n, 100, 5, "terngrad m = -NaN with q = -1 digits");
	GW_CHECK(gw_test_bits(b.lib[2]) == 0xffc01234, "terngrad NaN m adds m itself: %08x",
		 gw_test_bits(b.lib[2]));
	n = td_build(f, GW_CODEC_3LC, 0, 5, 0, 5, &zero_neg, 4, tl, 1);
	td_expect(&b, f, n, 100, GW_ECORRUPT, "3lc m = -0");
	/* 12: generic sparse keys from start to start + span - 1. */
	uint8_t sp[3 * 8] = {0};
	td_st32(sp, 10);
	td_st32(sp + 4, 12);
	td_st32(sp + 8, 14);
	const struct hand keys[] = {
		{GW_CODEC_RAW, GW_FF_SPARSE, 3, 10, 5, NULL, 0, sp, 24, 100, 3,
		 "raw sparse keys 10..14 in [10, 15)"},
		{GW_CODEC_RAW, GW_FF_SPARSE, 3, 9, 6, NULL, 0, sp, 24, 100, GW_ECORRUPT,
		 "raw sparse first key above start"},
		{GW_CODEC_RAW, GW_FF_SPARSE, 3, 10, 9, NULL, 0, sp, 24, 100, GW_ECORRUPT,
		 "raw sparse last key below the span's end"},
		{GW_CODEC_RAW, GW_FF_SPARSE, 3, 10, 9, NULL, 0, sp, 24, 13, GW_ERANGE,
		 "raw sparse key beyond the output first"},
		{GW_CODEC_BF16, GW_FF_SPARSE, 0, 123456789, 77, NULL, 0, NULL, 0, 100, 0,
		 "bf16 sparse count 0 anywhere"},
	};
	hand_frames(&b, f, keys, GW_ARRAY_SIZE(keys));
	/* 3: order and span before range, key by key. */
	td_st32(sp + 4, 200);
	uint8_t tl2[2] = {121, 0};   /* count 7: the last byte's 3 pad digits 0 */
	const struct hand order[] = {
		{GW_CODEC_RAW, GW_FF_SPARSE, 3, 10, 5, NULL, 0, sp, 24, 100, GW_ECORRUPT,
		 "raw sparse key past the span and the output"},
		/* 4: 3lc's order: m before start % 5 before the expansion. */
		{GW_CODEC_3LC, 0, 7, 3, 7, &zero_neg, 4, NULL, 0, 100, GW_ECORRUPT,
		 "3lc -0 m, bad start, empty payload"},
		{GW_CODEC_3LC, 0, 7, 3, 7, &u_one, 4, NULL, 0, 100, GW_ECORRUPT,
		 "3lc bad start, empty payload"},
		{GW_CODEC_3LC, 0, 7, 5, 7, &u_one, 4, NULL, 0, 100, GW_ELENGTH,
		 "3lc empty payload"},
		{GW_CODEC_3LC, 0, 7, 5, 7, &u_one, 4, tl2, 2, 100, GW_ECORRUPT,
		 "3lc pad digits not 1"},
		/* 6: params and payload lengths. */
		{GW_CODEC_BF16, 0, 2, 0, 2, &u_one, 4, pay, 4, 100, GW_ELENGTH, "bf16 with params"},
		{GW_CODEC_INT8, 0, 5, 0, 5, &u_one, 4, q, 4, 100, GW_ELENGTH, "int8 payload short"},
	};
	hand_frames(&b, f, order, GW_ARRAY_SIZE(order));
	hand_built_hq(&b, f, pay);
	free(f);
	bufs_free(&b);
}

GW_TEST_MAIN("refdec", 1, cmocka_unit_test(test_real_frames),
	     cmocka_unit_test(test_mutated_frames), cmocka_unit_test(test_hand_built))
