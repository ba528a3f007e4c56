/* The Sketched-SGD engine (gw_allreduce_sketched): its layout — sizes,
 * defaults, what a worker's frame of a phase must be, derived by both ends
 * from the job alone — its chunk sizing, and its entry in the engine
 * table; the worker is sketched_worker.c, the shard sketched_agg.c. */
#include <string.h>

#include "sketched.h"

#define DENSE_PARAMS 24u   /* countsketch slice params (wire-format §4.9) */

static int sketched_layout(struct coll_layout *L, const gw_coll_job *job,
			   const char **why)
{
	struct coll_sketch *s = &L->sk;
	gw_coll_job *j = &L->job;
	static const gw_sketched_job none;
	const gw_sketched_job *sp = job->engine_params ? job->engine_params : &none;
	memset(s, 0, sizeof(*s));
	if (j->up_codec != GW_CODEC_COUNTSKETCH) {
		*why = "up_codec: Sketched-SGD sends count sketches (countsketch)";
		return GW_ERR(GW_EINVAL);
	}
	gw_sketched_sizes def;
	if (j->dim > UINT32_MAX || gw_sketched_sizes_default(j->dim, &def) < 0) {
		*why = "dim: Sketched-SGD takes at most 2^32 - 1 coordinates";
		return GW_ERR(GW_EINVAL);
	}
	if (j->shards != 1) {
		*why = "shards: Sketched-SGD needs one shard (HEAVYMIX reads the whole table)";
		return GW_ERR(GW_EINVAL);
	}
	if (j->down_codec != GW_CODEC_RAW && j->down_codec != GW_CODEC_COUNTSKETCH) {
		*why = "down_codec: Sketched-SGD sends key sets (countsketch) down";
		return GW_ERR(GW_EINVAL);
	}
	j->down_codec = GW_CODEC_COUNTSKETCH;
	s->k = sp->topk ? sp->topk : def.k;
	s->m = sp->candidates ? sp->candidates : (uint32_t)GW_MIN(4ull * s->k, j->dim);
	if (s->k > j->dim || s->m < s->k || s->m > j->dim) {
		*why = "topk, candidates: need 1 <= topk <= candidates <= dim";
		return GW_ERR(GW_EINVAL);
	}
	if (!(sp->momentum >= 0.0f && sp->momentum < 1.0f)) {
		*why = "momentum: must be in [0, 1)";
		return GW_ERR(GW_EINVAL);
	}
	s->momentum = sp->momentum;
	gw_encoder *enc = coll_encoder(GW_CODEC_COUNTSKETCH, job->up_params,
				       j->chunk_elems, why);
	if (!enc)
		return GW_ERR(GW_EINVAL);
	double rows, cols, seed;
	gw_encoder_get_param(enc, GW_PARAM_ROWS, &rows);
	gw_encoder_get_param(enc, GW_PARAM_COLS, &cols);
	gw_encoder_get_param(enc, GW_PARAM_SEED, &seed);
	gw_encoder_free(enc);
	s->csk = (gw_csk){.rows = (uint32_t)rows, .cols = (uint32_t)cols,
			  .seed = (uint64_t)seed};
	/* The codec's default sizes know nothing of k: a job's default
	 * sketch is gw_sketched_sizes_default's rows, 2 P k cells in all. */
	if (!job->up_params || !strstr(job->up_params, "rows="))
		s->csk.rows = def.rows;
	if (!job->up_params || !strstr(job->up_params, "cols=")) {
		uint64_t c = (2ull * s->m + s->csk.rows - 1) / s->csk.rows;
		s->csk.cols = (uint32_t)GW_MAX(c, 1);
	}
	if (gw_csk_check(&s->csk) < 0) {
		*why = "up_params: rows * cols above the sketch limit (2^26 cells)";
		return GW_ERR(GW_EINVAL);
	}
	uint32_t ce = j->chunk_elems;
	uint32_t room = coll_sketch_frame_max(ce);
	s->fpr = (s->csk.cols + ce - 1) / ce;
	s->chunks[0] = s->csk.rows * s->fpr;
	s->chunks[1] = (s->m + ce - 1) / ce;
	s->per[0] = gw_keyset_fit(room, 0);
	s->per[1] = gw_keyset_fit(room, 1);
	if (!s->per[0] || !s->per[1]) {
		*why = "chunk_elems: too small for a key set";
		return GW_ERR(GW_EINVAL);
	}
	s->pieces[0] = (s->m + s->per[0] - 1) / s->per[0];
	s->pieces[1] = (s->k + s->per[1] - 1) / s->per[1];
	L->chunks = s->chunks[0] + s->chunks[1];
	return GW_OK;
}

int coll_sketch_frame_ok(const struct coll_layout *L, int ph, const uint8_t *frame,
			 const gw_frame_info *fi, uint32_t c)
{
	const struct coll_sketch *s = &L->sk;
	if (c >= s->chunks[ph] || (fi->flags & GW_FF_SPARSE))
		return GW_ERR(GW_ECORRUPT);
	uint32_t len = coll_sketch_chunk_len(L, ph, c);
	if (ph == 1)
		return fi->codec == GW_CODEC_RAW && fi->tensor == SK_T_VALUES &&
		       fi->start == (uint64_t)c * L->job.chunk_elems && fi->count == len
		       ? GW_OK : GW_ERR(GW_ERANGE);
	uint64_t start = (uint64_t)(c / s->fpr) * s->csk.cols +
			 (uint64_t)(c % s->fpr) * L->job.chunk_elems;
	if (fi->codec != GW_CODEC_COUNTSKETCH || fi->tensor != SK_T_SKETCH ||
	    fi->start != start || fi->count != len || fi->param_len != DENSE_PARAMS)
		return GW_ERR(GW_ERANGE);
	/* The same table: a worker with other sizes or seed would add cells
	 * that mean other coordinates. */
	const uint8_t *p = frame + GW_FRAME_HDR_LEN;
	if (gw_ld16(p) != s->csk.rows || gw_ld32(p + 4) != s->csk.cols ||
	    gw_ld64(p + 8) != s->csk.seed || gw_ld64(p + 16) != L->job.dim)
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}

/* Packet bytes besides a table slice's frame, in the largest packet of
 * the job (a RESULT: header, bitmap, MAC). */
static uint32_t overhead(const gw_coll_job *j)
{
	return GW_PKT_HDR_LEN + (j->workers + 7u) / 8u + (j->key ? GW_PKT_MAC_LEN : 0);
}

static int sketched_chunk_fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
			       const float *x, const char **why)
{
	(void)x;
	if ((uint64_t)overhead(j) + coll_sketch_frame_max(n) <= payload_max)
		return GW_OK;
	*why = "chunk_elems: a sketch slice does not fit one packet";
	return GW_ERR(GW_EBUDGET);
}

/* A table slice, the largest frame of the job, in a RESULT-sized packet. */
static int sketched_chunk_elems(const gw_coll_job *j, uint32_t payload_max,
				const char **why)
{
	uint32_t over = overhead(j) + coll_sketch_frame_max(0);
	uint32_t n = payload_max > over ? (payload_max - over) / 4 : 0;
	n -= n % COLL_CHUNK_ALIGN;
	if (!n)
		*why = "chunk_elems: not even a 40-cell sketch slice fits one packet";
	return n ? (int)n : GW_ERR(GW_EBUDGET);
}

static int sketched_claims(int up_codec)
{
	return up_codec == GW_CODEC_COUNTSKETCH;
}

/* HEAVYMIX needs the whole sketch in one place: one shard, rank 0's. */
static uint32_t sketched_colocated(uint32_t workers)
{
	(void)workers;
	return 1;
}

/* No device path, no pipelined rounds: set_gpu, allreduce_pipelined NULL. */
const struct coll_engine coll_sketched_engine = {
	.name = "sketched", .id = GW_COLL_SKETCHED,
	.up_codec = GW_CODEC_COUNTSKETCH, .down_codec = GW_CODEC_COUNTSKETCH,
	.claims = sketched_claims, .result = GW_RESULT_SPARSE,
	.colocated_shards = sketched_colocated,
	.layout = sketched_layout, .chunk_fits = sketched_chunk_fits,
	.chunk_elems = sketched_chunk_elems,
	/* the worker: sketched_worker.c */
	.comm_init = sk_comm_init, .comm_fini = sk_comm_fini, .residual = sk_residual,
	.allreduce_sparse = sk_allreduce,
	/* the shard: sketched_agg.c */
	.agg_init = sk_agg_init, .agg_fini = sk_agg_fini,
	.agg_input = sk_agg_input, .agg_tick = sk_agg_tick, .agg_gone = sk_agg_gone,
};
