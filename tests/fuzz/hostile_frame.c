/* The hostile frames of make_corpus --hostile, as committed in
 * tests/fuzz/regress/: each file is a frame broken in one way, named
 * <what>.<GW_E code it must be rejected with> (or .ok), so regress_main
 * checks the exact code. The decoder harnesses of raw, bf16 and int8 get
 * the rules of the header, of sparse keys and of their own payload, hq its
 * own (hostile_hq()), fuzz_frame.c those of the header alone. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "seeds_common.h"

/* true while writing fuzz_frame's set: it only verifies, so a frame that
 * only gw_decode() rejects is "ok" there */
static bool header_only;

/* code for a decoder harness, "ok" for fuzz_frame */
static const char *dec(const char *code)
{
	return header_only ? "ok" : code;
}

static void put_hostile(const char *harness, const char *what, const char *code,
			uint8_t *f, size_t len, bool seal)
{
	if (seal && len >= GW_FRAME_HDR_LEN)
		gw_frame_seal(f, len);
	char fname[256];
	snprintf(fname, sizeof(fname), "%s.%s", what, code);
	mc_write_file(harness, fname, f, len);
}

static void hostile_common(const char *harness, int id)
{
	uint8_t f[GW_FRAME_MAX + 16];
	size_t len;
	uint8_t *fl = f + GW_FUZZ_OFF_FLAGS;

	len = mc_valid_frame(id, 0, 8, f);
	put_hostile(harness, "valid-dense", "ok", f, len, false);
	put_hostile(harness, "empty", "GW_ETRUNC", f, 0, false);
	put_hostile(harness, "truncated-header", "GW_ETRUNC", f, 20, false);
	put_hostile(harness, "truncated-payload", "GW_ETRUNC", f, len - 1, false);
	f[len] = 0;
	put_hostile(harness, "trailing-byte", "GW_ELENGTH", f, len + 1, false);

	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 0xffffffffu);
	put_hostile(harness, "huge-payload-len", "GW_ELENGTH", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN,
		     gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) + 4);
	put_hostile(harness, "payload-len-past-buffer", "GW_ETRUNC", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 255;
	put_hostile(harness, "param-len-past-buffer", "GW_ETRUNC", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[0] = 'g';
	put_hostile(harness, "bad-magic", "GW_EMAGIC", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_VERSION] = 2;
	put_hostile(harness, "version-2", "GW_EVERSION", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_RESERVED] = 1;
	put_hostile(harness, "reserved-byte", "GW_ERESERVED", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	fl[1] = 0x80;
	put_hostile(harness, "reserved-flag", "GW_ERESERVED", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	fl[0] = GW_FF_KEY64;
	put_hostile(harness, "key64-without-sparse", "GW_ERESERVED", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_CODEC] = 0;
	put_hostile(harness, "codec-0", "GW_ECODEC", f, len, true);
	f[GW_FUZZ_OFF_CODEC] = 255;
	put_hostile(harness, "codec-255", "GW_ECODEC", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	f[GW_FUZZ_OFF_CHECKSUM] ^= 1;
	put_hostile(harness, "checksum-flipped", "GW_ECHECKSUM", f, len, false);
	len = mc_valid_frame(id, 0, 8, f);
	f[len - 1] ^= 0x40;
	put_hostile(harness, "payload-bit-flip", "GW_ECHECKSUM", f, len, false);

	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0);
	put_hostile(harness, "dense-count-0", "GW_ELENGTH", f, len, true);

	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 9);
	put_hostile(harness, "dense-span-not-count", "GW_ELENGTH", f, len, true);

	/* start + span wraps around 2^64 */
	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, UINT64_MAX - 3);
	put_hostile(harness, "start-wraps", "GW_ERANGE", f, len, true);

	/* count far beyond the payload: caught by the output range first */
	len = mc_valid_frame(id, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0xffffffffu);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0xffffffffu);
	put_hostile(harness, "dense-count-overflow", dec("GW_ERANGE"), f, len, true);

	len = mc_valid_frame(id, 1, 8, f);
	put_hostile(harness, "valid-sparse32", "ok", f, len, false);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 7);
	put_hostile(harness, "sparse-count-above-span", "GW_ELENGTH", f, len, true);

	/* count whose payload size, multiplied in 32 bits, wraps around to
	 * the real payload_len: such a decoder would read ~2^29 entries */
	len = mc_valid_frame(id, 1, 1, f);
	uint32_t per = gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN);
	uint64_t low = per & (0u - per);   /* gcd(per, 2^32) */
	uint64_t wrap = low > 1 ? (1ull << 32) / low + 1 : 0xffffffffull;
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, (uint32_t)wrap);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 0xffffffffu);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, 0);
	put_hostile(harness, "sparse-count-wraps-32bit", dec("GW_ELENGTH"), f, len,
		    true);

	/* keys above 2^33: no output the harness allocates holds them */
	len = mc_valid_frame(id, 2, 8, f);
	put_hostile(harness, "sparse64-beyond-output", dec("GW_ERANGE"), f, len,
		    false);
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, UINT64_MAX - 2);
	put_hostile(harness, "sparse64-start-wraps", "GW_ERANGE", f, len, true);

	/* count 0: "nothing in this range", valid */
	len = mc_valid_frame(id, 1, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 0);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 0);
	f[GW_FUZZ_OFF_PARAM_LEN] = (uint8_t)(id == GW_CODEC_INT8 ? 4 : 0);
	len = GW_FRAME_HDR_LEN + f[GW_FUZZ_OFF_PARAM_LEN];
	put_hostile(harness, "sparse-count-0", "ok", f, len, true);
}

/* Sparse key sections of the codecs whose payload is keys + values. */
static void hostile_keys(const char *harness, int id)
{
	uint8_t f[1024];
	size_t len = mc_valid_frame(id, 1, 8, f);
	uint8_t *keys = f + GW_FRAME_HDR_LEN + f[GW_FUZZ_OFF_PARAM_LEN];
	uint8_t save[32];
	memcpy(save, keys, 32);

	memcpy(keys, save + 4, 4);
	memcpy(keys + 4, save, 4);
	put_hostile(harness, "keys-unsorted", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	memcpy(keys + 8, keys + 4, 4);
	put_hostile(harness, "keys-duplicate", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	gw_fuzz_st32(keys, gw_fuzz_ld32(keys) - 1);
	put_hostile(harness, "key-below-start", "GW_ECORRUPT", f, len, true);
	memcpy(keys, save, 32);
	gw_fuzz_st32(keys + 28, gw_fuzz_ld32(f + GW_FUZZ_OFF_SPAN) +
				       (uint32_t)gw_fuzz_ld64(f + GW_FUZZ_OFF_START));
	put_hostile(harness, "key-at-span-end", "GW_ECORRUPT", f, len, true);
}

/* hq (§4.11.2): each rule broken once, on a valid 8-value frame (4-bit
 * codes, rotated) or, for the padding, a 7-value one. */
void hostile_hq(void)
{
	uint8_t f[1024];
	uint8_t *p = f + GW_FRAME_HDR_LEN;
	size_t len;
	mc_reseed("hostile-hq");
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	put_hostile("hq", "valid-dense", "ok", f, len, false);
	p[2] |= 0x4;
	put_hostile("hq", "poisoned", "ok", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] |= 0x2;
	put_hostile("hq", "sum-of-1", "ok", f, len, true);
	gw_fuzz_st32(p + 4, 0);
	put_hostile("hq", "sum-of-0", "GW_ECORRUPT", f, len, true);
	gw_fuzz_st32(p + 4, 1);
	p[1] = 33;
	put_hostile("hq", "sum-width-33", "GW_ECORRUPT", f, len, true);

	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 19;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) + 1);
	put_hostile("hq", "params-19", "GW_ELENGTH", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] |= 0x8;
	p[0] = 9;
	put_hostile("hq", "reserved-flag-and-bits-9", "GW_ERESERVED", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[3] = 1;
	put_hostile("hq", "reserved-byte", "GW_ERESERVED", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[0] = p[1] = 9;
	put_hostile("hq", "bits-9", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[1] = 5;
	put_hostile("hq", "width-not-bits", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	gw_fuzz_st32(p + 4, 2);
	put_hostile("hq", "worker-of-2", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[2] &= (uint8_t)~0x1;
	gw_fuzz_st32(p + 8, 5);
	put_hostile("hq", "seed-unrotated", "GW_ECORRUPT", f, len, true);
	static const struct {
		const char *what;
		unsigned at;
		uint32_t bits;
	} mags[] = {
		{"scale-minus-zero", 12, 0x80000000u}, {"scale-nan", 12, 0x7fc00000u},
		{"scale-inf", 12, 0x7f800000u},        {"scale-negative", 12, 0xbf800000u},
		{"next-minus-zero", 16, 0x80000000u},  {"next-inf", 16, 0x7f800000u},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(mags); i++) {
		len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
		gw_fuzz_st32(p + mags[i].at, mags[i].bits);
		put_hostile("hq", mags[i].what, "GW_ECORRUPT", f, len, true);
	}
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, gw_fuzz_ld32(f + GW_FUZZ_OFF_PAYLOAD_LEN) - 1);
	put_hostile("hq", "payload-short", "GW_ELENGTH", f, len - 1, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 8, f);
	p[20] = (uint8_t)((p[20] & 0xf0) | 0x8);
	put_hostile("hq", "code-minus-8", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_HQ, 0, 7, f);
	f[len - 1] |= 0x80;
	put_hostile("hq", "padding-bit", "GW_ECORRUPT", f, len, true);
}

/* raw, bf16 and int8: the rules every decoder shares, then their own;
 * then fuzz_frame.c's set, of the header alone. */
void hostile_frames(void)
{
	uint8_t f[1024];
	size_t len;
	mc_reseed("hostile");
	hostile_common("raw", GW_CODEC_RAW);
	hostile_keys("raw", GW_CODEC_RAW);
	len = mc_valid_frame(GW_CODEC_RAW, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 4;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 28);
	put_hostile("raw", "params-not-allowed", "GW_ELENGTH", f, len, true);
	len = mc_valid_frame(GW_CODEC_RAW, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, 7);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, 7);
	put_hostile("raw", "payload-not-4-per-value", "GW_ELENGTH", f, len, true);

	hostile_common("bf16", GW_CODEC_BF16);
	hostile_keys("bf16", GW_CODEC_BF16);
	len = mc_valid_frame(GW_CODEC_BF16, 0, 8, f);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 15);
	put_hostile("bf16", "odd-payload", "GW_ELENGTH", f, len - 1, true);

	hostile_common("int8", GW_CODEC_INT8);
	hostile_keys("int8", GW_CODEC_INT8);
	static const struct {
		const char *what, *code;
		float scale;
	} scales[] = {
		{"scale-negative", "GW_ECORRUPT", -1.0f},
		{"scale-inf", "GW_ECORRUPT", INFINITY},
		{"scale-minus-inf", "GW_ECORRUPT", -INFINITY},
		{"scale-nan-poisoned", "ok", NAN},
		{"scale-minus-zero", "ok", -0.0f},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(scales); i++) {
		len = mc_valid_frame(GW_CODEC_INT8, 0, 8, f);
		gw_stf32(f + GW_FRAME_HDR_LEN, scales[i].scale);
		put_hostile("int8", scales[i].what, scales[i].code, f, len, true);
	}
	len = mc_valid_frame(GW_CODEC_INT8, 0, 8, f);
	f[len - 3] = 0x80;
	put_hostile("int8", "level-minus-128", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_INT8, 1, 8, f);
	f[len - 1] = 0x80;
	put_hostile("int8", "sparse-level-minus-128", "GW_ECORRUPT", f, len, true);
	len = mc_valid_frame(GW_CODEC_INT8, 0, 8, f);
	f[GW_FUZZ_OFF_PARAM_LEN] = 0;
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, 12);
	put_hostile("int8", "scale-missing", "GW_ELENGTH", f, len, true);

	/* the header layer alone */
	header_only = true;
	hostile_common("frame", GW_CODEC_RAW);
	header_only = false;
}
