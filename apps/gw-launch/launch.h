/* gw-launch: one allreduce job on this machine (main.c has its usage).
 *
 *   main.c   the command line, and the job from start to end
 *   job.c    the processes' command lines per link, shard endpoints,
 *            free ports
 *   proc.c   child processes: spawn, output relays, the supervision loop
 *            (signalfd and one ppoll: an exit cannot be missed), teardown
 *
 * The bash launcher before this one supervised through wait, traps and
 * relay processes, and twice missed a child's exit and hung after the job
 * had finished. Here every exit is reaped by waitpid(-1, WNOHANG) after a
 * SIGCHLD read from a signalfd, or at the latest at the next tick; a
 * zombie cannot be overlooked. */
#ifndef GW_LAUNCH_H
#define GW_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PROG "gw-launch"
#define MAX_WORKERS 64
#define MAX_SHARDS 16
#define MAX_PROCS (MAX_WORKERS + MAX_SHARDS)
#define MAX_ARGS 512

enum link { LINK_UDP, LINK_MEMIF, LINK_NETNS, LINK_RDMA };

/* The command line, checked. */
struct opts {
	enum link link;
	unsigned workers, shards, restart;
	bool quiet, colocate, tolerant;
	const char *cores, *logs, *rdma_ip;
	uint64_t idle_ms;        /* 0: none */
	double timeout_s;        /* 0: none */
	const char *job[MAX_ARGS];       /* job options, name value ... */
	unsigned njob;
	const char *agg_extra[MAX_ARGS]; /* --agg-args, split */
	unsigned nagg;
	char *rank_extra[MAX_WORKERS];   /* --rank-args, joined per rank */
	char *const *wargv;      /* the worker command and its options */
	int wargc;
	char worker[4096];       /* the worker, as found */
	char agg[4096];          /* gw-aggregator, beside us or in PATH */
};

/* A growable argv. */
struct argv {
	char *v[MAX_ARGS + 1];
	unsigned n;
};
void argv_add(struct argv *a, const char *s);
void argv_free(struct argv *a);
void argv_optu(struct argv *a, const char *name, unsigned v);   /* NAME V */
void argv_addf(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- job.c ---------------------------------------------------------------- */

struct job {
	const struct opts *o;
	char run[64];            /* our temp folder ("" if none): memif sockets,
				  * the logs without --logs */
	char logs[4096];
	char eps[MAX_SHARDS][64];/* each shard's endpoint ("" until known) */
	char aggs[MAX_SHARDS * 64];
	pid_t self;
};
/* The co-located shards' endpoints (picked before any process starts):
 * 0, or -1 after saying why. */
int job_colocated_eps(struct job *j);
void job_shard_cmd(const struct job *j, unsigned s, struct argv *a);
void job_worker_cmd(const struct job *j, unsigned w, bool rejoin, struct argv *a);
/* What shard s printed it bound, into j->eps[s] once it did. */
void job_read_endpoint(struct job *j, unsigned s);
bool job_shard_ready(const struct job *j, unsigned s);
/* Where each waiting shard stands: "shard 0 not ready, shard 1 printed no
 * endpoint". */
void job_not_up(const struct job *j, const bool *waiting, char *buf, size_t len);

/* ---- proc.c --------------------------------------------------------------- */

enum role { ROLE_SHARD, ROLE_WORKER };

struct proc {
	pid_t pid;               /* 0: not running */
	enum role role;
	unsigned id;
	bool live;
	int status;              /* wait status, once ended */
	int fd[2];               /* relays of stdout, stderr (-1: none) */
	int log[2];              /* the log files they copy to */
	char part[2][4096];      /* a line not yet ended */
	size_t partn[2];
};

struct sup {
	struct proc p[MAX_PROCS + MAX_WORKERS * 4];   /* restarts take new slots */
	unsigned n;
	int sigfd;
	bool quiet;
	uint64_t deadline_ns;    /* --timeout (0: none) */
};

/* Blocks SIGINT, SIGTERM, SIGCHLD into a signalfd; SIGPIPE ignored. */
int sup_init(struct sup *s, bool quiet, double timeout_s);
/* Starts a; its stdout and stderr go to the files out and err (appended
 * with append), and, for a worker without --quiet, to the console too,
 * each line prefixed "[R] ". The process, or NULL after saying why. */
struct proc *sup_spawn(struct sup *s, enum role role, unsigned id, const struct argv *a,
		       const char *out, const char *err, bool append);
/* Waits up to ms for something to happen: relays copied, exits reaped.
 * The ended process (its status in ->status; one a call), or NULL; *sig
 * is set when SIGINT or SIGTERM came, *late when the deadline passed. */
/* CLOCK_MONOTONIC in ns. */
uint64_t now_ns(void);
struct proc *sup_wait(struct sup *s, unsigned ms, bool *sig, bool *late);
/* Signals every live process, and SIGKILLs (naming them) those still
 * there after grace_ms; reaps them all and drains the relays. */
void sup_stop_all(struct sup *s, int sig, unsigned grace_ms);
/* "worker 2", "shard 0". */
const char *proc_name(const struct proc *p, char *buf, size_t len);
/* "exit 1", "killed by SIGKILL". */
const char *proc_how(int status, char *buf, size_t len);
/* Whether the status is a clean exit. */
bool proc_ok(int status);

#endif
