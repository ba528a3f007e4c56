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
 * A codec with sparse frames (top-k) encodes each chunk as a tensor of
 * its own, keys counting from the chunk's first element, with an error
 * buffer that is a view of the chunk's part of the whole one.
 *
 * The in-flight ring is indexed by chunk: chunks in flight lie within
 * S * window of the oldest chunk without a result (the window rule), so a
 * ring of that many entries never collides. Nothing is allocated per call.
 *
 * Within the slots, how many chunks are in flight at once is the
 * self-tuned window's (coll_window.h): results' round trips and losses
 * set it, so no one picks a window per link.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"

#define FLIGHT_MAX_NS 1000000000ull   /* 1 s: backoff and SLOW_FACTOR included */
#define SLOW_FACTOR 4u
#define DEV_REGIONS_MAX 64u   /* a port's packet memory regions (gw_dp_regions) */
#define DEV_BATCH 64u         /* chunks encoded by one launch */
#define PIPE_POLL_US 100u     /* a pipelined round's look for a tensor */

static uint32_t pow2_above(uint32_t v)
{
	uint32_t r = 1;
	while (r <= v)
		r <<= 1;
	return r;
}

/* The dataplane chunk ch goes through: its shard's. */
static gw_dp *chunk_dp(const gw_comm *c, uint32_t ch)
{
	return coll_dp_to(c, coll_shard_of(&c->L, ch));
}

void dense_comm_fini(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	if (!d)
		return;
	if (d->ring) {
		for (uint32_t i = 0; i <= d->ring_mask; i++)
			if (d->ring[i].pkt)
				gw_dp_free(chunk_dp(c, d->ring[i].chunk), &d->ring[i].pkt, 1);
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
	GW_FREE_ALL(d->ring, d->txq, d->txq_tmp, d->got, d->shorts, d->gcopy, d->views, d->tviews, d);
	c->eng = NULL;
}

int dense_comm_init(gw_comm *c, const gw_comm_config *cfg)
{
	struct dense_worker *d = calloc(1, sizeof(*d));
	if (!d)
		return GW_ERR(GW_ENOMEM);
	c->eng = d;
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
	if (d->gpu)
		return d->dev_ef;
	return d->ef ? gw_ef_data(d->ef) : NULL;
}

/* Which hand-off carries the frames, and why not dma-buf (probed on both
 * sides as NCCL probes it): said once, so a user sees what the NIC reads. */
static void handoff(gw_comm *c, gw_gpu *g)
{
	char why[160] = "";
	int ok = gw_gpu_dmabuf(g) == 1;
	if (!ok)
		snprintf(why, sizeof(why), "%s", gw_error_detail());
	for (unsigned p = 0; ok && p < c->ndp; p++)
		if (gw_dp_dmabuf(c->dps[p]) != 1) {
			ok = 0;
			snprintf(why, sizeof(why), "%s", gw_error_detail());
		}
	int emu = !strcmp(gw_gpu_name(g), "emu");
	snprintf(c->gpu_handoff, sizeof(c->gpu_handoff), "%s kernels write frames into the "
		 "dataplane's packet memory%s; %s", gw_gpu_name(g),
		 emu ? " (emulated: host memory)" : ", pinned and mapped for the device", ok ? "dma-buf: GPU and NIC both support it, but this build "
		 "sends from packet memory" : why);
}

int dense_set_gpu(gw_comm *c, gw_gpu *g)
{
	struct dense_worker *d = c->eng;
	const gw_coll_job *j = &c->L.job;
	if (d->gpu)
		return GW_ERRF(GW_ESTATE, "gpu: already set");
	if (!gw_gpu_takes(j->up_codec) || !gw_gpu_takes(j->down_codec))
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no kernels for %s %s (raw, bf16, int8, "
			       "3lc, topk)",
			       gw_gpu_takes(j->up_codec) ? "down" : "up",
			       gw_codec_name(gw_gpu_takes(j->up_codec) ? j->down_codec
									 : j->up_codec));
	/* Every packet this worker sends or receives lies in its ports'
	 * regions: registered once, the kernels reach them all. */
	for (unsigned p = 0; p < c->ndp; p++) {
		gw_dp_region r[DEV_REGIONS_MAX];
		int n = gw_dp_regions(c->dps[p], r, DEV_REGIONS_MAX);
		if (n < 0 || n > (int)DEV_REGIONS_MAX)
			return GW_ERRF(GW_EUNSUPPORTED, "gpu: port %u cannot name its packet "
				       "memory (%d regions)", p, n);
		for (int i = 0; i < n; i++) {
			int rc = gw_gpu_register(g, r[i].addr, r[i].len);
			if (rc < 0)
				return rc;
		}
	}
	double f = 0.0, s = 0.0;
	if ((j->up_codec == GW_CODEC_TOPK &&
	     gw_encoder_get_param(d->enc, GW_PARAM_FRACTION, &f) < 0) ||
	    (j->up_codec == GW_CODEC_3LC &&
	     gw_encoder_get_param(d->enc, GW_PARAM_SPARSITY, &s) < 0))
		return GW_ERRF(GW_EPARAM, "gpu: the uplink codec's parameter is missing");
	if (d->ef) {
		if (!(d->dev_ef = gw_gpu_alloc(g, j->dim * sizeof(float))))
			return GW_ERRF(GW_ENOMEM, "gpu: no memory for the error buffer");
		int rc = gw_gpu_zero(g, d->dev_ef, j->dim);
		if (rc < 0)
			return rc;
	}
	d->fraction = f;
	d->sparsity = s;
	handoff(c, g);
	d->gpu = g;
	coll_pipe_free(c);   /* device tensors: whole rounds only */
	return GW_OK;
}

/* One call's moving parts. */
struct call {
	float *out;
	uint32_t next;      /* next chunk to encode */
	uint32_t lo;        /* oldest chunk without a result */
	uint32_t results;
	int enc_done;
};

static uint32_t up_frame_len(const gw_comm *c, const gw_pkt *p)
{
	return p->len - GW_PKT_HDR_LEN - (c->L.keyed ? GW_PKT_MAC_LEN : 0);
}

/* The window rule, and room in the ring, for chunk ch with inflight
 * chunks in flight. */
static int may_send_at(const gw_comm *c, const struct call *k, uint32_t ch, uint32_t inflight)
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
	return may_send_at(c, k, k->next, d->inflight);
}

/* The codec of chunk ch's frames in direction dir (0 up, 1 down). */
static int chunk_codec(const struct coll_layout *L, int dir, uint32_t ch)
{
	return coll_chunk_raw(L, ch) ? GW_CODEC_RAW : dir ? L->job.down_codec : L->job.up_codec;
}

/* Where in the device tensor a frame of chunk ch (direction dir) counts
 * from, and how many elements it may touch: a sparse chunk's keys from
 * the chunk's first element, a layout's dense frames from their tensor's,
 * other dense frames from the whole tensor's. */
static void dev_span(const struct coll_layout *L, int dir, uint32_t ch, uint64_t *off,
		     uint64_t *n)
{
	if (coll_chunk_sparse(L, dir, ch)) {
		*off = coll_chunk_start(L, ch);
		*n = coll_chunk_len(L, ch);
	} else if (L->dense.t) {
		const struct coll_tensor *T = &L->dense.t[coll_tensor_index(L, ch)];
		*off = T->start;
		*n = T->n;
	} else {
		*off = 0;
		*n = L->job.dim;
	}
}

/* Decode-accumulates a frame of chunk ch (dir 0: ours, 1: a result) into
 * the device tensor base (dev_span says where it counts from). GW_E* of
 * the device, else 0 and the frame's verdict (values added, or GW_E*) in
 * *verdict. */
static int dev_decode(gw_comm *c, int dir, uint32_t ch, const uint8_t *frame, uint32_t len,
		      float *base, int32_t *verdict)
{
	struct dense_worker *d = c->eng;
	uint64_t off, n;
	dev_span(&c->L, dir, ch, &off, &n);
	return gw_gpu_decode(d->gpu, chunk_codec(&c->L, dir, ch), &frame, &len, 1, base + off,
			     n, verdict);
}

/* gw_ef_restore on the device: the frame goes back into the buffer, and
 * what it made non-finite restarts at 0. */
static int dev_restore(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	int32_t verdict;
	int rc = dev_decode(c, 0, ch, frame, len, d->dev_ef, &verdict);
	if (rc < 0 || verdict < 0)
		return rc < 0 ? rc : verdict;
	return gw_gpu_finite(d->gpu, d->dev_ef + coll_chunk_start(&c->L, ch),
			     coll_chunk_len(&c->L, ch));
}

/* Our frame of chunk ch goes back to the error buffer. */
static int ef_give_back(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	if (!d->ef)
		return GW_ERR(GW_ESTATE);   /* lossless mode never leaves one out */
	if (d->gpu)
		return dev_restore(c, ch, frame, len);
	gw_ef *ef = d->views ? d->views[ch]
		  : d->tviews ? d->tviews[coll_tensor_index(&c->L, ch)] : d->ef;
	int rc = gw_ef_restore(ef, frame, len);
	return rc < 0 ? rc : GW_OK;
}

/* Our frame of a chunk that was left out goes back to the error buffer. */
static int restore(gw_comm *c, uint32_t ch, const uint8_t *frame, uint32_t len)
{
	struct dense_worker *d = c->eng;
	d->left_out++;
	c->st.left_out++;
	return ef_give_back(c, ch, frame, len);
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
		if (ef_give_back(c, ch, buf, (uint32_t)n) < 0)
			return GW_ERR(GW_ESTATE);
		return GW_ERR(GW_EBUDGET);
	}
	return n;
}

/* The oldest chunk without a result moves past every finished one,
 * freeing their packets (those still queued are freed by flush). */
static void advance_lo(gw_comm *c, struct call *k)
{
	struct dense_worker *d = c->eng;
	while (k->lo < k->next && d->got[k->lo]) {
		struct flight *g = &d->ring[k->lo & d->ring_mask];
		if (g->pkt && g->chunk == k->lo && !g->queued) {
			gw_dp_free(chunk_dp(c, g->chunk), &g->pkt, 1);
			g->pkt = NULL;
		}
		k->lo++;
	}
}

static uint32_t up_room(const gw_comm *c, const gw_pkt *p)
{
	return p->room - GW_PKT_HDR_LEN - (c->L.keyed ? GW_PKT_MAC_LEN : 0);
}

static int post_chunk(gw_comm *c, struct call *k, gw_pkt *p, int n, uint64_t now);

/* Encodes chunk k->next into a packet and queues it (or, when its result
 * came first, returns its frame to the error buffer). */
static int fill_one(gw_comm *c, struct call *k, uint64_t now)
{
	gw_pkt *p;
	uint32_t ch = k->next;
	gw_dp *dp = chunk_dp(c, ch);
	if (gw_dp_alloc(dp, &p, 1) != 1)
		return 0;
	int n = encode_chunk(c, ch, p->data + GW_PKT_HDR_LEN, up_room(c, p));
	return post_chunk(c, k, p, n, now);
}

/* Queues packet p, whose frame of chunk k->next (n bytes, or GW_E*) is
 * written (or, when its result came first, returns the frame to the error
 * buffer). p is the caller's no more. */
static int post_chunk(gw_comm *c, struct call *k, gw_pkt *p, int n, uint64_t now)
{
	struct dense_worker *d = c->eng;
	uint32_t ch = k->next;
	gw_dp *dp = chunk_dp(c, ch);
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

/* Device tensors: as many chunks as the window allows (up to DEV_BATCH,
 * all of one tensor of the layout, so each launch sees its tensor's
 * context) get packets, one launch encodes them all into those packets,
 * and each is queued as fill_one queues one. Returns chunks queued, 0
 * when the pool is empty, or GW_E*. */
static int fill_dev(gw_comm *c, struct call *k, uint64_t now)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	gw_pkt *pk[DEV_BATCH];
	uint8_t *bufs[DEV_BATCH];
	uint32_t lens[DEV_BATCH], n = 0, room = UINT32_MAX, ch0 = k->next;
	uint32_t ti = coll_tensor_index(L, ch0), end = L->chunks, first = ch0;
	uint64_t off = 0, dim = L->job.dim;
	if (L->dense.t) {
		const struct coll_tensor *T = &L->dense.t[ti];
		end = T->first + T->chunks;
		first = ch0 - T->first;
		off = T->start;
		dim = T->n;
	}
	while (n < DEV_BATCH && ch0 + n < end && d->txq_n + n <= d->ring_mask &&
	       may_send_at(c, k, ch0 + n, d->inflight + n) &&
	       gw_dp_alloc(chunk_dp(c, ch0 + n), &pk[n], 1) == 1) {
		bufs[n] = pk[n]->data + GW_PKT_HDR_LEN;
		room = GW_MIN(room, up_room(c, pk[n]));
		n++;
	}
	if (!n)
		return 0;
	struct gw_gpu_chunks j = {.codec = chunk_codec(L, 0, ch0), .tensor = ti,
		.fraction = d->fraction, .sparsity = d->sparsity,
		.g = d->grad + off, .e = d->dev_ef ? d->dev_ef + off : NULL, .dim = dim,
		.chunk_elems = L->job.chunk_elems, .first = first, .n = n,
		.bufs = bufs, .room = room, .lens = lens};
	int rc = gw_gpu_encode_chunks(d->gpu, &j);
	uint32_t i = 0;
	for (; rc >= 0 && i < n; i++)
		rc = post_chunk(c, k, pk[i], (int)lens[i], now);
	for (; i < n; i++)   /* a failed batch: its packets go back */
		gw_dp_free(chunk_dp(c, ch0 + i), &pk[i], 1);
	return rc < 0 ? rc : (int)n;
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
		gw_dp *dp = chunk_dp(c, pkt_chunk(d->txq[i]));
		uint32_t j = i + 1;
		while (j < d->txq_n && chunk_dp(c, pkt_chunk(d->txq[j])) == dp)
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

/* A RESULT: validate everything before out is touched. */
/* A RESULT that passed every check but its frame's decode: 1, or 0 (it
 * is counted and dropped). */
static int accept_result(gw_comm *c, const gw_pkt *pkt, struct res *r)
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

/* The rest of a RESULT once its frame was decoded into out (rc: values
 * added, or the frame's GW_E*, in which case nothing was). */
static int finish_result(gw_comm *c, struct call *k, const struct res *r, int32_t rc)
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
		gw_dp_free(chunk_dp(c, ch), &f->pkt, 1);
		f->pkt = NULL;
	}
	advance_lo(c, k);
	return 1;
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
	int rc = finish_result(c, k, r, v);
	if (rc <= 0)
		return rc;
	dense_pipe_store(c, r->ch, d->racc);
	uint32_t ti = coll_tensor_index(L, r->ch);
	if (++d->tres[ti] == L->dense.t[ti].chunks)
		coll_pipe_done(c->pipe, ti, d->tag);
	return 1;
}

static int on_result(gw_comm *c, struct call *k, const gw_pkt *pkt)
{
	struct res r;
	if (!accept_result(c, pkt, &r))
		return 0;
	if (((struct dense_worker *)c->eng)->tag)
		return pipe_result(c, k, &r);
	const struct coll_layout *L = &c->L;
	int32_t rc = coll_decode_chunk(L, 1, r.frame, r.flen, k->out + coll_chunk_start(L, r.ch),
				       r.ch);
	return finish_result(c, k, &r, rc);
}

/* Device tensors: a burst's accepted RESULTs are decoded by one launch
 * per place their frames count from (dev_span: the whole tensor's, a
 * layout tensor's, a sparse chunk's), then finished in arrival order.
 * Their packets stay the caller's until this returns. */
static int dev_results(gw_comm *c, struct call *k, const struct res *rs, uint32_t n)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	const uint8_t *frames[COLL_RX_BURST];
	uint32_t lens[COLL_RX_BURST], at[COLL_RX_BURST];
	int32_t verdicts[COLL_RX_BURST], v[COLL_RX_BURST];
	uint8_t done[COLL_RX_BURST] = {0};
	int rc = GW_OK;
	for (uint32_t i = 0; i < n; i++)
		d->got[rs[i].ch] = 0;   /* no longer pending: finish decides */
	for (uint32_t i = 0; rc == GW_OK && i < n; i++) {
		if (done[i])
			continue;
		uint64_t off, len, o, l;
		uint32_t m = 0;
		int codec = chunk_codec(L, 1, rs[i].ch);
		dev_span(L, 1, rs[i].ch, &off, &len);
		for (uint32_t q = i; q < n; q++) {
			if (done[q])
				continue;
			dev_span(L, 1, rs[q].ch, &o, &l);
			if (o != off || l != len || chunk_codec(L, 1, rs[q].ch) != codec)
				continue;
			frames[m] = rs[q].frame;
			lens[m] = rs[q].flen;
			at[m++] = q;
			done[q] = 1;
		}
		rc = gw_gpu_decode(d->gpu, codec, frames, lens, m, k->out + off, len, v);
		for (uint32_t q = 0; rc == GW_OK && q < m; q++)
			verdicts[at[q]] = v[q];
	}
	for (uint32_t i = 0; rc >= 0 && i < n; i++)
		rc = finish_result(c, k, &rs[i], verdicts[i]);
	return rc < 0 ? rc : GW_OK;
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
			ef_give_back(c, ch, f->pkt->data + GW_PKT_HDR_LEN,
				     up_frame_len(c, f->pkt));
		gw_dp_free(chunk_dp(c, ch), &f->pkt, 1);
		f->pkt = NULL;
	}
	d->txq_n = 0;
	gw_encode_abandon(d->enc);
	if (d->raw)
		gw_encode_abandon(d->raw);
}

/* A call's start, off the dataplane: an aliased grad copied (the encoder
 * may still read it once out is zeroed), the encoder begun, out zeroed.
 * Device tensors: the kernels encode chunk batches (fill_dev); the host
 * encoder is not used. */
static int prepare(gw_comm *c, const float **grad, float *out, uint64_t dim)
{
	struct dense_worker *d = c->eng;
	const float *g = *grad;
	int rc = GW_OK;
	if (g < out + dim && out < g + dim) {
		if (d->gpu) {
			if (!d->dev_gcopy && !(d->dev_gcopy = gw_gpu_alloc(d->gpu, dim * sizeof(float))))
				return GW_ERRF(GW_ENOMEM, "gpu: no memory for a copy of grad");
			if ((rc = gw_gpu_dcopy(d->gpu, d->dev_gcopy, g, dim)) < 0)
				return rc;
			g = d->dev_gcopy;
		} else {
			if (!d->gcopy && !(d->gcopy = malloc(dim * sizeof(float))))
				return GW_ERR(GW_ENOMEM);
			memcpy(d->gcopy, g, dim * sizeof(float));
			g = d->gcopy;
		}
	}
	*grad = g;
	gw_tensor t = {.id = 0, .dim = dim, .values = g};
	/* One tensor: its encoder starts here; a layout's start at their
	 * first chunks (encode_chunk). */
	d->cur = c->L.dense.t ? NULL : d->enc;
	if (!d->gpu && !c->L.dense.sparse[0] && !c->L.dense.t &&
	    (rc = gw_encode_begin(d->enc, &t)) < 0)
		return rc;
	if (d->gpu)
		return gw_gpu_zero(d->gpu, out, dim);
	memset(out, 0, dim * sizeof(float));
	return GW_OK;
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
	 * whose frames then go back to the error buffer (fill_one). */
	while (k.results < L->chunks || k.next < L->chunks) {
		int progress = 0;
		if (d->tag && (rc = coll_pipe_cancelled(c->pipe, d->tag)) < 0)
			goto out;
		while (k.next < L->chunks && d->txq_n <= d->ring_mask && may_send(c, &k) &&
		       chunk_ready(c, &k)) {
			int r = d->gpu ? fill_dev(c, &k, now) : fill_one(c, &k, now);
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
				if (!d->gpu) {
					rc = on_result(c, &k, c->rx[i]);
				} else if (accept_result(c, c->rx[i], &rs[nres])) {
					d->got[rs[nres++].ch] = GOT_PENDING;
				}
				if (rc < 0) {
					gw_dp_free(dp, c->rx + i, (unsigned)(n - i));
					goto out;
				}
			}
			if (nres && (rc = dev_results(c, &k, rs, nres)) < 0) {
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
	uint8_t none[GW_BUDGET_MIN];
	rc = d->gpu || L->dense.sparse[0] || !d->cur ||
		     gw_encode_next(d->cur, none, sizeof(none)) == 0 ? GW_OK : GW_ERR(GW_ESTATE);
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
