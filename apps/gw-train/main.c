/* gw-train: data-parallel training over the gradwire allreduce.
 *
 *   gw-train [options]            the driver: starts gw-launch (one
 *                                 aggregator, W workers) and reports
 *   gw-train [EAL --] --rank R ...  a worker (gw-launch starts these)
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"
#include "train.h"
#include "model/mlp.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-train [options] [job options]\n\n"
"workload:\n"
"  --model M          mlp (MNIST, default), logreg, svm or linreg (SpamAssassin)\n"
"  --data DIR         where scripts/fetch-data.sh put the data (default data)\n"
"  --train F --test F LIBSVM files (default DIR/mnist.* or DIR/spam.*)\n"
"  --features N       model inputs (default 784 for mlp, 1048576 = 2^20 linear)\n"
"  --hidden H         MLP hidden units (default 64)\n"
"  --classes K        MLP classes (default 10)\n"
"  --epochs E         (default 5)\n"
"  --target-acc PCT   stop at this test accuracy, in percent\n"
"  --min-epochs M     but not before M epochs (default 0)\n"
"  --batch B          rows per worker per step (default 32 mlp, 64 linear)\n"
"  --lr LR            learning rate (default 0.05 mlp, 0.01 linear)\n"
"  --momentum MU      mlp (default 0.9)\n"
"  --shard-momentum   the momentum at the shards, which send the state change\n"
"                     (3LC's placement; the job's --down-momentum)\n"
"  --cosine           the learning rate decays to 0 over the run (cosine)\n"
"  --one-tensor       the whole model one tensor of the job (one 3LC m; the\n"
"                     default is a tensor per layer's weights and biases)\n"
"  --l2 LAMBDA        linear: l2 regularisation (default 1e-6)\n"
"  --evals K          evaluations per epoch (default 4)\n"
"  --seed S           data split, initial model and order (default 1)\n"
"  --step-ms MS       a step takes at least MS (sleeps): a larger model's compute,\n"
"                     so that small data runs long enough to kill a worker\n"
"launch (driver):\n"
"  --link L           memif (default), udp or netns (see gw-launch)\n"
"  --workers W        (default 4); --shards S (default 1)\n"
"  --baseline         first train with raw up and down, then compare\n"
"  --baseline-from F  compare with the records of an earlier run (--json)\n"
"  --label NAME       this run's name in records and plots (default: codecs)\n"
"  --plot PREFIX      write PREFIX.png (loss and accuracy vs time and bytes)\n"
"  --plot-only PREFIX F...  plot the runs recorded in files F (--json)\n"
"  --keep-logs DIR    keep every process's log\n"
"  --restart N        loss-tolerant: start a worker that dies again, N times in\n"
"                     all; it rejoins with the newest replica another rank\n"
"                     wrote (gw-launch --restart, worker --param-file)\n"
"  --json             records as JSON lines\n"
"  --verbose          show the processes' own output\n"
"  --list-codecs      the registered codecs (name, dense or sparse-only)\n"
"worker (set by gw-launch):\n"
"  --rank R --agg LIST  --timeout-ms MS  --rto-us US\n"
"  --param-file P     write this rank's replica to P.RANK after every step\n"
"  --rejoin MS        restarted (loss-tolerant): join the running job, from the\n"
"                     newest replica in P.* (needs --param-file)\n\n");
	cli_job_usage(f);
}

static int model_parse(const char *s, enum model_kind *k)
{
	static const char *names[] = {"logreg", "svm", "linreg", "mlp"};
	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*k = (enum model_kind)i;
			return 0;
		}
	return -1;
}

enum {
	O_MODEL = 1, O_DATA, O_TRAIN, O_TEST, O_FEATURES, O_HIDDEN, O_CLASSES, O_EPOCHS,
	O_TARGET, O_BATCH, O_LR, O_MOMENTUM, O_L2, O_EVALS, O_SEED, O_LINK, O_BASELINE,
	O_BASEFROM, O_LABEL, O_PLOT, O_PLOTONLY, O_KEEP, O_JSON, O_VERBOSE, O_RANK, O_AGG,
	O_TIMEOUT, O_RTO, O_HELP, O_LIST, O_MINEP, O_RESTART, O_PARAMFILE, O_REJOIN, O_STEPMS,
	O_SHARDMOM, O_COSINE, O_ONETENSOR,
};

/* Registered codecs, and whether the allreduce (dense tensors) takes them. */
static void list_codecs(void)
{
	int ids[64], n = gw_codec_list(ids, 64);
	for (int i = 0; i < n && i < 64; i++)
		printf("%s %s\n", gw_codec_name(ids[i]),
		       gw_codec_caps(ids[i]) & GW_CODEC_DENSE ? "dense" : "sparse-only");
}

/* Job options the driver does not forward: gw-launch or the driver sets them. */
static bool set_by_launcher(const char *name)
{
	static const char *own[] = {"dim", "backend", "local", "mpi", "workers", "shards"};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(name, own[i]))
			return true;
	return false;
}

static int parse(int argc, char **argv, struct cli *c, struct train_opts *o,
		 const char **plot_only, int *first_file)
{
	app_split_args(argc, argv, &c->args);
	static const struct option own[] = {
		{"model", 1, 0, O_MODEL}, {"data", 1, 0, O_DATA}, {"train", 1, 0, O_TRAIN},
		{"test", 1, 0, O_TEST}, {"features", 1, 0, O_FEATURES},
		{"hidden", 1, 0, O_HIDDEN}, {"classes", 1, 0, O_CLASSES},
		{"epochs", 1, 0, O_EPOCHS}, {"target-acc", 1, 0, O_TARGET},
		{"batch", 1, 0, O_BATCH}, {"lr", 1, 0, O_LR}, {"momentum", 1, 0, O_MOMENTUM},
		{"shard-momentum", 0, 0, O_SHARDMOM}, {"cosine", 0, 0, O_COSINE},
		{"one-tensor", 0, 0, O_ONETENSOR},
		{"l2", 1, 0, O_L2}, {"evals", 1, 0, O_EVALS}, {"seed", 1, 0, O_SEED},
		{"link", 1, 0, O_LINK}, {"baseline", 0, 0, O_BASELINE},
		{"baseline-from", 1, 0, O_BASEFROM}, {"label", 1, 0, O_LABEL},
		{"plot", 1, 0, O_PLOT}, {"plot-only", 1, 0, O_PLOTONLY},
		{"keep-logs", 1, 0, O_KEEP}, {"json", 0, 0, O_JSON},
		{"verbose", 0, 0, O_VERBOSE}, {"rank", 1, 0, O_RANK}, {"agg", 1, 0, O_AGG},
		{"timeout-ms", 1, 0, O_TIMEOUT}, {"rto-us", 1, 0, O_RTO},
		{"help", 0, 0, O_HELP}, {"list-codecs", 0, 0, O_LIST},
		{"min-epochs", 1, 0, O_MINEP}, {"restart", 1, 0, O_RESTART},
		{"param-file", 1, 0, O_PARAMFILE}, {"rejoin", 1, 0, O_REJOIN},
		{"step-ms", 1, 0, O_STEPMS}, {0, 0, 0, 0},
	};
	struct option lo[CLI_LONGOPTS_MAX];   /* the shared options, then own */
	cli_longopts(own, lo);
	const char *p = c->prog;
	bool lr_set = false, batch_set = false, feat_set = false;
	int ac = c->args.argc, opt, li;
	char **av = c->args.argv;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(ac, av, "", lo, &li)) != -1) {
		bool ok = true;
		switch (opt) {
		case CLI_OPT:
			ok = cli_job_opt(c, lo[li].name, optarg) > 0;
			if (ok && set_by_launcher(lo[li].name) && strcmp(lo[li].name, "workers") &&
			    strcmp(lo[li].name, "shards"))
				o->launcher_opt = lo[li].name;
			if (ok && !set_by_launcher(lo[li].name) && o->nfwd < FWD_MAX) {
				o->fwd[o->nfwd][0] = lo[li].name;
				o->fwd[o->nfwd++][1] = optarg;
			}
			if (!strcmp(lo[li].name, "workers"))
				o->launch_workers = c->o.workers;
			if (!strcmp(lo[li].name, "shards"))
				o->launch_shards = c->o.shards;
			break;
		case O_SHARDMOM:
			o->shard_momentum = true;
			break;
		case O_COSINE:
			o->cosine = true;
			break;
		case O_ONETENSOR:
			o->one_tensor = true;
			break;
		case O_MODEL:
			ok = model_parse(optarg, &o->model) == 0;
			if (!ok)
				fprintf(stderr, "%s: --model: '%s' is not mlp, logreg, svm or "
					"linreg\n", p, optarg);
			o->model_name = optarg;
			break;
		case O_DATA: o->data_dir = optarg; break;
		case O_TRAIN: o->train_path = optarg; break;
		case O_TEST: o->test_path = optarg; break;
		case O_FEATURES:
			ok = app_opt_u64(p, "features", optarg, 1, 1u << 28, &o->features);
			feat_set = true;
			break;
		case O_HIDDEN: ok = app_opt_u64(p, "hidden", optarg, 1, 65536, &o->hidden); break;
		case O_CLASSES: ok = app_opt_u64(p, "classes", optarg, 2, 256, &o->classes); break;
		case O_EPOCHS: ok = app_opt_u64(p, "epochs", optarg, 1, 100000, &o->epochs); break;
		case O_MINEP:
			ok = app_opt_u64(p, "min-epochs", optarg, 0, 100000, &o->min_epochs);
			break;
		case O_TARGET:
			ok = app_opt_double(p, "target-acc", optarg, 0, 100, 0, &o->target_acc);
			break;
		case O_BATCH:
			ok = app_opt_u64(p, "batch", optarg, 1, 65536, &o->batch);
			batch_set = true;
			break;
		case O_LR:
			ok = app_opt_double(p, "lr", optarg, 1e-9, 100, 0, &o->lr);
			lr_set = true;
			break;
		case O_MOMENTUM:
			ok = app_opt_double(p, "momentum", optarg, 0, 0.999999, 0, &o->momentum);
			break;
		case O_L2: ok = app_opt_double(p, "l2", optarg, 0, 100, 0, &o->l2); break;
		case O_EVALS: ok = app_opt_u64(p, "evals", optarg, 1, 1000, &o->evals); break;
		case O_SEED: ok = app_opt_u64(p, "seed", optarg, 0, UINT64_MAX, &o->seed); break;
		case O_LINK:
			ok = !strcmp(optarg, "memif") || !strcmp(optarg, "udp") ||
			     !strcmp(optarg, "netns");
			if (!ok)
				fprintf(stderr, "%s: --link: '%s' is not memif, udp or netns\n", p,
					optarg);
			o->link = optarg;
			break;
		case O_BASELINE: o->baseline = true; break;
		case O_BASEFROM: o->baseline_from = optarg; break;
		case O_LABEL:
			ok = strlen(optarg) > 0 && strlen(optarg) < 64 && !strpbrk(optarg, "\"\\'");
			if (!ok)
				fprintf(stderr, "%s: --label: 1..63 characters, no quotes\n", p);
			o->label = optarg;
			break;
		case O_PLOT: o->plot = optarg; break;
		case O_PLOTONLY: *plot_only = optarg; break;
		case O_KEEP: o->keep_logs = optarg; break;
		case O_JSON: o->json = true; break;
		case O_VERBOSE: o->verbose = true; break;
		case O_RANK:
			ok = app_opt_u64(p, "rank", optarg, 0, GW_COLL_WORKERS_MAX - 1, &o->rank);
			o->have_rank = true;
			break;
		case O_AGG: o->aggs = optarg; break;
		case O_TIMEOUT:
			ok = app_opt_u64(p, "timeout-ms", optarg, 1, 3600000, &o->timeout_ms);
			break;
		case O_RTO: ok = app_opt_u64(p, "rto-us", optarg, 10, 10000000, &o->rto_us); break;
		case O_RESTART: ok = app_opt_u64(p, "restart", optarg, 1, 100, &o->restart); break;
		case O_PARAMFILE:
			ok = optarg[0] != 0;
			if (!ok)
				fprintf(stderr, "%s: --param-file: an empty path\n", p);
			o->param_file = optarg;
			break;
		case O_STEPMS: ok = app_opt_u64(p, "step-ms", optarg, 0, 60000, &o->step_ms); break;
		case O_REJOIN:
			ok = app_opt_u64(p, "rejoin", optarg, 1, 600000, &o->rejoin_ms);
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		case O_LIST:
			list_codecs();
			exit(0);
		default:
			app_bad_option(p, NULL, av, "");
			return -1;
		}
		if (!ok)
			return -1;
	}
	if (o->rejoin_ms && !o->param_file) {
		fprintf(stderr, "%s: --rejoin: needs --param-file (where the other ranks' "
			"replicas are)\n", p);
		return -1;
	}
	if (o->restart && c->o.mode != GW_COLL_LOSS_TOLERANT) {
		fprintf(stderr, "%s: --restart: only a loss-tolerant job (--mode loss-tolerant) "
			"goes on while a worker restarts\n", p);
		return -1;
	}
	if (!app_eal_check(p, &c->args, c->backend))
		return -1;
	*first_file = c->args.first + optind;
	if (!*plot_only && optind < ac) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", p, av[optind]);
		return -1;
	}
	bool linear = o->model != MODEL_MLP;
	if (!feat_set)
		o->features = linear ? 1u << 20 : 784;
	if (!lr_set)
		o->lr = linear ? 0.01 : 0.05;
	if (!batch_set)
		o->batch = linear ? 64 : 32;
	const char *stem = linear ? "spam" : "mnist";
	static char trainp[4096], testp[4096];
	if (!o->train_path) {
		snprintf(trainp, sizeof(trainp), "%s/%s.train.svm", o->data_dir, stem);
		o->train_path = trainp;
	}
	if (!o->test_path) {
		snprintf(testp, sizeof(testp), "%s/%s.test.svm", o->data_dir, stem);
		o->test_path = testp;
	}
	return 0;
}

void train_layout(const struct train_opts *o, char *buf, size_t len)
{
	unsigned long long in = o->features, h = o->hidden, k = o->classes;
	if (o->model == MODEL_MLP)   /* W1, b1, W2, b2 (model/mlp.c) */
		snprintf(buf, len, "%llu,%llu,%llu,%llu", h * in, h, k * h, k);
	else                         /* the weights, then the bias */
		snprintf(buf, len, "%llu,1", in);
}

size_t train_nparams(const struct train_opts *o)
{
	if (o->model == MODEL_MLP)
		return gw_mlp_nparams((uint32_t)o->features, (uint32_t)o->hidden,
				      (uint32_t)o->classes);
	return (size_t)o->features + 1;
}

int main(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "gw-train");
	struct train_opts o = {
		.model = MODEL_MLP, .model_name = "mlp", .data_dir = "data", .epochs = 5,
		.hidden = 64, .classes = 10, .evals = 4, .seed = 1, .momentum = 0.9,
		.l2 = 1e-6, .target_acc = -1, .link = "memif", .launch_workers = 4,
		.launch_shards = 1, .timeout_ms = 120000,
	};
	const char *plot_only = NULL;
	int first_file = 0;
	if (cli_mpi_init(&argc, &argv, c.prog) < 0)
		return 2;
	int rc;
	if (parse(argc, argv, &c, &o, &plot_only, &first_file) < 0) {
		rc = cli_refused(&c);
	} else if (plot_only) {
		int n = argc - first_file;
		struct run *runs = calloc(n > 0 ? (size_t)n : 1, sizeof(*runs));
		rc = n > 0 && runs ? 0 : 2;
		if (n <= 0)
			fprintf(stderr, "gw-train: --plot-only: no record files given\n");
		for (int i = 0; rc == 0 && i < n; i++)
			rc = run_load(argv[first_file + i], &runs[i]) < 0 ? 1 : 0;
		if (rc == 0)
			rc = runs_plot(plot_only, runs, (unsigned)n) < 0 ? 1 : 0;
		for (int i = 0; runs && i < n; i++)
			run_free(&runs[i]);
		free(runs);
	} else if (o.have_rank || c.mpi) {
		if (!c.mpi && !o.aggs) {
			fprintf(stderr, "gw-train: --agg is required with --rank\n");
			rc = 2;
		} else if (!c.o.workers || !c.o.dim) {
			fprintf(stderr, "gw-train: --%s is required with --rank\n",
				c.o.workers ? "dim" : "workers");
			rc = 2;
		} else if (o.rank >= c.o.workers) {
			fprintf(stderr, "gw-train: --rank: %llu is not below --workers\n",
				(unsigned long long)o.rank);
			rc = 2;
		} else {
			rc = train_worker(&c, &o);
		}
	} else {
		/* The job every process will be given: refused here, by the
		 * option it names, rather than by the aggregator after launch. */
		struct cli job = c;
		job.o.workers = o.launch_workers;
		job.o.shards = o.launch_shards;
		job.o.dim = train_nparams(&o);
		rc = cli_job_check(&job) < 0 ? 2 : train_driver(&o, argc, argv);
	}
	cli_mpi_finalize();
	return rc;
}
