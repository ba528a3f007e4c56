/* sketchml: SketchML (Jiang et al., SIGMOD 2018) for key/value gradients.
 *
 * begin(): error feedback is folded in (c = g + e) and the entries are the
 * nonzero corrected values — every key of a sparse tensor, the nonzero
 * elements of a dense one. Two KLL sketches (quantile.c), one over the
 * magnitudes of the positive entries and one over the negative, give q
 * equi-depth buckets per sign; each entry gets its bucket (0 = smallest
 * magnitude) once.
 *
 * Each frame decodes alone (wire-format §4.8): it carries its own bucket
 * table — the frame's entries' mean magnitude per bucket, bf16 rounded
 * toward zero — so the table is sized to the frame: 2^qb buckets per sign
 * with 4 · 2^qb <= budget / 8 (qb <= log2 q), the global buckets merged
 * 2^(log2 q - qb) at a time. Buckets split into 2^rb groups per sign; a
 * group's keys go as a delta-binary block (delta_binary.h) and its bucket
 * indices into a MinMaxSketch of s rows x t columns (t = ceil(n_g ·
 * col_ratio)) of (qb - rb)-bit cells: insert keeps the minimum, query
 * takes the maximum over the rows, so a decoded index never exceeds the
 * true one, a value never grows in magnitude and never changes sign.
 *
 * Error feedback is fused: after a frame is written, each entry's decoded
 * value is known (the query is run on the finished sketch) and e <- c -
 * decoded. A non-finite entry poisons its frame (every key decodes to NaN,
 * §2.5) and its error-buffer slot restarts at 0. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xxh3_u32.h"

#include "codec_internal.h"
#include "delta_binary.h"
#include "quantile.h"

#define PARAM_LEN 10u
#define KLL_K 256u
#define QB_MAX 8u
#define SLOTS (2u << QB_MAX)       /* (sign, bucket) or (sign, group) */
#define F_POS 0x01u
#define F_NEG 0x02u
#define F_POISON 0x80u
#define CODE_NEG 0x100u
#define CODE_BAD 0x200u             /* non-finite */
#define LUT_SIZE (1u << 15)         /* magnitudes' top 16 bits */
#define SPLIT_WIN 8u                /* see bucket_of() */

struct sk_state {
	uint64_t cap;
	uint64_t *key;        /* entry keys, ascending */
	float *val;           /* corrected values */
	uint16_t *code;       /* bucket | CODE_NEG | CODE_BAD */
	uint64_t *hash;       /* per frame entry */
	uint64_t *gkey;       /* per frame: relative keys by (sign, group) */
	uint32_t *order;      /* per frame: entry index by (sign, group) */
	uint8_t *cells;
	size_t cells_cap;
	gw_kll kll[2];
	float split[2][(1u << QB_MAX) - 1 + SPLIT_WIN];   /* +inf padded */
	uint32_t nsplit[2];
	uint8_t lut[2][LUT_SIZE];
};

static const struct gw_param_spec sk_params[] = {
	{GW_PARAM_QUANTILES, {2, 256, 256, 1}},
	{GW_PARAM_GROUPS, {1, 256, 8, 1}},
	{GW_PARAM_ROWS, {1, 8, 2, 1}},
	{GW_PARAM_COL_RATIO, {1.0 / 1024, 64, 0.2, 0}},
	{GW_PARAM_SEED, {0, UINT32_MAX, 0x5ce7c41u, 1}},
};

static unsigned log2u(uint32_t v)
{
	unsigned l = 0;
	while (v > 1) {
		v >>= 1;
		l++;
	}
	return l;
}

static size_t sk_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	(void)kb;
	/* The smallest frame (qb = 1, so at most 2 groups): params, 2 bucket
	 * means of one sign, 2 group counts, then one key: its count grows to
	 * 1, a flag byte, up to 4 key bytes, a byte of cells. */
	return PARAM_LEN + 4 + 2 + 1 + 1 + 4 + 1;
}

static void sk_state_free(void *p)
{
	struct sk_state *s = p;
	if (!s)
		return;
	GW_FREE_ALL(s->key, s->val, s->code, s->hash, s->gkey, s->order, s->cells);
	gw_kll_free(&s->kll[0]);
	gw_kll_free(&s->kll[1]);
	free(s);
}

static int sk_check(gw_encoder *enc)
{
	double q = enc->param[GW_PARAM_QUANTILES], r = enc->param[GW_PARAM_GROUPS];
	uint32_t qi = (uint32_t)q, ri = (uint32_t)r;
	if (qi & (qi - 1) || ri & (ri - 1) || ri > qi)
		return GW_ERR(GW_EBOUNDS);   /* powers of two, r <= q */
	return GW_OK;
}

/* old grown to n elements of size bytes while *ok; once a realloc fails,
 * *ok is false and every later one is skipped, old kept (still owned by
 * the state, so sk_state_free frees it). */
static void *grow_one(void *old, uint64_t n, size_t size, bool *ok)
{
	void *p = *ok ? realloc(old, n * size) : NULL;
	if (!p) {
		*ok = false;
		return old;
	}
	return p;
}

static int grow_entries(struct sk_state *s, uint64_t n)
{
	if (s->cap >= n)
		return GW_OK;
	if (n > SIZE_MAX / sizeof(uint64_t))
		return GW_ERR(GW_ENOMEM);
	bool ok = true;
	s->key = grow_one(s->key, n, sizeof(*s->key), &ok);
	s->val = grow_one(s->val, n, sizeof(*s->val), &ok);
	s->code = grow_one(s->code, n, sizeof(*s->code), &ok);
	s->hash = grow_one(s->hash, n, sizeof(*s->hash), &ok);
	s->gkey = grow_one(s->gkey, n, sizeof(*s->gkey), &ok);
	s->order = grow_one(s->order, n, sizeof(*s->order), &ok);
	if (!ok)
		return GW_ERR(GW_ENOMEM);
	s->cap = n;
	return GW_OK;
}

/* Bucket of a magnitude: how many of the sign's ascending splits are below
 * it. A binary search mispredicts half its branches on gradients, so a
 * table indexed by the top 16 bits of the magnitude (bit order is value
 * order for non-negative floats) gives the splits below the magnitude's
 * 2^-7-wide class; only splits inside that class are compared. */

static void lut_build(uint8_t *lut, const float *split, uint32_t n)
{
	uint32_t pos = 0;
	for (uint32_t b = 0; b < n; b++) {
		uint32_t hi = gw_f32_bits(split[b]) >> 16;
		if (hi + 1 > pos) {
			memset(lut + pos, (int)b, hi + 1 - pos);
			pos = hi + 1;
		}
	}
	memset(lut + pos, (int)n, LUT_SIZE - pos);
}

/* The splits past a class's first are counted without a branch when the
 * class holds at most SPLIT_WIN of them: those of later classes, and the
 * +inf padding past the last split, are above m and add 0. (The scan
 * mispredicted about once per entry.) m is finite, so its class + 1 is
 * still inside the table. */
static inline uint32_t bucket_of(const uint8_t *lut, const float *split, uint32_t n,
				 float m)
{
	uint32_t x = gw_f32_bits(m) >> 16;
	uint32_t b = lut[x];
	if ((uint32_t)lut[x + 1] - b <= SPLIT_WIN) {
		uint32_t c = 0;
		for (unsigned i = 0; i < SPLIT_WIN; i++)
			c += split[b + i] < m;
		return b + c;
	}
	while (b < n && split[b] < m)
		b++;
	return b;
}

static int sk_begin(gw_encoder *enc)
{
	struct sk_state *s = enc->codec_state;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || gw_kll_init(&s->kll[0], KLL_K, 0) < 0 ||
		    gw_kll_init(&s->kll[1], KLL_K, 0) < 0) {
			sk_state_free(s);
			return GW_ERR(GW_ENOMEM);
		}
		enc->codec_state = s;
	}
	uint64_t n = enc->total;
	enc->total = 0;   /* on failure, nothing to walk */
	int rc = grow_entries(s, n ? n : 1);
	if (rc < 0)
		return rc;
	uint64_t seed = (uint64_t)enc->param[GW_PARAM_SEED];
	gw_kll_reset(&s->kll[0], seed);
	gw_kll_reset(&s->kll[1], seed ^ 0x9e3779b97f4a7c15ull);

	/* Corrected entries (c = g + e, kept in e until their frame is
	 * written), zeros dropped. */
	float *e = gw_ef_data(enc->ef);
	const float *g = enc->src;
	uint64_t m = 0;
	/* Magnitudes go to the sketches in batches per sign, in entry order
	 * (what the sketch keeps depends on it), rather than a call each. */
	float mag[2][256];
	unsigned nmag[2] = {0, 0};
	/* Keys first, in one typed loop; compacted in place below (m <= i). */
	if (!enc->sparse)
		for (uint64_t i = 0; i < n; i++)
			s->key[i] = i;
	else if (enc->t.key_bits == 64)
		memcpy(s->key, enc->t.keys, n * sizeof(uint64_t));
	else
		for (uint64_t i = 0; i < n; i++)
			s->key[i] = ((const uint32_t *)enc->t.keys)[i];
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = s->key[i];
		float c = g[i];
		if (e) {
			c += e[k];
			e[k] = c;
		}
		if (c == 0.0f)
			continue;
		s->key[m] = k;
		s->val[m] = c;
		if (!isfinite(c)) {
			s->code[m++] = CODE_BAD;
			continue;
		}
		int neg = c < 0;
		s->code[m++] = neg ? CODE_NEG : 0;
		mag[neg][nmag[neg]++] = fabsf(c);
		if (nmag[neg] == GW_ARRAY_SIZE(mag[0])) {
			if ((rc = gw_kll_add_n(&s->kll[neg], mag[neg], nmag[neg])) < 0)
				return rc;
			nmag[neg] = 0;
		}
	}
	for (int sg = 0; sg < 2; sg++)
		if ((rc = gw_kll_add_n(&s->kll[sg], mag[sg], nmag[sg])) < 0)
			return rc;
	uint32_t q = (uint32_t)enc->param[GW_PARAM_QUANTILES];
	for (int sg = 0; sg < 2; sg++) {
		s->nsplit[sg] = 0;
		if (s->kll[sg].n && (rc = gw_kll_splits(&s->kll[sg], q, s->split[sg])) < 0)
			return rc;
		if (s->kll[sg].n)
			s->nsplit[sg] = q - 1;
		for (unsigned i = 0; i < SPLIT_WIN; i++)
			s->split[sg][s->nsplit[sg] + i] = INFINITY;
		lut_build(s->lut[sg], s->split[sg], s->nsplit[sg]);
	}
	for (uint64_t i = 0; i < m; i++) {
		if (s->code[i] & CODE_BAD)
			continue;
		int neg = (s->code[i] & CODE_NEG) != 0;
		s->code[i] |= (uint16_t)bucket_of(s->lut[neg], s->split[neg], s->nsplit[neg],
						   fabsf(s->val[i]));
	}
	/* A tensor of zeros still sends its first key with 0, so that every
	 * nonempty tensor — an aggregator's chunk — has a frame. */
	if (!m && n) {
		s->key[0] = enc->sparse ? gw_tensor_key(&enc->t, 0) : 0;
		s->val[0] = 0.0f;
		s->code[0] = 0;
		m = 1;
	}
	enc->total = m;
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

static inline unsigned db_len(uint64_t d)
{
	return d < 0x100u ? 1 : d < 0x10000u ? 2 : d < 0x1000000u ? 3 : 4;
}

/* Columns of a group of n keys. */
static inline uint64_t cols_of(uint64_t n, uint32_t c1024)
{
	return n ? GW_MAX((n * c1024 + 1023) / 1024, 1) : 0;
}

/* Bytes of one group of n keys with kb key bytes. */
static inline size_t group_size(uint64_t n, size_t kb, unsigned rows, uint32_t c1024,
				unsigned cb)
{
	return varint_len(n) + (n + 3) / 4 + kb + (rows * cols_of(n, c1024) * cb + 7) / 8;
}

/* bfloat16 rounded toward zero: the top half of the bits. */
static inline uint16_t bf16_trunc(float v)
{
	return (uint16_t)(gw_f32_bits(v) >> 16);
}

static inline uint32_t col_of(uint64_t h, unsigned row, uint64_t t)
{
	uint32_t x = (uint32_t)h + row * ((uint32_t)(h >> 32) | 1u);
	return (uint32_t)(((uint64_t)x * t) >> 32);
}

/* XXH3 of the relative key's 4 LE bytes; flip = gw_xxh3_u32_flip(seed),
 * taken once per frame. */
static inline uint64_t key_hash(uint64_t rel, uint64_t flip)
{
	return gw_xxh3_u32((uint32_t)rel, flip);
}

/* A cell may straddle two bytes; the second is read only then (the last
 * cell of a frame ends at its last byte). */
static inline unsigned get_cell(const uint8_t *p, uint64_t bit, unsigned cb)
{
	unsigned v = p[bit / 8];
	if ((bit % 8) + cb > 8)
		v |= (unsigned)p[bit / 8 + 1] << 8;
	return (v >> (bit % 8)) & ((1u << cb) - 1);
}

struct layout {
	unsigned qb, rb, cb, rows;
	uint32_t c1024, seed;
};

static int sk_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		     struct gw_frame_info *h)
{
	struct sk_state *s = enc->codec_state;
	uint32_t q = (uint32_t)enc->param[GW_PARAM_QUANTILES];
	struct layout ly = {.rows = (unsigned)enc->param[GW_PARAM_ROWS],
			    .seed = (uint32_t)enc->param[GW_PARAM_SEED]};
	double cr = enc->param[GW_PARAM_COL_RATIO] * 1024.0;
	ly.c1024 = (uint32_t)GW_MIN(GW_MAX(ceil(cr), 1.0), 65535.0);
	/* The table is sized to the frame: 4 · 2^qb bytes <= cap / 8. */
	unsigned qlog = log2u(q);
	ly.qb = 1;
	while (ly.qb < qlog && (4u << (ly.qb + 1)) <= cap / 8)
		ly.qb++;
	ly.rb = GW_MIN(log2u((uint32_t)enc->param[GW_PARAM_GROUPS]), ly.qb);
	ly.cb = ly.qb - ly.rb;
	unsigned shift = qlog - ly.qb;
	uint32_t R = 1u << ly.rb, Q = 1u << ly.qb;
	int key64 = enc->sparse ? enc->t.key_bits == 64
				: enc->t.base + enc->t.dim > (uint64_t)UINT32_MAX + 1;
	h->flags = GW_FF_SPARSE | (key64 ? GW_FF_KEY64 : 0);

	/* Walk entries while the exact frame size stays within cap. */
	uint64_t ng[SLOTS] = {0}, kb[SLOTS] = {0}, last[SLOTS];
	size_t gsz[SLOTS];   /* group_size() of each slot as it stands */
	size_t gsz0 = group_size(0, 0, ly.rows, ly.c1024, ly.cb);
	for (unsigned sl = 0; sl < 2 * R; sl++)
		gsz[sl] = gsz0;
	size_t size = PARAM_LEN;
	unsigned signs = 0;
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (!lim)
		lim = UINT32_MAX;
	uint64_t p0 = enc->pos, first = s->key[p0];
	uint32_t n = 0;
	while (p0 + n < enc->total && n < lim) {
		uint64_t i = p0 + n;
		uint64_t rel = s->key[i] - first;
		if (rel >= UINT32_MAX)
			break;
		unsigned sg = (s->code[i] & CODE_NEG) ? 1 : 0;
		unsigned grp = (s->code[i] & CODE_BAD) ? R - 1
			: ((s->code[i] & 0xffu) >> shift) >> ly.cb;
		unsigned slot = sg * R + grp;
		size_t add = 0;
		if (!(signs & (1u << sg)))
			add += 2u * Q + R * gsz0;
		uint64_t d = ng[slot] ? rel - last[slot] - 1 : rel;
		size_t after = group_size(ng[slot] + 1, kb[slot] + db_len(d), ly.rows,
					  ly.c1024, ly.cb);
		add += after - gsz[slot];
		if (size + add > cap)
			break;
		size += add;
		signs |= 1u << sg;
		gsz[slot] = after;
		ng[slot]++;
		kb[slot] += db_len(d);
		last[slot] = rel;
		n++;
	}
	if (n == 0)
		return GW_ERR(GW_EBUDGET);

	/* Means per (sign, frame bucket), then monotone fill of empty ones
	 * from below, rounded toward zero: a decoded index at or below the
	 * true one then never gives a larger magnitude. */
	double sum[SLOTS] = {0};
	uint32_t cnt[SLOTS] = {0};
	unsigned poison = 0;
	for (uint32_t j = 0; j < n; j++) {
		uint16_t c = s->code[p0 + j];
		if (c & CODE_BAD) {
			poison = 1;
			continue;
		}
		unsigned slot = ((c & CODE_NEG) ? Q : 0) + ((c & 0xffu) >> shift);
		sum[slot] += fabsf(s->val[p0 + j]);
		cnt[slot]++;
	}
	uint16_t mean[SLOTS];
	for (unsigned sg = 0; sg < 2; sg++) {
		uint16_t prev = 0;
		for (uint32_t b = 0; b < Q; b++) {
			unsigned slot = sg * Q + b;
			if (cnt[slot])
				prev = GW_MAX(prev, bf16_trunc((float)(sum[slot] / cnt[slot])));
			mean[slot] = prev;
		}
	}

	/* Entries by (sign, group), in key order within each. */
	uint64_t off[SLOTS + 1];
	off[0] = 0;
	for (unsigned sl = 0; sl < 2 * R; sl++)
		off[sl + 1] = off[sl] + ng[sl];
	uint64_t at[SLOTS];
	memcpy(at, off, sizeof(uint64_t) * 2 * R);
	uint64_t flip = gw_xxh3_u32_flip(ly.seed);
	for (uint32_t j = 0; j < n; j++) {
		uint16_t c = s->code[p0 + j];
		unsigned grp = (c & CODE_BAD) ? R - 1 : ((c & 0xffu) >> shift) >> ly.cb;
		unsigned slot = ((c & CODE_NEG) ? R : 0) + grp;
		uint64_t rel = s->key[p0 + j] - first;
		s->order[at[slot]] = j;
		s->gkey[at[slot]++] = rel;
		s->hash[j] = key_hash(rel, flip);
	}

	/* Params, then per present sign: the table, then each group. */
	uint8_t *p = body;
	p[0] = (uint8_t)ly.qb;
	p[1] = (uint8_t)ly.rb;
	p[2] = (uint8_t)ly.rows;
	p[3] = (uint8_t)(signs | (poison ? F_POISON : 0));
	gw_st16(p + 4, (uint16_t)ly.c1024);
	gw_st32(p + 6, ly.seed);
	p += PARAM_LEN;
	float *e = gw_ef_data(enc->ef);
	uint64_t kmax = 0;
	for (unsigned sg = 0; sg < 2; sg++) {
		if (!(signs & (1u << sg)))
			continue;
		for (uint32_t b = 0; b < Q; b++, p += 2)
			gw_st16(p, mean[sg * Q + b]);
		for (uint32_t grp = 0; grp < R; grp++) {
			unsigned slot = sg * R + grp;
			uint64_t gn = ng[slot], t = cols_of(gn, ly.c1024);
			uint8_t *v = p;
			while (gn >= 0x80) {
				*v++ = (uint8_t)(gn | 0x80);
				gn >>= 7;
			}
			*v++ = (uint8_t)gn;
			gn = ng[slot];
			p = v + gw_db_encode(s->gkey + off[slot], (uint32_t)gn, 0, 0, v);
			if (gn)
				kmax = GW_MAX(kmax, s->gkey[off[slot] + gn - 1]);
			/* MinMaxSketch: cells start at the largest index. */
			size_t ncell = (size_t)ly.rows * t;
			if (s->cells_cap < ncell) {
				uint8_t *nc = realloc(s->cells, ncell);
				if (!nc)
					return GW_ERR(GW_ENOMEM);
				s->cells = nc;
				s->cells_cap = ncell;
			}
			uint8_t top = (uint8_t)((1u << ly.cb) - 1);
			if (ncell)
				memset(s->cells, top, ncell);   /* cells may be NULL yet */
			for (uint64_t x = off[slot]; x < off[slot] + gn && ly.cb; x++) {
				uint32_t j = s->order[x];
				uint8_t idx = (uint8_t)(((s->code[p0 + j] & 0xffu) >> shift) & top);
				for (unsigned r = 0; r < ly.rows; r++) {
					uint8_t *cell = s->cells + (size_t)r * t + col_of(s->hash[j], r, t);
					*cell = GW_MIN(*cell, idx);   /* no branch to mispredict */
				}
			}
			size_t nbytes = (ncell * ly.cb + 7) / 8;
			memset(p, 0, nbytes);
			for (size_t ci = 0; ci < ncell && ly.cb; ci++) {
				size_t bit = ci * ly.cb;
				unsigned v2 = (unsigned)s->cells[ci] << (bit % 8);
				p[bit / 8] |= (uint8_t)v2;
				if ((bit % 8) + ly.cb > 8)
					p[bit / 8 + 1] |= (uint8_t)(v2 >> 8);
			}
			/* Fused feedback: what the receiver will decode. */
			for (uint64_t x = off[slot]; x < off[slot] + gn && e; x++) {
				uint32_t j = s->order[x];
				uint64_t k = s->key[p0 + j];
				if (poison) {
					e[k] = 0.0f;
					continue;
				}
				unsigned qi = 0;
				for (unsigned r = 0; r < ly.rows && ly.cb; r++)
					qi = GW_MAX(qi, s->cells[(size_t)r * t + col_of(s->hash[j], r, t)]);
				float d = gw_bf16_f32(mean[sg * Q + (grp << ly.cb) + qi]);
				e[k] = s->val[p0 + j] - (sg ? -d : d);
				if (!isfinite(e[k]))
					e[k] = 0.0f;
			}
			p += nbytes;
		}
	}
	h->count = n;
	h->start = first;
	h->span = (uint32_t)(kmax + 1);
	h->param_len = PARAM_LEN;
	enc->pos += n;
	return (int)(p - body);
}

/* Reads the params and walks the payload, checking every length and key
 * without writing anything; fills *ly, *flags and, if given, parts. */
static int sk_validate(const struct gw_frame_info *h, const uint8_t *params,
		       const uint8_t *payload, struct layout *ly, unsigned *flags,
		       struct gw_frame_parts *parts)
{
	if (!(h->flags & GW_FF_SPARSE))
		return GW_ERR(GW_ECORRUPT);   /* sketchml frames are always sparse */
	if (h->param_len != PARAM_LEN)
		return GW_ERR(GW_ELENGTH);
	*ly = (struct layout){.qb = params[0], .rb = params[1], .rows = params[2],
			      .c1024 = gw_ld16(params + 4), .seed = gw_ld32(params + 6)};
	*flags = params[3];
	if (ly->qb < 1 || ly->qb > QB_MAX || ly->rb > ly->qb || ly->rows < 1 ||
	    ly->rows > 8 || !ly->c1024 || (*flags & ~(F_POS | F_NEG | F_POISON)))
		return GW_ERR(GW_ECORRUPT);
	ly->cb = ly->qb - ly->rb;
	uint32_t R = 1u << ly->rb, Q = 1u << ly->qb;
	if (h->count == 0)
		return (h->payload_len || *flags) ? GW_ERR(GW_ECORRUPT) : 0;
	if (!(*flags & (F_POS | F_NEG)))
		return GW_ERR(GW_ECORRUPT);
	if (!(h->flags & GW_FF_KEY64) && h->start + h->span - 1 > UINT32_MAX)
		return GW_ERR(GW_ECORRUPT);

	const uint8_t *p = payload, *end = payload + h->payload_len;
	uint64_t total = 0;
	struct gw_frame_parts pt = {0};
	for (unsigned sg = 0; sg < 2; sg++) {
		if (!(*flags & (1u << sg)))
			continue;
		if ((size_t)(end - p) < 2u * Q)
			return GW_ERR(GW_ELENGTH);
		for (uint32_t b = 0; b < Q; b++) {
			uint16_t m = gw_ld16(p + 2 * b);
			if ((m & 0x8000u) || (m & 0x7f80u) == 0x7f80u)
				return GW_ERR(GW_ECORRUPT);   /* magnitudes, finite */
		}
		p += 2u * Q;
		pt.tables += 2u * Q;
		for (uint32_t grp = 0; grp < R; grp++) {
			uint64_t gn = 0;
			unsigned sh = 0;
			const uint8_t *g0 = p;
			for (;;) {
				if (p == end || sh > 28)
					return GW_ERR(GW_ECORRUPT);
				uint8_t b = *p++;
				gn |= (uint64_t)(b & 0x7f) << sh;
				sh += 7;
				if (!(b & 0x80))
					break;
			}
			pt.tables += (uint32_t)(p - g0);
			if (gn > h->count - total)
				return GW_ERR(GW_ECORRUPT);
			total += gn;
			size_t used;
			int rc = gw_db_decode(p, (size_t)(end - p), (uint32_t)gn, 0, 0,
					      h->span, NULL, &used);
			if (rc < 0)
				return rc;
			p += used;
			pt.keys += (uint32_t)used;
			uint64_t cells = (uint64_t)ly->rows * cols_of(gn, ly->c1024);
			uint64_t nbytes = (cells * ly->cb + 7) / 8;
			if ((uint64_t)(end - p) < nbytes)
				return GW_ERR(GW_ELENGTH);
			p += nbytes;
			pt.values += (uint32_t)nbytes;
		}
	}
	if (p != end || total != h->count)
		return GW_ERR(GW_ECORRUPT);
	if (parts) {
		parts->keys = pt.keys;
		parts->tables = pt.tables;
		parts->values = pt.values;
	}
	return GW_OK;
}

static int sk_parts(const struct gw_frame_info *h, const uint8_t *params,
		    const uint8_t *payload, struct gw_frame_parts *parts)
{
	struct layout ly;
	unsigned flags;
	return sk_validate(h, params, payload, &ly, &flags, parts);
}

static int sk_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len,
		     float alpha)
{
	struct layout ly;
	unsigned flags;
	int rc = sk_validate(h, params, payload, &ly, &flags, NULL);
	if (rc < 0 || h->count == 0)
		return rc;
	if (h->start + h->span - 1 >= out_len)
		return GW_ERR(GW_ERANGE);
	uint32_t R = 1u << ly.rb, Q = 1u << ly.qb;
	const uint8_t *p, *end = payload + h->payload_len;

	/* Pass 2: add. */
	p = payload;
	for (unsigned sg = 0; sg < 2; sg++) {
		if (!(flags & (1u << sg)))
			continue;
		const uint8_t *mean = p;
		p += 2u * Q;
		for (uint32_t grp = 0; grp < R; grp++) {
			uint64_t gn = 0;
			unsigned sh = 0;
			uint8_t b;
			do {
				b = *p++;
				gn |= (uint64_t)(b & 0x7f) << sh;
				sh += 7;
			} while (b & 0x80);
			size_t used;
			gw_db_decode(p, (size_t)(end - p), (uint32_t)gn, 0, 0, h->span, NULL, &used);
			struct gw_db_iter it;
			gw_db_iter_init(&it, p, (uint32_t)gn, 0, 0);
			const uint8_t *cells = p + used;
			uint64_t t = cols_of(gn, ly.c1024);
			uint64_t flip = gw_xxh3_u32_flip(ly.seed);
			for (uint64_t x = 0; x < gn; x++) {
				uint64_t rel = gw_db_iter_next(&it);
				float v;
				if (flags & F_POISON) {
					v = NAN;
				} else {
					unsigned qi = 0;
					uint64_t hh = ly.cb ? key_hash(rel, flip) : 0;
					for (unsigned r = 0; r < ly.rows && ly.cb; r++)
						qi = GW_MAX(qi, get_cell(cells, ((uint64_t)r * t +
								  col_of(hh, r, t)) * ly.cb, ly.cb));
					v = gw_bf16_f32(gw_ld16(mean + 2 * ((grp << ly.cb) + qi)));
					if (sg)
						v = -v;
				}
				out[h->start + rel] += alpha * v;
			}
			p += used + ((uint64_t)ly.rows * t * ly.cb + 7) / 8;
		}
	}
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_sketchml = {
	.name = "sketchml",
	.id = GW_CODEC_SKETCHML,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KIND_SPARSE,
	GW_OPS_PARAMS(sk_params),
	.min_body = sk_min_body,
	.check = sk_check,
	.begin = sk_begin,
	.encode = sk_encode,
	.decode = sk_decode,
	.parts = sk_parts,
	.flags = GW_OPS_FUSED_EF,
	.state_free = sk_state_free,
};
