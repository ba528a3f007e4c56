/* The Sketched-SGD engine (gw_allreduce_sketched): its layout and the
 * halves of its worker (sketched_worker.c) and shard (sketched_agg.c).
 * Private to the collective layer and its tests. */
#ifndef GW_COLL_SKETCHED_H
#define GW_COLL_SKETCHED_H

#include "coll_internal.h"

/* UP and RESULT tensors: phase A (table slices; RESULT: candidate keys),
 * phase B (values at the candidates; RESULT: the update). */
enum { SK_T_SKETCH = 1, SK_T_VALUES = 2 };
/* RESULT tensor of a receipt: the shard holds every chunk of this worker's
 * phase (SK_T_RECEIPT + 0 for A, + 1 for B) and will answer with the
 * phase's result, so the worker stops re-sending the phase. Its frame is a
 * key set of one key: the phase's chunk count. */
enum { SK_T_RECEIPT = 3 };

/* Whether a repeated UP (round, phase ph, chunk) starts a new pass of its
 * sender's re-send, given *last, that sender's previous repeat (0: none),
 * which it updates. A worker re-sends a whole phase at a time in ascending
 * chunk order, so a repeat not above the last one of the same stage starts
 * a pass; the shard answers each pass once (sketched_agg.c). 32 bits of
 * the stage are kept: a wrap after 2^31 rounds costs one answer. */
static inline int coll_sketch_new_pass(uint64_t *last, uint32_t round, int ph,
				       uint32_t chunk)
{
	uint64_t stage = (uint32_t)(((uint64_t)round << 1 | (uint64_t)(ph & 1)) + 1);
	int fresh = *last >> 32 != stage || chunk <= (uint32_t)*last;
	*last = stage << 32 | chunk;
	return fresh;
}

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

/* The engine's halves (sketched.c puts them in coll_sketched_engine). */
int sk_comm_init(gw_comm *c, const gw_comm_config *cfg);
void sk_comm_fini(gw_comm *c);
int sk_allreduce(gw_comm *c, const float *grad, gw_sparse_update *up,
		 gw_allreduce_info *info);
const float *sk_residual(const gw_comm *c);
int sk_agg_init(gw_agg *a, const gw_agg_config *cfg);
void sk_agg_fini(gw_agg *a);
int sk_agg_input(gw_agg *a, const struct coll_up *up, uint64_t now);
int sk_agg_tick(gw_agg *a, uint64_t now);
void sk_agg_gone(gw_agg *a, uint32_t w, uint64_t now);

#endif /* GW_COLL_SKETCHED_H */
