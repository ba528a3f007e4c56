/* The job options' one table (coll_opts.h): gw_member_set and the
 * collective CLIs check, store and describe their options from it. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "coll_opts.h"

#define V(f) offsetof(struct coll_opt_vals, f)
#define NUM(lo, hi, def, f) COLL_OPT_NUM, lo, hi, 0, NULL, def, V(f)
#define NUM_OFF(lo, hi, least, f) COLL_OPT_NUM, lo, hi, least, NULL, COLL_OPT_UNSET, V(f)
#define REAL(lo, hi, f) COLL_OPT_REAL, lo, hi, 0, NULL, 0, V(f)
#define WORD(words, def, f) COLL_OPT_WORD, 0, 0, 0, words, def, V(f)
#define OWN COLL_OPT_OWN, 0, 0, 0, NULL, 0, 0
#define M COLL_OPT_MEMBER
#define C COLL_OPT_CLI
#define B COLL_OPT_BOTH

/* mode's words are gw_coll_mode's values in order, wait's
 * gw_dp_wait_policy's, gso's the backend option's. */
_Static_assert(GW_COLL_RELIABLE == 0 && GW_COLL_LOSS_TOLERANT == 1, "mode's words");
_Static_assert(GW_DP_WAIT_SPIN == 0 && GW_DP_WAIT_SLEEP == 1, "wait's words");
const struct coll_opt coll_opt_table[] = {
	{"workers", C, NUM(1, GW_COLL_WORKERS_MAX, 0, workers),
	 "job options (every process of a job gives the same):", "W", "workers ({range})"},
	{"shards", C, NUM(1, GW_COLL_SHARDS_MAX, 0, shards), NULL, "S",
	 "aggregator shards ({range}, default 1)"},
	{"dim", C, NUM(1, 1ull << 34, 0, dim), NULL, "N", "tensor elements"},
	{"up", B, OWN, NULL, "CODEC", "uplink codec (default raw); --up-params K=V,... or\n"
	 "a codec string CODEC:K=V,... (deepreduce:index=bloom,\npolicy=p2,fpr=0.001,value=poly)"},
	{"up-params", C, OWN, NULL, "K=V,...", NULL},
	{"down", B, OWN, NULL, "CODEC", "downlink codec (default raw; hq's is hq); --down-params K=V,..."},
	{"down-params", C, OWN, NULL, "K=V,...", NULL},
	{"mode", B, WORD("reliable|loss-tolerant", GW_COLL_RELIABLE, mode), NULL, "M",
	 "reliable (default) or loss-tolerant"},
	{"deadline-us", B, NUM(1, 60000000, 0, deadline_us), NULL, "US",
	 "loss-tolerant: a chunk finishes without missing\n"
	 "workers this long after its first contribution"},
	{"window", B, NUM(1, GW_COLL_WINDOW_MAX, 0, window), NULL, "N",
	 "slots per shard (default 64)"},
	{"chunk-elems", B, NUM(40, 1u << 20, 0, chunk_elems), NULL, "K",
	 "elements per chunk (default: the most one packet holds)"},
	/* 1: the CLIs' shards serve job 1 unless told otherwise. */
	{"job", B, NUM(0, UINT32_MAX, 1, job), NULL, "J", "job id (default 1)"},
	{"key-file", B, OWN, NULL, "F", "job key, 64 hex digits: every packet is MACed"},
	{"stats-interval", C, NUM(10, 3600000, 0, stats_ms), NULL, "MS",
	 "one JSON line of counters on stdout every MS while\n"
	 "running (\"kind\":\"stats\"): dataplane, protocol,\nfaults"},
	/* 0 turns liveness off, but a millisecond interval is no interval:
	 * the library refuses it, and so does the table, at once. */
	{"liveness-ms", B, NUM_OFF(0, 3600000, 10, liveness_ms), NULL, "MS",
	 "a peer silent at least this long, and longer than\n"
	 "its own history of gaps makes likely, is suspected\n"
	 "and probed; silent MS more, it is dead (default\n"
	 "1000, or GW_LIVENESS_MS; 0: off): reliable jobs\n"
	 "fail naming it, loss-tolerant jobs go on without a\n"
	 "worker (evicted when suspected, back when heard)"},
	{"startup-ms", B, NUM_OFF(0, 86400000, 10, startup_ms), NULL, "MS",
	 "a peer never heard is not yet up, and is waited\n"
	 "for this long from the job's start (default 30000,\n"
	 "or GW_STARTUP_MS; 0: the call timeout only)"},
	{"topk", B, NUM(0, UINT32_MAX, 0, topk),
	 "Sketched-SGD (--up countsketch --up-params rows=R,cols=C,seed=S):", "K",
	 "coordinates updated per step (default dim/100)"},
	{"candidates", B, NUM(0, UINT32_MAX, 0, candidates), NULL, "M",
	 "P*K queried in the second round (default 4*K)"},
	{"sketch-momentum", B, REAL(0, 1, sketch_momentum), NULL, "R",
	 "worker momentum in [0, 1) (default 0)"},
	{"layout", B, OWN, "dense jobs, as 3LC places its contexts (docs/3lc-paper.md):",
	 "N,N,...", "the tensor is tensors of these sizes (summing to\n"
	 "--dim), each with its own compression context and\n"
	 "chunks; @FILE reads the sizes from FILE"},
	{"min-elems", B, NUM(0, UINT32_MAX, 0, min_elems), NULL, "N",
	 "tensors of fewer elements go raw (default 0)"},
	{"down-momentum", B, REAL(0, 1, down_momentum), NULL, "MU",
	 "the shards keep momentum MU in [0, 1) and send the\n"
	 "state change; workers apply it without momentum"},
	{"backend", B, OWN, "dataplane options:", "NAME",
	 "udp (default), dpdk or rdma, as built; EAL options go\nbefore '--'"},
	{"local", B, OWN, NULL, "IP:PORT", "address to receive on; auto:PORT takes the IPv4\n"
	 "address of the first interface that is up and not\n"
	 "loopback (one per namespace, or per host)"},
	{"mpi", C, OWN, NULL, NULL, "started by mpirun (shards first, then workers, as\n"
	 "MPMD): ranks and shard addresses come from MPI"},
	{"mtu", C, NUM(256, 65535, 0, mtu), NULL, "BYTES",
	 "IP MTU of the packets (default: the device's)"},
	{"opts", B, OWN, NULL, "K=V,...", "backend options (impair_loss=P, ...)"},
	{"pool", C, NUM(64, 1u << 22, 0, pool), NULL, "N",
	 "packet buffers (default: what the window needs)"},
	{"wait", B, WORD("spin|sleep", GW_DP_WAIT_SPIN, wait), NULL, "spin|sleep",
	 "this process's idle waits (worker, co-located\n"
	 "shard): spin (default) polls ~20 us after recent\n"
	 "traffic before it sleeps, sleep sleeps at once:\n"
	 "the one for more polling processes than cores\n"
	 "(4 workers and 4 shards on 2 cores)"},
	{"gso", B, WORD("0|1", COLL_OPT_UNSET, gso), NULL, "0|1",
	 "udp: send runs of equal packets as one UDP GSO send\n"
	 "(default 1 where the kernel has it); 0 for a peer\n"
	 "that reads the device below the IP stack"},
	/* The member's own: what the CLIs take in their own forms, or not. */
	{"shards", M, OWN, NULL, NULL, NULL},   /* colocated, or the endpoints */
	{"eal", M, OWN, NULL, NULL, NULL},
	{"shard-eal", M, OWN, NULL, NULL, NULL},
	{"key", M, OWN, NULL, NULL, NULL},
	{"rto-us", M, NUM(1, 10000000, 0, rto_us), NULL, NULL, NULL},
	{"timeout-ms", M, NUM(1, 3600000, 0, timeout_ms), NULL, NULL, NULL},
	{"gpu", M, OWN, NULL, NULL, NULL},
	{NULL, 0, OWN, NULL, NULL, NULL},
};

const struct coll_opt *coll_opt_find(const char *name, unsigned where)
{
	for (const struct coll_opt *o = coll_opt_table; o->name; o++)
		if ((o->where & where) && !strcmp(o->name, name))
			return o;
	return NULL;
}

void coll_opts_init(struct coll_opt_vals *v)
{
	memset(v, 0, sizeof(*v));
	for (const struct coll_opt *o = coll_opt_table; o->name; o++) {
		if (o->kind == COLL_OPT_REAL)
			*(double *)((char *)v + o->off) = (double)o->def;
		else if (o->kind != COLL_OPT_OWN)
			*(uint64_t *)((char *)v + o->off) = o->def;
	}
}

/* A whole number, all of text: digits in base 10, or after 0x in 16 (no
 * space, sign or octal, which strtoull would take). */
static int parse_u64(const char *s, uint64_t *out)
{
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	if (!(hex ? isxdigit((unsigned char)*d) : isdigit((unsigned char)*d)))
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(d, &end, hex ? 16 : 10);
	if (*end || errno)
		return -1;
	*out = x;
	return 0;
}

/* WORD: the index of text among words, or -1. */
static int word_of(const char *words, const char *text)
{
	size_t n = strlen(text);
	int i = 0;
	for (const char *w = words;; i++) {
		size_t len = strcspn(w, "|");
		if (len == n && !strncmp(w, text, n))
			return i;
		if (!w[len])
			return -1;
		w += len + 1;
	}
}

/* "a, b or c" of "a|b|c". */
static void words_text(const char *words, char *buf, size_t len)
{
	size_t k = 0, all = strlen(words);
	buf[0] = '\0';
	for (const char *w = words; *w && k < len;) {
		size_t n = strcspn(w, "|");
		const char *sep = w == words ? "" : w + n == words + all ? " or " : ", ";
		k += (size_t)snprintf(buf + k, len - k, "%s%.*s", sep, (int)n, w);
		w += n + (w[n] == '|');
	}
}

int coll_opt_set(const struct coll_opt *o, const char *text, struct coll_opt_vals *v)
{
	void *field = (char *)v + o->off;
	switch (o->kind) {
	case COLL_OPT_NUM: {
		uint64_t x;
		if (parse_u64(text, &x) < 0 || x < o->lo || x > o->hi)
			return GW_ERRF(GW_EINVAL, "%s: '%s' is not a whole number in [%llu, %llu]",
				       o->name, text, (unsigned long long)o->lo,
				       (unsigned long long)o->hi);
		if (x && x < o->least)
			return GW_ERRF(GW_EINVAL, "%s: %llu is below %llu (0 turns it off)", o->name,
				       (unsigned long long)x, (unsigned long long)o->least);
		*(uint64_t *)field = x;
		return GW_OK;
	}
	case COLL_OPT_REAL: {
		char *end;
		double x = strtod(text, &end);
		/* NaN fails both comparisons. */
		if (end == text || *end || isspace((unsigned char)*text) ||
		    !(x >= (double)o->lo && x < (double)o->hi))
			return GW_ERRF(GW_EINVAL, "%s: '%s' is not a number in [%llu, %llu)",
				       o->name, text, (unsigned long long)o->lo,
				       (unsigned long long)o->hi);
		*(double *)field = x;
		return GW_OK;
	}
	case COLL_OPT_WORD: {
		int i = word_of(o->words, text);
		if (i < 0) {
			char w[128];
			words_text(o->words, w, sizeof(w));
			return GW_ERRF(GW_EINVAL, "%s: '%s' is not %s", o->name, text, w);
		}
		*(uint64_t *)field = (uint64_t)i;
		return GW_OK;
	}
	default:
		return GW_ERRF(GW_EINVAL, "%s: not one of the table's values", o->name);
	}
}

void coll_opt_names(unsigned where, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = '\0';
	for (const struct coll_opt *o = coll_opt_table; o->name && k < len; o++)
		if (o->where & where)
			k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", o->name);
}

const char *coll_opts_up_spec(const char *v)
{
	return v && !strcmp(v, "sketched-sgd") ? "countsketch" : v;
}

int coll_opt_backend(const char *name)
{
	for (const char *const *b = gw_dp_backends(); *b; b++)
		if (!strcmp(*b, name))
			return GW_OK;
	char built[64];
	gw_dp_backends_text(built, sizeof(built));
	return GW_ERRF(GW_EINVAL, "backend: '%s' is not a backend built here (%s)", name, built);
}

void coll_opts_job(const struct coll_opt_vals *v, struct coll_engine_params *p,
		   gw_coll_job *job)
{
	gw_sketched_job *sk = &p->sk;
	gw_dense_job *dense = &p->dense;
	sk->topk = (uint32_t)v->topk;
	sk->candidates = (uint32_t)v->candidates;
	sk->momentum = (float)v->sketch_momentum;
	dense->min_elems = (uint32_t)v->min_elems;
	dense->down_momentum = (float)v->down_momentum;
	gw_coll_engine engine = gw_coll_engine_for(job->up_codec);
	job->job = (uint32_t)v->job;
	job->chunk_elems = (uint32_t)v->chunk_elems;
	job->window = (uint32_t)v->window;
	job->mode = (gw_coll_mode)v->mode;
	job->deadline_us = (uint32_t)v->deadline_us;
	job->engine = engine;
	job->engine_params = engine == GW_COLL_SKETCHED ? (const void *)sk : dense;
}

double coll_opts_optimizer_momentum(struct coll_engine_params *p, const gw_coll_job *job,
				    double m)
{
	if (job->engine == GW_COLL_SKETCHED) {
		p->sk.momentum = (float)m;   /* momentum correction, zeroed where applied */
		return 0;
	}
	return p->dense.down_momentum > 0 ? 0 : m;   /* the shards send the state change */
}

int coll_opts_liveness(const struct coll_opt_vals *v, gw_comm *comm, gw_agg *agg)
{
	int rc = GW_OK;
	const char *name = "liveness-ms";
	if (v->liveness_ms != COLL_OPT_UNSET) {
		uint32_t ms = (uint32_t)v->liveness_ms;
		if (comm)
			rc = gw_comm_set_liveness(comm, ms);
		if (rc == GW_OK && agg)
			rc = gw_agg_set_liveness(agg, ms);
	}
	if (rc == GW_OK && v->startup_ms != COLL_OPT_UNSET) {
		uint32_t ms = (uint32_t)v->startup_ms;
		name = "startup-ms";
		if (comm)
			rc = gw_comm_set_startup(comm, ms);
		if (rc == GW_OK && agg)
			rc = gw_agg_set_startup(agg, ms);
	}
	if (rc < 0) {
		char why[256];
		snprintf(why, sizeof(why), "%s", gw_error_detail());
		return gw__detail(rc, "%s: %s", name, why);
	}
	return GW_OK;
}

int coll_opts_dp_check(const struct coll_opt_vals *v, const char *backend)
{
	if (v->gso != COLL_OPT_UNSET && strcmp(backend, "udp"))
		return GW_ERRF(GW_EINVAL, "gso: only the udp backend takes it (UDP GSO), not "
			       "%s: leave gso out", backend);
	return GW_OK;
}

int coll_opts_dp_open(const struct coll_opt_vals *v, const gw_dp_config *cfg, gw_dp **out)
{
	int rc = coll_opts_dp_check(v, cfg->backend ? cfg->backend : "udp");
	if (rc < 0)
		return rc;
	gw_dp_config c = *cfg;
	char *opts = NULL;
	if (v->gso != COLL_OPT_UNSET) {
		const char *given = cfg->opts ? cfg->opts : "";
		size_t n = strlen(given) + sizeof(",gso=0");
		if (!(opts = malloc(n)))
			return GW_ERRF(GW_ENOMEM, "out of memory");
		snprintf(opts, n, "%s%sgso=%u", given, *given ? "," : "", (unsigned)v->gso);
		c.opts = opts;
	}
	rc = gw_dp_open(&c, out);
	free(opts);
	if (rc == GW_OK && (rc = gw_dp_set_wait(*out, (gw_dp_wait_policy)v->wait)) < 0) {
		gw_dp_close(*out);
		*out = NULL;
	}
	return rc;
}

int coll_down_default(int up_codec)
{
	return up_codec == GW_CODEC_HQ ? GW_CODEC_HQ : GW_CODEC_RAW;
}
