/* gw-allreduce: one worker of a gradwire allreduce job, for tests and
 * benchmarks. Each round it allreduces a seeded synthetic gradient (every
 * rank's is different, and every rank can compute every other's), then
 * checks the result bit for bit against an in-process model of the whole
 * job (tests/oracle/dense.c) — until a chunk comes back short, which only
 * the loss-tolerant mode allows and no model can predict.
 *
 *   gw-allreduce [EAL options --] --rank R --workers W --dim N
 *                --agg IP:PORT[,IP:PORT...] --local IP:PORT [options]
 *   gw-allreduce --check DIR --workers W --dim N --rounds R [--seed S]
 *
 * --dump DIR writes this rank's sum of received results and its final
 * error buffer; --check DIR then verifies that no gradient mass was lost:
 * received + every worker's residual = every gradient ever fed in. With
 * --down-momentum MU a result is the shard's state v_t = MU v_{t-1} + sum,
 * so what is summed into recv is the sum each round folded in:
 * out_t - MU out_{t-1}.
 *
 * With --up countsketch each round is one Sketched-SGD step
 * (gw_allreduce_sketched): the result is the k-sparse update, checked
 * against the in-process model of tests/oracle/sketched.c, and the residual
 * is the error accumulation v (the mass check holds with --momentum 0).
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gw/gpudirect.h>

#include "coll_cli.h"
#include "toy.h"
#include "coll_mpi.h"
#include "gw_rand.h"
#include "oracle.h"

struct opts {
	uint64_t rank, rounds, seed, timeout_ms, rto_us, first_round, lag_ms, ports;
	const char *aggs, *dump, *check;
	/* --check --left R:K: rank R ran K rounds and left (loss-tolerant
	 * eviction): its gradients count K rounds, its received sums are its
	 * own. left_rank = UINT64_MAX: none. */
	uint64_t left_rank, left_rounds;
	uint64_t rejoin_ms;        /* --rejoin: gw_comm_join before the first call */
	double train_lr;           /* --train-lr: the toy training loop (toy.c) */
	const char *param_file;    /* --param-file: rank 0 writes it, a rejoiner reads it */
	uint64_t until_round;      /* --until-round: stop once the job's round is this */
	bool have_rank, verify, json, host_shard, same_grad;
	const char *gpu;
	gw_endpoint shard[GW_COLL_SHARDS_MAX];
	unsigned nshard;
};

/* Rank w's gradient of round r: heavy-tailed, a quarter zeros. */
static void synth(float *g, uint64_t n, uint64_t seed, uint64_t w, uint64_t r)
{
	uint64_t s = seed ^ (w * 0x100000001b3ull) ^ (r << 40);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t x = gw_splitmix64(&s);
		double u = ((x >> 11) + 0.5) / 9007199254740992.0;
		g[i] = (x & 3) == 0 ? 0.0f : (float)(1e-3 * tan(M_PI * (u - 0.45) * 0.9));
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-allreduce [EAL options --] --rank R --workers W --dim N\n"
"                    --agg IP:PORT[,IP:PORT...] --local IP:PORT [options]\n"
"       gw-allreduce --check DIR --workers W --dim N --rounds R [--seed S]\n\n"
"  --rank R           this worker (0 .. W-1)\n"
"  --agg LIST         shard endpoints, shard 0 first (one per --shards)\n"
"  --rounds R         allreduce calls (default 3)\n"
"  --seed S           gradient seed, the same on every rank (default 1)\n"
"  --no-verify        skip the bit-exact check against the in-process model\n"
"  --same-grad        with --no-verify: every round sends round 0's gradient,\n"
"                     so a profile of the job sees the allreduce, not the\n"
"                     synthesis of the next gradient\n"
"  --dump DIR         write recv.R.f32 (sum of results; with --down-momentum\n"
"                     of each round's sum, out - MU x the last out) and\n"
"                     resid.R.f32\n"
"  --check DIR        verify the dumps of all W ranks: nothing was lost\n"
"  --rejoin MS        a restarted worker (loss-tolerant): join the running job\n"
"                     at its round (gw_comm_join), waiting MS at most\n"
"  --train-lr LR      a toy training loop (soak runs): minimise |p - t|^2 / 2\n"
"                     with every rank's gradient p - t + its own noise, the\n"
"                     sum applied with step LR / W; rounds report the loss\n"
"                     and a hash of p (replicas compare); needs --no-verify\n"
"  --param-file F     with --train-lr: rank 0 writes p there after each round;\n"
"                     with --rejoin, the rank starts from it\n"
"  --until-round R    stop after the job's round R - 1 (with --rounds as a cap):\n"
"                     a rejoining worker ends with the others\n"
"  --left R:K         with --check: rank R ran K rounds and left (the others\n"
"                     went on without it, loss-tolerant)\n"
"  --timeout-ms MS    one allreduce gives up after (default 60000)\n"
"  --rto-us US        retransmission timeout (default 5000)\n"
"  --first-round R    round number of the first call (default 0)\n"
"  --lag-ms MS        wait MS before each call: a straggler (default 0)\n"
"  --ports P          dataplanes, one per shard: 1 (default) or --shards;\n"
"                     dpdk: ports 0..P-1, port s joined to shard s (a memif\n"
"                     worker has a port per shard)\n"
"  --gpu E            the gradient and the result live in executor E's memory:\n"
"                     cuda (the GPU: kernels encode into packet memory) or\n"
"                     emu (the same kernels emulated on the host); the\n"
"                     rounds' times include no copy to or from the host\n"
"  --host-shard       also serve shard R (this rank) on a thread, at its --agg\n"
"                     endpoint (udp backend): co-located shards, S = W\n"
"  --json             one JSON object per round\n\n");
	cli_job_usage(f);
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

static float *read_f32(const char *dir, const char *what, uint64_t rank, uint64_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.%llu.f32", dir, what, (unsigned long long)rank);
	FILE *f = fopen(path, "rb");
	float *v = malloc(n * sizeof(float));
	if (!f || !v || fread(v, sizeof(float), n, f) != n) {
		fprintf(stderr, "gw-allreduce: --check: cannot read %s (%llu floats)\n",
			path, (unsigned long long)n);
		free(v);
		v = NULL;
	}
	if (f)
		fclose(f);
	return v;
}

/* received + sum of residuals == sum of all gradients, in double, to a
 * tolerance of float rounding over the additions involved; and every rank
 * received the same. */
static int check(const struct cli *c, const struct opts *o)
{
	uint64_t n = c->o.dim, W = c->o.workers;
	double *want = calloc(n, sizeof(double)), *have = calloc(n, sizeof(double));
	double *mag = calloc(n, sizeof(double));
	float *g = malloc(n * sizeof(float));
	float *recv0 = read_f32(o->check, "recv", 0, n);
	int bad = !want || !have || !mag || !g || !recv0;
	/* The sums every staying rank received: rank 0's, or the first one's
	 * that stayed. */
	uint64_t ref = o->left_rank == 0 && W > 1 ? 1 : 0;
	if (ref) {
		free(recv0);
		recv0 = read_f32(o->check, "recv", ref, n);
		bad = bad || !recv0;
	}
	for (uint64_t w = 0; !bad && w < W; w++) {
		uint64_t rounds = w == o->left_rank ? o->left_rounds : o->rounds;
		for (uint64_t r = 0; r < rounds; r++) {
			synth(g, n, o->seed, w, r);
			for (uint64_t i = 0; i < n; i++) {
				want[i] += g[i];
				mag[i] += fabs(g[i]);
			}
		}
		float *res = read_f32(o->check, "resid", w, n);
		int cmp = w != ref && w != o->left_rank;
		float *rv = cmp ? read_f32(o->check, "recv", w, n) : NULL;
		if (!res || (cmp && !rv)) {
			bad = 1;
		} else {
			for (uint64_t i = 0; i < n; i++)
				have[i] += res[i];
			if (cmp && memcmp(rv, recv0, n * sizeof(float))) {
				fprintf(stderr, "gw-allreduce: --check: rank %llu received "
					"other sums than rank 0\n", (unsigned long long)w);
				bad = 1;
			}
		}
		free(res);
		free(rv);
	}
	uint64_t worst = 0;
	double worst_err = 0;
	for (uint64_t i = 0; !bad && i < n; i++) {
		double err = fabs(have[i] + recv0[i] - want[i]);
		/* Each float addition rounds by at most 2^-24 of what it sums. */
		double tol = 4.0 * (double)(W + 2) * (double)(o->rounds + 2) * mag[i] *
			     ldexp(1.0, -24) + 1e-30;
		if (err > tol && err - tol > worst_err) {
			worst_err = err - tol;
			worst = i;
		}
	}
	if (!bad && worst_err > 0) {
		fprintf(stderr, "gw-allreduce: --check: mass lost at element %llu: "
			"received + residuals = %.9g, gradients = %.9g\n",
			(unsigned long long)worst, have[worst] + recv0[worst], want[worst]);
		bad = 1;
	}
	if (!bad)
		printf("gw-allreduce: check: %llu ranks, %llu rounds, %llu elements: "
		       "received + residuals = all gradients\n", (unsigned long long)W,
		       (unsigned long long)o->rounds, (unsigned long long)n);
	free(want);
	free(have);
	free(mag);
	free(g);
	free(recv0);
	return bad;
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

static int parse(int argc, char **argv, struct cli *c, struct opts *o)
{
	app_split_args(argc, argv, &c->args);
	static const struct option own[] = {
		{"rank", 1, 0, 'r'}, {"agg", 1, 0, 'a'}, {"rounds", 1, 0, 'R'},
		{"seed", 1, 0, 's'}, {"no-verify", 0, 0, 'V'}, {"dump", 1, 0, 'd'},
		{"check", 1, 0, 'c'}, {"timeout-ms", 1, 0, 't'}, {"rto-us", 1, 0, 'o'},
		{"first-round", 1, 0, 'f'}, {"lag-ms", 1, 0, 'L'}, {"host-shard", 0, 0, 'H'},
		{"ports", 1, 0, 'P'}, {"same-grad", 0, 0, 'G'}, {"gpu", 1, 0, 'g'},
		{"left", 1, 0, 'l'}, {"rejoin", 1, 0, 'J'}, {"train-lr", 1, 0, 'T'},
		{"param-file", 1, 0, 'F'}, {"until-round", 1, 0, 'U'},
		{"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	struct option lo[CLI_LONGOPTS_MAX];   /* the shared options, then own */
	cli_longopts(own, lo);
	int ac = c->args.argc, opt, li;
	char **av = c->args.argv;
	optind = 1;
	while ((opt = getopt_long(ac, av, "h", lo, &li)) != -1) {
		bool ok = true;
		switch (opt) {
		case CLI_OPT:
			ok = cli_job_opt(c, lo[li].name, optarg) > 0;
			break;
		case 'r':
			ok = app_opt_u64(c->prog, "rank", optarg, 0, GW_COLL_WORKERS_MAX - 1,
					 &o->rank);
			o->have_rank = true;
			break;
		case 'a':
			ok = cli_parse_aggs(c->prog, optarg, o->shard, &o->nshard) == 0;
			break;
		case 'R':
			ok = app_opt_u64(c->prog, "rounds", optarg, 1, 1000000, &o->rounds);
			break;
		case 's':
			ok = app_opt_u64(c->prog, "seed", optarg, 0, UINT64_MAX, &o->seed);
			break;
		case 'V':
			o->verify = false;
			break;
		case 'd':
			o->dump = optarg;
			break;
		case 'c':
			o->check = optarg;
			break;
		case 'J':
			ok = app_opt_u64(c->prog, "rejoin", optarg, 1, 600000, &o->rejoin_ms);
			break;
		case 'T':
			ok = app_opt_double(c->prog, "train-lr", optarg, 0, 1, APP_OPEN_LO,
					    &o->train_lr);
			break;
		case 'F':
			o->param_file = optarg;
			break;
		case 'U':
			ok = app_opt_u64(c->prog, "until-round", optarg, 1, UINT32_MAX,
					 &o->until_round);
			break;
		case 'l': {
			char *colon = strchr(optarg, ':');
			if (!colon) {
				fprintf(stderr, "%s: --left: '%s' is not RANK:ROUNDS\n", c->prog, optarg);
				ok = false;
				break;
			}
			*colon = '\0';
			ok = app_opt_u64(c->prog, "left", optarg, 0, GW_COLL_WORKERS_MAX - 1,
					 &o->left_rank) &&
			     app_opt_u64(c->prog, "left", colon + 1, 0, 1u << 30, &o->left_rounds);
			break;
		}
		case 't':
			ok = app_opt_u64(c->prog, "timeout-ms", optarg, 1, 3600000,
					 &o->timeout_ms);
			break;
		case 'o':
			ok = app_opt_u64(c->prog, "rto-us", optarg, 10, 10000000, &o->rto_us);
			break;
		case 'f':
			ok = app_opt_u64(c->prog, "first-round", optarg, 0, UINT32_MAX,
					 &o->first_round);
			break;
		case 'L':
			ok = app_opt_u64(c->prog, "lag-ms", optarg, 0, 60000, &o->lag_ms);
			break;
		case 'j':
			o->json = true;
			break;
		case 'H':
			o->host_shard = true;
			break;
		case 'G':
			o->same_grad = true;
			break;
		case 'g':
			if (gw_gpu_name_valid(optarg) < 0) {
				fprintf(stderr, "%s: --gpu: '%s': cuda or emu, with :N for "
					"device N\n", c->prog, optarg);
				ok = false;
			}
			o->gpu = optarg;
			break;
		case 'P':
			ok = app_opt_u64(c->prog, "ports", optarg, 1, GW_COLL_SHARDS_MAX, &o->ports);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
		if (!ok)
			return -1;
	}
	if (optind < ac) {
		fprintf(stderr, "gw-allreduce: unexpected argument '%s'\n", av[optind]);
		return -1;
	}
	if (!c->o.workers || !c->o.dim) {
		fprintf(stderr, "gw-allreduce: --%s is required\n", c->o.workers ? "dim" : "workers");
		return -1;
	}
	if (o->check)
		return 0;
	if (c->mpi) {
		if (o->have_rank || o->nshard) {
			fprintf(stderr, "gw-allreduce: --mpi: --rank and --agg come from mpirun\n");
			return -1;
		}
		return 0;
	}
	if (!o->have_rank || !o->nshard) {
		fprintf(stderr, "gw-allreduce: --%s is required\n", o->have_rank ? "agg" : "rank");
		return -1;
	}
	if (o->rank >= c->o.workers) {
		fprintf(stderr, "gw-allreduce: --rank: %llu is not below --workers\n",
			(unsigned long long)o->rank);
		return -1;
	}
	if (o->ports > 1 && o->ports != (c->o.shards ? c->o.shards : 1)) {
		fprintf(stderr, "gw-allreduce: --ports: %llu, but a port per shard is %llu "
			"(or 1 for all)\n", (unsigned long long)o->ports,
			(unsigned long long)(c->o.shards ? c->o.shards : 1));
		return -1;
	}
	if (o->train_lr > 0 && (o->verify || o->dump)) {
		fprintf(stderr, "gw-allreduce: --train-lr: needs --no-verify and no --dump\n");
		return -1;
	}
	if (o->rejoin_ms && o->verify) {
		fprintf(stderr, "gw-allreduce: --rejoin: needs --no-verify (the model runs "
			"the job from its first round)\n");
		return -1;
	}
	if (o->same_grad && (o->verify || o->dump)) {
		fprintf(stderr, "gw-allreduce: --same-grad: needs --no-verify and no --dump "
			"(the model and --check expect a new gradient every round)\n");
		return -1;
	}
	if (o->ports > 1 && o->host_shard) {
		fprintf(stderr, "gw-allreduce: --ports: a worker with --host-shard has one "
			"dataplane\n");
		return -1;
	}
	if (o->nshard != (c->o.shards ? c->o.shards : 1)) {
		fprintf(stderr, "gw-allreduce: --agg: %u endpoints for %llu shards\n",
			o->nshard, (unsigned long long)(c->o.shards ? c->o.shards : 1));
		return -1;
	}
	if (o->host_shard && o->rank >= o->nshard) {
		fprintf(stderr, "gw-allreduce: --host-shard: rank %llu has no shard of its own "
			"(%u shards)\n", (unsigned long long)o->rank, o->nshard);
		return -1;
	}
	if (o->host_shard && c->backend && strcmp(c->backend, "udp")) {
		fprintf(stderr, "gw-allreduce: --host-shard: the udp backend only (a %s "
			"dataplane is opened once per process)\n", c->backend);
		return -1;
	}
	return 0;
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

int main(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "gw-allreduce");
	struct opts o = {.rounds = 3, .seed = 1, .verify = true, .ports = 1, .left_rank = UINT64_MAX};
	if (cli_mpi_init(&argc, &argv, c.prog) < 0)
		return 2;
	int rc = parse(argc, argv, &c, &o);
	if (rc < 0 || o.check) {
		if (rc == 0)
			rc = check(&c, &o);
		cli_mpi_finalize();
		return rc < 0 ? 2 : rc;
	}
	rc = 1;
	gw_dp *dps[GW_COLL_SHARDS_MAX] = {0}, *dp = NULL, *sdp = NULL;
	gw_comm *comm = NULL;
	struct toy toy = {0};
	gw_gpu *gpu = NULL;
	float *dg = NULL, *dout = NULL;   /* --gpu: the tensors in its memory */
	struct shard_thread shard = {0};
	struct oracle_dense *ref = NULL;
	struct oracle_sketched *skm = NULL;
	uint64_t n = c.o.dim, W = c.o.workers;
	float *g = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
	float *want = malloc(n * sizeof(float)), *recv = calloc(n, sizeof(float));
	float **all = calloc(W, sizeof(*all));
	/* --down-momentum: the last result, to take the round's sum out of v. */
	float mu = c.dense.down_momentum;
	float *prev = mu > 0.0f ? calloc(n, sizeof(float)) : NULL;
	if (!g || !out || !want || !recv || !all || (mu > 0.0f && !prev)) {
		fprintf(stderr, "gw-allreduce: out of memory\n");
		goto done;
	}
	for (unsigned i = 0; i < o.ports; i++)
		if (cli_open_dp(&c, i, &dps[i]) < 0)
			goto done;
	dp = dps[0];
	if (c.mpi) {
		unsigned idx;
		gw_dp_local(dp, &c.local_ep);   /* the port bound, when asked for 0 */
		if (cli_mpi_exchange(c.prog, 0, &c.local_ep, c.o.shards ? (unsigned)c.o.shards : 1,
				     (unsigned)W, o.shard, &idx) < 0)
			goto done;
		o.rank = idx;
		o.nshard = c.o.shards ? (unsigned)c.o.shards : 1;
	}
	gw_coll_job job;
	if (cli_job(&c, dp, &job) < 0) {
		rc = 2;
		goto done;
	}
	if (o.host_shard && host_shard(&c, &o, &job, &sdp, &shard) < 0)
		goto done;
	gw_comm_config cfg = {.job = job, .rank = (uint16_t)o.rank, .shards = o.shard,
			      .rto_us = (uint32_t)o.rto_us,
			      .timeout_ms = (uint32_t)o.timeout_ms,
			      .first_round = (uint32_t)o.first_round};
	comm = gw_comm_create_ports(dps, (unsigned)o.ports, &cfg);
	if (!comm) {
		fprintf(stderr, "gw-allreduce: cannot create the communicator: %s\n",
			gw_error_detail());
		goto done;
	}
	if (cli_liveness(&c, comm, NULL) < 0)
		goto done;
	if (o.rejoin_ms) {
		uint32_t at = 0;
		int e = gw_comm_join(comm, (uint32_t)o.rejoin_ms, &at);
		if (e < 0) {
			fprintf(stderr, "gw-allreduce: --rejoin: %s (%s)\n", gw_error_detail(),
				gw_error_name(e));
			goto done;
		}
		fprintf(stderr, "gw-allreduce: rank %llu rejoins the job at round %u\n",
			(unsigned long long)o.rank, at);
	}
	struct cli_stats sts = {.c = &c, .tool = "gw-allreduce", .role = "worker", .id = o.rank,
				.comm = comm, .dps = dps, .ndp = (unsigned)o.ports};
	if (cli_stats_start(&sts) < 0)
		goto done;
	bool sketched = job.engine == GW_COLL_SKETCHED;
	if (o.gpu) {
		int e = (gpu = gw_gpu_open(o.gpu)) ? gw_comm_set_gpu(comm, gpu) : -1;
		if (e < 0) {
			fprintf(stderr, "gw-allreduce: --gpu %s: %s\n", o.gpu, gw_error_detail());
			goto done;
		}
		fprintf(stderr, "gw-allreduce: rank %llu: --gpu %s: %s\n",
			(unsigned long long)o.rank, o.gpu, gw_comm_gpu_handoff(comm));
		if (!(dg = gw_gpu_alloc(gpu, n * sizeof(float))) ||
		    !(dout = gw_gpu_alloc(gpu, n * sizeof(float)))) {
			fprintf(stderr, "gw-allreduce: --gpu %s: no memory for the tensors\n",
				o.gpu);
			goto done;
		}
	}
	if (o.verify) {
		if (sketched)
			skm = oracle_sketched_create(&job);
		else
			ref = oracle_dense_create(&job);
		if (ref)
			oracle_dense_set_round(ref, (uint32_t)o.first_round);
		for (uint64_t w = 0; (ref || skm) && w < W; w++)
			if (!(all[w] = malloc(n * sizeof(float))))
				break;
		if ((!ref && !skm) || !all[W - 1]) {
			fprintf(stderr, "gw-allreduce: out of memory for the model\n");
			goto done;
		}
	}
	bool modelled = o.verify;
	double total = 0;
	if (o.train_lr > 0) {
		synth(g, n, o.seed, o.rank, 0);   /* the noise, fixed */
		if (toy_init(&toy, n, o.train_lr, g, o.rejoin_ms ? o.param_file : NULL) < 0)
			goto done;
	}
	for (uint64_t r = 0; r < o.rounds; r++) {
		if (toy.p)
			toy_grad(&toy, g);
		else if (r == 0 || !o.same_grad)
			synth(g, n, o.seed, o.rank, r);
		if (o.lag_ms)
			nanosleep(&(struct timespec){.tv_sec = (time_t)(o.lag_ms / 1000),
				  .tv_nsec = (long)(o.lag_ms % 1000) * 1000000L}, NULL);
		gw_allreduce_info info;
		double t0 = app_now_s(), t1 = 0;
		int e;
		if (sketched) {
			gw_sparse_update up;
			e = gw_allreduce_sketched(comm, g, &up, &info);
			memset(out, 0, n * sizeof(float));
			for (uint32_t i = 0; e == 0 && i < up.nnz; i++)
				out[up.keys[i]] = up.values[i];
		} else if (gpu) {
			e = gw_gpu_copy(gpu, dg, g, n * sizeof(float));
			t0 = app_now_s();
			if (e == 0)
				e = gw_allreduce(comm, dg, dout, &info);
			t1 = app_now_s();
			if (e == 0)
				e = gw_gpu_copy(gpu, out, dout, n * sizeof(float));
		} else {
			e = gw_allreduce(comm, g, out, &info);
		}
		double dt = (gpu ? t1 : app_now_s()) - t0;
		total += dt;
		if (e < 0) {
			fprintf(stderr, "gw-allreduce: rank %llu round %llu: %s (%s)\n",
				(unsigned long long)o.rank, (unsigned long long)r,
				gw_error_detail()[0] ? gw_error_detail() : gw_strerror(e),
				gw_error_name(e));
			goto done;
		}
		for (uint64_t i = 0; i < n; i++) {
			recv[i] += prev ? out[i] - mu * prev[i] : out[i];
			if (prev)
				prev[i] = out[i];
		}
		if (toy.p) {
			toy_step(&toy, out, job.workers);
			if (o.param_file && o.rank == 0 && toy_save(&toy, o.param_file) < 0)
				fprintf(stderr, "gw-allreduce: --param-file %s: cannot write\n",
					o.param_file);
		}
		const char *verdict = "unchecked";
		if (modelled) {
			for (uint64_t w = 0; w < W; w++)
				synth(all[w], n, o.seed, w, r);
			const float *const *a = (const float *const *)all;
			if ((sketched ? oracle_sketched_round(skm, a, want)
				      : oracle_dense_round(ref, a, want)) < 0) {
				fprintf(stderr, "gw-allreduce: the model failed\n");
				goto done;
			}
			if (r == 0 && !info.short_chunks && !sketched &&
			    !within_bound(&job, a, out)) {
				fprintf(stderr, "gw-allreduce: rank %llu: round 0 outside the "
					"codecs' error bound\n", (unsigned long long)o.rank);
				goto done;
			}
			if (info.short_chunks) {
				modelled = false;   /* short chunks: no model from here on */
				verdict = "short";
			} else if (memcmp(want, out, n * sizeof(float))) {
				uint64_t i = 0;
				while (!memcmp(want + i, out + i, sizeof(float)))
					i++;
				fprintf(stderr, "gw-allreduce: rank %llu round %llu: element %llu "
					"is %.9g, the model says %.9g\n", (unsigned long long)o.rank,
					(unsigned long long)r, (unsigned long long)i, out[i], want[i]);
				goto done;
			} else {
				verdict = "bit-exact";
			}
		}
		cli_stats_tick(&sts);
		int last = o.until_round && (uint64_t)info.round + 1 >= o.until_round;
		if (o.json)
			print_round_json(&o, r, &job, dt, &info, verdict, toy.p ? &toy : NULL);
		else
			printf("rank %llu round %llu: %.3f ms, %.3g elements/s, %llu bytes up, "
			       "%u short chunks (%u without this rank), %s\n",
			       (unsigned long long)o.rank, (unsigned long long)r, dt * 1e3,
			       (double)n / dt, (unsigned long long)info.bytes_up,
			       info.short_chunks, info.left_out, verdict);
		fflush(stdout);
		if (last)
			break;
	}
	cli_stats_final(&sts);
	if (o.dump) {
		const float *res = gw_comm_residual(comm);
		if (res && gpu) {   /* in the executor's memory: the host's copy */
			if (gw_gpu_copy(gpu, out, res, n * sizeof(float)) < 0) {
				fprintf(stderr, "gw-allreduce: --gpu: %s\n", gw_error_detail());
				goto done;
			}
			res = out;
		}
		float *zero = res ? NULL : calloc(n, sizeof(float));
		if (write_f32(o.dump, "recv", o.rank, recv, n) < 0 ||
		    write_f32(o.dump, "resid", o.rank, res ? res : zero, n) < 0) {
			free(zero);
			goto done;
		}
		free(zero);
	}
	gw_comm_stats st;
	gw_comm_stats_get(comm, &st);
	fprintf(stderr, "gw-allreduce: rank %llu: %llu rounds in %.3f s, %llu chunks sent, "
		"%llu retransmitted, %llu results; dropped: %llu duplicate, %llu stale, "
		"%llu foreign, %llu bad, %llu corrupt, %llu unauthenticated, %llu forged\n",
		(unsigned long long)o.rank, (unsigned long long)st.rounds, total,
		(unsigned long long)st.chunks_sent, (unsigned long long)st.retransmits,
		(unsigned long long)st.results, (unsigned long long)st.duplicates,
		(unsigned long long)st.stale, (unsigned long long)st.foreign,
		(unsigned long long)st.bad, (unsigned long long)st.corrupt,
		(unsigned long long)st.unauthenticated, (unsigned long long)st.forged);
	rc = 0;
done:
	for (uint64_t w = 0; all && w < W; w++)
		free(all[w]);
	free(all);
	free(g);
	free(out);
	free(want);
	free(recv);
	free(prev);
	oracle_dense_free(ref);
	oracle_sketched_free(skm);
	gw_comm_free(comm);
	toy_free(&toy);
	gw_gpu_free(gpu, dg);
	gw_gpu_free(gpu, dout);
	gw_gpu_close(gpu);
	for (unsigned i = 0; i < GW_COLL_SHARDS_MAX; i++)
		gw_dp_close(dps[i]);
	/* A failed worker stops its shard at once; otherwise the shard
	 * lingers until the other workers are quiet (serve_shard). */
	if (shard.started) {
		if (rc != 0 || !shard.owns)
			shard.stop = 1;
		pthread_join(shard.tid, NULL);
		if (shard.rc < 0 && rc == 0) {
			fprintf(stderr, "gw-allreduce: --host-shard: the shard failed: %s\n",
				gw_strerror(shard.rc));
			rc = 1;
		}
	}
	gw_agg_free(shard.agg);
	gw_dp_close(sdp);
	cli_mpi_finalize();
	return rc;
}
