/* Private pieces shared by the worker and the aggregator: the chunk
 * layout, codec set-up, and sealing / accepting UP and RESULT packets. */
#ifndef GW_COLL_INTERNAL_H
#define GW_COLL_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include <gw/collective.h>
#include <gw/sketch.h>

#include <gw/wire.h>

#include "gw_util.h"

#define COLL_WINDOW_DEF 64u
#define COLL_DEADLINE_DEF_US 20000u
#define COLL_CHUNK_ALIGN 40u      /* groups of 5 (3lc, terngrad) and 8 */
#define COLL_RX_BURST 32u

/* Sketched-SGD's layout (sketched_common.c): what both ends derive from
 * the job. Phase A (UP tensor SK_T_SKETCH): chunk c is slice c % fpr of
 * table row c / fpr, chunk_elems cells. Phase B (UP tensor SK_T_VALUES):
 * chunk c is candidate values [c * chunk_elems, ...). RESULTs: key-set
 * pieces, candidates (tensor SK_T_SKETCH) and the update (SK_T_VALUES),
 * piece i holding entries [i * per, ...). */
enum { SK_T_SKETCH = 1, SK_T_VALUES = 2 };
/* RESULT tensor of a receipt: the shard holds every chunk of this worker's
 * phase (SK_T_RECEIPT + 0 for A, + 1 for B) and will answer with the
 * phase's result, so the worker stops re-sending the phase. Its frame is a
 * key set of one key: the phase's chunk count. */
enum { SK_T_RECEIPT = 3 };

struct coll_sketch {
	int on;
	gw_csk csk;
	uint32_t k, m;              /* update entries, candidates (P k) */
	float momentum;
	uint32_t fpr;               /* phase-A chunks per table row */
	uint32_t chunks[2];         /* phase A, phase B */
	uint32_t per[2];            /* keys per RESULT piece: candidates, update */
	uint32_t pieces[2];
};

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
	struct coll_sketch sk;
};

/* Fills L->sk for a job whose up_codec is countsketch (defaults, checks:
 * one shard, sizes in range). 0 or GW_EINVAL with *why. */
int coll_sketch_init(struct coll_layout *L, const gw_coll_job *job, const char **why);

/* Frame bytes one chunk of a sketched job may take (phase A's slice). */
static inline uint32_t coll_sketch_frame_max(uint32_t chunk_elems)
{
	return GW_FRAME_HDR_LEN + 24u + 4u * chunk_elems;
}

/* Elements of phase ph's chunk c. */
static inline uint32_t coll_sketch_chunk_len(const struct coll_layout *L, int ph,
					     uint32_t c)
{
	uint32_t ce = L->job.chunk_elems;
	if (ph == 0) {
		uint32_t col = (c % L->sk.fpr) * ce;
		return GW_MIN(ce, L->sk.csk.cols - col);
	}
	return GW_MIN(ce, L->sk.m - c * ce);
}

/* Entries of RESULT piece i of kind ph (0 candidates, 1 update). */
static inline uint32_t coll_sketch_piece_len(const struct coll_layout *L, int ph,
					     uint32_t i)
{
	uint32_t total = ph ? L->sk.k : L->sk.m;
	return GW_MIN(L->sk.per[ph], total - i * L->sk.per[ph]);
}

/* 0 if fi (of the frame at frame) is worker frame of phase ph, chunk c. */
int coll_sketch_frame_ok(const struct coll_layout *L, int ph, const uint8_t *frame,
			 const gw_frame_info *fi, uint32_t c);

/* Sketched-SGD halves of gw_comm and gw_agg. */
int sk_worker_create(gw_comm *c, const char *up_params);
void sk_worker_free(gw_comm *c);
int sk_agg_create(gw_agg *a);
void sk_agg_free(gw_agg *a);
int sk_agg_on_up(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now);
int sk_agg_deadlines(gw_agg *a, uint64_t now);
const float *sk_worker_residual(const gw_comm *c);

/* The shard's receive path (aggregator.c), one packet at a time, whichever
 * half the job runs (Sketched-SGD or not): gw_agg_serve() feeds it from
 * the dataplanes, the fuzz harnesses (tests/fuzz/fuzz_agg_rx.c) from their
 * input, so both exercise the same code. GW_OK, or GW_E* when the shard
 * cannot go on. Transmissions stay queued until coll_agg_flush(). */
int coll_agg_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now);
/* Loss-tolerant mode: finishes what is past its deadline at now (a no-op
 * in reliable mode). GW_OK or GW_E*; the caller flushes. */
int coll_agg_tick(gw_agg *a, uint64_t now);

/* The shard's transmit queues (aggregator.c): a copy of pkt[0..len) to
 * worker w at its last known address, and the flush of every queue. */
void coll_agg_send(gw_agg *a, uint32_t w, const uint8_t *pkt, uint32_t len);
void coll_agg_flush(gw_agg *a);

/* Registers UP and RESULT with the packet header (coll_wire.c;
 * idempotent): every layout does, and whatever parses collective packets
 * without a job (tests, fuzz harnesses) calls it first. */
int coll_wire_register(void);

/* Fills the defaults, checks the job, copies the key, registers the
 * packet types. */
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

/* ---- the worker's and the shard's state (worker.c, aggregator.c; the
 * Sketched-SGD halves in sketched_worker.c and sketched_agg.c) ---------- */

enum { GOT_RESULT = 1, GOT_EXCLUDED = 2 };

struct flight {
	gw_pkt *pkt;          /* NULL: free */
	uint64_t sent_ns;
	uint32_t chunk;
	uint16_t tx;          /* transmissions */
	uint8_t queued;       /* waiting in txq */
};

struct gw_comm {
	gw_dp *dp;
	struct coll_layout L;
	uint16_t rank;
	gw_endpoint *shards;
	uint64_t rto_min_ns, rto_ns, timeout_ns;
	uint64_t srtt_ns, rttvar_ns;   /* RFC 6298 estimates, UP to RESULT */
	uint64_t done_sent_ns;         /* latest send time of a chunk whose
					* result came back */
	uint32_t round, seq;
	gw_encoder *enc;
	gw_ef *ef;
	gw_ef **views;             /* sparse uplink: per chunk, into ef */
	const float *grad;         /* this call's gradient (sparse uplink) */
	float *gcopy;              /* grad, when the caller passes out == grad */
	uint8_t *got;              /* per chunk, GOT_* */
	uint32_t *shorts, nshort, left_out;
	struct flight *ring;
	uint32_t ring_mask;
	gw_pkt **txq;
	uint32_t txq_n;
	gw_pkt *rx[COLL_RX_BURST];
	gw_comm_stats st;
	uint64_t bytes_up, bytes_down, bytes_up_once, bytes_down_once;
	struct sk_worker *sk;          /* Sketched-SGD jobs only */
};

#define PENDING_MAX 4096u

struct copy {
	uint64_t pos;          /* EMPTY, or the chunk position it holds */
	uint64_t first_ns;     /* first contribution (0: none yet) */
	uint32_t chunk, round;
	uint32_t nseen, nacked;
	uint8_t done;
	uint8_t *seen;         /* bitmap_len bytes */
	uint8_t *acked;        /* workers known to hold the result */
	float *parts;          /* workers x chunk_elems: each worker's decoded
				* contribution, summed in rank order at the
				* end so the result never depends on arrival
				* order (bit-identical under loss/reordering) */
	uint8_t *res;          /* the RESULT packet, once done */
	uint32_t res_len;
};

struct wk {
	gw_endpoint ep;
	unsigned dp;
	uint8_t known;
};

struct txq {
	gw_pkt *p[PENDING_MAX];
	uint32_t n;
};

struct gw_agg {
	gw_dp **dps;
	unsigned ndp;
	struct coll_layout L;
	uint16_t shard;
	uint32_t nslots, local_chunks, res_room;
	struct copy *copies;
	gw_encoder *down;
	float *ef_down, *acc, *tmp;
	struct wk *wk;
	struct txq *txq;
	uint32_t seq;
	uint64_t scan_ns;
	gw_agg_stats st;
	gw_pkt *rx[COLL_RX_BURST];
	struct sk_agg *sk;             /* Sketched-SGD jobs only */
};

/* coll_accept() of an UP at a shard, or of a RESULT at a worker, with the
 * rejection counted: 1 if the packet is to be taken. */
static inline int coll_agg_accept(gw_agg *a, const gw_pkt *pkt, gw_pkt_hdr *h,
				  const uint8_t **body, uint32_t *len)
{
	enum coll_verdict v = coll_accept(&a->L, pkt, GW_PKT_UP, h, body, len);
	coll_count(v, &a->st.bad, &a->st.corrupt, &a->st.foreign,
		   &a->st.unauthenticated, &a->st.forged);
	return v == COLL_OK;
}

static inline int coll_comm_accept(gw_comm *c, const gw_pkt *pkt, gw_pkt_hdr *h,
				   const uint8_t **body, uint32_t *len)
{
	enum coll_verdict v = coll_accept(&c->L, pkt, GW_PKT_RESULT, h, body, len);
	coll_count(v, &c->st.bad, &c->st.corrupt, &c->st.foreign,
		   &c->st.unauthenticated, &c->st.forged);
	return v == COLL_OK;
}

/* A worker's frame that did not decode: nothing was added, and its
 * re-send tries again. */
static inline void coll_agg_decode_failed(gw_agg *a, int rc)
{
	if (rc == GW_ECHECKSUM)
		a->st.corrupt++;
	else
		a->st.bad++;
}

#endif /* GW_COLL_INTERNAL_H */
