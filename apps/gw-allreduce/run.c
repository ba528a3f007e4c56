/* gw-allreduce's worker (main.c has the options): its dataplanes and
 * communicator, then each round's allreduce, the model's verdict on it and
 * its line of output, then --dump and the totals. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gw/gpudirect.h>

#include "allreduce.h"
#include "coll_mpi.h"
#include "gw_rand.h"
#include "oracle.h"
#include "toy.h"

void synth(float *g, uint64_t n, uint64_t seed, uint64_t w, uint64_t r)
{
	uint64_t s = seed ^ (w * 0x100000001b3ull) ^ (r << 40);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = gw_splitmix64(&s);
		double u = ((x >> 11) + 0.5) / 9007199254740992.0;
		g[i] = (x & 3) == 0 ? 0.0f : (float)(1e-3 * tan(M_PI * (u - 0.45) * 0.9));
	}
}

static int write_f32(const char *dir, const char *what, uint64_t rank,
		     const float *v, uint64_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%llu.f32", dir, what, (unsigned long long)rank);
	FILE *f = fopen(path, "wb");
	size_t w = f ? fwrite(v, sizeof(float), n, f) : 0;
	if (!f || fclose(f) != 0 || w != n) {
		fprintf(stderr, "gw-allreduce: --dump: cannot write %s\n", path);
		return -1;
	}
	return 0;
}

/* Round 0 (error buffers still empty) against the exact sum: each worker's
 * frame errs by at most q * max|chunk| per element and the downlink by q
 * * max|sum| — q = 1/254 for int8 (round to nearest of 127 levels), 1 for
 * 3lc and the other 3-value or 1-bit codecs, 0 for raw. */
static double codec_q(int id)
{
	switch (id) {
	case GW_CODEC_RAW: return 0;
	case GW_CODEC_BF16: return 1.0 / 256;
	case GW_CODEC_INT8: return 1.0 / 254;
	default: return 1;
	}
}

static bool within_bound(const gw_coll_job *j, const float *const *g, const float *out)
{
	double qu = codec_q(j->up_codec), qd = codec_q(j->down_codec);
	for (uint64_t b = 0; b < j->dim; b += j->chunk_elems) {
		uint64_t e = b + j->chunk_elems < j->dim ? b + j->chunk_elems : j->dim;
		double mw = 0, ms = 0;
		for (unsigned w = 0; w < j->workers; w++) {
			double m = 0;
			for (uint64_t i = b; i < e; i++)
				m = fmax(m, fabs(g[w][i]));
			mw += m;
		}
		for (uint64_t i = b; i < e; i++) {
			double s = 0;
			for (unsigned w = 0; w < j->workers; w++)
				s += g[w][i];
			ms = fmax(ms, fabs(s));
		}
		/* Float rounding of the sums on top. */
		double tol = qu * mw + qd * (ms + qu * mw) + 1e-6 * (mw + ms) + 1e-30;
		for (uint64_t i = b; i < e; i++) {
			double s = 0;
			for (unsigned w = 0; w < j->workers; w++)
				s += g[w][i];
			if (fabs(out[i] - s) > tol)
				return false;
		}
	}
	return true;
}

/* One --json line per round. */
static void print_round_json(const struct opts *o, uint64_t r, const gw_coll_job *job,
			     double dt, const gw_allreduce_info *info, const char *verdict,
			     const struct toy *toy)
{
	char hash[20] = "";
	if (toy)
		snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)toy_hash(toy));
	const struct app_json_member m[] = {
		APP_JS("tool", "gw-allreduce"), APP_JU("rank", o->rank), APP_JU("round", r),
		APP_JU("job_round", info->round), APP_JG("loss", 9, toy ? toy_loss(toy) : 0),
		APP_JS("params", hash),
		APP_JU("workers", job->workers), APP_JU("dim", job->dim),
		APP_JU("chunk_elems", job->chunk_elems),
		APP_JS("up", gw_codec_name(job->up_codec)),
		APP_JS("down", gw_codec_name(job->down_codec)), APP_JF("seconds", 6, dt),
		APP_JG("elems_per_s", 6, (double)job->dim / dt),
		APP_JU("bytes_up", info->bytes_up), APP_JU("bytes_down", info->bytes_down),
		APP_JU("bytes_up_once", info->bytes_up_once),
		APP_JU("bytes_down_once", info->bytes_down_once),
		APP_JU("short_chunks", info->short_chunks), APP_JU("left_out", info->left_out),
		APP_JS("verdict", verdict),
	};
	struct app_json j;
	app_json_begin(&j, stdout, false);
	app_json_members(&j, m, APP_JSON_N(m));
	app_json_end(&j);
}

/* --host-shard: shard `rank` of the job, co-located as gw_member's are:
 * its own UDP dataplane bound to its --agg endpoint, served on a thread
 * while this thread is the worker. After the last round it serves on
 * until SHARD_LINGER_MS pass without a packet: another worker may still
 * miss a result it holds, and re-sends within its RTO (at most 1 s with
 * backoff), so the shard must outlive its own worker's calls. */
#define SHARD_LINGER_MS 1500u

struct shard_thread {
	gw_agg *agg;
	pthread_t tid;
	volatile sig_atomic_t stop;
	int rc;
	bool started, owns;   /* owns a chunk: workers will send to it */
};

static void *serve_shard(void *arg)
{
	struct shard_thread *t = arg;
	t->rc = gw_agg_serve(t->agg, &t->stop, SHARD_LINGER_MS);
	return NULL;
}

static int host_shard(const struct cli *c, const struct opts *o, const gw_coll_job *job,
		      gw_dp **sdp, struct shard_thread *t)
{
	gw_dp_config cfg = {.backend = "udp", .pool = (uint32_t)c->o.pool,
			    .local = o->shard[o->rank], .opts = c->dp_opts};
	int rc = coll_opts_dp_open(&c->o, &cfg, sdp);   /* this process's --wait, --gso */
	if (rc < 0) {
		fprintf(stderr, "gw-allreduce: --host-shard: cannot open its dataplane: %s: %s\n",
			gw_strerror(rc), gw_error_detail());
		return -1;
	}
	gw_agg_config acfg = {.job = *job, .shard = (uint16_t)o->rank};
	if (!(t->agg = gw_agg_create(sdp, 1, &acfg))) {
		fprintf(stderr, "gw-allreduce: --host-shard: %s\n", gw_error_detail());
		return -1;
	}
	if (cli_liveness(c, NULL, t->agg) < 0)
		return -1;
	int e = pthread_create(&t->tid, NULL, serve_shard, t);
	if (e) {
		fprintf(stderr, "gw-allreduce: --host-shard: no thread: %s\n", strerror(e));
		return -1;
	}
	t->started = true;
	t->owns = (job->dim + job->chunk_elems - 1) / job->chunk_elems > o->rank;
	return 0;
}

/* What a worker holds while it runs; run_free lets go of all of it. */
struct run {
	struct cli *c;
	struct opts *o;
	uint64_t n, W;
	gw_dp *dps[GW_COLL_SHARDS_MAX], *sdp;
	gw_coll_job job;
	gw_comm *comm;
	struct cli_stats sts;
	struct shard_thread shard;
	struct toy toy;
	gw_gpu *gpu;
	float *dg, *dout;          /* --gpu: the tensors in its memory */
	float *g, *out, *want, *recv, **all;
	/* --down-momentum: the last result, to take the round's sum out of v. */
	float mu, *prev;
	/* The model; a sparse result (Sketched-SGD's k-sparse update) has
	 * one of its own and no error bound per coordinate. */
	struct oracle_dense *ref;
	struct oracle_sketched *skm;
	bool sparse, modelled;
	double total;              /* seconds in allreduce calls */
};

static int run_alloc(struct run *R)
{
	uint64_t n = R->n;
	R->g = malloc(n * sizeof(float));
	R->out = malloc(n * sizeof(float));
	R->want = malloc(n * sizeof(float));
	R->recv = calloc(n, sizeof(float));
	R->all = calloc(R->W, sizeof(*R->all));
	R->mu = R->c->ep.dense.down_momentum;
	R->prev = R->mu > 0.0f ? calloc(n, sizeof(float)) : NULL;
	if (!R->g || !R->out || !R->want || !R->recv || !R->all || (R->mu > 0.0f && !R->prev)) {
		fprintf(stderr, "gw-allreduce: out of memory\n");
		return -1;
	}
	return 0;
}

/* Dataplanes, the job (ranks from mpirun with --mpi), the co-located
 * shard, the communicator and what is set on it before the first round.
 * 2: the job's options are refused. */
static int run_connect(struct run *R)
{
	struct cli *c = R->c;
	struct opts *o = R->o;
	for (unsigned i = 0; i < o->ports; i++)
		if (cli_open_dp(c, i, &R->dps[i]) < 0)
			return -1;
	if (c->mpi) {
		unsigned idx, shards = c->o.shards ? (unsigned)c->o.shards : 1;
		gw_dp_local(R->dps[0], &c->local_ep);   /* the port bound, when asked for 0 */
		if (cli_mpi_exchange(c->prog, 0, &c->local_ep, shards, (unsigned)R->W, o->shard,
				     &idx) < 0)
			return -1;
		o->rank = idx;
		o->nshard = shards;
	}
	if (cli_job(c, R->dps[0], &R->job) < 0)
		return 2;
	if (o->host_shard && host_shard(c, o, &R->job, &R->sdp, &R->shard) < 0)
		return -1;
	gw_comm_config cfg = {.job = R->job, .rank = (uint16_t)o->rank, .shards = o->shard,
			      .rto_us = (uint32_t)o->rto_us, .timeout_ms = (uint32_t)o->timeout_ms,
			      .first_round = (uint32_t)o->first_round};
	if (!(R->comm = gw_comm_create_ports(R->dps, (unsigned)o->ports, &cfg))) {
		fprintf(stderr, "gw-allreduce: cannot create the communicator: %s\n",
			gw_error_detail());
		return -1;
	}
	if (cli_liveness(c, R->comm, NULL) < 0)
		return -1;
	if (o->rejoin_ms) {
		uint32_t at = 0;
		int e = gw_comm_join(R->comm, (uint32_t)o->rejoin_ms, &at);
		if (e < 0) {
			fprintf(stderr, "gw-allreduce: --rejoin: %s (%s)\n", gw_error_detail(),
				gw_error_name(e));
			return -1;
		}
		fprintf(stderr, "gw-allreduce: rank %llu rejoins the job at round %u\n",
			(unsigned long long)o->rank, at);
	}
	R->sts = (struct cli_stats){.c = c, .tool = "gw-allreduce", .role = "worker",
				    .id = o->rank, .comm = R->comm, .dps = R->dps,
				    .ndp = (unsigned)o->ports};
	return cli_stats_start(&R->sts) < 0 ? -1 : 0;
}

/* --gpu: the communicator's tensors in the device's memory. */
static int run_device(struct run *R)
{
	const char *name = R->o->gpu;
	int e = (R->gpu = gw_gpu_open(name)) ? gw_comm_set_gpu(R->comm, R->gpu) : -1;
	if (e < 0) {
		fprintf(stderr, "gw-allreduce: --gpu %s: %s\n", name, gw_error_detail());
		return -1;
	}
	fprintf(stderr, "gw-allreduce: rank %llu: --gpu %s: %s\n",
		(unsigned long long)R->o->rank, name, gw_comm_gpu_handoff(R->comm));
	if (!(R->dg = gw_gpu_alloc(R->gpu, R->n * sizeof(float))) ||
	    !(R->dout = gw_gpu_alloc(R->gpu, R->n * sizeof(float)))) {
		fprintf(stderr, "gw-allreduce: --gpu %s: no memory for the tensors\n", name);
		return -1;
	}
	return 0;
}

/* The in-process model of the whole job, and every rank's gradient. */
static int run_model(struct run *R)
{
	if (R->sparse)
		R->skm = oracle_sketched_create(&R->job);
	else if ((R->ref = oracle_dense_create(&R->job)))
		oracle_dense_set_round(R->ref, (uint32_t)R->o->first_round);
	for (uint64_t w = 0; (R->ref || R->skm) && w < R->W; w++)
		if (!(R->all[w] = malloc(R->n * sizeof(float))))
			break;
	if ((!R->ref && !R->skm) || !R->all[R->W - 1]) {
		fprintf(stderr, "gw-allreduce: out of memory for the model\n");
		return -1;
	}
	return 0;
}

/* Round r's allreduce into R->out, its time in *dt (the call's alone with
 * --gpu, not the copies), what it received folded into recv. */
static int run_round(struct run *R, uint64_t r, gw_allreduce_info *info, double *dt)
{
	const struct opts *o = R->o;
	uint64_t n = R->n;
	if (R->toy.p)
		toy_grad(&R->toy, R->g);
	else if (r == 0 || !o->same_grad)
		synth(R->g, n, o->seed, o->rank, r);
	if (o->lag_ms)
		nanosleep(&(struct timespec){.tv_sec = (time_t)(o->lag_ms / 1000),
			  .tv_nsec = (long)(o->lag_ms % 1000) * 1000000L}, NULL);
	double t0 = app_now_s(), t1 = 0;
	int e;
	if (R->gpu) {
		e = gw_gpu_copy(R->gpu, R->dg, R->g, n * sizeof(float));
		t0 = app_now_s();
		if (e == 0)
			e = gw_allreduce_result(R->comm, R->dg, R->dout, NULL, info);
		t1 = app_now_s();
		if (e == 0)
			e = gw_gpu_copy(R->gpu, R->out, R->dout, n * sizeof(float));
	} else {
		e = gw_allreduce_result(R->comm, R->g, R->out, NULL, info);
	}
	*dt = (R->gpu ? t1 : app_now_s()) - t0;
	R->total += *dt;
	if (e < 0) {
		fprintf(stderr, "gw-allreduce: rank %llu round %llu: %s (%s)\n",
			(unsigned long long)o->rank, (unsigned long long)r,
			gw_error_detail()[0] ? gw_error_detail() : gw_strerror(e), gw_error_name(e));
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		R->recv[i] += R->prev ? R->out[i] - R->mu * R->prev[i] : R->out[i];
		if (R->prev)
			R->prev[i] = R->out[i];
	}
	if (R->toy.p) {
		toy_step(&R->toy, R->out, R->job.workers);
		if (o->param_file && o->rank == 0 && toy_save(&R->toy, o->param_file) < 0)
			fprintf(stderr, "gw-allreduce: --param-file %s: cannot write\n",
				o->param_file);
	}
	return 0;
}

/* The model's verdict on round r's result: bit-exact, or short (no model
 * from here on); -1 with the first element that differs. */
static int run_verdict(struct run *R, uint64_t r, const gw_allreduce_info *info,
		       const char **verdict)
{
	uint64_t n = R->n;
	*verdict = "unchecked";
	if (!R->modelled)
		return 0;
	for (uint64_t w = 0; w < R->W; w++)
		synth(R->all[w], n, R->o->seed, w, r);
	const float *const *a = (const float *const *)R->all;
	if ((R->sparse ? oracle_sketched_round(R->skm, a, R->want)
		       : oracle_dense_round(R->ref, a, R->want)) < 0) {
		fprintf(stderr, "gw-allreduce: the model failed\n");
		return -1;
	}
	unsigned long long rank = R->o->rank;
	if (r == 0 && !info->short_chunks && !R->sparse && !within_bound(&R->job, a, R->out)) {
		fprintf(stderr, "gw-allreduce: rank %llu: round 0 outside the codecs' error "
			"bound\n", rank);
		return -1;
	}
	if (info->short_chunks) {
		R->modelled = false;   /* short chunks: no model from here on */
		*verdict = "short";
		return 0;
	}
	if (memcmp(R->want, R->out, n * sizeof(float))) {
		uint64_t i = 0;
		while (!memcmp(R->want + i, R->out + i, sizeof(float)))
			i++;
		fprintf(stderr, "gw-allreduce: rank %llu round %llu: element %llu is %.9g, the "
			"model says %.9g\n", rank, (unsigned long long)r, (unsigned long long)i,
			R->out[i], R->want[i]);
		return -1;
	}
	*verdict = "bit-exact";
	return 0;
}

/* --dump: what this rank received and its error buffer, for --check. */
static int run_dump(struct run *R)
{
	const float *res = gw_comm_residual(R->comm);
	if (res && R->gpu) {   /* in the executor's memory: the host's copy */
		if (gw_gpu_copy(R->gpu, R->out, res, R->n * sizeof(float)) < 0) {
			fprintf(stderr, "gw-allreduce: --gpu: %s\n", gw_error_detail());
			return -1;
		}
		res = R->out;
	}
	float *zero = res ? NULL : calloc(R->n, sizeof(float));
	int rc = write_f32(R->o->dump, "recv", R->o->rank, R->recv, R->n) < 0 ||
		 write_f32(R->o->dump, "resid", R->o->rank, res ? res : zero, R->n) < 0 ? -1 : 0;
	free(zero);
	return rc;
}

static void run_totals(const struct run *R)
{
	gw_comm_stats st;
	gw_comm_stats_get(R->comm, &st);
	fprintf(stderr, "gw-allreduce: rank %llu: %llu rounds in %.3f s, %llu chunks sent, "
		"%llu retransmitted, %llu results; dropped: %llu duplicate, %llu stale, "
		"%llu foreign, %llu bad, %llu corrupt, %llu unauthenticated, %llu forged\n",
		(unsigned long long)R->o->rank, (unsigned long long)st.rounds, R->total,
		(unsigned long long)st.chunks_sent, (unsigned long long)st.retransmits,
		(unsigned long long)st.results, (unsigned long long)st.duplicates,
		(unsigned long long)st.stale, (unsigned long long)st.foreign,
		(unsigned long long)st.bad, (unsigned long long)st.corrupt,
		(unsigned long long)st.unauthenticated, (unsigned long long)st.forged);
}

/* Lets go of everything; rc: the run's exit code so far, and the
 * co-located shard's failure makes a clean run's 1. */
static int run_free(struct run *R, int rc)
{
	for (uint64_t w = 0; R->all && w < R->W; w++)
		free(R->all[w]);
	free(R->all);
	free(R->g);
	free(R->out);
	free(R->want);
	free(R->recv);
	free(R->prev);
	oracle_dense_free(R->ref);
	oracle_sketched_free(R->skm);
	gw_comm_free(R->comm);
	toy_free(&R->toy);
	gw_gpu_free(R->gpu, R->dg);
	gw_gpu_free(R->gpu, R->dout);
	gw_gpu_close(R->gpu);
	for (unsigned i = 0; i < GW_COLL_SHARDS_MAX; i++)
		gw_dp_close(R->dps[i]);
	/* A failed worker stops its shard at once; otherwise the shard
	 * lingers until the other workers are quiet (serve_shard). */
	struct shard_thread *t = &R->shard;
	if (t->started) {
		if (rc != 0 || !t->owns)
			t->stop = 1;
		pthread_join(t->tid, NULL);
		if (t->rc < 0 && rc == 0) {
			fprintf(stderr, "gw-allreduce: --host-shard: the shard failed: %s\n",
				gw_strerror(t->rc));
			rc = 1;
		}
	}
	gw_agg_free(t->agg);
	gw_dp_close(R->sdp);
	return rc;
}

/* The rounds, each with its verdict and line; 0, or -1 said. */
static int run_rounds(struct run *R)
{
	const struct opts *o = R->o;
	for (uint64_t r = 0; r < o->rounds; r++) {
		gw_allreduce_info info;
		double dt;
		const char *verdict;
		if (run_round(R, r, &info, &dt) < 0 || run_verdict(R, r, &info, &verdict) < 0)
			return -1;
		cli_stats_tick(&R->sts);
		if (o->json)
			print_round_json(o, r, &R->job, dt, &info, verdict,
					 R->toy.p ? &R->toy : NULL);
		else
			printf("rank %llu round %llu: %.3f ms, %.3g elements/s, %llu bytes up, "
			       "%u short chunks (%u without this rank), %s\n",
			       (unsigned long long)o->rank, (unsigned long long)r, dt * 1e3,
			       (double)R->n / dt, (unsigned long long)info.bytes_up,
			       info.short_chunks, info.left_out, verdict);
		fflush(stdout);
		if (o->until_round && (uint64_t)info.round + 1 >= o->until_round)
			break;
	}
	return 0;
}

int worker_run(struct cli *c, struct opts *o)
{
	struct run R = {.c = c, .o = o, .n = c->o.dim, .W = c->o.workers,
			.modelled = o->verify};
	int rc = run_alloc(&R) < 0 ? -1 : run_connect(&R);
	if (rc == 0) {
		R.sparse = gw_comm_result_kind(R.comm) == GW_RESULT_SPARSE;
		if ((o->gpu && run_device(&R) < 0) || (o->verify && run_model(&R) < 0))
			rc = -1;
	}
	if (rc == 0 && o->train_lr > 0) {
		synth(R.g, R.n, o->seed, o->rank, 0);   /* the noise, fixed */
		if (toy_init(&R.toy, R.n, o->train_lr, R.g, o->rejoin_ms ? o->param_file
			     : NULL) < 0)
			rc = -1;
	}
	if (rc == 0)
		rc = run_rounds(&R);
	if (rc == 0) {
		cli_stats_final(&R.sts);
		if (o->dump && run_dump(&R) < 0)
			rc = -1;
	}
	if (rc == 0)
		run_totals(&R);
	return run_free(&R, rc < 0 ? 1 : rc);
}
