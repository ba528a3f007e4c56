/* gw-bench stream: real codec frames streamed reliably (gw_stream over a
 * dataplane backend) from a tx process to an rx process. Frames are encoded
 * straight into packet buffers (or, with --preencode, encoded once before
 * the timed part and copied in, so the run measures the transport rather
 * than the encoder); the receiver decode-accumulates them and, after the
 * timed part, checks its sum against an in-process encode+decode bit for
 * bit. tx streams --rounds tensors, or as many as fit in --duration, then
 * an empty tensor that tells rx the run is over. Prints packets, Mpps,
 * Gbit/s and retransmissions, as a testpmd-style table or one JSON object.
 *
 *   gw-bench stream [EAL options] -- --backend udp|dpdk --role tx|rx
 *                   --local IP:PORT --peer IP:PORT [--codec NAME]
 *                   [--input FILE.f32 | --synthetic N]
 *                   [--rounds R | --duration S] [--preencode] [--json]
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/codec.h>
#include <gw/dataplane.h>
#include <gw/stream.h>

#include "bench.h"
#include "gw_rand.h"

#define MAX_PARAMS 16

struct opts {
	const char *backend, *role, *local, *peer, *codec, *input, *dp_opts;
	const char *params[MAX_PARAMS];
	int np;
	uint64_t synthetic, seed, rounds, window, rto_us, timeout_ms, mtu, job, linger_ms;
	double duration;
	bool have_syn, json, ef, verify, frames, preencode, rounds_set;
	struct app_args args;     /* [EAL options] -- [app options] */
};

struct fill_arg {
	gw_encoder *enc;
	size_t budget;
	const struct frame_set *pre;   /* --preencode: copy these instead */
};

/* --preencode: one round's frames, back to back. */
struct frame_set {
	uint8_t *buf;
	size_t *off, *len;
	size_t n;
};

struct deliver_arg {
	float *acc;
	uint64_t dim;
	uint32_t tensor;
	double first;            /* time of the first frame, 0 before it */
	bool frames;             /* the stream runs with cfg.frames */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-bench stream [EAL options --] --backend udp|dpdk --role tx|rx\n"
"                       --local IP:PORT --peer IP:PORT [--codec NAME] [--param K=V]...\n"
"                       [--input FILE.f32 | --synthetic N [--seed S]]\n"
"                       [--rounds R | --duration S] [--preencode]\n"
"                       [--mtu BYTES] [--window W] [--rto-us US] [--timeout-ms MS]\n"
"                       [--opts K=V,...] [--job J] [--no-ef] [--no-verify] [--no-frames]\n"
"                       [--linger-ms MS] [--json]\n\n"
"  Start --role rx first, then --role tx with the same tensor options; each\n"
"  round sends the whole tensor (tensor id 0) and waits for every ack; then\n"
"  an empty tensor ends the run (rx stops there, whatever --rounds it got).\n"
"  --backend         udp, or dpdk (EAL options before '--'; port=N in --opts)\n"
"  --local/--peer    A.B.C.D:PORT[@MAC]; rx answers whoever sends\n"
"  --codec NAME      a registered codec (default raw)\n"
"  --input FILE.f32  dense float32 tensor; --synthetic N: N seeded floats\n"
"                    (default --synthetic 4194304)\n"
"  --rounds R        tensors streamed back to back (default 10)\n"
"  --duration S      tx: stream rounds for S seconds instead (at least one;\n"
"                    rx accepts and ignores it: it stops at the marker)\n"
"  --preencode       encode one round's frames before timing and send them\n"
"                    every round (give it to both ends: rx checks against it)\n"
"  --mtu BYTES       IP MTU; frame budget = MTU - %u (default 1500)\n"
"  --window W        chunks in flight (default 256, at most %u)\n"
"  --opts K=V,...    backend options, e.g. impair_loss=0.01,impair_seed=1\n"
"  --no-ef           lossy codecs without error feedback\n"
"  --no-verify       rx: skip the bit-exact check against an in-process decode\n"
"  --no-frames       packet checksums over the frames too (default: header only,\n"
"                    each frame checked by its own checksum as it is decoded)\n"
"  --json            one JSON object instead of the table\n",
		GW_PKT_RESERVE, GW_STREAM_WINDOW_MAX);
}

/* Gradient-like values: heavy tails around zero, a quarter exact zeros. */
static float *synth(uint64_t n, uint64_t seed)
{
	float *v = malloc((n ? n : 1) * sizeof(float));
	for (uint64_t i = 0; v && i < n; i++) {
		uint64_t r = gw_splitmix64(&seed);
		double u = ((r >> 11) + 0.5) / 9007199254740992.0;
		v[i] = (r & 3) == 0 ? 0.0f : (float)(2e-5 * tan(M_PI * (u - 0.5)));
	}
	return v;
}

static int fill_cb(void *arg, uint32_t chunk, uint8_t *buf, size_t room)
{
	struct fill_arg *f = arg;
	if (f->pre) {
		if (chunk >= f->pre->n)
			return 0;
		if (f->pre->len[chunk] > room)
			return GW_EBUDGET;
		memcpy(buf, f->pre->buf + f->pre->off[chunk], f->pre->len[chunk]);
		return (int)f->pre->len[chunk];
	}
	if (!f->enc)
		return 0;   /* the end-of-run marker: an empty tensor */
	return gw_encode_next(f->enc, buf, room < f->budget ? room : f->budget);
}

static void frames_free(struct frame_set *fs)
{
	free(fs->buf);
	free(fs->off);
	free(fs->len);
	memset(fs, 0, sizeof(*fs));
}

/* Encodes one round of t into fs (--preencode). */
static int frames_encode(gw_encoder *enc, const gw_tensor *t, size_t budget,
			 struct frame_set *fs)
{
	int n = gw_encode_begin(enc, t);
	if (n < 0)
		return n;
	size_t cap = 0, used = 0;
	for (;;) {
		if (fs->n % 1024 == 0) {
			size_t *o = realloc(fs->off, (fs->n + 1024) * sizeof(size_t));
			size_t *l = o ? realloc(fs->len, (fs->n + 1024) * sizeof(size_t)) : NULL;
			if (o)
				fs->off = o;
			if (!l)
				return GW_ENOMEM;
			fs->len = l;
		}
		if (used + budget > cap) {
			cap = 2 * (used + budget);
			uint8_t *b = realloc(fs->buf, cap);
			if (!b)
				return GW_ENOMEM;
			fs->buf = b;
		}
		n = gw_encode_next(enc, fs->buf + used, budget);
		if (n <= 0)
			return n;
		fs->off[fs->n] = used;
		fs->len[fs->n++] = (size_t)n;
		used += (size_t)n;
	}
}

/* A frame that does not decode and does not verify either was damaged on
 * the way: GW_ECHECKSUM has the stream drop it and await the
 * retransmission (with --no-frames the packet checksum covered it, and
 * every error aborts). */
static int deliver_cb(void *arg, uint32_t chunk, const uint8_t *frame, size_t len)
{
	struct deliver_arg *d = arg;
	(void)chunk;
	if (d->first == 0)
		d->first = app_now_s();
	int rc = gw_decode(frame, len, d->acc, d->dim);
	gw_frame_info fi;
	if (rc < 0 && d->frames && gw_frame_verify(frame, len, &fi) < 0)
		return GW_ECHECKSUM;
	return rc < 0 ? rc : 0;
}

static gw_encoder *make_encoder(int id, const struct opts *o, gw_ef **ef, uint64_t dim)
{
	gw_encoder *enc = gw_encoder_create(id);
	if (!enc)
		return NULL;
	for (int k = 0; k < o->np; k++) {
		char *eq = strchr(o->params[k], '=');
		*eq = 0;
		int p = gw_param_by_name(o->params[k]);
		int rc = p < 0 ? p : gw_encoder_set_param(enc, p, strtod(eq + 1, NULL));
		*eq = '=';
		if (rc < 0) {
			fprintf(stderr, "gw-bench: --param %s: %s for codec %s\n", o->params[k],
				gw_strerror(rc), gw_codec_name(id));
			gw_encoder_free(enc);
			return NULL;
		}
	}
	*ef = NULL;
	if (o->ef && (gw_codec_caps(id) & GW_CODEC_LOSSY)) {
		*ef = gw_ef_create(dim);
		if (!*ef || gw_encoder_set_ef(enc, *ef) < 0) {
			gw_ef_free(*ef);
			gw_encoder_free(enc);
			return NULL;
		}
	}
	return enc;
}

/* rx: the sum the receiver must hold, computed here; 1 if bit-exact. */
static int verify(int id, const struct opts *o, const float *vals, uint64_t dim,
		  const float *acc, size_t budget, uint64_t rounds)
{
	gw_ef *ef;
	gw_encoder *enc = make_encoder(id, o, &ef, dim);
	float *ref = calloc(dim ? dim : 1, sizeof(float));
	uint8_t *buf = malloc(budget);
	int ok = enc && ref && buf;
	gw_tensor t = {.id = 0, .dim = dim, .values = vals};
	for (uint64_t r = 0; ok && r < rounds; r++) {
		if (o->preencode && r) {
			/* The same frames every round: encode them afresh, as
			 * the sender did once, without the feedback of the
			 * rounds before. */
			gw_encoder_free(enc);
			gw_ef_free(ef);
			enc = make_encoder(id, o, &ef, dim);
			if (!enc) {
				ok = 0;
				break;
			}
		}
		int n = gw_encode_begin(enc, &t);
		while (n >= 0 && (n = gw_encode_next(enc, buf, budget)) > 0)
			n = gw_decode(buf, (size_t)n, ref, dim) < 0 ? -1 : 0;
		ok = n == 0;
	}
	for (uint64_t i = 0; ok && i < dim; i++)
		ok = !memcmp(&ref[i], &acc[i], sizeof(float));
	free(ref);
	free(buf);
	gw_encoder_free(enc);
	gw_ef_free(ef);
	return ok;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{"backend", required_argument, 0, 'b'}, {"role", required_argument, 0, 'r'},
		{"local", required_argument, 0, 'l'}, {"peer", required_argument, 0, 'p'},
		{"codec", required_argument, 0, 'c'}, {"param", required_argument, 0, 'P'},
		{"input", required_argument, 0, 'i'}, {"synthetic", required_argument, 0, 's'},
		{"seed", required_argument, 0, 'S'}, {"rounds", required_argument, 0, 'R'},
		{"mtu", required_argument, 0, 'm'}, {"window", required_argument, 0, 'w'},
		{"rto-us", required_argument, 0, 'T'}, {"timeout-ms", required_argument, 0, 't'},
		{"opts", required_argument, 0, 'o'}, {"job", required_argument, 0, 'j'},
		{"no-ef", no_argument, 0, 'n'}, {"no-verify", no_argument, 0, 'V'},
		{"no-frames", no_argument, 0, 'F'},
		{"linger-ms", required_argument, 0, 'L'}, {"json", no_argument, 0, 'J'},
		{"duration", required_argument, 0, 'D'}, {"preencode", no_argument, 0, 'E'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	app_split_args(argc, argv, &o->args);
	char **av = o->args.argv;
	int ac = o->args.argc, c;
	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((c = getopt_long(ac, av, "", lopts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'b': o->backend = optarg; break;
		case 'r': o->role = optarg; break;
		case 'l': o->local = optarg; break;
		case 'p': o->peer = optarg; break;
		case 'c': o->codec = optarg; break;
		case 'P':
			if (!strchr(optarg, '=') || o->np == MAX_PARAMS) {
				fprintf(stderr, "gw-bench: --param: '%s' is not KEY=VALUE (at most %d)\n",
					optarg, MAX_PARAMS);
				return BENCH_EUSAGE;
			}
			o->params[o->np++] = optarg;
			break;
		case 'i': o->input = optarg; break;
		case 's': ok = bench_u64("synthetic", optarg, 1, 1ull << 30, &o->synthetic);
			o->have_syn = true; break;
		case 'S': ok = bench_u64("seed", optarg, 0, UINT64_MAX, &o->seed); break;
		case 'R': ok = bench_u64("rounds", optarg, 1, 1000000, &o->rounds);
			o->rounds_set = true; break;
		case 'm': ok = bench_u64("mtu", optarg, GW_PKT_RESERVE + GW_BUDGET_MIN,
					 GW_FRAME_MAX + GW_PKT_RESERVE, &o->mtu); break;
		case 'w': ok = bench_u64("window", optarg, 1, GW_STREAM_WINDOW_MAX,
					 &o->window); break;
		case 'T': ok = bench_u64("rto-us", optarg, 10, 10000000, &o->rto_us); break;
		case 't': ok = bench_u64("timeout-ms", optarg, 1, 3600000, &o->timeout_ms); break;
		case 'o': o->dp_opts = optarg; break;
		case 'j': ok = bench_u64("job", optarg, 0, UINT32_MAX, &o->job); break;
		case 'n': o->ef = false; break;
		case 'V': o->verify = false; break;
		case 'F': o->frames = false; break;
		case 'L': ok = bench_u64("linger-ms", optarg, 0, 60000, &o->linger_ms); break;
		case 'J': o->json = true; break;
		case 'D': ok = bench_num("duration", optarg, 0.001, 3600, &o->duration);
			break;
		case 'E': o->preencode = true; break;
		case 'h': usage(stdout); return -1;
		default: app_bad_option("gw-bench", "gw-bench stream", av, ""); return BENCH_EUSAGE;
		}
		if (!ok)
			return BENCH_EUSAGE;
	}
	if (optind < ac) {
		fprintf(stderr, "gw-bench: unexpected argument '%s'\n", av[optind]);
		return BENCH_EUSAGE;
	}
	const char *missing = !o->backend ? "--backend" : !o->role ? "--role"
			      : !o->local ? "--local" : NULL;
	if (missing) {
		fprintf(stderr, "gw-bench: %s: required\n", missing);
		usage(stderr);
		return BENCH_EUSAGE;
	}
	if (strcmp(o->role, "tx") && strcmp(o->role, "rx")) {
		fprintf(stderr, "gw-bench: --role: '%s' is neither tx nor rx\n", o->role);
		return BENCH_EUSAGE;
	}
	if (!strcmp(o->role, "tx") && !o->peer) {
		fprintf(stderr, "gw-bench: --peer: required with --role tx\n");
		return BENCH_EUSAGE;
	}
	gw_endpoint ep;
	if (gw_endpoint_parse(o->local, &ep) < 0) {
		fprintf(stderr, "gw-bench: --local: '%s' is not A.B.C.D:PORT[@MAC]\n", o->local);
		return BENCH_EUSAGE;
	}
	if (o->peer && gw_endpoint_parse(o->peer, &ep) < 0) {
		fprintf(stderr, "gw-bench: --peer: '%s' is not A.B.C.D:PORT[@MAC]\n", o->peer);
		return BENCH_EUSAGE;
	}
	if (gw_codec_by_name(o->codec) < 0) {
		fprintf(stderr, "gw-bench: --codec: unknown codec '%s'\n", o->codec);
		return BENCH_EUSAGE;
	}
	if (o->duration > 0 && o->rounds_set) {
		fprintf(stderr, "gw-bench: --rounds, --duration: give one of them\n");
		return BENCH_EUSAGE;
	}
	if (o->input && o->have_syn) {
		fprintf(stderr, "gw-bench: --input, --synthetic: give one of them\n");
		return BENCH_EUSAGE;
	}
	int rc = bench_backend_check(o->backend);
	if (rc)
		return rc;
	if (!app_eal_check("gw-bench", &o->args, o->backend))
		return BENCH_EUSAGE;
	return 0;
}

struct result {
	const struct opts *o;
	uint64_t dim, chunks, rounds;
	double seconds;
	gw_stream_stats st;
	gw_dp_stats ds;
	int verified;            /* -1: not checked */
};

static void print(const struct result *r)
{
	const struct opts *o = r->o;
	bool tx = !strcmp(o->role, "tx");
	uint64_t pkts = tx ? r->ds.tx_pkts : r->ds.rx_pkts;
	uint64_t bytes = tx ? r->ds.tx_bytes : r->ds.rx_bytes;
	double s = r->seconds > 0 ? r->seconds : 1e-9;
	double mpps = pkts / s / 1e6, gbps = bytes * 8.0 / s / 1e9;
	double tgbps = (double)r->dim * 4 * r->rounds * 8.0 / s / 1e9;
	if (o->json) {
		const struct app_json_member m[] = {
			APP_JS("mode", "stream"), APP_JS("role", o->role),
			APP_JS("backend", o->backend), APP_JS("codec", o->codec),
			APP_JU("elements", r->dim), APP_JU("rounds", r->rounds),
			APP_JU("chunks", r->chunks), APP_JU("packets", pkts), APP_JU("bytes", bytes),
			APP_JF("seconds", 6, r->seconds), APP_JF("mpps", 4, mpps),
			APP_JF("gbps", 4, gbps), APP_JF("tensor_gbps", 4, tgbps),
			APP_JU("retransmits", r->st.retransmits),
			APP_JU("acks_sent", r->st.acks_sent),
			APP_JU("acks_received", r->st.acks_received),
			APP_JU("duplicates", r->st.duplicates), APP_JU("bad", r->st.bad),
			APP_JU("corrupt", r->st.corrupt), APP_JU("stale", r->st.stale),
			APP_JU("tx_full", r->ds.tx_full), APP_JU("idle_waits", r->ds.idle_waits),
			APP_JB("frames", o->frames), APP_JB("preencode", o->preencode),
		};
		struct app_json j;
		app_json_begin(&j, stdout, true);
		app_json_members(&j, m, APP_JSON_N(m));
		if (r->verified < 0)
			app_json_null(&j, "verified");
		else
			app_json_bool(&j, "verified", r->verified);
		app_json_end(&j);
		return;
	}
	printf("  ---------------- stream %s: %s, codec %s, %llu floats x %llu rounds ----------------\n",
	       o->role, o->backend, o->codec, (unsigned long long)r->dim,
	       (unsigned long long)r->rounds);
	printf("  RX-packets: %-12llu RX-bytes:  %-14llu\n", (unsigned long long)r->ds.rx_pkts,
	       (unsigned long long)r->ds.rx_bytes);
	printf("  TX-packets: %-12llu TX-bytes:  %-14llu TX-full: %llu\n",
	       (unsigned long long)r->ds.tx_pkts, (unsigned long long)r->ds.tx_bytes,
	       (unsigned long long)r->ds.tx_full);
	printf("  chunks: %-14llu retransmits: %-10llu acks sent/received: %llu/%llu\n",
	       (unsigned long long)r->chunks, (unsigned long long)r->st.retransmits,
	       (unsigned long long)r->st.acks_sent, (unsigned long long)r->st.acks_received);
	printf("  duplicates: %-10llu bad: %-8llu corrupt: %-8llu stale: %llu\n",
	       (unsigned long long)r->st.duplicates, (unsigned long long)r->st.bad,
	       (unsigned long long)r->st.corrupt, (unsigned long long)r->st.stale);
	printf("  time: %.4f s   %s-Mpps: %.4f   %s-Gbit/s (UDP payload): %.3f\n", r->seconds,
	       tx ? "TX" : "RX", mpps, tx ? "TX" : "RX", gbps);
	printf("  tensor Gbit/s (float32 equivalent): %.3f   verified: %s\n", tgbps,
	       r->verified < 0 ? "not checked" : r->verified ? "bit-exact" : "MISMATCH");
	printf("  ------------------------------------------------------------------------------------\n");
}

int bench_stream_main(int argc, char **argv)
{
	struct opts o = {.codec = "raw", .rounds = 10, .mtu = 1500, .timeout_ms = 30000,
			 .synthetic = 1u << 22, .seed = 1, .job = 1, .linger_ms = 200,
			 .ef = true, .verify = true, .frames = true};
	int prc = parse(argc, argv, &o);
	if (prc)
		return prc < 0 ? 0 : prc;
	bool tx = !strcmp(o.role, "tx");
	int id = gw_codec_by_name(o.codec);

	uint64_t dim;
	float *vals;
	if (o.input) {
		size_t len = 0;
		vals = bench_read_file(o.input, &len);
		if (!vals)
			return 1;
		if (len % 4 || !len) {
			fprintf(stderr, "gw-bench: --input: %s: size %zu is not a positive multiple of 4\n",
				o.input, len);
			free(vals);
			return 1;
		}
		dim = len / 4;
	} else {
		dim = o.synthetic;
		vals = synth(dim, o.seed);
		if (!vals) {
			fprintf(stderr, "gw-bench: --synthetic: out of memory\n");
			return 1;
		}
	}

	int rc = 1;
	gw_dp *dp = NULL;
	gw_stream *s = NULL;
	gw_encoder *enc = NULL;
	gw_ef *ef = NULL;
	float *acc = NULL;
	gw_endpoint local, peer = {0};
	gw_endpoint_parse(o.local, &local);
	if (o.peer)
		gw_endpoint_parse(o.peer, &peer);
	gw_dp_config dc = {.backend = o.backend, .local = local, .opts = o.dp_opts,
			   .argc = o.args.eal_argc, .argv = o.args.eal_argv};
	int drc = gw_dp_open(&dc, &dp);
	if (drc < 0) {
		fprintf(stderr, "gw-bench: --backend %s --local %s%s%s: %s: %s\n", o.backend,
			o.local, o.dp_opts ? " --opts " : "", o.dp_opts ? o.dp_opts : "",
			gw_strerror(drc), gw_error_detail());
		goto out;
	}
	gw_stream_config sc = {.job = (uint32_t)o.job, .rank = tx ? 1 : 0,
			       .window = (uint32_t)o.window, .rto_us = (uint32_t)o.rto_us,
			       .timeout_ms = (uint32_t)o.timeout_ms, .frames = o.frames};
	s = gw_stream_create(dp, &sc);
	if (!s) {
		fprintf(stderr, "gw-bench: --window %llu: stream not created: %s\n",
			(unsigned long long)o.window, gw_error_detail());
		goto out;
	}
	size_t budget = o.mtu - GW_PKT_RESERVE;
	if (budget > gw_dp_payload_max(dp) - GW_PKT_HDR_LEN)
		budget = gw_dp_payload_max(dp) - GW_PKT_HDR_LEN;
	gw_tensor t = {.id = 0, .dim = dim, .values = vals};
	if (tx) {
		enc = make_encoder(id, &o, &ef, dim);
		if (!enc)
			goto out;
		int min = gw_encode_min_budget(enc, &t);
		if (min > 0 && budget < (size_t)min) {
			fprintf(stderr, "gw-bench: --mtu: frame budget %zu is below codec %s's minimum %d\n",
				budget, o.codec, min);
			goto out;
		}
	} else {
		acc = calloc(dim, sizeof(float));
		if (!acc)
			goto out;
	}

	struct result res = {.o = &o, .dim = dim, .verified = -1};
	struct deliver_arg da = {acc, dim, 0, 0, o.frames};
	struct frame_set pre = {0};
	if (tx && o.preencode) {
		int erc = frames_encode(enc, &t, budget, &pre);
		if (erc < 0) {
			fprintf(stderr, "gw-bench: --preencode: %s\n", gw_strerror(erc));
			frames_free(&pre);
			goto out;
		}
	}
	double t0 = app_now_s(), t1 = t0;
	/* tx: --rounds tensors, or rounds until --duration has passed, then the
	 * empty tensor that ends the run; rx: tensors until that one. */
	for (uint64_t r = 0;; r++) {
		bool last = tx && (o.duration > 0 ? r > 0 && app_now_s() - t0 >= o.duration
						   : r == o.rounds);
		int n;
		if (tx) {
			struct fill_arg fa = {last ? NULL : enc, budget,
					      last || !o.preencode ? NULL : &pre};
			n = last || o.preencode ? 0 : gw_encode_begin(enc, &t);
			if (n >= 0)
				n = gw_stream_send(s, &peer, (uint32_t)r, 0, fill_cb, &fa);
			if (n < 0 && !last && !o.preencode)
				gw_encode_abandon(enc);
		} else {
			n = gw_stream_recv(s, (uint32_t)r, 0, deliver_cb, &da);
			last = n == 0;
		}
		if (n < 0) {
			fprintf(stderr, "gw-bench: stream %s round %llu: %s\n", o.role,
				(unsigned long long)r, gw_strerror(n));
			frames_free(&pre);
			goto out;
		}
		if (last)
			break;
		res.chunks += (uint64_t)n;
		res.rounds++;
		t1 = app_now_s();
	}
	frames_free(&pre);
	/* rx: timed from its first frame, not from when it started waiting. */
	res.seconds = t1 - (tx || da.first == 0 ? t0 : da.first);
	gw_stream_stats_get(s, &res.st);
	gw_dp_stats_get(dp, &res.ds);
	if (!tx && o.linger_ms)
		gw_stream_linger(s, (uint32_t)o.linger_ms);
	if (!tx && o.verify)
		res.verified = verify(id, &o, vals, dim, acc, budget, res.rounds);
	print(&res);
	rc = res.verified == 0 ? 1 : 0;
	if (res.verified == 0)
		fprintf(stderr, "gw-bench: stream rx: the received sum differs from the in-process decode\n");
out:
	gw_stream_free(s);
	gw_dp_close(dp);
	gw_encoder_free(enc);
	gw_ef_free(ef);
	free(acc);
	free(vals);
	return rc;
}
