/* Fuzzes the 32-byte packet header of the dataplane (dataplane/pkt.c,
 * docs/wire-format.md §5): gw_pkt_parse(), gw_pkt_write() and
 * gw_pkt_payload_seed(), for all five packet types (DATA, ACK, the
 * aggregation's UP and RESULT with their optional MAC, and its CTRL). Each input is used
 * twice:
 *
 *  (a) as it is — what a receiver does with whatever arrives — in a heap
 *      block of exactly its size, so AddressSanitizer sees any read past
 *      its end. gw_pkt_parse() must return what a model of §5.1 rules 1-9
 *      and §5.3 (below, written from the spec's numbers, with its own XXH3
 *      checksum) says, code for code. An accepted packet must obey the
 *      rules (type DATA, ACK, UP or RESULT; each type's flags only; an
 *      ACK's sack_len = its payload length ≤ 128 with bit 0 of the bitmap
 *      clear; UP and RESULT flagged FRAME, an UP without a bitmap, a
 *      RESULT with one, room for bitmap, a frame of 1 to 65535 bytes and
 *      the MAC; a chunk below 2^32 − 1 in all but ACKs; an empty DATA
 *      payload only as the empty-tensor marker), its fields must be the
 *      wire bytes, and gw_pkt_write() with gw_pkt_payload_seed() must
 *      rebuild its 32 header bytes exactly. A packet flagged FRAME (DATA,
 *      UP, RESULT) must parse the same from a copy of its header alone —
 *      of its header and contributor bitmap for a RESULT: its checksum
 *      covers the frame's length, not the frame, and the parser never
 *      reads the MAC.
 *  (b) as a valid packet derived from it: the header fields are the input's
 *      header bytes at their own offsets (magic and version forced; the
 *      type byte mod 5 picks the type: 1 DATA, 2 ACK, 3 UP, 0 RESULT, 4 CTRL;
 *      flags, sack_len, chunk and the payload fitted to the rules), the
 *      payload is the rest of the input (an ACK's bitmap, cut to 128
 *      bytes, bit 0 cleared; for UP and RESULT padded with zeros up to the
 *      least payload the rules allow — bitmap, one frame byte, MAC — and
 *      cut to the most), written with gw_pkt_write() and the right seed.
 *      It must be accepted (by the model too) with exactly those fields.
 *      Then one header bit, chosen by the input's checksum field (which (b)
 *      overwrites anyway), is flipped: the parse must fail, with the
 *      model's code. The only way through is a flip in a field that only
 *      the 32-bit checksum guards meeting a checksum collision (2^-32): the
 *      model sees it too, and it is let pass. Last, one payload bit is
 *      flipped: rejected like the header flip — a RESULT's bitmap
 *      included — except in the frame and MAC of a packet flagged FRAME,
 *      where the packet must still be accepted, with the same fields.
 *
 * A valid seed packet is thus accepted in (a), and the fuzzer steers (b) by
 * mutating the fields: (b) seals them. The control word (bytes 28..31):
 *
 *   bits 0-7   header bit to flip in (b): byte bit/8, bit bit%8
 *   bits 8-31  payload bit to flip in (b), modulo the payload's bits
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include <gw/wire.h>

#include "coll_internal.h"
#include "fuzz_common.h"
#include "stream_internal.h"

/* ---- a model of the spec ----------------------------------------------- */

/* §5.3: checksum = XXH3_64bits_withSeed(header[0..28), p) mod 2^32, where
 * p = XXH3_64bits(payload); for DATA and UP with FRAME the payload length;
 * for RESULT with FRAME XXH3_64bits_withSeed(bitmap, seed = payload
 * length), the bitmap being the payload's first sack_len bytes. Only
 * called once the length rules hold (a RESULT's bitmap is there). */
static uint32_t model_checksum(const uint8_t *p, size_t len)
{
	size_t plen = len - 32;
	uint8_t type = p[3], frame = p[4] & 0x04;
	uint64_t seed;
	if (frame && (type == 1 || type == 3))
		seed = (uint64_t)plen;
	else if (frame && type == 4)
		seed = XXH3_64bits_withSeed(p + 32, p[5], (uint64_t)plen);
	else
		seed = XXH3_64bits(p + 32, plen);
	return (uint32_t)XXH3_64bits_withSeed(p, 28, seed);
}

/* The flags each type may carry (§5.2, §5.6): the stream's and the
 * collective's own definitions, written here again from the spec. */
#define DATA_FLAGS (GW_PKT_F_LAST | GW_PKT_F_RETX | GW_PKT_F_FRAME)
#define AGG_FLAGS (GW_PKT_F_RETX | GW_PKT_F_FRAME | GW_PKT_F_MAC)

/* §5.1 rules 1-9, in their order: the code gw_pkt_parse() must return. */
static int model_parse(const uint8_t *p, size_t len)
{
	if (len < 32)
		return GW_ETRUNC;
	if (p[0] != 'G' || p[1] != 'P')
		return GW_EMAGIC;
	if (p[2] != 1)
		return GW_EVERSION;
	uint8_t type = p[3], flags = p[4], sack_len = p[5];
	size_t plen = len - 32;
	if (type == 1) {                        /* DATA: LAST, RETX, FRAME */
		if ((flags & 0xf8) || sack_len)
			return GW_ERESERVED;
		if (plen > 65535)
			return GW_ELENGTH;
	} else if (type == 2) {                 /* ACK: no flags */
		if (flags)
			return GW_ERESERVED;
		if (sack_len > 128 || plen != sack_len)
			return GW_ELENGTH;
	} else if (type == 3 || type == 4) {    /* UP, RESULT: RETX, FRAME, MAC */
		if ((flags & 0xf1) || !(flags & 0x04))
			return GW_ERESERVED;
		if (type == 3 && sack_len)
			return GW_ERESERVED;
		if (type == 4 && !sack_len)
			return GW_ELENGTH;
		/* bitmap (RESULT), a frame of 1 .. 65535 bytes, MAC */
		size_t mac = (flags & 0x08) ? 16 : 0;
		if (plen < sack_len + 1 + mac || plen - mac - sack_len > 65535)
			return GW_ELENGTH;
	} else if (type == 5) {                 /* CTRL (§5.10): MAC only */
		if ((flags & 0xf7) || sack_len)
			return GW_ERESERVED;
		if (plen != 160u + ((flags & 0x08) ? 16u : 0u))
			return GW_ELENGTH;
	} else {
		return GW_ERESERVED;
	}
	if (gw_fuzz_ld32(p + 28) != model_checksum(p, len))
		return GW_ECHECKSUM;
	uint32_t chunk = gw_fuzz_ld32(p + 20);
	if (type == 5) {   /* no tensor, chunk, reserved byte or role > 1; kind 1 .. 4 */
		const uint8_t *b = p + 32;
		int res = gw_fuzz_ld32(p + 16) || chunk || b[1] > 1 || b[2] || b[3];
		for (int i = 12; i < 16; i++)
			res |= b[i] != 0;
		for (int i = 65; i < 72; i++)
			res |= b[i] != 0;
		return res ? GW_ERESERVED : b[0] >= 1 && b[0] <= 4 ? GW_OK : GW_ECORRUPT;
	}
	if (type != 2 && chunk == 0xffffffffu)
		return GW_ERANGE;
	if (type == 1) {
		if (!plen && (chunk != 0 || !(flags & 0x01)))
			return GW_ELENGTH;
	} else if (type == 2) {
		if ((uint64_t)chunk + 8u * sack_len > 0xffffffffu)
			return GW_ERANGE;
		if (sack_len && (p[32] & 1))
			return GW_ECORRUPT;
	}
	return GW_OK;
}

/* Bytes at the front of the payload that the packet checksum reads even
 * under FRAME: a RESULT's contributor bitmap; nothing for DATA and UP. */
static size_t sealed_prefix(uint8_t type, uint8_t sack_len)
{
	return type == GW_PKT_RESULT ? sack_len : 0;
}

/* ---- checks -------------------------------------------------------------- */

static int same_hdr(const gw_pkt_hdr *a, const gw_pkt_hdr *b)
{
	return a->type == b->type && a->flags == b->flags &&
	       a->sack_len == b->sack_len && a->rank == b->rank &&
	       a->job == b->job && a->round == b->round &&
	       a->tensor == b->tensor && a->chunk == b->chunk && a->seq == b->seq;
}

/* What acceptance promises about h, for the packet p[0..len). */
static void check_accepted(const uint8_t *p, size_t len, const gw_pkt_hdr *h)
{
	GW_FUZZ_CHECK(len >= GW_PKT_HDR_LEN);
	size_t plen = len - GW_PKT_HDR_LEN;
	GW_FUZZ_CHECKF(h->type == GW_PKT_DATA || h->type == GW_PKT_ACK ||
			       h->type == GW_PKT_UP || h->type == GW_PKT_RESULT ||
			       h->type == GW_PKT_CTRL,
		       "type %u accepted", h->type);
	if (h->type == GW_PKT_CTRL) {
		GW_FUZZ_CHECKF(!(h->flags & ~GW_PKT_F_MAC) && !h->sack_len,
			       "CTRL flags 0x%02x sack_len %u accepted", h->flags, h->sack_len);
		GW_FUZZ_CHECK(plen == 160u + ((h->flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0u));
		GW_FUZZ_CHECK(!h->tensor && !h->chunk && p[32] >= 1 && p[32] <= 4 && p[33] <= 1);
	} else if (h->type == GW_PKT_ACK) {
		GW_FUZZ_CHECKF(h->flags == 0, "ACK with flags 0x%02x accepted",
			       h->flags);
		GW_FUZZ_CHECKF(h->sack_len == plen && h->sack_len <= GW_PKT_SACK_MAX,
			       "ACK sack_len %u, payload %zu bytes", h->sack_len, plen);
		GW_FUZZ_CHECKF(!h->sack_len || !(p[GW_PKT_HDR_LEN] & 1),
			       "ACK SACKs its own cumulative chunk %u", h->chunk);
		GW_FUZZ_CHECK((uint64_t)h->chunk + 8u * h->sack_len <=
			      GW_PKT_CHUNK_LIMIT);
	} else if (h->type == GW_PKT_DATA) {
		GW_FUZZ_CHECKF(!(h->flags & ~DATA_FLAGS), "DATA flags 0x%02x "
			       "accepted", h->flags);
		GW_FUZZ_CHECK(h->sack_len == 0);
		GW_FUZZ_CHECK(plen <= GW_PKT_PAYLOAD_MAX);
		GW_FUZZ_CHECKF(h->chunk < GW_PKT_CHUNK_LIMIT, "DATA chunk %u", h->chunk);
		GW_FUZZ_CHECKF(plen || (h->chunk == 0 && (h->flags & GW_PKT_F_LAST)),
			       "empty DATA chunk %u flags 0x%02x accepted", h->chunk,
			       h->flags);
	} else {
		const char *t = h->type == GW_PKT_UP ? "UP" : "RESULT";
		GW_FUZZ_CHECKF(!(h->flags & ~AGG_FLAGS) && (h->flags & GW_PKT_F_FRAME),
			       "%s flags 0x%02x accepted", t, h->flags);
		GW_FUZZ_CHECKF(h->type == GW_PKT_UP ? h->sack_len == 0 : h->sack_len > 0,
			       "%s with sack_len %u accepted", t, h->sack_len);
		size_t mac = (h->flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0;
		GW_FUZZ_CHECKF(plen >= mac + h->sack_len + 1 &&
				       plen - mac - h->sack_len <= GW_PKT_PAYLOAD_MAX,
			       "%s payload %zu bytes, bitmap %u, MAC %zu accepted", t,
			       plen, h->sack_len, mac);
		GW_FUZZ_CHECKF(h->chunk < GW_PKT_CHUNK_LIMIT, "%s chunk %u", t,
			       h->chunk);
	}
	/* the fields are the wire bytes (§5.1 offsets) */
	GW_FUZZ_CHECK(h->type == p[3] && h->flags == p[4] && h->sack_len == p[5]);
	GW_FUZZ_CHECK(h->rank == (uint16_t)(p[6] | p[7] << 8));
	GW_FUZZ_CHECK(h->job == gw_fuzz_ld32(p + 8));
	GW_FUZZ_CHECK(h->round == gw_fuzz_ld32(p + 12));
	GW_FUZZ_CHECK(h->tensor == gw_fuzz_ld32(p + 16));
	GW_FUZZ_CHECK(h->chunk == gw_fuzz_ld32(p + 20));
	GW_FUZZ_CHECK(h->seq == gw_fuzz_ld32(p + 24));

	/* round trip: re-sealing the parsed header rebuilds it exactly */
	uint8_t *hdr = malloc(GW_PKT_HDR_LEN);
	GW_FUZZ_CHECK(hdr);
	gw_pkt_write(hdr, h, gw_pkt_payload_seed(h->flags, h->sack_len,
						 p + GW_PKT_HDR_LEN, plen));
	for (unsigned i = 0; i < GW_PKT_HDR_LEN; i++)
		GW_FUZZ_CHECKF(hdr[i] == p[i],
			       "re-sealed header differs at byte %u: 0x%02x, was 0x%02x",
			       i, hdr[i], p[i]);
	free(hdr);
}

/* Parses p[0..len), a heap block of exactly len bytes, checks the result
 * against the model and, if accepted, the rules; returns gw_pkt_parse()'s
 * result, with the header in *out when it is 0. */
static int check_packet(const uint8_t *p, size_t len, gw_pkt_hdr *out)
{
	gw_pkt_hdr h;
	memset(&h, 0xa5, sizeof(h));
	int rc = gw_pkt_parse(p, len, &h);
	gw_fuzz_check_code(rc);
	int want = model_parse(p, len);
	GW_FUZZ_CHECKF(rc == want, "gw_pkt_parse gave %s, the spec says %s",
		       rc ? gw_error_name(rc) : "0",
		       want ? gw_error_name(want) : "0");
	if (rc == GW_OK)
		check_accepted(p, len, &h);

	/* Flagged FRAME: the parse reads the header only (and a RESULT's
	 * bitmap), never the frame or the MAC. The copy is a block of exactly
	 * those bytes (fewer when the packet is shorter), so AddressSanitizer
	 * sees a read of anything else. */
	if (len >= GW_PKT_HDR_LEN && (p[4] & GW_PKT_F_FRAME) &&
	    (p[3] == GW_PKT_DATA || p[3] == GW_PKT_UP || p[3] == GW_PKT_RESULT)) {
		size_t part = GW_PKT_HDR_LEN + sealed_prefix(p[3], p[5]);
		if (part > len)
			part = len;
		uint8_t *hdr = malloc(part);
		GW_FUZZ_CHECK(hdr);
		memcpy(hdr, p, part);
		gw_pkt_hdr g;
		memset(&g, 0x5a, sizeof(g));
		int grc = gw_pkt_parse(hdr, len, &g);
		GW_FUZZ_CHECKF(grc == rc, "FRAME packet of type %u: %d on the packet, "
			       "%d on its first %zu bytes alone", p[3], rc, grc, part);
		GW_FUZZ_CHECK(rc != GW_OK || same_hdr(&g, &h));
		free(hdr);
	}
	if (out)
		*out = h;
	return rc;
}

/* p[bit / 8] ^= 1 << bit % 8, parse, and check: rejected as the model says,
 * unless a checksum collision lets it through (the model agrees then). */
static void check_flip(uint8_t *p, size_t len, const gw_pkt_hdr *w, size_t bit)
{
	p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	gw_pkt_hdr h;
	int rc = check_packet(p, len, &h);
	int frame_payload = (w->flags & GW_PKT_F_FRAME) &&
			    bit >= 8 * (GW_PKT_HDR_LEN + sealed_prefix(w->type, w->sack_len));
	if (frame_payload) {
		/* the packet checksum does not cover a frame or a MAC */
		GW_FUZZ_CHECKF(rc == GW_OK && same_hdr(&h, w),
			       "FRAME packet of type %u with payload bit %zu flipped: %d",
			       w->type, bit, rc);
	} else if (rc == GW_OK) {
		/* through only on a 32-bit checksum collision, of a field that
		 * nothing but the checksum guards: not magic, version, the
		 * checksum itself, nor a rule-checked bit. The type is one
		 * since UP exists: a DATA packet flagged FRAME (without LAST)
		 * and an UP differ in bit 1 of the type byte alone, and seal
		 * the same payload length. */
		GW_FUZZ_CHECKF((bit >= 8 * GW_PKT_OFF_TYPE && bit < 8 * GW_PKT_OFF_CHECKSUM) ||
				       bit >= 8 * GW_PKT_HDR_LEN,
			       "packet with bit %zu flipped accepted", bit);
		GW_FUZZ_CHECK(model_checksum(p, len) == gw_fuzz_ld32(p + 28));
	}
	p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* (b): a valid packet made of the input's fields and the rest of it. */
static void derived(const uint8_t *data, size_t size)
{
	static const uint8_t types[5] = {GW_PKT_RESULT, GW_PKT_DATA, GW_PKT_ACK,
					 GW_PKT_UP, GW_PKT_CTRL};
	uint8_t f[GW_PKT_HDR_LEN] = {0};
	memcpy(f, data, size < sizeof(f) ? size : sizeof(f));
	const uint8_t *rest = data + (size < sizeof(f) ? size : sizeof(f));
	size_t rlen = size > sizeof(f) ? size - sizeof(f) : 0;
	size_t plen = rlen;
	uint32_t ctrl = gw_fuzz_ld32(f + GW_PKT_OFF_CHECKSUM);

	gw_pkt_hdr w = {
		.type = types[f[GW_PKT_OFF_TYPE] % 5],
		.flags = f[GW_PKT_OFF_FLAGS],
		.sack_len = f[GW_PKT_OFF_SACK_LEN],
		.rank = (uint16_t)(f[GW_PKT_OFF_RANK] | f[GW_PKT_OFF_RANK + 1] << 8),
		.job = gw_fuzz_ld32(f + GW_PKT_OFF_JOB),
		.round = gw_fuzz_ld32(f + GW_PKT_OFF_ROUND),
		.tensor = gw_fuzz_ld32(f + GW_PKT_OFF_TENSOR),
		.chunk = gw_fuzz_ld32(f + GW_PKT_OFF_CHUNK),
		.seq = gw_fuzz_ld32(f + GW_PKT_OFF_SEQ),
	};
	if (w.type == GW_PKT_DATA) {
		w.flags &= DATA_FLAGS;
		w.sack_len = 0;
		if (plen > GW_PKT_PAYLOAD_MAX)
			plen = GW_PKT_PAYLOAD_MAX;
		if (w.chunk >= GW_PKT_CHUNK_LIMIT)
			w.chunk = GW_PKT_CHUNK_LIMIT - 1;
		if (!plen) {   /* the empty-tensor marker */
			w.chunk = 0;
			w.flags |= GW_PKT_F_LAST;
		}
	} else if (w.type == GW_PKT_CTRL) {
		/* §5.10: MAC as the input says, nothing else; 160 bytes (+ MAC) */
		w.flags &= GW_PKT_F_MAC;
		w.sack_len = 0;
		w.tensor = w.chunk = 0;
		plen = 160u + ((w.flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0u);
	} else if (w.type == GW_PKT_ACK) {
		w.flags = 0;
		if (plen > GW_PKT_SACK_MAX)
			plen = GW_PKT_SACK_MAX;
		w.sack_len = (uint8_t)plen;
		if ((uint64_t)w.chunk + 8u * plen > GW_PKT_CHUNK_LIMIT)
			w.chunk = GW_PKT_CHUNK_LIMIT - 8u * (uint32_t)plen;
	} else {
		/* UP, RESULT: FRAME always, MAC as the input says; a bitmap of
		 * 1..255 bytes for RESULT only; then bitmap + a frame of at
		 * least one byte + MAC, and a frame of at most 65535 */
		w.flags = (uint8_t)((w.flags & AGG_FLAGS) | GW_PKT_F_FRAME);
		if (w.type == GW_PKT_UP)
			w.sack_len = 0;
		else if (!w.sack_len)
			w.sack_len = 1;
		size_t fixed = w.sack_len + ((w.flags & GW_PKT_F_MAC) ? GW_PKT_MAC_LEN : 0);
		if (plen < fixed + 1)
			plen = fixed + 1;
		if (plen > fixed + GW_PKT_PAYLOAD_MAX)
			plen = fixed + GW_PKT_PAYLOAD_MAX;
		if (w.chunk >= GW_PKT_CHUNK_LIMIT)
			w.chunk = GW_PKT_CHUNK_LIMIT - 1;
	}
	size_t len = GW_PKT_HDR_LEN + plen;
	uint8_t *p = malloc(len);
	GW_FUZZ_CHECK(p);
	size_t take = rlen < plen ? rlen : plen;
	if (take)
		memcpy(p + GW_PKT_HDR_LEN, rest, take);
	if (plen > take)   /* padding of a short UP or RESULT */
		memset(p + GW_PKT_HDR_LEN + take, 0, plen - take);
	if (w.type == GW_PKT_ACK && plen)
		p[GW_PKT_HDR_LEN] &= (uint8_t)~1u;
	if (w.type == GW_PKT_CTRL) {   /* a kind of 1 .. 4, role 0 or 1, reserved 0 */
		uint8_t *b = p + GW_PKT_HDR_LEN;
		b[0] = (uint8_t)(1u + b[0] % 4u);
		b[1] &= 1u;
		b[2] = b[3] = 0;
		memset(b + 12, 0, 4);
		memset(b + 65, 0, 7);
	}
	gw_pkt_write(p, &w, gw_pkt_payload_seed(w.flags, w.sack_len,
						p + GW_PKT_HDR_LEN, plen));

	gw_pkt_hdr h;
	int rc = check_packet(p, len, &h);
	GW_FUZZ_CHECKF(rc == GW_OK, "a packet gw_pkt_write sealed: %s",
		       gw_error_name(rc));
	GW_FUZZ_CHECKF(same_hdr(&h, &w), "parsed fields differ from the written");

	check_flip(p, len, &w, ctrl & 0xff);
	if (plen)
		check_flip(p, len, &w, 8 * GW_PKT_HDR_LEN + (ctrl >> 8) % (8 * plen));
	free(p);
}

/* The header knows no type: the stream and the collective register theirs
 * (as a process that makes a stream and a communicator does). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	GW_FUZZ_CHECK(gw_stream_wire_register() == 0 && coll_wire_register() == 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* (a) as it is, in a block of exactly its size */
	uint8_t *b = malloc(size ? size : 1);
	GW_FUZZ_CHECK(b);
	if (size)
		memcpy(b, data, size);
	gw_fuzz_last_rc = check_packet(b, size, NULL);
	free(b);

	derived(data, size);
	return 0;
}
