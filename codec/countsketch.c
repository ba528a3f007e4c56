/* countsketch: count sketches on the wire (Sketched-SGD, Ivkin et al.
 * 2019), and the key-set frames of its second round (include/gw/sketch.h).
 *
 * Dense frames are positional slices of the r x c table: one row, a range
 * of its columns, start = row * c + first column. Summing slices of several
 * workers' tables is summing their gradients' sketches (linearity), so an
 * aggregator adds frames cell by cell and never needs the gradients.
 * Slices never cross a row, so a frame names exactly (row, column range),
 * and every frame carries (r, c, seed, d): any one of them says how to
 * query the table it belongs to.
 *
 * Sparse frames are key sets: delta-binary keys (shared with sketchml) with
 * float32 values, or none — the candidate indices Sketched-SGD's server
 * sends down need no values.
 *
 * Error feedback is refused (gw_encoder_set_ef): the table is not the tensor, and Sketched-SGD
 * keeps its own error accumulation (momentum and v, in the collective).
 * Layout: docs/wire-format.md §4.9. */
#include <stdlib.h>
#include <string.h>

#include <gw/sketch.h>

#include "codec_internal.h"
#include "delta_binary.h"
#include "select.h"

#include "gw_hash.h"

#define DENSE_PARAMS 24u   /* rows u16, reserved u16, cols u32, seed u64, dim u64 */
#define SPARSE_PARAMS 8u   /* vbits u8, reserved u8[3], db_len u32 */
#define ROW_SEED 0x9E3779B97F4A7C15ull
#define KEYS_MAX 16384u    /* entries of one sparse frame: 65535 / 4 bytes */

static const struct gw_param_spec cs_params[] = {
	{GW_PARAM_ROWS, {1, GW_CSK_ROWS_MAX, 5, 1}},
	{GW_PARAM_COLS, {1, GW_CSK_CELLS_MAX, 16384, 1}},
	{GW_PARAM_SEED, {0, UINT32_MAX, 0x5ce7c41u, 1}},
};

/* ---- the sketch ------------------------------------------------------------ */

int gw_csk_check(const gw_csk *s)
{
	if (!s || s->rows < 1 || s->rows > GW_CSK_ROWS_MAX || s->cols < 1 ||
	    (uint64_t)s->rows * s->cols > GW_CSK_CELLS_MAX)
		return GW_ERR(GW_EINVAL);
	return GW_OK;
}

static inline uint64_t row_hash(uint64_t seed, uint32_t row, uint64_t i)
{
	uint8_t le[8];
	gw_st64(le, i);
	return gw_xxh3_short(le, 8, seed + (row + 1ull) * ROW_SEED);
}

static inline uint32_t bucket_of(uint64_t h, uint32_t cols)
{
	return (uint32_t)(((h >> 32) * cols) >> 32);
}

static inline float sign_of(uint64_t h)
{
	return (h & 1) ? -1.0f : 1.0f;
}

uint32_t gw_csk_bucket(const gw_csk *s, uint32_t row, uint64_t i, float *sign)
{
	uint64_t h = row_hash(s->seed, row, i);
	if (sign)
		*sign = sign_of(h);
	return bucket_of(h, s->cols);
}

int gw_csk_add(const gw_csk *s, const float *x, uint64_t d, float *table)
{
	if (gw_csk_check(s) < 0 || (!x && d) || !table)
		return GW_ERR(GW_EINVAL);
	/* Row by row: one row's cells stay in cache while d streams by. */
	for (uint32_t j = 0; j < s->rows; j++) {
		float *t = table + (size_t)j * s->cols;
		for (uint64_t i = 0; i < d; i++) {
			if (x[i] == 0.0f)
				continue;   /* a zero adds nothing: skip its hash */
			uint64_t h = row_hash(s->seed, j, i);
			t[bucket_of(h, s->cols)] += sign_of(h) * x[i];
		}
	}
	return GW_OK;
}

int gw_csk_estimate(const gw_csk *s, const float *table, uint64_t d, float *est)
{
	if (gw_csk_check(s) < 0 || !table || (!est && d))
		return GW_ERR(GW_EINVAL);
	uint32_t r = s->rows;
	for (uint64_t i = 0; i < d; i++) {
		float v[GW_CSK_ROWS_MAX];
		for (uint32_t j = 0; j < r; j++) {
			uint64_t h = row_hash(s->seed, j, i);
			float x = sign_of(h) * table[(size_t)j * s->cols + bucket_of(h, s->cols)];
			/* Insertion sort: r is at most 16. */
			uint32_t k = j;
			while (k > 0 && v[k - 1] > x) {
				v[k] = v[k - 1];
				k--;
			}
			v[k] = x;
		}
		est[i] = (r & 1) ? v[r / 2] : 0.5f * (v[r / 2 - 1] + v[r / 2]);
	}
	return GW_OK;
}

int64_t gw_top_abs(const float *x, uint64_t n, uint64_t k, uint64_t *sel)
{
	if ((!x && n) || (!sel && k))
		return GW_ERR(GW_EINVAL);
	if (k >= n) {
		for (uint64_t i = 0; i < n; i++)
			sel[i] = i;
		return (int64_t)n;
	}
	if (k == 0)
		return 0;
	uint32_t *r = malloc((size_t)n * sizeof(*r));
	if (!r)
		return GW_ERR(GW_ENOMEM);
	uint64_t h1[2048] = {0};
	for (uint64_t i = 0; i < n; i++) {
		r[i] = gw_mag_rank(x[i]);
		h1[r[i] >> 20]++;
	}
	uint64_t above;
	uint32_t thr = gw_radix_select(r, n, k, h1, &above);
	uint64_t ties = k - above, j = 0;
	for (uint64_t i = 0; i < n && j < k; i++)
		if (r[i] > thr || (r[i] == thr && ties && ties--))
			sel[j++] = i;
	free(r);
	return (int64_t)j;
}

int gw_sketched_sizes_default(uint64_t d, gw_sketched_sizes *s)
{
	if (!s || d == 0 || d > UINT32_MAX)
		return GW_ERR(GW_EINVAL);
	uint64_t k = (d + 99) / 100;
	uint64_t cand = GW_MIN(4 * k, d);
	s->k = (uint32_t)k;
	s->candidates = (uint32_t)cand;
	/* One row: at a fixed number of cells one wide row estimates with
	 * less variance than the median of narrower ones, and the second
	 * round's exact values forgive its rarer large misses (docs/codecs.md,
	 * "Sketched-SGD": it trains the MLP faster, and hashes 5x less). */
	s->rows = 1;
	s->cols = (uint32_t)(2 * cand);
	return GW_OK;
}

/* ---- key sets -------------------------------------------------------------- */

static size_t db_bound(uint32_t n)
{
	return ((size_t)n + 3) / 4 + 4 * (size_t)n;   /* narrow: <= 4 bytes each */
}

size_t gw_keyset_bound(uint32_t n, int with_values)
{
	return GW_FRAME_HDR_LEN + SPARSE_PARAMS + db_bound(n) +
	       (with_values ? 4 * (size_t)n : 0);
}

uint32_t gw_keyset_fit(size_t budget, int with_values)
{
	budget = GW_MIN(budget, (size_t)GW_FRAME_MAX);
	if (budget < gw_keyset_bound(1, with_values))
		return 0;
	/* 4.25 (+ 4) bytes a key: start from below and step up. */
	uint32_t n = (uint32_t)((budget - GW_FRAME_HDR_LEN - SPARSE_PARAMS) * 4 /
				(with_values ? 33 : 17));
	while (n > 1 && gw_keyset_bound(n, with_values) > budget)
		n--;
	while (n < KEYS_MAX && gw_keyset_bound(n + 1, with_values) <= budget)
		n++;
	return GW_MIN(n, KEYS_MAX);
}

/* Params and payload of a key set: returns body bytes. */
static size_t keyset_body(uint8_t *body, const uint64_t *keys, const float *values,
			  uint32_t n)
{
	uint8_t *db = body + SPARSE_PARAMS;
	size_t dlen = gw_db_encode(keys, n, keys[0], 0, db);
	body[0] = values ? 32 : 0;
	body[1] = body[2] = body[3] = 0;
	gw_st32(body + 4, (uint32_t)dlen);
	if (values)
		for (uint32_t i = 0; i < n; i++)
			gw_stf32(db + dlen + 4 * (size_t)i, values[i]);
	return SPARSE_PARAMS + dlen + (values ? 4 * (size_t)n : 0);
}

int gw_keyset_encode(uint32_t tensor, const uint64_t *keys, const float *values,
		     uint32_t n, void *buf, size_t budget)
{
	if (!keys || !buf || n == 0 || n > KEYS_MAX)
		return GW_ERR(GW_EINVAL);
	for (uint32_t i = 1; i < n; i++)
		if (keys[i] <= keys[i - 1])
			return GW_ERR(GW_EINVAL);
	/* span must fit 32 bits, and start + span 64 (a last key of
	 * UINT64_MAX would make a frame every decoder rejects) */
	if (keys[n - 1] - keys[0] >= UINT32_MAX || keys[n - 1] == UINT64_MAX)
		return GW_ERR(GW_EINVAL);
	budget = GW_MIN(budget, (size_t)GW_FRAME_MAX);
	size_t need = GW_FRAME_HDR_LEN + SPARSE_PARAMS + gw_db_size(keys, n, keys[0], 0) +
		      (values ? 4 * (size_t)n : 0);
	if (need > budget)
		return GW_ERR(GW_EBUDGET);
	uint8_t *b = buf;
	size_t body = keyset_body(b + GW_FRAME_HDR_LEN, keys, values, n);
	struct gw_frame_info h = {
		.codec = GW_CODEC_COUNTSKETCH, .tensor = tensor,
		.flags = GW_FF_SPARSE | (keys[n - 1] > UINT32_MAX ? GW_FF_KEY64 : 0),
		.count = n, .start = keys[0],
		.span = (uint32_t)(keys[n - 1] - keys[0] + 1),
		.param_len = SPARSE_PARAMS,
		.payload_len = (uint32_t)(body - SPARSE_PARAMS),
		.frame_len = (uint32_t)(GW_FRAME_HDR_LEN + body),
	};
	gw_frame_write_header(b, &h);
	gw_frame_seal(b, h.frame_len);
	return (int)h.frame_len;
}

/* Validates a sparse frame's params and payload; *db_len, *vbits out. */
static int keyset_check(const struct gw_frame_info *h, const uint8_t *params,
			const uint8_t *payload, uint64_t limit, uint32_t *db_len,
			unsigned *vbits)
{
	if (h->param_len != SPARSE_PARAMS)
		return GW_ERR(GW_ELENGTH);
	if ((params[0] != 0 && params[0] != 32) || params[1] || params[2] || params[3])
		return GW_ERR(GW_ERESERVED);
	*vbits = params[0];
	*db_len = gw_ld32(params + 4);
	uint64_t vlen = *vbits ? 4ull * h->count : 0;
	if ((uint64_t)*db_len + vlen != h->payload_len)
		return GW_ERR(GW_ELENGTH);
	if (h->count == 0)
		return GW_ERR(GW_ELENGTH);
	/* Keys lie in [start, start + span), the first is start, the last is
	 * start + span - 1: a header that overstates the range is corrupt. */
	uint64_t end = h->start + h->span;
	if (!(h->flags & GW_FF_KEY64) && end - 1 > UINT32_MAX)
		return GW_ERR(GW_ECORRUPT);   /* as topk and sketchml: §4.7 */
	size_t used;
	int rc = gw_db_decode(payload, *db_len, h->count, h->start, 0,
			      GW_MIN(end, limit), NULL, &used);
	if (rc < 0)
		return end > limit && rc == GW_ECORRUPT ? GW_ERR(GW_ERANGE) : rc;
	if (used != *db_len)
		return GW_ERR(GW_ELENGTH);
	struct gw_db_iter it;
	gw_db_iter_init(&it, payload, h->count, h->start, 0);
	uint64_t k = 0;
	for (uint32_t i = 0; i < h->count; i++) {
		k = gw_db_iter_next(&it);
		if (i == 0 && k != h->start)
			return GW_ERR(GW_ECORRUPT);
	}
	if (k != end - 1)
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}

int gw_keyset_decode(const void *buf, size_t len, uint64_t limit, uint64_t *keys,
		     float *values, uint32_t cap, int *has_values)
{
	gw_frame_info h;
	if (!buf || !keys)
		return GW_ERR(GW_EINVAL);
	int rc = gw_frame_verify(buf, len, &h);
	if (rc < 0)
		return rc;
	if (h.codec != GW_CODEC_COUNTSKETCH || !(h.flags & GW_FF_SPARSE))
		return GW_ERR(GW_ECODEC);
	if (h.count > cap)
		return GW_ERR(GW_ELENGTH);
	const uint8_t *params = (const uint8_t *)buf + GW_FRAME_HDR_LEN;
	const uint8_t *payload = params + h.param_len;
	uint32_t db_len;
	unsigned vbits;
	rc = keyset_check(&h, params, payload, limit, &db_len, &vbits);
	if (rc < 0)
		return rc;
	struct gw_db_iter it;
	gw_db_iter_init(&it, payload, h.count, h.start, 0);
	for (uint32_t i = 0; i < h.count; i++)
		keys[i] = gw_db_iter_next(&it);
	if (vbits && values)
		for (uint32_t i = 0; i < h.count; i++)
			values[i] = gw_ldf32(payload + db_len + 4 * (size_t)i);
	if (has_values)
		*has_values = vbits != 0;
	return (int)h.count;
}

/* ---- codec ops --------------------------------------------------------------- */

struct cs_state {
	float *table;
	uint64_t cells;
	uint64_t keys[KEYS_MAX];   /* one sparse frame's keys */
};

static void cs_state_free(void *p)
{
	struct cs_state *s = p;
	if (s)
		free(s->table);
	free(s);
}

static gw_csk enc_csk(const gw_encoder *enc)
{
	return (gw_csk){.rows = (uint32_t)enc->param[GW_PARAM_ROWS],
			.cols = (uint32_t)enc->param[GW_PARAM_COLS],
			.seed = (uint64_t)enc->param[GW_PARAM_SEED]};
}

static size_t cs_min_body(const gw_encoder *enc, size_t kb)
{
	if (kb)
		return SPARSE_PARAMS + 4 + 4 + 1;
	(void)enc;
	return DENSE_PARAMS + 4;
}

static int cs_check(gw_encoder *enc)
{
	struct cs_state *s = gw_codec_state(enc, sizeof(*s));
	if (!s)
		return GW_ERR(GW_ENOMEM);
	if (enc->sparse)
		return GW_OK;
	gw_csk k = enc_csk(enc);
	if (gw_csk_check(&k) < 0)
		return GW_ERR(GW_EBOUNDS);   /* rows * cols too large */
	if (enc->t.base != 0)
		return GW_ERR(GW_EINVAL);    /* slices name table cells, not elements */
	uint64_t cells = (uint64_t)k.rows * k.cols;
	if (cells > s->cells) {
		float *t = realloc(s->table, cells * sizeof(float));
		if (!t)
			return GW_ERR(GW_ENOMEM);
		s->table = t;
		s->cells = cells;
	}
	return GW_OK;
}

static int cs_begin(gw_encoder *enc)
{
	if (enc->sparse)
		return GW_OK;
	if (enc->t.dim == 0) {
		/* nothing to send: a frame's dim of 0 is refused by decoders */
		enc->total = 0;
		return GW_OK;
	}
	struct cs_state *s = enc->codec_state;
	gw_csk k = enc_csk(enc);
	memset(s->table, 0, (size_t)k.rows * k.cols * sizeof(float));
	int rc = gw_csk_add(&k, enc->src, enc->t.dim, s->table);
	if (rc < 0)
		return rc;
	enc->total = (uint64_t)k.rows * k.cols;   /* frames walk the table */
	return GW_OK;
}

static int cs_encode_sparse(gw_encoder *enc, uint8_t *body, size_t cap,
			    struct gw_frame_info *h)
{
	struct cs_state *s = enc->codec_state;
	uint32_t n = gw_frame_take(enc, cap, SPARSE_PARAMS, 4 + 4 + 1);
	n = GW_MIN(n, KEYS_MAX);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	for (uint32_t i = 0; i < n; i++)
		s->keys[i] = gw_tensor_key(&enc->t, enc->pos + i);
	size_t b = keyset_body(body, s->keys, enc->src + enc->pos, n);
	h->param_len = SPARSE_PARAMS;
	enc->pos += n;
	return (int)b;
}

static int cs_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		     struct gw_frame_info *h)
{
	if (enc->sparse)
		return cs_encode_sparse(enc, body, cap, h);
	const struct cs_state *s = enc->codec_state;
	gw_csk k = enc_csk(enc);
	uint32_t col = (uint32_t)(enc->pos % k.cols);
	uint32_t n = GW_MIN(gw_frame_take(enc, cap, DENSE_PARAMS, 4), k.cols - col);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	gw_st16(body, (uint16_t)k.rows);
	gw_st16(body + 2, 0);
	gw_st32(body + 4, k.cols);
	gw_st64(body + 8, k.seed);
	gw_st64(body + 16, enc->t.dim);
	h->param_len = DENSE_PARAMS;
	uint8_t *p = body + DENSE_PARAMS;
	for (uint32_t i = 0; i < n; i++)
		gw_stf32(p + 4 * (size_t)i, s->table[enc->pos + i]);
	enc->pos += n;
	return (int)(DENSE_PARAMS + 4 * (size_t)n);
}

static int cs_check_dense(const struct gw_frame_info *h, const uint8_t *params)
{
	if (h->param_len != DENSE_PARAMS)
		return GW_ERR(GW_ELENGTH);
	if (gw_ld16(params + 2) != 0)
		return GW_ERR(GW_ERESERVED);
	gw_csk k = {.rows = gw_ld16(params), .cols = gw_ld32(params + 4)};
	if (gw_csk_check(&k) < 0 || gw_ld64(params + 16) == 0)
		return GW_ERR(GW_ECORRUPT);
	if (h->payload_len != 4ull * h->count)
		return GW_ERR(GW_ELENGTH);
	/* One row, inside the table. */
	uint64_t cells = (uint64_t)k.rows * k.cols;
	if (h->start >= cells || h->count > cells - h->start ||
	    h->start % k.cols + h->count > k.cols)
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}

static int cs_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len,
		     float alpha)
{
	int rc;
	if (h->flags & GW_FF_SPARSE) {
		uint32_t db_len;
		unsigned vbits;
		rc = keyset_check(h, params, payload, out_len, &db_len, &vbits);
		if (rc < 0 || !vbits)
			return rc;   /* a key set without values adds nothing */
		struct gw_db_iter it;
		gw_db_iter_init(&it, payload, h->count, h->start, 0);
		for (uint32_t i = 0; i < h->count; i++)
			out[gw_db_iter_next(&it)] +=
				alpha * gw_ldf32(payload + db_len + 4 * (size_t)i);
		return (int)h->count;
	}
	rc = cs_check_dense(h, params);
	if (rc < 0)
		return rc;
	float *o = out + h->start;
	for (uint32_t i = 0; i < h->count; i++)
		o[i] += alpha * gw_ldf32(payload + 4 * (size_t)i);
	return (int)h->count;
}

static int cs_parts(const struct gw_frame_info *h, const uint8_t *params,
		    const uint8_t *payload, struct gw_frame_parts *parts)
{
	if (h->flags & GW_FF_SPARSE) {
		uint32_t db_len;
		unsigned vbits;
		int rc = keyset_check(h, params, payload, UINT64_MAX, &db_len, &vbits);
		if (rc < 0)
			return rc;
		parts->keys = db_len;
		parts->values = h->payload_len - db_len;
		return GW_OK;
	}
	int rc = cs_check_dense(h, params);
	if (rc < 0)
		return rc;
	parts->values = h->payload_len;
	return GW_OK;
}

const struct gw_codec_ops gw_codec_countsketch = {
	.name = "countsketch",
	.id = GW_CODEC_COUNTSKETCH,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY | GW_CODEC_TABLE,
	.frames = GW_FRAME_KINDS,
	GW_OPS_PARAMS(cs_params),
	.min_body = cs_min_body,
	.check = cs_check,
	.begin = cs_begin,
	.encode = cs_encode,
	.decode = cs_decode,
	.parts = cs_parts,
	.flags = GW_OPS_NO_EF,
	.state_free = cs_state_free,
};
