/* Private to the reliable stream (stream.c, stream_rx.c, stream_wire.c). */
#ifndef GW_STREAM_INTERNAL_H
#define GW_STREAM_INTERNAL_H

#include <stdint.h>

#include <gw/stream.h>
#include <gw/wire.h>

#include "dp_internal.h"

/* ---- the stream's state (stream.c: create, sender; stream_rx.c: the
 * receive path, receiver, linger) ---- */
#define WINDOW_DEF 256u
#define RTO_DEF_US 2000u
#define TIMEOUT_DEF_MS 10000u
#define RX_BURST 32u
#define RCV_RANGE (8u * GW_PKT_SACK_MAX)   /* chunks tracked above cum */
#define DONE_HISTORY 8u
#define DUPTHRESH 3u
#define ACK_EVERY_MAX 16u
#define DELACK_US 100u
#define RTO_MIN_US 1000u
#define RTO_MAX_US 200000u
#define REFUSED_WAIT_US 50u
#define RTO_BURST 16u
#define ACK_TRIES 64
#define IDLE_WAIT_US 1000u
#define NO_POS UINT32_MAX

struct slot {
	gw_pkt *pkt;          /* NULL once acknowledged */
	uint64_t hash;        /* XXH3 of the payload, seeds the checksum */
	uint64_t sent_ns;     /* last transmission */
	uint32_t prev, next;  /* retransmission queue neighbours (chunks) */
	uint8_t linked;       /* in the retransmission queue */
	uint32_t mark;        /* chunks first-sent when this one was last sent */
	uint32_t tx;          /* transmissions the device took */
	uint8_t last;
	uint8_t queued;       /* in the transmit queue (refused ones stay) */
};

struct done {
	uint32_t round, tensor, total;   /* total: chunks on the wire (= cum) */
	uint16_t rank;
	uint8_t valid;
};

struct gw_stream {
	gw_dp *dp;
	gw_stream_config cfg;
	uint32_t ring;                 /* slots, a power of two > window */
	uint32_t ack_every;
	uint32_t seq;
	uint64_t rto_min_ns;
	gw_stream_stats st;

	/* sender */
	struct slot *slots;
	uint32_t rq_head, rq_tail;     /* retransmission queue, oldest first */
	uint64_t rq_scan_ns;           /* no deadline in the queue before this */
	gw_pkt *spare[RX_BURST];       /* allocated for filling, not yet used */
	uint32_t spare_n;
	gw_pkt **txq;
	uint32_t *txc, txq_n;          /* chunk of each queued packet */
	gw_pkt **freeq;
	uint32_t freeq_n;
	gw_endpoint to;
	uint32_t round, tensor;
	uint32_t base, next, sent_upto;
	uint32_t sack_high;            /* 1 + highest chunk SACKed this burst */
	int eof, empty;
	uint64_t srtt_ns, rttvar_ns, rto_ns;
	uint64_t timer_ns;             /* last ACK that acknowledged a chunk,
					* or the last retransmission timeout */
	uint32_t backoff;              /* timeouts since that ACK */
	int have_rtt;

	/* receiver */
	uint64_t rbits[RCV_RANGE / 64];
	struct done done[DONE_HISTORY];
	uint32_t done_next;

	gw_pkt *rx[RX_BURST];
};

/* ---- the receive path both sides share (stream_rx.c) ---- */

/* Parses p; counts and returns 0 if it is to be dropped for being
 * malformed, corrupted or another job's. */
int stream_accept(gw_stream *s, const gw_pkt *p, gw_pkt_hdr *h);
/* A DATA packet that is not for the tensor being received:
 * re-acknowledged if its tensor was finished here, else stale. */
void stream_other_data(gw_stream *s, const gw_pkt *p, const gw_pkt_hdr *h);
/* Sleeps in gw_dp_wait() until `until` (or end), at most IDLE_WAIT_US. */
int stream_wait_until(gw_stream *s, uint64_t now, uint64_t until, uint64_t end);

/* Registers DATA and ACK with the packet header (idempotent): every
 * gw_stream_create() does, and whatever parses stream packets without a
 * stream (tests, fuzz harnesses) calls it first. 0 or GW_EINVAL. */
int gw_stream_wire_register(void);

#endif /* GW_STREAM_INTERNAL_H */
