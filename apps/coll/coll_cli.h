/* Command-line pieces shared by gw-aggregator and gw-allreduce: the job
 * options every process of a job must give alike, and dataplane opening. */
#ifndef GW_COLL_CLI_H
#define GW_COLL_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include <gw/collective.h>

#include "app.h"
#include "coll_opts.h"   /* the options' table, shared with gw_member_set */

#define CLI_AGGS_MAX 64
#define CLI_PORTS_MAX 64

struct cli {
	const char *prog;
	/* The shared options the table checks and stores (coll_opts.h):
	 * job (job, dim, workers, shards, window, chunk_elems, deadline_us,
	 * mode, liveness_ms, startup_ms), Sketched-SGD's and dense jobs'
	 * fields, and this process's (stats_ms, mtu, pool, wait, gso). */
	struct coll_opt_vals o;
	/* The engine fields of the job cli_job() fills: the job points here
	 * (a caller may change them before it makes a communicator). */
	struct coll_engine_params ep;   /* dense's --layout: sizes kept for the process */
	const char *up, *down, *up_params, *down_params, *key_file;
	char up_name[32], down_name[32];   /* the name of a codec string NAME:K=V,... */
	uint8_t key[GW_KEY_LEN];
	bool keyed;
	/* dataplane */
	const char *backend, *local, *dp_opts;
	bool mpi;                 /* endpoints come from mpirun (coll_mpi.h) */
	gw_endpoint local_ep;     /* --local, "auto" resolved */
	struct app_args args;     /* EAL options -- app options (app_split_args) */
};

/* A command line with every shared option at its default. */
void cli_init(struct cli *c, const char *prog);

/* Handles a shared long option; returns 1 if taken, 0 if not ours, -1 on a
 * bad value (after printing a message naming the option). */
int cli_job_opt(struct cli *c, const char *name, const char *val);

/* The exit code of a refused command line (docs/cli.md): APP_EXIT_MISSING
 * when the --backend given is one this build lacks, else APP_EXIT_USAGE. */
int cli_refused(const struct cli *c);

/* getopt_long's table: the shared options (val CLI_OPT), then own's up to
 * its {0} end, then the end; lo has room for CLI_LONGOPTS_MAX. */
#define CLI_OPT 1000
#define CLI_LONGOPTS_MAX 128
void cli_longopts(const struct option *own, struct option *lo);

/* --liveness-ms and --startup-ms, where given, for a communicator and
 * for a shard (either may be NULL): 0, or -1 after printing the library's
 * message. */
int cli_liveness(const struct cli *c, gw_comm *comm, gw_agg *agg);

/* --stats-interval: one JSON line of counters on stdout every stats_ms
 * while the process runs, from the thread that serves or calls (the
 * library's report hook), and from the caller between calls
 * (cli_stats_tick). s lives as long as the communicator or shard. */
struct cli_stats {
	const struct cli *c;
	const char *tool, *role;  /* "gw-allreduce", "worker" | "shard" */
	uint64_t id;              /* rank or shard */
	gw_comm *comm;
	gw_agg *agg;
	gw_dp *const *dps;
	unsigned ndp;
	uint64_t t0_ns, next_ns, lines, every_ms;
};
int cli_stats_start(struct cli_stats *s);
void cli_stats_tick(struct cli_stats *s);
/* The last line, at exit (with --stats-interval): the counters as they end. */
void cli_stats_final(struct cli_stats *s);

/* The shared options' help text. */
void cli_job_usage(FILE *f);

/* Fills job from the options (chunk_elems: computed from the dataplane's
 * payload when not given). 0, or -1 after printing why. */
int cli_job(struct cli *c, gw_dp *dp, gw_coll_job *job);

/* Checks the job the options describe (workers and dim set), with the
 * smallest chunk when none is given: a launcher calls it so that a bad
 * job is refused before any process starts. 0, or -1 after printing why. */
int cli_job_check(struct cli *c);

/* Opens dataplane i (DPDK: port=i; UDP: the --local address, port + i,
 * or a port picked free for port 0).
 * 0 or -1 after printing why. */
int cli_open_dp(struct cli *c, unsigned i, gw_dp **dp);

/* --agg: "IP:PORT[@MAC],..." into ep[0..GW_COLL_SHARDS_MAX); 0 and *n, or
 * -1 after naming the bad entry. */
int cli_parse_aggs(const char *prog, const char *list, gw_endpoint *ep, unsigned *n);

#endif
