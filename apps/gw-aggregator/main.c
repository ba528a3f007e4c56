/* gw-aggregator: one aggregator shard of a gradwire allreduce job.
 *
 *   gw-aggregator [EAL options --] --shard I --workers W --dim N
 *                 [job and dataplane options] [--ports P] [--idle-exit-ms MS]
 *                 [--json]
 *
 * Serves until SIGINT/SIGTERM (or --idle-exit-ms without packets), then
 * prints its counters. With the dpdk backend and memif links it opens one
 * port per worker (--ports W): memif joins two processes only. With
 * --local port 0 the backend picks the port, and the shard prints the
 * endpoint it got on stdout before it says ready, so that a launcher
 * (gw-launch) need not guess a free port.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_cli.h"
#include "coll_mpi.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-aggregator [EAL options --] --shard I --workers W --dim N\n"
"                     --local IP:PORT [options]\n\n"
"  --shard I            this shard (0 .. shards-1)\n"
"  --ports P            dataplanes to serve (dpdk: ports 0..P-1, one memif\n"
"                       link per worker; udp: --local port .. port+P-1)\n"
"  --idle-exit-ms MS    exit after MS without a packet (once one came)\n"
"  --json               counters at exit as one JSON object\n\n"
"With --local port 0 (one dataplane) the port is picked when it opens, and\n"
"the shard prints its endpoint on stdout before it is ready:\n"
"  gw-aggregator shard I: endpoint IP:PORT\n"
"or, with --json, {\"tool\":\"gw-aggregator\",\"shard\":I,\"endpoint\":\"IP:PORT\"}\n\n");
	cli_job_usage(f);
}

/* The counters as one JSON object. */
#define STAT(name) APP_JU(#name, s->name)
#define FAULT(name) APP_JU(#name, f->name)
#define LIVE(name) APP_JU(#name, l->name)
static void print_json(const gw_agg_stats *s, const gw_agg_faults *f,
		       const gw_liveness_stats *l, uint64_t shard, uint64_t rx_dropped)
{
	const struct app_json_member m[] = {
		APP_JS("tool", "gw-aggregator"), APP_JU("shard", shard), STAT(ups),
		STAT(results_sent), STAT(results_resent), STAT(bytes_down), STAT(chunks_done),
		STAT(chunks_short), STAT(duplicates), STAT(late), STAT(stale), STAT(early),
		STAT(foreign), STAT(bad), STAT(corrupt), STAT(unauthenticated), STAT(forged),
		STAT(tx_refused), FAULT(ctrl_sent), FAULT(ctrl_received), FAULT(gone),
		FAULT(back), FAULT(gone_now), FAULT(problems), FAULT(impostors),
		LIVE(suspected), LIVE(cleared), LIVE(probes_sent), LIVE(never_up),
		LIVE(hb_late_p99_us), LIVE(hb_late_max_us), LIVE(gap_p99_us), LIVE(gap_max_us),
		APP_JU("rx_dropped", rx_dropped),
	};
	struct app_json j;
	app_json_begin(&j, stdout, false);
	app_json_members(&j, m, APP_JSON_N(m));
	app_json_end(&j);
}
#undef STAT
#undef FAULT
#undef LIVE

/* The endpoint a --local port 0 got, printed at once: a launcher waits
 * for it before it starts the workers. */
static void print_endpoint(const gw_endpoint *ep, uint64_t shard, bool json)
{
	char buf[64];
	if (gw_endpoint_format(ep, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "?");
	if (json) {
		const struct app_json_member m[] = {
			APP_JS("tool", "gw-aggregator"), APP_JU("shard", shard),
			APP_JS("endpoint", buf),
		};
		struct app_json j;
		app_json_begin(&j, stdout, false);
		app_json_members(&j, m, APP_JSON_N(m));
		app_json_end(&j);
	} else {
		printf("gw-aggregator shard %llu: endpoint %s\n", (unsigned long long)shard, buf);
	}
	fflush(stdout);
}

static void print_stats(const gw_agg_stats *s, const gw_agg_faults *f,
			const gw_liveness_stats *l, uint64_t shard, bool json, uint64_t rx_dropped)
{
	if (json) {
		print_json(s, f, l, shard, rx_dropped);
		return;
	}
	printf("gw-aggregator shard %llu: %llu chunks (%llu short), %llu ups, "
	       "%llu results (%llu re-sent), dropped: %llu duplicate, %llu late, "
	       "%llu stale, %llu foreign, %llu bad, %llu corrupt, %llu unauthenticated, "
	       "%llu forged\n",
	       (unsigned long long)shard, (unsigned long long)s->chunks_done,
	       (unsigned long long)s->chunks_short, (unsigned long long)s->ups,
	       (unsigned long long)s->results_sent, (unsigned long long)s->results_resent,
	       (unsigned long long)s->duplicates, (unsigned long long)s->late,
	       (unsigned long long)s->stale, (unsigned long long)s->foreign,
	       (unsigned long long)s->bad, (unsigned long long)s->corrupt,
	       (unsigned long long)s->unauthenticated, (unsigned long long)s->forged);
}

int main(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "gw-aggregator");
	uint64_t shard = 0, ports = 1, idle_ms = 0;
	bool have_shard = false, json = false;
	if (cli_mpi_init(&argc, &argv, c.prog) < 0)
		return 2;
	app_split_args(argc, argv, &c.args);
	static const struct option own[] = {
		{"shard", 1, 0, 's'}, {"ports", 1, 0, 'p'}, {"idle-exit-ms", 1, 0, 'i'},
		{"json", 0, 0, 'j'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	struct option lo[CLI_LONGOPTS_MAX];   /* the shared options, then own */
	cli_longopts(own, lo);
	int ac = c.args.argc, opt, li;
	char **av = c.args.argv;
	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((opt = getopt_long(ac, av, "h", lo, &li)) != -1) {
		switch (opt) {
		case CLI_OPT:
			if (cli_job_opt(&c, lo[li].name, optarg) < 0)
				return cli_refused(&c);
			break;
		case 's':
			if (!app_opt_u64(c.prog, "shard", optarg, 0, GW_COLL_SHARDS_MAX - 1,
					 &shard))
				return 2;
			have_shard = true;
			break;
		case 'p':
			if (!app_opt_u64(c.prog, "ports", optarg, 1, CLI_PORTS_MAX, &ports))
				return 2;
			break;
		case 'i':
			if (!app_opt_u64(c.prog, "idle-exit-ms", optarg, 1, 86400000, &idle_ms))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			app_bad_option(c.prog, NULL, av, "h");
			return 2;
		}
	}
	if (optind < ac) {
		fprintf(stderr, "gw-aggregator: unexpected argument '%s'\n", av[optind]);
		return 2;
	}
	if (c.mpi && have_shard) {
		fprintf(stderr, "gw-aggregator: --mpi: --shard comes from mpirun\n");
		return 2;
	}
	if (!have_shard && !c.mpi) {
		fprintf(stderr, "gw-aggregator: --shard is required\n");
		return 2;
	}
	if (!c.local) {
		fprintf(stderr, "gw-aggregator: --local is required\n");
		return 2;
	}
	if (!app_eal_check(c.prog, &c.args, c.backend))
		return 2;
	/* Under mpirun nobody signals the shard: it leaves when idle. */
	if (c.mpi && !idle_ms)
		idle_ms = 3000;
	if (shard >= (c.o.shards ? c.o.shards : 1)) {
		fprintf(stderr, "gw-aggregator: --shard: %llu is not below --shards\n",
			(unsigned long long)shard);
		return 2;
	}
	/* Port 0: each dataplane would get a port of its own, and a shard
	 * is one endpoint. */
	bool any_port = c.local && c.local_ep.port == 0;
	if (any_port && ports > 1) {
		fprintf(stderr, "gw-aggregator: --local: port 0 serves one dataplane, "
			"not --ports %llu\n", (unsigned long long)ports);
		return 2;
	}
	gw_dp *dps[CLI_PORTS_MAX] = {0};
	int rc = 1;
	gw_agg *a = NULL;
	for (unsigned i = 0; i < ports; i++)
		if (cli_open_dp(&c, i, &dps[i]) < 0)
			goto out;
	if (any_port)
		gw_dp_local(dps[0], &c.local_ep);   /* what --mpi tells the workers */
	if (c.mpi) {
		gw_endpoint shards[GW_COLL_SHARDS_MAX];
		unsigned idx;
		if (cli_mpi_exchange(c.prog, 1, &c.local_ep, c.o.shards ? (unsigned)c.o.shards : 1,
				     (unsigned)c.o.workers, shards, &idx) < 0)
			goto out;
		shard = idx;
	}
	gw_coll_job job;
	if (cli_job(&c, dps[0], &job) < 0) {
		rc = 2;
		goto out;
	}
	gw_agg_config cfg = {.job = job, .shard = (uint16_t)shard};
	a = gw_agg_create(dps, (unsigned)ports, &cfg);
	if (!a) {
		fprintf(stderr, "gw-aggregator: cannot create the shard: %s\n",
			gw_error_detail());
		goto out;
	}
	struct sigaction sa = {.sa_handler = on_signal};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (any_port)
		print_endpoint(&c.local_ep, shard, json);
	fprintf(stderr, "gw-aggregator: shard %llu of %u, %u workers, dim %llu, "
		"chunk %u elements, %s -> %s, ready\n", (unsigned long long)shard,
		job.shards, job.workers, (unsigned long long)job.dim, job.chunk_elems,
		gw_codec_name(job.up_codec), gw_codec_name(job.down_codec));
	if (cli_liveness(&c, NULL, a) < 0)
		goto out;
	struct cli_stats sts = {.c = &c, .tool = "gw-aggregator", .role = "shard", .id = shard,
				.agg = a, .dps = dps, .ndp = (unsigned)ports};
	if (cli_stats_start(&sts) < 0)
		goto out;
	int r = gw_agg_serve(a, &stop, (uint32_t)idle_ms);
	if (r < 0)
		fprintf(stderr, "gw-aggregator: %s (%s)\n",
			gw_error_detail()[0] ? gw_error_detail() : gw_strerror(r), gw_error_name(r));
	cli_stats_final(&sts);
	gw_agg_stats st;
	gw_agg_faults ft;
	gw_agg_stats_get(a, &st);
	gw_agg_faults_get(a, &ft);
	gw_liveness_stats lt;
	gw_agg_liveness_get(a, &lt);
	/* What the kernel or port dropped before the shard saw it. */
	uint64_t dropped = 0;
	for (unsigned i = 0; i < ports; i++) {
		int64_t d = gw_dp_drops(dps[i]);
		dropped += d > 0 ? (uint64_t)d : 0;
	}
	print_stats(&st, &ft, &lt, shard, json, dropped);
	char note[320];
	if (ft.problems && gw_agg_problem(a, note, sizeof(note)) > 0)
		fprintf(stderr, "gw-aggregator: shard %llu: %llu problem(s), the latest: %s\n",
			(unsigned long long)shard, (unsigned long long)ft.problems, note);
	rc = r < 0;
out:
	gw_agg_free(a);
	for (unsigned i = 0; i < ports; i++)
		gw_dp_close(dps[i]);
	cli_mpi_finalize();
	return rc;
}
