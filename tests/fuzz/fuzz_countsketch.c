/* Fuzzes the countsketch codec (codec/countsketch.c, wire-format §4.9):
 *
 *  1. gw_fuzz_decoder(): frames of codec "countsketch" as they arrive and
 *     re-sealed (fuzz_common.c). Params vary (24 bytes for a table slice,
 *     8 for a key set) and neither payload is keys + fixed-size values, so
 *     param_len -1, value_bytes 0.
 *  2. The input, as is and re-sealed as a countsketch frame (below), into
 *     what a receiver really decodes it into: a dense slice into a table of
 *     exactly rows * cols floats from its own params, a key set into an
 *     output of start + span floats. Rejected: nothing written; accepted:
 *     the slice lies inside one row and added exactly its float32 values,
 *     the key set added its values at its keys (or nothing). And
 *     gw_frame_parts_of() agrees with the decode: the same verdict and
 *     parts that add up to the frame.
 *  3. gw_keyset_decode() on both: rejected, keys, values and has_values
 *     untouched; accepted, keys strictly ascending from start to
 *     start + span - 1 and below the limit, below 2^32 without KEY64, and
 *     gw_keyset_encode() of them gives a frame no longer than the input
 *     (the encoder picks the fewest bytes) that decodes to the same keys
 *     and value bits.
 *
 * Re-sealing (step 2 and 3) forces magic, version and codec, clears the
 * reserved byte, fixes payload_len to the input's length (param_len cut
 * to fit) and a dense frame's span, then seals. Byte 35 of the input (the
 * checksum field, overwritten anyway) picks the output and limit: bit 0
 * one element short, bit 1 the limit of gw_keyset_decode 2^64 - 1, bit 2
 * a cap one key short. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gw/sketch.h>

#include "codec_internal.h"
#include "delta_binary.h"
#include "fuzz_common.h"

#define DENSE_PARAMS 24u
#define SPARSE_PARAMS 8u
#define TABLE_CAP (1u << 16)   /* largest table (floats) the harness allocates */
#define OUT_CAP (1u << 16)     /* largest key-set output */
#define KEYS_CAP 65536u        /* more than any frame's count can be */
#define KEYS_MAX 16384u        /* gw_keyset_encode's largest n */

static float pattern(uint64_t i)
{
	return (float)(i % 509) - 254.5f;
}

/* Step 2 for a frame that verified: decode into the output a receiver
 * would use, check the verdict against gw_frame_parts_of(). */
static void decode_real(const uint8_t *f, size_t len, const gw_frame_info *h,
			uint8_t sel)
{
	const uint8_t *params = f + GW_FRAME_HDR_LEN;
	const uint8_t *payload = params + h->param_len;
	bool sparse = h->flags & GW_FF_SPARSE;
	uint64_t out_len;
	if (!sparse) {
		if (h->param_len != DENSE_PARAMS)
			return;
		uint64_t cells = (uint64_t)gw_ld16(params) * gw_ld32(params + 4);
		if (!cells || cells > TABLE_CAP)
			return;
		out_len = cells;
	} else {
		if (h->start + h->span > OUT_CAP)
			return;
		out_len = h->start + h->span;
	}
	if ((sel & 1) && out_len)
		out_len--;
	float *out = malloc((out_len ? out_len : 1) * sizeof(float));
	GW_FUZZ_CHECK(out);
	for (uint64_t i = 0; i < out_len; i++)
		out[i] = pattern(i);
	int rc = gw_decode(f, len, out, out_len);
	gw_fuzz_check_code(rc);
	gw_frame_parts parts;
	int prc = gw_frame_parts_of(f, len, &parts);
	gw_fuzz_check_code(prc);
	GW_FUZZ_CHECKF(prc <= 0, "parts returned %d", prc);
	if (prc == 0)
		GW_FUZZ_CHECKF((uint64_t)parts.header + parts.params + parts.keys +
				       parts.tables + parts.values == len,
			       "parts add up to %u + %u + %u + %u + %u, frame %zu",
			       parts.header, parts.params, parts.keys, parts.tables,
			       parts.values, len);
	if (rc < 0) {
		for (uint64_t i = 0; i < out_len; i++)
			GW_FUZZ_CHECKF(gw_f32_bits(out[i]) == gw_f32_bits(pattern(i)),
				       "%s but element %llu changed", gw_error_name(rc),
				       (unsigned long long)i);
		/* a full-size output fails only where parts fails too */
		if (!(sel & 1) && rc != GW_ERANGE)
			GW_FUZZ_CHECKF(prc == rc, "decode %s, parts %s",
				       gw_error_name(rc), gw_error_name(prc));
		free(out);
		return;
	}
	GW_FUZZ_CHECKF(prc == 0, "decode accepted, parts %s", gw_error_name(prc));
	if (!sparse) {
		uint32_t cols = gw_ld32(params + 4);
		GW_FUZZ_CHECKF((uint32_t)rc == h->count, "decode %d of %u", rc, h->count);
		GW_FUZZ_CHECKF(gw_ld16(params + 2) == 0 && gw_ld64(params + 16) != 0,
			       "reserved %u dim %llu accepted", gw_ld16(params + 2),
			       (unsigned long long)gw_ld64(params + 16));
		GW_FUZZ_CHECKF(h->start % cols + h->count <= cols,
			       "slice [%llu, +%u) crosses a row of %u",
			       (unsigned long long)h->start, h->count, cols);
		GW_FUZZ_CHECK(parts.values == 4 * h->count && parts.keys == 0);
		for (uint64_t i = 0; i < out_len; i++) {
			float want = pattern(i);
			if (i >= h->start && i < h->start + h->count)
				want += gw_ldf32(payload + 4 * (i - h->start));
			GW_FUZZ_CHECKF(gw_f32_bits(out[i]) == gw_f32_bits(want) ||
					       (isnan(want) && isnan(out[i])),
				       "cell %llu: %a, want %a", (unsigned long long)i,
				       (double)out[i], (double)want);
		}
	} else {
		uint32_t db_len = gw_ld32(params + 4);
		bool vals = params[0] == 32;
		GW_FUZZ_CHECKF(params[0] == 0 || vals, "vbits %u accepted", params[0]);
		GW_FUZZ_CHECKF((uint32_t)rc == (vals ? h->count : 0), "decode %d of %u",
			       rc, h->count);
		GW_FUZZ_CHECK(parts.keys == db_len &&
			      parts.values == (vals ? 4 * h->count : 0));
		/* the keys, as the spec reads them, get the values */
		float *want = malloc(out_len * sizeof(float));
		GW_FUZZ_CHECK(want);
		for (uint64_t i = 0; i < out_len; i++)
			want[i] = pattern(i);
		struct gw_db_iter it;
		gw_db_iter_init(&it, payload, h->count, h->start, 0);
		for (uint32_t i = 0; i < h->count; i++) {
			uint64_t k = gw_db_iter_next(&it);
			GW_FUZZ_CHECK(k >= h->start && k < out_len);
			if (vals)
				want[k] += gw_ldf32(payload + db_len + 4 * (size_t)i);
		}
		for (uint64_t i = 0; i < out_len; i++)
			GW_FUZZ_CHECKF(gw_f32_bits(out[i]) == gw_f32_bits(want[i]) ||
					       (isnan(want[i]) && isnan(out[i])),
				       "element %llu: %a, want %a", (unsigned long long)i,
				       (double)out[i], (double)want[i]);
		free(want);
	}
	free(out);
}

/* Step 3: gw_keyset_decode and the re-encoding of what it accepts. */
static void keyset_step(const uint8_t *f, size_t len, uint8_t sel)
{
	gw_frame_info h;
	bool peeked = gw_frame_peek(f, len, &h) == 0;
	uint64_t limit = (sel & 2) || !peeked ? UINT64_MAX
			 : h.start + h.span - ((sel & 1) ? 1 : 0);
	uint32_t cap = peeked ? GW_MIN(h.count, KEYS_CAP) : 16;
	if ((sel & 4) && cap)
		cap--;
	size_t kb = (size_t)(cap ? cap : 1) * sizeof(uint64_t);
	size_t vb = (size_t)(cap ? cap : 1) * sizeof(float);
	uint64_t *keys = malloc(kb);
	float *vals = malloc(vb);
	GW_FUZZ_CHECK(keys && vals);
	memset(keys, 0xa5, kb);
	memset(vals, 0x5a, vb);
	int hv = 77;
	int n = gw_keyset_decode(f, len, limit, keys, vals, cap, &hv);
	gw_fuzz_check_code(n);
	if (n < 0) {
		GW_FUZZ_CHECKF(hv == 77, "%s but has_values written", gw_error_name(n));
		for (size_t i = 0; i < kb; i++)
			GW_FUZZ_CHECKF(((uint8_t *)keys)[i] == 0xa5, "%s but keys written",
				       gw_error_name(n));
		for (size_t i = 0; i < vb; i++)
			GW_FUZZ_CHECKF(((uint8_t *)vals)[i] == 0x5a,
				       "%s but values written", gw_error_name(n));
		free(keys);
		free(vals);
		return;
	}
	GW_FUZZ_CHECK(peeked && (uint32_t)n == h.count && n >= 1 && (uint32_t)n <= cap);
	GW_FUZZ_CHECK(h.codec == GW_CODEC_COUNTSKETCH && (h.flags & GW_FF_SPARSE));
	GW_FUZZ_CHECK(hv == 0 || hv == 1);
	GW_FUZZ_CHECKF(keys[0] == h.start && keys[n - 1] == h.start + h.span - 1,
		       "keys %llu..%llu, range [%llu, +%u)",
		       (unsigned long long)keys[0], (unsigned long long)keys[n - 1],
		       (unsigned long long)h.start, h.span);
	for (int i = 0; i < n; i++) {
		GW_FUZZ_CHECKF(keys[i] < limit, "key %llu, limit %llu",
			       (unsigned long long)keys[i], (unsigned long long)limit);
		GW_FUZZ_CHECKF(!i || keys[i] > keys[i - 1], "key %d not ascending", i);
	}
	GW_FUZZ_CHECKF((h.flags & GW_FF_KEY64) || keys[n - 1] <= UINT32_MAX,
		       "key %llu without KEY64", (unsigned long long)keys[n - 1]);
	if ((uint32_t)n <= KEYS_MAX) {
		uint8_t *re = malloc(GW_FRAME_MAX);
		uint64_t *k2 = malloc((size_t)n * sizeof(uint64_t));
		float *v2 = malloc((size_t)n * sizeof(float));
		GW_FUZZ_CHECK(re && k2 && v2);
		int rl = gw_keyset_encode(h.tensor, keys, hv ? vals : NULL, (uint32_t)n,
					  re, GW_FRAME_MAX);
		GW_FUZZ_CHECKF(rl > 0, "re-encoding %d accepted keys: %s", n,
			       gw_error_name(rl));
		GW_FUZZ_CHECKF((size_t)rl <= len, "re-encoded %d > %zu bytes", rl, len);
		GW_FUZZ_CHECK((size_t)rl <= gw_keyset_bound((uint32_t)n, hv));
		int hv2 = -1;
		int n2 = gw_keyset_decode(re, (size_t)rl, limit, k2, v2, (uint32_t)n, &hv2);
		GW_FUZZ_CHECKF(n2 == n && hv2 == hv, "re-encoded frame: %d (%s), hv %d",
			       n2, gw_error_name(n2), hv2);
		GW_FUZZ_CHECK(!memcmp(k2, keys, (size_t)n * sizeof(uint64_t)));
		if (hv)
			GW_FUZZ_CHECK(!memcmp(v2, vals, (size_t)n * sizeof(float)));
		gw_frame_info h2;
		GW_FUZZ_CHECK(gw_frame_peek(re, (size_t)rl, &h2) == 0);
		GW_FUZZ_CHECK(h2.start == h.start && h2.span == h.span &&
			      h2.count == h.count && h2.tensor == h.tensor);
		free(re);
		free(k2);
		free(v2);
	}
	free(keys);
	free(vals);
}

/* The input made a countsketch frame (see the comment at the top). */
static size_t reseal(const uint8_t *data, size_t size, uint8_t *f)
{
	size_t len = GW_MAX(size, (size_t)GW_FRAME_HDR_LEN);
	len = GW_MIN(len, (size_t)GW_FRAME_HDR_LEN + 255 + GW_FRAME_MAX);
	memset(f, 0, len);
	memcpy(f, data, GW_MIN(size, len));
	f[0] = 'G';
	f[1] = 'W';
	f[GW_FUZZ_OFF_VERSION] = GW_FRAME_VERSION;
	f[GW_FUZZ_OFF_CODEC] = GW_CODEC_COUNTSKETCH;
	f[GW_FUZZ_OFF_RESERVED] = 0;
	f[GW_FUZZ_OFF_FLAGS] &= GW_FF_SPARSE | GW_FF_KEY64;
	f[GW_FUZZ_OFF_FLAGS + 1] = 0;
	if (!(f[GW_FUZZ_OFF_FLAGS] & GW_FF_SPARSE))
		f[GW_FUZZ_OFF_FLAGS] = 0;
	size_t plen = f[GW_FUZZ_OFF_PARAM_LEN];
	if (GW_FRAME_HDR_LEN + plen > len)
		plen = len - GW_FRAME_HDR_LEN;
	if (len - GW_FRAME_HDR_LEN - plen > GW_FRAME_MAX)
		len = GW_FRAME_HDR_LEN + plen + GW_FRAME_MAX;
	f[GW_FUZZ_OFF_PARAM_LEN] = (uint8_t)plen;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, (uint32_t)(len - GW_FRAME_HDR_LEN - plen));
	if (!(f[GW_FUZZ_OFF_FLAGS] & GW_FF_SPARSE))
		memcpy(f + GW_FUZZ_OFF_SPAN, f + GW_FUZZ_OFF_COUNT, 4);
	gw_frame_seal(f, len);
	return len;
}

/* A key set without values (vbits 0) adds nothing: gw_decode() says 0. */
static uint32_t cs_added(const gw_frame_info *h, const uint8_t *params)
{
	return (h->flags & GW_FF_SPARSE) && params[0] == 0 ? 0 : h->count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_fuzz_codec countsketch = {
		.name = "countsketch", .id = GW_CODEC_COUNTSKETCH,
		.param_len = -1, .value_bytes = 0, .added = cs_added,
	};
	gw_fuzz_decoder(&countsketch, data, size);
	int keep = gw_fuzz_last_rc;   /* the as-is verdict, for regress_main */

	uint8_t sel = size > GW_FUZZ_OFF_CHECKSUM + 3 ? data[GW_FUZZ_OFF_CHECKSUM + 3] : 0;
	uint8_t *f = malloc(GW_FRAME_HDR_LEN + 255 + GW_FRAME_MAX);
	GW_FUZZ_CHECK(f);
	for (int pass = 0; pass < 2; pass++) {
		size_t len = size;
		if (pass)
			len = reseal(data, size, f);
		else if (size)
			memcpy(f, data, size);
		/* exactly len bytes, so that ASan sees a read past the frame */
		uint8_t *exact = malloc(len ? len : 1);
		GW_FUZZ_CHECK(exact);
		memcpy(exact, f, len);
		gw_frame_info h;
		if (gw_frame_verify(exact, len, &h) == 0 && h.codec == GW_CODEC_COUNTSKETCH)
			decode_real(exact, len, &h, sel);
		keyset_step(exact, len, sel);
		free(exact);
	}
	free(f);
	gw_fuzz_last_rc = keep;
	return 0;
}
