/* A gw-train worker: its share of the training rows, a replica of the
 * model, and one allreduce of the flat gradient per step. Every replica
 * applies the same averaged gradient, so they stay identical; each also
 * evaluates the test set, so all agree when the target is reached without
 * another message. Rank 0 prints the records. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "checkpoint.h"
#include "coll_mpi.h"
#include "gw_rand.h"
#include "train.h"
#include "workload.h"

/* Fisher-Yates with a seeded splitmix64: the same order on every machine. */
static void shuffle(uint32_t *v, uint32_t n, uint64_t seed)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(gw_splitmix64(&seed) % i);
		uint32_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Sleeps until step_ms after t0: the compute of a model larger than the
 * one trained. */
static void pace(double t0, uint64_t step_ms)
{
	double left = t0 + (double)step_ms / 1000 - app_now_s();
	if (left > 0)
		nanosleep(&(struct timespec){.tv_sec = (time_t)left,
			  .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)}, NULL);
}

struct loop {
	struct cli *c;
	struct train_opts *o;
	struct workload wl;
	gw_comm *comm;
	gw_coll_job job;
	float *params, *g;
	uint32_t *mine, nmine;
	unsigned rank;
	uint64_t first_step;   /* where a rejoined worker starts: the job's round */
};

/* Evaluates (rank 0 also the training loss) and prints rank 0's record.
 * Returns true when the target accuracy is reached. */
static bool evaluate(struct loop *L, double epoch, uint64_t step, double t)
{
	struct record r = {.epoch = epoch, .step = step, .time_s = t, .train_loss = NAN};
	workload_eval(&L->wl, L->params, false, &r.test_loss, &r.test_acc);
	if (L->rank == 0) {
		workload_eval(&L->wl, L->params, true, &r.train_loss, &(double){0});
		gw_comm_stats st;
		gw_comm_stats_get(L->comm, &st);
		r.bytes_up = st.bytes_up;
		r.bytes_down = st.bytes_down;
		r.retransmits = st.retransmits;
		r.ratio = st.bytes_up ? (double)step * L->job.dim * sizeof(float) / st.bytes_up : 0;
		record_print_json(stdout, L->o, gw_codec_name(L->job.up_codec),
				  gw_codec_name(L->job.down_codec), &r);
		fflush(stdout);
	}
	return L->o->target_acc >= 0 && r.test_acc * 100 >= L->o->target_acc &&
	       epoch >= (double)L->o->min_epochs;
}


static int train(struct loop *L)
{
	const struct train_opts *o = L->o;
	uint32_t W = (uint32_t)L->c->o.workers;
	uint32_t steps = L->nmine / (uint32_t)o->batch;
	if (steps == 0) {
		fprintf(stderr, "%s: --batch %llu: a worker has only %u rows\n", L->c->prog,
			(unsigned long long)o->batch, L->nmine);
		return -1;
	}
	float *avg = malloc(L->wl.nparams * sizeof(float));
	if (!avg)
		return -1;
	double t = 0;
	/* A rejoined worker takes up the step schedule at the job's round:
	 * the same epoch's shuffle of its rows, from the step the others are
	 * at. */
	uint64_t step = L->first_step;
	int rc = 0;
	bool done = step ? false : evaluate(L, 0, 0, 0);
	for (uint64_t e = step / steps; !done && e < o->epochs; e++) {
		shuffle(L->mine, L->nmine, o->seed ^ (e + 1) * GW_SPLITMIX_GAMMA ^ L->rank);
		for (uint32_t s = e == step / steps ? (uint32_t)(step % steps) : 0;
		     s < steps && !done; s++) {
			double t0 = app_now_s();
			workload_grad(&L->wl, L->params, L->mine + (size_t)s * o->batch,
				      (uint32_t)o->batch, L->g);
			gw_allreduce_info info;
			/* avg: the sum over workers, or a sparse result's
			 * k coordinates (Sketched-SGD: the workers'
			 * accumulated gradients there), zero elsewhere. */
			int err = gw_allreduce_result(L->comm, L->g, avg, NULL, &info);
			if (err < 0) {
				fprintf(stderr, "%s: rank %u step %llu: allreduce: %s (%s)\n",
					L->c->prog, L->rank, (unsigned long long)step,
					gw_error_detail()[0] ? gw_error_detail() : gw_strerror(err),
					gw_error_name(err));
				rc = -1;
				break;
			}
			for (size_t i = 0; i < L->wl.nparams; i++)
				avg[i] /= (float)W;
			if (o->cosine)   /* step counts from 0: lr, down to 0 at the end */
				workload_set_lr(&L->wl, o->lr * 0.5 *
						(1.0 + cos(M_PI * (double)step /
							   ((double)o->epochs * steps))));
			workload_step(&L->wl, L->params, avg);
			if (o->step_ms)
				pace(t0, o->step_ms);
			t += app_now_s() - t0;
			step++;
			if (o->param_file &&
			    checkpoint_save(&L->wl, L->params, step, o->param_file, L->rank) < 0)
				fprintf(stderr, "%s: rank %u: --param-file %s.%u: cannot write\n",
					L->c->prog, L->rank, o->param_file, L->rank);
			/* evals evaluation points per epoch, the last at its end */
			uint64_t k = o->evals;
			if ((uint64_t)(s + 1) * k / steps != (uint64_t)s * k / steps)
				done = evaluate(L, e + (double)(s + 1) / steps, step, t);
		}
		if (rc)
			break;
	}
	free(avg);
	return rc;
}

/* A restarted worker of a loss-tolerant job: joins at the job's round and
 * takes another rank's replica (parameters and optimiser state) after that
 * round's step; if none comes within 2 s, the newest, and it says the
 * replicas differ (it then trails or leads the others by the steps
 * between). */
static int rejoin(struct loop *L, char *err, size_t errlen)
{
	const struct train_opts *o = L->o;
	uint32_t at = 0;
	int e = gw_comm_join(L->comm, (uint32_t)o->rejoin_ms, &at);
	if (e < 0) {
		snprintf(err, errlen, "%s (%s)", gw_error_detail(), gw_error_name(e));
		return -1;
	}
	/* The others are in round at, having taken `at` steps; the round waits
	 * for this worker now (it is live again), so their replica after step
	 * `at` is there to take within moments: then this replica is theirs
	 * bit for bit. Failing that, the newest, and the gap is said. */
	uint64_t step = 0;
	int from = -1;
	double until = app_now_s() + 2.0;
	do {
		from = checkpoint_load(&L->wl, L->params, o->param_file, L->rank,
				       (unsigned)L->c->o.workers, &step, err, errlen);
		if (from >= 0 && step >= at)
			break;
		nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
	} while (app_now_s() < until);
	if (from < 0)
		return -1;
	L->first_step = at;
	fprintf(stderr, "%s: rank %u rejoins the job at round %u, with rank %d's replica "
		"after step %llu%s\n", L->c->prog, L->rank, at, from, (unsigned long long)step,
		step == at ? " (the same)" : " (not the round's: the replicas differ)");
	return 0;
}

int train_worker(struct cli *c, struct train_opts *o)
{
	struct loop L = {.c = c, .o = o};
	gw_dp *dp = NULL;
	gw_endpoint shard[GW_COLL_SHARDS_MAX];
	unsigned nshard = 0;
	int rc = 1;
	char err[512] = "";
	if (!c->mpi && cli_parse_aggs(c->prog, o->aggs, shard, &nshard) < 0)
		return 2;
	L.rank = (unsigned)o->rank;
	size_t np = train_nparams(o);
	L.params = malloc(np * sizeof(float));
	L.g = malloc(np * sizeof(float));
	if (!L.params || !L.g) {
		fprintf(stderr, "%s: out of memory for %zu parameters\n", c->prog, np);
		goto done;
	}
	if (cli_open_dp(c, 0, &dp) < 0)
		goto done;
	if (c->mpi) {
		unsigned idx;
		nshard = c->o.shards ? (unsigned)c->o.shards : 1;
		if (cli_mpi_exchange(c->prog, 0, &c->local_ep, nshard, (unsigned)c->o.workers,
				     shard, &idx) < 0)
			goto done;
		L.rank = idx;
	}
	if (nshard != (c->o.shards ? c->o.shards : 1)) {
		fprintf(stderr, "%s: --agg: %u endpoints for %llu shards\n", c->prog, nshard,
			(unsigned long long)(c->o.shards ? c->o.shards : 1));
		rc = 2;
		goto done;
	}
	if (c->o.dim != np) {
		fprintf(stderr, "%s: --dim %llu, but the model has %zu parameters\n", c->prog,
			(unsigned long long)c->o.dim, np);
		rc = 2;
		goto done;
	}
	if (cli_job(c, dp, &L.job) < 0) {
		rc = 2;
		goto done;
	}
	/* Where the job's engine keeps the momentum itself (the job's
	 * engine_params point at the CLI's fields), the optimizer applies
	 * the result as plain SGD. */
	o->momentum = coll_opts_optimizer_momentum(&c->ep, &L.job, o->momentum);
	if (workload_open(&L.wl, o, true, L.params, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", c->prog, err);
		goto done;
	}
	/* Rows: a seeded permutation cut into W equal parts (the remainder is
	 * left out, so every worker takes the same number of steps). */
	uint32_t rows = workload_train_rows(&L.wl), W = (uint32_t)c->o.workers;
	uint32_t *perm = malloc(rows * sizeof(uint32_t));
	if (!perm)
		goto done;
	for (uint32_t i = 0; i < rows; i++)
		perm[i] = i;
	shuffle(perm, rows, o->seed);
	L.nmine = rows / W;
	L.mine = perm;
	memmove(perm, perm + (size_t)L.rank * L.nmine, L.nmine * sizeof(uint32_t));
	gw_comm_config cfg = {.job = L.job, .rank = (uint16_t)L.rank, .shards = shard,
			      .rto_us = (uint32_t)o->rto_us,
			      .timeout_ms = (uint32_t)o->timeout_ms};
	L.comm = gw_comm_create(dp, &cfg);
	if (!L.comm) {
		fprintf(stderr, "%s: cannot create the communicator: %s\n", c->prog,
			gw_error_detail());
		goto done;
	}
	if (cli_liveness(c, L.comm, NULL) < 0)
		goto done;
	if (o->rejoin_ms && rejoin(&L, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: rank %u: --rejoin: %s\n", c->prog, L.rank, err);
		goto done;
	}
	if (train(&L) == 0)
		rc = 0;
	/* Replicas must end bit-identical; the tests compare these hashes. */
	if (o->verbose && rc == 0)
		fprintf(stderr, "%s: rank %u: final parameters xxh64 %016llx\n", c->prog,
			L.rank, (unsigned long long)XXH64(L.params, np * sizeof(float), 0));
	gw_comm_stats st;
	gw_comm_stats_get(L.comm, &st);
	if (o->verbose || rc)
		fprintf(stderr, "%s: rank %u: %llu steps, %llu chunks sent, %llu "
			"retransmitted, %llu bytes up, %llu down; dropped %llu duplicate, %llu stale, "
			"%llu bad, %llu corrupt\n", c->prog, L.rank,
			(unsigned long long)st.rounds, (unsigned long long)st.chunks_sent,
			(unsigned long long)st.retransmits, (unsigned long long)st.bytes_up,
			(unsigned long long)st.bytes_down, (unsigned long long)st.duplicates, (unsigned long long)st.stale,
			(unsigned long long)st.bad, (unsigned long long)st.corrupt);
done:
	free(L.mine);
	free(L.params);
	free(L.g);
	workload_close(&L.wl);
	gw_comm_free(L.comm);
	gw_dp_close(dp);
	return rc;
}
