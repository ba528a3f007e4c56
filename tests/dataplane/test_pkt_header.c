/* The 32-byte packet header (docs/wire-format.md §5): fields round-trip;
 * every hostile packet — short at every length, wrong magic, version or
 * type, reserved bits, bad lengths, out-of-range chunk numbers, every
 * single-bit flip of a real DATA packet (a real frame) and of an ACK — is
 * rejected without reading past its end (each packet ends at a PROT_NONE
 * page). The aggregation's UP and RESULT packets (§5.6, §5.7), with and
 * without a MAC: valid ones parse reading only the header and a RESULT's
 * contributor bitmap, and each of their rules broken once is rejected with
 * its code. Then the same packets go over UDP to a stream that is
 * receiving: each is dropped and counted exactly once (bad, corrupt,
 * foreign, stale; UP and RESULT are bad there), none is delivered, and a
 * real tensor sent after them arrives intact. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gw/dataplane.h>
#include <gw/stream.h>

#include <gw/wire.h>

#include "../gw_test.h"
#include "coll_internal.h"
#include "stream_internal.h"

#define JOB 7u
#define ROUND 1u
#define TENSOR 3u

/* A real frame: the first one of a CNN trace tensor, raw codec. */
static gw_test_frames frames;
static gw_test_guard guard;

static int setup(void **state)
{
	(void)state;
	/* The header knows no type: the stream and the collective register
	 * theirs, as a process that makes a stream and a communicator does. */
	GW_OK_CALL(gw_stream_wire_register());
	GW_OK_CALL(coll_wire_register());
	gw_test_dense d;
	gw_test_load_dense(2, &d);   /* cnn conv2.weight, 4608 floats */
	gw_tensor t = gw_test_dense_tensor(TENSOR, d.v, d.n);
	gw_encoder *e = gw_test_encoder(GW_CODEC_RAW);
	GW_OK_CALL(gw_test_encode_all(e, &t, 1500 - GW_PKT_RESERVE, &frames));
	gw_encoder_free(e);
	gw_test_dense_free(&d);
	GW_CHECK(frames.n > 3, "expected several frames, got %zu", frames.n);
	/* the largest packet tested: a RESULT with a 255-byte bitmap, a frame
	 * one byte above the limit and a MAC */
	gw_test_guard_alloc(&guard, GW_PKT_HDR_LEN + 255 + GW_PKT_PAYLOAD_MAX + 1 +
					    GW_PKT_MAC_LEN);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	gw_test_frames_free(&frames);
	gw_test_guard_free(&guard);
	return 0;
}

/* Builds a packet into buf; returns its length. */
static size_t make_data(uint8_t *buf, uint32_t job, uint32_t round, uint32_t tensor,
			uint32_t chunk, uint8_t flags, const uint8_t *frame, size_t flen)
{
	if (flen)
		memcpy(buf + GW_PKT_HDR_LEN, frame, flen);
	gw_pkt_hdr h = {.type = GW_PKT_DATA, .flags = flags, .rank = 5, .job = job,
			.round = round, .tensor = tensor, .chunk = chunk, .seq = 1234};
	gw_pkt_write(buf, &h, gw_pkt_payload_seed(flags, 0, buf + GW_PKT_HDR_LEN, flen));
	return GW_PKT_HDR_LEN + flen;
}

static size_t make_ack(uint8_t *buf, uint32_t job, uint32_t cum, const uint8_t *sack,
		       uint8_t sack_len)
{
	if (sack_len)
		memcpy(buf + GW_PKT_HDR_LEN, sack, sack_len);
	gw_pkt_hdr h = {.type = GW_PKT_ACK, .sack_len = sack_len, .rank = 9, .job = job,
			.round = ROUND, .tensor = TENSOR, .chunk = cum, .seq = 77};
	gw_pkt_write(buf, &h, gw_pkt_payload_hash(buf + GW_PKT_HDR_LEN, sack_len));
	return GW_PKT_HDR_LEN + sack_len;
}

/* An UP (bm = 0, sack_len 0) or a RESULT (type GW_PKT_RESULT, bm bytes of
 * contributor bitmap) of the aggregation into buf: bitmap, frame, then 16
 * bytes in the place of the MAC when flags has GW_PKT_F_MAC (a fixed
 * pattern: the parser only makes room for it, the key is the collective
 * layer's). flags is sealed as given. Returns the packet's length. */
static size_t make_agg(uint8_t *buf, uint8_t type, uint8_t flags, uint32_t chunk,
		       const uint8_t *bitmap, uint8_t bm, const uint8_t *frame,
		       size_t flen)
{
	uint8_t *pay = buf + GW_PKT_HDR_LEN;
	if (bm)
		memcpy(pay, bitmap, bm);
	if (flen)
		memcpy(pay + bm, frame, flen);
	size_t plen = bm + flen;
	if (flags & GW_PKT_F_MAC) {
		for (unsigned i = 0; i < GW_PKT_MAC_LEN; i++)
			pay[plen + i] = (uint8_t)(0xa0 + i);
		plen += GW_PKT_MAC_LEN;
	}
	gw_pkt_hdr h = {.type = type, .flags = flags, .sack_len = bm,
			.rank = type == GW_PKT_UP ? 6 : 1, .job = JOB, .round = ROUND,
			.tensor = 0, .chunk = chunk, .seq = 4321};
	gw_pkt_write(buf, &h, gw_pkt_payload_seed(flags, bm, pay, plen));
	return GW_PKT_HDR_LEN + plen;
}

/* Re-seals the checksum after a field was changed on purpose. */
static void reseal(uint8_t *p, size_t len)
{
	gw_pkt_hdr h = {.type = p[GW_PKT_OFF_TYPE], .flags = p[GW_PKT_OFF_FLAGS],
			.sack_len = p[GW_PKT_OFF_SACK_LEN],
			.rank = (uint16_t)(p[6] | p[7] << 8),
			.job = gw_test_ld32(p + GW_PKT_OFF_JOB),
			.round = gw_test_ld32(p + GW_PKT_OFF_ROUND),
			.tensor = gw_test_ld32(p + GW_PKT_OFF_TENSOR),
			.chunk = gw_test_ld32(p + GW_PKT_OFF_CHUNK),
			.seq = gw_test_ld32(p + GW_PKT_OFF_SEQ)};
	gw_pkt_write(p, &h, gw_pkt_payload_seed(h.flags, h.sack_len, p + GW_PKT_HDR_LEN,
						 len - GW_PKT_HDR_LEN));
}

/* Parses a copy of p[0..len) that ends where a PROT_NONE page begins (one
 * guarded block, reused: the copy sits at its end). */

static int parse_guarded(const uint8_t *p, size_t len, gw_pkt_hdr *h)
{
	GW_CHECK(len <= guard.len, "packet of %zu bytes exceeds the guarded block", len);
	uint8_t *at = guard.p + guard.len - len;
	if (len)
		memcpy(at, p, len);
	return gw_pkt_parse(at, len, h);
}

static const uint8_t sack16[16] = {0x0e, 0, 0x81, 0xff, 0, 0, 0, 0x10,
				   0, 0, 0, 0, 0, 0, 0, 0x80};

static void test_roundtrip(void **state)
{
	(void)state;
	uint8_t buf[2048] = {0};
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 2, GW_PKT_F_LAST | GW_PKT_F_RETX,
			       frames.f[2].data, frames.f[2].len);
	GW_CHECK(len <= 1472, "a 1500-MTU frame must fit a 1472-byte UDP payload");
	GW_CHECK(buf[0] == 'G' && buf[1] == 'P' && buf[2] == 1 && buf[3] == 1,
		 "header starts 'G' 'P' version 1 type DATA");
	gw_pkt_hdr h;
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "valid DATA packet");
	GW_CHECK(h.type == GW_PKT_DATA && h.flags == (GW_PKT_F_LAST | GW_PKT_F_RETX) &&
		 h.rank == 5 && h.job == JOB && h.round == ROUND && h.tensor == TENSOR &&
		 h.chunk == 2 && h.seq == 1234 && h.sack_len == 0,
		 "DATA fields did not round-trip");
	/* Little-endian at the documented offsets. */
	GW_CHECK(gw_test_ld32(buf + GW_PKT_OFF_JOB) == JOB &&
		 gw_test_ld32(buf + GW_PKT_OFF_CHUNK) == 2 &&
		 gw_test_ld32(buf + GW_PKT_OFF_SEQ) == 1234 &&
		 buf[GW_PKT_OFF_RANK] == 5 && buf[GW_PKT_OFF_RANK + 1] == 0,
		 "fields not at their offsets");
	GW_CHECK(!memcmp(buf + GW_PKT_HDR_LEN, frames.f[2].data, frames.f[2].len),
		 "frame not right after the header");

	len = make_ack(buf, JOB, 1000, sack16, sizeof sack16);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "valid ACK packet");
	GW_CHECK(h.type == GW_PKT_ACK && h.flags == 0 && h.sack_len == 16 &&
		 h.rank == 9 && h.chunk == 1000 && h.seq == 77, "ACK fields did not round-trip");

	len = make_ack(buf, JOB, 5, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "ACK without a bitmap");

	/* The empty-tensor marker: chunk 0, LAST, no payload. */
	len = make_data(buf, JOB, ROUND, TENSOR, 0, GW_PKT_F_LAST, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "empty-tensor marker");
}

static void test_short(void **state)
{
	(void)state;
	uint8_t buf[2048] = {0}, ack[256] = {0};
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 1, 0, frames.f[1].data, frames.f[1].len);
	size_t alen = make_ack(ack, JOB, 3, sack16, sizeof sack16);
	gw_pkt_hdr h;
	for (size_t l = 0; l < len; l++) {
		int rc = parse_guarded(buf, l, &h);
		GW_CHECK(rc == (l < GW_PKT_HDR_LEN ? GW_ETRUNC : GW_ECHECKSUM),
			 "DATA cut to %zu of %zu bytes: %s", l, len, gw_error_name(rc));
	}
	for (size_t l = 0; l < alen; l++) {
		int rc = parse_guarded(ack, l, &h);
		GW_CHECK(rc == (l < GW_PKT_HDR_LEN ? GW_ETRUNC : GW_ELENGTH),
			 "ACK cut to %zu of %zu bytes: %s", l, alen, gw_error_name(rc));
	}
	/* One byte too many. */
	buf[len] = 0;
	GW_EXPECT_RC(parse_guarded(buf, len + 1, &h), GW_ECHECKSUM, "DATA with a trailing byte");
	ack[alen] = 0;
	GW_EXPECT_RC(parse_guarded(ack, alen + 1, &h), GW_ELENGTH, "ACK with a trailing byte");
}

static void test_fields(void **state)
{
	(void)state;
	uint8_t buf[2048] = {0}, p[2048] = {0};
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 1, 0, frames.f[1].data, frames.f[1].len);
	gw_pkt_hdr h;
	for (unsigned m = 0; m < 65536; m += 97) {
		if (m == GW_PKT_MAGIC)
			continue;
		memcpy(p, buf, len);
		p[0] = (uint8_t)m;
		p[1] = (uint8_t)(m >> 8);
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_EMAGIC, "magic 0x%04x", m);
	}
	for (unsigned v = 0; v < 256; v++) {
		if (v == GW_PKT_VERSION)
			continue;
		memcpy(p, buf, len);
		p[GW_PKT_OFF_VERSION] = (uint8_t)v;
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_EVERSION, "version %u", v);
	}
	/* Every other type, UP and RESULT included: this packet has no FRAME
	 * flag, which they need (test_agg_rules). CTRL takes no flag but MAC,
	 * and exactly 160 bytes (+ MAC), which this one is not. */
	for (unsigned t = 0; t < 256; t++) {
		if (t == GW_PKT_DATA || t == GW_PKT_ACK)
			continue;
		memcpy(p, buf, len);
		p[GW_PKT_OFF_TYPE] = (uint8_t)t;
		reseal(p, len);
		int want = t == GW_PKT_CTRL && !(p[GW_PKT_OFF_FLAGS] & ~GW_PKT_F_MAC) ? GW_ELENGTH
										 : GW_ERESERVED;
		GW_EXPECT_RC(parse_guarded(p, len, &h), want, "type %u", t);
	}
	for (unsigned b = 3; b < 8; b++) {
		memcpy(p, buf, len);
		p[GW_PKT_OFF_FLAGS] |= (uint8_t)(1u << b);
		reseal(p, len);
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ERESERVED, "DATA flag bit %u", b);
	}
	for (unsigned v = 1; v < 256; v++) {
		memcpy(p, buf, len);
		p[GW_PKT_OFF_SACK_LEN] = (uint8_t)v;
		reseal(p, len);
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ERESERVED, "DATA with byte 5 = %u", v);
	}
	/* DATA chunk numbers and the empty payload. */
	memcpy(p, buf, len);
	gw_test_st32(p + GW_PKT_OFF_CHUNK, 0xffffffffu);
	reseal(p, len);
	GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ERANGE, "DATA chunk 2^32-1");
	size_t e = make_data(p, JOB, ROUND, TENSOR, 1, GW_PKT_F_LAST, NULL, 0);
	GW_EXPECT_RC(parse_guarded(p, e, &h), GW_ELENGTH, "empty DATA at chunk 1");
	e = make_data(p, JOB, ROUND, TENSOR, 0, 0, NULL, 0);
	GW_EXPECT_RC(parse_guarded(p, e, &h), GW_ELENGTH, "empty DATA without LAST");

	/* DATA payload above 65535 bytes. */
	size_t big = GW_PKT_HDR_LEN + GW_PKT_PAYLOAD_MAX + 1;
	uint8_t *q = calloc(1, big);
	GW_CHECK(q, "out of memory");
	make_data(q, JOB, ROUND, TENSOR, 0, 0, q + GW_PKT_HDR_LEN, 0);
	reseal(q, big);
	GW_EXPECT_RC(parse_guarded(q, big, &h), GW_ELENGTH, "DATA payload of 65536 bytes");
	reseal(q, big - 1);
	GW_EXPECT_RC(parse_guarded(q, big - 1, &h), GW_OK, "DATA payload of 65535 bytes");
	free(q);

	/* ACKs. */
	uint8_t sack[256] = {0};
	size_t alen = make_ack(p, JOB, 3, sack16, sizeof sack16);
	for (unsigned b = 0; b < 8; b++) {
		uint8_t a[256];
		memcpy(a, p, alen);
		a[GW_PKT_OFF_FLAGS] = (uint8_t)(1u << b);
		reseal(a, alen);
		GW_EXPECT_RC(parse_guarded(a, alen, &h), GW_ERESERVED, "ACK flag bit %u", b);
	}
	for (unsigned l = GW_PKT_SACK_MAX + 1; l < 256; l++) {
		alen = make_ack(p, JOB, 3, sack, (uint8_t)l);
		GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_ELENGTH, "ACK bitmap of %u bytes", l);
	}
	alen = make_ack(p, JOB, 3, sack, GW_PKT_SACK_MAX);
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_OK, "ACK bitmap of 128 bytes");
	p[GW_PKT_OFF_SACK_LEN] = 127;
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_ELENGTH, "ACK length mismatch");
	sack[0] = 1;
	alen = make_ack(p, JOB, 3, sack, 4);
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_ECORRUPT, "ACK SACKing its cum chunk");
	sack[0] = 2;
	alen = make_ack(p, JOB, 0xffffffffu - 32, sack, 4);
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_OK, "ACK bitmap up to chunk 2^32-2");
	alen = make_ack(p, JOB, 0xffffffffu - 32, sack, 5);
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_ERANGE, "ACK bitmap past chunk 2^32-2");
	alen = make_ack(p, JOB, 0xffffffffu, NULL, 0);
	GW_EXPECT_RC(parse_guarded(p, alen, &h), GW_OK, "cumulative ack of 2^32-1 chunks");
	(void)buf;
}

static void test_bit_flips(void **state)
{
	(void)state;
	uint8_t buf[2048] = {0}, p[2048] = {0};
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 1, GW_PKT_F_LAST,
			       frames.f[1].data, frames.f[1].len);
	gw_pkt_hdr h;
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(p, buf, len);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = parse_guarded(p, len, &h);
		GW_CHECK(rc < 0, "DATA with bit %zu flipped was accepted (chunk %u)", bit,
			 h.chunk);
	}
	size_t alen = make_ack(buf, JOB, 40, sack16, sizeof sack16);
	for (size_t bit = 0; bit < alen * 8; bit++) {
		memcpy(p, buf, alen);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		int rc = parse_guarded(p, alen, &h);
		GW_CHECK(rc < 0, "ACK with bit %zu flipped was accepted", bit);
	}
}

/* FRAME: the checksum covers the header and the payload's length, not the
 * payload (the frame's own checksum does, at decode): every bit of the
 * header and every length change is still caught; a flip inside the frame
 * passes here and is caught by the frame (gw_frame_verify). */
static void test_frame_flag(void **state)
{
	(void)state;
	uint8_t buf[2048] = {0}, p[2048] = {0};
	const uint8_t fl = GW_PKT_F_FRAME | GW_PKT_F_LAST;
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 1, fl, frames.f[1].data, frames.f[1].len);
	gw_pkt_hdr h;
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "valid FRAME packet");
	GW_CHECK(h.flags == fl, "flags did not round-trip");
	for (size_t bit = 0; bit < GW_PKT_HDR_LEN * 8; bit++) {
		memcpy(p, buf, len);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		GW_CHECK(parse_guarded(p, len, &h) < 0, "header bit %zu flipped was accepted", bit);
	}
	for (size_t l = GW_PKT_HDR_LEN; l < len + 8; l++)
		if (l != len)
			GW_EXPECT_RC(parse_guarded(buf, l, &h), GW_ECHECKSUM,
				     "FRAME packet of %zu bytes sealed for %zu", l, len);
	gw_frame_info fi;
	for (size_t bit = GW_PKT_HDR_LEN * 8; bit < len * 8; bit += 7) {
		memcpy(p, buf, len);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_OK, "payload bit %zu: the header "
			     "checksum must not read the frame", bit);
		GW_CHECK(gw_frame_verify(p + GW_PKT_HDR_LEN, len - GW_PKT_HDR_LEN, &fi) < 0,
			 "frame bit %zu flipped passed the frame's own check", bit - 8 * GW_PKT_HDR_LEN);
	}
	/* The flag is part of what is sealed: the same packet sealed without
	 * it does not verify with it set, and vice versa. */
	memcpy(p, buf, len);
	p[GW_PKT_OFF_FLAGS] &= (uint8_t)~GW_PKT_F_FRAME;
	GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ECHECKSUM, "FRAME cleared after sealing");
	size_t l2 = make_data(p, JOB, ROUND, TENSOR, 1, GW_PKT_F_LAST, frames.f[1].data,
			      frames.f[1].len);
	p[GW_PKT_OFF_FLAGS] |= GW_PKT_F_FRAME;
	GW_EXPECT_RC(parse_guarded(p, l2, &h), GW_ECHECKSUM, "FRAME set after sealing");
}

/* ---- UP and RESULT -------------------------------------------------------- */

static const uint8_t bm3[3] = {0xff, 0xfb, 0x0f};   /* 20 workers, 10 out */

/* Valid UP and RESULT packets, with and without a MAC, with a real frame:
 * accepted with their fields, reading nothing but the header and a
 * RESULT's bitmap (the rest of the packet lies beyond a PROT_NONE page). */
static void test_agg_valid(void **state)
{
	(void)state;
	uint8_t buf[2048];
	const gw_test_frame *f = &frames.f[1];
	gw_pkt_hdr h;
	for (int result = 0; result < 2; result++) {
		for (int k = 0; k < 4; k++) {
			uint8_t type = result ? GW_PKT_RESULT : GW_PKT_UP;
			uint8_t fl = (uint8_t)(GW_PKT_F_FRAME | (k & 1 ? GW_PKT_F_MAC : 0) |
					       (k & 2 ? GW_PKT_F_RETX : 0));
			uint8_t bm = result ? (uint8_t)sizeof bm3 : 0;
			size_t len = make_agg(buf, type, fl, 2 + (uint32_t)k, bm3, bm,
					      f->data, f->len);
			GW_CHECK(len == GW_PKT_HDR_LEN + bm + f->len +
						(k & 1 ? GW_PKT_MAC_LEN : 0),
				 "packet length");
			GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK,
				     "valid %s, flags 0x%02x", result ? "RESULT" : "UP", fl);
			GW_CHECK(h.type == type && h.flags == fl && h.sack_len == bm &&
				 h.rank == (result ? 1 : 6) && h.job == JOB &&
				 h.round == ROUND && h.tensor == 0 && h.chunk == 2u + (unsigned)k &&
				 h.seq == 4321,
				 "%s fields did not round-trip", result ? "RESULT" : "UP");
			GW_CHECK(buf[GW_PKT_OFF_TYPE] == type && buf[GW_PKT_OFF_FLAGS] == fl &&
				 buf[GW_PKT_OFF_SACK_LEN] == bm, "type, flags, sack_len bytes");
			GW_CHECK(!memcmp(buf + GW_PKT_HDR_LEN, bm3, bm) &&
				 !memcmp(buf + GW_PKT_HDR_LEN + bm, f->data, f->len),
				 "bitmap, then the frame, after the header");
			/* Only header and bitmap at the end of the guarded block,
			 * parsed as the whole packet: frame and MAC are not read. */
			size_t part = GW_PKT_HDR_LEN + bm;
			uint8_t *at = guard.p + guard.len - part;
			memcpy(at, buf, part);
			gw_pkt_hdr g;
			GW_EXPECT_RC(gw_pkt_parse(at, len, &g), GW_OK,
				     "%s from its first %zu bytes", result ? "RESULT" : "UP",
				     part);
			GW_CHECK(g.chunk == h.chunk && g.flags == h.flags,
				 "fields differ from the header alone");
		}
	}
	/* The smallest: a one-byte "frame" (the frame layer rejects it), and
	 * the largest chunk number. */
	static const uint8_t one[1] = {0x47};
	size_t len = make_agg(buf, GW_PKT_UP, GW_PKT_F_FRAME | GW_PKT_F_MAC, 7, NULL, 0,
			      one, 1);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "UP: one byte and a MAC");
	len = make_agg(buf, GW_PKT_RESULT, GW_PKT_F_FRAME, 7, bm3, 1, one, 1);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "RESULT: bitmap and one byte");
	len = make_agg(buf, GW_PKT_UP, GW_PKT_F_FRAME, 0xfffffffeu, NULL, 0, f->data,
		       f->len);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "UP chunk 2^32-2");
	len = make_agg(buf, GW_PKT_RESULT, GW_PKT_F_FRAME | GW_PKT_F_MAC, 0xfffffffeu,
		       bm3, 3, f->data, f->len);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "RESULT chunk 2^32-2");
}

/* Each UP / RESULT rule broken once, in an otherwise sealed packet. */
static void test_agg_rules(void **state)
{
	(void)state;
	uint8_t buf[2048], p[2048];
	const gw_test_frame *f = &frames.f[1];
	const uint8_t F = GW_PKT_F_FRAME, M = GW_PKT_F_MAC;
	gw_pkt_hdr h;
	size_t len;
	for (int result = 0; result < 2; result++) {
		uint8_t type = result ? GW_PKT_RESULT : GW_PKT_UP;
		uint8_t bm = result ? (uint8_t)sizeof bm3 : 0;
		const char *t = result ? "RESULT" : "UP";
		/* FRAME missing, with or without the MAC */
		len = make_agg(buf, type, 0, 1, bm3, bm, f->data, f->len);
		GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERESERVED, "%s without FRAME", t);
		len = make_agg(buf, type, M | GW_PKT_F_RETX, 1, bm3, bm, f->data, f->len);
		GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERESERVED,
			     "%s with MAC and RETX but no FRAME", t);
		/* LAST and bits 4-7 are no flags of theirs */
		for (unsigned b = 0; b < 8; b++) {
			uint8_t fb = (uint8_t)(1u << b);
			if (fb & (GW_PKT_F_RETX | GW_PKT_F_FRAME | GW_PKT_F_MAC))
				continue;
			len = make_agg(buf, type, F | fb, 1, bm3, bm, f->data, f->len);
			GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERESERVED,
				     "%s with flag bit %u", t, b);
		}
		/* chunk numbers */
		len = make_agg(buf, type, F | M, 0xffffffffu, bm3, bm, f->data, f->len);
		GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERANGE, "%s chunk 2^32-1", t);
		/* the payload's length is sealed: one byte less or more */
		len = make_agg(buf, type, F | M, 1, bm3, bm, f->data, f->len);
		GW_EXPECT_RC(parse_guarded(buf, len - 1, &h), GW_ECHECKSUM,
			     "%s cut by a byte", t);
		buf[len] = 0;
		GW_EXPECT_RC(parse_guarded(buf, len + 1, &h), GW_ECHECKSUM,
			     "%s with a trailing byte", t);
		/* the MAC flag is sealed: toggled after sealing */
		memcpy(p, buf, len);
		p[GW_PKT_OFF_FLAGS] &= (uint8_t)~M;
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ECHECKSUM, "%s: MAC cleared", t);
		len = make_agg(buf, type, F, 1, bm3, bm, f->data, f->len);
		memcpy(p, buf, len);
		p[GW_PKT_OFF_FLAGS] |= M;
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ECHECKSUM, "%s: MAC set", t);
		/* every header bit */
		len = make_agg(buf, type, F | M, 1, bm3, bm, f->data, f->len);
		for (size_t bit = 0; bit < GW_PKT_HDR_LEN * 8; bit++) {
			memcpy(p, buf, len);
			p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			GW_CHECK(parse_guarded(p, len, &h) < 0,
				 "%s with header bit %zu flipped was accepted", t, bit);
		}
		/* frame and MAC bits pass here: the frame's checksum and the
		 * MAC (with the job key) catch them */
		for (size_t bit = 8 * (GW_PKT_HDR_LEN + bm); bit < len * 8; bit += 5) {
			memcpy(p, buf, len);
			p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			GW_EXPECT_RC(parse_guarded(p, len, &h), GW_OK,
				     "%s payload bit %zu: neither frame nor MAC is the "
				     "header checksum's", t, bit);
		}
	}

	/* UP: no bitmap */
	for (unsigned v = 1; v < 256; v++) {
		len = make_agg(buf, GW_PKT_UP, F, 1, NULL, 0, f->data, f->len);
		buf[GW_PKT_OFF_SACK_LEN] = (uint8_t)v;
		reseal(buf, len);
		GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERESERVED, "UP with sack_len %u", v);
	}
	/* RESULT: a bitmap of at least one byte */
	len = make_agg(buf, GW_PKT_RESULT, F | M, 1, NULL, 0, f->data, f->len);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ELENGTH, "RESULT with sack_len 0");

	/* room for bitmap + one frame byte + MAC */
	len = make_agg(buf, GW_PKT_UP, F, 1, NULL, 0, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ELENGTH, "UP without a frame");
	len = make_agg(buf, GW_PKT_UP, F | M, 1, NULL, 0, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ELENGTH, "UP of a MAC alone");
	for (size_t l = GW_PKT_HDR_LEN; l < GW_PKT_HDR_LEN + GW_PKT_MAC_LEN; l++) {
		make_agg(buf, GW_PKT_UP, F | M, 1, NULL, 0, NULL, 0);
		reseal(buf, l);
		GW_EXPECT_RC(parse_guarded(buf, l, &h), GW_ELENGTH,
			     "UP with a MAC flag and %zu payload bytes", l - GW_PKT_HDR_LEN);
	}
	len = make_agg(buf, GW_PKT_RESULT, F, 1, bm3, 3, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ELENGTH, "RESULT of a bitmap alone");
	len = make_agg(buf, GW_PKT_RESULT, F | M, 1, bm3, 3, NULL, 0);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ELENGTH,
		     "RESULT of a bitmap and a MAC");
	for (size_t l = GW_PKT_HDR_LEN; l < GW_PKT_HDR_LEN + 3; l++) {
		/* shorter than its bitmap: rejected before the bitmap is hashed */
		memcpy(p, buf, GW_PKT_HDR_LEN);
		GW_EXPECT_RC(parse_guarded(p, l, &h), GW_ELENGTH,
			     "RESULT with a 3-byte bitmap in %zu payload bytes",
			     l - GW_PKT_HDR_LEN);
	}
	/* the largest bitmap the byte holds (2040 workers) */
	uint8_t big_bm[255];
	memset(big_bm, 0xff, sizeof big_bm);
	len = make_agg(buf, GW_PKT_RESULT, F | M, 1, big_bm, 255, f->data, 8);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_OK, "RESULT with a 255-byte bitmap");

	/* frames above 65535 bytes, beside bitmap and MAC */
	static const struct {
		uint8_t type, flags, bm;
	} big[] = {
		{GW_PKT_UP, GW_PKT_F_FRAME, 0},
		{GW_PKT_UP, GW_PKT_F_FRAME | GW_PKT_F_MAC, 0},
		{GW_PKT_RESULT, GW_PKT_F_FRAME, 128},
		{GW_PKT_RESULT, GW_PKT_F_FRAME | GW_PKT_F_MAC, 255},
	};
	uint8_t *q = calloc(1, guard.len);
	GW_CHECK(q, "out of memory");
	memset(q + GW_PKT_HDR_LEN, 0xff, 255);   /* the bitmaps */
	for (size_t i = 0; i < GW_ARRAY_SIZE(big); i++) {
		size_t mac = (big[i].flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0;
		for (size_t fl = GW_PKT_PAYLOAD_MAX; fl <= GW_PKT_PAYLOAD_MAX + 1; fl++) {
			size_t l = GW_PKT_HDR_LEN + big[i].bm + fl + mac;
			GW_CHECK(l <= guard.len, "guarded block too small");
			gw_pkt_hdr bh = {.type = big[i].type, .flags = big[i].flags,
					 .sack_len = big[i].bm, .job = JOB, .chunk = 3};
			gw_pkt_write(q, &bh, gw_pkt_payload_seed(bh.flags, bh.sack_len,
								 q + GW_PKT_HDR_LEN,
								 l - GW_PKT_HDR_LEN));
			GW_EXPECT_RC(parse_guarded(q, l, &h),
				     fl > GW_PKT_PAYLOAD_MAX ? GW_ELENGTH : GW_OK,
				     "type %u, flags 0x%02x, bitmap %u, frame of %zu bytes",
				     big[i].type, big[i].flags, big[i].bm, fl);
		}
	}
	free(q);

	/* The contributor bitmap is sealed: every bit of it. */
	len = make_agg(buf, GW_PKT_RESULT, F | M, 1, bm3, 3, f->data, f->len);
	for (size_t bit = 8 * GW_PKT_HDR_LEN; bit < 8 * (GW_PKT_HDR_LEN + 3); bit++) {
		memcpy(p, buf, len);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		GW_EXPECT_RC(parse_guarded(p, len, &h), GW_ECHECKSUM,
			     "RESULT with bitmap bit %zu flipped", bit - 8 * GW_PKT_HDR_LEN);
	}
	/* Sealed as one type, read as another. */
	len = make_agg(buf, GW_PKT_UP, F, 1, NULL, 0, f->data, f->len);
	buf[GW_PKT_OFF_TYPE] = GW_PKT_DATA;
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ECHECKSUM, "UP relabelled DATA");
	len = make_data(buf, JOB, ROUND, 0, 1, GW_PKT_F_FRAME, f->data, f->len);
	buf[GW_PKT_OFF_TYPE] = GW_PKT_UP;
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ECHECKSUM, "DATA relabelled UP");
	/* MAC is no flag of DATA or ACK */
	len = make_data(buf, JOB, ROUND, 0, 1, GW_PKT_F_FRAME | GW_PKT_F_MAC, f->data,
			f->len);
	GW_EXPECT_RC(parse_guarded(buf, len, &h), GW_ERESERVED, "DATA with MAC");
}

/* ---- through a receiving stream ------------------------------------------------ */

struct hostile {
	uint8_t *buf;        /* all packets back to back */
	size_t *off, *len;
	size_t n, cap, used, buf_cap;
	uint64_t bad, corrupt, foreign, stale;
};

static void add_pkt(struct hostile *ho, const uint8_t *p, size_t len, const char *cls)
{
	if (ho->n == ho->cap) {
		ho->cap = ho->cap ? 2 * ho->cap : 1024;
		ho->off = realloc(ho->off, ho->cap * sizeof(size_t));
		ho->len = realloc(ho->len, ho->cap * sizeof(size_t));
		GW_CHECK(ho->off && ho->len, "out of memory");
	}
	if (ho->used + len + 1 > ho->buf_cap) {
		ho->buf_cap = 2 * (ho->used + len + 1);
		ho->buf = realloc(ho->buf, ho->buf_cap);
		GW_CHECK(ho->buf, "out of memory");
	}
	memcpy(ho->buf + ho->used, p, len);
	ho->off[ho->n] = ho->used;
	ho->len[ho->n++] = len;
	ho->used += len;
	if (!strcmp(cls, "parse")) {
		gw_pkt_hdr h;
		int rc = gw_pkt_parse(p, len, &h);
		GW_CHECK(rc < 0, "hostile packet %zu parses", ho->n - 1);
		if (rc == GW_ECHECKSUM)
			ho->corrupt++;
		else
			ho->bad++;
	} else if (!strcmp(cls, "foreign")) {
		ho->foreign++;
	} else if (!strcmp(cls, "bad")) {
		ho->bad++;
	} else {
		ho->stale++;
	}
}

static void build_hostile(struct hostile *ho)
{
	uint8_t buf[2048] = {0}, p[2048] = {0};
	size_t len = make_data(buf, JOB, ROUND, TENSOR, 1, 0, frames.f[1].data, frames.f[1].len);
	for (size_t l = 0; l < len; l += (l < 64 ? 1 : 97))
		add_pkt(ho, buf, l, "parse");
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(p, buf, len);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		add_pkt(ho, p, len, "parse");
	}
	size_t alen = make_ack(buf, JOB, 40, sack16, sizeof sack16);
	for (size_t bit = 0; bit < alen * 8; bit++) {
		memcpy(p, buf, alen);
		p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		add_pkt(ho, p, alen, "parse");
	}
	for (unsigned t = 3; t < 256; t += 17) {
		make_data(p, JOB, ROUND, TENSOR, 1, 0, frames.f[1].data, 100);
		p[GW_PKT_OFF_TYPE] = (uint8_t)t;
		reseal(p, GW_PKT_HDR_LEN + 100);
		add_pkt(ho, p, GW_PKT_HDR_LEN + 100, "parse");
	}
	/* Valid packets that are not for this receive. */
	len = make_data(p, JOB + 1, ROUND, TENSOR, 0, 0, frames.f[0].data, frames.f[0].len);
	add_pkt(ho, p, len, "foreign");
	alen = make_ack(p, JOB + 1, 0, NULL, 0);
	add_pkt(ho, p, alen, "foreign");
	len = make_data(p, JOB, ROUND - 1, TENSOR, 0, 0, frames.f[0].data, frames.f[0].len);
	add_pkt(ho, p, len, "stale");
	len = make_data(p, JOB, ROUND, TENSOR + 1, 0, 0, frames.f[0].data, frames.f[0].len);
	add_pkt(ho, p, len, "stale");
	alen = make_ack(p, JOB, 2, NULL, 0);
	add_pkt(ho, p, alen, "stale");
	/* Valid aggregation packets: foreign from another job, else bad (no
	 * stream's). 300 bytes of a frame: the stream reads no further than
	 * the header, and a full one with bitmap and MAC would exceed what a
	 * 1500-MTU socket takes in. */
	for (int k = 0; k < 4; k++) {
		uint8_t type = k & 1 ? GW_PKT_RESULT : GW_PKT_UP;
		uint8_t fl = (uint8_t)(GW_PKT_F_FRAME | (k & 2 ? GW_PKT_F_MAC : 0));
		len = make_agg(p, type, fl, 0, bm3, k & 1 ? 3 : 0, frames.f[0].data, 300);
		add_pkt(ho, p, len, "bad");
		gw_test_st32(p + GW_PKT_OFF_JOB, JOB + 1);
		reseal(p, len);
		add_pkt(ho, p, len, "foreign");
	}
	/* Sealed FRAME (payload unchecked) for a stream whose deliver() does
	 * not promise to check frames: never handed over. */
	len = make_data(p, JOB, ROUND, TENSOR, 0, GW_PKT_F_FRAME | GW_PKT_F_LAST,
			frames.f[0].data, frames.f[0].len);
	add_pkt(ho, p, len, "bad");
}

struct sink {
	float *acc;
	uint64_t dim;
	int calls;
	uint8_t seen[256];
};

static int deliver(void *arg, uint32_t chunk, const uint8_t *frame, size_t len)
{
	struct sink *s = arg;
	s->calls++;
	if (chunk >= frames.n || len != frames.f[chunk].len ||
	    memcmp(frame, frames.f[chunk].data, len) || s->seen[chunk]++)
		return GW_ECORRUPT;
	int rc = gw_decode(frame, len, s->acc, s->dim);
	return rc < 0 ? rc : 0;
}

static void test_stream_counts(void **state)
{
	(void)state;
	gw_dp_config dc = {.backend = "udp"};
	GW_OK_CALL(gw_endpoint_parse("127.0.0.1:0", &dc.local));
	gw_dp *dp;
	GW_OK_CALL(gw_dp_open(&dc, &dp));
	gw_stream_config sc = {.job = JOB, .rank = 0, .timeout_ms = 5000};
	gw_stream *s = gw_stream_create(dp, &sc);
	GW_CHECK(s, "gw_stream_create failed");
	gw_endpoint me;
	gw_dp_local(dp, &me);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	GW_CHECK(fd >= 0, "socket failed");
	int big = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(me.port),
				 .sin_addr.s_addr = htonl(me.ip)};

	struct hostile ho = {0};
	build_hostile(&ho);
	struct sink sk = {0};
	/* Batches, each closed by an empty-tensor marker for a tensor of its
	 * own: the receive returns once it has processed the batch. */
	const size_t batch = 200;
	uint32_t marker = 1000;
	uint8_t mk[64];
	for (size_t i = 0; i < ho.n; i += batch, marker++) {
		for (size_t j = i; j < ho.n && j < i + batch; j++)
			GW_CHECK(sendto(fd, ho.buf + ho.off[j], ho.len[j], 0,
					(struct sockaddr *)&to, sizeof to) == (ssize_t)ho.len[j],
				 "sendto of hostile packet %zu failed", j);
		size_t ml = make_data(mk, JOB, ROUND, marker, 0, GW_PKT_F_LAST, NULL, 0);
		sendto(fd, mk, ml, 0, (struct sockaddr *)&to, sizeof to);
		GW_EXPECT_RC(gw_stream_recv(s, ROUND, marker, deliver, &sk), 0,
			     "receive closed by the marker of batch %zu", i / batch);
	}
	gw_stream_stats st;
	gw_stream_stats_get(s, &st);
	GW_CHECK(sk.calls == 0 && st.delivered == 0, "a hostile packet was delivered");
	GW_CHECK(st.bad == ho.bad && st.corrupt == ho.corrupt && st.foreign == ho.foreign &&
		 st.stale == ho.stale,
		 "counted bad %llu corrupt %llu foreign %llu stale %llu; expected %llu %llu %llu %llu",
		 (unsigned long long)st.bad, (unsigned long long)st.corrupt,
		 (unsigned long long)st.foreign, (unsigned long long)st.stale,
		 (unsigned long long)ho.bad, (unsigned long long)ho.corrupt,
		 (unsigned long long)ho.foreign, (unsigned long long)ho.stale);
	print_message("  %zu hostile packets: bad %llu, corrupt %llu, foreign %llu, stale %llu\n",
		      ho.n, (unsigned long long)st.bad, (unsigned long long)st.corrupt,
		      (unsigned long long)st.foreign, (unsigned long long)st.stale);

	/* A real tensor, out of order, with a duplicate, a corrupted copy of
	 * a chunk in front of the good one, and a chunk-index flip. */
	uint8_t p[2048];
	uint64_t dim = 4608;
	sk.acc = calloc(dim, sizeof(float));
	sk.dim = dim;
	size_t order[64];
	GW_CHECK(frames.n <= 64, "too many frames");
	for (size_t i = 0; i < frames.n; i++)
		order[i] = frames.n - 1 - i;
	for (size_t k = 0; k < frames.n; k++) {
		size_t c = order[k];
		size_t len = make_data(p, JOB, ROUND, TENSOR, (uint32_t)c,
				       c == frames.n - 1 ? GW_PKT_F_LAST : 0,
				       frames.f[c].data, frames.f[c].len);
		if (k == 1) {
			uint8_t q[2048];
			memcpy(q, p, len);
			q[GW_PKT_OFF_CHUNK] ^= 1;        /* would name another chunk */
			sendto(fd, q, len, 0, (struct sockaddr *)&to, sizeof to);
			memcpy(q, p, len);
			q[len - 1] ^= 0x40;              /* a frame byte */
			sendto(fd, q, len, 0, (struct sockaddr *)&to, sizeof to);
		}
		sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof to);
		if (k == 2)
			sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof to);
	}
	int n = gw_stream_recv(s, ROUND, TENSOR, deliver, &sk);
	GW_CHECK(n == (int)frames.n, "receive returned %d (%s), expected %zu chunks", n,
		 n < 0 ? gw_error_name(n) : "", frames.n);
	gw_stream_stats st2;
	gw_stream_stats_get(s, &st2);
	GW_CHECK(st2.delivered == frames.n && st2.corrupt == st.corrupt + 2 &&
		 st2.duplicates == st.duplicates + 1,
		 "delivered %llu (want %zu), corrupt +%llu (want +2), duplicates +%llu (want +1)",
		 (unsigned long long)st2.delivered, frames.n,
		 (unsigned long long)(st2.corrupt - st.corrupt),
		 (unsigned long long)(st2.duplicates - st.duplicates));
	gw_test_dense d;
	gw_test_load_dense(2, &d);
	for (uint64_t i = 0; i < dim; i++)
		GW_CHECK(gw_test_bits(sk.acc[i]) == gw_test_bits(0.0f + d.v[i]),
			 "element %llu differs", (unsigned long long)i);
	gw_test_dense_free(&d);
	free(sk.acc);
	free(ho.buf);
	free(ho.off);
	free(ho.len);
	close(fd);
	gw_stream_free(s);
	gw_dp_close(dp);
}

int main(void)
{
	gw_test_require_traces("test_pkt_header");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_frame_flag),
		cmocka_unit_test(test_agg_valid),
		cmocka_unit_test(test_agg_rules),
		cmocka_unit_test(test_stream_counts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
