/* stream_peer: one end of a reliable gradient stream, for tests that run
 * the two ends as separate processes (on one host, across network
 * namespaces, over any backend).
 *
 *   stream_peer [EAL args --] --backend udp|dpdk --role tx|rx
 *               --local IP:PORT [--peer IP:PORT] [--codec NAME]
 *               [--param KEY=VALUE]... [--no-ef] [--no-frames] [--mtu BYTES]
 *               (--input FILE.f32 | --sparse STEM)... [--dim D]
 *               [--rounds R] [--job J] [--window W] [--rto-us US]
 *               [--timeout-ms MS] [--linger-ms MS] [--opts K=V,...]
 *               [--ready FILE] [--out FILE] [--stats FILE]
 *
 * tx: for each round, for each tensor (in the order given; tensor id = its
 * index), encodes the tensor with the codec (error feedback on for lossy
 * codecs, carried across rounds) straight into packet buffers and sends it
 * with gw_stream_send() to --peer. rx: receives the same sequence with
 * gw_stream_recv(), decode-accumulating every frame into one float32
 * vector per tensor, lingers, then writes the vectors, concatenated, to
 * --out. --ready FILE (written atomically once the dataplane is open)
 * holds the local endpoint, so a driver can start rx on port 0 and hand its
 * port to tx. --stats FILE gets "key value" lines: the stream's and the
 * dataplane's counters and the elapsed time.
 *
 * The stream runs with cfg.frames (each frame's own checksum covers it;
 * the packet checksum only the header) unless --no-frames, which makes the
 * packet checksum cover the frame too.
 *
 * Arguments before "--" are the backend's (DPDK EAL), as DPDK tools take
 * them. --sparse STEM reads STEM.keys.u32 and STEM.vals.f32 (ascending u32
 * keys), dimension --dim (default 2^20). Frame budget: --mtu minus
 * GW_PKT_RESERVE (default MTU 1500), capped by the backend's payload.
 *
 * Exit: 0 done, 1 failed, 2 bad arguments, 77 backend not available here.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gw/codec.h>
#include <gw/dataplane.h>
#include <gw/stream.h>

#include "gw_util.h"

#define MAX_TENSORS 64
#define MAX_PARAMS 16

struct tensor {
	const char *name;
	float *vals;
	uint32_t *keys;          /* NULL: dense */
	uint64_t dim, nnz;
	float *acc;              /* rx */
	gw_encoder *enc;         /* tx */
	gw_ef *ef;
};

struct fill_ctx {
	gw_encoder *enc;
	size_t budget;
};

struct deliver_ctx {
	uint32_t id;
	float *acc;
	uint64_t dim;
	int frames;      /* the stream runs with cfg.frames */
};

static void *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "stream_peer: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	void *buf = NULL;
	long sz = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		sz = ftell(f);
	if (sz >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(sz ? (size_t)sz : 1);
		if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	if (!buf)
		fprintf(stderr, "stream_peer: %s: cannot read\n", path);
	else
		*len = (size_t)sz;
	return buf;
}

static int load_dense(struct tensor *t, const char *path)
{
	size_t len = 0;
	t->name = path;
	t->vals = read_file(path, &len);
	if (!t->vals)
		return -1;
	if (len % 4 || !len) {
		fprintf(stderr, "stream_peer: --input %s: size %zu is not a positive multiple of 4\n",
			path, len);
		return -1;
	}
	t->dim = t->nnz = len / 4;
	return 0;
}

static int load_sparse(struct tensor *t, const char *stem, uint64_t dim)
{
	char kp[4096], vp[4096];
	size_t kl = 0, vl = 0;
	if (snprintf(kp, sizeof kp, "%s.keys.u32", stem) >= (int)sizeof kp ||
	    snprintf(vp, sizeof vp, "%s.vals.f32", stem) >= (int)sizeof vp) {
		fprintf(stderr, "stream_peer: --sparse: path too long\n");
		return -1;
	}
	t->name = stem;
	t->keys = read_file(kp, &kl);
	t->vals = t->keys ? read_file(vp, &vl) : NULL;
	if (!t->vals)
		return -1;
	if (kl % 4 || kl != vl) {
		fprintf(stderr, "stream_peer: --sparse %s: %zu key bytes, %zu value bytes\n",
			stem, kl, vl);
		return -1;
	}
	t->nnz = kl / 4;
	t->dim = dim;
	for (uint64_t i = 0; i < t->nnz; i++)
		if (t->keys[i] >= dim || (i && t->keys[i] <= t->keys[i - 1])) {
			fprintf(stderr, "stream_peer: --sparse %s: key %llu not ascending below %llu\n",
				stem, (unsigned long long)i, (unsigned long long)dim);
			return -1;
		}
	return 0;
}

static int fill_cb(void *arg, uint32_t chunk, uint8_t *buf, size_t room)
{
	struct fill_ctx *f = arg;
	(void)chunk;
	return gw_encode_next(f->enc, buf, room < f->budget ? room : f->budget);
}

/* With --no-frames the packet checksum has covered the frame, so any error
 * aborts. Otherwise a frame that fails is checked whole: one whose header
 * or checksum does not verify was damaged on the way (GW_ECHECKSUM: the
 * stream drops it and awaits the retransmission); an intact one that does
 * not belong here aborts the receive. */
static int deliver_cb(void *arg, uint32_t chunk, const uint8_t *frame, size_t len)
{
	struct deliver_ctx *d = arg;
	gw_frame_info fi;
	(void)chunk;
	int rc = gw_frame_peek(frame, len, &fi);
	if (rc >= 0 && fi.tensor != d->id)
		rc = GW_ERANGE;
	if (rc >= 0)
		rc = gw_decode(frame, len, d->acc, d->dim);
	if (rc < 0 && d->frames && gw_frame_verify(frame, len, &fi) < 0)
		return GW_ECHECKSUM;
	return rc < 0 ? rc : 0;
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
		     uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (!*s || *end || errno || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "stream_peer: %s: '%s' is not an integer in [%llu, %llu]\n",
			opt, s, (unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: stream_peer [EAL args --] --backend udp|dpdk --role tx|rx --local IP:PORT\n"
"       [--peer IP:PORT] [--codec NAME] [--param K=V]... [--no-ef] [--no-frames]\n"
"       [--mtu BYTES]\n"
"       (--input FILE.f32 | --sparse STEM)... [--dim D] [--rounds R] [--job J]\n"
"       [--window W] [--rto-us US] [--timeout-ms MS] [--linger-ms MS]\n"
"       [--opts K=V,...] [--ready FILE] [--out FILE] [--stats FILE]\n");
}

static int write_stats(const char *path, const gw_stream_stats *st,
		       const gw_dp_stats *ds, double elapsed, uint64_t chunks)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "stream_peer: --stats %s: %s\n", path, strerror(errno));
		return -1;
	}
#define S(k, v) fprintf(f, "%s %llu\n", k, (unsigned long long)(v))
	S("chunks", chunks);
	S("chunks_sent", st->chunks_sent);
	S("retransmits", st->retransmits);
	S("acks_sent", st->acks_sent);
	S("acks_received", st->acks_received);
	S("delivered", st->delivered);
	S("duplicates", st->duplicates);
	S("bad", st->bad);
	S("foreign", st->foreign);
	S("stale", st->stale);
	S("corrupt", st->corrupt);
	S("dp_rx_pkts", ds->rx_pkts);
	S("dp_tx_pkts", ds->tx_pkts);
	S("dp_rx_bytes", ds->rx_bytes);
	S("dp_tx_bytes", ds->tx_bytes);
	S("dp_rx_bad", ds->rx_bad);
	S("dp_tx_full", ds->tx_full);
	S("dp_idle_waits", ds->idle_waits);
	S("dp_impair_lost", ds->impair_lost);
	S("dp_impair_reordered", ds->impair_reordered);
	S("dp_impair_duplicated", ds->impair_duplicated);
	S("dp_impair_corrupted", ds->impair_corrupted);
	S("dp_impair_txfull", ds->impair_txfull);
	S("elapsed_us", (uint64_t)(elapsed * 1e6));
#undef S
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	/* Backend (EAL) arguments come before "--", ours after. */
	int dd = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dd = i;
			break;
		}
	char **oargv = argv;
	int oargc = argc;
	if (dd) {
		oargv = argv + dd;   /* oargv[0] is "--": getopt skips index 0 */
		oargc = argc - dd;
	}

	static const struct option lopts[] = {
		{"backend", required_argument, 0, 'b'}, {"role", required_argument, 0, 'r'},
		{"local", required_argument, 0, 'l'}, {"peer", required_argument, 0, 'p'},
		{"codec", required_argument, 0, 'c'}, {"param", required_argument, 0, 'P'},
		{"no-ef", no_argument, 0, 'n'}, {"mtu", required_argument, 0, 'm'},
		{"no-frames", no_argument, 0, 'F'},
		{"input", required_argument, 0, 'i'}, {"sparse", required_argument, 0, 's'},
		{"dim", required_argument, 0, 'd'}, {"rounds", required_argument, 0, 'R'},
		{"job", required_argument, 0, 'j'}, {"window", required_argument, 0, 'w'},
		{"rto-us", required_argument, 0, 'T'}, {"timeout-ms", required_argument, 0, 't'},
		{"linger-ms", required_argument, 0, 'L'}, {"opts", required_argument, 0, 'o'},
		{"ready", required_argument, 0, 'y'}, {"out", required_argument, 0, 'O'},
		{"stats", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0}};
	const char *backend = NULL, *role = NULL, *local = NULL, *peer = NULL;
	const char *codec = "raw", *opts = NULL, *ready = NULL, *out = NULL, *stats = NULL;
	const char *inputs[MAX_TENSORS], *params[MAX_PARAMS];
	int is_sparse[MAX_TENSORS], ni = 0, np = 0, ef_on = 1, frames = 1, c;
	uint64_t mtu = 1500, dim = 1u << 20, rounds = 1, job = 1, window = 0, rto = 0;
	uint64_t timeout = 20000, linger = 300;

	optind = 1;
	while ((c = getopt_long(oargc, oargv, "", lopts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'b': backend = optarg; break;
		case 'r': role = optarg; break;
		case 'l': local = optarg; break;
		case 'p': peer = optarg; break;
		case 'c': codec = optarg; break;
		case 'P':
			if (np == MAX_PARAMS || !strchr(optarg, '=')) {
				fprintf(stderr, "stream_peer: --param: '%s' is not KEY=VALUE (at most %d)\n",
					optarg, MAX_PARAMS);
				return 2;
			}
			params[np++] = optarg;
			break;
		case 'n': ef_on = 0; break;
		case 'F': frames = 0; break;
		case 'm': bad = parse_u64("--mtu", optarg, GW_PKT_RESERVE + GW_BUDGET_MIN,
					  GW_FRAME_MAX + GW_PKT_RESERVE, &mtu); break;
		case 'i':
		case 's':
			if (ni == MAX_TENSORS) {
				fprintf(stderr, "stream_peer: --input/--sparse: at most %d tensors\n",
					MAX_TENSORS);
				return 2;
			}
			is_sparse[ni] = c == 's';
			inputs[ni++] = optarg;
			break;
		case 'd': bad = parse_u64("--dim", optarg, 1, 1ull << 32, &dim); break;
		case 'R': bad = parse_u64("--rounds", optarg, 1, 1000000, &rounds); break;
		case 'j': bad = parse_u64("--job", optarg, 0, UINT32_MAX, &job); break;
		case 'w': bad = parse_u64("--window", optarg, 1, GW_STREAM_WINDOW_MAX, &window); break;
		case 'T': bad = parse_u64("--rto-us", optarg, 1, 10000000, &rto); break;
		case 't': bad = parse_u64("--timeout-ms", optarg, 1, 3600000, &timeout); break;
		case 'L': bad = parse_u64("--linger-ms", optarg, 0, 60000, &linger); break;
		case 'o': opts = optarg; break;
		case 'y': ready = optarg; break;
		case 'O': out = optarg; break;
		case 'S': stats = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (bad)
			return 2;
	}
	if (optind < oargc) {
		fprintf(stderr, "stream_peer: unexpected argument '%s'\n", oargv[optind]);
		return 2;
	}
	if (!backend || !role || !local || !ni) {
		fprintf(stderr, "stream_peer: %s: required\n",
			!backend ? "--backend" : !role ? "--role" : !local ? "--local"
							   : "--input or --sparse");
		usage(stderr);
		return 2;
	}
	int tx = !strcmp(role, "tx");
	if (!tx && strcmp(role, "rx")) {
		fprintf(stderr, "stream_peer: --role: '%s' is neither tx nor rx\n", role);
		return 2;
	}
	gw_endpoint lep, pep;
	if (gw_endpoint_parse(local, &lep) < 0) {
		fprintf(stderr, "stream_peer: --local: '%s' is not IP:PORT\n", local);
		return 2;
	}
	if (tx && !peer) {
		fprintf(stderr, "stream_peer: --peer: required with --role tx\n");
		return 2;
	}
	if (peer && gw_endpoint_parse(peer, &pep) < 0) {
		fprintf(stderr, "stream_peer: --peer: '%s' is not IP:PORT\n", peer);
		return 2;
	}
	int id = gw_codec_by_name(codec);
	if (id < 0) {
		fprintf(stderr, "stream_peer: --codec: unknown codec '%s'\n", codec);
		return 2;
	}
	int known = 0;
	for (const char *const *b = gw_dp_backends(); *b; b++)
		known |= !strcmp(*b, backend);
	if (!known) {
		int exists = !strcmp(backend, "udp") || !strcmp(backend, "dpdk");
		fprintf(stderr, "stream_peer: --backend: '%s' %s\n", backend,
			exists ? "is not built into this library" : "is not a backend");
		return exists ? 77 : 2;
	}

	struct tensor ts[MAX_TENSORS];
	memset(ts, 0, sizeof ts);
	int rc = 1;
	gw_dp *dp = NULL;
	gw_stream *s = NULL;
	for (int i = 0; i < ni; i++)
		if ((is_sparse[i] ? load_sparse(&ts[i], inputs[i], dim)
				  : load_dense(&ts[i], inputs[i])) < 0)
			goto out;

	gw_dp_config dc = {.backend = backend, .local = lep, .opts = opts,
			   .argc = dd ? dd : 1, .argv = argv};
	int drc = gw_dp_open(&dc, &dp);
	if (drc < 0) {
		fprintf(stderr, "stream_peer: --backend %s --local %s --opts %s: %s\n", backend,
			local, opts ? opts : "", gw_strerror(drc));
		rc = drc == GW_EUNSUPPORTED ? 77 : 1;
		goto out;
	}
	gw_stream_config sc = {.job = (uint32_t)job, .rank = tx ? 1 : 0,
			       .window = (uint32_t)window, .rto_us = (uint32_t)rto,
			       .timeout_ms = (uint32_t)timeout, .frames = (uint32_t)frames};
	s = gw_stream_create(dp, &sc);
	if (!s) {
		fprintf(stderr, "stream_peer: gw_stream_create failed (window %llu, payload %u)\n",
			(unsigned long long)window, gw_dp_payload_max(dp));
		goto out;
	}
	if (ready) {
		gw_endpoint me;
		char buf[64], tmp[4096];
		gw_dp_local(dp, &me);
		gw_endpoint_format(&me, buf, sizeof buf);
		snprintf(tmp, sizeof tmp, "%s.tmp", ready);
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%s\n", buf) < 0 || fclose(f) || rename(tmp, ready)) {
			fprintf(stderr, "stream_peer: --ready %s: %s\n", ready, strerror(errno));
			goto out;
		}
	}

	size_t budget = mtu - GW_PKT_RESERVE;
	for (int i = 0; i < ni; i++) {
		if (tx) {
			ts[i].enc = gw_encoder_create(id);
			if (!ts[i].enc)
				goto out;
			for (int k = 0; k < np; k++) {
				char *eq = strchr(params[k], '=');
				*eq = 0;
				int p = gw_param_by_name(params[k]);
				int prc = p < 0 ? p : gw_encoder_set_param(ts[i].enc, p, strtod(eq + 1, NULL));
				*eq = '=';
				if (prc < 0) {
					fprintf(stderr, "stream_peer: --param %s: %s\n", params[k],
						gw_strerror(prc));
					goto out;
				}
			}
			if (ef_on && (gw_codec_caps(id) & GW_CODEC_LOSSY)) {
				ts[i].ef = gw_ef_create(ts[i].dim);
				if (!ts[i].ef || gw_encoder_set_ef(ts[i].enc, ts[i].ef) < 0)
					goto out;
			}
		} else {
			ts[i].acc = calloc(ts[i].dim, sizeof(float));
			if (!ts[i].acc)
				goto out;
		}
	}

	uint64_t chunks = 0;
	double t0 = gw_now_s();
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < ni; i++) {
			int n;
			if (tx) {
				gw_tensor t = {.id = (uint32_t)i, .dim = ts[i].dim,
					       .values = ts[i].vals, .keys = ts[i].keys,
					       .nnz = ts[i].nnz, .key_bits = 32};
				n = gw_encode_begin(ts[i].enc, &t);
				struct fill_ctx fc = {ts[i].enc, budget};
				if (n >= 0)
					n = gw_stream_send(s, &pep, (uint32_t)r, (uint32_t)i,
							   fill_cb, &fc);
				if (n < 0)
					gw_encode_abandon(ts[i].enc);
			} else {
				struct deliver_ctx d = {(uint32_t)i, ts[i].acc, ts[i].dim, frames};
				n = gw_stream_recv(s, (uint32_t)r, (uint32_t)i, deliver_cb, &d);
			}
			if (n < 0) {
				fprintf(stderr, "stream_peer: %s round %llu tensor %d (%s): %s\n",
					role, (unsigned long long)r, i, ts[i].name, gw_strerror(n));
				goto out;
			}
			chunks += (uint64_t)n;
		}
	double elapsed = gw_now_s() - t0;
	if (!tx && linger)
		gw_stream_linger(s, (uint32_t)linger);

	gw_stream_stats st;
	gw_dp_stats ds;
	gw_stream_stats_get(s, &st);
	gw_dp_stats_get(dp, &ds);
	fprintf(stderr, "stream_peer %s: %llu chunks in %.3f s; sent %llu retx %llu acks %llu/%llu "
		"delivered %llu dup %llu bad %llu corrupt %llu foreign %llu stale %llu; "
		"impair lost %llu reord %llu dup %llu corrupt %llu\n",
		role, (unsigned long long)chunks, elapsed,
		(unsigned long long)st.chunks_sent, (unsigned long long)st.retransmits,
		(unsigned long long)st.acks_sent, (unsigned long long)st.acks_received,
		(unsigned long long)st.delivered, (unsigned long long)st.duplicates,
		(unsigned long long)st.bad, (unsigned long long)st.corrupt,
		(unsigned long long)st.foreign, (unsigned long long)st.stale,
		(unsigned long long)ds.impair_lost, (unsigned long long)ds.impair_reordered,
		(unsigned long long)ds.impair_duplicated, (unsigned long long)ds.impair_corrupted);
	if (stats && write_stats(stats, &st, &ds, elapsed, chunks) < 0)
		goto out;
	if (!tx && out) {
		FILE *f = fopen(out, "wb");
		int ok = f != NULL;
		for (int i = 0; ok && i < ni; i++)
			ok = fwrite(ts[i].acc, sizeof(float), ts[i].dim, f) == ts[i].dim;
		if (f && fclose(f))
			ok = 0;
		if (!ok) {
			fprintf(stderr, "stream_peer: --out %s: write failed\n", out);
			goto out;
		}
	}
	rc = 0;
out:
	gw_stream_free(s);
	gw_dp_close(dp);
	for (int i = 0; i < ni; i++) {
		free(ts[i].vals);
		free(ts[i].keys);
		free(ts[i].acc);
		gw_encoder_free(ts[i].enc);
		gw_ef_free(ts[i].ef);
	}
	return rc;
}
