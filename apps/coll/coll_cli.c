/* Shared command line of the collective apps. */
#include <ifaddrs.h>
#include <stddef.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "coll_cli.h"

void cli_init(struct cli *c, const char *prog)
{
	memset(c, 0, sizeof(*c));
	c->prog = prog;
	coll_opts_init(&c->o);
}

void cli_longopts(const struct option *own, struct option *lo)
{
	size_t n = 0;
	for (const struct coll_opt *o = coll_opt_table; o->name && n < CLI_LONGOPTS_MAX - 1; o++)
		if (o->where & COLL_OPT_CLI)
			lo[n++] = (struct option){o->name, o->arg ? 1 : 0, NULL, CLI_OPT};
	while (own && own->name && n < CLI_LONGOPTS_MAX - 1)
		lo[n++] = *own++;
	lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* The usage from the table: a line per option, its help's further lines
 * indented below, each group under its heading. */
void cli_job_usage(FILE *f)
{
	for (const struct coll_opt *o = coll_opt_table; o->name; o++) {
		if (!(o->where & COLL_OPT_CLI) || !o->help)
			continue;
		if (o->group)
			fprintf(f, "%s\n", o->group);
		char head[40];
		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-19s  ", head);
		for (const char *h = o->help; *h; h++) {
			if (!strncmp(h, "{range}", 7)) {
				fprintf(f, "%llu..%llu", (unsigned long long)o->lo,
					(unsigned long long)o->hi);
				h += 6;
			} else {
				fputc(*h, f);
				if (*h == '\n')
					fprintf(f, "%23s", "");
			}
		}
		fputc('\n', f);
	}
}

/* auto:PORT -> the first up, non-loopback IPv4 address. */
static int local_auto(const char *v, gw_endpoint *ep)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "0.0.0.0:%s", v + 5);
	if (gw_endpoint_parse(buf, ep) < 0)
		return -1;
	struct ifaddrs *ifs, *i;
	if (getifaddrs(&ifs) < 0)
		return -1;
	for (i = ifs; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
		    (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK))
			break;
	if (i)
		ep->ip = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
	freeifaddrs(ifs);
	return i ? 0 : -1;
}

int cli_liveness(const struct cli *c, gw_comm *comm, gw_agg *agg)
{
	if (coll_opts_liveness(&c->o, comm, agg) < 0) {
		fprintf(stderr, "%s: --%s\n", c->prog, gw_error_detail());
		return -1;
	}
	return 0;
}

#define STATS_MAX 64

struct kv {
	const char *k[STATS_MAX];
	uint64_t v[STATS_MAX];
	unsigned n;
};

static void kv(struct kv *t, const char *k, uint64_t v)
{
	if (t->n < STATS_MAX) {
		t->k[t->n] = k;
		t->v[t->n++] = v;
	}
}

/* The kernel paths the dataplanes take (gw_dp_paths_get), where they say:
 * how many use each (path_mmsg, path_gso, path_gro) and had one refused
 * by the kernel (paths_refused), and the syscalls and coalesced packets
 * that show what the paths save. Absent for dataplanes without such paths
 * (DPDK, RDMA). */
static void paths_kv(struct kv *t, const struct cli_stats *s)
{
	gw_dp_paths sum = {0};
	uint64_t mmsg = 0, gso = 0, gro = 0, refused = 0, have = 0;
	for (unsigned i = 0; i < s->ndp; i++) {
		gw_dp_paths x;
		if (gw_dp_paths_get(s->dps[i], &x) != GW_OK)
			continue;
		have++;
		mmsg += !!(x.on & GW_DP_PATH_MMSG), gso += !!(x.on & GW_DP_PATH_GSO);
		gro += !!(x.on & GW_DP_PATH_GRO), refused += !!x.refused;
		sum.tx_calls += x.tx_calls, sum.rx_calls += x.rx_calls;
		sum.tx_gso_pkts += x.tx_gso_pkts, sum.rx_gro_pkts += x.rx_gro_pkts;
	}
	if (!have)
		return;
	kv(t, "path_mmsg", mmsg), kv(t, "path_gso", gso), kv(t, "path_gro", gro);
	kv(t, "paths_refused", refused);
	kv(t, "tx_calls", sum.tx_calls), kv(t, "rx_calls", sum.rx_calls);
	kv(t, "tx_gso_pkts", sum.tx_gso_pkts), kv(t, "rx_gro_pkts", sum.rx_gro_pkts);
}

/* One report: the counters as one JSON line (with --stats-interval) and
 * published to the dataplanes that keep them (DPDK's telemetry). */
static void stats_line(void *arg)
{
	struct cli_stats *s = arg;
	uint64_t now = app_now_ns();
	s->next_ns = now + 1000000ull * s->every_ms;
	gw_dp_stats d = {0};
	for (unsigned i = 0; i < s->ndp; i++) {
		gw_dp_stats x;
		gw_dp_stats_get(s->dps[i], &x);
		d.rx_pkts += x.rx_pkts, d.rx_bytes += x.rx_bytes, d.tx_pkts += x.tx_pkts;
		d.tx_bytes += x.tx_bytes, d.rx_bad += x.rx_bad, d.tx_full += x.tx_full;
		d.impair_lost += x.impair_lost, d.impair_duplicated += x.impair_duplicated;
		d.impair_corrupted += x.impair_corrupted;
	}
	uint64_t dropped = 0;
	for (unsigned i = 0; i < s->ndp; i++) {
		int64_t x = gw_dp_drops(s->dps[i]);
		dropped += x > 0 ? (uint64_t)x : 0;
	}
	struct kv t = {.n = 0};
	kv(&t, "rx_pkts", d.rx_pkts), kv(&t, "rx_bytes", d.rx_bytes);
	kv(&t, "rx_dropped", dropped);
	kv(&t, "tx_pkts", d.tx_pkts), kv(&t, "tx_bytes", d.tx_bytes);
	kv(&t, "rx_bad", d.rx_bad), kv(&t, "tx_full", d.tx_full);
	kv(&t, "impair_lost", d.impair_lost), kv(&t, "impair_duplicated", d.impair_duplicated);
	kv(&t, "impair_corrupted", d.impair_corrupted);
	paths_kv(&t, s);
	if (s->agg) {
		gw_agg_stats a;
		gw_agg_faults f;
		gw_agg_stats_get(s->agg, &a);
		gw_agg_faults_get(s->agg, &f);
		kv(&t, "ups", a.ups), kv(&t, "results_sent", a.results_sent);
		kv(&t, "results_resent", a.results_resent), kv(&t, "chunks_done", a.chunks_done);
		kv(&t, "chunks_short", a.chunks_short), kv(&t, "duplicates", a.duplicates);
		kv(&t, "late", a.late), kv(&t, "stale", a.stale), kv(&t, "early", a.early);
		kv(&t, "foreign", a.foreign), kv(&t, "bad", a.bad), kv(&t, "corrupt", a.corrupt);
		kv(&t, "unauthenticated", a.unauthenticated), kv(&t, "forged", a.forged);
		kv(&t, "tx_refused", a.tx_refused), kv(&t, "ctrl_sent", f.ctrl_sent);
		kv(&t, "ctrl_received", f.ctrl_received), kv(&t, "gone", f.gone);
		kv(&t, "back", f.back), kv(&t, "gone_now", f.gone_now);
		kv(&t, "impostors", f.impostors);
	}
	gw_liveness_stats l = {0};
	if (s->agg)
		gw_agg_liveness_get(s->agg, &l);
	else if (s->comm)
		gw_comm_liveness_get(s->comm, &l);
	if (s->agg || s->comm) {
		kv(&t, "suspected", l.suspected), kv(&t, "cleared", l.cleared);
		kv(&t, "probes_sent", l.probes_sent), kv(&t, "probes_answered", l.probes_answered);
		kv(&t, "never_up", l.never_up), kv(&t, "hb_sent", l.hb_sent);
		kv(&t, "hb_late_p50_us", l.hb_late_p50_us), kv(&t, "hb_late_p99_us", l.hb_late_p99_us);
		kv(&t, "hb_late_max_us", l.hb_late_max_us), kv(&t, "gaps", l.gaps);
		kv(&t, "gap_p50_us", l.gap_p50_us), kv(&t, "gap_p99_us", l.gap_p99_us);
		kv(&t, "gap_p999_us", l.gap_p999_us), kv(&t, "gap_max_us", l.gap_max_us);
	}
	if (s->comm) {
		gw_comm_stats a;
		gw_comm_stats_get(s->comm, &a);
		kv(&t, "rounds", a.rounds), kv(&t, "chunks_sent", a.chunks_sent);
		kv(&t, "retransmits", a.retransmits), kv(&t, "results", a.results);
		kv(&t, "bytes_up", a.bytes_up), kv(&t, "bytes_down", a.bytes_down);
		kv(&t, "duplicates", a.duplicates), kv(&t, "stale", a.stale);
		kv(&t, "foreign", a.foreign), kv(&t, "bad", a.bad), kv(&t, "corrupt", a.corrupt);
		kv(&t, "unauthenticated", a.unauthenticated), kv(&t, "forged", a.forged);
		kv(&t, "short_chunks", a.short_chunks), kv(&t, "left_out", a.left_out);
	}
	for (unsigned i = 0; i < s->ndp; i++)
		gw_dp_publish(s->dps[i], t.k, t.v, t.n);   /* where kept */
	if (!s->c->o.stats_ms)
		return;
	struct app_json j;
	app_json_begin(&j, stdout, false);
	const struct app_json_member head[] = {
		APP_JS("tool", s->tool), APP_JS("kind", "stats"), APP_JS("role", s->role),
		APP_JU("id", s->id), APP_JF("t_s", 3, (double)(now - s->t0_ns) / 1e9),
	};
	app_json_members(&j, head, APP_JSON_N(head));
	struct app_json_member m[STATS_MAX];
	for (unsigned i = 0; i < t.n; i++)
		m[i] = (struct app_json_member)APP_JU(t.k[i], t.v[i]);
	app_json_members(&j, m, t.n);
	app_json_end(&j);
	fflush(stdout);
	s->lines++;
}

int cli_stats_start(struct cli_stats *s)
{
	/* Without --stats-interval, a dataplane that keeps counters for its
	 * own monitoring (DPDK's telemetry) still gets them, 4 times a second. */
	int keeps = 0;
	for (unsigned i = 0; i < s->ndp; i++)
		keeps |= gw_dp_publish(s->dps[i], NULL, NULL, 0) == GW_OK;
	s->every_ms = s->c->o.stats_ms ? s->c->o.stats_ms : keeps ? 250 : 0;
	if (!s->every_ms)
		return 0;
	s->t0_ns = app_now_ns();
	s->next_ns = s->t0_ns + 1000000ull * s->every_ms;
	int rc = GW_OK;
	if (s->comm)
		rc = gw_comm_set_report(s->comm, (uint32_t)s->every_ms, stats_line, s);
	if (rc == GW_OK && s->agg)
		rc = gw_agg_set_report(s->agg, (uint32_t)s->every_ms, stats_line, s);
	if (rc < 0) {
		fprintf(stderr, "%s: --stats-interval: %s\n", s->c->prog, gw_error_detail());
		return -1;
	}
	return 0;
}

void cli_stats_final(struct cli_stats *s)
{
	if (s->c && s->c->o.stats_ms && s->every_ms)
		stats_line(s);
}

void cli_stats_tick(struct cli_stats *s)
{
	if (s->every_ms && app_now_ns() >= s->next_ns)
		stats_line(s);
}

/* --layout: sizes separated by commas or white space, given or (@FILE)
 * read from a file; each a whole number above 0. */
static int cli_layout(struct cli *c, const char *v)
{
	const char *p = c->prog;
	char *text = NULL;
	if (v[0] == '@') {
		FILE *f = fopen(v + 1, "r");
		size_t cap = 0;
		ssize_t n = f ? getdelim(&text, &cap, '\0', f) : -1;
		if (f)
			fclose(f);
		if (n < 0) {
			fprintf(stderr, "%s: --layout: cannot read %s\n", p, v + 1);
			free(text);
			return -1;
		}
	} else if (!(text = strdup(v))) {
		return -1;
	}
	uint64_t *t = NULL;
	uint32_t n = 0, cap = 0;
	char *save = NULL;
	for (char *w = strtok_r(text, ", \t\r\n", &save); w; w = strtok_r(NULL, ", \t\r\n", &save)) {
		char *end;
		errno = 0;
		unsigned long long x = isdigit((unsigned char)*w) ? strtoull(w, &end, 10) : 0;
		if (!x || errno || *end || n == GW_COLL_TENSORS_MAX) {
			fprintf(stderr, n == GW_COLL_TENSORS_MAX ? "%s: --layout: more than %u tensors\n"
				: "%s: --layout: tensor %u: '%s' is not a whole number of elements "
				  "above 0\n", p, n == GW_COLL_TENSORS_MAX ? GW_COLL_TENSORS_MAX : n, w);
			free(t);
			free(text);
			return -1;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			uint64_t *u = realloc(t, cap * sizeof(*t));
			if (!u) {
				free(t);
				free(text);
				return -1;
			}
			t = u;
		}
		t[n++] = x;
	}
	free(text);
	if (!n) {
		fprintf(stderr, "%s: --layout: no tensor sizes in '%s'\n", p, v);
		return -1;
	}
	/* The sizes live as long as the process (the job points at them). */
	static uint64_t *sizes;
	free(sizes);
	c->ep.dense.tensor_elems = sizes = t;
	c->ep.dense.ntensors = n;
	return 0;
}

int cli_job_opt(struct cli *c, const char *name, const char *v)
{
	const char *p = c->prog;
	const struct coll_opt *o = coll_opt_find(name, COLL_OPT_CLI);
	if (!o)
		return 0;
	/* --gso is the udp backend's: refused with another backend, whichever
	 * of the two comes first, so that a launcher refuses it at once. */
	const char *backend = c->backend ? c->backend : "udp";
	if (o->kind != COLL_OPT_OWN) {   /* checked and stored as the table says */
		if (coll_opt_set(o, v, &c->o) < 0 || coll_opts_dp_check(&c->o, backend) < 0) {
			fprintf(stderr, "%s: --%s\n", p, gw_error_detail());
			return -1;
		}
		return 1;
	}
	if (!strcmp(name, "mpi")) {
		c->mpi = true;
		return 1;
	}
	if (!strcmp(name, "layout"))
		return cli_layout(c, v) < 0 ? -1 : 1;
	const char **s = !strcmp(name, "up") ? &c->up : !strcmp(name, "down") ? &c->down :
		!strcmp(name, "up-params") ? &c->up_params :
		!strcmp(name, "down-params") ? &c->down_params :
		!strcmp(name, "backend") ? &c->backend :
		!strcmp(name, "local") ? &c->local : !strcmp(name, "opts") ? &c->dp_opts :
		!strcmp(name, "key-file") ? &c->key_file : NULL;
	if (!s)
		return 0;
	if (s == &c->up)
		v = coll_opts_up_spec(v);
	if ((s == &c->up_params || s == &c->down_params) && *s) {
		fprintf(stderr, "%s: --%s: parameters given twice (in the codec string "
			"NAME:K=V,... and here)\n", p, name);
		return -1;
	}
	/* A codec string "name:k=v,..." is --up name --up-params k=v,... */
	const char *colon = (s == &c->up || s == &c->down) ? strchr(v, ':') : NULL;
	if (colon) {
		const char **ps = s == &c->up ? &c->up_params : &c->down_params;
		if (*ps || !colon[1]) {
			fprintf(stderr, "%s: --%s: '%s': %s%s%s\n", p, name, v, *ps ?
				"parameters given twice (here and in --" : "no parameters after ':'",
				*ps ? name : "", *ps ? "-params)" : "");
			return -1;
		}
		*ps = colon + 1;
		/* Checked here, so a launcher refuses it before starting anything. */
		gw_encoder *probe = gw_encoder_from_string(v);
		if (!probe) {
			fprintf(stderr, "%s: --%s: %s\n", p, name, gw_error_detail());
			return -1;
		}
		gw_encoder_free(probe);
		char *nm = s == &c->up ? c->up_name : c->down_name;
		snprintf(nm, sizeof(c->up_name), "%.*s", (int)(colon - v), v);
		v = nm;
	}
	*s = v;
	if (s == &c->up || s == &c->down) {
		if (gw_codec_by_name(v) < 0) {
			fprintf(stderr, "%s: --%s: unknown codec '%s'\n", p, name, v);
			return -1;
		}
	} else if (s == &c->backend) {
		if (coll_opt_backend(v) < 0 || coll_opts_dp_check(&c->o, v) < 0) {
			fprintf(stderr, "%s: --%s\n", p, gw_error_detail());
			return -1;
		}
	} else if (s == &c->local) {
		if (!strncmp(v, "auto:", 5)) {
			if (local_auto(v, &c->local_ep) < 0) {
				fprintf(stderr, "%s: --local: '%s': no port, or no interface "
					"up with an IPv4 address\n", p, v);
				return -1;
			}
		} else if (gw_endpoint_parse(v, &c->local_ep) < 0) {
			fprintf(stderr, "%s: --local: '%s' is not IP:PORT[@MAC] or auto:PORT\n",
				p, v);
			return -1;
		}
	} else if (s == &c->key_file) {
		if (gw_coll_key_load(v, c->key) < 0) {
			fprintf(stderr, "%s: --key-file: %s\n", p, gw_error_detail());
			return -1;
		}
		c->keyed = true;
	}
	return 1;
}

/* The job the options describe, chunk_elems 0 unless given; its engine
 * is the library's choice for the uplink codec. */
static void job_of(struct cli *c, gw_coll_job *job)
{
	int up = c->up ? gw_codec_by_name(c->up) : GW_CODEC_RAW;
	*job = (gw_coll_job){
		.dim = c->o.dim, .workers = (uint16_t)c->o.workers,
		.shards = (uint16_t)(c->o.shards ? c->o.shards : 1),
		.up_codec = up,
		.down_codec = c->down ? gw_codec_by_name(c->down) : coll_down_default(up),
		.up_params = c->up_params, .down_params = c->down_params,
		.key = c->keyed ? c->key : NULL,
	};
	coll_opts_job(&c->o, &c->ep, job);
}

/* A job check's detail ("down_codec: ...", "chunk_elems: ...") as the
 * CLI names the field: its option (--down, --chunk-elems), so a user
 * reads back what they typed. A field with no option stays as it is. */
static void say_job(const struct cli *c)
{
	const char *d = gw_error_detail();
	size_t n = strspn(d, "abcdefghijklmnopqrstuvwxyz_");
	char opt[40];
	if (n && n < sizeof(opt) && d[n] == ':') {
		snprintf(opt, sizeof(opt), "%.*s", (int)n, d);
		if (!strcmp(opt, "up_codec") || !strcmp(opt, "down_codec"))
			opt[strcspn(opt, "_")] = '\0';   /* --up, --down */
		for (char *q = opt; *q; q++)
			*q = *q == '_' ? '-' : *q;
		if (coll_opt_find(opt, COLL_OPT_CLI)) {
			fprintf(stderr, "%s: --%s:%s\n", c->prog, opt, d + n + 1);
			return;
		}
	}
	fprintf(stderr, "%s: %s\n", c->prog, d);
}

int cli_job_check(struct cli *c)
{
	gw_coll_job probe;
	job_of(c, &probe);
	if (!probe.chunk_elems)   /* the smallest (above min_elems): checks the rest */
		probe.chunk_elems = (c->ep.dense.min_elems > 40 ? (c->ep.dense.min_elems + 39u) / 40u * 40u : 40u);
	if (gw_coll_job_check(&probe) < 0) {
		say_job(c);
		return -1;
	}
	return 0;
}

int cli_job(struct cli *c, gw_dp *dp, gw_coll_job *job)
{
	if (!c->o.workers || !c->o.dim) {
		fprintf(stderr, "%s: --%s is required\n", c->prog, c->o.workers ? "dim" : "workers");
		return -1;
	}
	job_of(c, job);
	if (cli_job_check(c) < 0)
		return -1;
	if (!job->chunk_elems) {
		uint32_t pmax = gw_dp_payload_max(dp);
		if (c->o.mtu && c->o.mtu - 28 < pmax)
			pmax = (uint32_t)c->o.mtu - 28;   /* IPv4 + UDP headers */
		int k = gw_coll_chunk_elems(job, pmax);
		if (k < 0) {
			fprintf(stderr, "%s: no chunk fits a %u-byte payload: %s\n",
				c->prog, pmax, gw_error_detail());
			return -1;
		}
		job->chunk_elems = (uint32_t)k;
	}
	if (gw_coll_job_check(job) < 0) {
		say_job(c);
		return -1;
	}
	return 0;
}

int cli_open_dp(struct cli *c, unsigned i, gw_dp **dp)
{
	if (!c->local) {
		fprintf(stderr, "%s: --local is required\n", c->prog);
		return -1;
	}
	gw_dp_config cfg = {.backend = c->backend ? c->backend : "udp",
			    .pool = (uint32_t)c->o.pool, .argc = c->args.eal_argc,
			    .argv = c->args.eal_argv};
	cfg.local = c->local_ep;
	char opts[512];
	const char *extra = c->dp_opts ? c->dp_opts : "";
	if (!strcmp(cfg.backend, "dpdk")) {
		/* A memif link per port: a shard has one per worker, a
		 * worker one per shard. */
		snprintf(opts, sizeof(opts), "port=%u%s%s", i, *extra ? "," : "", extra);
	} else {
		if (cfg.local.port)   /* port 0: each one picked free */
			cfg.local.port = (uint16_t)(cfg.local.port + i);
		snprintf(opts, sizeof(opts), "%s", extra);
	}
	cfg.opts = *opts ? opts : NULL;
	int rc = coll_opts_dp_open(&c->o, &cfg, dp);   /* --gso, --wait */
	if (rc < 0) {
		fprintf(stderr, "%s: cannot open the %s dataplane: %s: %s\n", c->prog,
			cfg.backend, gw_strerror(rc), gw_error_detail());
		return -1;
	}
	return 0;
}

int cli_parse_aggs(const char *prog, const char *list, gw_endpoint *ep, unsigned *n)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", list);
	char *save = NULL;
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n == GW_COLL_SHARDS_MAX || gw_endpoint_parse(t, &ep[*n]) < 0) {
			fprintf(stderr, "%s: --agg: '%s' is not IP:PORT[@MAC]\n", prog, t);
			return -1;
		}
		(*n)++;
	}
	if (*n == 0)
		fprintf(stderr, "%s: --agg: no endpoint in '%s'\n", prog, list);
	return *n ? 0 : -1;
}

int cli_refused(const struct cli *c)
{
	if (c->backend && coll_opt_backend(c->backend) < 0)
		return app_backend_missing(c->backend);
	return APP_EXIT_USAGE;
}
