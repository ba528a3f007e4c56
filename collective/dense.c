/* The dense engine (gw_allreduce): its layout and chunk sizing, and its
 * entry in the engine table; the worker is dense_worker.c (its host and
 * device paths dense_worker_host.c, dense_worker_gpu.c), the shard
 * dense_agg.c.
 *
 * Every coordinate goes up and down, chunk by chunk, one frame per chunk
 * and packet, through the job's uplink and downlink codecs. A chunk's
 * frame may be dense (its elements) or sparse (keys counted from the
 * chunk's first element): the layout finds out by encoding a worst case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"

/* One frame of the n values x, at most room bytes, holding all of them:
 * its length, or GW_EBUDGET. *sparse gets whether it is sparse. */
static int probe_one(gw_encoder *enc, const float *x, uint32_t n, uint32_t room,
		     uint8_t *buf, int *sparse)
{
	gw_tensor t = {.id = 0, .dim = n, .values = x};
	int rc = gw_encode_begin(enc, &t);
	int len = rc < 0 ? rc : gw_encode_next(enc, buf, room);
	rc = len == 0 ? GW_ERR(GW_EBUDGET) : len;
	if (len > 0) {
		gw_frame_info fi;
		rc = gw_frame_peek(buf, (size_t)len, &fi);
		*sparse = (fi.flags & GW_FF_SPARSE) != 0;
		/* Dense: all n elements; sparse: keys below n. And nothing left
		 * for a second frame: a chunk is one packet. */
		if (rc == 0 && (*sparse ? fi.start + fi.span > n : fi.count != n))
			rc = GW_ERR(GW_EBUDGET);
		if (rc == 0 && gw_encode_next(enc, buf, room) != 0)
			rc = GW_ERR(GW_EBUDGET);
	}
	gw_encode_abandon(enc);
	return rc < 0 ? rc : len;
}

/* Sparse frames spend more bytes on a key the farther it lies from the
 * previous one (varints, byte-count flags): the worst case then has its
 * largest values spread every `gap` elements, and the rest of what a
 * codec keeps packed at the front. */
static void spread_case(float *x, uint32_t n, uint32_t gap)
{
	for (uint32_t i = 0; i < n; i++) {
		float m = i % gap == gap / 2 ? 2.0f : 1.0f - 0.5f * (float)i / (float)n;
		x[i] = i & 1 ? -m : m;
	}
}

/* Encodes a worst case of n elements (no zeros, no runs, and for sparse
 * frames every key spacing that costs more bytes) with codec and checks
 * that one frame of at most room bytes holds it; *sparse (if not NULL)
 * says whether the codec's frames are sparse. */
static int probe(int codec, const char *params, uint32_t n, uint32_t room,
		 const float *x, int *sparse, const char **why)
{
	static const uint32_t gaps[] = {128, 256, 16384, 65536};
	gw_encoder *enc = coll_encoder(codec, params, n, why);
	if (!enc)
		return GW_ERR(GW_EINVAL);
	uint8_t *buf = malloc(GW_FRAME_MAX);
	int sp = 0;
	int rc = buf ? probe_one(enc, x, n, room, buf, &sp) : GW_ERR(GW_ENOMEM);
	float *y = rc >= 0 && sp ? malloc((size_t)n * sizeof(float)) : NULL;
	if (rc >= 0 && sp && !y)
		rc = GW_ERR(GW_ENOMEM);
	for (size_t g = 0; y && rc >= 0 && g < GW_ARRAY_SIZE(gaps) && gaps[g] < n; g++) {
		spread_case(y, n, gaps[g]);
		rc = probe_one(enc, y, n, room, buf, &sp);
	}
	if (sparse)
		*sparse = sp;
	free(y);
	gw_encoder_free(enc);
	free(buf);
	return rc < 0 ? rc : GW_OK;
}

int coll_frame_of_chunk(const struct coll_layout *L, int dir,
			const gw_frame_info *fi, uint32_t ch)
{
	uint32_t len = coll_chunk_len(L, ch);
	int raw = coll_chunk_raw(L, ch), sparse = coll_chunk_sparse(L, dir, ch);
	int codec = raw ? GW_CODEC_RAW : dir ? L->job.down_codec : L->job.up_codec;
	if (fi->codec != codec || fi->tensor != coll_tensor_index(L, ch) ||
	    !(fi->flags & GW_FF_SPARSE) != !sparse)
		return GW_ERR(GW_ECORRUPT);
	if (sparse)
		return fi->start + fi->span <= len ? GW_OK : GW_ERR(GW_ERANGE);
	return fi->start == coll_chunk_off(L, ch) && fi->count == len ? GW_OK
								      : GW_ERR(GW_ERANGE);
}

static float *worst_case(uint32_t n)
{
	float *x = malloc((size_t)n * sizeof(float));
	for (uint32_t i = 0; x && i < n; i++)
		/* Magnitudes all near the maximum: 3lc quantizes none to zero,
		 * so there is no zero run to shorten its frame. */
		x[i] = (i & 1 ? -1.0f : 1.0f) * (1.0f - (float)(i % 97) * 1e-4f);
	return x;
}

int coll_hq_params(const char *up_params, unsigned *bits, unsigned *rotate)
{
	const char *why = NULL;
	gw_encoder *enc = coll_encoder(GW_CODEC_HQ, up_params, 0, &why);
	double b = 0, r = 0;
	int rc = enc && gw_encoder_get_param(enc, GW_PARAM_BITS, &b) == 0 &&
			 gw_encoder_get_param(enc, GW_PARAM_ROTATE, &r) == 0
		 ? GW_OK : GW_ERR(GW_EINVAL);
	gw_encoder_free(enc);
	*bits = (unsigned)b;
	*rotate = r != 0;
	return rc;
}

/* The largest sum frame of n elements an hq job's shard may send. */
static int hq_sum_max(const gw_coll_job *j, uint32_t n)
{
	unsigned bits, rot;
	int rc = coll_hq_params(j->up_params, &bits, &rot);
	return rc < 0 ? rc : gw_sum_frame_max(bits, j->workers, n);
}

static int fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
		const float *x, const char **why)
{
	uint32_t mac = j->key ? GW_PKT_MAC_LEN : 0;
	uint32_t bm = (j->workers + 7u) / 8u;
	if (payload_max < GW_PKT_HDR_LEN + bm + mac + GW_BUDGET_MIN)
		return GW_ERR(GW_EBUDGET);
	int rc = probe(j->up_codec, j->up_params, n,
		       payload_max - GW_PKT_HDR_LEN - mac, x, NULL, why);
	if (rc == 0 && j->up_codec == GW_CODEC_HQ) {
		/* What goes down is the workers' summed codes: W times the
		 * largest code at most, in the bits that holds. */
		int max = hq_sum_max(j, n);
		if (max < 0)
			return max;
		return (uint32_t)max <= payload_max - GW_PKT_HDR_LEN - bm - mac
			       ? GW_OK : GW_ERR(GW_EBUDGET);
	}
	if (rc == 0)
		rc = probe(j->down_codec, j->down_params, n,
			   payload_max - GW_PKT_HDR_LEN - bm - mac, x, NULL, why);
	return rc;
}

static int dense_chunk_fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
			    const float *x, const char **why)
{
	float *own = NULL;
	if (!x) {
		x = own = worst_case(n);
		if (!x)
			return GW_ERR(GW_ENOMEM);
	}
	int rc = fits(j, n, payload_max, x, why);
	/* A tensor below min_elems is one raw chunk of up to min_elems - 1. */
	const gw_dense_job *dj = j->engine_params;
	if (rc == 0 && dj && dj->min_elems > 1) {
		gw_coll_job r = *j;
		r.up_codec = r.down_codec = GW_CODEC_RAW;
		r.up_params = r.down_params = NULL;
		if (fits(&r, dj->min_elems - 1, payload_max, x, why) < 0) {
			*why = "min_elems: a tensor below it is one raw chunk, and one raw "
			       "frame of min_elems - 1 values does not fit a packet";
			rc = GW_ERR(GW_EINVAL);
		}
	}
	free(own);
	return rc;
}

static int dense_chunk_elems(const gw_coll_job *j, uint32_t payload_max, const char **why)
{
	/* No dense codec spends less than a byte on 5 elements, so this bounds
	 * the search from above; a sparse codec (top-k keeps a fraction of a
	 * chunk) may cover far more, up to 2^20. */
	float *x = worst_case(1u << 20);
	if (!x)
		return GW_ERR(GW_ENOMEM);
	int up_sparse = 0, down_sparse = 0, rc;
	if ((rc = probe(j->up_codec, j->up_params, 400, GW_FRAME_MAX, x, &up_sparse, why)) < 0 ||
	    (rc = probe(j->down_codec, j->down_params, 400, GW_FRAME_MAX, x, &down_sparse, why)) < 0) {
		free(x);
		return rc;
	}
	uint32_t hi = up_sparse && down_sparse ? 1u << 20
		: (uint32_t)GW_MIN((uint64_t)payload_max * 5u, 1u << 20);
	hi -= hi % COLL_CHUNK_ALIGN;
	/* Fits is monotone in n: binary search over multiples of 40. */
	uint32_t lo = 0;   /* lo fits (0 trivially), hi + ALIGN does not */
	while (lo < hi) {
		uint32_t mid = lo + ((hi - lo) / COLL_CHUNK_ALIGN + 1) / 2 * COLL_CHUNK_ALIGN;
		rc = fits(j, mid, payload_max, x, why);
		if (rc == GW_EUNSUPPORTED || rc == GW_EINVAL || rc == GW_ENOMEM ||
		    rc == GW_EPARAM || rc == GW_EBOUNDS) {
			free(x);
			return rc;
		}
		if (rc == 0)
			lo = mid;
		else
			hi = mid - COLL_CHUNK_ALIGN;
	}
	free(x);
	if (!lo)
		*why = "chunk_elems: not even 40 elements fit one packet with these codecs";
	return lo ? (int)lo : GW_ERR(GW_EBUDGET);
}

/* A 32-bit hash of what the layout adds to the job (the digest's): 0 for
 * the default, one tensor without options. */
static uint32_t layout_hash(const struct coll_dense *D)
{
	if (!D->nt && !D->min_elems && !D->momentum)
		return 0;
	uint64_t h = 0x6772616477697265ull;   /* "gradwire" */
	float mu = D->momentum;
	uint32_t mub;
	memcpy(&mub, &mu, sizeof(mub));
	uint64_t head[3] = {D->nt, D->min_elems, mub};
	for (uint32_t i = 0; i < 3 + D->nt; i++) {
		h ^= i < 3 ? head[i] : D->t[i - 3].n;
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	uint32_t x = (uint32_t)(h ^ (h >> 32));
	return x ? x : 1u;
}

/* L's tensors from the job's gw_dense_job (dj, or NULL), checked: the
 * chunk count, and what the digest compares. */
static int dense_tensors(struct coll_layout *L, const gw_dense_job *dj, const char **why)
{
	static _Thread_local char msg[160];
	const gw_dense_job none = {0};
	struct coll_dense *D = &L->dense;
	uint64_t ce = L->job.chunk_elems;
	if (!dj)
		dj = &none;
	if (!(dj->down_momentum >= 0.0f && dj->down_momentum < 1.0f)) {
		*why = "down_momentum: must be in [0, 1)";
		return GW_ERR(GW_EINVAL);
	}
	if (dj->min_elems > ce) {
		*why = "min_elems: at most chunk_elems (a tensor below it is one raw chunk)";
		return GW_ERR(GW_EINVAL);
	}
	if (dj->ntensors > GW_COLL_TENSORS_MAX) {
		*why = "ntensors: at most 1048576";
		return GW_ERR(GW_EINVAL);
	}
	if (dj->ntensors && !dj->tensor_elems) {
		*why = "tensor_elems: missing (ntensors is not 0)";
		return GW_ERR(GW_EINVAL);
	}
	D->min_elems = dj->min_elems;
	D->momentum = dj->down_momentum;
	uint32_t nt = dj->ntensors ? dj->ntensors : 1;
	if (nt > 1 || D->min_elems) {
		D->t = calloc(nt, sizeof(*D->t));
		if (!D->t)
			return GW_ERR(GW_ENOMEM);
		D->nt = nt;
	}
	uint64_t at = 0, chunks = 0;
	for (uint32_t i = 0; i < nt; i++) {
		uint64_t n = dj->ntensors ? dj->tensor_elems[i] : L->job.dim;
		if (!n || n > L->job.dim - at) {
			if (n)
				snprintf(msg, sizeof(msg), "tensor_elems: the sizes add up past "
					 "dim (%llu) at tensor %u", (unsigned long long)L->job.dim, i);
			else
				snprintf(msg, sizeof(msg), "tensor_elems: tensor %u is empty", i);
			*why = msg;
			goto fail;
		}
		int raw = n < D->min_elems;
		uint64_t k = raw ? 1 : (n + ce - 1) / ce;
		if (D->t)
			D->t[i] = (struct coll_tensor){.start = at, .n = n, .first = (uint32_t)chunks,
						       .chunks = (uint32_t)k, .raw = (uint8_t)raw};
		at += n;
		chunks += k;
		if (chunks >= GW_PKT_CHUNK_LIMIT) {
			*why = "tensor_elems: too many chunks for the 32-bit chunk field";
			goto fail;
		}
	}
	if (at != L->job.dim) {
		snprintf(msg, sizeof(msg), "tensor_elems: the sizes add up to %llu, not dim (%llu)",
			 (unsigned long long)at, (unsigned long long)L->job.dim);
		*why = msg;
		goto fail;
	}
	L->chunks = (uint32_t)chunks;
	D->fp = layout_hash(D);
	return GW_OK;
fail:   /* a layout that failed is freed by no one */
	free(D->t);
	D->t = NULL;
	D->nt = 0;
	return GW_ERR(GW_EINVAL);
}

/* hq goes up and comes down as the shard's integer sum of it: the
 * downlink is hq with the uplink's params (or none), and nothing the
 * shard would have to compute in floats (down_momentum) applies. */
static int hq_job(const struct coll_layout *L, const gw_coll_job *job, const char **why)
{
	int up = L->job.up_codec == GW_CODEC_HQ, down = L->job.down_codec == GW_CODEC_HQ;
	if (!up && !down)
		return GW_OK;
	if (!up || !down) {
		*why = up ? "down_codec: an hq uplink comes down as hq, the shard's integer sum "
			    "(give the same codec both ways)"
			  : "down_codec: hq comes down only as the sum of hq frames (up_codec hq)";
		return GW_ERR(GW_EINVAL);
	}
	const char *dp = job->down_params, *upp = job->up_params;
	if (dp && *dp && strcmp(dp, upp ? upp : "")) {
		*why = "down_params: hq's downlink is the uplink's codes summed; leave them "
		       "out or give the uplink's";
		return GW_ERR(GW_EINVAL);
	}
	const gw_dense_job *dj = job->engine_params;
	if (dj && dj->down_momentum > 0.0f) {
		*why = "down_momentum: an hq shard adds codes and never holds the floats "
		       "momentum needs (run momentum in the workers' optimizer)";
		return GW_ERR(GW_EINVAL);
	}
	return GW_OK;
}

/* The codecs must take their parameters; their frames may be dense or
 * sparse (then chunk-relative). */
static int dense_layout(struct coll_layout *L, const gw_coll_job *job, const char **why)
{
	if (L->job.up_codec == GW_CODEC_COUNTSKETCH || L->job.down_codec == GW_CODEC_COUNTSKETCH) {
		*why = "up_codec: countsketch frames are sketch tables, for engine sketched";
		return GW_ERR(GW_EINVAL);
	}
	int rc = hq_job(L, job, why);
	if (rc < 0)
		return rc;
	uint32_t n = GW_MIN(L->job.chunk_elems, 400u);
	float *x = worst_case(n);
	if (!x)
		return GW_ERR(GW_ENOMEM);
	for (int dir = 0; dir < 2 && rc == 0; dir++) {
		int sp = 0;
		rc = probe(dir ? L->job.down_codec : L->job.up_codec,
			   dir ? job->down_params : job->up_params, n,
			   GW_FRAME_MAX, x, &sp, why);
		L->dense.sparse[dir] = (uint8_t)sp;
		if (rc < 0 && !*why)
			*why = dir ? "down_params: refused" : "up_params: refused";
	}
	free(x);
	if (rc < 0)
		return rc;
	return dense_tensors(L, job->engine_params, why);
}

static int dense_claims(int up_codec)
{
	(void)up_codec;
	return 1;   /* last in the table: what no other engine claims */
}

/* Each worker's process serves a shard of its own. */
static uint32_t dense_colocated(uint32_t workers)
{
	return workers;
}

static void dense_layout_fini(struct coll_layout *L)
{
	free(L->dense.t);
	L->dense.t = NULL;
	L->dense.nt = 0;
}

/* Workers that cut the tensor differently would sum unlike coordinates. */
static void dense_digest(const struct coll_layout *L, struct coll_digest *d)
{
	d->tensors = L->dense.nt;
	d->layout = (uint32_t)L->dense.fp;
}

const struct coll_engine coll_dense_engine = {
	.name = "dense", .id = GW_COLL_DENSE,
	.up_codec = GW_CODEC_RAW, .down_codec = GW_CODEC_RAW,
	.claims = dense_claims, .result = GW_RESULT_DENSE, .colocated_shards = dense_colocated,
	.layout = dense_layout, .layout_fini = dense_layout_fini, .digest = dense_digest,
	.chunk_fits = dense_chunk_fits, .chunk_elems = dense_chunk_elems,
	/* the worker: dense_worker.c; set_gpu: dense_worker_gpu.c */
	.comm_init = dense_comm_init, .comm_fini = dense_comm_fini, .residual = dense_residual,
	.set_gpu = dense_set_gpu,
	.allreduce = dense_allreduce, .allreduce_pipelined = dense_allreduce_pipelined,
	/* the shard: dense_agg.c */
	.agg_init = dense_agg_init, .agg_fini = dense_agg_fini,
	.agg_input = dense_agg_input, .agg_tick = dense_agg_tick, .agg_gone = dense_agg_gone,
};
