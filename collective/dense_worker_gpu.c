/* The dense worker's device path (dense_worker.h; gw_comm_set_gpu): the
 * gradient, out and the error buffer live in an executor's memory
 * (gpudirect: "cuda", or "emu" on the host). A launch encodes a batch of
 * chunks straight into the dataplane's packet memory, which is registered
 * with the executor once; a burst's RESULTs are decoded into out by a
 * launch per place their frames count from; a left-out frame goes back
 * into the device's error buffer the same way. The shard cannot tell
 * such a worker from a host one: the kernels write codec/'s bytes. */
#include <stdio.h>
#include <string.h>

#include "dense_worker.h"

#define DEV_REGIONS_MAX 64u   /* a port's packet memory regions (gw_dp_regions) */
#define DEV_BATCH 64u         /* chunks encoded by one launch */

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

/* Before the first call (gw_comm_set_gpu checks): from here on every
 * call takes this path. */
int dense_set_gpu(gw_comm *c, gw_gpu *g)
{
	struct dense_worker *d = c->eng;
	const gw_coll_job *j = &c->L.job;
	if (d->gpu)
		return GW_ERRF(GW_ESTATE, "gpu: already set");
	if (!gw_gpu_takes(j->up_codec) || !gw_gpu_takes(j->down_codec))
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no kernels for %s %s (raw, bf16, int8, "
			       "3lc, topk, hq)",
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
	if (j->up_codec == GW_CODEC_HQ) {
		/* The host encoder holds hq's params (this worker's seed
		 * already mixed in by dense_comm_init): the kernels take the same. */
		double v[4];
		const int ids[] = {GW_PARAM_BITS, GW_PARAM_ROTATE, GW_PARAM_ROUNDING,
				   GW_PARAM_SEED};
		for (int i = 0; i < 4; i++)
			if (gw_encoder_get_param(d->enc, ids[i], &v[i]) < 0)
				return GW_ERRF(GW_EPARAM, "gpu: hq's parameters are missing");
		d->hq_bits = (unsigned)v[0];
		d->hq_rotate = (unsigned)v[1];
		d->hq_stochastic = (unsigned)v[2];
		d->hq_seed = (uint32_t)v[3];
	}
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
	d->ops = &dense_gpu_ops;
	coll_pipe_free(c);   /* device tensors: whole rounds only */
	return GW_OK;
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

/* As many chunks as the window allows (up to DEV_BATCH, all of one
 * tensor of the layout, so each launch sees its tensor's context) get
 * packets, one launch encodes them all into those packets, and each is
 * queued as the host path queues one. Returns chunks queued, 0 when the
 * pool is empty, or GW_E*. */
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
	       dense_may_send_at(c, k, ch0 + n, d->inflight + n) &&
	       gw_dp_alloc(dense_chunk_dp(c, ch0 + n), &pk[n], 1) == 1) {
		bufs[n] = pk[n]->data + GW_PKT_HDR_LEN;
		room = GW_MIN(room, dense_up_room(c, pk[n]));
		n++;
	}
	if (!n)
		return 0;
	struct gw_gpu_chunks j = {.codec = chunk_codec(L, 0, ch0), .tensor = ti,
		.fraction = d->fraction, .sparsity = d->sparsity,
		.g = d->grad + off, .e = d->dev_ef ? d->dev_ef + off : NULL, .dim = dim,
		.chunk_elems = L->job.chunk_elems, .first = first, .n = n,
		.bufs = bufs, .room = room, .lens = lens};
	/* hq: each chunk on the scale the shard named and the round's
	 * rotation, as the host path's encoder takes them. */
	uint32_t seeds[DEV_BATCH];
	if (j.codec == GW_CODEC_HQ) {
		for (uint32_t i = 0; i < n; i++)
			seeds[i] = coll_hq_seed(L, c->round, ch0 + i);
		j.bits = d->hq_bits;
		j.rotate = d->hq_rotate;
		j.stochastic = d->hq_stochastic;
		j.seed = d->hq_seed;
		j.scales = d->hq_scale + ch0;
		j.seeds = seeds;
		j.count0 = d->hq_frames;
	}
	int rc = gw_gpu_encode_chunks(d->gpu, &j);
	if (rc >= 0 && j.codec == GW_CODEC_HQ)
		d->hq_frames += n;
	uint32_t i = 0;
	for (; rc >= 0 && i < n; i++)
		rc = dense_post_chunk(c, k, pk[i], (int)lens[i], now);
	for (; i < n; i++)   /* a failed batch: its packets go back */
		gw_dp_free(dense_chunk_dp(c, ch0 + i), &pk[i], 1);
	return rc < 0 ? rc : (int)n;
}

/* A RESULT that passes the checks is put aside for the burst's launches
 * (dev_results); pending, a repeat in the same burst is a duplicate. */
static int dev_result(gw_comm *c, struct call *k, const gw_pkt *pkt, struct res *rs,
		      uint32_t *nres)
{
	struct dense_worker *d = c->eng;
	(void)k;
	if (dense_accept_result(c, pkt, &rs[*nres]))
		d->got[rs[(*nres)++].ch] = GOT_PENDING;
	return 0;
}

/* A burst's accepted RESULTs are decoded by one launch per place their
 * frames count from (dev_span: the whole tensor's, a layout tensor's, a
 * sparse chunk's), then finished in arrival order. Their packets stay
 * the caller's until this returns. */
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
		rc = dense_finish_result(c, k, &rs[i], verdicts[i]);
	return rc < 0 ? rc : GW_OK;
}

static int dev_copy(gw_comm *c, const float **grad, uint64_t dim)
{
	struct dense_worker *d = c->eng;
	if (!d->dev_gcopy && !(d->dev_gcopy = gw_gpu_alloc(d->gpu, dim * sizeof(float))))
		return GW_ERRF(GW_ENOMEM, "gpu: no memory for a copy of grad");
	int rc = gw_gpu_dcopy(d->gpu, d->dev_gcopy, *grad, dim);
	if (rc < 0)
		return rc;
	*grad = d->dev_gcopy;
	return GW_OK;
}

/* The kernels encode chunk batches from the device tensor (fill_dev):
 * the host encoder is neither begun nor ended. */
static int dev_begin(gw_comm *c, const float *grad, uint64_t dim)
{
	(void)c;
	(void)grad;
	(void)dim;
	return GW_OK;
}

static int dev_finish(gw_comm *c)
{
	(void)c;
	return GW_OK;
}

static int dev_zero(gw_comm *c, float *out, uint64_t dim)
{
	const struct dense_worker *d = c->eng;
	return gw_gpu_zero(d->gpu, out, dim);
}

static const float *dev_residual(const gw_comm *c)
{
	const struct dense_worker *d = c->eng;
	return d->dev_ef;
}

const struct dense_path_ops dense_gpu_ops = {
	.fill = fill_dev, .result = dev_result, .results = dev_results,
	.restore = dev_restore, .copy = dev_copy, .begin = dev_begin, .zero = dev_zero,
	.finish = dev_finish, .residual = dev_residual,
};
