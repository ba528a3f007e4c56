/* hq: summable quantisation (wire-format §4.11). Each frame's values are
 * rotated (a randomised Hadamard transform, O(n log n), so that a few
 * large values no longer set the range of all) and rounded to b-bit codes
 * on a scale S. In an allreduce every worker of a round quantises a chunk
 * on the same S — the largest maximum of the round before, which the
 * shard sends down with the results — so the shard adds the codes as
 * integers and sends their exact sum: no decode, no second quantisation.
 * What falls outside [-S, S] is clipped, and what rounding and clipping
 * drop stays in the error buffer (feedback fused into the encode pass).
 *
 * Rounding: nearest (even) by default. With error feedback the error of
 * one round is sent in the next, so nearest rounding loses nothing and
 * adds no variance; stochastic rounding (rounding=stochastic) is unbiased
 * in one round, for use without feedback, at the price of a noise of up
 * to one step per value (docs/codecs.md has both measured).
 *
 * Non-finite input poisons its frame: codes zero, flag POISON, decoding
 * to NaN everywhere (a shard's sum is poisoned if any contribution is),
 * which is what the overflow checks of mixed-precision training look
 * for; the error buffer of that range restarts at zero. */
#include <math.h>
#include <stdlib.h>

#include "gw_cpu.h"
#include "gw_rand.h"
#include "hq_internal.h"

static const struct gw_param_spec hq_params[] = {
	{GW_PARAM_BITS, {2, 8, 4, 1}},
	{GW_PARAM_ROTATE, {0, 1, 1, 1}},
	{GW_PARAM_ROUNDING, {0, 1, 0, 1}},
	{GW_PARAM_SEED, {0, UINT32_MAX, 0, 1}},
};

struct hq_state {
	float *c, *y;          /* a frame's corrected and rotated values */
	int8_t *q;             /* its codes */
	uint32_t cap;
	int shared;            /* gw_encoder_set_shared for the next frame */
	float scale;
	uint32_t seed;
	uint64_t frames;       /* frames written: stochastic rounding's counter */
};

static void hq_state_free(void *p)
{
	struct hq_state *st = p;
	if (st)
		GW_FREE_ALL(st->c, st->y, st->q);
	free(st);
}

static struct hq_state *state_of(gw_encoder *enc)
{
	return gw_codec_state(enc, sizeof(struct hq_state));
}

static int reserve(struct hq_state *st, uint32_t n)
{
	if (st->cap >= n)
		return GW_OK;
	GW_FREE_ALL(st->c, st->y, st->q);
	st->c = malloc((size_t)n * sizeof(float));
	st->y = malloc((size_t)n * sizeof(float));
	st->q = malloc(n);
	st->cap = st->c && st->y && st->q ? n : 0;
	return st->cap ? GW_OK : GW_ERR(GW_ENOMEM);
}

/* ---- params ---- */

void hq_params_write(uint8_t *p, const struct hq_params *q)
{
	p[0] = q->bits;
	p[1] = q->width;
	p[2] = q->flags;
	p[3] = 0;
	gw_st32(p + 4, q->contributors);
	gw_st32(p + 8, q->seed);
	gw_stf32(p + 12, q->scale);
	gw_stf32(p + 16, q->next);
}

/* Finite, and its sign bit clear (-0 too is refused, §2.5). */
static int magnitude_ok(float v)
{
	return isfinite(v) && !signbit(v);
}

int hq_params_read(const struct gw_frame_info *h, const uint8_t *p, struct hq_params *q)
{
	if (h->param_len != HQ_PARAM_LEN)
		return GW_ERR(GW_ELENGTH);
	*q = (struct hq_params){.bits = p[0], .width = p[1], .flags = p[2],
				.contributors = gw_ld32(p + 4), .seed = gw_ld32(p + 8),
				.scale = gw_ldf32(p + 12), .next = gw_ldf32(p + 16)};
	if ((q->flags & ~HQ_F_KNOWN) || p[3])
		return GW_ERR(GW_ERESERVED);
	if (q->bits < 2 || q->bits > 8)
		return GW_ERR(GW_ECORRUPT);
	if (q->flags & HQ_F_SUM) {
		if (q->width < 2 || q->width > HQ_WIDTH_MAX || !q->contributors)
			return GW_ERR(GW_ECORRUPT);
	} else if (q->width != q->bits || q->contributors != 1) {
		return GW_ERR(GW_ECORRUPT);
	}
	if (!(q->flags & HQ_F_ROTATED) && q->seed)
		return GW_ERR(GW_ECORRUPT);
	if (!magnitude_ok(q->scale) || !magnitude_ok(q->next))
		return GW_ERR(GW_ECORRUPT);
	if (h->payload_len != hq_payload_len(h->count, q->width))
		return GW_ERR(GW_ELENGTH);
	return GW_OK;
}

/* The largest code a frame may hold: contributors times Q, and what its
 * width holds. */
static uint32_t code_limit(const struct hq_params *q)
{
	uint64_t lim = (uint64_t)q->contributors * hq_levels(q->bits);
	uint64_t wmax = (1ull << (q->width - 1)) - 1;
	return (uint32_t)GW_MIN(GW_MIN(lim, wmax), (uint64_t)INT32_MAX);
}

/* ---- encode ---- */

static size_t hq_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	(void)kb;
	return HQ_PARAM_LEN + 1;
}

static int hq_check(gw_encoder *enc)
{
	return state_of(enc) ? GW_OK : GW_ERR(GW_ENOMEM);
}

static int hq_shared(gw_encoder *enc, float scale, uint32_t seed)
{
	struct hq_state *st = state_of(enc);
	if (!st)
		return GW_ERR(GW_ENOMEM);
	st->shared = 1;
	st->scale = scale;
	st->seed = seed;
	return GW_OK;
}

static inline uint32_t mag_bits(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	return u & 0x7fffffffu;
}

static inline float round_even(float x)
{
	return (x + 0x1.8p23f) - 0x1.8p23f;   /* |x| < 2^22: the nearest integer, ties even */
}

/* c = g + e (g alone without e); returns the largest magnitude's bits, NaN
 * and Inf above every finite one. */
static inline __attribute__((always_inline)) void fold_body(const float *g, const float *e,
							   uint32_t n, float *c, uint32_t *mb)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		float v = e ? g[i] + e[i] : g[i];
		c[i] = v;
		uint32_t b = mag_bits(v);
		m = b > m ? b : m;
	}
	*mb = m;
}
GW_ISA_LOOP(fold, (const float *g, const float *e, uint32_t n, float *c, uint32_t *mb),
	    (g, e, n, c, mb))

static inline __attribute__((always_inline)) void maxabs_body(const float *y, uint32_t n,
							     uint32_t *mb)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = mag_bits(y[i]);
		m = b > m ? b : m;
	}
	*mb = m;
}
GW_ISA_LOOP(maxabs, (const float *y, uint32_t n, uint32_t *mb), (y, n, mb))

/* Nearest rounding of y * inv, clipped to [-Q, Q]: the codes q, and in y
 * what each stands for (code * step), the frame's decoded values before
 * the inverse rotation. */
static inline __attribute__((always_inline)) void quant_body(float *y, uint32_t n, float inv,
							    float step, float lim, int8_t *q)
{
	for (uint32_t i = 0; i < n; i++) {
		float x = y[i] * inv;
		x = x > lim ? lim : x < -lim ? -lim : x;
		float r = round_even(x);
		q[i] = (int8_t)r;
		y[i] = r * step;
	}
}
GW_ISA_LOOP(quant, (float *y, uint32_t n, float inv, float step, float lim, int8_t *q),
	    (y, n, inv, step, lim, q))

/* Stochastic rounding: floor(y * inv + u), u uniform in [0, 1) on 24 bits
 * from SplitMix64 seeded by s, one draw per value. */
static void quant_stochastic(float *y, uint32_t n, float inv, float step, float lim,
			     int8_t *q, uint64_t s)
{
	for (uint32_t i = 0; i < n; i++) {
		float u = (float)(gw_mix64(s + (uint64_t)(i + 1) * GW_SPLITMIX_GAMMA) >> 40) *
			  0x1p-24f;
		float x = y[i] * inv;
		x = x > lim ? lim : x < -lim ? -lim : x;
		float r = floorf(x + u);
		r = r > lim ? lim : r;
		q[i] = (int8_t)r;
		y[i] = r * step;
	}
}

/* e = c - d: what the frame did not carry; *mb the largest magnitude's
 * bits (a value near FLT_MAX can overflow the inverse rotation). */
static inline __attribute__((always_inline)) void residual_body(const float *c, const float *d,
							       uint32_t n, float *e, uint32_t *mb)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		e[i] = c[i] - d[i];
		uint32_t b = mag_bits(e[i]);
		m = b > m ? b : m;
	}
	*mb = m;
}
GW_ISA_LOOP(residual, (const float *c, const float *d, uint32_t n, float *e, uint32_t *mb),
	    (c, d, n, e, mb))

/* Largest magnitude's bits of g + e (g alone without e). */
static inline __attribute__((always_inline)) void scan_body(const float *g, const float *e,
							   uint32_t n, uint32_t *mb)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t b = mag_bits(e ? g[i] + e[i] : g[i]);
		m = b > m ? b : m;
	}
	*mb = m;
}
GW_ISA_LOOP(scan, (const float *g, const float *e, uint32_t n, uint32_t *mb), (g, e, n, mb))

/* Unrotated, rounded to nearest: c = g + e, its code and e = c - code *
 * step in one sweep (what the general path does in four); *mb the largest
 * magnitude's bits. A NaN or Inf is quantised as 0 (no float-to-integer
 * conversion of a NaN) and leaves a junk e: the caller poisons the frame
 * then. */
static inline __attribute__((always_inline)) void direct_body(const float *g, float *e,
							     uint32_t n, float inv, float step,
							     float lim, int8_t *q, uint32_t *mb)
{
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		float c = e ? g[i] + e[i] : g[i];
		uint32_t b = mag_bits(c);
		m = b > m ? b : m;
		float x = (b < 0x7f800000u ? c : 0.0f) * inv;
		x = x > lim ? lim : x;
		x = x < -lim ? -lim : x;
		float r = round_even(x);
		q[i] = (int8_t)(int32_t)r;
		if (e)
			e[i] = c - r * step;
	}
	*mb = m;
}
GW_ISA_LOOP(direct, (const float *g, float *e, uint32_t n, float inv, float step, float lim,
		     int8_t *q, uint32_t *mb), (g, e, n, inv, step, lim, q, mb))

/* The frame's step and inverse on scale: inv 0 when it would not be
 * finite (a scale below ~2^-120: every code 0, all kept in e). */
static void steps_of(float scale, uint32_t Q, float *step, float *inv)
{
	float lim = (float)Q;
	*step = scale / lim;
	*inv = scale > 0.0f ? lim / scale : 0.0f;
	if (!isfinite(*inv) || *step == 0.0f)
		*inv = 0.0f;
}

/* A frame with a NaN or Inf: codes 0, the range of e restarted, scale and
 * next the shared scale (0 without one). */
static void poison(struct hq_params *fp, const struct hq_state *st, int8_t *q, float *e,
		   uint32_t n)
{
	fp->flags |= HQ_F_POISON;
	fp->scale = fp->next = st->shared ? st->scale : 0.0f;
	memset(q, 0, n);
	if (e)
		memset(e, 0, (size_t)n * sizeof(float));
}

/* An unrotated frame rounded to nearest, fused: on the shared scale in
 * one sweep, else after a scan for the frame's own. */
static void direct_frame(gw_encoder *enc, struct hq_state *st, float *e, uint32_t n,
			 uint32_t Q, struct hq_params *fp)
{
	const float *g = enc->src + enc->pos;
	float *ep = e ? e + enc->pos : NULL;
	uint32_t mb;
	if (st->shared) {
		fp->scale = st->scale;
	} else {
		scan(g, ep, n, &mb);
		if (mb >= 0x7f800000u) {
			poison(fp, st, st->q, ep, n);
			return;
		}
		memcpy(&fp->scale, &mb, 4);
	}
	float step, inv;
	steps_of(fp->scale, Q, &step, &inv);
	direct(g, ep, n, inv, step, (float)Q, st->q, &mb);
	memcpy(&fp->next, &mb, 4);
	if (mb >= 0x7f800000u) {
		poison(fp, st, st->q, ep, n);
		return;
	}
	/* code * step rounds above FLT_MAX only when Q * step does (a scale
	 * near FLT_MAX, §4.11.5): then e = c - Inf, which restarts at 0 as the
	 * rotated path's residual does. */
	for (uint32_t i = 0; ep && !isfinite((float)Q * step) && i < n; i++)
		if (!isfinite(ep[i]))
			ep[i] = 0.0f;
}

/* Without a shared scale, a frame's seed comes from the encoder's, the
 * tensor and the frame's first element, so frames of one tensor differ. */
static uint32_t own_seed(const gw_encoder *enc, uint64_t start)
{
	uint64_t s = (uint64_t)enc->param[GW_PARAM_SEED];
	return (uint32_t)gw_mix64(gw_mix64(s ^ ((uint64_t)enc->t.id << 32)) ^ start);
}

static int hq_encode(gw_encoder *enc, uint8_t *body, size_t cap, struct gw_frame_info *h)
{
	struct hq_state *st = enc->codec_state;
	unsigned b = (unsigned)enc->param[GW_PARAM_BITS];
	uint32_t Q = hq_levels(b);
	int rot = enc->param[GW_PARAM_ROTATE] != 0;
	if (cap < HQ_PARAM_LEN + 1)
		return GW_ERR(GW_EBUDGET);
	uint32_t n = gw_frame_take(enc, (cap - HQ_PARAM_LEN) * 8 / b, 0, 1);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	int rc = reserve(st, n);
	if (rc < 0)
		return rc;
	gw_frame_range(enc, n, h);
	h->param_len = HQ_PARAM_LEN;
	float *e = gw_ef_data(enc->ef);
	uint64_t p = enc->pos;
	float *c = st->c, *y = st->y;
	int8_t *q = st->q;

	struct hq_params fp = {.bits = (uint8_t)b, .width = (uint8_t)b, .contributors = 1};
	fp.seed = !rot ? 0 : st->shared ? st->seed : own_seed(enc, enc->t.base + p);
	fp.flags = rot ? HQ_F_ROTATED : 0;
	uint32_t mb;
	if (!rot && enc->param[GW_PARAM_ROUNDING] == 0) {
		direct_frame(enc, st, e, n, Q, &fp);
		goto done;
	}
	fold(enc->src + p, e ? e + p : NULL, n, c, &mb);
	int bad = mb >= 0x7f800000u;
	if (!bad) {
		memcpy(y, c, (size_t)n * sizeof(float));
		if (rot) {
			hq_rotate(y, n, fp.seed);
			maxabs(y, n, &mb);
		}
		memcpy(&fp.next, &mb, 4);
		bad = mb >= 0x7f800000u;   /* the rotation's sums overflowed */
	}
	if (bad) {
		poison(&fp, st, q, e ? e + p : NULL, n);
	} else {
		fp.scale = st->shared ? st->scale : fp.next;
		float lim = (float)Q, step, inv;
		steps_of(fp.scale, Q, &step, &inv);
		if (enc->param[GW_PARAM_ROUNDING] == 0)
			quant(y, n, inv, step, lim, q);
		else
			quant_stochastic(y, n, inv, step, lim, q,
					 gw_mix64(((uint64_t)fp.seed << 32 ^
						   (uint64_t)enc->param[GW_PARAM_SEED]) +
						  st->frames * GW_SPLITMIX_GAMMA) ^ (p + 1));
		if (e) {
			if (rot)
				hq_unrotate(y, n, fp.seed);
			residual(c, y, n, e + p, &mb);
			for (uint32_t i = 0; mb >= 0x7f800000u && i < n; i++)
				if (!isfinite(e[p + i]))
					e[p + i] = 0.0f;   /* restart, as a poisoned range does */
		}
	}
done:
	hq_params_write(body, &fp);
	hq_pack8(body + HQ_PARAM_LEN, q, n, b);
	st->shared = 0;
	st->frames++;
	enc->pos += n;
	return (int)(HQ_PARAM_LEN + hq_payload_len(n, b));
}

/* Folds per frame: what was not encoded is e + g, added now. A rotated
 * frame's c - decoded + decoded would not give c back bit for bit. */
static void hq_abandon(gw_encoder *enc)
{
	float *e = gw_ef_data(enc->ef);
	for (uint64_t i = enc->pos; e && i < enc->total; i++)
		e[i] += enc->src[i];
	enc->pos = enc->total;
}

/* ---- decode ---- */

/* buf = codes * step; out += alpha * v: the decode's two sweeps. */
static inline __attribute__((always_inline)) void dequant_body(const int32_t *q, uint32_t n,
							      float step, float *v)
{
	for (uint32_t i = 0; i < n; i++)
		v[i] = (float)q[i] * step;
}
GW_ISA_LOOP(dequant, (const int32_t *q, uint32_t n, float step, float *v), (q, n, step, v))

static inline __attribute__((always_inline)) void axpy_body(const float *v, uint32_t n,
							   float alpha, float *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] += alpha * v[i];
}
GW_ISA_LOOP(axpy, (const float *v, uint32_t n, float alpha, float *out), (v, n, alpha, out))

/* Adds alpha * (what the codes stand for) into out[0..count): block by
 * block, each unrotated in a buffer of its own. The codes were checked. */
static void add_values(const struct hq_params *q, const int32_t *codes, uint32_t count,
		       float *out, float alpha)
{
	float step = q->scale / (float)hq_levels(q->bits);
	if (q->flags & HQ_F_POISON) {
		for (uint32_t i = 0; i < count; i++)
			out[i] += alpha * NAN;
		return;
	}
	float buf[HQ_BLOCK_MAX];
	for (uint32_t off = 0; off < count;) {
		uint32_t blk = (q->flags & HQ_F_ROTATED) ? hq_block(count - off)
							: GW_MIN(count - off, HQ_BLOCK_MAX);
		dequant(codes + off, blk, step, buf);
		if (q->flags & HQ_F_ROTATED)
			hq_unrotate_part(buf, blk, q->seed, off);
		axpy(buf, blk, alpha, out + off);
		off += blk;
	}
}

/* Reads and checks a frame's params into *q and its codes into a buffer it
 * allocates (*codes, freed by the caller, NULL when the params fail). */
static int read_frame(const struct gw_frame_info *h, const uint8_t *params,
		      const uint8_t *payload, struct hq_params *q, int32_t **codes)
{
	*codes = NULL;
	int rc = hq_params_read(h, params, q);
	if (rc < 0)
		return rc;
	*codes = malloc(((size_t)h->count + 1) * sizeof(int32_t));
	if (!*codes)
		return GW_ERR(GW_ENOMEM);
	return hq_unpack32(payload, h->count, q->width, code_limit(q), *codes);
}

static int hq_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len, float alpha)
{
	(void)out_len;   /* the driver checked [start, start + count) */
	struct hq_params q;
	int32_t *codes;
	int rc = read_frame(h, params, payload, &q, &codes);
	if (rc == GW_OK)
		add_values(&q, codes, h->count, out + h->start, alpha);
	free(codes);
	return rc < 0 ? rc : (int)h->count;
}

static int hq_parts(const struct gw_frame_info *h, const uint8_t *params,
		    const uint8_t *payload, struct gw_frame_parts *parts)
{
	struct hq_params q;
	int32_t *codes;
	int rc = read_frame(h, params, payload, &q, &codes);
	free(codes);
	if (rc < 0)
		return rc;
	parts->params = HQ_PARAM_LEN;
	parts->values = h->payload_len;
	return GW_OK;
}

const struct gw_codec_ops gw_codec_hq = {
	.name = "hq",
	.id = GW_CODEC_HQ,
	.caps = GW_CODEC_DENSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KIND_DENSE,
	GW_OPS_PARAMS(hq_params),
	.min_body = hq_min_body,
	.check = hq_check,
	.encode = hq_encode,
	.decode = hq_decode,
	.parts = hq_parts,
	.shared = hq_shared,
	.abandon = hq_abandon,
	.flags = GW_OPS_FUSED_EF,
	.state_free = hq_state_free,
};

/* ---- summable frames: the public calls ---- */

int gw_encoder_set_shared(gw_encoder *enc, float scale, uint32_t seed)
{
	if (!enc)
		return GW_ERRF(GW_EINVAL, "enc: NULL");
	if (!enc->ops->shared)
		return GW_ERRF(GW_EUNSUPPORTED, "codec %s: no shared scale (hq has one)",
			       enc->ops->name);
	if (!magnitude_ok(scale))
		return GW_ERRF(GW_EINVAL, "scale: %g is not a finite value >= 0", (double)scale);
	return enc->ops->shared(enc, scale, seed);
}

static void info_of(const struct hq_params *q, gw_sum_info *si)
{
	if (si)
		*si = (gw_sum_info){.scale = q->scale, .next = q->next, .seed = q->seed,
				    .contributors = q->contributors, .bits = q->bits,
				    .width = q->width,
				    .rotated = (q->flags & HQ_F_ROTATED) != 0,
				    .poisoned = (q->flags & HQ_F_POISON) != 0};
}

/* The header and params of an hq frame in buf: verified with its checksum
 * when the payload is read too, else only peeked. */
static int hq_frame_open(const void *buf, size_t len, bool verify, gw_frame_info *fi,
			 struct hq_params *q)
{
	int rc = verify ? gw_frame_verify(buf, len, fi) : gw_frame_peek(buf, len, fi);
	if (rc < 0)
		return rc;
	if (fi->codec != GW_CODEC_HQ)
		return GW_ERR(GW_EUNSUPPORTED);
	return hq_params_read(fi, (const uint8_t *)buf + GW_FRAME_HDR_LEN, q);
}

int gw_sum_info_of(const void *buf, size_t len, gw_sum_info *si)
{
	gw_frame_info fi;
	struct hq_params q;
	int rc = hq_frame_open(buf, len, false, &fi, &q);
	if (rc < 0)
		return rc;
	info_of(&q, si);
	return GW_OK;
}

int gw_sum_add(const void *buf, size_t len, int32_t *acc, uint64_t base, uint64_t n,
	       gw_sum_info *si)
{
	if (!acc && n)
		return GW_ERR(GW_EINVAL);
	gw_frame_info fi;
	struct hq_params q;
	int rc = hq_frame_open(buf, len, true, &fi, &q);
	if (rc < 0)
		return rc;
	const uint8_t *params = (const uint8_t *)buf + GW_FRAME_HDR_LEN;
	if (fi.start < base || fi.start - base > n || fi.count > n - (fi.start - base))
		return GW_ERR(GW_ERANGE);
	int32_t *dst = acc + (fi.start - base);
	const uint8_t *payload = params + HQ_PARAM_LEN;
	if (q.width <= 8) {
		rc = hq_add_codes(payload, fi.count, q.width, code_limit(&q), dst);
	} else {   /* a sum of sums: rare, the plain reader */
		int32_t *codes;
		rc = read_frame(&fi, params, payload, &q, &codes);
		for (uint32_t i = 0; rc == GW_OK && i < fi.count; i++)
			dst[i] = (int32_t)((uint32_t)dst[i] + (uint32_t)codes[i]);   /* wraps */
		free(codes);
	}
	if (rc < 0)
		return rc;
	info_of(&q, si);
	return (int)fi.count;
}

int gw_sum_frame_max(unsigned bits, uint32_t contributors, uint32_t n)
{
	if (bits < 2 || bits > 8 || !contributors)
		return GW_ERR(GW_EINVAL);
	unsigned w = hq_width_of((uint64_t)contributors * hq_levels(bits));
	uint64_t len = GW_FRAME_HDR_LEN + HQ_PARAM_LEN + hq_payload_len(n, w);
	return w > HQ_WIDTH_MAX || len > GW_FRAME_MAX ? GW_ERR(GW_EINVAL) : (int)len;
}

static inline __attribute__((always_inline)) void maxcode_body(const int32_t *a, uint32_t n,
							      uint32_t *m)
{
	uint32_t x = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = a[i] < 0 ? 0u - (uint32_t)a[i] : (uint32_t)a[i];
		x = v > x ? v : x;
	}
	*m = x;
}
GW_ISA_LOOP(maxcode, (const int32_t *a, uint32_t n, uint32_t *m), (a, n, m))

/* Sum frames of codes up to 8 bits pack from bytes, the fast way. */
static inline __attribute__((always_inline)) void narrow_body(const int32_t *a, uint32_t n,
							     int8_t *q)
{
	for (uint32_t i = 0; i < n; i++)
		q[i] = (int8_t)a[i];
}
GW_ISA_LOOP(narrow, (const int32_t *a, uint32_t n, int8_t *q), (a, n, q))

int gw_sum_encode(void *buf, size_t budget, uint32_t tensor, uint64_t start,
		  const int32_t *acc, uint32_t n, const gw_sum_info *si)
{
	if (!buf || !si || !acc || !n)   /* a dense frame holds 1 value or more */
		return GW_ERR(GW_EINVAL);
	struct hq_params q = {.bits = si->bits, .contributors = si->contributors,
			      .seed = si->seed, .scale = si->scale, .next = si->next,
			      .flags = (uint8_t)(HQ_F_SUM | (si->rotated ? HQ_F_ROTATED : 0) |
						 (si->poisoned ? HQ_F_POISON : 0))};
	if (q.bits < 2 || q.bits > 8 || !q.contributors || (!si->rotated && q.seed) ||
	    !magnitude_ok(q.scale) || !magnitude_ok(q.next) || start > UINT64_MAX - n)
		return GW_ERR(GW_EINVAL);
	uint32_t m;
	maxcode(acc, n, &m);
	if ((uint64_t)m > (uint64_t)q.contributors * hq_levels(q.bits))
		return GW_ERR(GW_EINVAL);
	unsigned width = hq_width_of(m);
	if (width > HQ_WIDTH_MAX)   /* -2^31: no width of the format holds it */
		return GW_ERR(GW_EINVAL);
	q.width = (uint8_t)width;
	uint64_t plen = hq_payload_len(n, q.width);
	uint64_t len = GW_FRAME_HDR_LEN + HQ_PARAM_LEN + plen;
	if (len > GW_MIN(budget, (size_t)GW_FRAME_MAX))
		return GW_ERR(GW_EBUDGET);
	uint8_t *b = buf;
	struct gw_frame_info h = {.codec = GW_CODEC_HQ, .tensor = tensor, .count = n,
				  .start = start, .span = n, .param_len = HQ_PARAM_LEN,
				  .payload_len = (uint32_t)plen, .frame_len = (uint32_t)len};
	gw_frame_write_header(b, &h);
	hq_params_write(b + GW_FRAME_HDR_LEN, &q);
	uint8_t *payload = b + GW_FRAME_HDR_LEN + HQ_PARAM_LEN;
	if (q.width <= 8) {
		/* in place: the codes' bytes end before the packed ones start */
		int8_t tmp[1024];
		for (uint32_t off = 0; off < n; off += 1024) {
			uint32_t k = GW_MIN(n - off, 1024u);
			narrow(acc + off, k, tmp);
			hq_pack8(payload + (size_t)off / 8 * q.width, tmp, k, q.width);
		}
	} else {
		hq_pack32(payload, acc, n, q.width);
	}
	gw_frame_seal(b, (size_t)len);
	return (int)len;
}
