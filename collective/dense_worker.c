/* The dense engine's worker (gw_allreduce).
 *
 * One call encodes the gradient chunk by chunk, straight into packet
 * buffers, in chunk order, and sends chunk c to shard c % S once the window
 * rule allows it: the result of the shard's chunk `window` positions back
 * is in (that proves to the shard that the slot copy it reuses is free).
 * Each UP packet stays in the in-flight ring until its chunk's RESULT
 * arrives; a chunk without a result after the RTO is sent again, which
 * also makes the shard re-send a result this worker missed. The RTO
 * follows the measured RTT (chunks sent once) and doubles after a timeout
 * that shows no loss, until the next sample. Results are decode-
 * accumulated into out as they come, in any order. A result that leaves
 * this worker out (loss-tolerant mode) puts the worker's own frame back
 * into the error buffer.
 *
 * This file is the loop that both paths share: the window rule, the
 * in-flight ring, the transmit queue, retransmission and the RTO, and
 * the checks and bookkeeping of a RESULT. How chunks are encoded, how
 * results are decoded and where a left-out frame goes back to is the
 * path's (dense_worker.h): tensors in host memory and the codec's
 * encoders (dense_worker_host.c), or device tensors and gpudirect's
 * kernels (dense_worker_gpu.c), chosen once, before the first call.
 *
 * The in-flight ring is indexed by chunk: chunks in flight lie within
 * S * window of the oldest chunk without a result (the window rule), so a
 * ring of that many entries never collides. Nothing is allocated per call.
 *
 * Within the slots, how many chunks are in flight at once is the
 * self-tuned window's (coll_window.h): results' round trips and losses
 * set it, so no one picks a window per link.
 */
#include <stdlib.h>
#include <string.h>

#include "dense_worker.h"

#define FLIGHT_MAX_NS 1000000000ull   /* 1 s: backoff and SLOW_FACTOR included */
#define SLOW_FACTOR 4u
#define PIPE_POLL_US 100u     /* a pipelined round's look for a tensor */

static uint32_t pow2_above(uint32_t v)
{
	uint32_t r = 1;
	while (r <= v)
		r <<= 1;
	return r;
}

void dense_comm_fini(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	if (!d)
		return;
	if (d->ring) {
		for (uint32_t i = 0; i <= d->ring_mask; i++)
			if (d->ring[i].pkt)
				gw_dp_free(dense_chunk_dp(c, d->ring[i].chunk), &d->ring[i].pkt,
					   1);
	}
	gw_encoder_free(d->enc);
	gw_encoder_free(d->raw);
	gw_gpu_free(d->gpu, d->dev_ef);
	gw_gpu_free(d->gpu, d->dev_gcopy);
	for (uint32_t i = 0; d->views && i < c->L.chunks; i++)
		gw_ef_free(d->views[i]);
	for (uint32_t i = 0; d->tviews && i < c->L.dense.nt; i++)
		gw_ef_free(d->tviews[i]);
	gw_ef_free(d->ef);
	dense_pipe_fini(c);
	GW_FREE_ALL(d->ring, d->txq, d->txq_tmp, d->got, d->shorts, d->gcopy, d->views, d->tviews,
		    d->hq_scale, d);
	c->eng = NULL;
}

int dense_comm_init(gw_comm *c, const gw_comm_config *cfg)
{
	struct dense_worker *d = calloc(1, sizeof(*d));
	if (!d)
		return GW_ERR(GW_ENOMEM);
	c->eng = d;
	d->ops = &dense_host_ops;   /* until gw_comm_set_gpu */
	const gw_coll_job *j = &c->L.job;
	const char *why = NULL;
	d->rto_ns = c->rto_min_ns;
	coll_window_init(&d->win, j->shards, j->window);
	d->got = malloc(c->L.chunks);
	d->shorts = malloc((size_t)c->L.chunks * sizeof(*d->shorts));
	uint32_t inflight = (uint32_t)GW_MIN((uint64_t)j->shards * j->window,
					     (uint64_t)c->L.chunks);
	d->ring_mask = pow2_above(inflight) - 1;
	d->ring = calloc((size_t)d->ring_mask + 1, sizeof(*d->ring));
	d->txq = malloc(((size_t)d->ring_mask + 1) * sizeof(*d->txq));
	d->txq_tmp = malloc(((size_t)d->ring_mask + 1) * sizeof(*d->txq));
	d->enc = coll_encoder(j->up_codec, cfg->job.up_params, j->chunk_elems, &why);
	if (c->L.dense.min_elems)
		d->raw = coll_encoder(GW_CODEC_RAW, NULL, j->chunk_elems, &why);
	if (!d->got || !d->shorts || !d->ring || !d->txq || !d->txq_tmp || !d->enc ||
	    (c->L.dense.min_elems && !d->raw))
		return GW_ERR(GW_ENOMEM);
	if (j->up_codec == GW_CODEC_HQ) {
		if (!(d->hq_scale = calloc(c->L.chunks + 1, sizeof(float))))
			return GW_ERR(GW_ENOMEM);
		/* Stochastic rounding draws per worker: the same draws on every
		 * worker would round them all the same way, and their errors
		 * would add instead of averaging out. */
		double seed = 0;
		gw_encoder_get_param(d->enc, GW_PARAM_SEED, &seed);
		gw_encoder_set_param(d->enc, GW_PARAM_SEED,
				     (double)(((uint64_t)seed ^ gw_mix64(c->rank + 1u)) & 0xffffffffu));
	}
	/* Error feedback: what a lossy codec drops, and in loss-tolerant mode
	 * whole frames left out of a sum, go out again next round. */
	if ((gw_codec_caps(j->up_codec) & GW_CODEC_LOSSY) ||
	    j->mode == GW_COLL_LOSS_TOLERANT) {
		d->ef = gw_ef_create(j->dim);
		if (!d->ef)
			return GW_ERR(GW_ENOMEM);
		if (c->L.dense.sparse[0]) {
			if (!(d->views = calloc(c->L.chunks, sizeof(*d->views))))
				return GW_ERR(GW_ENOMEM);
			for (uint32_t i = 0; i < c->L.chunks; i++)
				if (!(d->views[i] = gw_ef_view(d->ef, coll_chunk_start(&c->L, i),
							       coll_chunk_len(&c->L, i))))
					return GW_ERR(GW_ENOMEM);
		} else if (c->L.dense.t) {
			/* Each tensor's frames count from its first element,
			 * and so does its slice of the buffer. */
			if (!(d->tviews = calloc(c->L.dense.nt, sizeof(*d->tviews))))
				return GW_ERR(GW_ENOMEM);
			for (uint32_t i = 0; i < c->L.dense.nt; i++)
				if (!(d->tviews[i] = gw_ef_view(d->ef, c->L.dense.t[i].start,
								c->L.dense.t[i].n)))
					return GW_ERR(GW_ENOMEM);
		} else if (gw_encoder_set_ef(d->enc, d->ef) < 0) {
			return GW_ERR(GW_EINVAL);
		}
	}
	return dense_pipe_init(c);
}

const float *dense_residual(const gw_comm *c)
{
	const struct dense_worker *d = c->eng;
	return d->ops->residual(c);
}

static uint32_t up_frame_len(const gw_comm *c, const gw_pkt *p)
{
	return p->len - GW_PKT_HDR_LEN - (c->L.keyed ? GW_PKT_MAC_LEN : 0);
}

/* The window rule, and room in the ring, for chunk ch with inflight
 * chunks in flight. */
int dense_may_send_at(const gw_comm *c, const struct call *k, uint32_t ch, uint32_t inflight)
{
	const struct dense_worker *d = c->eng;
	const gw_coll_job *j = &c->L.job;
	if (ch - k->lo > d->ring_mask || !coll_window_allows(&d->win, inflight))
		return 0;
	if (coll_local_of(&c->L, ch) < j->window)
		return 1;
	return d->got[ch - j->window * j->shards] != 0;
}

static int may_send(const gw_comm *c, const struct call *k)
{
	const struct dense_worker *d = c->eng;
	return dense_may_send_at(c, k, k->next, d->inflight);
}

/* Our frame of chunk ch goes back to the error buffer (the path's: in
 * host or device memory). */
int dense_give_back(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	if (!d->ef)
		return GW_ERR(GW_ESTATE);   /* lossless mode never leaves one out */
	return d->ops->restore(c, ch, frame, len);
}

/* Our frame of a chunk that was left out goes back to the error buffer. */
static int restore(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	d->left_out++;
	c->st.left_out++;
	return dense_give_back(c, ch, frame, len);
}

/* The oldest chunk without a result moves past every finished one,
 * freeing their packets (those still queued are freed by flush). */
static void advance_lo(gw_comm *c, struct call *k)
{
	struct dense_worker *d = c->eng;
	while (k->lo < k->next && d->got[k->lo]) {
		struct flight *g = &d->ring[k->lo & d->ring_mask];
		if (g->pkt && g->chunk == k->lo && !g->queued) {
			gw_dp_free(dense_chunk_dp(c, g->chunk), &g->pkt, 1);
			g->pkt = NULL;
		}
		k->lo++;
	}
}

/* Queues packet p, whose frame of chunk k->next (n bytes, or GW_E*) is
 * written (or, when its result came first, returns the frame to the error
 * buffer). p is the caller's no more. Both paths queue their frames
 * here, so the checks, the header and the flight are the same whoever
 * wrote the frame. */
int dense_post_chunk(gw_comm *c, struct call *k, gw_pkt *p, int n, uint64_t now)
{
	struct dense_worker *d = c->eng;
	uint32_t ch = k->next;
	gw_dp *dp = dense_chunk_dp(c, ch);
	gw_frame_info fi;
	if (n > 0 && (gw_frame_peek(p->data + GW_PKT_HDR_LEN, (size_t)n, &fi) < 0 ||
		      coll_frame_of_chunk(&c->L, 0, &fi, ch) < 0))
		n = GW_ERR(GW_EBUDGET);   /* a frame must be exactly its chunk */
	if (n <= 0) {
		gw_dp_free(dp, &p, 1);
		return n == 0 ? GW_ERR(GW_ESTATE) : n;
	}
	k->next++;
	if (d->got[ch]) {
		/* Finished (loss-tolerant) before we sent it: keep the mass. */
		int rc = restore(c, ch, p->data + GW_PKT_HDR_LEN, (uint32_t)n);
		gw_dp_free(dp, &p, 1);
		advance_lo(c, k);
		return rc < 0 ? rc : 1;
	}
	gw_pkt_hdr h = {.type = GW_PKT_UP, .rank = c->rank, .job = c->L.job.job,
			.round = c->round, .tensor = 0, .chunk = ch, .seq = c->seq++};
	p->len = coll_seal(&c->L, p->data, &h, (uint32_t)n);
	p->peer = c->shards[coll_shard_of(&c->L, ch)];
	struct flight *f = &d->ring[ch & d->ring_mask];
	*f = (struct flight){.pkt = p, .sent_ns = now, .chunk = ch, .queued = 1};
	d->txq[d->txq_n++] = p;
	d->inflight++;
	c->st.chunks_sent++;
	return 1;
}

static void retransmit(gw_comm *c, struct flight *f, uint64_t now)
{
	struct dense_worker *d = c->eng;
	gw_pkt *p = f->pkt;
	gw_pkt_hdr h = {.type = GW_PKT_UP, .flags = GW_PKT_F_RETX, .rank = c->rank,
			.job = c->L.job.job, .round = c->round, .tensor = 0,
			.chunk = f->chunk, .seq = c->seq++};
	coll_seal(&c->L, p->data, &h, up_frame_len(c, p));
	f->queued = 1;
	f->sent_ns = now;
	d->txq[d->txq_n++] = p;
	c->st.retransmits++;
}

/* The chunk of a queued UP packet (its field sits at a fixed offset). */
static uint32_t pkt_chunk(const gw_pkt *p)
{
	return gw_ld32(p->data + GW_PKT_OFF_CHUNK);
}

/* Sends the queue in runs of packets for one dataplane (a worker with a
 * port per shard); what a device refused stays queued, in order. */
static int flush(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	uint32_t keep = 0, total = 0;
	if (c->ndp == 1)   /* a port per shard: each run has one peer already */
		coll_group_by_peer(d->txq, d->txq_n, d->txq_tmp);
	for (uint32_t i = 0; i < d->txq_n;) {
		gw_dp *dp = dense_chunk_dp(c, pkt_chunk(d->txq[i]));
		uint32_t j = i + 1;
		while (j < d->txq_n && dense_chunk_dp(c, pkt_chunk(d->txq[j])) == dp)
			j++;
		int n = gw_dp_tx_burst(dp, d->txq + i, j - i);
		if (n < 0)
			return n;
		for (uint32_t q = i; q < i + (uint32_t)n; q++) {
			c->bytes_up += d->txq[q]->len;
			uint32_t ch = pkt_chunk(d->txq[q]);
			struct flight *f = &d->ring[ch & d->ring_mask];
			if (!f->tx)
				c->bytes_up_once += d->txq[q]->len;
			f->queued = 0;
			f->tx++;
			if (d->got[ch]) {
				/* Its result came while it waited in the queue. */
				gw_dp_free(dp, &f->pkt, 1);
				f->pkt = NULL;
			}
		}
		for (uint32_t q = i + (uint32_t)n; q < j; q++)
			d->txq[keep++] = d->txq[q];
		total += (uint32_t)n;
		i = j;
	}
	d->txq_n = keep;
	return (int)total;
}

/* Takes p out of the transmit queue (it waits there, unsent). */
static void unqueue(gw_comm *c, const gw_pkt *p)
{
	struct dense_worker *d = c->eng;
	for (uint32_t i = 0; i < d->txq_n; i++) {
		if (d->txq[i] != p)
			continue;
		memmove(d->txq + i, d->txq + i + 1, (d->txq_n - i - 1) * sizeof(*d->txq));
		d->txq_n--;
		return;
	}
}

/* A result's delay includes the wait for the slowest worker, so the RTO
 * learns it too: on two shared cores a fixed 5 ms fires at every
 * scheduling hiccup and floods the aggregator with duplicates. */
static void rtt_sample(gw_comm *c, uint64_t r)
{
	struct dense_worker *d = c->eng;
	if (!d->srtt_ns) {
		d->srtt_ns = r;
		d->rttvar_ns = r / 2;
	} else {
		uint64_t dev = r > d->srtt_ns ? r - d->srtt_ns : d->srtt_ns - r;
		d->rttvar_ns = (3 * d->rttvar_ns + dev) / 4;
		d->srtt_ns = (7 * d->srtt_ns + r) / 8;
	}
	uint64_t rto = d->srtt_ns + 4 * d->rttvar_ns;
	d->rto_ns = GW_MIN(GW_MAX(rto, c->rto_min_ns), COLL_RTO_MAX_NS);
}

/* A RESULT, validated before out is touched: 1 when it passed every
 * check but its frame's decode (which is the path's), or 0 (it is
 * counted and dropped). */
int dense_accept_result(gw_comm *c, const gw_pkt *pkt, struct res *r)
{
	struct dense_worker *d = c->eng;
	gw_pkt_hdr h;
	const uint8_t *body;
	uint32_t blen;
	if (!coll_comm_accept(c, pkt, &h, &body, &blen))
		return 0;
	const struct coll_layout *L = &c->L;
	uint32_t ch = h.chunk;
	if (h.round != c->round || h.tensor != 0) {
		c->st.stale++;
		return 0;
	}
	if (ch >= L->chunks || h.rank != coll_shard_of(L, ch) ||
	    h.sack_len != L->bitmap_len) {
		c->st.bad++;
		return 0;
	}
	if (d->got[ch]) {
		c->st.duplicates++;
		return 0;
	}
	/* Contributors: bits of ranks that do not exist must be clear. */
	int ncontrib = coll_contributors(L, body);
	int mine = (body[c->rank / 8] >> (c->rank % 8)) & 1;
	if (ncontrib <= 0 ||
	    (L->job.mode == GW_COLL_RELIABLE && (uint32_t)ncontrib != L->job.workers)) {
		c->st.bad++;
		return 0;
	}
	const uint8_t *frame = body + L->bitmap_len;
	uint32_t flen = blen - L->bitmap_len;
	gw_frame_info fi;
	if (gw_frame_peek(frame, flen, &fi) < 0 || coll_frame_of_chunk(L, 1, &fi, ch) < 0) {
		c->st.bad++;
		return 0;
	}
	*r = (struct res){.frame = frame, .flen = flen, .ch = ch, .pkt_len = pkt->len,
			  .ncontrib = ncontrib, .mine = mine};
	comm_live_heard(c, h.rank, gw_now_ns());
	return 1;
}

/* The rest of a RESULT once the path decoded its frame into out (rc:
 * values added, or the frame's GW_E*, in which case nothing was). */
int dense_finish_result(gw_comm *c, struct call *k, const struct res *r, int32_t rc)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	uint32_t ch = r->ch;
	int ncontrib = r->ncontrib, mine = r->mine;
	if (rc == GW_ECHECKSUM) {
		c->st.corrupt++;    /* our retransmission brings it again */
		return 0;
	}
	if (rc < 0) {
		c->st.bad++;
		return 0;
	}
	d->got[ch] = GOT_RESULT;
	c->st.results++;
	gw_sum_info si;
	if (d->hq_scale && coll_chunk_hq(L, ch) && gw_sum_info_of(r->frame, r->flen, &si) == 0)
		d->hq_scale[ch] = si.next;   /* the chunk's scale next round */
	c->bytes_down_once += r->pkt_len;
	k->results++;
	if ((uint32_t)ncontrib != L->job.workers) {
		d->shorts[d->nshort++] = ch;
		c->st.short_chunks++;
	}
	struct flight *f = &d->ring[ch & d->ring_mask];
	if (ch < k->next && f->pkt && f->chunk == ch) {
		d->inflight--;
		uint64_t now = gw_now_ns();
		if (f->tx == 1) {
			rtt_sample(c, now - f->sent_ns);
			if (d->first_result_ns && f->sent_ns >= d->first_result_ns)
				coll_window_sample(&d->win, now - f->sent_ns, now);
		}
		if (!d->first_result_ns)
			d->first_result_ns = now;
		d->done_sent_ns = GW_MAX(d->done_sent_ns, f->sent_ns);
	}
	if (!mine) {
		d->got[ch] |= GOT_EXCLUDED;
		if (ch < k->next && f->pkt && f->chunk == ch) {
			rc = restore(c, ch, f->pkt->data + GW_PKT_HDR_LEN,
				     up_frame_len(c, f->pkt));
			if (rc < 0)
				return rc;
		}
	}
	if (ch < k->next && f->pkt && f->chunk == ch) {
		/* A retransmission the device refused may still wait in txq:
		 * drop it with the flight. Left queued, it outlived its flight
		 * once lo moved past ch: a later chunk reused the ring slot,
		 * and flush() then freed that chunk's packet, still queued (a
		 * use after free), or the call ended with it queued and the
		 * next one sent it into another round and lost it (a leak). */
		if (f->queued)
			unqueue(c, f->pkt);
		f->queued = 0;
		gw_dp_free(dense_chunk_dp(c, ch), &f->pkt, 1);
		f->pkt = NULL;
	}
	advance_lo(c, k);
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* After a failed call: everything in flight goes back to the error
 * buffer (nothing is known to be summed), and the ring is emptied. */
static void unwind(gw_comm *c, struct call *k)
{
	struct dense_worker *d = c->eng;
	for (uint32_t ch = k->lo; ch < k->next; ch++) {
		struct flight *f = &d->ring[ch & d->ring_mask];
		if (!f->pkt || f->chunk != ch)
			continue;
		if (!d->got[ch] && d->ef)
			dense_give_back(c, ch, f->pkt->data + GW_PKT_HDR_LEN,
					up_frame_len(c, f->pkt));
		gw_dp_free(dense_chunk_dp(c, ch), &f->pkt, 1);
		f->pkt = NULL;
	}
	d->txq_n = 0;
	gw_encode_abandon(d->enc);
	if (d->raw)
		gw_encode_abandon(d->raw);
}

/* A call's start, off the dataplane: an aliased grad copied (the encoder
 * may still read it once out is zeroed), the encoder begun, out zeroed,
 * each in the path's memory. */
static int prepare(gw_comm *c, const float **grad, float *out, uint64_t dim)
{
	struct dense_worker *d = c->eng;
	const float *g = *grad;
	int rc;
	if (g < out + dim && out < g + dim && (rc = d->ops->copy(c, &g, dim)) < 0)
		return rc;
	*grad = g;
	/* One tensor: its encoder starts here; a layout's start at their
	 * first chunks. */
	d->cur = c->L.dense.t ? NULL : d->enc;
	if ((rc = d->ops->begin(c, g, dim)) < 0)
		return rc;
	return d->ops->zero(c, out, dim);
}

/* Whether chunk k->next may be encoded: always, but in a pipelined round
 * only once its tensor is handed over. */
static int chunk_ready(const gw_comm *c, const struct call *k)
{
	return !((const struct dense_worker *)c->eng)->tag || dense_pipe_ready(c, k->next);
}

/* A round's timeout: the shard of the first chunk without a result, or
 * in a pipelined round the first tensor never handed over. */
static int round_timeout(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	uint32_t miss = 0, first = L->chunks;
	for (uint32_t ch = 0; ch < L->chunks; ch++)
		if (!d->got[ch] && miss++ == 0)
			first = ch;
	if (first == L->chunks)
		return GW_ERR(GW_ETIMEDOUT);
	if (d->tag && !dense_pipe_ready(c, first))
		return GW_ERRF(GW_ETIMEDOUT, "round %u: tensor %u of %u was not handed over "
			       "within %llu ms", c->round, coll_tensor_index(L, first),
			       L->dense.nt, (unsigned long long)(c->timeout_ns / 1000000u));
	return coll_timeout(c, coll_shard_of(L, first), "%u of %u chunk results missing",
			    miss, L->chunks);
}

static int run_round(gw_comm *c, float *out, gw_allreduce_info *info);

int dense_allreduce(gw_comm *c, const float *grad, float *out, gw_allreduce_info *info)
{
	struct dense_worker *d = c->eng;
	int rc;
	/* Copies, zeroing and the encoder's start touch no packet: the
	 * heartbeats go on meanwhile (a first call's 64 MB out takes seconds
	 * of page faults on a host with more pollers than cores). */
	coll_comm_offline(c);
	rc = prepare(c, &grad, out, c->L.job.dim);
	coll_comm_online(c);
	if (rc < 0)
		return rc;
	d->grad = grad;
	return run_round(c, out, info);
}

int dense_allreduce_pipelined(gw_comm *c, uint32_t tag, gw_allreduce_info *info)
{
	struct dense_worker *d = c->eng;
	d->tag = tag;
	d->grad = NULL;
	d->cur = NULL;   /* each tensor's encoder starts at its first chunk */
	memset(d->tres, 0, c->L.dense.nt * sizeof(*d->tres));
	int rc = run_round(c, NULL, info);
	d->tag = 0;
	return rc;
}

/* One round, its encoder begun (or, pipelined, its tensors to come). */
static int run_round(gw_comm *c, float *out, gw_allreduce_info *info)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	int rc;
	memset(d->got, 0, L->chunks);
	d->nshort = d->left_out = d->inflight = 0;
	d->first_result_ns = 0;

	struct call k = {.out = out};
	uint64_t now = gw_now_ns(), end = now + c->timeout_ns;
	uint64_t scan_ns = now + d->rto_ns / 4;
	/* Loss-tolerant: a shard waits for a slower worker no longer than
	 * the deadline, so that is all a chunk's timeout adds for one. */
	int tolerant = L->job.mode == GW_COLL_LOSS_TOLERANT;
	uint64_t deadline_ns = 1000ull * L->job.deadline_us;
	rc = GW_OK;
	/* Loss-tolerant: every result may be in before this (slow) worker
	 * has encoded its last chunks; those still go through the encoder,
	 * whose frames then go back to the error buffer (dense_post_chunk). */
	while (k.results < L->chunks || k.next < L->chunks) {
		int progress = 0;
		if (d->tag && (rc = coll_pipe_cancelled(c->pipe, d->tag)) < 0)
			goto out;
		while (k.next < L->chunks && d->txq_n <= d->ring_mask && may_send(c, &k) &&
		       chunk_ready(c, &k)) {
			int r = d->ops->fill(c, &k, now);
			if (r < 0) {
				rc = r;
				goto out;
			}
			if (r == 0)
				break;   /* pool empty: free ones come back with results */
			progress = 1;
		}
		if ((rc = flush(c)) < 0)
			goto out;
		progress |= rc > 0;
		int drained = 1;
		for (unsigned p = 0; p < c->ndp; p++) {
			gw_dp *dp = c->dps[p];
			int n = gw_dp_rx_burst(dp, c->rx, COLL_RX_BURST);
			drained &= n <= 0;
			if (n < 0) {
				rc = n;
				goto out;
			}
			struct res rs[COLL_RX_BURST];
			uint32_t nres = 0;
			for (int i = 0; i < n; i++) {
				c->bytes_down += c->rx[i]->len;
				if (coll_pkt_type(c->rx[i]) == GW_PKT_CTRL) {
					comm_live_input(c, c->rx[i], now);
					continue;
				}
				/* Decoded now (host), or put aside in rs for
				 * one launch per burst (device). */
				if ((rc = d->ops->result(c, &k, c->rx[i], rs, &nres)) < 0) {
					gw_dp_free(dp, c->rx + i, (unsigned)(n - i));
					goto out;
				}
			}
			if (nres && (rc = d->ops->results(c, &k, rs, nres)) < 0) {
				gw_dp_free(dp, c->rx, (unsigned)n);
				goto out;
			}
			if (n > 0) {
				gw_dp_free(dp, c->rx, (unsigned)n);
				progress = 1;
			}
		}
		now = gw_now_ns();
		if ((rc = comm_live_poll(c, now, drained)) < 0)
			goto out;
		rc = GW_OK;
		if (now >= scan_ns) {
			uint32_t fired = 0;
			for (uint32_t ch = k.lo; ch < k.next; ch++) {
				struct flight *f = &d->ring[ch & d->ring_mask];
				/* A chunk sent after this one is done: this one (or
				 * its result) was probably lost, go at the RTO.
				 * Otherwise the shard may be waiting for a slower
				 * worker: give it longer before adding duplicates
				 * (loss-tolerant: it waits no longer than the
				 * deadline). The shared RTO backs off below, so
				 * a re-sent chunk needs no backoff of its own. */
				uint64_t rto = d->rto_ns;
				if (d->done_sent_ns <= f->sent_ns)
					rto = tolerant ? rto + deadline_ns : rto * SLOW_FACTOR;
				/* A peer that waits longer for a re-send (an
				 * aggregator's idle exit) may be gone. */
				rto = GW_MIN(rto, FLIGHT_MAX_NS);
				if (f->pkt && f->chunk == ch && !f->queued && !d->got[ch] &&
				    f->tx && now - f->sent_ns >= rto) {
					if (d->done_sent_ns <= f->sent_ns)
						fired++;
					else   /* overtaken: lost */
						coll_window_loss(&d->win, f->sent_ns, now);
					retransmit(c, f, now);
				}
			}
			/* A timeout with nothing sent later done yet (no sign of
			 * a loss: the chunk may only be queued) backs the shared
			 * RTO off (RFC 6298 5.5) until a chunk sent once brings
			 * a sample (Karn: re-sent ones cannot). Otherwise, when
			 * the RTO is below the real RTT (the first estimate, a
			 * queue that grows), every new chunk times out too and
			 * the re-sends only deepen the queue that caused it. A
			 * chunk overtaken by later ones was lost: no backoff. */
			if (fired)
				d->rto_ns = GW_MIN(2 * d->rto_ns, COLL_RTO_MAX_NS);
			scan_ns = now + d->rto_ns / 4;
		}
		if (now >= end) {
			rc = round_timeout(c);
			goto out;
		}
		if (!progress && !d->txq_n) {
			uint64_t wait = GW_MIN(scan_ns - now, (uint64_t)COLL_IDLE_WAIT_US * 1000u);
			/* A tensor handed over wakes no descriptor: look again
			 * soon while the next one is awaited. */
			if (k.next < L->chunks && !chunk_ready(c, &k))
				wait = GW_MIN(wait, (uint64_t)PIPE_POLL_US * 1000u);
			if (gw_dp_wait_any(c->dps, c->ndp, (unsigned)(wait / 1000u) + 1u) < 0) {
				rc = GW_ERR(GW_EIO);
				goto out;
			}
		}
	}
	/* Every chunk is encoded: this call only ends the encoder's tensor. */
	rc = d->ops->finish(c);
out:
	if (rc < 0) {
		unwind(c, &k);
		c->round++;   /* late packets of this round are stale now */
		return rc;
	}
	coll_window_trace(&d->win, c->rank, c->round);
	qsort(d->shorts, d->nshort, sizeof(*d->shorts), cmp_u32);
	if (info) {
		*info = (gw_allreduce_info){.round = c->round, .chunks = L->chunks,
			.short_chunks = d->nshort, .shorts = d->shorts,
			.left_out = d->left_out, .bytes_up = c->bytes_up,
			.bytes_down = c->bytes_down, .bytes_up_once = c->bytes_up_once,
			.bytes_down_once = c->bytes_down_once};
	}
	c->round++;
	return GW_OK;
}
