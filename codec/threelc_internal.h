/* 3LC kernels (codec/threelc*.c): the scalar reference in threelc.c and
 * the AVX2 / AVX-512 versions, which must produce the same bytes and the
 * same float bits. Private to the codec and its tests. */
#ifndef GW_THREELC_INTERNAL_H
#define GW_THREELC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TLC_ZERO_BYTE 121u    /* five zero trits: 1*81+1*27+1*9+1*3+1 */
#define TLC_MAX_LITERAL 242u  /* five trits of 2 */
#define TLC_RUN_BASE 243u     /* 243 + (k - 2): a run of k zero bytes */
#define TLC_RUN_MAX 14u       /* longest run one byte holds (255) */

/* Bytes a ZRE byte b expands to: 1 for a literal, k for a run. */
static inline unsigned tlc_expand_len(unsigned b)
{
	return b < TLC_RUN_BASE ? 1u : b - (TLC_RUN_BASE - 2u);
}

/* Bits of |x| for the non-finite test: every finite float is below
 * 0x7f800000 (Inf) and every NaN above it, and integer order equals float
 * order for non-negative floats. */
#define TLC_NONFINITE_BITS 0x7f800000u

/* The maximum of mx and the bits of |c[k]| for i <= k < n, c = g + e (c =
 * g if e is NULL); with fold, c is also stored into e. The scalar kernels'
 * pass and the SIMD kernels' tails. */
static inline __attribute__((always_inline)) uint32_t
tlc_maxabs_tail(const float *g, float *e, size_t i, size_t n, uint32_t mx, int fold)
{
	if (fold && !e)
		__builtin_unreachable();   /* folding has an error buffer */
	for (; i < n; i++) {
		float c = e ? g[i] + e[i] : g[i];
		if (fold)
			e[i] = c;
		uint32_t u;
		memcpy(&u, &c, 4);
		u &= 0x7fffffffu;
		mx = u > mx ? u : mx;
	}
	return mx;
}

struct tlc_kernels {
	const char *name;
	/* Pass 1: the maximum over i < n of the bits of |c[i]|, where
	 * c = g + e (c = g if e is NULL). */
	uint32_t (*maxabs)(const float *g, const float *e, size_t n);
	/* Pass 2, fused: c as above; trit t = 2 if 2c > m, 0 if 2c < -m,
	 * else 1, packed five per byte: out[j] = t0*81 + t1*27 + t2*9 +
	 * t3*3 + t4 for elements 5j..5j+4, j < ceil(n/5), pad trits (past n)
	 * being 1; with e: e[i] <- c - m*(t-1) (exact; c itself for t = 1).
	 * m is finite and >= max |c|. */
	void (*quantize)(const float *g, float *e, size_t n, float m, uint8_t *out);
	/* Optional (NULL where the ISA has none): the same with error
	 * feedback, as one full pass and a light one. fold: e[i] <- c =
	 * g[i] + e[i], returns what maxabs returns, and sets bit b of
	 * cand[j] for element 16j + b (every j < 20 * (n / 320)) when
	 * 2|c| > s_lo * (a lower bound of max |c|): the caller picks s_lo so
	 * that this is at most m (or sets every flag itself), so an element
	 * left out has trit 1 and its new error is c, already in e.
	 * quantize_folded: pass 2 over e = c, looking only at flagged groups;
	 * the same bytes and errors as quantize. cand is the start of
	 * scratch, which holds TLC_SCRATCH_LEN(n) bytes. */
	uint32_t (*fold)(const float *g, float *e, size_t n, uint16_t *cand,
			 float s_lo);
	void (*quantize_folded)(float *e, size_t n, float m, uint8_t *out,
				uint8_t *scratch);
	/* Sum of tlc_expand_len() over p[0..n). */
	uint64_t (*expanded)(const uint8_t *p, size_t n);
	/* Adds the decoded values of a validated ZRE stream p[0..n) that
	 * expands to ceil(count/5) bytes into out[0..count): +s for trit 2,
	 * -s for trit 0; elements with trit 1 are not touched. */
	void (*decode)(const uint8_t *p, size_t n, uint32_t count, float s,
		       float *out);
	/* tlc_zre with this ISA's scans. */
	size_t (*zre)(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
		      size_t *used);
};

/* The table of an ISA level that has every kernel, each named
 * <kernel>_<isa>: one definition, so that no level can leave one out. */
#define TLC_KERNELS_DEFINE(isa)                                     \
	const struct tlc_kernels tlc_kernels_##isa = {              \
		.name = #isa,                                       \
		.maxabs = maxabs_##isa,                             \
		.fold = fold_##isa,                                 \
		.quantize_folded = quantize_folded_##isa,           \
		.quantize = quantize_##isa,                         \
		.expanded = expanded_##isa,                         \
		.decode = decode_##isa,                             \
		.zre = zre_##isa,                                   \
	}

extern const struct tlc_kernels tlc_kernels_scalar;
#if defined(__x86_64__) || defined(__i386__)
extern const struct tlc_kernels tlc_kernels_avx2;
extern const struct tlc_kernels tlc_kernels_avx512;
#endif

/* Scratch of the folded path: flags, trit masks and a list of groups,
 * (n / 320) * 20 of each, with room for whole-vector accesses. */
#define TLC_SCRATCH_GROUPS(n) ((n) / 320 * 20 + 64)
#define TLC_SCRATCH_LEN(n) (TLC_SCRATCH_GROUPS(n) * (3 * sizeof(uint16_t) + sizeof(uint32_t)))

/* Kernels for an ISA level (gw_cpu.h), falling back to lower levels this
 * build lacks; tlc_kernels() gives the ones gw_cpu_isa() selects. */
const struct tlc_kernels *tlc_kernels_for(int isa);
const struct tlc_kernels *tlc_kernels(void);

/* Trits of every byte value below 243, first (most significant) first. */
extern const uint8_t tlc_trits[243][5];

/* X-macros over the byte values: L(a, b, c, d, e) for each of 0..242 in
 * order (its trits), then x for each of the 13 run bytes 243..255. */
#define TLC_L5(L, a, b, c, d) L(a, b, c, d, 0), L(a, b, c, d, 1), L(a, b, c, d, 2)
#define TLC_L4(L, a, b, c) TLC_L5(L, a, b, c, 0), TLC_L5(L, a, b, c, 1), TLC_L5(L, a, b, c, 2)
#define TLC_L3(L, a, b) TLC_L4(L, a, b, 0), TLC_L4(L, a, b, 1), TLC_L4(L, a, b, 2)
#define TLC_L2(L, a) TLC_L3(L, a, 0), TLC_L3(L, a, 1), TLC_L3(L, a, 2)
#define TLC_ALL_BYTES(L) TLC_L2(L, 0), TLC_L2(L, 1), TLC_L2(L, 2)
#define TLC_RUN_BYTES(x) x, x, x, x, x, x, x, x, x, x, x, x, x

/* The trits of byte b in bytes 0-4 (all 1 for run bytes), 0 in 5-7. */
extern const uint64_t tlc_byte_trits[256];

/* Scalar pieces the SIMD kernels reuse for their tails. */
void tlc_quantize_scalar(const float *g, float *e, size_t n, float m,
			 uint8_t *out);
/* quantize_folded's scalar equivalent: c is e[i] (already g + e). */
void tlc_quantize_folded_scalar(float *e, size_t n, float m, uint8_t *out);
/* Decodes the plain (already run-expanded) bytes p[0..nb) into
 * out[0..count), count <= 5 * nb. */
void tlc_decode_plain_scalar(const uint8_t *p, size_t nb, uint64_t count,
			     float s, float *out);

/* Zero-run encoding of src[0..n) into dst[0..cap), greedy: every output
 * byte covers as many input bytes as it can. Returns the bytes written;
 * *used gets the input bytes consumed (all n unless dst filled up). May
 * read TLC_ZRE_OVERREAD bytes past src + n. */
size_t tlc_zre(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
	       size_t *used);

/* Bytes the zero-run encoder may read past src + n (the packed stream is
 * allocated with them); their values do not matter. */
#define TLC_ZRE_OVERREAD 64

/* The careful greedy loop: byte by byte at the budget's end. */
static inline size_t tlc_zre_tail(const uint8_t *src, size_t n, uint8_t *dst,
				  size_t cap, size_t *used, size_t i, size_t o)
{
	while (i < n && o < cap) {
		if (src[i] != TLC_ZERO_BYTE) {
			dst[o++] = src[i++];
			continue;
		}
		size_t k = 1;
		while (k < TLC_RUN_MAX && i + k < n && src[i + k] == TLC_ZERO_BYTE)
			k++;
		dst[o++] = (uint8_t)(k == 1 ? TLC_ZERO_BYTE : TLC_RUN_BASE + k - 2);
		i += k;
	}
	*used = i;
	return o;
}

/* A run of len zeros, len < 144: full[len] bytes 255, then last[len]. */
struct tlc_zre_table {
	uint8_t full[144], last[144];
};
extern const struct tlc_zre_table tlc_zre_runs;

/* The body of tlc_zre, inlined into each ISA's version: zmask(p) has bit j
 * set when p[j] == 121, for j < 64.
 *
 * Greedy zero-run encoding emits one byte per literal, a 255 for every
 * 14th zero byte of a run (counted from its start) and, at the run's end,
 * the code of what is left (1-13 zeros). The stream is read 64 bytes at a
 * time: windows of only zeros or only literals are a few stores; in other
 * windows the runs are walked as bits of the masks of run starts and ends,
 * copying the literals between them with fixed-size stores, so no branch
 * depends on where runs begin and end (a stretch of more than 32 literals
 * takes a library copy). While the output has TLC_ZRE_ROOM bytes of room a
 * window never overflows it (fixed stores included); the last bytes go
 * through tlc_zre_tail. */
#define TLC_ZRE_ROOM 128

/* The k literals between two runs: one fixed 32-byte store when k <= 32
 * (the room above allows it), else a library copy. */
static inline __attribute__((always_inline)) void
tlc_zre_literals(uint8_t *dst, const uint8_t *src, size_t k)
{
	if (k <= 32)
		memcpy(dst, src, 32);
	else
		memcpy(dst, src, k);
}

static inline __attribute__((always_inline)) size_t
tlc_zre_with(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
	     size_t *used, uint64_t (*zmask)(const uint8_t *))
{
	/* Code of a run end with len zeros left (len 14: a full piece). */
	static const uint8_t code[TLC_RUN_MAX + 1] = {
		0, TLC_ZERO_BYTE, 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255};
	static const uint8_t ones[16] = {255, 255, 255, 255, 255, 255, 255, 255,
					 255, 255, 255, 255, 255, 255, 255, 255};
	size_t i = 0, o = 0;
	size_t pend = 0;   /* zeros of a run going on into this window, < 78 */
	while (i < n && cap - o >= TLC_ZRE_ROOM) {
		size_t wlen = n - i < 64 ? n - i : 64;
		uint64_t valid = wlen == 64 ? ~(uint64_t)0 : ((uint64_t)1 << wlen) - 1;
		uint64_t z = zmask(src + i) & valid;
		uint64_t lit = ~z & valid;
		if (!lit) {
			/* Only zeros: they join the run, and so do the next
			 * windows of only zeros, as far as the room allows
			 * (14 zeros per output byte); full pieces go out. */
			size_t lim = (cap - o - 16) * TLC_RUN_MAX - pend;
			size_t k = wlen;
			while (k + 64 <= lim && i + k + 64 <= n && zmask(src + i + k) == ~(uint64_t)0)
				k += 64;
			pend += k;
			memset(dst + o, 255, pend / TLC_RUN_MAX);
			o += pend / TLC_RUN_MAX;
			pend %= TLC_RUN_MAX;
			i += k;
			continue;
		}
		if (pend && (lit & 1)) {
			/* The run from the last window ended with it. */
			memcpy(dst + o, ones, 8);   /* (pend - 1) / 14 <= 5 */
			o += (pend - 1) / TLC_RUN_MAX;
			dst[o++] = code[(pend - 1) % TLC_RUN_MAX + 1];
			pend = 0;
		}
		if (!z) {
			/* Only literals: copy. */
			memcpy(dst + o, src + i, 64);   /* o + 64 <= cap */
			o += wlen;
			i += wlen;
			continue;
		}
		/* Runs in the window: starts (a zero after a literal, or at 0)
		 * and ends (a zero before a literal; the window's last byte only
		 * if the input ends there, else the run goes on). Literals
		 * between runs are copied 32 bytes at a time. */
		uint64_t starts = z & ~(z << 1);
		uint64_t ends = z & ~(z >> 1);
		if (i + wlen < n)
			ends &= ~((uint64_t)1 << 63);
		size_t lp = 0;   /* next literal to copy, window-relative */
		for (; ends; ends &= ends - 1, starts &= starts - 1) {
			size_t t = (size_t)__builtin_ctzll(ends);
			size_t st = (size_t)__builtin_ctzll(starts);
			size_t k = st - lp;
			tlc_zre_literals(dst + o, src + i + lp, k);
			o += k;
			size_t len = t - st + 1 + (st ? 0 : pend);   /* <= 141 */
			memcpy(dst + o, ones, 16);   /* 255s first: at most 10 */
			o += tlc_zre_runs.full[len];
			dst[o++] = tlc_zre_runs.last[len];
			lp = t + 1;
		}
		/* Literals up to the run going on into the next window, if any. */
		size_t rs = starts ? (size_t)__builtin_ctzll(starts) : wlen;
		size_t k = rs - lp;
		tlc_zre_literals(dst + o, src + i + lp, k);
		o += k;
		pend = wlen - rs;   /* rs > 0: the window has a literal */
		i += wlen;
	}
	if (i >= n && pend) {
		dst[o++] = code[pend];   /* pend < 14, room left */
		pend = 0;
	}
	return tlc_zre_tail(src, n, dst, cap, used, i - pend, o);
}

#endif /* GW_THREELC_INTERNAL_H */
