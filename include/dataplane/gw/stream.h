/* gradwire reliable stream: one tensor's frames from one endpoint to
 * another over any dataplane backend, exactly once.
 *
 * Selective repeat: a window of outstanding chunks (one chunk = one frame
 * = one packet), a retransmission timer per chunk, cumulative +
 * selective (bitmap) acknowledgements, duplicate suppression. Chunks may
 * arrive in any order; the receiver hands each to its deliver callback
 * exactly once — typically gw_decode() into the sum. Every packet carries
 * the gradwire packet header (docs/wire-format.md §5): job, round, tensor,
 * chunk, sender rank, flags, sequence. Packets of another job, an old
 * round or another tensor, and malformed or corrupted packets are dropped
 * and counted, never delivered.
 */
#ifndef GW_STREAM_H
#define GW_STREAM_H

#include <gw/dataplane.h>
#include <gw/wire.h>   /* the packet header: GW_PKT_HDR_LEN, ... */

#ifdef __cplusplus
extern "C" {
#endif

#define GW_STREAM_WINDOW_MAX 1024u   /* = the chunks one ACK's bitmap covers */

typedef struct gw_stream_config {
	uint32_t job;          /* packets of other jobs are dropped */
	uint16_t rank;         /* this endpoint's sender rank */
	uint32_t window;       /* chunks in flight; 0: 256; at most
				* GW_STREAM_WINDOW_MAX */
	uint32_t rto_us;       /* initial retransmission timeout; 0: 2000.
				* Measured RTTs set it later, never below
				* min(rto_us, 1000) */
	uint32_t timeout_ms;   /* a whole send or recv call gives up after;
				* 0: 10000 */
	uint32_t frames;       /* 1: payloads are gradwire frames, which
				* carry their own checksum (see deliver): the
				* packet checksum then covers the header only,
				* so each end hashes a frame once, not twice */
} gw_stream_config;

typedef struct gw_stream_stats {
	uint64_t chunks_sent, retransmits, acks_sent, acks_received;
	uint64_t delivered;        /* chunks handed to deliver() */
	uint64_t duplicates;       /* chunks received again, dropped */
	uint64_t bad;              /* short, wrong magic/version/type,
				    * reserved bits, bad lengths or chunk
				    * numbers, contradicting a LAST seen */
	uint64_t foreign;          /* another job */
	uint64_t stale;            /* an old round or another tensor */
	uint64_t corrupt;          /* failed the packet checksum (header
				    * and frame or bitmap), or with
				    * cfg.frames the frame's own */
} gw_stream_stats;

typedef struct gw_stream gw_stream;

/* One stream does one thing at a time: while it sends, DATA packets of a
 * tensor it has not been asked to receive yet are dropped (counted stale)
 * and retransmitted by their sender later; it answers retransmissions of
 * the tensors it finished receiving (the last 8) at any time. The backend's
 * pool must hold window + 1 packets besides its receive bursts. */

/* Fills the frame of the next chunk into buf (at most room bytes): returns
 * its length, 0 when the tensor has no more chunks, or GW_E*. Called in
 * chunk order, once per chunk, only when the window has room — so frames
 * are encoded straight into packet buffers (gw_encode_next fits). */
typedef int (*gw_stream_fill_fn)(void *arg, uint32_t chunk, uint8_t *buf,
				 size_t room);

/* Receives a chunk's frame; called exactly once per chunk, in any chunk
 * order. A negative return aborts the receive with it — except
 * GW_ECHECKSUM from a stream with cfg.frames: there the packet checksum
 * did not cover the frame, deliver() must check it before using any of it
 * (gw_decode() does) and return GW_ECHECKSUM for a damaged one, which the
 * stream counts corrupt and drops like a corrupted packet (the sender's
 * retransmission is awaited). Without cfg.frames the packet checksum has
 * covered the frame already. */
typedef int (*gw_stream_deliver_fn)(void *arg, uint32_t chunk,
				    const uint8_t *frame, size_t len);

/* NULL on a bad config (window above GW_STREAM_WINDOW_MAX, a backend whose
 * payload cannot hold the packet header and one byte) or no memory;
 * gw_error_detail() says which. All
 * per-window state is allocated here: send and recv allocate nothing. */
GW_API gw_stream *gw_stream_create(gw_dp *dp, const gw_stream_config *cfg);
GW_API void gw_stream_free(gw_stream *s);           /* accepts NULL */

/* Sends every chunk fill() produces to `to` and returns when all are
 * acknowledged: the chunk count, or GW_ETIMEDOUT / GW_E*. A fill() that
 * returns 0 at chunk 0 sends an empty tensor (one marker packet; both ends
 * return 0). */
GW_API int gw_stream_send(gw_stream *s, const gw_endpoint *to, uint32_t round,
			  uint32_t tensor, gw_stream_fill_fn fill, void *arg);

/* Receives one tensor of round `round`, delivering each chunk once, and
 * returns the chunk count when the last chunk and all before it are in,
 * or GW_ETIMEDOUT / GW_E*. Keeps acknowledging retransmissions of a
 * finished tensor (the sender may have missed the final ack). */
GW_API int gw_stream_recv(gw_stream *s, uint32_t round, uint32_t tensor,
			  gw_stream_deliver_fn deliver, void *arg);

/* Answers retransmissions of finished tensors for ms milliseconds: a
 * receiver calls it before it stops (exits, closes its dataplane) so that a
 * sender that lost the final acknowledgement still finishes. Other packets
 * are dropped and counted. Returns 0 or GW_E*. */
GW_API int gw_stream_linger(gw_stream *s, uint32_t ms);

GW_API void gw_stream_stats_get(const gw_stream *s, gw_stream_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* GW_STREAM_H */
