/* gradwire packet header and the registry of packet types
 * (docs/wire-format.md §5). Implementer's header: for a protocol that puts
 * its own packets on a dataplane, not for applications.
 *
 * Every packet starts with the same 32 bytes: magic, version, type, flags,
 * a type-defined byte (sack_len), sender rank, job, round, tensor, chunk,
 * sequence and a checksum over the header and the payload, so a corrupted
 * chunk index is caught without reading the frame's own format. The
 * dataplane writes, seals and validates this header and knows no type: the
 * protocol that owns a type (the reliable stream: DATA and ACK; the
 * collective: UP and RESULT) registers its rules — which flags it carries,
 * how long its payload may be, what its fields may hold — and its number is
 * taken from the table below, so no two protocols share one.
 *
 * Checksum: the low 32 bits of XXH3-64 over header bytes 0..27 with a seed
 * that covers the payload: XXH3-64 of the payload, or, for a packet flagged
 * FRAME, whose payload is a gradwire frame carrying its own checksum after
 * a sack_len-byte prefix, XXH3-64 of that prefix seeded with the payload
 * length (the length alone when there is no prefix): neither end hashes a
 * frame twice.
 */
#ifndef GW_WIRE_H
#define GW_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <gw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_PKT_MAGIC 0x5047u      /* bytes 'G' 'P' */
#define GW_PKT_VERSION 1u
#define GW_PKT_HDR_LEN 32u

/* Field offsets (all integers little-endian). */
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

/* ---- the registry: type numbers and flag bits, with their owners ------- *
 * Types 1-127 are assigned here; 128-255 are left to experiments outside
 * gradwire. A number once assigned is never reused. */
#define GW_PKT_DATA 1u      /* stream (dataplane/stream_wire.c): a chunk */
#define GW_PKT_ACK 2u       /* stream: cumulative + selective ack */
#define GW_PKT_UP 3u        /* collective (collective/coll_wire.c): worker ->
			     * shard, one chunk's frame */
#define GW_PKT_RESULT 4u    /* collective: shard -> worker, contributor
			     * bitmap (sack_len bytes) + the chunk's result */
#define GW_PKT_CTRL 5u      /* collective: either way, liveness and the
			     * job's settings (heartbeat, goodbye, a dead
			     * peer, a mismatch): wire-format §5.9 */

/* Flag bits. FRAME and RETX mean the same in every type that allows them;
 * the others belong to the type's owner. */
#define GW_PKT_F_LAST 0x01u    /* stream, DATA: the final chunk */
#define GW_PKT_F_RETX 0x02u    /* a retransmission (informational) */
#define GW_PKT_F_FRAME 0x04u   /* the payload after its sack_len-byte prefix
				* is a gradwire frame: see the checksum */
#define GW_PKT_F_MAC 0x08u     /* collective, UP and RESULT: the payload ends
				* in a keyed MAC (GW_PKT_MAC_LEN bytes) of
				* everything before it */
#define GW_PKT_MAC_LEN 16u

#define GW_PKT_SACK_MAX 128u          /* stream: bytes of SACK bitmap */
#define GW_PKT_PAYLOAD_MAX 65535u     /* largest frame (= GW_FRAME_MAX) */
#define GW_PKT_CHUNK_LIMIT 0xffffffffu /* chunk numbers are below this */

typedef struct gw_pkt_hdr {
	uint8_t type;       /* GW_PKT_* above */
	uint8_t flags;      /* GW_PKT_F_* */
	uint8_t sack_len;   /* the type's: ACK bitmap bytes, RESULT
			     * contributor bitmap bytes, else 0 */
	uint16_t rank;
	uint32_t job, round, tensor;
	uint32_t chunk;     /* DATA, UP, RESULT: chunk index; ACK: cumulative */
	uint32_t seq;
} gw_pkt_hdr;

/* A type's rules, registered by the protocol that owns it. */
typedef struct gw_pkt_type {
	uint8_t type;             /* its number (GW_PKT_*) */
	uint8_t flags;            /* the flags it may carry */
	uint8_t need;             /* the flags it must carry */
	const char *name;         /* "DATA", ... */
	/* Before the checksum, from the header alone (type, flags and
	 * sack_len of h are filled) and the payload's length: GW_OK, or
	 * GW_ERESERVED / GW_ELENGTH. With FRAME allowed it must ensure the
	 * sack_len-byte prefix is there. */
	int (*shape)(const gw_pkt_hdr *h, size_t payload_len);
	/* After the checksum, every field of h filled: GW_OK or GW_E*
	 * (GW_ERANGE, GW_ELENGTH, GW_ECORRUPT). */
	int (*fields)(const gw_pkt_hdr *h, const uint8_t *payload, size_t payload_len);
} gw_pkt_type;

/* Registers t (kept, not copied; thread-safe). Idempotent for the same t;
 * GW_EINVAL when t is NULL or its number is registered with other rules. */
GW_API int gw_pkt_register(const gw_pkt_type *t);

/* XXH3-64 of a payload. */
GW_API uint64_t gw_pkt_payload_hash(const uint8_t *payload, size_t len);

/* The seed of a packet's header checksum (see the top of this file): a
 * sender computes it once per payload, so a retransmission rewrites seq
 * and flags without reading the frame again. Reads at most
 * min(sack_len, len) payload bytes when flags has FRAME. */
GW_API uint64_t gw_pkt_payload_seed(uint8_t flags, uint8_t sack_len,
				    const uint8_t *payload, size_t len);

/* Writes the header h at p (magic and version included) and its checksum
 * for a payload of seed payload_seed. */
GW_API void gw_pkt_write(uint8_t *p, const gw_pkt_hdr *h, uint64_t payload_seed);

/* Validates the packet p[0..len) — never reading past len — and fills *h.
 * Returns 0, or, in this order of checks: GW_ETRUNC (shorter than the
 * header), GW_EMAGIC, GW_EVERSION, GW_ERESERVED (a type nobody registered,
 * a flag the type does not allow or lacks), the type's shape errors,
 * GW_ECHECKSUM, then the type's field errors (with *h filled). A MAC is
 * not checked here (the key is its protocol's), only the room for it. */
GW_API int gw_pkt_parse(const uint8_t *p, size_t len, gw_pkt_hdr *h);

#ifdef __cplusplus
}
#endif
#endif /* GW_WIRE_H */
