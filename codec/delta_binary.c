/* Delta-binary key blocks (see delta_binary.h). */
#include "codec_internal.h"
#include "delta_binary.h"

static const uint8_t narrow_len[4] = {1, 2, 3, 4};
static const uint8_t wide_len[4] = {1, 2, 4, 8};

static inline unsigned flag_of(uint64_t d, int wide)
{
	if (d < 0x100u)
		return 0;
	if (d < 0x10000u)
		return 1;
	if (wide)
		return d <= UINT32_MAX ? 2 : 3;
	return d < 0x1000000u ? 2 : 3;
}

static inline uint64_t delta(const uint64_t *keys, uint32_t i, uint64_t base)
{
	return i ? keys[i] - keys[i - 1] - 1 : keys[0] - base;
}

size_t gw_db_size(const uint64_t *keys, uint32_t n, uint64_t base, int wide)
{
	const uint8_t *len = wide ? wide_len : narrow_len;
	size_t size = ((size_t)n + 3) / 4;
	for (uint32_t i = 0; i < n; i++)
		size += len[flag_of(delta(keys, i, base), wide)];
	return size;
}

size_t gw_db_encode(const uint64_t *keys, uint32_t n, uint64_t base, int wide,
		    uint8_t *out)
{
	const uint8_t *len = wide ? wide_len : narrow_len;
	size_t nflag = ((size_t)n + 3) / 4;
	memset(out, 0, nflag);
	uint8_t *p = out + nflag;
	uint32_t i = 0;
	/* Narrow blocks, all but the last three keys: four bytes stored
	 * whatever the length, without a branch on it (gradient gaps mix
	 * lengths unpredictably); the excess is overwritten by the next three
	 * keys, a byte each at least, so nothing past the block is touched. */
	if (!wide)
		for (; i + 3 < n; i++) {
			uint64_t d = delta(keys, i, base);
			unsigned f = (unsigned)(d >= 0x100u) + (d >= 0x10000u) + (d >= 0x1000000u);
			out[i / 4] |= (uint8_t)(f << (2 * (i % 4)));
			gw_st32(p, (uint32_t)d);
			p += f + 1;
		}
	for (; i < n; i++) {
		uint64_t d = delta(keys, i, base);
		unsigned f = flag_of(d, wide);
		out[i / 4] |= (uint8_t)(f << (2 * (i % 4)));
		for (unsigned b = 0; b < len[f]; b++)
			*p++ = (uint8_t)(d >> (8 * b));
	}
	return (size_t)(p - out);
}

int gw_db_decode(const uint8_t *in, size_t len, uint32_t n, uint64_t base,
		 int wide, uint64_t limit, uint64_t *keys, size_t *used)
{
	const uint8_t *blen = wide ? wide_len : narrow_len;
	size_t nflag = ((size_t)n + 3) / 4;
	if (len < nflag)
		return GW_ERR(GW_ELENGTH);
	if (n % 4 && in[nflag - 1] >> (2 * (n % 4)))
		return GW_ERR(GW_ECORRUPT);   /* reserved flag bits set */
	size_t off = nflag;
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		unsigned f = (in[i / 4] >> (2 * (i % 4))) & 3u;
		if (len - off < blen[f])
			return GW_ERR(GW_ELENGTH);
		uint64_t d = 0;
		for (unsigned b = 0; b < blen[f]; b++)
			d |= (uint64_t)in[off + b] << (8 * b);
		off += blen[f];
		/* k = base + d, or prev + 1 + d: both must stay below limit. */
		uint64_t from = i ? prev + 1 : base;
		if (i && prev + 1 == 0)
			return GW_ERR(GW_ECORRUPT);
		if (from >= limit || d >= limit - from)
			return GW_ERR(GW_ECORRUPT);
		prev = from + d;
		if (keys)
			keys[i] = prev;
	}
	*used = off;
	return GW_OK;
}
