/* A reference decoder for gradwire frames, written from
 * docs/wire-format.md alone (§2, §4.1–§4.7 and §4.11: raw, bf16, int8,
 * 3lc, terngrad, onebit, topk, hq), in the spirit of zstd's educational
 * decoder: one small file, plain loops, no SIMD, nothing shared with
 * codec/. The test suite decodes every frame with it and with the library
 * and fails on any difference (tests/refdec/test_refdec.c).
 *
 * It uses only the C library, libxxhash (XXH3, as §2.3 names it) and the
 * error codes of <gw/common.h>, which the spec names. */
#ifndef GW_REFDEC_H
#define GW_REFDEC_H

#include <stddef.h>
#include <stdint.h>

/* Returned for a frame that passes §2 but whose codec (sketchml,
 * countsketch, deepreduce) this decoder does not cover. */
#define REFDEC_UNCOVERED 1000

/* Decode-accumulates frame[0..len) into out[0..out_len) as gw_decode()
 * must: the number of values added (>= 0), REFDEC_UNCOVERED, or a
 * negative GW_E* code, in which case out is untouched. */
int refdec_decode(const uint8_t *frame, size_t len, float *out, uint64_t out_len);

#endif
