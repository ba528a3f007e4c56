/* The gradwire packet header (docs/wire-format.md §5): 32 bytes in front
 * of every frame (DATA, UP), selective-acknowledgement bitmap (ACK), or
 * contributor bitmap and frame (RESULT). Its
 * checksum covers the header and the payload, so the dataplane detects a
 * corrupted chunk index or payload without reading the frame's own format
 * — frames stay opaque below the codec layer. A DATA packet flagged FRAME
 * says its payload is a gradwire frame, whose own checksum the receiver's
 * decode verifies: its packet checksum covers the header only, so neither
 * end hashes the frame twice. Private to gradwire. */
#ifndef GW_PKT_H
#define GW_PKT_H

#include <stddef.h>
#include <stdint.h>

#include <gw/stream.h>

/* Field offsets. */
enum {
	GW_PKT_OFF_MAGIC = 0,
	GW_PKT_OFF_VERSION = 2,
	GW_PKT_OFF_TYPE = 3,
	GW_PKT_OFF_FLAGS = 4,
	GW_PKT_OFF_SACK_LEN = 5,
	GW_PKT_OFF_RANK = 6,
	GW_PKT_OFF_JOB = 8,
	GW_PKT_OFF_ROUND = 12,
	GW_PKT_OFF_TENSOR = 16,
	GW_PKT_OFF_CHUNK = 20,
	GW_PKT_OFF_SEQ = 24,
	GW_PKT_OFF_CHECKSUM = 28,
};

#define GW_PKT_DATA 1u
#define GW_PKT_ACK 2u
#define GW_PKT_UP 3u       /* worker -> aggregator: one chunk's frame */
#define GW_PKT_RESULT 4u   /* aggregator -> worker: contributor bitmap
			    * (sack_len bytes) + the chunk's result frame */

#define GW_PKT_F_LAST 0x01u    /* DATA: the final chunk of the tensor */
#define GW_PKT_F_RETX 0x02u    /* DATA, UP, RESULT: a retransmission
				* (informational) */
#define GW_PKT_F_FRAME 0x04u   /* DATA, UP, RESULT (required there): the
				* payload is a gradwire frame, which
				* carries its own checksum: the packet's
				* covers the header and payload length only */
#define GW_PKT_F_MAC 0x08u     /* UP, RESULT: the last GW_PKT_MAC_LEN bytes
				* are a keyed MAC of everything before them */
#define GW_PKT_F_KNOWN (GW_PKT_F_LAST | GW_PKT_F_RETX | GW_PKT_F_FRAME) /* DATA's */
#define GW_PKT_F_AGG (GW_PKT_F_RETX | GW_PKT_F_FRAME | GW_PKT_F_MAC)
#define GW_PKT_MAC_LEN 16u

#define GW_PKT_SACK_MAX 128u          /* bytes of SACK bitmap: 1024 chunks */
#define GW_PKT_PAYLOAD_MAX 65535u     /* largest DATA payload (= GW_FRAME_MAX) */
#define GW_PKT_CHUNK_LIMIT 0xffffffffu /* chunk numbers are below this */

typedef struct gw_pkt_hdr {
	uint8_t type;       /* GW_PKT_DATA, _ACK, _UP or _RESULT */
	uint8_t flags;      /* GW_PKT_F_* */
	uint8_t sack_len;   /* ACK: bytes of bitmap after the header;
			     * RESULT: bytes of contributor bitmap */
	uint16_t rank;
	uint32_t job, round, tensor;
	uint32_t chunk;     /* DATA: chunk index; ACK: cumulative ack */
	uint32_t seq;
} gw_pkt_hdr;

/* XXH3_64 of a payload: the seed of the header checksum. A sender keeps it
 * so that a retransmission rewrites seq and flags without re-reading the
 * frame. */
uint64_t gw_pkt_payload_hash(const uint8_t *payload, size_t len);

/* The seed of a packet's header checksum: the payload's hash, or — for a
 * packet flagged FRAME — the payload's length, without reading the frame
 * (a RESULT's contributor bitmap, which is no frame, is hashed with the
 * length as seed: sack_len bytes at payload). */
uint64_t gw_pkt_payload_seed(uint8_t type, uint8_t flags, uint8_t sack_len,
			     const uint8_t *payload, size_t len);

/* Writes the 32-byte header h at p (version and magic included) and its
 * checksum over the header and a payload whose hash is payload_hash. */
void gw_pkt_write(uint8_t *p, const gw_pkt_hdr *h, uint64_t payload_hash);

/* Validates the packet p[0..len) — never reading past len — and fills *h.
 * Returns 0, or (in this order of checks): GW_ETRUNC (shorter than the
 * header), GW_EMAGIC, GW_EVERSION, GW_ERESERVED (unknown type, reserved
 * flag bits, a non-zero field that must be zero), GW_ELENGTH (payload
 * length; RESULT without a bitmap), GW_ECHECKSUM, then the checks of the
 * checksummed fields (UP and RESULT without FRAME are GW_ERESERVED):
 * GW_ELENGTH (empty DATA other than the empty-tensor marker), GW_ERANGE
 * (chunk numbers out of range), GW_ECORRUPT (an ACK that SACKs its own
 * cumulative chunk). The stream counts GW_ECHECKSUM as corrupt and every
 * other error as bad. The MAC of a MAC-flagged packet is not checked here
 * (the key is the aggregation layer's): only that there is room for it. */
int gw_pkt_parse(const uint8_t *p, size_t len, gw_pkt_hdr *h);

#endif /* GW_PKT_H */
