/* Fuzzes the hq codec (codec/hq.c, wire-format §4.11):
 *
 *  1. gw_fuzz_decoder(): frames of codec "hq" as they arrive and re-sealed
 *     (fuzz_common.c), decoded and held against the reference decoder
 *     (tests/refdec/). Params are 20 bytes; the payload is packed codes,
 *     not keys + fixed-size values (value_bytes 0). An accepted frame must
 *     keep every rule of §4.11.2, checked here from the bytes: params,
 *     payload length, each code within [-L, L], padding zero.
 *  2. gw_sum_add(), a shard's integer accumulation, on the same bytes, as
 *     they are and re-sealed as an hq frame (below), into an accumulator
 *     that holds the frame's range, or one that is one element short or
 *     starts one element late (GW_ERANGE). Its verdict must be that of
 *     gw_decode_window() on the frame's range (GW_ERANGE aside, which it
 *     checks after the params); rejected, the accumulator is unchanged;
 *     accepted, it added exactly the codes the payload holds (read here
 *     bit by bit), the gw_sum_info it gave agrees with the params and with
 *     gw_sum_info_of(), and an unrotated frame's decode added float32(code)
 *     times float32(scale / Q) to each element (NaN if poisoned).
 *
 * Re-sealing (step 2) forces magic, version, codec and a dense frame, the
 * reserved byte 0 and param_len 20, start below 4096; the count is what
 * the payload holds at the params' width (2-32; otherwise the header's,
 * below 2^16), the payload cut to its length; then seals. Byte 35 (the
 * checksum field, overwritten anyway) selects: bits 0-1 the accumulator
 * (0 and 3 the frame's range, 1 one short, 2 one late), bit 2 clears
 * hq's reserved flags and byte, bit 3 clears the payload's padding bits. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"   /* gw_bits_f32, gw_frame_seal */
#include "fuzz_common.h"

#define HQ_PLEN 20u
#define HQ_ROTATED 0x1u
#define HQ_SUM 0x2u
#define HQ_POISON 0x4u

/* Code i of a payload of width-bit codes, LSB first, sign-extended. */
static int64_t code_at(const uint8_t *pay, uint32_t i, unsigned width)
{
	uint64_t u = 0;
	for (unsigned k = 0; k < width; k++) {
		uint64_t j = (uint64_t)i * width + k;
		u |= (uint64_t)((pay[j / 8] >> (j % 8)) & 1) << k;
	}
	return (u >> (width - 1)) ? (int64_t)u - ((int64_t)1 << width) : (int64_t)u;
}

static bool magnitude_ok(uint32_t u)
{
	return !(u >> 31) && (u & 0x7f800000u) != 0x7f800000u;
}

/* §4.11.2 on an accepted frame, from its bytes. */
static void hq_accepted(const gw_frame_info *h, const uint8_t *p, const uint8_t *payload)
{
	unsigned bits = p[0], width = p[1], flags = p[2];
	uint32_t contrib = gw_fuzz_ld32(p + 4), seed = gw_fuzz_ld32(p + 8);
	GW_FUZZ_CHECKF(!(flags & ~7u) && !p[3], "hq accepted reserved bits %02x %02x", flags,
		       p[3]);
	GW_FUZZ_CHECKF(bits >= 2 && bits <= 8, "hq accepted bits %u", bits);
	if (flags & HQ_SUM)
		GW_FUZZ_CHECKF(width >= 2 && width <= 32 && contrib,
			       "hq accepted a sum of width %u, %u contributors", width, contrib);
	else
		GW_FUZZ_CHECKF(width == bits && contrib == 1,
			       "hq accepted a worker's frame of width %u, bits %u, %u contributors",
			       width, bits, contrib);
	GW_FUZZ_CHECKF(!seed || (flags & HQ_ROTATED), "hq accepted seed %u unrotated", seed);
	GW_FUZZ_CHECKF(magnitude_ok(gw_fuzz_ld32(p + 12)) && magnitude_ok(gw_fuzz_ld32(p + 16)),
		       "hq accepted scale %08x, next %08x", gw_fuzz_ld32(p + 12),
		       gw_fuzz_ld32(p + 16));
	GW_FUZZ_CHECKF((uint64_t)h->payload_len == ((uint64_t)h->count * width + 7) / 8,
		       "hq accepted payload_len %u for %u codes of %u bits", h->payload_len,
		       h->count, width);
	uint64_t lim = (uint64_t)contrib * ((1u << (bits - 1)) - 1);
	lim = GW_MIN(lim, ((uint64_t)1 << (width - 1)) - 1);
	for (uint32_t i = 0; i < h->count; i++) {
		int64_t c = code_at(payload, i, width);
		GW_FUZZ_CHECKF(c >= -(int64_t)lim && c <= (int64_t)lim,
			       "hq accepted code %lld at %u (L %llu)", (long long)c, i,
			       (unsigned long long)lim);
	}
	for (uint64_t j = (uint64_t)h->count * width; j < 8 * (uint64_t)h->payload_len; j++)
		GW_FUZZ_CHECKF(!((payload[j / 8] >> (j % 8)) & 1), "hq accepted padding bit %llu",
			       (unsigned long long)j);
}

/* Step 2's frame: data as an hq frame (see the top), in f; its length. */
static size_t reseal(const uint8_t *data, size_t size, uint8_t *f, uint8_t sel)
{
	size_t len = GW_MAX(size, (size_t)GW_FRAME_HDR_LEN + HQ_PLEN);
	memset(f, 0, len + 8);   /* a payload of 0 bytes grows to 1 */
	if (size)
		memcpy(f, data, size);
	f[0] = 'G';
	f[1] = 'W';
	f[GW_FUZZ_OFF_VERSION] = GW_FRAME_VERSION;
	f[GW_FUZZ_OFF_CODEC] = GW_CODEC_HQ;
	f[GW_FUZZ_OFF_FLAGS] = 0;
	f[GW_FUZZ_OFF_FLAGS + 1] = 0;
	f[GW_FUZZ_OFF_RESERVED] = 0;
	f[GW_FUZZ_OFF_PARAM_LEN] = HQ_PLEN;
	gw_fuzz_st64(f + GW_FUZZ_OFF_START, gw_fuzz_ld64(f + GW_FUZZ_OFF_START) % 4096);
	uint8_t *p = f + GW_FRAME_HDR_LEN;
	if (sel & 4) {
		p[2] &= 7;
		p[3] = 0;
	}
	len = GW_MIN(len, (size_t)GW_FRAME_HDR_LEN + HQ_PLEN + GW_FRAME_MAX);
	size_t pay = len - GW_FRAME_HDR_LEN - HQ_PLEN;
	unsigned width = p[1];
	uint32_t count;
	if (width >= 2 && width <= 32) {
		count = (uint32_t)GW_MAX((uint64_t)pay * 8 / width, (uint64_t)1);
		pay = (size_t)(((uint64_t)count * width + 7) / 8);   /* one byte at least */
		len = GW_FRAME_HDR_LEN + HQ_PLEN + pay;
		if (sel & 8) {
			uint8_t *q = p + HQ_PLEN;
			for (uint64_t j = (uint64_t)count * width; j < 8 * (uint64_t)pay; j++)
				q[j / 8] &= (uint8_t)~(1u << (j % 8));
		}
	} else {
		count = gw_fuzz_ld32(f + GW_FUZZ_OFF_COUNT) % 65536;
		count = count ? count : 1;
	}
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, count);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, count);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, (uint32_t)pay);
	gw_frame_seal(f, len);
	return len;
}

static int32_t acc_pattern(uint64_t i)
{
	return (int32_t)(i % 13) - 6;
}

/* Step 2 on the frame f[0..len) (exactly len bytes). */
static void sum_step(const uint8_t *f, size_t len, uint8_t sel)
{
	gw_frame_info h;
	int vrc = gw_frame_verify(f, len, &h);
	uint64_t start = 0, count = 1;
	bool window = false;   /* the frame's own range can be given */
	if (vrc == 0 && !(h.flags & GW_FF_SPARSE)) {
		start = h.start;
		count = h.count;
		window = count <= (1u << 19);
	}
	/* the accumulator: elements [base, base + n) */
	uint64_t base = start, n = count;
	switch (sel & 3) {
	case 1: n = count ? count - 1 : 0; break;
	case 2: base = start == UINT64_MAX ? start : start + 1; n = count; break;
	default: break;
	}
	if (n > (1u << 19))
		return;
	int32_t *acc = malloc((n + 1) * sizeof(int32_t));
	GW_FUZZ_CHECK(acc);
	for (uint64_t i = 0; i < n; i++)
		acc[i] = acc_pattern(i);
	gw_sum_info si;
	memset(&si, 0xa5, sizeof(si));
	int rs = gw_sum_add(f, len, acc, base, n, &si);
	gw_fuzz_check_code(rs);
	bool range_ok = base == start && n == count;

	if (rs < 0) {
		for (uint64_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(acc[i] == acc_pattern(i),
				       "gw_sum_add %s but acc[%llu] changed", gw_error_name(rs),
				       (unsigned long long)i);
	}
	if (vrc < 0) {
		GW_FUZZ_CHECKF(rs == vrc, "verify %s, gw_sum_add %s", gw_error_name(vrc),
			       gw_error_name(rs));
		free(acc);
		return;
	}
	if (h.codec != GW_CODEC_HQ) {
		GW_FUZZ_CHECKF(rs == GW_EUNSUPPORTED, "gw_sum_add of a %s frame: %s",
			       gw_codec_name(h.codec), rs < 0 ? gw_error_name(rs) : "accepted");
		free(acc);
		return;
	}
	if (!window) {
		free(acc);
		return;
	}
	/* the frame's own verdict: decoded into a window of its range */
	float *win = malloc(count * sizeof(float));
	GW_FUZZ_CHECK(win);
	for (uint64_t i = 0; i < count; i++)
		win[i] = -0.0f;   /* -0 + x is x, bit for bit */
	int rd = gw_decode_window(f, len, win, start, count);
	gw_fuzz_check_code(rd);
	if (range_ok)
		GW_FUZZ_CHECKF(rs == rd, "gw_decode_window %s, gw_sum_add %s",
			       rd < 0 ? gw_error_name(rd) : "accepted",
			       rs < 0 ? gw_error_name(rs) : "accepted");
	else
		GW_FUZZ_CHECKF(rs == GW_ERANGE || (rd < 0 && rs == rd),
			       "accumulator off the range: gw_decode_window %s, gw_sum_add %s",
			       rd < 0 ? gw_error_name(rd) : "accepted",
			       rs < 0 ? gw_error_name(rs) : "accepted");
	if (rs >= 0) {
		const uint8_t *p = f + GW_FRAME_HDR_LEN;
		const uint8_t *pay = p + HQ_PLEN;
		unsigned bits = p[0], width = p[1], flags = p[2];
		GW_FUZZ_CHECKF((uint64_t)rs == count, "gw_sum_add added %d of %llu", rs,
			       (unsigned long long)count);
		GW_FUZZ_CHECK(si.bits == bits && si.width == width &&
			      si.rotated == !!(flags & HQ_ROTATED) &&
			      si.poisoned == !!(flags & HQ_POISON) &&
			      si.contributors == gw_fuzz_ld32(p + 4) &&
			      si.seed == gw_fuzz_ld32(p + 8) &&
			      gw_f32_bits(si.scale) == gw_fuzz_ld32(p + 12) &&
			      gw_f32_bits(si.next) == gw_fuzz_ld32(p + 16));
		gw_sum_info sj;
		GW_FUZZ_CHECK(gw_sum_info_of(f, len, &sj) == 0);
		GW_FUZZ_CHECK(!memcmp(&si, &sj, sizeof(si)));
		float step = gw_bits_f32(gw_fuzz_ld32(p + 12)) / (float)((1u << (bits - 1)) - 1);
		for (uint32_t i = 0; i < count; i++) {
			int64_t c = code_at(pay, i, width);
			GW_FUZZ_CHECKF((int64_t)acc[i] - acc_pattern(i) == c,
				       "gw_sum_add: acc[%u] gained %lld, code %lld", i,
				       (long long)acc[i] - acc_pattern(i), (long long)c);
			if (flags & HQ_POISON)
				GW_FUZZ_CHECKF(isnan(win[i]), "hq poisoned: element %u is %a", i,
					       (double)win[i]);
			else if (!(flags & HQ_ROTATED))
				GW_FUZZ_CHECKF(gw_f32_bits(win[i]) ==
						       gw_f32_bits((float)c * step),
					       "hq element %u: %a, want %a", i, (double)win[i],
					       (double)((float)c * step));
		}
	}
	free(win);
	free(acc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_fuzz_codec hq = {
		.name = "hq", .id = GW_CODEC_HQ,
		.param_len = HQ_PLEN, .value_bytes = 0, .accepted = hq_accepted,
	};
	gw_fuzz_decoder(&hq, data, size);
	int keep = gw_fuzz_last_rc;   /* the as-is verdict, for regress_main */

	uint8_t sel = size > GW_FUZZ_OFF_CHECKSUM + 3 ? data[GW_FUZZ_OFF_CHECKSUM + 3] : 0;
	uint8_t *f = malloc(GW_FRAME_HDR_LEN + HQ_PLEN + GW_FRAME_MAX + size);
	GW_FUZZ_CHECK(f);
	for (int pass = 0; pass < 2; pass++) {
		size_t len = size;
		if (pass)
			len = reseal(data, size, f, sel);
		else if (size)
			memcpy(f, data, size);
		/* exactly len bytes, so that ASan sees a read past the frame */
		uint8_t *exact = malloc(len ? len : 1);
		GW_FUZZ_CHECK(exact);
		memcpy(exact, f, len);
		sum_step(exact, len, pass ? sel : 0);
		free(exact);
	}
	free(f);
	gw_fuzz_last_rc = keep;
	return 0;
}
