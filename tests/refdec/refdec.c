/* Reference decoder: docs/wire-format.md §2, §4.1–§4.7 and §4.11, rule by
 * rule, in the order the spec lists them. Each check cites its rule.
 * Nothing is written into out until every check of the frame has passed. */
#include <math.h>
#include <string.h>

#include <xxhash.h>

#include <gw/common.h>

#include "refdec.h"

/* ---- little-endian fields (Conventions) ------------------------------------ */

static uint32_t ld16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t ld32(const uint8_t *p)
{
	return ld16(p) | ld16(p + 2) << 16;
}

static uint64_t ld64(const uint8_t *p)
{
	return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32;
}

static float f32_of(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static float ldf32(const uint8_t *p)
{
	return f32_of(ld32(p));
}

/* §2.5, bit patterns of scales. */
static int is_nan_bits(uint32_t u)
{
	return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0;
}

static int is_inf_bits(uint32_t u)
{
	return (u & 0x7fffffffu) == 0x7f800000u;
}

/* A scale that may be NaN and must not be negative: any NaN, or sign bit
 * clear and finite. */
static int scale_ok(uint32_t u)
{
	return is_nan_bits(u) || (!(u >> 31) && !is_inf_bits(u));
}

/* ---- the frame (§2) ---------------------------------------------------------- */

struct frame {
	unsigned codec, flags, param_len;
	uint32_t count, span, payload_len;
	uint64_t start;
	const uint8_t *params, *payload;
	unsigned kb;   /* key bytes: 0 dense, 4, or 8 with KEY64 */
};

#define F_SPARSE 0x1u
#define F_KEY64 0x2u

/* §3: the kinds of frame each codec writes (rule 7). */
#define K_DENSE 1u
#define K_SPARSE 2u
static const unsigned kinds[12] = {
	[1] = K_DENSE | K_SPARSE, [2] = K_DENSE | K_SPARSE, [3] = K_DENSE | K_SPARSE,
	[4] = K_DENSE, [5] = K_DENSE | K_SPARSE, [6] = K_DENSE | K_SPARSE,
	[7] = K_SPARSE, [8] = K_SPARSE, [9] = K_DENSE | K_SPARSE, [10] = K_SPARSE,
	[11] = K_DENSE,
};

/* §2.1 rules 1–9, then §2.3's checksum. */
static int header(const uint8_t *b, size_t len, struct frame *f)
{
	if (len < 36)
		return GW_ETRUNC;                        /* rule 1 */
	if (ld16(b) != 0x5747)
		return GW_EMAGIC;                        /* rule 2 */
	if (b[2] != 1)
		return GW_EVERSION;                      /* rule 3 */
	f->flags = ld16(b + 4);
	if ((f->flags & ~3u) || b[7] != 0 || ((f->flags & F_KEY64) && !(f->flags & F_SPARSE)))
		return GW_ERESERVED;                     /* rule 4 */
	f->codec = b[3];
	if (f->codec < 1 || f->codec > 11)
		return GW_ECODEC;                        /* rule 5 */
	f->param_len = b[6];
	f->count = ld32(b + 12);
	f->start = ld64(b + 16);
	f->span = ld32(b + 24);
	f->payload_len = ld32(b + 28);
	uint64_t flen = 36u + (uint64_t)f->param_len + f->payload_len;
	if (f->payload_len > 65535 || flen > 65535)
		return GW_ELENGTH;                       /* rule 6 */
	if (flen > len)
		return GW_ETRUNC;                        /* the frame length rule */
	if (flen < len)
		return GW_ELENGTH;
	int sparse = (f->flags & F_SPARSE) != 0;
	if (!(kinds[f->codec] & (sparse ? K_SPARSE : K_DENSE)))
		return GW_EUNSUPPORTED;                  /* rule 7 */
	if (sparse ? f->count > f->span : (f->count == 0 || f->span != f->count))
		return GW_ELENGTH;                       /* rule 8 */
	if (f->start > UINT64_MAX - f->span)
		return GW_ERANGE;                        /* rule 9 */
	uint64_t h = XXH3_64bits(b, 32);                 /* §2.3 */
	h = XXH3_64bits_withSeed(b + 36, len - 36, h);
	if ((uint32_t)h != ld32(b + 32))
		return GW_ECHECKSUM;
	f->params = b + 36;
	f->payload = f->params + f->param_len;
	f->kb = sparse ? ((f->flags & F_KEY64) ? 8 : 4) : 0;
	return 0;
}

static uint64_t key(const struct frame *f, uint32_t i)
{
	return f->kb == 8 ? ld64(f->payload + 8 * (size_t)i)
			  : ld32(f->payload + 4 * (size_t)i);
}

/* §2.4: key by key, then the last (sparse frames only). */
static int keys_ok(const struct frame *f, uint64_t out_len)
{
	if (!f->kb)
		return 0;
	uint64_t end = f->start + f->span, prev = 0;
	for (uint32_t i = 0; i < f->count; i++) {
		uint64_t k = key(f, i);
		if ((i == 0 ? k != f->start : k <= prev) || k >= end)
			return GW_ECORRUPT;
		if (k >= out_len)
			return GW_ERANGE;
		prev = k;
	}
	if (f->count && prev != end - 1)
		return GW_ECORRUPT;
	return 0;
}

/* Where value i of the frame goes: element start + i, or key i. */
static uint64_t where(const struct frame *f, uint32_t i)
{
	return f->kb ? key(f, i) : f->start + i;
}

/* ---- raw, bf16, int8 (§4.1–§4.3) --------------------------------------------- */

static int fixed_lengths_ok(const struct frame *f, unsigned plen, unsigned w)
{
	return f->param_len == plen && f->payload_len == (uint64_t)f->count * (f->kb + w);
}

/* raw (§4.1): float32 values; bf16 (§4.2): each value's upper 16 bits.
 * w is the width of a value, 4 or 2 bytes. */
static int raw_or_bf16(const struct frame *f, float *out, uint64_t out_len, unsigned w)
{
	if (!fixed_lengths_ok(f, 0, w))
		return GW_ELENGTH;
	int rc = keys_ok(f, out_len);
	if (rc)
		return rc;
	const uint8_t *v = f->payload + (size_t)f->kb * f->count;
	for (uint32_t i = 0; i < f->count; i++)
		out[where(f, i)] += w == 4 ? ldf32(v + 4 * (size_t)i)
					   : f32_of(ld16(v + 2 * (size_t)i) << 16);
	return (int)f->count;
}

static int int8(const struct frame *f, float *out, uint64_t out_len)
{
	if (!fixed_lengths_ok(f, 4, 1))
		return GW_ELENGTH;
	uint32_t su = ld32(f->params);
	if (!scale_ok(su))
		return GW_ECORRUPT;
	const uint8_t *q = f->payload + (size_t)f->kb * f->count;
	for (uint32_t i = 0; i < f->count; i++)
		if (q[i] == 0x80)
			return GW_ECORRUPT;
	int rc = keys_ok(f, out_len);
	if (rc)
		return rc;
	float scale = f32_of(su);
	for (uint32_t i = 0; i < f->count; i++)
		out[where(f, i)] += (float)(int8_t)q[i] * scale;
	return (int)f->count;
}

/* ---- base-3 digits (§4.4, §4.5) ------------------------------------------------ */

/* Digit d (0 = most significant) of a literal byte. */
static unsigned digit(unsigned byte, unsigned d)
{
	static const unsigned pow3[5] = {81, 27, 9, 3, 1};
	return byte / pow3[d] % 3;
}

/* Whether a last partial byte's 5 - r pad digits are all 1. */
static int pad_ok(unsigned byte, uint32_t count)
{
	unsigned r = count % 5;
	if (!r)
		return 1;
	unsigned mod = 1;
	for (unsigned i = 0; i < 5 - r; i++)
		mod *= 3;
	return byte % mod == (mod - 1) / 2;
}

/* Adds what digit t (q = t - 1) means, with v the scaled magnitude. */
static void add_digit(float *o, unsigned t, float v)
{
	if (t == 2)
		*o += v;
	else if (t == 0)
		*o += -v;
}

static int tlc(const struct frame *f, float *out)
{
	if (f->param_len != 4)
		return GW_ELENGTH;                       /* 1 */
	uint32_t mu = ld32(f->params);
	if (!scale_ok(mu))
		return GW_ECORRUPT;                      /* 2 */
	if (f->start % 5)
		return GW_ECORRUPT;                      /* 3 */
	uint64_t want = ((uint64_t)f->count + 4) / 5, got = 0;
	for (uint32_t j = 0; j < f->payload_len; j++)
		got += f->payload[j] <= 242 ? 1 : f->payload[j] - 241u;
	if (got != want)
		return GW_ELENGTH;                       /* 4 (empty: got 0) */
	unsigned last = f->payload[f->payload_len - 1];
	if (last <= 242 && !pad_ok(last, f->count))
		return GW_ECORRUPT;                      /* 5 */
	float v = f32_of(mu);
	float *o = out + f->start;
	if (is_nan_bits(mu)) {
		for (uint32_t i = 0; i < f->count; i++)
			o[i] += v;                       /* every element, any digit */
		return (int)f->count;
	}
	uint64_t i = 0;
	for (uint32_t j = 0; j < f->payload_len; j++) {
		unsigned b = f->payload[j];
		unsigned reps = b <= 242 ? 1 : b - 241u;
		unsigned lit = b <= 242 ? b : 121;       /* a run: bytes of 121 */
		for (unsigned r = 0; r < reps; r++)
			for (unsigned d = 0; d < 5; d++, i++)
				if (i < f->count)
					add_digit(&o[i], digit(lit, d), v);
	}
	return (int)f->count;
}

static int terngrad(const struct frame *f, float *out, uint64_t out_len)
{
	uint64_t nb = ((uint64_t)f->count + 4) / 5;
	if (f->param_len != 4 || f->payload_len != (uint64_t)f->count * f->kb + nb)
		return GW_ELENGTH;                       /* 1 */
	uint32_t mu = ld32(f->params);
	if (!scale_ok(mu))
		return GW_ECORRUPT;                      /* 2 */
	if (!f->kb && f->start % 5)
		return GW_ECORRUPT;                      /* 3 */
	const uint8_t *t = f->payload + (size_t)f->kb * f->count;
	for (uint64_t j = 0; j < nb; j++)
		if (t[j] > 242)
			return GW_ECORRUPT;              /* 4 */
	if (nb && !pad_ok(t[nb - 1], f->count))
		return GW_ECORRUPT;
	int rc = keys_ok(f, out_len);                    /* 5 */
	if (rc)
		return rc;
	float m = f32_of(mu);
	for (uint32_t i = 0; i < f->count; i++) {
		float *o = &out[where(f, i)];
		if (is_nan_bits(mu))
			*o += m;
		else
			add_digit(o, digit(t[i / 5], i % 5), m);
	}
	return (int)f->count;
}

/* ---- onebit (§4.6) ------------------------------------------------------------- */

static int onebit(const struct frame *f, float *out, uint64_t out_len)
{
	uint64_t nb = ((uint64_t)f->count + 7) / 8;
	if (f->param_len != 8 || f->payload_len != (uint64_t)f->count * f->kb + nb)
		return GW_ELENGTH;                       /* 1 */
	uint32_t au = ld32(f->params), bu = ld32(f->params + 4);
	float a = f32_of(au), b = f32_of(bu);
	if (is_nan_bits(au) != is_nan_bits(bu))
		return GW_ECORRUPT;                      /* 2 */
	if (!is_nan_bits(au) &&
	    (is_inf_bits(au) || is_inf_bits(bu) || (au >> 31) || b > 0.0f))
		return GW_ECORRUPT;
	const uint8_t *bits = f->payload + (size_t)f->kb * f->count;
	if (f->count % 8 && (bits[nb - 1] >> (f->count % 8)))
		return GW_ECORRUPT;                      /* 3 */
	int rc = keys_ok(f, out_len);                    /* 4 */
	if (rc)
		return rc;
	for (uint32_t i = 0; i < f->count; i++)
		out[where(f, i)] += (bits[i / 8] >> (i % 8)) & 1 ? a : b;
	return (int)f->count;
}

/* ---- topk (§4.7) --------------------------------------------------------------- */

/* One canonical LEB128 varint of at most 5 bytes from p[*at..end). */
static int varint(const uint8_t *p, uint32_t end, uint32_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned n = 0; n < 5; n++) {
		if (*at == end)
			return GW_ECORRUPT;              /* truncated */
		uint8_t b = p[(*at)++];
		x |= (uint64_t)(b & 0x7f) << (7 * n);
		if (!(b & 0x80)) {
			if (n && b == 0)
				return GW_ECORRUPT;      /* overlong */
			*v = x;
			return 0;
		}
	}
	return GW_ECORRUPT;                              /* longer than 5 bytes */
}

static int topk(const struct frame *f, float *out, uint64_t out_len)
{
	if (f->param_len != 0 || f->payload_len < 4 * (uint64_t)f->count)
		return GW_ELENGTH;                       /* 1 */
	if (f->count == 0)
		return f->payload_len ? GW_ELENGTH : 0;  /* 2 */
	uint64_t last = f->start + f->span - 1;
	if (!(f->flags & F_KEY64) && last > UINT32_MAX)
		return GW_ECORRUPT;                      /* 3 */
	if (last >= out_len)
		return GW_ERANGE;                        /* 4 */
	uint32_t at = 4 * f->count;
	uint64_t k = f->start, gap = 0;
	for (uint32_t i = 1; i < f->count; i++) {        /* 5 */
		if (varint(f->payload, f->payload_len, &at, &gap) || gap >= last - k)
			return GW_ECORRUPT;
		k += gap + 1;
	}
	if (at != f->payload_len || k != last)
		return GW_ECORRUPT;                      /* 6 */
	at = 4 * f->count;
	k = f->start;
	for (uint32_t i = 0; i < f->count; i++) {
		if (i) {
			varint(f->payload, f->payload_len, &at, &gap);
			k += gap + 1;
		}
		out[k] += ldf32(f->payload + 4 * (size_t)i);
	}
	return (int)f->count;
}

/* ---- hq (§4.11) ---------------------------------------------------------------- */

#define HQ_ROTATED 0x1u
#define HQ_SUM 0x2u
#define HQ_POISON 0x4u
#define HQ_BLOCK_MAX 4096u

/* mix64 of §4.5 (SplitMix64's output function). */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Bit j of the payload: bit j mod 8 of byte j / 8. */
static unsigned pbit(const uint8_t *p, uint64_t j)
{
	return (p[j / 8] >> (j % 8)) & 1u;
}

/* Code i: the width-bit two's-complement integer at bits
 * [i * width, (i + 1) * width). */
static int64_t hq_code(const uint8_t *p, uint32_t i, unsigned width)
{
	uint64_t u = 0;
	for (unsigned b = 0; b < width; b++)
		u |= (uint64_t)pbit(p, (uint64_t)i * width + b) << b;
	if (u >> (width - 1))
		return (int64_t)u - ((int64_t)1 << width);
	return (int64_t)u;
}

/* §4.11.1: D's sign of value i of the frame (1: negate). */
static unsigned hq_negates(uint32_t seed, uint64_t i)
{
	uint64_t draw = mix64((uint64_t)seed + (i / 64 + 1) * 0x9e3779b97f4a7c15ull);
	return (draw >> (i % 64)) & 1u;
}

/* §4.11.1: H of one block x[0..2^k), in float32. */
static void hq_hadamard(float *x, uint32_t b)
{
	unsigned k = 0;
	while ((1u << k) < b)
		k++;
	float pre = 1.0f;
	for (unsigned j = 0; j < k / 2; j++)
		pre *= 0.5f;                             /* 2^-floor(k/2), exact */
	for (uint32_t i = 0; i < b; i++)
		x[i] *= pre;
	for (uint32_t h = 1; h < b; h *= 2)
		for (uint32_t i = 0; i < b; i++)
			if (i % (2 * h) < h) {
				float u = x[i], v = x[i + h];
				x[i] = u + v;
				x[i + h] = u - v;
			}
	if (k % 2)
		for (uint32_t i = 0; i < b; i++)
			x[i] *= 0x1.6a09e6p-1f;
}

static int hq(const struct frame *f, float *out)
{
	const uint8_t *p = f->params;
	if (f->param_len != 20)
		return GW_ELENGTH;                       /* 1 */
	unsigned bits = p[0], width = p[1], flags = p[2];
	uint32_t contributors = ld32(p + 4), seed = ld32(p + 8);
	uint32_t su = ld32(p + 12), nu = ld32(p + 16);
	if ((flags & ~7u) || p[3])
		return GW_ERESERVED;                     /* 2 */
	if (bits < 2 || bits > 8)
		return GW_ECORRUPT;                      /* 3 */
	if (flags & HQ_SUM) {
		if (width < 2 || width > 32 || contributors == 0)
			return GW_ECORRUPT;
	} else if (width != bits || contributors != 1) {
		return GW_ECORRUPT;
	}
	if (seed && !(flags & HQ_ROTATED))
		return GW_ECORRUPT;                      /* 4 */
	if ((su >> 31) || (su & 0x7f800000u) == 0x7f800000u || (nu >> 31) ||
	    (nu & 0x7f800000u) == 0x7f800000u)
		return GW_ECORRUPT;                      /* 5 */
	if (f->payload_len != ((uint64_t)f->count * width + 7) / 8)
		return GW_ELENGTH;                       /* 6 */
	uint64_t Q = (1u << (bits - 1)) - 1;
	int64_t lim = (int64_t)((uint64_t)contributors * Q);
	if (lim > ((int64_t)1 << (width - 1)) - 1)
		lim = ((int64_t)1 << (width - 1)) - 1;
	for (uint32_t i = 0; i < f->count; i++) {        /* 7 */
		int64_t c = hq_code(f->payload, i, width);
		if (c < -lim || c > lim)
			return GW_ECORRUPT;
	}
	for (uint64_t j = (uint64_t)f->count * width; j < 8 * (uint64_t)f->payload_len; j++)
		if (pbit(f->payload, j))
			return GW_ECORRUPT;

	float *o = out + f->start;
	if (flags & HQ_POISON) {
		for (uint32_t i = 0; i < f->count; i++)
			o[i] += NAN;
		return (int)f->count;
	}
	float step = f32_of(su) / (float)Q;
	if (!(flags & HQ_ROTATED)) {
		for (uint32_t i = 0; i < f->count; i++)
			o[i] += (float)hq_code(f->payload, i, width) * step;
		return (int)f->count;
	}
	/* The inverse rotation, block by block: H, then D. */
	float x[HQ_BLOCK_MAX];
	for (uint32_t off = 0; off < f->count;) {
		uint32_t left = f->count - off, b = 1;
		while (2 * b <= left && 2 * b <= HQ_BLOCK_MAX)
			b *= 2;
		for (uint32_t j = 0; j < b; j++)
			x[j] = (float)hq_code(f->payload, off + j, width) * step;
		hq_hadamard(x, b);
		for (uint32_t j = 0; j < b; j++)
			if (hq_negates(seed, (uint64_t)off + j))
				x[j] = -x[j];
		for (uint32_t j = 0; j < b; j++)
			o[off + j] += x[j];
		off += b;
	}
	return (int)f->count;
}

/* ---- entry --------------------------------------------------------------------- */

int refdec_decode(const uint8_t *frame, size_t len, float *out, uint64_t out_len)
{
	struct frame f;
	int rc = header(frame, len, &f);
	if (rc)
		return rc;
	/* §2: a dense frame's range within the output, after the checksum. */
	if (!f.kb && f.start + f.count > out_len)
		return GW_ERANGE;
	switch (f.codec) {
	case 1: return raw_or_bf16(&f, out, out_len, 4);
	case 2: return raw_or_bf16(&f, out, out_len, 2);
	case 3: return int8(&f, out, out_len);
	case 4: return tlc(&f, out);
	case 5: return terngrad(&f, out, out_len);
	case 6: return onebit(&f, out, out_len);
	case 7: return topk(&f, out, out_len);
	case 11: return hq(&f, out);
	default: return REFDEC_UNCOVERED;
	}
}
