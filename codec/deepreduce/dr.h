/* DeepReduce building blocks (Kostopoulou et al., 2021): a sparse tensor is
 * split into an index section and a value section, each compressed by its
 * own codec, any index codec with any value codec. codec/deepreduce.c frames
 * them: one frame covers the key range [start, start + span) of the header,
 * carries `count` values, and holds
 *
 *	params:  u8 index id, u8 value id, u16 reserved (0), u32 index_len
 *	payload: index section (index_len bytes), then the value section
 *
 * Each section is self-describing: everything its decoder needs besides
 * (span, count) from the frame header is inside the section, so a section
 * decodes on its own (docs/wire-format.md §4.10).
 *
 * Positions are offsets relative to the frame's start, in [0, span), with
 * span <= DR_SPAN_MAX. The index decoder yields the `count` positions that
 * carry values, ascending; value i belongs to position i. */
#ifndef GW_DR_H
#define GW_DR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gw/common.h>

#include "gw_rand.h"

/* Wire ids of the index and value codecs (params bytes 0 and 1). */
enum dr_index_id {
	DR_INDEX_RAW = 0,    /* u32 offsets, "bypass" */
	DR_INDEX_BLOOM = 1,  /* Bloom filter; policies P0, P1, P2 */
	DR_INDEX_RLE = 2,    /* bitmap run-length, Elias-gamma run lengths */
	DR_INDEX_DELTA = 3,  /* SketchML's delta-binary (codec/delta_binary.h) */
	DR_INDEX_COUNT_
};

enum dr_policy {
	DR_P0 = 0,   /* values for every positive: lossless */
	DR_P1 = 1,   /* values for `count` positives drawn at random */
	DR_P2 = 2,   /* values for `count` positives by conflict sets */
	DR_POLICY_COUNT_
};

enum dr_value_id {
	DR_VALUE_F32 = 0,      /* float32, bit-exact */
	DR_VALUE_DEFLATE = 1,  /* zlib deflate of the float32 bytes, lossless */
	DR_VALUE_QSGD = 2,     /* QSGD: s levels per bucket, stochastic rounding */
	DR_VALUE_POLY = 3,     /* piecewise polynomial fit of the sorted values */
	DR_VALUE_DEXP = 4,     /* double-exponential fit a e^{bx} + c e^{dx} */
	DR_VALUE_COUNT_
};

/* Largest span of a DeepReduce frame: bounds the decoder's work (a Bloom
 * filter is queried at every position of the span) and its memory. */
#define DR_SPAN_MAX (1u << 24)
/* Bloom filter hash functions, at most. */
#define DR_HASHES_MAX 32u

/* What an index encoder is told; the decoder reads all of it back from
 * the section. */
struct dr_index_cfg {
	double fpr;          /* bloom: target false-positive rate in (0, 1) */
	unsigned hashes;     /* bloom: k in 1..DR_HASHES_MAX, 0 = from fpr */
	unsigned policy;     /* bloom: enum dr_policy */
	uint32_t seed;       /* bloom: hash seed and the P1/P2 draw */
	/* Optional, encoder side: room for pos_cap positions. An index codec
	 * that finds, while encoding, the positions its decoder will yield
	 * (bloom P0 queries the whole span to count them, with the decoder's
	 * own code) writes them there when they fit and sets *pos_got, so
	 * that the caller need not decode the section it just wrote. Left
	 * NULL, or *pos_got false: the caller decodes. */
	uint32_t *pos;
	uint32_t pos_cap;
	bool *pos_got;
};

struct dr_index_ops {
	const char *name;    /* "raw", "bloom", "rle", "delta" */
	/* Encodes the n ascending offsets off[0..n) (each < span, span <=
	 * DR_SPAN_MAX, n >= 1) into out[0..cap), never writing past cap.
	 * *nvals gets how many values the frame must carry: n for the
	 * lossless codecs and for P1/P2, |positives| for P0. Returns the
	 * section's bytes, GW_EBUDGET if it does not fit, GW_ENOMEM. */
	int (*encode)(const uint32_t *off, uint32_t n, uint32_t span,
		      const struct dr_index_cfg *cfg, uint8_t *out, size_t cap,
		      uint32_t *nvals);
	/* Decodes the section in[0..len) of a frame with span and count:
	 * writes the count ascending positions that carry values into
	 * pos[0..count). The section must yield exactly count positions
	 * (P1/P2: count <= |positives|). Validates everything, reads nothing
	 * outside in[0..len), writes nothing outside pos[0..count), never
	 * aborts; work and memory are O(span). Returns 0, GW_ECORRUPT,
	 * GW_ELENGTH or GW_ENOMEM. */
	int (*decode)(const uint8_t *in, size_t len, uint32_t span,
		      uint32_t count, uint32_t *pos);
};

struct dr_value_cfg {
	unsigned degree;     /* poly: polynomial degree, 0..DR_DEGREE_MAX */
	unsigned pieces;     /* poly: segments, 0 = the paper's ceil(2 sqrt(M)) */
	unsigned levels;     /* qsgd: s, 1..DR_LEVELS_MAX */
	unsigned bucket;     /* qsgd: values per bucket (own norm), >= 1 */
	int zlevel;          /* deflate: zlib level 1..9 */
	uint64_t seed;       /* qsgd: stochastic rounding stream of this
			      * frame (already mixed with tensor and start) */
};

#define DR_DEGREE_MAX 8u
#define DR_LEVELS_MAX 32767u

struct dr_value_ops {
	const char *name;    /* "f32", "deflate", "qsgd", "poly", "dexp" */
	/* Encodes v[0..n) (n >= 1, in position order) into out[0..cap),
	 * never writing past cap. Returns the section's bytes, GW_EBUDGET,
	 * GW_ENOMEM, or GW_EINVAL for non-finite values where the codec
	 * cannot represent them (qsgd, poly, dexp; f32 and deflate carry them
	 * bit-exact). */
	int (*encode)(const float *v, uint32_t n, const struct dr_value_cfg *cfg,
		      uint8_t *out, size_t cap);
	/* Decodes the section in[0..len) into v[0..n) (overwrites). Same
	 * guarantees as the index decoders. Returns 0 or GW_E*. */
	int (*decode)(const uint8_t *in, size_t len, uint32_t n, float *v);
	/* Optional: the error bound the section states — the largest
	 * |decoded - encoded| over its values (poly, dexp: measured by the
	 * encoder with the decoder's own arithmetic; qsgd: the largest
	 * quantization step). Lossless codecs leave it NULL (bound 0).
	 * Returns 0 or GW_E* like decode. */
	int (*bound)(const uint8_t *in, size_t len, uint32_t n, float *bound);
};

extern const struct dr_index_ops dr_index_raw, dr_index_bloom, dr_index_rle,
	dr_index_delta;
extern const struct dr_value_ops dr_value_f32, dr_value_deflate, dr_value_qsgd,
	dr_value_poly, dr_value_dexp;

/* Index and value codecs by wire id, or NULL. */
const struct dr_index_ops *dr_index(unsigned id);
const struct dr_value_ops *dr_value(unsigned id);

/* Bloom filter size for n keys at false-positive rate fpr, and the k that
 * minimizes the rate for it: m = ceil(-n ln(fpr) / ln(2)^2) bits (at least
 * 8), k = max(1, round(-log2 fpr)) clamped to DR_HASHES_MAX. */
uint32_t dr_bloom_bits(uint32_t n, double fpr);
unsigned dr_bloom_hashes(double fpr);

/* SplitMix64: the one RNG of the DeepReduce blocks (the P1/P2 draws and
 * QSGD's rounding), specified to the bit in docs/wire-format.md. */
static inline uint64_t dr_rng_next(uint64_t *s)
{
	return gw_splitmix64(s);
}

/* Uniform in [0, n) (n >= 1) by Lemire's multiply-shift on 32 bits: the
 * rejection step is left out on purpose — the bias, below 2^-32 · n, does
 * not matter here and the draw stays one RNG call, easy to specify. */
static inline uint32_t dr_rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((dr_rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform float in [0, 1) from the top 24 bits. */
static inline float dr_rng_unit(uint64_t *s)
{
	return (float)(dr_rng_next(s) >> 40) * 0x1p-24f;
}

#endif /* GW_DR_H */
