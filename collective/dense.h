/* The dense engine (gw_allreduce): its chunk layout and the state of its
 * worker (dense_worker*.c, dense_worker.h) and shard (dense_agg.c).
 * Private to the collective layer and its tests. */
#ifndef GW_COLL_DENSE_H
#define GW_COLL_DENSE_H

#include "coll_internal.h"
#include "coll_window.h"
#include "gw_rand.h"

/* ---- the chunk layout ------------------------------------------------------ *
 * The flat tensor of dim elements is cut into chunks of chunk_elems,
 * tensor by tensor when the job has a layout (gw_dense_job): a tensor's
 * last chunk may be shorter, and no chunk straddles two tensors. Chunk c
 * belongs to shard c % S, where it is local chunk c / S. */

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
/* The index in the layout of chunk c's tensor (0 without a layout). */
static inline uint32_t coll_tensor_index(const struct coll_layout *L, uint32_t c)
{
	uint32_t lo = 0, hi = L->dense.nt ? L->dense.nt - 1 : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (L->dense.t[mid].first <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}
/* Chunk c's first element within its tensor (frames count from there). */
static inline uint64_t coll_chunk_off(const struct coll_layout *L, uint32_t c)
{
	uint32_t first = L->dense.t ? L->dense.t[coll_tensor_index(L, c)].first : 0;
	return (uint64_t)(c - first) * L->job.chunk_elems;
}
/* Chunk c's first element in the flat tensor. */
static inline uint64_t coll_chunk_start(const struct coll_layout *L, uint32_t c)
{
	if (!L->dense.t)
		return (uint64_t)c * L->job.chunk_elems;
	const struct coll_tensor *T = &L->dense.t[coll_tensor_index(L, c)];
	return T->start + (uint64_t)(c - T->first) * L->job.chunk_elems;
}
static inline uint32_t coll_chunk_len(const struct coll_layout *L, uint32_t c)
{
	uint64_t n = L->job.dim, off = (uint64_t)c * L->job.chunk_elems;
	if (L->dense.t) {
		const struct coll_tensor *T = &L->dense.t[coll_tensor_index(L, c)];
		n = T->n;
		off = (uint64_t)(c - T->first) * L->job.chunk_elems;
	}
	return (uint32_t)GW_MIN((uint64_t)L->job.chunk_elems, n - off);
}
/* Chunk c goes raw both ways (its tensor is below min_elems). */
static inline int coll_chunk_raw(const struct coll_layout *L, uint32_t c)
{
	return L->dense.min_elems && L->dense.t[coll_tensor_index(L, c)].raw;
}
/* Whether chunk c's frames in direction dir are sparse. */
static inline int coll_chunk_sparse(const struct coll_layout *L, int dir, uint32_t c)
{
	return L->dense.sparse[dir] && !coll_chunk_raw(L, c);
}
/* A shard's chunk positions run on across rounds: slot reuse and the
 * "result of p - window first" rule need no special case at round ends. */
static inline uint64_t coll_pos(const struct coll_layout *L, uint32_t round,
				uint32_t c)
{
	return (uint64_t)round * coll_shard_chunks(L, coll_shard_of(L, c)) +
	       coll_local_of(L, c);
}

/* Chunk ch goes up as hq frames that the shard sums as integers. */
static inline int coll_chunk_hq(const struct coll_layout *L, uint32_t c)
{
	return L->job.up_codec == GW_CODEC_HQ && !coll_chunk_raw(L, c);
}
/* The rotation seed of chunk c in round: every worker and the shard
 * derive it alike, and it differs from chunk to chunk and round to round
 * (a fixed rotation would let one chunk's large coordinates line up
 * round after round). */
static inline uint32_t coll_hq_seed(const struct coll_layout *L, uint32_t round, uint32_t c)
{
	return (uint32_t)gw_mix64(gw_mix64(((uint64_t)L->job.job << 32) | round) ^ c);
}

/* hq's bits and rotation as a job's uplink params give them (the
 * workers' encoders read them so): 0, or GW_EINVAL for params it refuses. */
int coll_hq_params(const char *up_params, unsigned *bits, unsigned *rotate);

/* 0 if fi is a frame of chunk ch for direction dir (0 up, 1 down): the
 * chunk's codec (the job's, raw for a tensor below min_elems), its
 * tensor's index, and all of the chunk — dense: exactly its elements,
 * counted from its tensor's first; sparse: keys inside [0, chunk length). */
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
	if (coll_chunk_sparse(L, dir, ch))
		return gw_decode(frame, len, dst, n);
	return gw_decode_window(frame, len, dst, coll_chunk_off(L, ch), n);
}

/* ---- the worker's state ------------------------------------------------------- */

/* GOT_PENDING: a device-tensor RESULT accepted in this burst, its decode
 * not done yet (a repeat in the same burst is a duplicate). */
enum { GOT_RESULT = 1, GOT_EXCLUDED = 2, GOT_PENDING = 4 };

/* A RESULT that passed the checks that need no decode. */
struct res {
	const uint8_t *frame;
	uint32_t flen, ch, pkt_len;
	int ncontrib, mine;
};

struct flight {
	gw_pkt *pkt;          /* NULL: free */
	uint64_t sent_ns;
	uint32_t chunk;
	uint16_t tx;          /* transmissions */
	uint8_t queued;       /* waiting in txq */
};

struct dense_path_ops;   /* dense_worker.h */

struct dense_worker {
	const struct dense_path_ops *ops;   /* host, or device tensors */
	uint64_t rto_ns;
	uint64_t srtt_ns, rttvar_ns;   /* RFC 6298 estimates, UP to RESULT */
	uint64_t done_sent_ns;         /* latest send time of a chunk whose
					* result came back */
	gw_encoder *enc;
	gw_encoder *raw;           /* tensors below min_elems (or NULL) */
	gw_encoder *cur;           /* the one encoding this call's tensor */
	gw_ef *ef;
	gw_ef **views;             /* sparse uplink: per chunk, into ef */
	gw_ef **tviews;            /* a layout's dense uplink: per tensor */
	const float *grad;         /* this call's gradient (sparse uplink) */
	float *gcopy;              /* grad, when the caller passes out == grad */
	uint8_t *got;              /* per chunk, GOT_* */
	uint32_t *shorts, nshort, left_out;
	struct flight *ring;
	uint32_t ring_mask;
	gw_pkt **txq, **txq_tmp;   /* tmp: coll_group_by_peer's */
	uint32_t txq_n;
	struct coll_window win;    /* self-tuned chunks in flight */
	uint32_t inflight;         /* sent, no result yet (this call) */
	uint64_t first_result_ns;  /* this call's first result came (0: none) */
	/* Device tensors (gw_comm_set_gpu): the executor, the error buffer
	 * and an aliased gradient's copy in its memory, top-k's fraction, 3lc's
	 * sparsity, hq's params and the frames its kernels wrote (stochastic
	 * rounding's counter, as the host encoder's). */
	gw_gpu *gpu;
	float *dev_ef, *dev_gcopy;
	double fraction, sparsity;
	unsigned hq_bits, hq_rotate, hq_stochastic;
	uint32_t hq_seed;
	uint64_t hq_frames;
	/* Pipelined rounds (c->pipe): this call's tag (0: gw_allreduce's
	 * flat grad), a result chunk's decode scratch, results per tensor,
	 * and a bf16/fp16 tensor widened for its encoder. */
	uint32_t tag;
	float *racc;
	uint32_t *tres;
	float *wide;
	uint64_t wide_cap;
	uint32_t wide_ti, wide_tag;
	/* hq uplink: per chunk, the scale the shard's last result named for
	 * the next round (0 before the first: that round's values all stay
	 * in the error buffer, and the shard learns their range). */
	float *hq_scale;
};

/* ---- the shard's state --------------------------------------------------------- */

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
	/* hq chunks: the codes' integer sum (added as frames come: integer
	 * sums do not depend on their order), the round's scale and seed,
	 * the largest of the contributors' maxima, and any poisoned. */
	int32_t *isum;
	float scale, next;
	uint32_t seed;
	uint8_t poisoned;
};

struct dense_agg {
	uint32_t nslots, local_chunks;
	struct copy *copies;
	gw_encoder *down;
	gw_encoder *raw;           /* chunks of tensors below min_elems */
	float *mom;                /* down_momentum: v per local chunk */
	gw_ef *ef_down;            /* lossy downlink: local chunks' errors */
	gw_ef **ef_views;          /* per local chunk, into ef_down */
	float *acc;
	/* hq uplink: the job's bits and rotation, and per local chunk the
	 * scale its next round must use (what the last RESULT named), known
	 * once a round finished here or a first frame set it. */
	unsigned hq_bits, hq_rotate;
	float *hq_next;
	uint8_t *hq_known;
};

/* The engine's halves (dense.c puts them in coll_dense_engine). */
int dense_comm_init(gw_comm *c, const gw_comm_config *cfg);
void dense_comm_fini(gw_comm *c);
int dense_allreduce(gw_comm *c, const float *grad, float *out, gw_allreduce_info *info);
int dense_allreduce_pipelined(gw_comm *c, uint32_t tag, gw_allreduce_info *info);
/* dense_pipe.c: a pipelined round's tensors in the caller's memory. init
 * makes c->pipe when the job has a layout; values gives tensor ti's
 * float32 values (NULL: no memory to widen them); store writes chunk ch's
 * decoded result v, scaled and narrowed, over its tensor's part. */
int dense_pipe_init(gw_comm *c);
void dense_pipe_fini(gw_comm *c);
int dense_pipe_ready(const gw_comm *c, uint32_t ch);
const float *dense_pipe_values(gw_comm *c, uint32_t ti);
void dense_pipe_store(gw_comm *c, uint32_t ch, const float *v);
const float *dense_residual(const gw_comm *c);
int dense_set_gpu(gw_comm *c, gw_gpu *g);
void dense_agg_gone(gw_agg *a, uint32_t w, uint64_t now);
int dense_agg_init(gw_agg *a, const gw_agg_config *cfg);
void dense_agg_fini(gw_agg *a);
int dense_agg_input(gw_agg *a, const struct coll_up *up, uint64_t now);
int dense_agg_tick(gw_agg *a, uint64_t now);

#endif /* GW_COLL_DENSE_H */
