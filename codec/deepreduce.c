/* deepreduce: DeepReduce (Kostopoulou et al., 2021) framed per packet. A
 * sparse tensor — the input itself, or the top-r / random-r selection of a
 * dense one — is cut into frames that each cover a key range; a frame's
 * index section (codec/deepreduce/index_*.c) and value section
 * (value_*.c) are built over that range only, so every frame decodes on
 * its own. Any index codec combines with any value codec.
 *
 * A lossy Bloom index (P1, P2) sends values for positions it chose, not
 * necessarily the keys selected; with a dense input those positions carry
 * the gradient's own values (the GRACE trick the paper relies on), with a
 * sparse one whatever the error buffer holds there. Error feedback is
 * fused: the buffer holds the corrected values c = g + e from begin() on,
 * and each frame subtracts what it decodes to, so e = c - sent wherever a
 * frame carried a value and e = c elsewhere — nothing is lost, whatever
 * the policy dropped or the curve fit got wrong. A non-finite c is sent as
 * itself wherever a frame carries its position, and its slot restarts at 0
 * once no later frame can (wire-format §2.5), dense or sparse alike.
 *
 * Frame sizing is encode-and-shrink: the encoder guesses how many entries
 * fit from the bytes per entry of its last frame, encodes, and retries
 * with fewer when a section overflows — the size of a Bloom-P0 value
 * section or of a deflate stream is known only after encoding. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/sketch.h>

#include "codec_internal.h"
#include "deepreduce/dr.h"

#define DR_PARAM_LEN 8u

enum { SP_NONE = 0, SP_TOPR = 1, SP_RANDR = 2 };

static const struct gw_param_spec dr_params[] = {
	{GW_PARAM_INDEX, {0, DR_INDEX_COUNT_ - 1, DR_INDEX_BLOOM, 1}},
	{GW_PARAM_POLICY, {0, DR_POLICY_COUNT_ - 1, DR_P0, 1}},
	{GW_PARAM_FPR, {1e-9, 0.99, 0.001, 0}},
	{GW_PARAM_HASHES, {0, DR_HASHES_MAX, 0, 1}},
	{GW_PARAM_VALUE, {0, DR_VALUE_COUNT_ - 1, DR_VALUE_F32, 1}},
	{GW_PARAM_DEGREE, {0, DR_DEGREE_MAX, 5, 1}},
	{GW_PARAM_PIECES, {0, 64, 0, 1}},
	{GW_PARAM_LEVELS, {1, DR_LEVELS_MAX, 127, 1}},
	{GW_PARAM_BUCKET, {1, 1 << 20, 512, 1}},
	{GW_PARAM_SPARSIFIER, {0, 2, SP_TOPR, 1}},
	{GW_PARAM_FRACTION, {DBL_MIN, 1.0, 0.01, 0}},
	{GW_PARAM_SEED, {0, UINT32_MAX, 0, 1}},
	{GW_PARAM_ZLEVEL, {1, 9, 6, 1}},
};

struct dr_state {
	uint64_t *sel;           /* selected entries (tensor indices), ascending */
	uint64_t sel_cap;
	uint32_t *off;           /* one frame's offsets, positions, values */
	uint32_t *pos;
	float *val, *dec;
	size_t frame_cap;        /* entries the four arrays above hold */
	double bpe;              /* bytes per entry of the last frame */
	size_t min_body;         /* of this tensor's combination */
	uint64_t swept;          /* slots below it checked for non-finite c */
	bool key64;
};

const struct dr_index_ops *dr_index(unsigned id)
{
	static const struct dr_index_ops *const t[DR_INDEX_COUNT_] = {
		[DR_INDEX_RAW] = &dr_index_raw, [DR_INDEX_BLOOM] = &dr_index_bloom,
		[DR_INDEX_RLE] = &dr_index_rle, [DR_INDEX_DELTA] = &dr_index_delta,
	};
	return id < DR_INDEX_COUNT_ ? t[id] : NULL;
}

const struct dr_value_ops *dr_value(unsigned id)
{
	static const struct dr_value_ops *const t[DR_VALUE_COUNT_] = {
		[DR_VALUE_F32] = &dr_value_f32, [DR_VALUE_DEFLATE] = &dr_value_deflate,
		[DR_VALUE_QSGD] = &dr_value_qsgd, [DR_VALUE_POLY] = &dr_value_poly,
		[DR_VALUE_DEXP] = &dr_value_dexp,
	};
	return id < DR_VALUE_COUNT_ ? t[id] : NULL;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void dr_state_free(void *p)
{
	struct dr_state *s = p;
	if (s)
		GW_FREE_ALL(s->sel, s->off, s->pos, s->val, s->dec);
	free(s);
}

static void index_cfg(const gw_encoder *enc, uint64_t k0, struct dr_index_cfg *ic)
{
	*ic = (struct dr_index_cfg){
		.fpr = enc->param[GW_PARAM_FPR],
		.hashes = (unsigned)enc->param[GW_PARAM_HASHES],
		.policy = (unsigned)enc->param[GW_PARAM_POLICY],
		.seed = (uint32_t)mix64(mix64((uint64_t)enc->param[GW_PARAM_SEED] ^
					      mix64(((uint64_t)enc->t.id << 32) ^ 0x626c6f6full)) ^
					(k0 + enc->t.base)),
	};
}

static void value_cfg(const gw_encoder *enc, uint64_t k0, struct dr_value_cfg *vc)
{
	*vc = (struct dr_value_cfg){
		.degree = (unsigned)enc->param[GW_PARAM_DEGREE],
		.pieces = (unsigned)enc->param[GW_PARAM_PIECES],
		.levels = (unsigned)enc->param[GW_PARAM_LEVELS],
		.bucket = (unsigned)enc->param[GW_PARAM_BUCKET],
		.zlevel = (int)enc->param[GW_PARAM_ZLEVEL],
		/* hashed, not stepped: SplitMix streams whose seeds differ by
		 * a multiple of its increment are shifted copies */
		.seed = mix64(mix64((uint64_t)enc->param[GW_PARAM_SEED] ^
				    mix64(((uint64_t)enc->t.id << 32) ^ 0x71736764ull)) ^
			      (k0 + enc->t.base)),
	};
}

/* The body of a one-entry frame (span 1: no false positive), measured by
 * encoding one: the sections' headers depend on the combination. */
static size_t min_body_measure(const gw_encoder *enc)
{
	uint8_t buf[256];
	uint32_t off = 0, nv = 0;
	float v = 1.0f;
	struct dr_index_cfg ic;
	struct dr_value_cfg vc;
	index_cfg(enc, 0, &ic);
	value_cfg(enc, 0, &vc);
	int il = dr_index((unsigned)enc->param[GW_PARAM_INDEX])->encode(&off, 1, 1, &ic, buf,
									  sizeof(buf), &nv);
	int vl = dr_value((unsigned)enc->param[GW_PARAM_VALUE])->encode(&v, 1, &vc, buf,
									  sizeof(buf));
	if (il < 0 || vl < 0)
		return sizeof(buf) + DR_PARAM_LEN;   /* cannot happen; stay safe */
	return DR_PARAM_LEN + (size_t)il + (size_t)vl;
}

/* Measured once per tensor in begin() (a curve fit is not free), or now
 * when asked before any begin. */
static size_t dr_min_body(const gw_encoder *enc, size_t kb)
{
	(void)kb;
	const struct dr_state *s = enc->codec_state;
	return s && enc->active ? s->min_body : min_body_measure(enc);
}

static bool lossy_values(const gw_encoder *enc)
{
	unsigned v = (unsigned)enc->param[GW_PARAM_VALUE];
	return v == DR_VALUE_QSGD || v == DR_VALUE_POLY || v == DR_VALUE_DEXP;
}

/* Corrected value of entry i of the input (before selection). */
static inline float entry_value(const gw_encoder *enc, uint64_t i)
{
	const float *e = gw_ef_data(enc->ef);
	if (!e)
		return enc->t.values[i];
	return enc->sparse ? enc->t.values[i] + e[gw_tensor_key(&enc->t, i)]
			   : enc->t.values[i] + e[i];
}

/* Refuses before anything changes: the curve fits and QSGD cannot carry
 * non-finite values (f32 and deflate carry them bit-exact). */
static int dr_check(gw_encoder *enc)
{
	if (!lossy_values(enc))
		return GW_OK;
	for (uint64_t i = 0; i < enc->total; i++)
		if (!isfinite(entry_value(enc, i)))
			return GW_ERR(GW_EINVAL);
	return GW_OK;
}

static void *grow(void *p, size_t want, size_t elem)
{
	return want > SIZE_MAX / elem ? NULL : realloc(p, want * elem);
}

/* Selection sampling (Knuth's algorithm S): r of n indices uniformly,
 * ascending, in one pass. */
static uint64_t select_random(uint64_t n, uint64_t r, uint64_t seed, uint64_t *sel)
{
	uint64_t s = seed, got = 0;
	for (uint64_t i = 0; i < n && got < r; i++) {
		double u = (double)(dr_rng_next(&s) >> 11) * 0x1p-53;
		if ((double)(n - i) * u < (double)(r - got))
			sel[got++] = i;
	}
	return got;
}

/* Parameters that mean something only with one index codec, value codec
 * or sparsifier: giving one with another is a mistake worth a message. */
static const char *dr_combo(const gw_encoder *enc, char *buf, size_t len)
{
	static const struct {
		gw_param p, on;
		unsigned mask;   /* values of `on` that p applies to */
	} rules[] = {
		{GW_PARAM_POLICY, GW_PARAM_INDEX, 1u << DR_INDEX_BLOOM},
		{GW_PARAM_FPR, GW_PARAM_INDEX, 1u << DR_INDEX_BLOOM},
		{GW_PARAM_HASHES, GW_PARAM_INDEX, 1u << DR_INDEX_BLOOM},
		{GW_PARAM_DEGREE, GW_PARAM_VALUE, 1u << DR_VALUE_POLY},
		{GW_PARAM_PIECES, GW_PARAM_VALUE, 1u << DR_VALUE_POLY},
		{GW_PARAM_LEVELS, GW_PARAM_VALUE, 1u << DR_VALUE_QSGD},
		{GW_PARAM_BUCKET, GW_PARAM_VALUE, 1u << DR_VALUE_QSGD},
		{GW_PARAM_ZLEVEL, GW_PARAM_VALUE, 1u << DR_VALUE_DEFLATE},
		{GW_PARAM_FRACTION, GW_PARAM_SPARSIFIER, 1u << SP_TOPR | 1u << SP_RANDR},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(rules); i++) {
		unsigned on = (unsigned)enc->param[rules[i].on];
		if (!(enc->set_mask & (1u << rules[i].p)) || (rules[i].mask >> on) & 1)
			continue;
		char names[64] = "";
		for (unsigned v = 0; v < 8; v++)
			if ((rules[i].mask >> v) & 1) {
				size_t at = strlen(names);
				snprintf(names + at, sizeof(names) - at, "%s%s=%s", *names ? " or " : "",
					 gw_param_name(rules[i].on), gw_param_value_name(rules[i].on, v));
			}
		snprintf(buf, len, "parameter %s applies only with %s, not with %s=%s",
			 gw_param_name(rules[i].p), names, gw_param_name(rules[i].on),
			 gw_param_value_name(rules[i].on, on));
		return buf;
	}
	return NULL;
}

/* Restarts at 0 the non-finite slots no later frame can send, so none
 * poisons later rounds (wire-format §2.5): a dense tensor's keys below the
 * next frame's first key, a sparse tensor's entries before it; all of them
 * after the last frame. Until then such a slot holds c, which a frame
 * sends as itself (a lossy Bloom index may pick any position of its
 * range), and the feedback of that frame clears it. What this catches was
 * never sent: left out by the sparsifier, or lost by a lossy index. */
static void restart_nonfinite(gw_encoder *enc, struct dr_state *s)
{
	float *e = gw_ef_data(enc->ef);
	uint64_t end = enc->pos < enc->total ? s->sel[enc->pos]
		       : enc->sparse ? enc->t.nnz : enc->t.dim;
	for (; e && s->swept < end; s->swept++) {
		uint64_t k = enc->sparse ? gw_tensor_key(&enc->t, s->swept) : s->swept;
		if (!isfinite(e[k]))
			e[k] = 0.0f;
	}
}

static int dr_begin(gw_encoder *enc)
{
	struct dr_state *s = gw_codec_state(enc, sizeof(*s));
	if (!s)
		return GW_ERR(GW_ENOMEM);
	uint64_t n = enc->total;
	s->key64 = enc->sparse ? enc->t.key_bits == 64 : enc->t.dim > (uint64_t)UINT32_MAX + 1;
	s->bpe = 0;
	s->min_body = min_body_measure(enc);
	enc->total = 0;   /* nothing to walk unless the selection completes */
	if (n == 0)
		return GW_OK;
	if (s->sel_cap < n) {
		uint64_t *q = grow(s->sel, (size_t)n, sizeof(uint64_t));
		if (!q)
			return GW_ERR(GW_ENOMEM);
		s->sel = q;
		s->sel_cap = n;
	}
	/* Fold the feedback: from here on e holds the corrected values. */
	float *e = gw_ef_data(enc->ef);
	if (e) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = enc->sparse ? gw_tensor_key(&enc->t, i) : i;
			e[k] += enc->t.values[i];
		}
	}
	const float *c = e ? e : enc->t.values;
	unsigned sp = (unsigned)enc->param[GW_PARAM_SPARSIFIER];
	uint64_t got = 0;
	if (enc->sparse) {
		/* Inherently sparse input is used as it is. */
		for (uint64_t i = 0; i < n; i++)
			s->sel[i] = i;
		got = n;
	} else if (sp == SP_NONE) {
		for (uint64_t i = 0; i < n; i++)
			if (c[i] != 0.0f || !isfinite(c[i]))
				s->sel[got++] = i;
	} else {
		double rd = ceil(enc->param[GW_PARAM_FRACTION] * (double)n);
		uint64_t r = rd < 1 ? 1 : rd >= (double)n ? n : (uint64_t)rd;
		if (sp == SP_TOPR) {
			int64_t k = gw_top_abs(c, n, r, s->sel);
			if (k < 0)
				return (int)k;
			got = (uint64_t)k;
		} else {
			uint64_t seed = mix64((uint64_t)enc->param[GW_PARAM_SEED] ^
					      mix64(0x72616e64ull ^ enc->t.id));
			got = select_random(n, r, seed, s->sel);
		}
	}
	enc->total = got;
	s->swept = 0;
	if (got == 0)
		restart_nonfinite(enc, s);
	return GW_OK;
}

static inline uint64_t sel_key(const gw_encoder *enc, const struct dr_state *s, uint64_t j)
{
	uint64_t i = s->sel[j];
	return enc->sparse ? gw_tensor_key(&enc->t, i) : i;
}

static int frame_arrays(struct dr_state *s, size_t n)
{
	if (s->frame_cap >= n)
		return GW_OK;
	uint32_t *a = grow(s->off, n, 4), *b = a ? grow(s->pos, n, 4) : NULL;
	if (a)
		s->off = a;
	if (b)
		s->pos = b;
	float *c = b ? grow(s->val, n, 4) : NULL;
	if (c)
		s->val = c;
	float *d = c ? grow(s->dec, n, 4) : NULL;
	if (!d)
		return GW_ERR(GW_ENOMEM);
	s->dec = d;
	s->frame_cap = n;
	return GW_OK;
}

/* The value to send at offset pos[i] of a frame starting at key k0, whose
 * selected entries are s->sel[j0 .. j0 + n). With feedback it is the
 * corrected value the buffer holds at every key; without, the input's own
 * (a sparse input's: positions and selected keys both ascend, so one merge
 * walk finds them). */
static void gather(const gw_encoder *enc, const struct dr_state *s, uint64_t j0, uint32_t n,
		   uint64_t k0, uint32_t nv)
{
	const float *e = gw_ef_data(enc->ef);
	uint64_t j = j0;
	for (uint32_t i = 0; i < nv; i++) {
		uint64_t key = k0 + s->pos[i];
		if (e) {
			s->val[i] = e[key];   /* corrected, finite or not */
			continue;
		}
		if (!enc->sparse) {
			s->val[i] = enc->t.values[key];   /* the input's own value */
			continue;
		}
		while (j < j0 + n && gw_tensor_key(&enc->t, s->sel[j]) < key)
			j++;
		bool hit = j < j0 + n && gw_tensor_key(&enc->t, s->sel[j]) == key;
		s->val[i] = hit ? enc->t.values[s->sel[j]] : 0.0f;   /* 0: a false positive */
	}
}

/* Encodes the n entries from enc->pos into body; returns its bytes (the
 * header fields filled), GW_EBUDGET if they do not fit, or GW_E*. */
static int encode_n(gw_encoder *enc, uint32_t n, uint8_t *body, size_t cap,
		    struct gw_frame_info *h, uint32_t *nvals)
{
	struct dr_state *s = enc->codec_state;
	unsigned ii = (unsigned)enc->param[GW_PARAM_INDEX];
	unsigned vi = (unsigned)enc->param[GW_PARAM_VALUE];
	const struct dr_index_ops *io = dr_index(ii);
	const struct dr_value_ops *vo = dr_value(vi);
	uint64_t k0 = sel_key(enc, s, enc->pos);
	uint64_t kl = sel_key(enc, s, enc->pos + n - 1);
	uint32_t span = (uint32_t)(kl - k0 + 1);
	/* Room for a quarter more values than entries: a Bloom index's false
	 * positives, so that it can hand its positions back (below). */
	int rc = frame_arrays(s, (size_t)n + n / 4);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		s->off[i] = (uint32_t)(sel_key(enc, s, enc->pos + i) - k0);

	struct dr_index_cfg ic;
	index_cfg(enc, k0, &ic);
	bool got = false;
	ic.pos = s->pos;
	ic.pos_cap = (uint32_t)GW_MIN(s->frame_cap, UINT32_MAX);
	ic.pos_got = &got;
	uint8_t *idx = body + DR_PARAM_LEN;
	int ilen = io->encode(s->off, n, span, &ic, idx, cap - DR_PARAM_LEN, nvals);
	if (ilen < 0)
		return ilen;
	uint32_t nv = *nvals;
	if ((rc = frame_arrays(s, nv)) < 0)
		return rc;
	/* The positions the receiver will see, decoded by the receiver's code
	 * — unless the index codec found them with that code while encoding
	 * (Bloom P0's queries of the span, the decoder's half of the work). */
	if (!got && (rc = io->decode(idx, (size_t)ilen, span, nv, s->pos)) < 0)
		return rc == GW_ENOMEM ? rc : GW_ERR(GW_ECORRUPT);
	gather(enc, s, enc->pos, n, k0, nv);
	struct dr_value_cfg vc;
	value_cfg(enc, k0, &vc);
	uint8_t *vals = idx + ilen;
	int vlen = vo->encode(s->val, nv, &vc, vals, cap - DR_PARAM_LEN - (size_t)ilen);
	if (vlen < 0)
		return vlen;

	body[0] = (uint8_t)ii;
	body[1] = (uint8_t)vi;
	gw_st16(body + 2, 0);
	gw_st32(body + 4, (uint32_t)ilen);
	h->flags = GW_FF_SPARSE | (s->key64 ? GW_FF_KEY64 : 0);
	h->count = nv;
	h->start = k0;
	h->span = span;
	h->param_len = DR_PARAM_LEN;
	return (int)DR_PARAM_LEN + ilen + vlen;
}

/* Error feedback for a written frame: e <- c - decoded at its positions. */
static int feed_back(gw_encoder *enc, const uint8_t *body, int len, uint64_t k0,
		     uint32_t nv)
{
	struct dr_state *s = enc->codec_state;
	float *e = gw_ef_data(enc->ef);
	if (!e)
		return GW_OK;
	uint32_t ilen = gw_ld32(body + 4);
	const uint8_t *vals = body + DR_PARAM_LEN + ilen;
	int rc = dr_value(body[1])->decode(vals, (size_t)len - DR_PARAM_LEN - ilen, nv, s->dec);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < nv; i++) {
		float *x = &e[k0 + s->pos[i]];
		*x -= s->dec[i];
		if (!isfinite(*x))
			*x = 0.0f;
	}
	return GW_OK;
}

/* Bytes per entry before any frame was written: the index codec's and the
 * value codec's typical cost (a Bloom filter's m / n bits; a fit's reorder
 * map, about 2 bytes). Too low only costs a retry. */
static double first_guess(const gw_encoder *enc)
{
	static const double idx[DR_INDEX_COUNT_] = {4, 0, 1.5, 1.5};
	static const double val[DR_VALUE_COUNT_] = {4, 4, 0, 2.2, 2.2};
	unsigned ii = (unsigned)enc->param[GW_PARAM_INDEX];
	unsigned vi = (unsigned)enc->param[GW_PARAM_VALUE];
	double b = idx[ii] + val[vi];
	if (ii == DR_INDEX_BLOOM)
		b += -log(enc->param[GW_PARAM_FPR]) / (M_LN2 * M_LN2) / 8;
	if (vi == DR_VALUE_QSGD)
		b += (log2(enc->param[GW_PARAM_LEVELS] + 1) + 1) / 8;
	return b;
}

static int dr_encode(gw_encoder *enc, uint8_t *body, size_t cap, struct gw_frame_info *h)
{
	struct dr_state *s = enc->codec_state;
	/* How many entries may go: what is left, the layer's limit, and the
	 * span limit of the index decoders. */
	uint64_t left = enc->total - enc->pos;
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	uint64_t most = GW_MIN(left, lim ? lim : UINT32_MAX);
	uint64_t k0 = sel_key(enc, s, enc->pos);
	uint64_t lo = 1, hi = most;   /* largest n with span <= DR_SPAN_MAX */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (sel_key(enc, s, enc->pos + mid - 1) - k0 < DR_SPAN_MAX)
			lo = mid;
		else
			hi = mid - 1;
	}
	most = lo;
	double bpe = s->bpe > 0 ? s->bpe : first_guess(enc);
	/* (the 24 bytes: section headers, which do not grow with n) */
	double room = cap > DR_PARAM_LEN + 24 ? (double)(cap - DR_PARAM_LEN - 24) : 1.0;
	uint64_t n = (uint64_t)(room / bpe * 0.98);
	n = GW_MAX(n, 1);
	n = GW_MIN(n, most);
	uint32_t nv = 0;
	for (;;) {
		int len = encode_n(enc, (uint32_t)n, body, cap, h, &nv);
		/* False positives add values: the layer's limit is on values. */
		if (len >= 0 && lim && nv > lim)
			len = GW_ERR(GW_EBUDGET);
		if (len >= 0) {
			s->bpe = (double)len / (double)n;
			int rc = feed_back(enc, body, len, k0, nv);
			if (rc < 0)
				return rc;
			enc->pos += n;
			restart_nonfinite(enc, s);
			return len;
		}
		if (len != GW_EBUDGET || n == 1)
			return len;
		/* did not fit: fewer entries */
		n = lim && nv > lim ? GW_MIN(n - 1, n * lim / nv) : n * 3 / 4;
		n = GW_MAX(n, 1);
	}
}

/* Checks the frame and decodes its positions and values into fresh
 * arrays (caller frees *pos and *val). Returns 0 or GW_E*. */
static int dr_unpack(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, uint64_t out_len, uint32_t **pos, float **val,
		     const struct dr_value_ops **vo_out)
{
	*pos = NULL;
	*val = NULL;
	if (!(h->flags & GW_FF_SPARSE))
		return GW_ERR(GW_ECORRUPT);   /* deepreduce frames are key sets */
	if (h->param_len != DR_PARAM_LEN)
		return GW_ERR(GW_ELENGTH);
	const struct dr_index_ops *io = dr_index(params[0]);
	const struct dr_value_ops *vo = dr_value(params[1]);
	if (!io || !vo || gw_ld16(params + 2))
		return GW_ERR(GW_ECORRUPT);
	uint32_t ilen = gw_ld32(params + 4);
	if (ilen > h->payload_len)
		return GW_ERR(GW_ELENGTH);
	if (h->count == 0 || h->span > DR_SPAN_MAX || h->count > h->span)
		return GW_ERR(GW_ELENGTH);
	uint64_t kend = h->start + h->span - 1;
	if (!(h->flags & GW_FF_KEY64) && kend > UINT32_MAX)
		return GW_ERR(GW_ECORRUPT);
	if (kend >= out_len)
		return GW_ERR(GW_ERANGE);
	/* Every value section spends at least a bit per value (deflate: at
	 * most 1032 bytes out per byte in, zlib's limit), so a count the
	 * section cannot hold is refused before anything is allocated. */
	uint64_t vlen = h->payload_len - ilen;
	uint64_t most = params[1] == DR_VALUE_DEFLATE ? vlen * 258 : vlen * 8;
	if (h->count > most)
		return GW_ERR(GW_ELENGTH);
	*vo_out = vo;
	*pos = malloc((size_t)h->count * sizeof(uint32_t));
	*val = malloc((size_t)h->count * sizeof(float));
	if (!*pos || !*val)
		return GW_ERR(GW_ENOMEM);
	int rc = io->decode(payload, ilen, h->span, h->count, *pos);
	if (rc < 0)
		return rc;
	return vo->decode(payload + ilen, (size_t)vlen, h->count, *val);
}

static int dr_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len, float alpha)
{
	uint32_t *pos;
	float *val;
	const struct dr_value_ops *vo;
	int rc = dr_unpack(h, params, payload, out_len, &pos, &val, &vo);
	if (rc == GW_OK)
		for (uint32_t i = 0; i < h->count; i++)
			out[h->start + pos[i]] += alpha * val[i];
	free(pos);
	free(val);
	return rc < 0 ? rc : (int)h->count;
}

/* Validates the frame as decode does, keeping only its value codec: what
 * parts and bound check before reading the section lengths. */
static int dr_validate(const struct gw_frame_info *h, const uint8_t *params,
		       const uint8_t *payload, const struct dr_value_ops **vo)
{
	uint32_t *pos;
	float *val;
	int rc = dr_unpack(h, params, payload, UINT64_MAX, &pos, &val, vo);
	free(pos);
	free(val);
	return rc;
}

static int dr_parts(const struct gw_frame_info *h, const uint8_t *params,
		    const uint8_t *payload, struct gw_frame_parts *parts)
{
	const struct dr_value_ops *vo;
	int rc = dr_validate(h, params, payload, &vo);
	if (rc < 0)
		return rc;
	parts->keys = gw_ld32(params + 4);
	parts->values = h->payload_len - parts->keys;
	return GW_OK;
}

static int dr_bound(const struct gw_frame_info *h, const uint8_t *params,
		const uint8_t *payload, float *bound)
{
	const struct dr_value_ops *vo;
	int rc = dr_validate(h, params, payload, &vo);
	if (rc < 0)
		return rc;
	*bound = 0.0f;
	uint32_t ilen = gw_ld32(params + 4);
	return vo->bound ? vo->bound(payload + ilen, h->payload_len - ilen, h->count, bound)
			 : GW_OK;
}

const struct gw_codec_ops gw_codec_deepreduce = {
	.name = "deepreduce",
	.id = GW_CODEC_DEEPREDUCE,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KIND_SPARSE,
	GW_OPS_PARAMS(dr_params),
	.min_body = dr_min_body,
	.check = dr_check,
	.combo = dr_combo,
	.begin = dr_begin,
	.encode = dr_encode,
	.decode = dr_decode,
	.parts = dr_parts,
	.bound = dr_bound,
	.flags = GW_OPS_FUSED_EF,
	.state_free = dr_state_free,
};
