/* DeepReduce index "bloom" (Kostopoulou et al., 2021, §4): the offsets
 * inserted into a Bloom filter of m bits with k hash functions. Querying
 * every offset of the span gives the positives P, a superset of the
 * inserted offsets; the policy says which positions the frame's values
 * belong to:
 *
 *	P0  every positive: lossless, the frame carries |P| values;
 *	P1  `count` positives drawn at random (seeded, so both ends agree);
 *	P2  `count` positives by conflict sets (the paper's Algorithm 1, made
 *	    deterministic): a bit that only one positive hashes to names a
 *	    true key, so such positives are taken first.
 *
 * Section: u8 policy, u8 k, u16 reserved (0), u32 seed, u32 m, then the
 * filter, ceil(m / 8) bytes, bit b at bit b % 8 of byte b / 8. Offset x
 * hashes with h = XXH3_64bits_withSeed(x as u32 LE, 4, seed), h1 = the low
 * 32 bits, h2 = the high 32 bits | 1, to the bits b_i = (h1 + i h2) mod m,
 * i < k (docs/wire-format.md §4.10: the exact P1 and P2 draws).
 *
 * The decoder queries the whole span, 64 offsets at a time: a query stops
 * at the first clear bit (about half of a filter's bits are clear, so a
 * negative costs about two probes), the bits come from the progression
 * b_{i+1} = b_i + h2 mod m, and the two remainders per offset are taken
 * by multiplication. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gw_cpu.h"

#include "../xxh3_u32.h"

#include "../codec_internal.h"
#include "dr.h"
#include "index_util.h"

#define HDR 12u
#define LN2 0.69314718055994530942
/* P2 keeps every (positive, bit) pair of the conflict sets, 8 bytes each:
 * |P| k above this many is refused by both ends (the encoder answers
 * GW_EBUDGET, so the frame shrinks), bounding the decoder's memory at
 * 256 MiB whatever the section says. Honest frames stay far below it:
 * about (n + fpr span) k pairs. */
#define P2_PAIRS_MAX (1u << 25)

struct bloom {
	uint64_t *w;         /* the filter, 64 bits a word, LSB first */
	uint32_t m;
	unsigned k;
	uint32_t seed;
	uint64_t minv;       /* fastmod's constant for m */
	uint64_t flip;       /* the hash's seed part (xxh3_u32.h) */
};

uint32_t dr_bloom_bits(uint32_t n, double fpr)
{
	if (!(fpr > 0.0))
		return UINT32_MAX;   /* no finite filter reaches it */
	double m = ceil(-(double)n * log(fpr) / (LN2 * LN2));
	if (!(m < (double)UINT32_MAX))
		return UINT32_MAX;
	return m < 8.0 ? 8u : (uint32_t)m;
}

unsigned dr_bloom_hashes(double fpr)
{
	if (!(fpr > 0.0))
		return DR_HASHES_MAX;
	double k = round(-log2(fpr));
	return k < 1.0 ? 1u : k > (double)DR_HASHES_MAX ? DR_HASHES_MAX : (unsigned)k;
}

static inline unsigned bit_at(const uint64_t *w, uint64_t b)
{
	return (unsigned)(w[b >> 6] >> (b & 63)) & 1u;
}

/* a mod m, exactly, for any 32-bit a and 2 <= m < 2^32, by a multiply
 * instead of a division (Lemire, Kaser & Kurz, "Faster remainder by
 * direct computation", 2019): the division's latency was most of a
 * query's. The 64 x 32-bit high product is taken in two 32 x 32-bit
 * halves rather than through __int128, so that a loop of them
 * vectorizes: floor(l m / 2^64) = (lh m + (ll m >> 32)) >> 32 for
 * l = lh 2^32 + ll, and the sum stays below 2^64. */
static inline uint32_t fastmod_mv(uint64_t minv, uint32_t m, uint32_t a)
{
	uint64_t l = minv * a;
	return (uint32_t)(((l >> 32) * m + (((l & 0xffffffffu) * m) >> 32)) >> 32);
}

static inline uint32_t fastmod(const struct bloom *f, uint32_t a)
{
	return fastmod_mv(f->minv, f->m, a);
}

static void bloom_init(struct bloom *f)
{
	f->minv = UINT64_MAX / f->m + 1;
	f->flip = gw_xxh3_u32_flip(f->seed);
}

static inline uint64_t hash(const struct bloom *f, uint32_t x)
{
	return gw_xxh3_u32(x, f->flip);
}

/* b_0 and the step of x's progression: (h1 + i h2) mod m is stepped as
 * b += h2 mod m, minus m when it reaches m (b, step < m keep it < 2m). */
static inline void first_bit(const struct bloom *f, uint32_t x, uint64_t *b,
			     uint64_t *step)
{
	uint64_t h = hash(f, x);
	*b = fastmod(f, (uint32_t)h);
	*step = fastmod(f, (uint32_t)(h >> 32) | 1u);
}

/* The first bit and the step of offsets x0 .. x0 + cnt - 1 (x = NULL)
 * or of x[0..cnt): b[t] = h1 mod m, step[t] = (h2 | 1) mod m. No branch
 * and no table, so the hashes and the remainders vectorize; the copy for
 * this CPU is picked at run time (GW_ISA_LOOP), every copy giving the
 * same integers. */
static inline void first_bits_body(uint64_t flip, uint64_t minv, uint32_t m,
				   const uint32_t *x, uint32_t x0, unsigned cnt,
				   uint32_t *restrict b, uint32_t *restrict step)
{
	for (unsigned t = 0; t < cnt; t++) {
		uint64_t h = gw_xxh3_u32(x ? x[t] : x0 + t, flip);
		b[t] = fastmod_mv(minv, m, (uint32_t)h);
		step[t] = fastmod_mv(minv, m, (uint32_t)(h >> 32) | 1u);
	}
}

GW_ISA_LOOP(first_bits,
	    (uint64_t flip, uint64_t minv, uint32_t m, const uint32_t *x, uint32_t x0,
	     unsigned cnt, uint32_t *restrict b, uint32_t *restrict step),
	    (flip, minv, m, x, x0, cnt, b, step))

/* Which of the offsets x0 .. x0 + cnt - 1 (cnt <= 64) are positive, as a
 * mask; `known` marks offsets known to be positive (the encoder's own
 * keys: a Bloom filter has no false negatives), which are not probed.
 * Level by level over the block rather than offset by offset: the first
 * probe of all 64 is computed without a branch, and only the survivors
 * (about half at each level) go on, kept as a list compacted without a
 * branch (the next slot is overwritten unless the bit is set), so the
 * early exit does not cost a mispredicted branch per offset. */
static uint64_t query_block(const struct bloom *f, uint32_t x0, unsigned cnt,
			    uint64_t known)
{
	uint32_t b[64], step[64];
	first_bits(f->flip, f->minv, f->m, NULL, x0, cnt, b, step);
	uint64_t live = 0;
	for (unsigned t = 0; t < cnt; t++)
		live |= (uint64_t)bit_at(f->w, b[t]) << t;
	live &= ~known;
	if (!live || f->k == 1)
		return live | known;
	uint32_t lb[64], ls[64];
	uint8_t lt[64];
	unsigned nl = 0;
	for (uint64_t l = live; l; l &= l - 1) {
		unsigned t = (unsigned)__builtin_ctzll(l);
		lt[nl] = (uint8_t)t;
		lb[nl] = b[t];
		ls[nl++] = step[t];
	}
	for (unsigned i = 1; i < f->k && nl; i++) {
		unsigned keep = 0;
		for (unsigned u = 0; u < nl; u++) {
			uint64_t j = (uint64_t)lb[u] + ls[u];
			j -= j >= f->m ? f->m : 0;
			lt[keep] = lt[u];
			lb[keep] = (uint32_t)j;
			ls[keep] = ls[u];
			keep += bit_at(f->w, j);
		}
		nl = keep;
	}
	live = known;
	for (unsigned u = 0; u < nl; u++)
		live |= 1ull << lt[u];
	return live;
}

/* x's distinct bits into out[]; returns how many. An arithmetic
 * progression mod m first repeats by returning to b_0, so the distinct
 * bits are those before that (all k of them if it does not return). */
static unsigned distinct_bits(const struct bloom *f, uint32_t x,
			      uint32_t out[DR_HASHES_MAX])
{
	uint64_t b, step;
	first_bit(f, x, &b, &step);
	uint64_t b0 = b;
	unsigned d = 0;
	out[d++] = (uint32_t)b;
	for (unsigned i = 1; i < f->k; i++) {
		b += step;
		if (b >= f->m)
			b -= f->m;
		if (b == b0)
			break;
		out[d++] = (uint32_t)b;
	}
	return d;
}

/* ---- encoder ---------------------------------------------------------- */

/* |P|: the positives of [0, span); the first cap of them, ascending, into
 * pos (NULL: not wanted) — the very positions decode_p0 yields, found by
 * the same queries. The n inserted offsets off[] are positive without a
 * probe: with a sparse frame's keys, an eighth of the span here, each of
 * them would have cost all k probes. */
static uint32_t count_positives(const struct bloom *f, const uint32_t *off, uint32_t n,
				uint32_t span, uint32_t *pos, uint32_t cap)
{
	uint32_t np = 0, i = 0;
	for (uint64_t x = 0; x < span; x += 64) {
		uint64_t known = 0;
		for (; i < n && off[i] < x + 64; i++)
			known |= 1ull << (off[i] - x);
		uint64_t l = query_block(f, (uint32_t)x, (unsigned)GW_MIN(64, span - x), known);
		uint32_t c = (uint32_t)__builtin_popcountll(l);
		if (pos && np + c <= cap)
			for (uint32_t o = np; l; l &= l - 1)
				pos[o++] = (uint32_t)x + (uint32_t)__builtin_ctzll(l);
		np += c;
	}
	return np;
}

static int bloom_encode(const uint32_t *off, uint32_t n, uint32_t span,
			const struct dr_index_cfg *cfg, uint8_t *out, size_t cap,
			uint32_t *nvals)
{
	int rc = dr_index_check_args(off, n, span);
	if (rc < 0)
		return rc;
	if (!cfg || !(cfg->fpr > 0.0 && cfg->fpr < 1.0) ||
	    cfg->hashes > DR_HASHES_MAX || cfg->policy >= DR_POLICY_COUNT_)
		return GW_ERR(GW_EINVAL);
	uint32_t m = dr_bloom_bits(n, cfg->fpr);
	unsigned k = cfg->hashes ? cfg->hashes : dr_bloom_hashes(cfg->fpr);
	uint64_t nbytes = ((uint64_t)m + 7) / 8;
	if (HDR + nbytes > cap)
		return GW_ERR(GW_EBUDGET);
	if ((rc = dr_index_check_input(off, n, span)) < 0)
		return rc;
	/* Built in words, then written out byte by byte: the wire order is
	 * fixed whatever the host's. */
	struct bloom f = {.m = m, .k = k, .seed = cfg->seed};
	bloom_init(&f);
	f.w = calloc(((size_t)m + 63) / 64, sizeof(uint64_t));
	if (!f.w)
		return GW_ERR(GW_ENOMEM);
	/* 64 keys at a time, hash by hash: the hashes vectorize, and the k
	 * bits of one key are not a chain of dependent steps. */
	for (uint32_t i = 0; i < n; i += 64) {
		uint32_t b[64], step[64];
		unsigned cnt = (unsigned)GW_MIN(64, n - i);
		first_bits(f.flip, f.minv, m, off + i, 0, cnt, b, step);
		for (unsigned j = 0; j < k; j++)
			for (unsigned t = 0; t < cnt; t++) {
				f.w[b[t] >> 6] |= 1ull << (b[t] & 63);
				uint64_t nb = (uint64_t)b[t] + step[t];
				b[t] = (uint32_t)(nb - (nb >= m ? m : 0));
			}
	}
	/* P0's positives are the receiver's positions: handed back when the
	 * caller has room for them all. */
	bool give = cfg->policy == DR_P0 && cfg->pos && cfg->pos_got;
	uint32_t np = cfg->policy == DR_P1 ? n
		      : count_positives(&f, off, n, span, give ? cfg->pos : NULL,
					give ? cfg->pos_cap : 0);
	if (give)
		*cfg->pos_got = np <= cfg->pos_cap;
	if (cfg->policy == DR_P2 && (uint64_t)np * k > P2_PAIRS_MAX) {
		free(f.w);
		return GW_ERR(GW_EBUDGET);   /* the decoder would refuse it */
	}
	out[0] = (uint8_t)cfg->policy;
	out[1] = (uint8_t)k;
	gw_st16(out + 2, 0);
	gw_st32(out + 4, cfg->seed);
	gw_st32(out + 8, m);
	for (uint64_t i = 0; i < nbytes; i++)
		out[HDR + i] = (uint8_t)(f.w[i / 8] >> (8 * (i % 8)));
	free(f.w);
	*nvals = cfg->policy == DR_P0 ? np : n;
	return (int)(HDR + nbytes);
}

/* ---- decoder ---------------------------------------------------------- */

/* Checks the section's header and filter and loads the filter into f->w
 * (caller frees). */
static int parse(const uint8_t *in, size_t len, struct bloom *f, unsigned *policy)
{
	if (len < HDR)
		return GW_ERR(GW_ELENGTH);
	*policy = in[0];
	f->k = in[1];
	f->seed = gw_ld32(in + 4);
	f->m = gw_ld32(in + 8);
	if (*policy >= DR_POLICY_COUNT_ || f->k == 0 || f->k > DR_HASHES_MAX ||
	    gw_ld16(in + 2) || f->m < 8)
		return GW_ERR(GW_ECORRUPT);
	uint64_t nbytes = ((uint64_t)f->m + 7) / 8;
	if (len - HDR != nbytes)
		return GW_ERR(GW_ELENGTH);
	const uint8_t *p = in + HDR;
	if (f->m % 8 && p[nbytes - 1] >> (f->m % 8))
		return GW_ERR(GW_ECORRUPT);   /* bits past m must be 0 */
	bloom_init(f);
	size_t nw = ((size_t)f->m + 63) / 64;
	f->w = calloc(nw, sizeof(uint64_t));
	if (!f->w)
		return GW_ERR(GW_ENOMEM);
	for (size_t i = 0; i < nbytes; i++)
		f->w[i / 8] |= (uint64_t)p[i] << (8 * (i % 8));
	return GW_OK;
}

/* P0: every positive, written straight into pos; more than count is
 * refused as soon as it shows. */
static int decode_p0(const struct bloom *f, uint32_t span, uint32_t count,
		     uint32_t *pos)
{
	uint32_t np = 0;
	for (uint64_t x = 0; x < span; x += 64) {
		uint64_t l = query_block(f, (uint32_t)x, (unsigned)GW_MIN(64, span - x), 0);
		for (; l; l &= l - 1) {
			if (np == count)
				return GW_ERR(GW_ECORRUPT);
			pos[np++] = (uint32_t)x + (uint32_t)__builtin_ctzll(l);
		}
	}
	return np == count ? GW_OK : GW_ERR(GW_ECORRUPT);
}

/* P, ascending, into a fresh array (caller frees *out). */
static int positives(const struct bloom *f, uint32_t span, uint32_t **out,
		     uint32_t *np)
{
	size_t cap = GW_MIN(span, 4096u) + 64, n = 0;
	uint32_t *p = malloc(cap * sizeof(*p));
	if (!p)
		return GW_ERR(GW_ENOMEM);
	for (uint64_t x = 0; x < span; x += 64) {
		if (cap - n < 64) {   /* room for a whole block */
			cap = GW_MIN((size_t)span + 64, 2 * cap);
			uint32_t *q = realloc(p, cap * sizeof(*p));
			if (!q) {
				free(p);
				return GW_ERR(GW_ENOMEM);
			}
			p = q;
		}
		uint64_t l = query_block(f, (uint32_t)x, (unsigned)GW_MIN(64, span - x), 0);
		for (; l; l &= l - 1)
			p[n++] = (uint32_t)x + (uint32_t)__builtin_ctzll(l);
	}
	*out = p;
	*np = (uint32_t)n;
	return GW_OK;
}

/* P[i] for every i marked in the np-bit set `chosen`, ascending. */
static void emit_marked(const uint64_t *chosen, const uint32_t *P, uint32_t np,
			uint32_t *pos)
{
	uint32_t o = 0;
	for (uint32_t w = 0; w < (np + 63) / 64; w++)
		for (uint64_t bits = chosen[w]; bits; bits &= bits - 1)
			pos[o++] = P[64 * w + (uint32_t)__builtin_ctzll(bits)];
}

/* P1: a partial Fisher-Yates shuffle of P picks count of them. */
static int decode_p1(const struct bloom *f, uint32_t *P, uint32_t np,
		     uint32_t count, uint32_t *pos)
{
	/* Shuffled by index, so the chosen ones are marked by index and come
	 * out ascending without a sort. */
	uint32_t *idx = malloc((size_t)np * sizeof(*idx) + 1);
	uint64_t *chosen = calloc(((size_t)np + 63) / 64 + 1, sizeof(uint64_t));
	if (!idx || !chosen) {
		free(idx);
		free(chosen);
		return GW_ERR(GW_ENOMEM);
	}
	for (uint32_t i = 0; i < np; i++)
		idx[i] = i;
	uint64_t s = f->seed;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t j = i + dr_rng_below(&s, np - i);
		uint32_t t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
		chosen[idx[i] / 64] |= 1ull << (idx[i] % 64);
	}
	emit_marked(chosen, P, np, pos);
	free(idx);
	free(chosen);
	return GW_OK;
}

/* ---- P2: conflict sets ------------------------------------------------ */

/* Conflict set C_j of a set bit j holds the positives with j among their
 * distinct bits. Sets are numbered by rank (j's index among the set bits)
 * and stored one after the other, members by ascending index into P; a
 * Fenwick tree over each set's slots counts the members not yet chosen,
 * so the draw "member idx of those left" costs O(log |C_j|) and a pass
 * never rescans what earlier passes removed. */
struct p2 {
	const struct bloom *f;
	const uint32_t *P;
	uint32_t *rank;      /* set bits before each filter word */
	uint32_t *start;     /* nsets + 1: set r is item[start[r]..start[r+1]) */
	uint32_t *item;      /* members, as indices into P */
	uint32_t *fen;       /* each set's Fenwick tree, 1 = not chosen */
	uint32_t *rem;       /* members not chosen, per set */
	uint32_t *ord;       /* nonempty sets, by size then bit */
	uint64_t *chosen;    /* S, by index into P */
	uint32_t nsets;
};

static inline uint32_t set_of(const struct p2 *c, uint32_t j)
{
	uint64_t below = c->f->w[j >> 6] & ((1ull << (j & 63)) - 1);
	return c->rank[j >> 6] + (uint32_t)__builtin_popcountll(below);
}

/* Slot (0-based) of the (idx + 1)-th member left in a set of L slots. */
static uint32_t fen_select(const uint32_t *t, uint32_t L, uint32_t idx)
{
	uint32_t at = 0, step = 1;
	while (step <= L / 2)
		step <<= 1;
	for (; step; step >>= 1)
		if (at + step <= L && t[at + step - 1] <= idx) {
			at += step;
			idx -= t[at - 1];
		}
	return at;
}

/* Puts P[p] into S and takes it out of every set it is in. */
static void choose(struct p2 *c, uint32_t p)
{
	uint32_t bits[DR_HASHES_MAX];
	unsigned d = distinct_bits(c->f, c->P[p], bits);
	c->chosen[p / 64] |= 1ull << (p % 64);
	for (unsigned i = 0; i < d; i++) {
		uint32_t r = set_of(c, bits[i]);
		const uint32_t *it = c->item + c->start[r];
		uint32_t lo = 0, hi = c->start[r + 1] - c->start[r];
		while (lo < hi) {   /* members ascend: find p */
			uint32_t mid = lo + (hi - lo) / 2;
			if (it[mid] < p)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t L = c->start[r + 1] - c->start[r];
		for (uint32_t x = lo + 1; x <= L; x += x & -x)
			c->fen[c->start[r] + x - 1]--;
		c->rem[r]--;
	}
}

/* Builds the sets: counts members per set, then places them (a counting
 * sort by set, stable, so members ascend), then orders the nonempty sets
 * by size, ties by bit (another stable counting sort). Returns how many
 * sets are nonempty, or GW_ENOMEM. */
static int64_t build_sets(struct p2 *c, uint32_t np)
{
	const struct bloom *f = c->f;
	size_t nw = ((size_t)f->m + 63) / 64;
	c->rank = malloc((nw + 1) * sizeof(uint32_t));
	if (!c->rank)
		return GW_ERR(GW_ENOMEM);
	uint32_t cum = 0;
	for (size_t w = 0; w < nw; w++) {
		c->rank[w] = cum;
		cum += (uint32_t)__builtin_popcountll(f->w[w]);
	}
	c->nsets = cum;
	c->start = calloc((size_t)cum + 1, sizeof(uint32_t));
	c->rem = malloc(((size_t)cum + 1) * sizeof(uint32_t));
	c->ord = malloc(((size_t)cum + 1) * sizeof(uint32_t));
	if (!c->start || !c->rem || !c->ord)
		return GW_ERR(GW_ENOMEM);
	uint32_t bits[DR_HASHES_MAX];
	for (uint32_t p = 0; p < np; p++) {
		unsigned d = distinct_bits(f, c->P[p], bits);
		for (unsigned i = 0; i < d; i++)
			c->start[set_of(c, bits[i]) + 1]++;
	}
	for (uint32_t r = 0; r < cum; r++)
		c->start[r + 1] += c->start[r];
	size_t npairs = c->start[cum];
	c->item = malloc((npairs + 1) * sizeof(uint32_t));
	c->fen = malloc((npairs + 1) * sizeof(uint32_t));
	if (!c->item || !c->fen)
		return GW_ERR(GW_ENOMEM);
	memcpy(c->rem, c->start, (size_t)cum * sizeof(uint32_t));   /* cursors */
	for (uint32_t p = 0; p < np; p++) {
		unsigned d = distinct_bits(f, c->P[p], bits);
		for (unsigned i = 0; i < d; i++)
			c->item[c->rem[set_of(c, bits[i])]++] = p;
	}
	/* Every slot starts at 1: node i of a Fenwick tree sums lowbit(i). */
	uint32_t maxsize = 0;
	for (uint32_t r = 0; r < cum; r++) {
		uint32_t L = c->start[r + 1] - c->start[r];
		for (uint32_t i = 1; i <= L; i++)
			c->fen[c->start[r] + i - 1] = i & -i;
		c->rem[r] = L;
		maxsize = GW_MAX(maxsize, L);
	}
	uint32_t *by = calloc((size_t)maxsize + 2, sizeof(uint32_t));
	if (!by)
		return GW_ERR(GW_ENOMEM);
	for (uint32_t r = 0; r < cum; r++)
		by[c->rem[r] + 1]++;
	for (uint32_t s = 0; s <= maxsize; s++)
		by[s + 1] += by[s];
	uint32_t empty = by[1];   /* sets of size 0 sort first: skip them */
	for (uint32_t r = 0; r < cum; r++)
		if (c->rem[r])
			c->ord[by[c->rem[r]]++ - empty] = r;
	free(by);
	return (int64_t)cum - empty;
}

/* Algorithm 1, deterministic: passes over the sets in order until count
 * are chosen. A set of one member takes it without a draw (it can only be
 * a true key); a larger set draws one of the members still unchosen with
 * dr_rng_below(&s, left), the one of rank idx by index into P; a set with
 * none left is skipped, and dropped from later passes. */
static int decode_p2(const struct bloom *f, const uint32_t *P, uint32_t np,
		     uint32_t count, uint32_t *pos)
{
	struct p2 c = {.f = f, .P = P};
	c.chosen = calloc(((size_t)np + 63) / 64 + 1, sizeof(uint64_t));
	int64_t na = c.chosen ? build_sets(&c, np) : GW_ERR(GW_ENOMEM);
	int rc = na < 0 ? (int)na : GW_OK;
	uint64_t s = f->seed;
	uint32_t got = 0;
	while (rc == GW_OK && got < count) {
		uint32_t before = got, keep = 0;
		for (uint32_t a = 0; a < (uint32_t)na && got < count; a++) {
			uint32_t r = c.ord[a];
			if (!c.rem[r])
				continue;
			uint32_t L = c.start[r + 1] - c.start[r], slot = 0;
			if (L > 1)
				slot = fen_select(c.fen + c.start[r], L,
						  dr_rng_below(&s, c.rem[r]));
			choose(&c, c.item[c.start[r] + slot]);
			got++;
			if (c.rem[r])
				c.ord[keep++] = r;
		}
		na = keep;
		/* Every positive is in a set, so a pass chooses one at least
		 * while count <= |P|; kept as a guard against an endless loop. */
		if (got == before)
			rc = GW_ERR(GW_ECORRUPT);
	}
	if (rc == GW_OK)
		emit_marked(c.chosen, P, np, pos);
	free(c.rank);
	free(c.start);
	free(c.item);
	free(c.fen);
	free(c.rem);
	free(c.ord);
	free(c.chosen);
	return rc;
}

static int bloom_decode(const uint8_t *in, size_t len, uint32_t span,
			uint32_t count, uint32_t *pos)
{
	if (span > DR_SPAN_MAX || count > span)
		return GW_ERR(GW_ECORRUPT);
	struct bloom f;
	unsigned policy;
	int rc = parse(in, len, &f, &policy);
	if (rc < 0)
		return rc;
	if (policy == DR_P0) {
		rc = decode_p0(&f, span, count, pos);
		free(f.w);
		return rc;
	}
	uint32_t *P = NULL, np = 0;
	if ((rc = positives(&f, span, &P, &np)) < 0)
		goto out;
	if (count > np) {
		rc = GW_ERR(GW_ECORRUPT);   /* fewer positives than values */
		goto out;
	}
	if (policy == DR_P1)
		rc = decode_p1(&f, P, np, count, pos);
	else if ((uint64_t)np * f.k > P2_PAIRS_MAX)
		rc = GW_ERR(GW_ECORRUPT);
	else
		rc = decode_p2(&f, P, np, count, pos);
out:
	free(P);
	free(f.w);
	return rc;
}

const struct dr_index_ops dr_index_bloom = {
	.name = "bloom",
	.encode = bloom_encode,
	.decode = bloom_decode,
};
