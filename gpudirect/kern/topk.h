/* top-k frames (wire-format §4.7) from a dense tensor, as phases:
 *
 *   rank:     c = g + e, and c's rank, the bits of |c| with NaN ranked
 *             as Inf (codec/select.h);
 *   select:   four radix passes of 8 bits: a histogram of the ranks that
 *             match the bits found so far, then thread 0 picks the bucket
 *             holding the k-th largest: the threshold T and how many
 *             ranks lie above it;
 *   ties:     which ranks equal T, numbered by a sum-scan: the lowest-
 *             indexed k - above of them are taken, as codec/ takes them;
 *   compact:  the selected positions numbered by a sum-scan; each one's
 *             key and value into the selection, in ascending key order;
 *   cost:     each selected entry's bytes (4, plus its gap's varint unless
 *             it starts a frame), summed by a scan;
 *   cut:      thread 0 walks the frames: each one, from its first entry,
 *             takes entries while they fit (a binary search over the
 *             sums), as codec/'s greedy loop does;
 *   write:    one block per frame: values, gap varints, header, checksum;
 *   residual: last, the error buffer's final value (0 if sent or
 *             non-finite, else c), only if the frames fit, so that
 *             GW_EBUDGET leaves e as it was.
 *
 * Indices are 32-bit: tensors below 2^32 elements, and k below 2^32 / 9
 * (every entry costs at most 9 bytes). */
#ifndef GW_KERN_TOPK_H
#define GW_KERN_TOPK_H

#include "frame.h"
#include "scan.h"

#define GW_KK_THREADS 256u
#define GW_KK_RANK_INF 0x7f800000u

struct gw_kk_enc {
	const float *g;
	float *e;                 /* error buffer, or NULL */
	uint64_t dim;             /* < 2^32 */
	uint32_t tensor;
	uint32_t k;               /* entries to send, 1 <= k <= dim */
	uint32_t cap;             /* frame body bytes: budget - 36 */
	uint32_t lim;             /* max_frame_elems, 0: none */
	/* Scratch in the device's memory: */
	uint32_t *rank;           /* dim */
	uint32_t *ties;           /* dim: ties flags, then numbers */
	uint32_t *pos;            /* dim: selected flags, then numbers */
	uint32_t *sel;            /* k: keys */
	float *val;               /* k: values */
	uint32_t *cost;           /* k + 1: entry bytes, then their sums */
	uint32_t *tiles;          /* gw_ks_tiles(dim) */
	uint32_t *hist;           /* 256 */
	uint32_t *st;             /* GW_KK_ST words of selection state */
	uint32_t *first, *count;  /* max_frames each: the frames' entries */
	uint32_t *nframes;        /* 1 */
	uint8_t *const *slots;
	uint32_t *lens;
	uint32_t max_frames;
};

/* Selection state words. */
enum { GW_KK_PREFIX, GW_KK_MASK, GW_KK_WANT, GW_KK_ABOVE, GW_KK_ST };

GW_HD void gw_hd_add_u32(uint32_t *p, uint32_t v)
{
#if defined(__CUDA_ARCH__)
	atomicAdd(p, v);
#else
	*p += v;
#endif
}

GW_HD uint32_t gw_kk_rank_of(float c)
{
	uint32_t u = gw_hd_f32_bits(c) & 0x7fffffffu;
	return u > GW_KK_RANK_INF ? GW_KK_RANK_INF : u;
}

/* rank phase, element i. */
GW_HD void gw_kk_rank(const struct gw_kk_enc *j, uint64_t i)
{
	float c = j->e ? j->g[i] + j->e[i] : j->g[i];
	j->rank[i] = gw_kk_rank_of(c);
}

/* select: before the passes, thread 0. */
GW_HD void gw_kk_select_init(const struct gw_kk_enc *j)
{
	j->st[GW_KK_PREFIX] = 0;
	j->st[GW_KK_MASK] = 0;
	j->st[GW_KK_WANT] = j->k;
	j->st[GW_KK_ABOVE] = 0;
	for (uint32_t b = 0; b < 256; b++)
		j->hist[b] = 0;
}

/* select pass p (0..3), element i: its bucket, if it matches so far. */
GW_HD void gw_kk_hist(const struct gw_kk_enc *j, uint32_t p, uint64_t i, uint32_t *hist)
{
	uint32_t r = j->rank[i], shift = 24 - 8 * p;
	if ((r & j->st[GW_KK_MASK]) == j->st[GW_KK_PREFIX])
		gw_hd_add_u32(&hist[(r >> shift) & 255u], 1);
}

/* select pass p, thread 0: the bucket of the want-th largest. */
GW_HD void gw_kk_pick(const struct gw_kk_enc *j, uint32_t p)
{
	uint32_t shift = 24 - 8 * p, want = j->st[GW_KK_WANT], acc = 0;
	for (int b = 255; b >= 0; b--) {
		uint32_t h = j->hist[b];
		if (acc + h >= want) {
			j->st[GW_KK_PREFIX] |= (uint32_t)b << shift;
			j->st[GW_KK_MASK] |= 255u << shift;
			j->st[GW_KK_WANT] = want - acc;
			j->st[GW_KK_ABOVE] += acc;
			break;
		}
		acc += h;
	}
	for (uint32_t b = 0; b < 256; b++)
		j->hist[b] = 0;
}

/* ties phase, element i, before its sum-scan. */
GW_HD void gw_kk_tie_flag(const struct gw_kk_enc *j, uint64_t i)
{
	j->ties[i] = j->rank[i] == j->st[GW_KK_PREFIX];
}

/* Whether element i is sent; ties[] holds the ties' numbers. */
GW_HD int gw_kk_sent(const struct gw_kk_enc *j, uint64_t i)
{
	uint32_t r = j->rank[i], thr = j->st[GW_KK_PREFIX];
	return r > thr || (r == thr && j->ties[i] < j->k - j->st[GW_KK_ABOVE]);
}

/* compact phase, element i, before its sum-scan: the flag. */
GW_HD void gw_kk_sel_flag(const struct gw_kk_enc *j, uint64_t i)
{
	j->pos[i] = (uint32_t)gw_kk_sent(j, i);
}

/* compact phase, element i, after the scan. */
GW_HD void gw_kk_compact(const struct gw_kk_enc *j, uint64_t i)
{
	if (gw_kk_sent(j, i)) {
		j->sel[j->pos[i]] = (uint32_t)i;
		j->val[j->pos[i]] = j->e ? j->g[i] + j->e[i] : j->g[i];
	}
}

/* residual phase, element i, after the cut: e <- c, or 0 where it was
 * sent or is not finite — only if the frames fit, so that on GW_EBUDGET
 * the caller's error buffer is as it was. */
GW_HD void gw_kk_residual(const struct gw_kk_enc *j, uint64_t i)
{
	if (!j->e || *j->nframes > j->max_frames)
		return;
	if (gw_kk_sent(j, i) || j->rank[i] == GW_KK_RANK_INF)
		j->e[i] = 0.0f;
	else
		j->e[i] = j->g[i] + j->e[i];
}

GW_HD uint32_t gw_kk_varint_len(uint32_t v)
{
	uint32_t n = 1;
	while (v >= 0x80u) {
		v >>= 7;
		n++;
	}
	return n;
}

/* cost phase, entry q (q == k: the sentinel 0). */
GW_HD void gw_kk_cost(const struct gw_kk_enc *j, uint32_t q)
{
	j->cost[q] = q == j->k ? 0 : q == 0 ? 4 : 4 + gw_kk_varint_len(j->sel[q] - j->sel[q - 1] - 1);
}

/* cut phase, thread 0 (cost[] holds the exclusive sums): entries
 * [a, m) fit a frame when 4 + cost[m] - cost[a + 1] <= cap. */
GW_HD void gw_kk_cut(const struct gw_kk_enc *j)
{
	uint32_t f = 0;
	for (uint32_t a = 0; a < j->k;) {
		uint32_t hi = j->k;
		if (j->lim && j->lim < hi - a)
			hi = a + j->lim;
		uint32_t lo = a + 1;   /* one entry always fits (cap >= 4) */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo + 1) / 2;
			if (4u + (j->cost[mid] - j->cost[a + 1]) <= j->cap)
				lo = mid;
			else
				hi = mid - 1;
		}
		if (f < j->max_frames) {
			j->first[f] = a;
			j->count[f] = lo - a;
		}
		f++;
		a = lo;
	}
	*j->nframes = f;
}

/* write phase, frame f: every thread its entries, thread 0 the header. */
GW_HD void gw_kk_write_entries(const struct gw_kk_enc *j, uint32_t f, uint32_t tid)
{
	uint32_t a = j->first[f], n = j->count[f];
	uint8_t *body = j->slots[f] + GW_WIRE_HDR_LEN;
	for (uint32_t q = tid; q < n; q += GW_KK_THREADS) {
		gw_hd_st32(body + 4 * (size_t)q, gw_hd_f32_bits(j->val[a + q]));
		if (!q)
			continue;
		/* gap bytes of the entries before this one in the frame */
		uint32_t off = (j->cost[a + q] - j->cost[a + 1]) - 4 * (q - 1);
		uint8_t *p = body + 4 * (size_t)n + off;
		uint32_t v = j->sel[a + q] - j->sel[a + q - 1] - 1;
		while (v >= 0x80u) {
			*p++ = (uint8_t)(v | 0x80u);
			v >>= 7;
		}
		*p = (uint8_t)v;
	}
}

GW_HD void gw_kk_seal(const struct gw_kk_enc *j, uint32_t f)
{
	uint32_t a = j->first[f], n = j->count[f];
	/* sparse frames; KEY64 needs keys past 2^32, not taken here */
	uint32_t gaps = n > 1 ? (j->cost[a + n] - j->cost[a + 1]) - 4 * (n - 1) : 0;
	j->lens[f] = gw_kf_seal_with(j->slots[f], GW_WIRE_CODEC_TOPK, GW_WIRE_F_SPARSE, 0,
				     j->tensor, n, j->sel[a], j->sel[a + n - 1] - j->sel[a] + 1,
				     4 * n + gaps);
}

/* ---- decode ------------------------------------------------------------------ */

/* One canonical LEB128 varint of at most 5 bytes from p[*at..end). */
GW_HD int gw_kk_varint(const uint8_t *p, uint32_t end, uint32_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (uint32_t n = 0; n < 5; n++) {
		if (*at == end)
			return GW_ECORRUPT;
		uint8_t b = p[(*at)++];
		x |= (uint64_t)(b & 0x7fu) << (7 * n);
		if (!(b & 0x80u)) {
			if (n && b == 0)
				return GW_ECORRUPT;
			*v = x;
			return 0;
		}
	}
	return GW_ECORRUPT;
}

/* Frame f, thread 0 of its block: §2's header rules and checksum, then
 * §4.7's checks in order, then (only if all passed) the values. A frame
 * takes the varints in sequence, so one thread walks it; frames run in
 * parallel. */
GW_HD void gw_kk_dec_frame(const struct gw_kf_dec *d, uint32_t f)
{
	const uint8_t *b = d->frames[f];
	struct gw_wire_hdr h = {0, 0, 0, 0, 0, 0, 0, 0};
	int32_t rc = gw_kf_check(b, d->lens[f], d->out_len, 1u << GW_WIRE_CODEC_TOPK, 1, &h);
	uint32_t count = h.count, paylen = h.payload_len;
	uint64_t start = h.start;
	if (!rc && (h.param_len != 0 || paylen < 4 * (uint64_t)count))
		rc = GW_ELENGTH;
	if (rc || count == 0) {
		d->rcs[f] = rc ? rc : paylen ? GW_ELENGTH : 0;
		return;
	}
	uint32_t flags = h.flags;
	uint64_t last = start + h.span - 1;
	if (!(flags & 2u) && last > 0xffffffffull)
		rc = GW_ECORRUPT;
	else if (last >= d->out_len)
		rc = GW_ERANGE;
	const uint8_t *pay = b + GW_WIRE_HDR_LEN;
	uint32_t at = 4 * count;
	uint64_t k = start, gap = 0;
	for (uint32_t i = 1; !rc && i < count; i++) {
		if (gw_kk_varint(pay, paylen, &at, &gap) || gap >= last - k)
			rc = GW_ECORRUPT;
		else
			k += gap + 1;
	}
	if (!rc && (at != paylen || k != last))
		rc = GW_ECORRUPT;
	if (rc) {
		d->rcs[f] = rc;
		return;
	}
	at = 4 * count;
	k = start;
	for (uint32_t i = 0; i < count; i++) {
		if (i) {
			gw_kk_varint(pay, paylen, &at, &gap);
			k += gap + 1;
		}
		d->out[k] = d->out[k] + gw_hd_bits_f32(gw_hd_ld32(pay + 4 * (size_t)i));
	}
	d->rcs[f] = (int32_t)count;
}

#endif
