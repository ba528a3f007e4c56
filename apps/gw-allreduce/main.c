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
 * (a sparse gw_allreduce_result): the k-sparse update, checked
 * against the in-process model of tests/oracle/sketched.c, and the residual
 * is the error accumulation v (the mass check holds with --momentum 0).
 */
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/gpudirect.h>

#include "allreduce.h"
#include "coll_mpi.h"

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

/* This tool's own options: the numbers (checked against their bounds),
 * the switches and the texts, each where it lands in struct opts. */
static const struct num_opt {
	const char *name;
	uint64_t lo, hi;
	size_t off;
} nums[] = {
	{"rank", 0, GW_COLL_WORKERS_MAX - 1, offsetof(struct opts, rank)},
	{"rounds", 1, 1000000, offsetof(struct opts, rounds)},
	{"seed", 0, UINT64_MAX, offsetof(struct opts, seed)},
	{"rejoin", 1, 600000, offsetof(struct opts, rejoin_ms)},
	{"until-round", 1, UINT32_MAX, offsetof(struct opts, until_round)},
	{"timeout-ms", 1, 3600000, offsetof(struct opts, timeout_ms)},
	{"rto-us", 10, 10000000, offsetof(struct opts, rto_us)},
	{"first-round", 0, UINT32_MAX, offsetof(struct opts, first_round)},
	{"lag-ms", 0, 60000, offsetof(struct opts, lag_ms)},
	{"ports", 1, GW_COLL_SHARDS_MAX, offsetof(struct opts, ports)},
};

static const struct flag_opt {
	const char *name;
	size_t off;
	bool value;
} flags[] = {
	{"no-verify", offsetof(struct opts, verify), false},
	{"json", offsetof(struct opts, json), true},
	{"host-shard", offsetof(struct opts, host_shard), true},
	{"same-grad", offsetof(struct opts, same_grad), true},
};

static const struct text_opt {
	const char *name;
	size_t off;
} texts[] = {
	{"dump", offsetof(struct opts, dump)},
	{"check", offsetof(struct opts, check)},
	{"param-file", offsetof(struct opts, param_file)},
};

/* --left RANK:ROUNDS */
static bool parse_left(const char *prog, char *v, struct opts *o)
{
	char *colon = strchr(v, ':');
	if (!colon) {
		fprintf(stderr, "%s: --left: '%s' is not RANK:ROUNDS\n", prog, v);
		return false;
	}
	*colon = '\0';
	return app_opt_u64(prog, "left", v, 0, GW_COLL_WORKERS_MAX - 1, &o->left_rank) &&
	       app_opt_u64(prog, "left", colon + 1, 0, 1u << 30, &o->left_rounds);
}

/* One of this tool's own options; false once its message is printed. */
static bool own_opt(struct cli *c, struct opts *o, const char *name, char *v)
{
	char *base = (char *)o;
	for (size_t i = 0; i < sizeof(nums) / sizeof(*nums); i++)
		if (!strcmp(name, nums[i].name)) {
			o->have_rank |= nums[i].off == offsetof(struct opts, rank);
			return app_opt_u64(c->prog, name, v, nums[i].lo, nums[i].hi,
					   (uint64_t *)(base + nums[i].off));
		}
	for (size_t i = 0; i < sizeof(flags) / sizeof(*flags); i++)
		if (!strcmp(name, flags[i].name)) {
			*(bool *)(base + flags[i].off) = flags[i].value;
			return true;
		}
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++)
		if (!strcmp(name, texts[i].name)) {
			*(const char **)(base + texts[i].off) = v;
			return true;
		}
	if (!strcmp(name, "agg"))
		return cli_parse_aggs(c->prog, v, o->shard, &o->nshard) == 0;
	if (!strcmp(name, "left"))
		return parse_left(c->prog, v, o);
	if (!strcmp(name, "train-lr"))
		return app_opt_double(c->prog, name, v, 0, 1, APP_OPEN_LO, &o->train_lr);
	/* gpu */
	o->gpu = v;
	if (gw_gpu_name_valid(v) >= 0)
		return true;
	fprintf(stderr, "%s: --gpu: '%s': cuda or emu, with :N for device N\n", c->prog, v);
	return false;
}

/* The options a worker cannot run without; 1 when --check needs no more. */
static int required(const struct cli *c, const struct opts *o)
{
	const char *missing = !c->o.workers ? "workers" : !c->o.dim ? "dim" : NULL;
	if (!missing && o->check)
		return 1;
	if (!missing && !c->local)
		missing = "local";
	if (!missing && !c->mpi && (!o->have_rank || !o->nshard))
		missing = o->have_rank ? "agg" : "rank";
	if (missing) {
		fprintf(stderr, "gw-allreduce: --%s is required\n", missing);
		return -1;
	}
	if (!app_eal_check(c->prog, &c->args, c->backend))
		return -1;
	if (c->mpi && (o->have_rank || o->nshard)) {
		fprintf(stderr, "gw-allreduce: --mpi: --rank and --agg come from mpirun\n");
		return -1;
	}
	return c->mpi ? 1 : 0;
}

/* Options that each are fine but not together: the first such, said. */
static int combination(const struct cli *c, const struct opts *o)
{
	uint64_t shards = c->o.shards ? c->o.shards : 1;
	char why[160] = "";
	if (o->rank >= c->o.workers)
		snprintf(why, sizeof(why), "--rank: %llu is not below --workers",
			 (unsigned long long)o->rank);
	else if (o->ports > 1 && o->ports != shards)
		snprintf(why, sizeof(why), "--ports: %llu, but a port per shard is %llu (or 1 "
			 "for all)", (unsigned long long)o->ports, (unsigned long long)shards);
	else if (o->train_lr > 0 && (o->verify || o->dump))
		snprintf(why, sizeof(why), "--train-lr: needs --no-verify and no --dump");
	else if (o->rejoin_ms && o->verify)
		snprintf(why, sizeof(why), "--rejoin: needs --no-verify (the model runs the job "
			 "from its first round)");
	else if (o->same_grad && (o->verify || o->dump))
		snprintf(why, sizeof(why), "--same-grad: needs --no-verify and no --dump (the "
			 "model and --check expect a new gradient every round)");
	else if (o->ports > 1 && o->host_shard)
		snprintf(why, sizeof(why), "--ports: a worker with --host-shard has one dataplane");
	else if (o->nshard != shards)
		snprintf(why, sizeof(why), "--agg: %u endpoints for %llu shards", o->nshard,
			 (unsigned long long)shards);
	else if (o->host_shard && o->rank >= o->nshard)
		snprintf(why, sizeof(why), "--host-shard: rank %llu has no shard of its own (%u "
			 "shards)", (unsigned long long)o->rank, o->nshard);
	else if (o->host_shard && c->backend && strcmp(c->backend, "udp"))
		snprintf(why, sizeof(why), "--host-shard: the udp backend only (a %s dataplane "
			 "is opened once per process)", c->backend);
	if (!why[0])
		return 0;
	fprintf(stderr, "gw-allreduce: %s\n", why);
	return -1;
}

static int parse(int argc, char **argv, struct cli *c, struct opts *o)
{
	app_split_args(argc, argv, &c->args);
	/* 'O': one of this tool's own, by name (own_opt). */
	static const struct option own[] = {
		{"rank", 1, 0, 'O'}, {"agg", 1, 0, 'O'}, {"rounds", 1, 0, 'O'},
		{"seed", 1, 0, 'O'}, {"no-verify", 0, 0, 'O'}, {"dump", 1, 0, 'O'},
		{"check", 1, 0, 'O'}, {"timeout-ms", 1, 0, 'O'}, {"rto-us", 1, 0, 'O'},
		{"first-round", 1, 0, 'O'}, {"lag-ms", 1, 0, 'O'}, {"host-shard", 0, 0, 'O'},
		{"ports", 1, 0, 'O'}, {"same-grad", 0, 0, 'O'}, {"gpu", 1, 0, 'O'},
		{"left", 1, 0, 'O'}, {"rejoin", 1, 0, 'O'}, {"train-lr", 1, 0, 'O'},
		{"param-file", 1, 0, 'O'}, {"until-round", 1, 0, 'O'},
		{"json", 0, 0, 'O'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	struct option lo[CLI_LONGOPTS_MAX];   /* the shared options, then own */
	cli_longopts(own, lo);
	int ac = c->args.argc, opt, li;
	char **av = c->args.argv;
	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((opt = getopt_long(ac, av, "h", lo, &li)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			exit(0);
		}
		if (opt != CLI_OPT && opt != 'O') {
			app_bad_option(c->prog, NULL, av, "h");
			return -1;
		}
		if (opt == CLI_OPT ? cli_job_opt(c, lo[li].name, optarg) <= 0
				   : !own_opt(c, o, lo[li].name, optarg))
			return -1;
	}
	if (optind < ac) {
		fprintf(stderr, "gw-allreduce: unexpected argument '%s'\n", av[optind]);
		return -1;
	}
	int rc = required(c, o);
	return rc ? (rc > 0 ? 0 : -1) : combination(c, o);
}

int main(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "gw-allreduce");
	struct opts o = {.rounds = 3, .seed = 1, .verify = true, .ports = 1, .left_rank = UINT64_MAX};
	if (cli_mpi_init(&argc, &argv, c.prog) < 0)
		return 2;
	int rc = parse(argc, argv, &c, &o);
	if (rc == 0)
		rc = o.check ? check(&c, &o) : worker_run(&c, &o);
	if (rc < 0)   /* refused before anything ran */
		rc = cli_refused(&c);
	cli_mpi_finalize();
	return rc;
}
