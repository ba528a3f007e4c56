/* Command-line pieces shared by gw-aggregator and gw-allreduce: the job
 * options every process of a job must give alike, and dataplane opening. */
#ifndef GW_COLL_CLI_H
#define GW_COLL_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include <gw/collective.h>

#include "app.h"

#define CLI_AGGS_MAX 64
#define CLI_PORTS_MAX 64

struct cli {
	const char *prog;
	/* job */
	uint64_t job_id, dim, chunk_elems, workers, shards, window, deadline_us;
	uint64_t topk, candidates;    /* Sketched-SGD (--up countsketch) */
	double momentum;
	/* The engine fields of the job cli_job() fills: the job points here
	 * (a caller may change them before it makes a communicator). */
	gw_sketched_job sk;
	gw_dense_job dense;       /* --layout (sizes kept for the process), --min-elems,
				   * --down-momentum */
	const char *up, *down, *up_params, *down_params, *mode, *key_file;
	char up_name[32], down_name[32];   /* the name of a codec string NAME:K=V,... */
	uint8_t key[GW_KEY_LEN];
	bool keyed;
	/* dataplane */
	const char *backend, *local, *dp_opts;
	uint64_t mtu, pool, ports;
	bool mpi;                 /* endpoints come from mpirun (coll_mpi.h) */
	uint64_t liveness_ms;     /* --liveness-ms, where liveness_set */
	bool liveness_set;
	uint64_t startup_ms;      /* --startup-ms, where startup_set */
	bool startup_set;
	uint64_t stats_ms;        /* --stats-interval (0: none) */
	gw_endpoint local_ep;     /* --local, "auto" resolved */
	struct app_args args;     /* EAL options -- app options (app_split_args) */
};

/* Handles a shared long option; returns 1 if taken, 0 if not ours, -1 on a
 * bad value (after printing a message naming the option). */
int cli_job_opt(struct cli *c, const char *name, const char *val);

/* getopt_long entries of the shared options (all take an argument), to
 * put in front of an app's own; their val is CLI_OPT. */
#define CLI_OPT 1000
#define CLI_LONGOPTS \
	{"job", 1, 0, CLI_OPT}, {"dim", 1, 0, CLI_OPT}, \
	{"chunk-elems", 1, 0, CLI_OPT}, {"workers", 1, 0, CLI_OPT}, \
	{"shards", 1, 0, CLI_OPT}, {"window", 1, 0, CLI_OPT}, \
	{"deadline-us", 1, 0, CLI_OPT}, {"up", 1, 0, CLI_OPT}, \
	{"down", 1, 0, CLI_OPT}, {"up-params", 1, 0, CLI_OPT}, \
	{"down-params", 1, 0, CLI_OPT}, {"mode", 1, 0, CLI_OPT}, \
	{"key-file", 1, 0, CLI_OPT}, {"backend", 1, 0, CLI_OPT}, \
	{"local", 1, 0, CLI_OPT}, {"opts", 1, 0, CLI_OPT}, \
	{"mtu", 1, 0, CLI_OPT}, {"pool", 1, 0, CLI_OPT}, {"mpi", 0, 0, CLI_OPT}, \
	{"topk", 1, 0, CLI_OPT}, {"candidates", 1, 0, CLI_OPT}, \
	{"sketch-momentum", 1, 0, CLI_OPT}, {"liveness-ms", 1, 0, CLI_OPT}, \
	{"startup-ms", 1, 0, CLI_OPT}, {"stats-interval", 1, 0, CLI_OPT}, \
	{"layout", 1, 0, CLI_OPT}, {"min-elems", 1, 0, CLI_OPT}, \
	{"down-momentum", 1, 0, CLI_OPT}

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
