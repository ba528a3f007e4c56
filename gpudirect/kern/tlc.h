/* 3lc frames (wire-format §4.4) from a dense tensor, as phases:
 *
 *   max:      every element's |c| bits, c = g + e, into one maximum;
 *   pack:     m from that maximum, then one thread per packed byte: its
 *             five trits (e is left alone until residual);
 *   runs:     for each packed byte, where its run of zero bytes (121)
 *             began: a max-scan of the run starts (scan.h);
 *   tokens:   which bytes begin an output byte ("token"): a literal, or a
 *             zero byte 0, 14, 28, ... bytes into its run; their numbers
 *             by a sum-scan;
 *   write:    each token's output byte (the literal, 255 for 14 zeros,
 *             243 + k - 2 for the k < 14 that end a run, 121 for one),
 *             into frame t / P at t mod P, P = budget - 40;
 *   seal:     one block per frame: m, header, checksum;
 *   residual: last, one thread per packed byte: e <- c - m q (exact;
 *             0 for a poisoned tensor), only if the frames fit, so that
 *             GW_EBUDGET leaves e as it was.
 *
 * That is codec/'s greedy zero-run encoding exactly: a frame takes input
 * bytes while its output fits, so every frame but the last holds exactly P
 * output bytes, and where a frame ends inside a run it has taken whole
 * 14-byte pieces (each one output byte), so the next frame's pieces are
 * the ones the whole stream's tokenization has. Frames therefore are the
 * tokens [f P, f P + P), found without a sequential pass.
 *
 * With a frame-size limit (max_frame_elems, as the collective sets it to
 * its chunk) codec/ gives a frame at most L = limit / 5 input bytes while
 * more than limit elements are left, so frames start at multiples of L
 * and runs restart there. gw_kt_limit() sets that up when every such
 * segment's tokens fit one frame (the collective sizes chunks so they
 * do): then frame f is segment f. A segment that does not fit is refused
 * (GW_EBUDGET in *err), not cut: codec/ would go on greedily there. */
#ifndef GW_KERN_TLC_H
#define GW_KERN_TLC_H

#include "frame.h"
#include "scan.h"

#define GW_KT_THREADS 256u
#define GW_KT_ZERO 121u        /* five zero trits */
#define GW_KT_PIECE 14u        /* zero bytes per run byte 255 */

struct gw_kt_enc {
	const float *g;
	float *e;                  /* error buffer, or NULL */
	uint64_t dim;
	uint32_t tensor;
	double sparsity;           /* 1 <= s < 2 */
	uint32_t room;             /* P: payload bytes of a frame (budget - 40) */
	uint64_t nb;               /* packed bytes, ceil(dim / 5) */
	/* Scratch in the device's memory: */
	uint8_t *bytes;            /* nb: the packed stream */
	uint32_t *runs;            /* nb: run starts, then where each run began */
	uint32_t *tok;             /* nb: token flags, then token numbers */
	uint32_t *tok_byte;        /* nb: the byte each token begins at */
	uint32_t *tiles;           /* gw_ks_tiles(nb) */
	uint32_t *mx;              /* 1: max |c| bits (0 before the max phase) */
	uint32_t *ntok;            /* 1: tokens in all */
	uint32_t *err;             /* 1: 0, or GW_EBUDGET (a segment too long) */
	uint32_t seg;              /* L: segment bytes (0: no frame limit) */
	uint64_t seg_last;         /* the last segment's first byte */
	/* Frames: */
	uint8_t *const *slots;
	uint32_t *lens;
	uint32_t max_frames;       /* slots given; ceil(nb / P) always suffice */
	/* A batch of a larger tensor's segments (the collective's chunks):
	 * g[0] is element base of it, frame starts count from there, and
	 * mx_given says *mx already holds the whole tensor's maximum (the
	 * max phase ran over it first), so every batch uses one m. */
	uint64_t base;
	int mx_given;
};

GW_HD void gw_hd_max_u32(uint32_t *p, uint32_t v)
{
#if defined(__CUDA_ARCH__)
	atomicMax(p, v);
#else
	if (v > *p)
		*p = v;
#endif
}

/* max phase, every thread of every block: a grid-stride share of the
 * elements, folded into *mx through the block (part[], thread 0). */
GW_HD void gw_kt_max_part(const struct gw_kt_enc *j, uint64_t first, uint64_t stride,
			  uint32_t *part)
{
	uint32_t mb = 0;
	for (uint64_t i = first; i < j->dim; i += stride) {
		float c = j->e ? j->g[i] + j->e[i] : j->g[i];
		uint32_t b = gw_hd_f32_bits(c) & 0x7fffffffu;
		mb = b > mb ? b : mb;
	}
	*part = mb;
}

GW_HD void gw_kt_max_block(const struct gw_kt_enc *j, const uint32_t *part, uint32_t n)
{
	uint32_t mb = 0;
	for (uint32_t t = 0; t < n; t++)
		mb = part[t] > mb ? part[t] : mb;
	gw_hd_max_u32(j->mx, mb);
}

/* m from the maximum (§4.4's encoding): NaN for a poisoned tensor. */
GW_HD float gw_kt_m(const struct gw_kt_enc *j)
{
	uint32_t mx = *j->mx;
	if (mx >= 0x7f800000u)
		return gw_hd_bits_f32(0x7fc00000u);
	float m = (float)(j->sparsity * (double)gw_hd_bits_f32(mx));
	if (!(m <= 3.402823466e38f))
		m = 3.402823466e38f;   /* FLT_MAX */
	return m;
}

/* Element k's trit (0: -m, 1: 0, 2: +m) and its value c = g + e. */
GW_HD uint32_t gw_kt_trit(const struct gw_kt_enc *j, uint64_t k, float m, float *c)
{
	*c = j->e ? j->g[k] + j->e[k] : j->g[k];
	float c2 = *c + *c;
	return c2 > m ? 2u : c2 < -m ? 0u : 1u;
}

/* pack phase: packed byte b (elements 5b .. 5b + 4). e is left as it is:
 * the residual phase writes it once the frames are known to fit. */
GW_HD void gw_kt_pack(const struct gw_kt_enc *j, uint64_t b)
{
	int poisoned = *j->mx >= 0x7f800000u;
	float m = gw_kt_m(j), c;
	uint32_t v = 0;
	for (uint64_t k = 5 * b; k < 5 * b + 5; k++)   /* pad or poisoned: trit 1, a 0 */
		v = v * 3u + (k >= j->dim || poisoned ? 1u : gw_kt_trit(j, k, m, &c));
	j->bytes[b] = (uint8_t)v;
}

/* A frame limit of lim elements (0: none), for codec/'s max_frame_elems:
 * fills seg and seg_last. A limit that cannot act (the whole tensor within
 * it) is none. */
GW_HD void gw_kt_limit(struct gw_kt_enc *j, uint64_t lim)
{
	j->seg = 0;
	j->seg_last = 0;
	if (!lim || lim >= j->dim)
		return;
	j->seg = (uint32_t)(lim / 5);
	/* the first multiple of L from which at most lim elements are left */
	uint64_t p = (j->dim - lim + 4) / 5;   /* bytes: dim - 5 p <= lim */
	p = (p + j->seg - 1) / j->seg * j->seg;
	j->seg_last = p < j->nb ? p : (j->nb - 1) / j->seg * j->seg;
}

GW_HD uint32_t gw_kt_segments(const struct gw_kt_enc *j)
{
	return j->seg ? (uint32_t)(j->seg_last / j->seg) + 1 : 0;
}

/* The segment byte b is in, and where segment s begins. */
GW_HD uint32_t gw_kt_seg_of(const struct gw_kt_enc *j, uint64_t b)
{
	return b >= j->seg_last ? gw_kt_segments(j) - 1 : (uint32_t)(b / j->seg);
}

GW_HD uint64_t gw_kt_seg_start(const struct gw_kt_enc *j, uint32_t s)
{
	return s == gw_kt_segments(j) - 1 ? j->seg_last : (uint64_t)s * j->seg;
}

/* runs phase, before its max-scan: b's own index if a run starts there
 * (a segment's first byte starts one too). */
GW_HD void gw_kt_run_start(const struct gw_kt_enc *j, uint64_t b)
{
	int zero = j->bytes[b] == GW_KT_ZERO;
	int seg0 = j->seg && gw_kt_seg_start(j, gw_kt_seg_of(j, b)) == b;
	int starts = zero && (b == 0 || seg0 || j->bytes[b - 1] != GW_KT_ZERO);
	j->runs[b] = starts ? (uint32_t)b : 0;
}

/* tokens phase, before its sum-scan: 1 if byte b begins a token. runs[b]
 * is where b's run began (inclusive max-scan of the starts). */
GW_HD void gw_kt_token_flag(const struct gw_kt_enc *j, uint64_t b)
{
	int zero = j->bytes[b] == GW_KT_ZERO;
	j->tok[b] = !zero || ((uint32_t)b - j->runs[b]) % GW_KT_PIECE == 0;
}

/* write phase: byte b, if it begins a token (tok[] holds the exclusive
 * token numbers; flag recomputed). Tokens past the slots are dropped: the
 * caller sees ntok and refuses. */
GW_HD void gw_kt_write(const struct gw_kt_enc *j, uint64_t b)
{
	uint8_t v = j->bytes[b];
	int zero = v == GW_KT_ZERO;
	if (zero && ((uint32_t)b - j->runs[b]) % GW_KT_PIECE != 0)
		return;
	uint32_t t = j->tok[b];
	uint32_t out = v;
	uint64_t end = j->nb;   /* a run's piece ends at its segment's end */
	uint32_t f = t / j->room, off = t % j->room;
	if (j->seg) {
		f = gw_kt_seg_of(j, b);
		end = f + 1 < gw_kt_segments(j) ? gw_kt_seg_start(j, f + 1) : j->nb;
		off = t - j->tok[gw_kt_seg_start(j, f)];
	}
	if (zero) {
		uint32_t k = 1;
		while (k < GW_KT_PIECE && b + k < end && j->bytes[b + k] == GW_KT_ZERO)
			k++;
		out = k == 1 ? GW_KT_ZERO : 241u + k;   /* 243 + (k - 2) */
	}
	if (f < j->max_frames && off < j->room)
		j->slots[f][GW_WIRE_HDR_LEN + 4 + off] = (uint8_t)out;
	j->tok_byte[t] = (uint32_t)b;
}

/* tokens total: after the sum-scan, thread 0 of one block. */
GW_HD void gw_kt_count(const struct gw_kt_enc *j)
{
	uint64_t last = j->nb - 1;
	int zero = j->bytes[last] == GW_KT_ZERO;
	uint32_t flag = !zero || ((uint32_t)last - j->runs[last]) % GW_KT_PIECE == 0;
	*j->ntok = j->tok[last] + flag;
	*j->err = 0;
	for (uint32_t s = 0; s < gw_kt_segments(j); s++) {
		uint64_t b0 = gw_kt_seg_start(j, s);
		uint64_t b1 = s + 1 < gw_kt_segments(j) ? gw_kt_seg_start(j, s + 1) : j->nb;
		uint32_t t1 = b1 < j->nb ? j->tok[b1] : *j->ntok;
		if (t1 - j->tok[b0] > j->room)
			*j->err = (uint32_t)GW_EBUDGET;
	}
}

GW_HD uint32_t gw_kt_frames(const struct gw_kt_enc *j)
{
	if (j->seg)
		return gw_kt_segments(j);
	return (*j->ntok + j->room - 1) / j->room;
}

/* residual phase, byte b, after the count: e <- c - its quantized value
 * (0 for a poisoned tensor), only if the frames fit — on GW_EBUDGET the
 * caller's error buffer is as it was (gpudirect.h's promise). */
GW_HD void gw_kt_residual(const struct gw_kt_enc *j, uint64_t b)
{
	if (!j->e || gw_kt_frames(j) > j->max_frames || *j->err)
		return;
	int poisoned = *j->mx >= 0x7f800000u;
	float m = gw_kt_m(j), c;
	for (uint64_t k = 5 * b; k < 5 * b + 5 && k < j->dim; k++) {
		uint32_t t = poisoned ? 1u : gw_kt_trit(j, k, m, &c);
		j->e[k] = poisoned ? 0.0f : c - (t == 2u ? m : t == 0u ? -m : 0.0f);
	}
}

/* Frame f's packed bytes [*b0, *b1), first token *t0 and token count. */
GW_HD void gw_kt_frame_range(const struct gw_kt_enc *j, uint32_t f, uint64_t *b0, uint64_t *b1,
			     uint32_t *t0, uint32_t *toks)
{
	uint32_t T = *j->ntok;
	if (j->seg) {
		*b0 = gw_kt_seg_start(j, f);
		*b1 = f + 1 < gw_kt_segments(j) ? gw_kt_seg_start(j, f + 1) : j->nb;
		*t0 = j->tok[*b0];
		*toks = (*b1 < j->nb ? j->tok[*b1] : T) - *t0;
		return;
	}
	*t0 = f * j->room;
	*toks = T - *t0 < j->room ? T - *t0 : j->room;
	*b0 = j->tok_byte[*t0];
	*b1 = *t0 + j->room < T ? j->tok_byte[*t0 + j->room] : j->nb;
}

/* seal phase, thread 0 of a block per frame f. */
GW_HD void gw_kt_seal(const struct gw_kt_enc *j, uint32_t f)
{
	uint64_t b0, b1;
	uint32_t t0, toks;
	gw_kt_frame_range(j, f, &b0, &b1, &t0, &toks);
	uint64_t count = 5 * (b1 - b0), off = 5 * b0, start = j->base + off;
	if (count > j->dim - off)
		count = j->dim - off;
	uint8_t *fr = j->slots[f];
	gw_hd_st32(fr + GW_WIRE_HDR_LEN, gw_hd_f32_bits(gw_kt_m(j)));
	j->lens[f] = gw_kf_seal_with(fr, GW_WIRE_CODEC_3LC, 0, 4, j->tensor, (uint32_t)count,
				     start, (uint32_t)count, toks);
}

/* ---- decode ------------------------------------------------------------------ */

struct gw_kt_dshared {
	uint32_t part[GW_KT_THREADS];   /* a thread's expanded bytes, then its offset */
	int32_t rc;
	uint32_t count, plen, chunk;
	uint64_t start;
	float m;
	int nan;
	const uint8_t *pay;
};

GW_HD uint32_t gw_kt_expand_len(uint32_t b)
{
	return b < 243u ? 1u : b - 241u;
}

/* Thread 0: §2, then §4.4's checks 1–3. */
GW_HD void gw_kt_dec_check(const struct gw_kf_dec *d, uint32_t f, struct gw_kt_dshared *s)
{
	const uint8_t *b = d->frames[f];
	struct gw_wire_hdr h = {0, 0, 0, 0, 0, 0, 0, 0};
	int32_t rc = gw_kf_check(b, d->lens[f], d->out_len, 1u << GW_WIRE_CODEC_3LC, 0, &h);
	/* m is read only from a parameter block of its 4 bytes: a shorter
	 * one ends the frame before m does. */
	if (!rc && h.param_len != 4)
		rc = GW_ELENGTH;
	uint32_t u = rc ? 0 : gw_hd_ld32(b + GW_WIRE_HDR_LEN);
	int nan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
	if (!rc && !nan && ((u >> 31) || (u & 0x7f800000u) == 0x7f800000u))
		rc = GW_ECORRUPT;
	else if (!rc && h.start % 5)
		rc = GW_ECORRUPT;
	s->rc = rc;
	s->count = h.count;
	s->start = h.start;
	s->plen = rc ? 0 : h.payload_len;
	s->chunk = (s->plen + GW_KT_THREADS - 1) / GW_KT_THREADS;
	s->pay = b + GW_WIRE_HDR_LEN + 4;
	s->m = gw_hd_bits_f32(u);
	s->nan = nan;
}

/* Every thread: the expanded length of its stretch of the payload. */
GW_HD void gw_kt_dec_expand(uint32_t tid, struct gw_kt_dshared *s)
{
	uint32_t lo = tid * s->chunk, hi = lo + s->chunk, sum = 0;
	hi = hi < s->plen ? hi : s->plen;
	for (uint32_t i = lo; i < hi; i++)
		sum += gw_kt_expand_len(s->pay[i]);
	s->part[tid] = sum;
}

/* Thread 0: each stretch's offset; checks 4 and 5. */
GW_HD void gw_kt_dec_verdict(struct gw_kt_dshared *s)
{
	uint64_t acc = 0;
	for (uint32_t t = 0; t < GW_KT_THREADS; t++) {
		uint32_t v = s->part[t];
		s->part[t] = (uint32_t)acc;
		acc += v;
	}
	if (s->rc)
		return;
	if (acc != ((uint64_t)s->count + 4) / 5) {
		s->rc = GW_ELENGTH;
		return;
	}
	uint32_t r = s->count % 5, last = s->pay[s->plen - 1];
	if (r && last < 243u) {
		uint32_t mod = 1;
		for (uint32_t i = 0; i < 5 - r; i++)
			mod *= 3;
		if (last % mod != (mod - 1) / 2)
			s->rc = GW_ECORRUPT;
	}
}

/* Every thread: its stretch's literals (or, with m NaN, a share of the
 * elements: m added to every one). */
GW_HD void gw_kt_dec_add(const struct gw_kf_dec *d, uint32_t tid, const struct gw_kt_dshared *s)
{
	if (s->rc)
		return;
	float *o = d->out + s->start;
	float m = s->m;
	if (s->nan) {
		for (uint32_t i = tid; i < s->count; i += GW_KT_THREADS)
			o[i] = o[i] + m;
		return;
	}
	uint32_t lo = tid * s->chunk, hi = lo + s->chunk;
	hi = hi < s->plen ? hi : s->plen;
	uint64_t x = s->part[tid];   /* expanded bytes before the stretch */
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t b = s->pay[i];
		if (b >= 243u) {
			x += b - 241u;
			continue;
		}
		uint32_t div = 81;
		for (uint32_t k = 0; k < 5; k++, div /= 3) {
			uint64_t e = 5 * x + k;
			uint32_t t = b / div % 3;
			if (e < s->count && t != 1u)
				o[e] = o[e] + (t == 2u ? m : -m);
		}
		x++;
	}
}

GW_HD void gw_kt_dec_done(const struct gw_kf_dec *d, uint32_t f, const struct gw_kt_dshared *s)
{
	d->rcs[f] = s->rc ? s->rc : (int32_t)s->count;
}

#endif
