/* gradwire count sketches and the pieces of Sketched-SGD (Ivkin et al.,
 * NeurIPS 2019) that are not a collective: the sketch itself, HEAVYMIX's
 * estimate-and-select, and key-set frames.
 *
 * A count sketch of a vector x of d coordinates is an r x c table of
 * float32: coordinate i adds sign_j(i) * x[i] to cell (j, bucket_j(i)) of
 * every row j. It is linear — the sketch of a sum is the sum of the
 * sketches — so workers' tables add up cell by cell at an aggregator that
 * never sees a gradient. The hashes are specified (docs/wire-format.md
 * §4.9): for row j, h = XXH3_64(le64(i), seed + (j + 1) * 0x9E3779B97F4A7C15),
 * bucket = ((h >> 32) * c) >> 32, sign = h & 1 ? -1 : +1, so any
 * implementation that sketches the same vector with the same (r, c, seed)
 * produces the same table.
 *
 * The "countsketch" codec (GW_CODEC_COUNTSKETCH) puts a table on the wire:
 * encoding a dense tensor sketches it and emits positional slices — one
 * row, a range of its columns — that decode-accumulate into a table of
 * r * c floats (not into a tensor of d). Its sparse frames are key sets:
 * delta-binary keys with or without float32 values, which Sketched-SGD's
 * second round and its update travel in. */
#ifndef GW_SKETCH_H
#define GW_SKETCH_H

#include <stddef.h>
#include <stdint.h>

#include <gw/codec.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_CSK_ROWS_MAX 16u
#define GW_CSK_CELLS_MAX (1u << 26)   /* rows * cols: 256 MiB of float32 */

typedef struct gw_csk {
	uint32_t rows;   /* r, 1 .. GW_CSK_ROWS_MAX */
	uint32_t cols;   /* c, rows * c <= GW_CSK_CELLS_MAX */
	uint64_t seed;
} gw_csk;

/* 0, or GW_EINVAL when rows or cols are out of range. */
GW_API int gw_csk_check(const gw_csk *s);

/* Bucket of coordinate i in row j, and its sign (+1 or -1). */
GW_API uint32_t gw_csk_bucket(const gw_csk *s, uint32_t row, uint64_t i,
			      float *sign);

/* table[0 .. rows * cols) += sketch of x[0..d). 0 or GW_EINVAL. */
GW_API int gw_csk_add(const gw_csk *s, const float *x, uint64_t d, float *table);

/* est[i] <- the count-sketch estimate of coordinate i < d: the median over
 * rows of sign_j(i) * table[j][bucket_j(i)] (the mean of the middle two for
 * an even row count). Every coordinate is queried, as the paper does on
 * the GPU. 0 or GW_EINVAL. */
GW_API int gw_csk_estimate(const gw_csk *s, const float *table, uint64_t d,
			   float *est);

/* The k coordinates of x[0..n) with the largest |x| (NaN and Inf rank
 * highest), in ascending index order; ties at the k-th magnitude go to
 * the lowest indices, so the choice is deterministic. Worst-case linear
 * time (radix select on the float bits), no sort. Fills sel[0..min(k, n))
 * and returns that count, or GW_ENOMEM. */
GW_API int64_t gw_top_abs(const float *x, uint64_t n, uint64_t k, uint64_t *sel);

/* Sketched-SGD's sizes for a tensor of d coordinates: k updated per step,
 * candidates = P * k queried in the second round, and the r x c sketch.
 * Defaults (gw_sketched_sizes_default): k = ceil(d / 100), P = 4
 * (candidates = min(P k, d)), r = 1, c = 2 candidates — a sketch of 2 P k
 * cells, so one step costs |S| + P k + k ~ 13 k elements per worker,
 * 2d / 13k ~ 15x less than sending a dense gradient and receiving dense
 * parameters. One row, not the O(log d) of the paper's analysis: at equal
 * cells it trained faster in every run we measured (docs/codecs.md). */
typedef struct gw_sketched_sizes {
	uint32_t k, candidates, rows, cols;
} gw_sketched_sizes;

/* Fills the defaults above for d (1 <= d < 2^32): 0 or GW_EINVAL. */
GW_API int gw_sketched_sizes_default(uint64_t d, gw_sketched_sizes *s);

/* ---- key-set frames ------------------------------------------------------ */

/* Longest frame gw_keyset_encode() may write for n keys (worst-case
 * increments), with or without values. */
GW_API size_t gw_keyset_bound(uint32_t n, int with_values);

/* Most keys whose key-set frame fits budget bytes in the worst case. */
GW_API uint32_t gw_keyset_fit(size_t budget, int with_values);

/* Writes one countsketch key-set frame of tensor id holding keys[0..n)
 * (strictly ascending, n >= 1, last - first < 2^32) and, unless values is
 * NULL, their values. Returns the frame length or GW_EINVAL / GW_EBUDGET. */
GW_API int gw_keyset_encode(uint32_t tensor, const uint64_t *keys,
			    const float *values, uint32_t n, void *buf,
			    size_t budget);

/* Verifies a key-set frame (header, checksum, every key below limit) and
 * fills keys[0..n) and, if the frame has values and values is not NULL,
 * values[0..n); *has_values (if not NULL) says whether it had them.
 * Returns n, or GW_E* (GW_ELENGTH: more than cap keys; GW_ECODEC: not a
 * countsketch key set) having written nothing. */
GW_API int gw_keyset_decode(const void *buf, size_t len, uint64_t limit,
			    uint64_t *keys, float *values, uint32_t cap,
			    int *has_values);

#ifdef __cplusplus
}
#endif
#endif /* GW_SKETCH_H */
