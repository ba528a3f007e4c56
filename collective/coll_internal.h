/* Private pieces shared by the worker and the aggregator: the chunk
 * layout, codec set-up, and sealing / accepting UP and RESULT packets. */
#ifndef GW_COLL_INTERNAL_H
#define GW_COLL_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include <gw/collective.h>

#include "gw_util.h"
#include "pkt.h"

#define COLL_WINDOW_DEF 64u
#define COLL_DEADLINE_DEF_US 20000u
#define COLL_CHUNK_ALIGN 40u      /* groups of 5 (3lc, terngrad) and 8 */
#define COLL_RX_BURST 32u

/* A job with its defaults filled in, and the derived layout. */
struct coll_layout {
	gw_coll_job job;
	uint8_t key[GW_KEY_LEN];
	int keyed;
	uint32_t chunks;          /* chunks of the tensor */
	uint32_t bitmap_len;      /* RESULT contributor bitmap bytes */
	/* [0] uplink, [1] downlink: the codec's frames are sparse. Such a
	 * chunk is encoded as a tensor of its own, so its keys count from
	 * the chunk's first element (wire-format §5.7). */
	uint8_t sparse[2];
};

/* Fills the defaults, checks the job, copies the key. */
int coll_layout_init(struct coll_layout *L, const gw_coll_job *job,
		     const char **why);

static inline uint32_t coll_shard_of(const struct coll_layout *L, uint32_t c)
{
	return c % L->job.shards;
}
static inline uint32_t coll_local_of(const struct coll_layout *L, uint32_t c)
{
	return c / L->job.shards;
}
/* Chunks shard s owns. */
static inline uint32_t coll_shard_chunks(const struct coll_layout *L, uint32_t s)
{
	return s < L->chunks ? (L->chunks - s + L->job.shards - 1) / L->job.shards : 0;
}
static inline uint32_t coll_chunk_len(const struct coll_layout *L, uint32_t c)
{
	uint64_t start = (uint64_t)c * L->job.chunk_elems;
	return (uint32_t)GW_MIN((uint64_t)L->job.chunk_elems, L->job.dim - start);
}
/* A shard's chunk positions run on across rounds: slot reuse and the
 * "result of p - window first" rule need no special case at round ends. */
static inline uint64_t coll_pos(const struct coll_layout *L, uint32_t round,
				uint32_t c)
{
	return (uint64_t)round * coll_shard_chunks(L, coll_shard_of(L, c)) +
	       coll_local_of(L, c);
}

/* 0 if fi is a frame of chunk ch for direction dir (0 up, 1 down): the
 * job's codec, tensor 0, and all of the chunk — dense: exactly its
 * elements; sparse: keys inside [0, chunk length). */
int coll_frame_of_chunk(const struct coll_layout *L, int dir,
			const gw_frame_info *fi, uint32_t ch);

/* Adds a frame of chunk ch (checked by coll_frame_of_chunk) into dst,
 * which holds that chunk's elements. Returns values added or GW_E*, in
 * which case dst is unchanged. */
static inline int coll_decode_chunk(const struct coll_layout *L, int dir,
				    const uint8_t *frame, uint32_t len, float *dst,
				    uint32_t ch)
{
	uint32_t n = coll_chunk_len(L, ch);
	if (L->sparse[dir])
		return gw_decode(frame, len, dst, n);
	return gw_decode_window(frame, len, dst, (uint64_t)ch * L->job.chunk_elems, n);
}

/* 0 if one chunk of n elements encodes, with either codec of j, to a
 * packet of at most payload_max bytes; x: n worst-case values or NULL. */
int coll_chunk_fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
		    const float *x, const char **why);

/* An encoder for codec with params ("k=v,...") and frames of at most
 * chunk_elems elements. NULL and *why on failure. */
gw_encoder *coll_encoder(int codec, const char *params, uint32_t chunk_elems,
			 const char **why);

/* Bytes a packet of this job spends besides its frame: header, bitmap
 * (RESULT), MAC. */
static inline uint32_t coll_overhead(const struct coll_layout *L, int result)
{
	return GW_PKT_HDR_LEN + (result ? L->bitmap_len : 0) +
	       (L->keyed ? GW_PKT_MAC_LEN : 0);
}

/* Writes header h at p for a body (bitmap + frame) of body_len bytes
 * already at p + GW_PKT_HDR_LEN, and the MAC after it when keyed. Sets the
 * FRAME and MAC flags. Returns the packet length. */
uint32_t coll_seal(const struct coll_layout *L, uint8_t *p, gw_pkt_hdr *h,
		   uint32_t body_len);

enum coll_verdict {
	COLL_OK = 0, COLL_BAD, COLL_CORRUPT, COLL_FOREIGN, COLL_UNAUTH, COLL_FORGED,
};

/* Adds one to the counter of a rejection verdict (worker and shard
 * count the same five). */
static inline void coll_count(enum coll_verdict v, uint64_t *bad, uint64_t *corrupt,
			      uint64_t *foreign, uint64_t *unauth, uint64_t *forged)
{
	uint64_t *c[] = {NULL, bad, corrupt, foreign, unauth, forged};
	if (v > COLL_OK && v <= COLL_FORGED)
		(*c[v])++;
}

/* Parses and authenticates a received packet of type want: on COLL_OK
 * fills *h and the body (bitmap + frame, MAC excluded). */
enum coll_verdict coll_accept(const struct coll_layout *L, const gw_pkt *pkt,
			      uint8_t want, gw_pkt_hdr *h, const uint8_t **body,
			      uint32_t *body_len);

static inline uint64_t coll_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* GW_COLL_INTERNAL_H */
