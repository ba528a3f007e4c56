/* The dense worker's two paths and what its loop lends them. Private to
 * dense_worker.c (the loop: window, ring, transmit queue, RTO, results'
 * bookkeeping), dense_worker_host.c (tensors in host memory, the codec's
 * encoders) and dense_worker_gpu.c (device tensors, gpudirect's executor).
 *
 * The loop is the same for both: only how chunks are encoded, how a
 * burst's results are decoded, where a left-out frame goes back to and
 * how a call's tensors are prepared differ. Those sit behind one table,
 * chosen once (host at init, device by gw_comm_set_gpu before the first
 * call), so the loop never asks which path runs. */
#ifndef GW_COLL_DENSE_WORKER_H
#define GW_COLL_DENSE_WORKER_H

#include "dense.h"

/* One call's moving parts. */
struct call {
	float *out;
	uint32_t next;      /* next chunk to encode */
	uint32_t lo;        /* oldest chunk without a result */
	uint32_t results;
};

struct dense_path_ops {
	/* Encodes chunks from k->next on, as many as the window allows
	 * and the path takes at once, into packets and queues them
	 * (dense_post_chunk). Chunks queued, 0 when the pool is empty, or
	 * GW_E*. */
	int (*fill)(gw_comm *c, struct call *k, uint64_t now);
	/* A burst's packet that is no CTRL: decoded into k->out now, or
	 * (device) checked and put at rs[(*nres)++] for results. GW_E* ends
	 * the call. */
	int (*result)(gw_comm *c, struct call *k, const gw_pkt *pkt, struct res *rs,
		      uint32_t *nres);
	/* The burst's results that result put aside, decoded and finished;
	 * their packets are the caller's until this returns. */
	int (*results)(gw_comm *c, struct call *k, const struct res *rs, uint32_t n);
	/* Our frame of chunk ch back into the error buffer (which exists). */
	int (*restore)(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len);
	/* A call's start, off the dataplane: *grad, which aliases out,
	 * copied into memory of the path's own; the flat tensor's encoder
	 * begun; out zeroed. */
	int (*copy)(gw_comm *c, const float **grad, uint64_t dim);
	int (*begin)(gw_comm *c, const float *grad, uint64_t dim);
	int (*zero)(gw_comm *c, float *out, uint64_t dim);
	/* Every chunk is encoded: the encoder's tensor ends. */
	int (*finish)(gw_comm *c);
	/* The error buffer (gw_comm_residual), or NULL. */
	const float *(*residual)(const gw_comm *c);
};

extern const struct dense_path_ops dense_host_ops, dense_gpu_ops;

/* The dataplane chunk ch goes through: its shard's. */
static inline gw_dp *dense_chunk_dp(const gw_comm *c, uint32_t ch)
{
	return coll_dp_to(c, coll_shard_of(&c->L, ch));
}

/* Room for an UP frame in packet p. */
static inline uint32_t dense_up_room(const gw_comm *c, const gw_pkt *p)
{
	return p->room - GW_PKT_HDR_LEN - (c->L.keyed ? GW_PKT_MAC_LEN : 0);
}

/* The loop's calls the paths use (dense_worker.c says what each does). */
int dense_may_send_at(const gw_comm *c, const struct call *k, uint32_t ch, uint32_t inflight);
int dense_post_chunk(gw_comm *c, struct call *k, gw_pkt *p, int n, uint64_t now);
int dense_give_back(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len);
int dense_accept_result(gw_comm *c, const gw_pkt *pkt, struct res *r);
int dense_finish_result(gw_comm *c, struct call *k, const struct res *r, int32_t rc);

#endif /* GW_COLL_DENSE_WORKER_H */
