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

void cli_job_usage(FILE *f)
{
	fprintf(f,
"job options (every process of a job gives the same):\n"
"  --workers W          workers (1..%u)\n"
"  --shards S           aggregator shards (1..%u, default 1)\n"
"  --dim N              tensor elements\n"
"  --up CODEC           uplink codec (default raw); --up-params K=V,... or\n"
"                       a codec string CODEC:K=V,... (deepreduce:index=bloom,\n"
"                       policy=p2,fpr=0.001,value=poly)\n"
"  --down CODEC         downlink codec (default raw); --down-params K=V,...\n"
"  --mode M             reliable (default) or loss-tolerant\n"
"  --deadline-us US     loss-tolerant: a chunk finishes without missing\n"
"                       workers this long after its first contribution\n"
"  --window N           slots per shard (default 64)\n"
"  --chunk-elems K      elements per chunk (default: the most one packet holds)\n"
"  --job J              job id (default 1)\n"
"  --key-file F         job key, 64 hex digits: every packet is MACed\n"
"  --stats-interval MS  one JSON line of counters on stdout every MS while\n"
"                       running (\"kind\":\"stats\"): dataplane, protocol,\n"
"                       faults\n"
"  --liveness-ms MS     a peer silent at least this long, and longer than\n"
"                       its own history of gaps makes likely, is suspected\n"
"                       and probed; silent MS more, it is dead (default\n"
"                       1000, or GW_LIVENESS_MS; 0: off): reliable jobs\n"
"                       fail naming it, loss-tolerant jobs go on without a\n"
"                       worker (evicted when suspected, back when heard)\n"
"  --startup-ms MS      a peer never heard is not yet up, and is waited\n"
"                       for this long from the job's start (default 30000,\n"
"                       or GW_STARTUP_MS; 0: the call timeout only)\n"
"Sketched-SGD (--up countsketch --up-params rows=R,cols=C,seed=S):\n"
"  --topk K             coordinates updated per step (default dim/100)\n"
"  --candidates M       P*K queried in the second round (default 4*K)\n"
"  --sketch-momentum R  worker momentum in [0, 1) (default 0)\n"
"dense jobs, as 3LC places its contexts (docs/3lc-paper.md):\n"
"  --layout N,N,...     the tensor is tensors of these sizes (summing to\n"
"                       --dim), each with its own compression context and\n"
"                       chunks; @FILE reads the sizes from FILE\n"
"  --min-elems N        tensors of fewer elements go raw (default 0)\n"
"  --down-momentum MU   the shards keep momentum MU in [0, 1) and send the\n"
"                       state change; workers apply it without momentum\n"
"dataplane options:\n"
"  --backend NAME       udp (default), dpdk or rdma, as built; EAL options go\n"
"                       before '--'\n"
"  --local IP:PORT      address to receive on; auto:PORT takes the IPv4\n"
"                       address of the first interface that is up and not\n"
"                       loopback (one per namespace, or per host)\n"
"  --mpi                started by mpirun (shards first, then workers, as\n"
"                       MPMD): ranks and shard addresses come from MPI\n"
"  --mtu BYTES          IP MTU of the packets (default: the device's)\n"
"  --opts K=V,...       backend options (impair_loss=P, ...)\n"
"  --pool N             packet buffers (default: what the window needs)\n",
		GW_COLL_WORKERS_MAX, GW_COLL_SHARDS_MAX);
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

/* The shared options that are whole numbers: their range and field. */
static const struct {
	const char *name;
	uint64_t lo, hi;
	size_t off;
} u64_opts[] = {
	{"job", 0, UINT32_MAX, offsetof(struct cli, job_id)},
	{"dim", 1, 1ull << 34, offsetof(struct cli, dim)},
	{"chunk-elems", 40, 1u << 20, offsetof(struct cli, chunk_elems)},
	{"workers", 1, GW_COLL_WORKERS_MAX, offsetof(struct cli, workers)},
	{"shards", 1, GW_COLL_SHARDS_MAX, offsetof(struct cli, shards)},
	{"window", 1, GW_COLL_WINDOW_MAX, offsetof(struct cli, window)},
	{"deadline-us", 1, 60000000, offsetof(struct cli, deadline_us)},
	{"mtu", 256, 65535, offsetof(struct cli, mtu)},
	{"topk", 1, UINT32_MAX, offsetof(struct cli, topk)},
	{"candidates", 1, UINT32_MAX, offsetof(struct cli, candidates)},
	{"pool", 64, 1u << 22, offsetof(struct cli, pool)},
};

/* One of the liveness times, for the communicator and the shard given. */
static int set_ms(const struct cli *c, const char *opt, uint64_t ms, gw_comm *comm,
		  int (*comm_fn)(gw_comm *, uint32_t), gw_agg *agg,
		  int (*agg_fn)(gw_agg *, uint32_t))
{
	int rc = comm ? comm_fn(comm, (uint32_t)ms) : GW_OK;
	if (rc == GW_OK && agg)
		rc = agg_fn(agg, (uint32_t)ms);
	if (rc < 0)
		fprintf(stderr, "%s: --%s: %s\n", c->prog, opt, gw_error_detail());
	return rc < 0 ? -1 : 0;
}

int cli_liveness(const struct cli *c, gw_comm *comm, gw_agg *agg)
{
	if (c->liveness_set && set_ms(c, "liveness-ms", c->liveness_ms, comm,
				      gw_comm_set_liveness, agg, gw_agg_set_liveness) < 0)
		return -1;
	if (c->startup_set && set_ms(c, "startup-ms", c->startup_ms, comm, gw_comm_set_startup,
				     agg, gw_agg_set_startup) < 0)
		return -1;
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
	if (!s->c->stats_ms)
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
	s->every_ms = s->c->stats_ms ? s->c->stats_ms : keeps ? 250 : 0;
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
	if (s->c && s->c->stats_ms && s->every_ms)
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
	c->dense.tensor_elems = sizes = t;
	c->dense.ntensors = n;
	return 0;
}

int cli_job_opt(struct cli *c, const char *name, const char *v)
{
	const char *p = c->prog;
	if (!strcmp(name, "mpi")) {
		c->mpi = true;
		return 1;
	}
	if (!strcmp(name, "stats-interval"))
		return app_opt_u64(p, name, v, 10, 3600000, &c->stats_ms) ? 1 : -1;
	if (!strcmp(name, "liveness-ms")) {
		c->liveness_set = true;
		if (!app_opt_u64(p, name, v, 0, 3600000, &c->liveness_ms))
			return -1;
		if (c->liveness_ms && c->liveness_ms < 10) {
			fprintf(stderr, "%s: --liveness-ms: %s is below 10 (0 turns it off)\n",
				p, v);
			return -1;
		}
		return 1;
	}
	if (!strcmp(name, "startup-ms")) {
		c->startup_set = true;
		if (!app_opt_u64(p, name, v, 0, 86400000, &c->startup_ms))
			return -1;
		if (c->startup_ms && c->startup_ms < 10) {
			fprintf(stderr, "%s: --startup-ms: %s is below 10 (0: no limit)\n", p, v);
			return -1;
		}
		return 1;
	}
	for (size_t i = 0; i < sizeof(u64_opts) / sizeof(u64_opts[0]); i++)
		if (!strcmp(name, u64_opts[i].name))
			return app_opt_u64(p, name, v, u64_opts[i].lo, u64_opts[i].hi,
					   (uint64_t *)((char *)c + u64_opts[i].off)) ? 1 : -1;
	if (!strcmp(name, "sketch-momentum"))
		return app_opt_double(p, name, v, 0, 1, APP_OPEN_HI, &c->momentum) ? 1 : -1;
	if (!strcmp(name, "down-momentum")) {
		double mu;
		if (!app_opt_double(p, name, v, 0, 1, APP_OPEN_HI, &mu))
			return -1;
		c->dense.down_momentum = (float)mu;
		return 1;
	}
	if (!strcmp(name, "min-elems")) {
		uint64_t n;
		if (!app_opt_u64(p, name, v, 0, UINT32_MAX, &n))
			return -1;
		c->dense.min_elems = (uint32_t)n;
		return 1;
	}
	if (!strcmp(name, "layout"))
		return cli_layout(c, v) < 0 ? -1 : 1;
	const char **s = !strcmp(name, "up") ? &c->up : !strcmp(name, "down") ? &c->down :
		!strcmp(name, "up-params") ? &c->up_params :
		!strcmp(name, "down-params") ? &c->down_params :
		!strcmp(name, "mode") ? &c->mode : !strcmp(name, "backend") ? &c->backend :
		!strcmp(name, "local") ? &c->local : !strcmp(name, "opts") ? &c->dp_opts :
		!strcmp(name, "key-file") ? &c->key_file : NULL;
	if (!s)
		return 0;
	/* Sketched-SGD is the countsketch codec with its two-round protocol. */
	if (s == &c->up && !strcmp(v, "sketched-sgd"))
		v = "countsketch";
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
	} else if (s == &c->mode) {
		if (strcmp(v, "reliable") && strcmp(v, "loss-tolerant")) {
			fprintf(stderr, "%s: --mode: '%s' is not reliable or loss-tolerant\n", p, v);
			return -1;
		}
	} else if (s == &c->backend) {
		char built[128] = "";
		int known = 0;
		for (const char *const *b = gw_dp_backends(); *b; b++) {
			known |= !strcmp(*b, v);
			snprintf(built + strlen(built), sizeof(built) - strlen(built), "%s%s",
				 *built ? ", " : "", *b);
		}
		if (!known) {
			fprintf(stderr, "%s: --backend: '%s' is not a backend built here (%s)\n",
				p, v, built);
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

/* The job the options describe, chunk_elems 0 unless given. The
 * countsketch uplink is Sketched-SGD's engine. */
static void job_of(struct cli *c, gw_coll_job *job)
{
	int up = c->up ? gw_codec_by_name(c->up) : GW_CODEC_RAW;
	int sketched = up == GW_CODEC_COUNTSKETCH;
	c->sk = (gw_sketched_job){.topk = (uint32_t)c->topk,
				  .candidates = (uint32_t)c->candidates,
				  .momentum = (float)c->momentum};
	*job = (gw_coll_job){
		.job = (uint32_t)c->job_id, .dim = c->dim,
		.chunk_elems = (uint32_t)c->chunk_elems,
		.workers = (uint16_t)c->workers,
		.shards = (uint16_t)(c->shards ? c->shards : 1),
		.window = (uint32_t)c->window,
		.up_codec = up,
		.down_codec = c->down ? gw_codec_by_name(c->down) : GW_CODEC_RAW,
		.up_params = c->up_params, .down_params = c->down_params,
		.mode = c->mode && !strcmp(c->mode, "loss-tolerant") ?
			GW_COLL_LOSS_TOLERANT : GW_COLL_RELIABLE,
		.deadline_us = (uint32_t)c->deadline_us,
		.key = c->keyed ? c->key : NULL,
		.engine = sketched ? GW_COLL_SKETCHED : GW_COLL_DENSE,
		.engine_params = sketched ? (const void *)&c->sk : &c->dense,
	};
}

int cli_job_check(struct cli *c)
{
	gw_coll_job probe;
	job_of(c, &probe);
	if (!probe.chunk_elems)   /* the smallest (above min_elems): checks the rest */
		probe.chunk_elems = (c->dense.min_elems > 40 ? (c->dense.min_elems + 39u) / 40u * 40u : 40u);
	if (gw_coll_job_check(&probe) < 0) {
		fprintf(stderr, "%s: %s\n", c->prog, gw_error_detail());
		return -1;
	}
	return 0;
}

int cli_job(struct cli *c, gw_dp *dp, gw_coll_job *job)
{
	if (!c->workers || !c->dim) {
		fprintf(stderr, "%s: --%s is required\n", c->prog, c->workers ? "dim" : "workers");
		return -1;
	}
	job_of(c, job);
	if (cli_job_check(c) < 0)
		return -1;
	if (!job->chunk_elems) {
		uint32_t pmax = gw_dp_payload_max(dp);
		if (c->mtu && c->mtu - 28 < pmax)
			pmax = (uint32_t)c->mtu - 28;   /* IPv4 + UDP headers */
		int k = gw_coll_chunk_elems(job, pmax);
		if (k < 0) {
			fprintf(stderr, "%s: no chunk fits a %u-byte payload: %s\n",
				c->prog, pmax, gw_error_detail());
			return -1;
		}
		job->chunk_elems = (uint32_t)k;
	}
	if (gw_coll_job_check(job) < 0) {
		fprintf(stderr, "%s: %s\n", c->prog, gw_error_detail());
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
			    .pool = (uint32_t)c->pool, .argc = c->args.eal_argc,
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
	int rc = gw_dp_open(&cfg, dp);
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
