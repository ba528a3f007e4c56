/* topk: top-k sparsification with error feedback (Aji & Heafield 2017;
 * Lin et al. 2018), one of 3LC's baselines. Of the n values of a tensor
 * (dense: dim; sparse: nnz entries) the encoder sends the
 * k = ceil(fraction * n) with the largest corrected magnitude |g + e| as
 * key/float32 pairs and keeps everything else in the error buffer:
 * e <- corrected - sent, so a sent coordinate's residual is exactly 0 and an
 * unsent one keeps its whole corrected value.
 *
 * Selection runs once per tensor in begin(), in worst-case linear time: a
 * radix select on the magnitudes' float bits (for non-negative floats the
 * bit patterns order like the values) finds the k-th largest magnitude T
 * with one histogram pass over the top 11 bits fused with the correction
 * pass, and two narrower passes over the next 10 + 10 bits restricted to
 * T's bucket; then one pass in index order takes every value above T and
 * the lowest-indexed values equal to T until k are taken — so ties break
 * deterministically and the selection comes out in ascending key order,
 * ready for framing.
 *
 * Frames are always sparse (GW_FF_SPARSE), whatever the input: a dense
 * tensor of dim d produces keys < d. The first key of a frame is the
 * header's start; the payload is count float32 values followed by count - 1
 * key gaps, each stored as (gap - 1) in an unsigned LEB128 varint
 * (docs/wire-format-baselines.part.md).
 *
 * Non-finite corrected values rank above every finite one, are sent as they
 * are (NaN stays NaN, Inf stays Inf, as in raw) and their error-buffer slot
 * restarts at 0 whether or not they fit into the k, so NaN never lingers in
 * the buffer. */
#include <float.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>

#include "codec_internal.h"
#include "select.h"

struct tk_state {
	uint32_t *mag;           /* total magnitude ranks (selection scratch) */
	uint64_t mag_cap;
	uint64_t *sel;           /* k selected entry indices, ascending */
	uint64_t sel_cap;
	float *val;              /* their corrected values */
	uint64_t val_cap;
	bool key64;              /* frames set GW_FF_KEY64 */
};

static const struct gw_param_spec tk_params[] = {
	{GW_PARAM_FRACTION, {DBL_MIN, 1.0, 0.01, 0}},
};

static size_t tk_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	(void)kb;
	return 4;   /* one value; its key is the header's start */
}

static void tk_state_free(void *p)
{
	struct tk_state *s = p;
	if (s)
		GW_FREE_ALL(s->mag, s->sel, s->val);
	free(s);
}

/* p with room for want elements (grown if *cap is less), or NULL — p then
 * stays valid and owned by the caller. */
static void *grow(void *p, uint64_t *cap, uint64_t want, size_t elem)
{
	if (*cap >= want)
		return p;
	if (want > SIZE_MAX / elem)
		return NULL;
	void *q = realloc(p, (size_t)want * elem);
	if (q)
		*cap = want;
	return q;
}

/* Room for nsel selected entries and values and nmag ranks; on failure
 * what was grown stays owned by s. */
static int grow_all(struct tk_state *s, uint64_t nsel, uint64_t nmag)
{
	void *q;
	if (!(q = grow(s->sel, &s->sel_cap, nsel, sizeof(uint64_t))))
		return GW_ERR(GW_ENOMEM);
	s->sel = q;
	if (!(q = grow(s->val, &s->val_cap, nsel, sizeof(float))))
		return GW_ERR(GW_ENOMEM);
	s->val = q;
	if (!(q = grow(s->mag, &s->mag_cap, nmag, sizeof(uint32_t))))
		return GW_ERR(GW_ENOMEM);
	s->mag = q;
	return GW_OK;
}

/* The exact top k of the nc candidates (in index order in sel, val and
 * mag, every value ranking above them left out), selected in place with
 * topk's tie rule; non-finite ones restart their buffer slot at 0. */
static uint64_t take_candidates(struct tk_state *s, float *e, uint64_t nc, uint64_t k)
{
	uint64_t h[2048] = {0};
	for (uint64_t q = 0; q < nc; q++)
		h[s->mag[q] >> 20]++;
	uint64_t above;
	uint32_t thr = gw_radix_select(s->mag, nc, k, h, &above);
	uint64_t ties = k - above, j = 0;
	for (uint64_t q = 0; q < nc; q++) {
		uint32_t m = s->mag[q];
		if (m < thr)
			continue;
		uint64_t i = s->sel[q];
		if (m > thr || (ties && ties--)) {
			s->sel[j] = i;
			s->val[j] = s->val[q];
			j++;
		}
		if (e && m == GW_RANK_INF)
			e[i] = 0.0f;
	}
	return j;
}

static int tk_begin(gw_encoder *enc)
{
	struct tk_state *s = gw_codec_state(enc, sizeof(*s));
	if (!s)
		return GW_ERR(GW_ENOMEM);
	s->key64 = enc->sparse ? enc->t.key_bits == 64
			       : enc->t.dim > (uint64_t)UINT32_MAX + 1;
	uint64_t n = enc->total;
	if (n == 0)
		return GW_OK;
	double kd = ceil(enc->param[GW_PARAM_FRACTION] * (double)n);
	uint64_t k = kd < 1.0 ? 1 : kd >= (double)n ? n : (uint64_t)kd;

	/* On failure leave nothing to walk: a stale selection must never be
	 * framed against this tensor. */
	enc->total = 0;
	float *e = gw_ef_data(enc->ef);
	const float *g = enc->src;
	uint64_t cap = enc->sparse ? 0 : gw_filter_cap(n, k);
	if (cap) {
		/* The candidates live in sel, val and mag; selected in place. */
		if (grow_all(s, cap > k ? cap : k, cap) < 0)
			return GW_ERR(GW_ENOMEM);
		int64_t nc = gw_filter_dense(g, e, n, k, s->sel, s->val, s->mag, cap);
		if (nc >= 0) {
			enc->total = take_candidates(s, e, (uint64_t)nc, k);
			return GW_OK;
		}
		/* The estimate missed; e is folded: rank the corrected values. */
		if (e)
			g = e;
		e = NULL;
	}
	if (grow_all(s, k, n) < 0)
		return GW_ERR(GW_ENOMEM);

	/* Fold the feedback (e <- g + e, the corrected value, for now) and
	 * rank every value, histogramming the top 11 bits of the ranks into
	 * two tables for the store-forwarding chain's sake. */
	uint32_t *r = s->mag;
	uint64_t h1[2][2048];
	memset(h1, 0, sizeof(h1));
	if (!enc->sparse) {
		if (e) {
			for (uint64_t i = 0; i < n; i++) {
				float c = g[i] + e[i];
				e[i] = c;
				r[i] = gw_mag_rank(c);
				h1[i & 1][r[i] >> 20]++;
			}
		} else {
			for (uint64_t i = 0; i < n; i++) {
				r[i] = gw_mag_rank(g[i]);
				h1[i & 1][r[i] >> 20]++;
			}
		}
	} else {
		for (uint64_t i = 0; i < n; i++) {
			float c = g[i];
			if (e) {
				uint64_t key = gw_tensor_key(&enc->t, i);
				c += e[key];
				e[key] = c;
			}
			r[i] = gw_mag_rank(c);
			h1[i & 1][r[i] >> 20]++;
		}
	}
	for (unsigned b = 0; b < 2048; b++)
		h1[0][b] += h1[1][b];
	uint64_t above;
	uint32_t thr = gw_radix_select(r, n, k, h1[0], &above);
	uint64_t ties = k - above;   /* values equal to thr still to take */

	/* Take in index order. The buffer holds the corrected values: sent
	 * ones drop to 0 when their frame is written; non-finite ones restart
	 * at 0 now, sent or not (ef: after a missed filter estimate g is the
	 * folded buffer and e is NULL, but the restart still applies). */
	float *ef = gw_ef_data(enc->ef);
	uint64_t j = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t m = r[i];
		if (GW_LIKELY(m < thr))
			continue;
		uint64_t key = gw_enc_elem(enc, i);
		if (m > thr || (ties && ties--)) {
			s->sel[j] = i;
			s->val[j] = e ? e[key] : g[i];
			j++;
		}
		if (ef && m == GW_RANK_INF)
			ef[key] = 0.0f;
	}
	enc->total = j;   /* == k: frames walk the selection */
	return GW_OK;
}

static inline unsigned varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static int tk_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		     struct gw_frame_info *h)
{
	const struct tk_state *s = enc->codec_state;
	if (cap < 4)
		return GW_ERR(GW_EBUDGET);
	uint64_t p = enc->pos;
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (!lim)
		lim = UINT32_MAX;
	uint64_t first = gw_enc_elem(enc, s->sel[p]), last = first;
	size_t size = 4;
	uint32_t n = 1;
	while (p + n < enc->total && n < lim) {
		uint64_t k = gw_enc_elem(enc, s->sel[p + n]);
		if (k - first >= UINT32_MAX)   /* span would not fit 32 bits */
			break;
		size_t need = 4 + varint_len(k - last - 1);
		if (size + need > cap)
			break;
		size += need;
		last = k;
		n++;
	}
	h->flags = GW_FF_SPARSE | (s->key64 ? GW_FF_KEY64 : 0);
	h->count = n;
	h->start = first;
	h->span = (uint32_t)(last - first + 1);
	h->param_len = 0;

	float *e = gw_ef_data(enc->ef);
	uint8_t *kp = body + 4 * (size_t)n;
	uint64_t prev = first;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = gw_enc_elem(enc, s->sel[p + i]);
		gw_stf32(body + 4 * (size_t)i, s->val[p + i]);
		if (i)
			kp = varint_put(kp, k - prev - 1);
		prev = k;
		if (e)
			e[k] = 0.0f;   /* corrected - sent == 0 exactly */
	}
	enc->pos += n;
	return (int)size;
}

/* Reads one canonical LEB128 varint of at most 5 bytes (the gaps of a
 * 32-bit span need at most 32 bits). */
static inline int varint_get(const uint8_t **pp, const uint8_t *end,
			     uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	for (unsigned sh = 0; sh < 35; sh += 7) {
		if (p == end)
			return GW_ERR(GW_ECORRUPT);
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			if (sh && b == 0)
				return GW_ERR(GW_ECORRUPT);   /* overlong */
			*v = x;
			*pp = p;
			return GW_OK;
		}
	}
	return GW_ERR(GW_ECORRUPT);
}

static int tk_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len,
		     float alpha)
{
	(void)params;
	if (!(h->flags & GW_FF_SPARSE))
		return GW_ERR(GW_ECORRUPT);   /* top-k frames are always sparse */
	if (h->param_len != 0 || h->payload_len < 4 * (uint64_t)h->count)
		return GW_ERR(GW_ELENGTH);
	if (h->count == 0) {
		/* "nothing in this range" (wire-format §2.4): no values, no gaps */
		return h->payload_len ? GW_ERR(GW_ELENGTH) : 0;
	}
	/* peek: count <= span, start + span does not wrap. */
	uint64_t kend = h->start + h->span - 1;
	if (!(h->flags & GW_FF_KEY64) && kend > UINT32_MAX)
		return GW_ERR(GW_ECORRUPT);
	if (kend >= out_len)
		return GW_ERR(GW_ERANGE);
	const uint8_t *vals = payload;
	const uint8_t *gaps = payload + 4 * (size_t)h->count;
	const uint8_t *end = payload + h->payload_len;

	/* Validate every gap before touching out. */
	const uint8_t *p = gaps;
	uint64_t k = h->start, d = 0;
	for (uint32_t i = 1; i < h->count; i++) {
		if (varint_get(&p, end, &d) < 0 || d >= kend - k)
			return GW_ERR(GW_ECORRUPT);
		k += d + 1;
	}
	if (p != end || k != kend)
		return GW_ERR(GW_ECORRUPT);

	p = gaps;
	k = h->start;
	out[k] += alpha * gw_ldf32(vals);
	for (uint32_t i = 1; i < h->count; i++) {
		varint_get(&p, end, &d);
		k += d + 1;
		out[k] += alpha * gw_ldf32(vals + 4 * (size_t)i);
	}
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_topk = {
	.name = "topk",
	.id = GW_CODEC_TOPK,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KIND_SPARSE,
	GW_OPS_PARAMS(tk_params),
	.min_body = tk_min_body,
	.begin = tk_begin,
	.encode = tk_encode,
	.decode = tk_decode,
	.flags = GW_OPS_FUSED_EF,
	.state_free = tk_state_free,
};
