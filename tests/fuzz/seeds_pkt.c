/* Seeds of fuzz_pkt.c, the packet header and the types the stream and
 * the collective register.
 *
 * Packet seeds (fuzz_pkt.c) are valid DATA (plain, LAST, RETX, FRAME with
 * a real frame, the empty-tensor marker), ACK, UP and RESULT packets (real
 * frames, with and without a MAC, bitmaps of 1 to 255 bytes), copies whose
 * checksum field is a control word of fuzz_pkt.c, and the payload-length
 * limits (64 KiB each, so generated, not committed). The MACs are random
 * bytes: the packet parser only makes room for them (the aggregation
 * layer, with the job key, verifies them). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "seeds_common.h"
#include "seeds_pkt.h"

/* ---- building packets (seeds_pkt.h) ------------------------------------ */

size_t mc_make_pkt(uint8_t *out, const gw_pkt_hdr *h, const uint8_t *payload,
		   size_t plen)
{
	if (plen)
		memmove(out + GW_PKT_HDR_LEN, payload, plen);
	gw_pkt_write(out, h, gw_pkt_payload_seed(h->flags, h->sack_len,
						 out + GW_PKT_HDR_LEN, plen));
	return GW_PKT_HDR_LEN + plen;
}

gw_pkt_hdr mc_pkt_data(uint32_t chunk, uint8_t flags)
{
	return (gw_pkt_hdr){.type = GW_PKT_DATA, .flags = flags, .rank = 3,
			    .job = 0x6a6f6231u, .round = 17, .tensor = 5,
			    .chunk = chunk, .seq = 1000 + chunk};
}

gw_pkt_hdr mc_pkt_ack(uint32_t cum, uint8_t sack_len)
{
	return (gw_pkt_hdr){.type = GW_PKT_ACK, .sack_len = sack_len, .rank = 4,
			    .job = 0x6a6f6231u, .round = 17, .tensor = 5,
			    .chunk = cum, .seq = 77};
}

gw_pkt_hdr mc_pkt_up(uint32_t chunk, uint8_t flags)
{
	return (gw_pkt_hdr){.type = GW_PKT_UP, .flags = GW_PKT_F_FRAME | flags,
			    .rank = 2, .job = 0x6a6f6231u, .round = 17, .tensor = 0,
			    .chunk = chunk, .seq = 500 + chunk};
}

gw_pkt_hdr mc_pkt_result(uint32_t chunk, uint8_t flags, uint8_t sack_len)
{
	return (gw_pkt_hdr){.type = GW_PKT_RESULT, .flags = GW_PKT_F_FRAME | flags,
			    .sack_len = sack_len, .rank = 1, .job = 0x6a6f6231u,
			    .round = 17, .tensor = 0, .chunk = chunk, .seq = 900 + chunk};
}

size_t mc_agg_payload(uint8_t *out, const uint8_t *bitmap, size_t bm,
		      const uint8_t *frame, size_t flen, bool mac)
{
	if (bm)
		memcpy(out, bitmap, bm);
	memcpy(out + bm, frame, flen);
	if (mac)
		mc_random_bytes(out + bm + flen, GW_PKT_MAC_LEN);
	return bm + flen + (mac ? GW_PKT_MAC_LEN : 0);
}

void mc_sack_bitmap(uint8_t *b, size_t n)
{
	mc_random_bytes(b, n);
	if (n)
		b[0] &= 0xfe;
}

/* ---- seeds ------------------------------------------------------------- */

/* UP and RESULT seeds, appended after the others (whose bytes do not
 * change with them); p and pay hold GW_PKT_HDR_LEN + room and room bytes. */
static void seeds_pkt_agg(uint8_t *p, uint8_t *pay, size_t room)
{
	uint8_t frame[GW_FRAME_MAX], bm[255];
	char fname[96];
	size_t len, plen;
	gw_pkt_hdr h;

	/* UP: real frames, every allowed flag, the largest chunk number */
	static const struct {
		uint32_t chunk;
		uint8_t flags;
		unsigned n;
	} ups[] = {
		{0, 0, 8},
		{1, GW_PKT_F_MAC, 8},
		{2, GW_PKT_F_RETX | GW_PKT_F_MAC, 100},
		{3, GW_PKT_F_RETX, 40},
		{0xfffffffeu, GW_PKT_F_MAC, 8},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(ups); i++) {
		size_t flen = mc_valid_frame(GW_CODEC_RAW, 0, ups[i].n, frame);
		plen = mc_agg_payload(pay, NULL, 0, frame, flen,
				      ups[i].flags & GW_PKT_F_MAC);
		h = mc_pkt_up(ups[i].chunk, ups[i].flags);
		len = mc_make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "up-c%u-f%u-n%u", ups[i].chunk,
			 h.flags, ups[i].n);
		mc_write_file("pkt", fname, p, len);
	}
	/* RESULT: bitmaps of 4, 12 (one missing), 1024 and 2040 workers */
	static const struct {
		uint32_t chunk;
		uint8_t flags, sack_len;
	} results[] = {
		{0, 0, 1},
		{5, GW_PKT_F_MAC, 2},
		{6, GW_PKT_F_MAC, 128},
		{7, GW_PKT_F_RETX | GW_PKT_F_MAC, 255},
		{0xfffffffeu, 0, 16},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(results); i++) {
		uint8_t sl = results[i].sack_len;
		memset(bm, 0xff, sl);
		if (sl == 1)
			bm[0] = 0x0f;
		else if (sl == 2)
			bm[1] = 0x0b;    /* workers 8..11 but 10 */
		else if (sl == 255)
			mc_random_bytes(bm, sl);
		size_t flen = mc_valid_frame(GW_CODEC_RAW, 0, 8 + 8 * i, frame);
		plen = mc_agg_payload(pay, bm, sl, frame, flen,
				      results[i].flags & GW_PKT_F_MAC);
		h = mc_pkt_result(results[i].chunk, results[i].flags, sl);
		len = mc_make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "result-c%u-f%u-s%u", results[i].chunk,
			 h.flags, sl);
		mc_write_file("pkt", fname, p, len);
	}

	/* control words: header bit (low byte), payload bit (the rest) */
	static const struct {
		uint8_t type, flags;
		uint32_t hbit, pbit;   /* pbit ~0: the payload's last bit */
		const char *what;
	} ctrl[] = {
		{GW_PKT_UP, GW_PKT_F_MAC, 35, 0, "mac-flag"},
		{GW_PKT_UP, 0, 25, 300, "type-to-data"},
		{GW_PKT_UP, GW_PKT_F_MAC, 40, ~0u, "sack-len-mac"},
		{GW_PKT_RESULT, 0, 40, 3, "sack-len-bitmap"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 26, ~0u, "type-mac"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 34, 17, "frame-flag-bitmap"},
	};
	size_t flen = mc_valid_frame(GW_CODEC_RAW, 0, 16, frame);
	static const uint8_t bm3[3] = {0xff, 0xfd, 0x03};   /* 18 workers, 9 out */
	for (size_t i = 0; i < GW_ARRAY_SIZE(ctrl); i++) {
		bool res = ctrl[i].type == GW_PKT_RESULT;
		plen = mc_agg_payload(pay, bm3, res ? 3 : 0, frame, flen,
				      ctrl[i].flags & GW_PKT_F_MAC);
		h = res ? mc_pkt_result(4, ctrl[i].flags, 3) : mc_pkt_up(4, ctrl[i].flags);
		len = mc_make_pkt(p, &h, pay, plen);
		uint32_t pbit = ctrl[i].pbit == ~0u ? 8u * (uint32_t)plen - 1 : ctrl[i].pbit;
		uint32_t c = pbit << 8 | ctrl[i].hbit;
		gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM, c);
		snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s", c, res ? "result" : "up",
			 ctrl[i].what);
		mc_write_file("pkt", fname, p, len);
	}

	/* the frame-length limit, beside a bitmap and a MAC: random bytes,
	 * which the parser does not read as a frame */
	static const struct {
		uint8_t type, flags, sack_len;
		size_t frame;
		const char *code;
	} lim[] = {
		{GW_PKT_UP, 0, 0, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_UP, 0, 0, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_UP, GW_PKT_F_MAC, 0, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_UP, GW_PKT_F_MAC, 0, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 128, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_RESULT, GW_PKT_F_MAC, 128, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
		{GW_PKT_RESULT, 0, 255, GW_PKT_PAYLOAD_MAX, "ok"},
		{GW_PKT_RESULT, 0, 255, GW_PKT_PAYLOAD_MAX + 1, "GW_ELENGTH"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(lim); i++) {
		bool res = lim[i].type == GW_PKT_RESULT;
		plen = lim[i].sack_len + lim[i].frame +
		       ((lim[i].flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0);
		if (plen > room)
			exit(1);
		mc_random_bytes(pay, plen);
		h = res ? mc_pkt_result(8, lim[i].flags, lim[i].sack_len)
			: mc_pkt_up(8, lim[i].flags);
		len = mc_make_pkt(p, &h, pay, plen);
		snprintf(fname, sizeof(fname), "%s-f%u-s%u-frame-%zu.%s",
			 res ? "result" : "up", h.flags, lim[i].sack_len, lim[i].frame,
			 lim[i].code);
		mc_write_file("pkt", fname, p, len);
	}
}

void seeds_pkt(void)
{
	/* room for the largest RESULT: a 255-byte bitmap, a frame one byte
	 * above the limit, a MAC */
	enum { PAY_MAX = 255 + GW_PKT_PAYLOAD_MAX + 1 + GW_PKT_MAC_LEN };
	static uint8_t p[GW_PKT_HDR_LEN + PAY_MAX];
	static uint8_t pay[PAY_MAX];
	uint8_t frame[GW_FRAME_MAX];
	char fname[96];
	size_t len;
	mc_reseed("pkt");

	/* DATA: sizes up to a jumbo frame's budget, every flag */
	static const struct {
		uint32_t chunk;
		uint8_t flags;
		size_t plen;
	} data[] = {
		{0, 0, 1},
		{1, 0, 100},
		{2, GW_PKT_F_RETX, 1424},
		{41, GW_PKT_F_LAST, 64},
		{7, GW_PKT_F_LAST | GW_PKT_F_RETX, 8924},
		{0xfffffffeu, GW_PKT_F_LAST, 3},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(data); i++) {
		mc_random_bytes(pay, data[i].plen);
		gw_pkt_hdr h = mc_pkt_data(data[i].chunk, data[i].flags);
		len = mc_make_pkt(p, &h, pay, data[i].plen);
		snprintf(fname, sizeof(fname), "data-c%u-f%u-n%zu", data[i].chunk,
			 data[i].flags, data[i].plen);
		mc_write_file("pkt", fname, p, len);
	}
	/* DATA flagged FRAME, carrying real frames */
	for (int kind = 0; kind < 3; kind++) {
		size_t flen = mc_valid_frame(GW_CODEC_RAW, kind, 8 + 20 * kind, frame);
		uint8_t fl = (uint8_t)(GW_PKT_F_FRAME | (kind == 1 ? GW_PKT_F_LAST : 0) |
				       (kind == 2 ? GW_PKT_F_RETX : 0));
		gw_pkt_hdr h = mc_pkt_data((uint32_t)kind * 3, fl);
		len = mc_make_pkt(p, &h, frame, flen);
		snprintf(fname, sizeof(fname), "data-frame-kind%d-f%u", kind, fl);
		mc_write_file("pkt", fname, p, len);
	}
	/* the empty-tensor marker, plain and FRAME */
	gw_pkt_hdr h = mc_pkt_data(0, GW_PKT_F_LAST);
	len = mc_make_pkt(p, &h, NULL, 0);
	mc_write_file("pkt", "data-empty-tensor", p, len);
	h = mc_pkt_data(0, GW_PKT_F_LAST | GW_PKT_F_FRAME);
	len = mc_make_pkt(p, &h, NULL, 0);
	mc_write_file("pkt", "data-empty-tensor-frame", p, len);

	/* ACK: no bitmap, short, the window's, the largest, at the limit */
	static const struct {
		uint32_t cum;
		uint8_t sack_len;
	} acks[] = {{0, 0}, {16, 0}, {3, 1}, {100, 32}, {1000, 128},
		    {0xffffffffu - 8 * 16, 16}, {0xffffffffu, 0}};
	for (size_t i = 0; i < GW_ARRAY_SIZE(acks); i++) {
		mc_sack_bitmap(pay, acks[i].sack_len);
		h = mc_pkt_ack(acks[i].cum, acks[i].sack_len);
		len = mc_make_pkt(p, &h, pay, acks[i].sack_len);
		snprintf(fname, sizeof(fname), "ack-c%u-s%u", acks[i].cum,
			 acks[i].sack_len);
		mc_write_file("pkt", fname, p, len);
	}

	/* control words: the derived packet's header bit (low byte) and
	 * payload bit; the packet as it is then fails its checksum */
	static const struct {
		uint32_t ctrl;
		uint8_t type, flags;
		const char *what;
	} ctrl[] = {
		{0x00000000u, GW_PKT_DATA, 0, "magic"},
		{0x00000011u, GW_PKT_ACK, 0, "version"},
		{0x00000018u, GW_PKT_DATA, GW_PKT_F_FRAME, "type"},
		{0x00000022u, GW_PKT_DATA, GW_PKT_F_FRAME, "frame-flag"},
		{0x0000002bu, GW_PKT_ACK, 0, "sack-len"},
		{0x000000a0u, GW_PKT_DATA, GW_PKT_F_LAST, "chunk"},
		{0x000001e0u, GW_PKT_ACK, 0, "checksum"},
		{0x00012345u, GW_PKT_DATA, GW_PKT_F_FRAME, "job"},
	};
	mc_random_bytes(pay, 200);
	for (size_t i = 0; i < GW_ARRAY_SIZE(ctrl); i++) {
		bool ack = ctrl[i].type == GW_PKT_ACK;
		h = ack ? mc_pkt_ack(9, 24) : mc_pkt_data(9, ctrl[i].flags);
		if (ack)
			pay[0] &= 0xfe;
		len = mc_make_pkt(p, &h, pay, ack ? 24 : 200);
		gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM, ctrl[i].ctrl);
		snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s", ctrl[i].ctrl,
			 ack ? "ack" : "data", ctrl[i].what);
		mc_write_file("pkt", fname, p, len);
	}

	/* the payload-length limit; names say what the parse must return */
	mc_random_bytes(pay, GW_PKT_PAYLOAD_MAX + 1);
	h = mc_pkt_data(5, 0);
	len = mc_make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX);
	mc_write_file("pkt", "data-payload-65535.ok", p, len);
	len = mc_make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX + 1);
	mc_write_file("pkt", "data-payload-65536.GW_ELENGTH", p, len);
	h = mc_pkt_data(5, GW_PKT_F_FRAME);
	len = mc_make_pkt(p, &h, pay, GW_PKT_PAYLOAD_MAX + 1);
	mc_write_file("pkt", "data-frame-payload-65536.GW_ELENGTH", p, len);

	static const uint8_t shorts[] = {'G', 'P', 1};
	mc_write_file("pkt", "short-3", shorts, sizeof(shorts));
	mc_write_file("pkt", "empty", "", 0);

	seeds_pkt_agg(p, pay, PAY_MAX);
}
