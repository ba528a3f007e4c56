/* The dense worker's host path (dense_worker.h): tensors in host memory,
 * encoded chunk by chunk by the codec's encoders straight into packet
 * buffers, results decode-accumulated into out one by one as they come.
 * Pipelined rounds (dense_pipe.c) run on this path only.
 *
 * A codec with sparse frames (top-k) encodes each chunk as a tensor of
 * its own, keys counting from the chunk's first element, with an error
 * buffer that is a view of the chunk's part of the whole one; with a
 * layout, each tensor's encoder starts at its first chunk with its slice
 * of the buffer, so its context (3LC's m) is that tensor's. */
#include <stdlib.h>
#include <string.h>

#include "dense_worker.h"

/* Our frame of chunk ch back into the buffer its frames count in: the
 * whole one, or its view for a sparse chunk or a layout's tensor. */
static int host_restore(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	gw_ef *ef = d->views ? d->views[ch]
		  : d->tviews ? d->tviews[coll_tensor_index(&c->L, ch)] : d->ef;
	int rc = gw_ef_restore(ef, frame, len);
	return rc < 0 ? rc : GW_OK;
}

/* The next frame, of chunk ch: the whole tensor's encoder goes on; with a
 * layout, each tensor's encoder starts at its first chunk and goes on
 * (its context, 3LC's m, is that tensor's); a sparse chunk (or a raw one
 * in a sparse job) is encoded as a tensor of its own, which must take
 * one frame. */
static int encode_chunk(gw_comm *c, uint32_t ch, uint8_t *buf, uint32_t room)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	uint8_t none[GW_BUDGET_MIN];
	/* hq: the chunk's frame goes on the scale the shard named and the
	 * round's rotation, as every other worker's does. */
	if (d->hq_scale && coll_chunk_hq(L, ch)) {
		int rc = gw_encoder_set_shared(d->enc, d->hq_scale[ch],
					       coll_hq_seed(L, c->round, ch));
		if (rc < 0)
			return rc;
	}
	if (!L->dense.sparse[0] && L->dense.t) {
		uint32_t ti = coll_tensor_index(L, ch);
		const struct coll_tensor *T = &L->dense.t[ti];
		if (ch == T->first) {
			/* The last tensor's frames are all out: its encoder
			 * ends (a frame more is a chunk too many). */
			if (d->cur && gw_encode_next(d->cur, none, sizeof(none)) != 0)
				return GW_ERR(GW_ESTATE);
			d->cur = T->raw ? d->raw : d->enc;
			const float *v = d->tag ? dense_pipe_values(c, ti) : d->grad + T->start;
			if (!v)
				return GW_ERR(GW_ENOMEM);
			gw_tensor t = {.id = ti, .dim = T->n, .values = v};
			int rc = d->tviews ? gw_encoder_set_ef(d->cur, d->tviews[ti]) : GW_OK;
			if (rc == GW_OK)
				rc = gw_encode_begin(d->cur, &t);
			if (rc < 0)
				return rc;
		}
		return gw_encode_next(d->cur, buf, room);
	}
	if (!L->dense.sparse[0])
		return gw_encode_next(d->enc, buf, room);
	gw_encoder *e = coll_chunk_raw(L, ch) ? d->raw : d->enc;
	uint32_t ti = coll_tensor_index(L, ch);
	const float *v = d->tag ? dense_pipe_values(c, ti) : d->grad + coll_chunk_start(L, ch);
	if (!v)
		return GW_ERR(GW_ENOMEM);
	gw_tensor t = {.id = ti, .dim = coll_chunk_len(L, ch),
		       .values = d->tag ? v + coll_chunk_off(L, ch) : v};
	int rc = d->views ? gw_encoder_set_ef(e, d->views[ch]) : GW_OK;
	if (rc == GW_OK)
		rc = gw_encode_begin(e, &t);
	if (rc < 0)
		return rc;
	int n = gw_encode_next(e, buf, room);
	if (n > 0 && gw_encode_next(e, none, sizeof(none)) != 0) {
		gw_encode_abandon(e);   /* the rest stays in the buffer */
		if (dense_give_back(c, ch, buf, (uint32_t)n) < 0)
			return GW_ERR(GW_ESTATE);
		return GW_ERR(GW_EBUDGET);
	}
	return n;
}

/* Encodes chunk k->next into a packet and queues it (or, when its result
 * came first, returns its frame to the error buffer). One chunk a call:
 * the loop calls again while the window allows. */
static int fill_one(gw_comm *c, struct call *k, uint64_t now)
{
	gw_pkt *p;
	uint32_t ch = k->next;
	gw_dp *dp = dense_chunk_dp(c, ch);
	if (gw_dp_alloc(dp, &p, 1) != 1)
		return 0;
	int n = encode_chunk(c, ch, p->data + GW_PKT_HDR_LEN, dense_up_room(c, p));
	return dense_post_chunk(c, k, p, n, now);
}

/* A pipelined round's RESULT: decoded into a chunk of scratch, stored
 * scaled (and narrowed) over its tensor's part, and a tensor whose last
 * result came is published. One for a chunk this worker has not encoded
 * yet (loss-tolerant: finished without it while its tensor was still
 * being computed) is dropped, as its values wait unread in the same
 * memory; the UP sent later fetches it again. */
static int pipe_result(gw_comm *c, struct call *k, const struct res *r)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	if (r->ch >= k->next) {
		c->st.stale++;
		return 0;
	}
	memset(d->racc, 0, coll_chunk_len(L, r->ch) * sizeof(float));
	int32_t v = coll_decode_chunk(L, 1, r->frame, r->flen, d->racc, r->ch);
	int rc = dense_finish_result(c, k, r, v);
	if (rc <= 0)
		return rc;
	dense_pipe_store(c, r->ch, d->racc);
	uint32_t ti = coll_tensor_index(L, r->ch);
	if (++d->tres[ti] == L->dense.t[ti].chunks)
		coll_pipe_done(c->pipe, ti, d->tag);
	return 1;
}

/* A RESULT is decoded as it comes: no result is put aside. */
static int on_result(gw_comm *c, struct call *k, const gw_pkt *pkt, struct res *rs,
		     uint32_t *nres)
{
	(void)rs;
	(void)nres;
	struct res r;
	if (!dense_accept_result(c, pkt, &r))
		return 0;
	if (((struct dense_worker *)c->eng)->tag)
		return pipe_result(c, k, &r);
	const struct coll_layout *L = &c->L;
	int32_t rc = coll_decode_chunk(L, 1, r.frame, r.flen, k->out + coll_chunk_start(L, r.ch),
				       r.ch);
	return dense_finish_result(c, k, &r, rc);
}

static int host_results(gw_comm *c, struct call *k, const struct res *rs, uint32_t n)
{
	(void)c;
	(void)k;
	(void)rs;
	(void)n;
	return GW_OK;   /* on_result put none aside */
}

static int host_copy(gw_comm *c, const float **grad, uint64_t dim)
{
	struct dense_worker *d = c->eng;
	if (!d->gcopy && !(d->gcopy = malloc(dim * sizeof(float))))
		return GW_ERR(GW_ENOMEM);
	memcpy(d->gcopy, *grad, dim * sizeof(float));
	*grad = d->gcopy;
	return GW_OK;
}

/* One tensor: its encoder starts here; a layout's start at their first
 * chunks, a sparse uplink's chunks each as a tensor (encode_chunk). */
static int host_begin(gw_comm *c, const float *grad, uint64_t dim)
{
	struct dense_worker *d = c->eng;
	gw_tensor t = {.id = 0, .dim = dim, .values = grad};
	int rc = GW_OK;
	if (!c->L.dense.sparse[0] && !c->L.dense.t)
		rc = gw_encode_begin(d->enc, &t);
	return rc < 0 ? rc : GW_OK;
}

static int host_zero(gw_comm *c, float *out, uint64_t dim)
{
	(void)c;
	memset(out, 0, dim * sizeof(float));
	return GW_OK;
}

/* The tensor's encoder must have nothing left: a frame more would be a
 * chunk too many. */
static int host_finish(gw_comm *c)
{
	const struct dense_worker *d = c->eng;
	uint8_t none[GW_BUDGET_MIN];
	if (c->L.dense.sparse[0] || !d->cur || gw_encode_next(d->cur, none, sizeof(none)) == 0)
		return GW_OK;
	return GW_ERR(GW_ESTATE);
}

static const float *host_residual(const gw_comm *c)
{
	const struct dense_worker *d = c->eng;
	return d->ef ? gw_ef_data(d->ef) : NULL;
}

const struct dense_path_ops dense_host_ops = {
	.fill = fill_one, .result = on_result, .results = host_results,
	.restore = host_restore, .copy = host_copy, .begin = host_begin, .zero = host_zero,
	.finish = host_finish, .residual = host_residual,
};
