/* The hostile packets of make_corpus --hostile, committed in
 * tests/fuzz/regress/pkt/: packets (§5 of docs/wire-format.md) broken the
 * way hostile_frame.c breaks frames, each named <what>.<GW_E code> (or
 * .ok) for regress_main to check. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "seeds_common.h"
#include "seeds_pkt.h"

/* Re-seals a packet whose header bytes were changed after gw_pkt_write()
 * (magic, version: fields gw_pkt_write() does not take), as §5.3 says. */
static void reseal_pkt(uint8_t *p, size_t len)
{
	size_t plen = len - GW_PKT_HDR_LEN;
	uint8_t type = p[GW_PKT_OFF_TYPE];
	bool frame = p[GW_PKT_OFF_FLAGS] & GW_PKT_F_FRAME;
	uint64_t seed;
	if (frame && (type == GW_PKT_DATA || type == GW_PKT_UP))
		seed = (uint64_t)plen;
	else if (frame && type == GW_PKT_RESULT)
		seed = XXH3_64bits_withSeed(p + GW_PKT_HDR_LEN,
					    p[GW_PKT_OFF_SACK_LEN], (uint64_t)plen);
	else
		seed = XXH3_64bits(p + GW_PKT_HDR_LEN, plen);
	gw_fuzz_st32(p + GW_PKT_OFF_CHECKSUM,
		     (uint32_t)XXH3_64bits_withSeed(p, GW_PKT_OFF_CHECKSUM, seed));
}

static void put_pkt(const char *what, const char *code, const uint8_t *p,
		    size_t len)
{
	char fname[256];
	snprintf(fname, sizeof(fname), "%s.%s", what, code);
	mc_write_file("pkt", fname, p, len);
}

/* The UP and RESULT part of hostile_pkt(), after the rest (whose bytes do
 * not change with it): valid packets with and without a MAC (random bytes;
 * the parser only makes room for it), each rule of UP and RESULT broken
 * once, and the parts of the payload the packet checksum does and does
 * not read. */
static void hostile_pkt_agg(void)
{
	uint8_t p[1024], pay[512], frame[256], pay2[512];
	size_t len, plen, flen;
	gw_pkt_hdr h;
	static const uint8_t bm1[1] = {0x07};           /* 3 workers, all in */
	static const uint8_t bm2[2] = {0xff, 0x05};     /* 11 workers, 9 out */
	flen = mc_valid_frame(GW_CODEC_RAW, 0, 8, frame);

	/* valid */
	plen = mc_agg_payload(pay, NULL, 0, frame, flen, false);
	h = mc_pkt_up(3, 0);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up", "ok", p, len);
	put_pkt("up-truncated", "GW_ECHECKSUM", p, len - 1);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 5] ^= 0x20;
	put_pkt("up-frame-flip", "ok", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_FLAGS] |= GW_PKT_F_MAC;
	put_pkt("up-mac-flag-set", "GW_ECHECKSUM", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_TYPE] = GW_PKT_DATA;
	put_pkt("up-as-data", "GW_ECHECKSUM", p, len);

	plen = mc_agg_payload(pay, NULL, 0, frame, flen, true);
	h = mc_pkt_up(3, GW_PKT_F_MAC);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-mac", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 1] ^= 0x01;
	put_pkt("up-mac-flip", "ok", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_FLAGS] &= (uint8_t)~GW_PKT_F_MAC;
	put_pkt("up-mac-flag-cleared", "GW_ECHECKSUM", p, len);
	h = mc_pkt_up(4, GW_PKT_F_RETX | GW_PKT_F_MAC);
	len = mc_make_pkt(p, &h, pay2, plen);
	put_pkt("up-retx-mac", "ok", p, len);

	plen = mc_agg_payload(pay, bm1, 1, frame, flen, false);
	h = mc_pkt_result(3, 0, 1);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[GW_PKT_HDR_LEN] ^= 0x08;   /* a fourth contributor */
	put_pkt("result-bitmap-flip", "GW_ECHECKSUM", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[len - 5] ^= 0x20;
	put_pkt("result-frame-flip", "ok", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[len] = 0;
	put_pkt("result-trailing-byte", "GW_ECHECKSUM", p, len + 1);

	plen = mc_agg_payload(pay, bm2, 2, frame, flen, true);
	h = mc_pkt_result(3, GW_PKT_F_MAC, 2);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-mac", "ok", p, len);
	memcpy(pay2, p + GW_PKT_HDR_LEN, plen);
	p[len - 16] ^= 0x80;
	put_pkt("result-mac-flip", "ok", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[GW_PKT_HDR_LEN + 1] ^= 0x04;   /* worker 10 */
	put_pkt("result-mac-bitmap-flip", "GW_ECHECKSUM", p, len);
	len = mc_make_pkt(p, &h, pay2, plen);
	p[GW_PKT_OFF_SACK_LEN] = 1;      /* still room for all of it */
	put_pkt("result-sack-len-changed", "GW_ECHECKSUM", p, len);

	/* chunk numbers */
	plen = mc_agg_payload(pay, NULL, 0, frame, flen, true);
	h = mc_pkt_up(0xfffffffeu, GW_PKT_F_MAC);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-chunk-max", "ok", p, len);
	h = mc_pkt_up(0xffffffffu, GW_PKT_F_MAC);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-chunk-limit", "GW_ERANGE", p, len);
	plen = mc_agg_payload(pay, bm1, 1, frame, flen, false);
	h = mc_pkt_result(0xffffffffu, 0, 1);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-chunk-limit", "GW_ERANGE", p, len);

	/* flags */
	plen = mc_agg_payload(pay, NULL, 0, frame, flen, false);
	h = mc_pkt_up(3, 0);
	h.flags = 0;
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-no-frame", "GW_ERESERVED", p, len);
	h = mc_pkt_up(3, GW_PKT_F_LAST);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-last", "GW_ERESERVED", p, len);
	h = mc_pkt_up(3, 0x10);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-flag-4", "GW_ERESERVED", p, len);
	h = mc_pkt_up(3, 0);
	h.sack_len = 1;
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("up-sack-len", "GW_ERESERVED", p, len);
	plen = mc_agg_payload(pay, bm1, 1, frame, flen, false);
	h = mc_pkt_result(3, 0, 1);
	h.flags = GW_PKT_F_MAC;
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-no-frame", "GW_ERESERVED", p, len);
	h = mc_pkt_result(3, GW_PKT_F_LAST, 1);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-last", "GW_ERESERVED", p, len);
	h = mc_pkt_result(3, 0x80, 1);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-flag-7", "GW_ERESERVED", p, len);
	/* MAC is no flag of DATA or ACK */
	h = mc_pkt_data(3, GW_PKT_F_FRAME | GW_PKT_F_MAC);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("data-frame-mac", "GW_ERESERVED", p, len);
	h = mc_pkt_ack(12, 0);
	h.flags = GW_PKT_F_MAC;
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("ack-mac-flag", "GW_ERESERVED", p, len);
	h = mc_pkt_up(3, 0);
	h.type = 5;
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("type-5", "GW_ERESERVED", p, len);

	/* lengths: bitmap, one frame byte at least, MAC */
	h = mc_pkt_result(3, 0, 0);
	plen = mc_agg_payload(pay, NULL, 0, frame, flen, false);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-sack-len-0", "GW_ELENGTH", p, len);
	h = mc_pkt_up(3, 0);
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("up-empty", "GW_ELENGTH", p, len);
	h = mc_pkt_up(3, GW_PKT_F_MAC);
	mc_random_bytes(pay, GW_PKT_MAC_LEN + 1);
	len = mc_make_pkt(p, &h, pay, GW_PKT_MAC_LEN);
	put_pkt("up-mac-only", "GW_ELENGTH", p, len);
	len = mc_make_pkt(p, &h, pay, GW_PKT_MAC_LEN + 1);
	put_pkt("up-mac-one-byte", "ok", p, len);
	len = mc_make_pkt(p, &h, pay, 9);
	put_pkt("up-mac-short", "GW_ELENGTH", p, len);
	h = mc_pkt_result(3, 0, 2);
	len = mc_make_pkt(p, &h, bm2, 2);
	put_pkt("result-bitmap-only", "GW_ELENGTH", p, len);
	h = mc_pkt_result(3, GW_PKT_F_MAC, 2);
	plen = mc_agg_payload(pay, bm2, 2, frame, 0, true);
	len = mc_make_pkt(p, &h, pay, plen);
	put_pkt("result-bitmap-mac-only", "GW_ELENGTH", p, len);
	h = mc_pkt_result(3, 0, 16);
	len = mc_make_pkt(p, &h, bm2, 2);
	put_pkt("result-bitmap-cut", "GW_ELENGTH", p, len);
}

/* Committed packets of fuzz_pkt.c: the valid kinds, and each rule of §5.1
 * broken once, in a packet sealed otherwise (a checksum that matches). */
void hostile_pkt(void)
{
	uint8_t p[1024], pay[256], frame[1024];
	size_t len;
	gw_pkt_hdr h;
	mc_reseed("hostile-pkt");

	mc_random_bytes(pay, sizeof(pay));
	h = mc_pkt_data(5, 0);
	len = mc_make_pkt(p, &h, pay, 40);
	put_pkt("data", "ok", p, len);
	put_pkt("empty", "GW_ETRUNC", p, 0);
	put_pkt("truncated-header", "GW_ETRUNC", p, GW_PKT_HDR_LEN - 1);
	put_pkt("data-truncated", "GW_ECHECKSUM", p, len - 1);
	p[len] = 0;
	put_pkt("data-trailing-byte", "GW_ECHECKSUM", p, len + 1);
	p[GW_PKT_HDR_LEN + 17] ^= 0x10;
	put_pkt("data-payload-bit-flip", "GW_ECHECKSUM", p, len);
	len = mc_make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_CHUNK] ^= 0x01;   /* chunk 5 -> 4: never marks another */
	put_pkt("data-chunk-flipped", "GW_ECHECKSUM", p, len);

	len = mc_make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_MAGIC + 1] = 'W';   /* a frame's magic, "GW" */
	reseal_pkt(p, len);
	put_pkt("frame-magic", "GW_EMAGIC", p, len);
	len = mc_make_pkt(p, &h, pay, 40);
	p[GW_PKT_OFF_VERSION] = 2;
	reseal_pkt(p, len);
	put_pkt("version-2", "GW_EVERSION", p, len);
	h.type = 0;
	len = mc_make_pkt(p, &h, pay, 40);
	put_pkt("type-0", "GW_ERESERVED", p, len);
	h = mc_pkt_data(5, 0x08);
	len = mc_make_pkt(p, &h, pay, 40);
	put_pkt("data-reserved-flag", "GW_ERESERVED", p, len);
	h = mc_pkt_data(5, 0);
	h.sack_len = 4;
	len = mc_make_pkt(p, &h, pay, 40);
	put_pkt("data-sack-len", "GW_ERESERVED", p, len);

	h = mc_pkt_data(9, GW_PKT_F_LAST | GW_PKT_F_RETX);
	len = mc_make_pkt(p, &h, pay, 64);
	put_pkt("data-last-retx", "ok", p, len);
	h = mc_pkt_data(0xfffffffeu, 0);
	len = mc_make_pkt(p, &h, pay, 8);
	put_pkt("data-chunk-max", "ok", p, len);
	h = mc_pkt_data(0xffffffffu, GW_PKT_F_LAST);
	len = mc_make_pkt(p, &h, pay, 8);
	put_pkt("data-chunk-limit", "GW_ERANGE", p, len);

	/* FRAME: the packet checksum covers the length, not the frame */
	size_t flen = mc_valid_frame(GW_CODEC_RAW, 0, 8, frame);
	h = mc_pkt_data(0, GW_PKT_F_FRAME);
	len = mc_make_pkt(p, &h, frame, flen);
	put_pkt("data-frame", "ok", p, len);
	p[len - 3] ^= 0x04;
	put_pkt("data-frame-payload-flip", "ok", p, len);
	put_pkt("data-frame-truncated", "GW_ECHECKSUM", p, len - 1);

	/* the empty-tensor marker, and empty DATA that is not it */
	h = mc_pkt_data(0, GW_PKT_F_LAST);
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("empty-tensor-marker", "ok", p, len);
	h = mc_pkt_data(0, 0);
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("data-empty-not-last", "GW_ELENGTH", p, len);
	h = mc_pkt_data(1, GW_PKT_F_LAST);
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("data-empty-chunk-1", "GW_ELENGTH", p, len);

	/* ACK */
	h = mc_pkt_ack(12, 0);
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("ack-cumulative-only", "ok", p, len);
	static const uint8_t bm[4] = {0xfe, 0x00, 0x81, 0x00};
	h = mc_pkt_ack(12, 4);
	len = mc_make_pkt(p, &h, bm, 4);
	put_pkt("ack-sack", "ok", p, len);
	mc_sack_bitmap(pay, 128);
	h = mc_pkt_ack(1000, 128);
	len = mc_make_pkt(p, &h, pay, 128);
	put_pkt("ack-sack-max", "ok", p, len);
	h = mc_pkt_ack(0xffffffffu - 8 * 2, 2);
	len = mc_make_pkt(p, &h, pay, 2);
	put_pkt("ack-chunk-at-limit", "ok", p, len);
	h = mc_pkt_ack(0xffffffffu - 8 * 2 + 1, 2);
	len = mc_make_pkt(p, &h, pay, 2);
	put_pkt("ack-chunk-overflow", "GW_ERANGE", p, len);
	h = mc_pkt_ack(12, 0);
	h.flags = GW_PKT_F_LAST;
	len = mc_make_pkt(p, &h, NULL, 0);
	put_pkt("ack-flag", "GW_ERESERVED", p, len);
	mc_random_bytes(pay, 129);
	h = mc_pkt_ack(12, 129);
	len = mc_make_pkt(p, &h, pay, 129);
	put_pkt("ack-sack-len-129", "GW_ELENGTH", p, len);
	h = mc_pkt_ack(12, 4);
	len = mc_make_pkt(p, &h, bm, 4);
	p[len] = 0;
	put_pkt("ack-sack-len-mismatch", "GW_ELENGTH", p, len + 1);
	static const uint8_t self[2] = {0x01, 0x00};
	h = mc_pkt_ack(12, 2);
	len = mc_make_pkt(p, &h, self, 2);
	put_pkt("ack-sacks-cumulative", "GW_ECORRUPT", p, len);

	hostile_pkt_agg();
}
