/* DeepReduce index "rle": the span as a bitmap (bit x = 1 when offset x
 * carries a value) cut into maximal runs that alternate 0, 1, 0, 1, ...,
 * starting with a 0-run, each run length in Elias gamma on a bit stream
 * (bits.h, LSB first). Dense or clustered offsets — CNN layers' top-k,
 * keys of one document — cost a few bits per run instead of per key.
 *
 * Only the first 0-run may be empty (the bitmap may start with a 1), so it
 * is coded as length + 1; every later run is >= 1 and coded as it is.
 * Gamma of v >= 1 with b = floor(log2 v): b zero bits, a one bit (v's
 * leading 1), then v's b lower bits, least significant first — v's bits
 * in the stream's own order, so a reader takes them with one call. */
#include "../codec_internal.h"
#include "bits.h"
#include "dr.h"
#include "index_util.h"

/* A gamma prefix longer than this is refused: no run of a span below 2^32
 * needs more, and it bounds the reader's work per code. */
#define GAMMA_ZEROS_MAX 32u

static void put_gamma(struct dr_bw *w, uint64_t v)
{
	unsigned b = 0;
	while (v >> (b + 1))
		b++;
	dr_bw_put(w, 1ull << b, b + 1);   /* b zeros, then the leading 1 */
	dr_bw_put(w, v & ((1ull << b) - 1), b);
}

static int rle_encode(const uint32_t *off, uint32_t n, uint32_t span,
		      const struct dr_index_cfg *cfg, uint8_t *out, size_t cap,
		      uint32_t *nvals)
{
	(void)cfg;
	int rc = dr_index_check_args(off, n, span);
	if (rc < 0)
		return rc;
	/* At most 2n + 1 runs of at most 2 floor(log2(span + 1)) + 1 <= 49
	 * bits: the writer clears only that much of a large cap. */
	struct dr_bw w;
	dr_bw_init(&w, out, GW_MIN(cap, ((2 * (uint64_t)n + 1) * 49 + 7) / 8));
	put_gamma(&w, (uint64_t)off[0] + 1);
	/* The offsets are checked as they are coded, so a section that does
	 * not fit is refused without reading them all. Inside a run they
	 * ascend by construction; a run must start above the last one. */
	for (uint32_t i = 0; i < n && !w.over;) {
		uint32_t j = i;
		while (j + 1 < n && off[j + 1] == off[j] + 1)
			j++;
		if (i && off[i] <= off[i - 1])
			return GW_ERR(GW_EINVAL);
		if (i)
			put_gamma(&w, off[i] - off[i - 1] - 1);   /* the 0-run before */
		put_gamma(&w, (uint64_t)j - i + 1);
		i = j + 1;
	}
	if (w.over)
		return GW_ERR(GW_EBUDGET);
	if (off[n - 1] >= span)
		return GW_ERR(GW_EINVAL);
	if (off[n - 1] + 1 < span)
		put_gamma(&w, span - off[n - 1] - 1);   /* trailing 0-run */
	if (w.over)
		return GW_ERR(GW_EBUDGET);
	*nvals = n;
	return (int)dr_bw_bytes(&w);
}

/* One gamma code into *v: 0, GW_ELENGTH past the end, GW_ECORRUPT for an
 * overlong prefix. */
static int get_gamma(struct dr_br *r, uint64_t *v)
{
	unsigned b = 0;
	for (;;) {
		uint64_t bit = dr_br_get(r, 1);
		if (r->err)
			return GW_ERR(GW_ELENGTH);
		if (bit)
			break;
		if (++b > GAMMA_ZEROS_MAX)
			return GW_ERR(GW_ECORRUPT);
	}
	uint64_t low = dr_br_get(r, b);
	if (r->err)
		return GW_ERR(GW_ELENGTH);
	*v = 1ull << b | low;
	return GW_OK;
}

static int rle_decode(const uint8_t *in, size_t len, uint32_t span,
		      uint32_t count, uint32_t *pos)
{
	if (span > DR_SPAN_MAX || count > span)
		return GW_ERR(GW_ECORRUPT);
	struct dr_br r;
	dr_br_init(&r, in, len);
	uint64_t v;
	int rc = get_gamma(&r, &v);
	if (rc < 0)
		return rc;
	if (v - 1 > span)
		return GW_ERR(GW_ECORRUPT);
	uint64_t at = v - 1;   /* offsets covered so far */
	uint32_t found = 0;
	for (int ones = 1; at < span; ones = !ones) {
		if ((rc = get_gamma(&r, &v)) < 0)
			return rc;
		if (v > span - at)
			return GW_ERR(GW_ECORRUPT);   /* runs overshoot the span */
		if (ones) {
			if (v > count - found)
				return GW_ERR(GW_ECORRUPT);   /* more ones than count */
			for (uint64_t x = at; x < at + v; x++)
				pos[found++] = (uint32_t)x;
		}
		at += v;
	}
	if (found != count)
		return GW_ERR(GW_ECORRUPT);
	size_t used = (size_t)((r.pos + 7) / 8);
	if (used != len)
		return GW_ERR(GW_ELENGTH);   /* bytes after the stream */
	if (r.pos % 8 && in[used - 1] >> (r.pos % 8))
		return GW_ERR(GW_ECORRUPT);   /* padding bits must be 0 */
	return GW_OK;
}

const struct dr_index_ops dr_index_rle = {
	.name = "rle",
	.encode = rle_encode,
	.decode = rle_decode,
};
