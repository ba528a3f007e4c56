/* The job options, described once: gw_member_set (member.c) and the
 * collective CLIs (apps/coll/coll_cli.c) take the same names, bounds,
 * defaults and messages from one table, so the two cannot drift apart.
 * Each entry says where it applies, how its value is checked, which field
 * of struct coll_opt_vals it sets, and the CLIs' help line. Private to the
 * collective layer and the apps (which see collective/'s private headers);
 * not part of libgradwire's API. */
#ifndef GW_COLL_OPTS_H
#define GW_COLL_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include <gw/collective.h>
#include <gw/dataplane.h>

/* A value not given: the library's (or the backend's) own default. */
#define COLL_OPT_UNSET UINT64_MAX

/* Where an option applies. */
enum {
	COLL_OPT_MEMBER = 1u,    /* gw_member_set */
	COLL_OPT_CLI = 2u,       /* the collective CLIs' --name */
	COLL_OPT_BOTH = 3u,
};

enum coll_opt_kind {
	COLL_OPT_NUM,    /* a whole number in [lo, hi] (with least: 0, or at least least) */
	COLL_OPT_REAL,   /* a number in [lo, hi) */
	COLL_OPT_WORD,   /* one of words, "a|b|c": stored as its index */
	COLL_OPT_OWN,    /* text the member and the CLIs each parse (codec
			  * strings, endpoints, keys, layouts: their forms differ) */
};

/* What the table's options set. Every field starts at its entry's
 * default (coll_opts_init). */
struct coll_opt_vals {
	/* the job: every process gives the same */
	uint64_t job, dim, workers, shards, window, chunk_elems, deadline_us;
	uint64_t mode;                      /* gw_coll_mode */
	uint64_t liveness_ms, startup_ms;   /* COLL_OPT_UNSET: the library's */
	uint64_t rto_us, timeout_ms;        /* member (the CLIs have their own) */
	uint64_t topk, candidates;          /* Sketched-SGD */
	double sketch_momentum;
	uint64_t min_elems;                 /* dense */
	double down_momentum;
	/* this process */
	uint64_t stats_ms, mtu, pool;       /* CLIs */
	uint64_t wait;                      /* gw_dp_wait_policy */
	uint64_t gso;                       /* 0, 1; COLL_OPT_UNSET: the backend's */
};

struct coll_opt {
	const char *name;       /* the member's option, the CLIs' --name */
	unsigned where;         /* COLL_OPT_MEMBER | COLL_OPT_CLI */
	enum coll_opt_kind kind;
	uint64_t lo, hi;        /* NUM, REAL */
	uint64_t least;         /* NUM: 0, or the least value but 0 (0 turns it off) */
	const char *words;      /* WORD: "spin|sleep" */
	uint64_t def;           /* the field's first value (NUM, WORD; REAL: as a double) */
	size_t off;             /* the field of struct coll_opt_vals (not OWN) */
	/* The CLIs' usage: the heading of the group it starts (or NULL), the
	 * value's name (NULL: a switch without one), and the help text, whose
	 * lines after the first are indented, in which {range} stands for
	 * "lo..hi". An entry without help is not listed (--up-params: --up's
	 * text tells of it; the member's own options). */
	const char *group, *arg, *help;
};

/* Every option, in the CLIs' usage order; ends with a NULL name. */
extern const struct coll_opt coll_opt_table[];

/* The entry of name that applies where (COLL_OPT_MEMBER or _CLI), or NULL. */
/* The downlink codec a job gets when it names none: raw, but an hq
 * uplink comes down as hq, the shards' integer sum (the CLIs show it, and
 * gw_coll_job's 0 means it). */
int coll_down_default(int up_codec);
const struct coll_opt *coll_opt_find(const char *name, unsigned where);

/* Every field at its entry's default. */
void coll_opts_init(struct coll_opt_vals *v);

/* Checks text against o's kind and bounds and stores it in v (not OWN):
 * GW_OK, or GW_EINVAL with the detail "NAME: 'TEXT' is not ... [lo, hi]". */
int coll_opt_set(const struct coll_opt *o, const char *text, struct coll_opt_vals *v);

/* The names that apply where, ", "-separated, into buf (truncated to len):
 * what an unknown option's message lists. */
void coll_opt_names(unsigned where, char *buf, size_t len);

/* The codec string a user's uplink names: "sketched-sgd" is Sketched-SGD's
 * (countsketch, whose engine runs its two rounds); anything else as it is. */
const char *coll_opts_up_spec(const char *v);

/* backend: one built into this library, or GW_EINVAL naming those that are. */
int coll_opt_backend(const char *name);

/* The engines' own fields of a job, as the options give them; a job's
 * engine_params point at one of them (coll_opts_job). */
struct coll_engine_params {
	gw_sketched_job sk;
	gw_dense_job dense;       /* its tensor layout: the caller's */
};

/* The job fields the options give (job, chunk_elems, window, mode,
 * deadline_us); the engine that runs job->up_codec (which the caller has
 * set), with p's fields from the options and job->engine_params pointing
 * at that engine's. The caller fills in the rest. */
void coll_opts_job(const struct coll_opt_vals *v, struct coll_engine_params *p,
		   gw_coll_job *job);

/* The momentum an optimizer applies itself after job's round, of its
 * momentum m: 0 where the engine keeps it (Sketched-SGD on the workers,
 * before the sketch, which p then holds; a dense job with down-momentum on
 * the shards), m otherwise. */
double coll_opts_optimizer_momentum(struct coll_engine_params *p, const gw_coll_job *job,
				    double m);

/* liveness-ms and startup-ms, where given, on comm and agg (either may be
 * NULL): GW_OK, or the library's code with a detail that names the option. */
int coll_opts_liveness(const struct coll_opt_vals *v, gw_comm *comm, gw_agg *agg);

/* gso is the udp backend's: GW_EINVAL naming it where given for another
 * backend, else GW_OK. */
int coll_opts_dp_check(const struct coll_opt_vals *v, const char *backend);

/* gw_dp_open with this process's options: gso as the udp backend's option
 * (after cfg->opts, so it wins), then the wait policy. gw_dp_open's code
 * and detail, or coll_opts_dp_check's. */
int coll_opts_dp_open(const struct coll_opt_vals *v, const gw_dp_config *cfg, gw_dp **out);

#endif /* GW_COLL_OPTS_H */
