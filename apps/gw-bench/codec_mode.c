/* gw-bench codec: one codec (or zstd, for comparison) on a real trace or
 * synthetic data — elements, frames, bytes, bits per value, encode and
 * decode GB/s, memcpy GB/s of the same size measured in the same run, and
 * the error of one round. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/codec.h>

#include "bench.h"
#include "gw_rand.h"

#ifdef GW_HAVE_ZSTD
#include <zstd.h>
#endif

struct input {
	uint64_t dim, nnz;     /* nnz == dim for dense input */
	float *values;
	uint32_t *keys;        /* NULL for dense */
	float *dense;          /* the tensor as a dense vector, for errors */
	const char *what;
};

struct frames {
	uint8_t *buf;
	size_t cap, used;
	size_t *off;
	size_t n, off_cap;
};

struct run {
	gw_encoder *enc;
	/* --shared-scale: every frame on this scale (summable codecs), as
	 * an allreduce's workers encode once a round has named it. */
	bool shared;
	float scale;
	gw_tensor t;
	size_t budget;
	struct frames fr;
	float *out;
	int err;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-bench codec --codec NAME[:KEY=VALUE,...] [--param KEY=VALUE]...\n"
"                      (--input FILE.f32 | --keys FILE.u32 --values FILE.f32 [--dim D]\n"
"                       | --synthetic N [--seed S])\n"
"                      [--mtu BYTES] [--backend NAME] [--no-ef] [--shared-scale]\n"
"                      [--min-time SEC] [--json]\n\n"
"  --codec NAME       a registered codec (");
	int ids[64], n = gw_codec_list(ids, 64);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", gw_codec_name(ids[i]));
	fprintf(f, "), or zstd (libzstd, whole buffer)\n"
"  --param KEY=VALUE  codec parameter (max_frame_elems, sparsity, seed, fraction,\n"
"                     ...; names for the enumerated ones: index=bloom,\n"
"                     policy=p2, value=poly, sparsifier=topr; zstd: level)\n"
"                     e.g. --codec deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly\n"
"  --input FILE.f32   dense little-endian float32 tensor\n"
"  --keys/--values    sparse tensor: ascending u32 keys and float32 values\n"
"  --dim D            sparse dimension (default: 2^20, or max key + 1 if larger)\n"
"  --synthetic N      N float32 values, gradient-like (25%% exact zeros), seeded\n"
"  --mtu BYTES        the link's MTU: IP MTU for udp and dpdk, frame budget\n"
"                     MTU - %u (default 1500); rdma: the path MTU, budget\n"
"                     MTU - 48 (default 4096)\n"
"  --backend NAME     udp (default), dpdk or rdma: the headers each packet\n"
"                     pays on the wire, reported as wire_bytes and\n"
"                     wire_bits_per_value (Ethernet header and FCS counted)\n"
"  --no-ef            encode without error feedback (default: on for lossy codecs)\n"
"  --shared-scale     hq: every frame on one scale (the input's max |x|), as an\n"
"                     allreduce's workers encode once a round has named it\n"
"  --min-time SEC     time per measurement (default 0.5)\n"
"  --json             one JSON object instead of the table\n", GW_PKT_RESERVE);
}

/* Laplace-distributed values (scale 1e-3) with a quarter exact zeros:
 * roughly the shape of the CNN traces, without the extreme outliers of a
 * Cauchy tail that would make every max-scaled codec look sparse. */
static void synth(struct input *in, uint64_t n, uint64_t seed)
{
	in->dim = in->nnz = n;
	in->values = malloc((n ? n : 1) * sizeof(float));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = gw_splitmix64(&seed);
		double u = ((r >> 11) + 0.5) / 9007199254740992.0;
		double v = (r & 3) == 0 ? 0.0 : ((r & 4) ? 1e-3 : -1e-3) * -log(u);
		in->values[i] = (float)v;
	}
	in->what = "synthetic";
}

static int load(struct input *in, const char *input, const char *kf,
		const char *vf, uint64_t dim)
{
	size_t len;
	if (input) {
		in->values = bench_read_file(input, &len);
		if (!in->values)
			return -1;
		if (len % 4 || !len) {
			fprintf(stderr, "gw-bench: --input: %s: size %zu is %s\n", input, len,
				len ? "not a multiple of 4" : "empty: nothing to measure");
			return -1;
		}
		in->dim = in->nnz = len / 4;
		in->what = input;
		return 0;
	}
	size_t klen;
	in->keys = bench_read_file(kf, &klen);
	in->values = in->keys ? bench_read_file(vf, &len) : NULL;
	if (!in->values)
		return -1;
	if (!klen) {
		fprintf(stderr, "gw-bench: --keys: %s is empty: nothing to measure\n", kf);
		return -1;
	}
	if (klen % 4 || len != klen) {
		fprintf(stderr, "gw-bench: --keys/--values: %zu key bytes and %zu value bytes do not pair up\n", klen, len);
		return -1;
	}
	in->nnz = klen / 4;
	uint64_t need = in->nnz ? (uint64_t)in->keys[in->nnz - 1] + 1 : 0;
	in->dim = dim ? dim : (need > (1u << 20) ? need : (1u << 20));
	for (uint64_t i = 0; i < in->nnz; i++)
		if (in->keys[i] >= in->dim || (i && in->keys[i] <= in->keys[i - 1])) {
			fprintf(stderr, "gw-bench: --keys: key %llu at entry %llu is not ascending or not below --dim %llu\n",
				(unsigned long long)in->keys[i], (unsigned long long)i,
				(unsigned long long)in->dim);
			return -1;
		}
	in->what = vf;
	return 0;
}

static void densify(struct input *in)
{
	in->dense = calloc(in->dim ? in->dim : 1, sizeof(float));
	for (uint64_t i = 0; i < in->nnz; i++)
		in->dense[in->keys ? in->keys[i] : i] = in->values[i];
}

static int push_frame(struct frames *fr, size_t budget)
{
	if (fr->cap - fr->used < budget) {
		size_t cap = fr->cap * 2 + budget;
		uint8_t *b = realloc(fr->buf, cap);
		if (!b)
			return -1;
		fr->buf = b;
		fr->cap = cap;
	}
	if (fr->n == fr->off_cap) {
		size_t c = fr->off_cap * 2 + 64;
		size_t *o = realloc(fr->off, (c + 1) * sizeof(size_t));
		if (!o)
			return -1;
		fr->off = o;
		fr->off_cap = c;
	}
	return 0;
}

static void encode_all(void *p)
{
	struct run *r = p;
	struct frames *fr = &r->fr;
	fr->used = fr->n = 0;
	int rc = gw_encode_begin(r->enc, &r->t);
	while (rc >= 0) {
		if (push_frame(fr, r->budget) < 0) {
			rc = GW_ENOMEM;
			break;
		}
		if (r->shared &&
		    (rc = gw_encoder_set_shared(r->enc, r->scale, (uint32_t)fr->n + 1)) < 0)
			break;
		rc = gw_encode_next(r->enc, fr->buf + fr->used, r->budget);
		if (rc <= 0)
			break;
		fr->off[fr->n++] = fr->used;
		fr->used += (size_t)rc;
	}
	if (fr->off)
		fr->off[fr->n] = fr->used;
	if (rc < 0)
		r->err = rc;
}

static void decode_all(void *p)
{
	struct run *r = p;
	for (size_t i = 0; i < r->fr.n; i++) {
		int rc = gw_decode(r->fr.buf + r->fr.off[i],
				   r->fr.off[i + 1] - r->fr.off[i], r->out, r->t.dim);
		if (rc < 0)
			r->err = rc;
	}
}

/* What one packet costs on the wire below gradwire's 32-byte header, per
 * backend: Ethernet header and FCS counted (18), preamble and gap not.
 * udp and dpdk: IPv4 20 + UDP 8. rdma (RoCEv2, docs/wire-format.md §5.9):
 * IPv4 20 + UDP 8 + BTH 12 + DETH 8 + immediate 4 + ICRC 4. mtu_budget:
 * what --mtu leaves a frame (an IP MTU for udp and dpdk; the RDMA path
 * MTU, the UD payload, for rdma; the 16-byte MAC room kept in both). */
struct link {
	const char *name;
	unsigned below;          /* bytes per packet under the gradwire header */
	unsigned reserve;        /* --mtu minus the frame budget */
	uint64_t mtu_def;
};

static const struct link links[] = {
	{"udp", 18 + 20 + 8, GW_PKT_RESERVE, 1500},
	{"dpdk", 18 + 20 + 8, GW_PKT_RESERVE, 1500},
	{"rdma", 18 + 20 + 8 + 12 + 8 + 4 + 4, 32 + 16, 4096},
};

struct result {
	const char *codec;
	const struct link *link;
	uint64_t packets;        /* one round: one per frame (zstd: its blob cut
				  * into packets of the budget) */
	uint64_t elements, frames, bytes;
	uint64_t ef_bytes;      /* bytes of the last timed encode: feedback on,
				 * after many rounds of the same gradient */
	double input_bytes, enc_s, dec_s, memcpy_gbps, max_abs, rel_l2;
	bool sparse, have_parts;  /* parts: the codec split its frames' bytes */
	gw_frame_parts parts;     /* summed over the one-round frames */
};

/* Sums where the frames' bytes go, if the codec says. */
static void sum_parts(const struct frames *fr, struct result *res)
{
	res->have_parts = fr->n > 0;
	for (size_t i = 0; i < fr->n && res->have_parts; i++) {
		gw_frame_parts p;
		if (gw_frame_parts_of(fr->buf + fr->off[i], fr->off[i + 1] - fr->off[i], &p) < 0) {
			res->have_parts = false;
			break;
		}
		res->parts.header += p.header;
		res->parts.params += p.params;
		res->parts.keys += p.keys;
		res->parts.tables += p.tables;
		res->parts.values += p.values;
	}
}

static void errors(const struct input *in, const float *out, struct result *res)
{
	double num = 0, den = 0, mx = 0;
	for (uint64_t i = 0; i < in->dim; i++) {
		double d = fabs((double)out[i] - in->dense[i]);
		mx = d > mx || isnan(d) ? d : mx;
		num += d * d;
		den += (double)in->dense[i] * in->dense[i];
	}
	res->max_abs = mx;
	res->rel_l2 = den > 0 ? sqrt(num / den) : (num > 0 ? INFINITY : 0);
}

static int run_codec(const struct input *in, int id, char **params, int np,
		     size_t budget, bool ef, bool shared, double min_s, struct result *res)
{
	struct run r = {0};
	r.budget = budget;
	r.shared = shared;
	for (uint64_t i = 0; shared && i < in->nnz; i++)
		r.scale = fmaxf(r.scale, fabsf(in->values[i]));
	r.t = (gw_tensor){.id = 1, .dim = in->dim, .values = in->values,
			  .keys = in->keys, .nnz = in->nnz, .key_bits = 32};
	gw_encoder *enc[2] = {gw_encoder_create(id), gw_encoder_create(id)};
	gw_ef *e = NULL;
	int rc = -1;
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < np; i++) {
			/* One call per --param (or codec string) so the message
			 * names the argument it came from. */
			if (gw_encoder_set_params(enc[k], params[i]) < 0) {
				fprintf(stderr, "gw-bench: --param %s: %s\n", params[i],
					gw_error_detail());
				goto out;
			}
		}
	if (gw_encoder_check_params(enc[0]) < 0) {
		fprintf(stderr, "gw-bench: --param: %s\n", gw_error_detail());
		goto out;
	}
	int min = gw_encode_min_budget(enc[0], &r.t);
	if (min > 0 && budget < (size_t)min) {
		fprintf(stderr, "gw-bench: --mtu: frame budget %zu is below codec %s's minimum %d\n",
			budget, gw_codec_name(id), min);
		goto out;
	}
	/* The error of one round, before feedback has anything to carry. */
	r.enc = enc[1];
	r.out = calloc(in->dim ? in->dim : 1, sizeof(float));
	encode_all(&r);
	decode_all(&r);
	if (r.err < 0) {
		if (r.err == GW_EBOUNDS && np)
			/* Each value was within its own bounds; the codec refused
			 * them together (sketchml: powers of two, groups <= quantiles). */
			fprintf(stderr, "gw-bench: --param: codec %s refuses this combination of parameters: %s\n",
				gw_codec_name(id), gw_strerror(r.err));
		else
			fprintf(stderr, "gw-bench: codec %s failed: %s\n", gw_codec_name(id), gw_strerror(r.err));
		goto out;
	}
	errors(in, r.out, res);
	res->frames = r.fr.n;
	res->bytes = r.fr.used;
	sum_parts(&r.fr, res);

	if (ef && (gw_codec_caps(id) & GW_CODEC_LOSSY)) {
		e = gw_ef_create(in->dim);
		gw_encoder_set_ef(enc[0], e);
	}
	r.enc = enc[0];
	res->enc_s = bench_time(encode_all, &r, min_s);
	res->ef_bytes = r.fr.used;
	res->dec_s = bench_time(decode_all, &r, min_s);
	rc = r.err;
	if (rc < 0)
		fprintf(stderr, "gw-bench: codec %s failed while timed: %s\n", gw_codec_name(id), gw_strerror(rc));
out:
	gw_encoder_free(enc[0]);
	gw_encoder_free(enc[1]);
	gw_ef_free(e);
	free(r.fr.buf);
	free(r.fr.off);
	free(r.out);
	return rc < 0 ? -1 : 0;
}

#ifdef GW_HAVE_ZSTD
struct zrun {
	const void *src;
	size_t n, cn;
	void *dst, *back;
	size_t cap;
	int level;
};
static void zenc(void *p)
{
	struct zrun *z = p;
	z->cn = ZSTD_compress(z->dst, z->cap, z->src, z->n, z->level);
}
static void zdec(void *p)
{
	struct zrun *z = p;
	ZSTD_decompress(z->back, z->n, z->dst, z->cn);
}
#endif

static int run_zstd(const struct input *in, char **params, int np, double min_s,
		    struct result *res)
{
#ifdef GW_HAVE_ZSTD
	double level = 1;
	for (int i = 0; i < np; i++)
		if (strncmp(params[i], "level=", 6) ||
		    !bench_num("param level", params[i] + 6, ZSTD_minCLevel(), ZSTD_maxCLevel(),
			       &level)) {
			if (strncmp(params[i], "level=", 6))
				fprintf(stderr, "gw-bench: --param %s: zstd takes only level=N\n", params[i]);
			return -1;
		}
	if (in->keys) {
		fprintf(stderr, "gw-bench: --codec zstd: dense --input or --synthetic only\n");
		return -1;
	}
	struct zrun z = {.src = in->values, .n = in->nnz * 4, .level = (int)level};
	z.cap = ZSTD_compressBound(z.n);
	z.dst = malloc(z.cap);
	z.back = malloc(z.n ? z.n : 1);
	zenc(&z);
	zdec(&z);
	if (ZSTD_isError(z.cn) || memcmp(z.back, z.src, z.n)) {
		fprintf(stderr, "gw-bench: zstd round trip failed\n");
		return -1;
	}
	res->bytes = res->ef_bytes = z.cn;
	res->frames = 1;
	res->max_abs = res->rel_l2 = 0;
	res->enc_s = bench_time(zenc, &z, min_s);
	res->dec_s = bench_time(zdec, &z, min_s);
	free(z.dst);
	free(z.back);
	return 0;
#else
	(void)in, (void)params, (void)np, (void)min_s, (void)res;
	fprintf(stderr, "gw-bench: --codec zstd: built without libzstd\n");
	return -1;
#endif
}

/* One round's frames on the wire: the frame bytes, then per packet the
 * gradwire header and what the backend puts under it. */
static uint64_t wire_bytes(const struct result *r)
{
	return r->bytes + r->packets * (32u + r->link->below);
}

static void print_json(const struct result *r, double bpv, double eg, double dg)
{
	double e = (double)r->elements;
	const struct app_json_member m[] = {
		APP_JS("codec", r->codec), APP_JU("elements", r->elements),
		APP_JU("frames", r->frames), APP_JU("bytes", r->bytes),
		APP_JF("bits_per_value", 4, bpv), APP_JF("encode_gbps", 3, eg),
		APP_JF("decode_gbps", 3, dg), APP_JF("memcpy_gbps", 3, r->memcpy_gbps),
		APP_JG("max_abs_err", 6, r->max_abs), APP_JG("rel_l2_err", 6, r->rel_l2),
		APP_JF("input_bytes", 0, r->input_bytes),
		APP_JF("encode_vs_memcpy", 3, eg / r->memcpy_gbps),
		APP_JF("decode_vs_memcpy", 3, dg / r->memcpy_gbps),
		APP_JF("ef_bits_per_value", 4, e ? r->ef_bytes * 8.0 / e : 0),
		APP_JS("backend", r->link->name), APP_JU("packets", r->packets),
		APP_JU("wire_bytes", wire_bytes(r)),
		APP_JF("packet_bits_per_value", 4, e ? (r->bytes + 32.0 * r->packets) * 8 / e : 0),
		APP_JF("wire_bits_per_value", 4, e ? wire_bytes(r) * 8.0 / e : 0),
	};
	/* Sparse input: bytes per entry, and how much smaller than 8- and
	 * 12-byte (key, value) pairs. */
	const struct app_json_member sparse[] = {
		APP_JF("bytes_per_entry", 4, e ? r->bytes / e : 0),
		APP_JF("vs_pairs8", 3, r->bytes ? 8 * e / r->bytes : 0),
		APP_JF("vs_pairs12", 3, r->bytes ? 12 * e / r->bytes : 0),
	};
	const struct app_json_member parts[] = {
		APP_JU("header", r->parts.header), APP_JU("params", r->parts.params),
		APP_JU("keys", r->parts.keys), APP_JU("tables", r->parts.tables),
		APP_JU("values", r->parts.values),
	};
	struct app_json j;
	app_json_begin(&j, stdout, true);
	app_json_members(&j, m, APP_JSON_N(m));
	if (r->sparse)
		app_json_members(&j, sparse, APP_JSON_N(sparse));
	if (r->have_parts) {
		app_json_f(&j, "key_bytes_per_key", 4, e ? r->parts.keys / e : 0);
		app_json_object(&j, "parts");
		app_json_members(&j, parts, APP_JSON_N(parts));
		app_json_end(&j);
	}
	app_json_end(&j);
}

static void print(const struct result *r, bool json)
{
	double bpv = r->elements ? r->bytes * 8.0 / r->elements : 0;
	double eg = r->input_bytes / r->enc_s / 1e9, dg = r->input_bytes / r->dec_s / 1e9;
	double e = (double)r->elements;
	if (json) {
		print_json(r, bpv, eg, dg);
		return;
	}
	printf("  ---------------------- codec %s ----------------------\n", r->codec);
	printf("  elements: %-14llu frames: %-10llu bytes: %llu\n",
	       (unsigned long long)r->elements, (unsigned long long)r->frames,
	       (unsigned long long)r->bytes);
	printf("  bits/value: %-12.4f ratio vs float32: %.2fx   with feedback, steady: %.4f\n",
	       bpv, r->bytes ? r->input_bytes / r->bytes : 0,
	       r->elements ? r->ef_bytes * 8.0 / r->elements : 0);
	printf("  encode: %8.3f GB/s  decode: %8.3f GB/s  memcpy: %8.3f GB/s\n",
	       eg, dg, r->memcpy_gbps);
	printf("  error: max abs %.6g  relative L2 %.6g\n", r->max_abs, r->rel_l2);
	printf("  on the wire (%s): %llu packets, %llu bytes, %.4f bits/value "
	       "(gradwire headers only: %.4f)\n", r->link->name,
	       (unsigned long long)r->packets, (unsigned long long)wire_bytes(r),
	       e ? wire_bytes(r) * 8.0 / e : 0, e ? (r->bytes + 32.0 * r->packets) * 8 / e : 0);
	if (r->sparse)
		printf("  bytes/entry: %.4f  vs 8-byte pairs: %.2fx smaller  vs 12-byte: %.2fx\n",
		       e ? r->bytes / e : 0, r->bytes ? 8 * e / r->bytes : 0,
		       r->bytes ? 12 * e / r->bytes : 0);
	if (r->have_parts)
		printf("  key bytes/key: %.4f  (bytes: header %u, params %u, keys %u, tables %u, values %u)\n",
		       e ? r->parts.keys / e : 0, r->parts.header, r->parts.params,
		       r->parts.keys, r->parts.tables, r->parts.values);
	printf("  ----------------------------------------------------------\n");
}

int bench_codec_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"codec", required_argument, 0, 'c'}, {"param", required_argument, 0, 'p'},
		{"input", required_argument, 0, 'i'}, {"keys", required_argument, 0, 'k'},
		{"values", required_argument, 0, 'v'}, {"dim", required_argument, 0, 'd'},
		{"synthetic", required_argument, 0, 's'}, {"seed", required_argument, 0, 'S'},
		{"mtu", required_argument, 0, 'm'}, {"no-ef", no_argument, 0, 'n'},
		{"min-time", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
		{"backend", required_argument, 0, 'b'}, {"shared-scale", no_argument, 0, 'H'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *codec = NULL, *input = NULL, *kf = NULL, *vf = NULL;
	char *params[32];
	int np = 0, c;
	uint64_t dim = 0, synthetic = 0, seed = 1, mtu = 0;
	bool json = false, ef = true, have_syn = false, shared = false;
	const struct link *link = &links[0];
	double min_s = 0.5;

	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'c': codec = optarg; break;
		case 'p':
			if (!strchr(optarg, '=') || np == 32) {
				fprintf(stderr, "gw-bench: --param: '%s' is not KEY=VALUE (at most 32)\n", optarg);
				return BENCH_EUSAGE;
			}
			params[np++] = optarg;
			break;
		case 'i': input = optarg; break;
		case 'k': kf = optarg; break;
		case 'v': vf = optarg; break;
		case 'd': ok = bench_u64("dim", optarg, 1, UINT32_MAX + 1ull, &dim); break;
		case 's': ok = bench_u64("synthetic", optarg, 1, 1ull << 31, &synthetic);
			have_syn = true; break;
		case 'S': ok = bench_u64("seed", optarg, 0, UINT64_MAX, &seed); break;
		case 'm': ok = bench_u64("mtu", optarg, 1, UINT32_MAX, &mtu); break;
		case 'b':
			link = NULL;
			for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
				if (!strcmp(optarg, links[i].name))
					link = &links[i];
			if (!link) {
				fprintf(stderr, "gw-bench: --backend: '%s' is not udp, dpdk or rdma\n",
					optarg);
				return BENCH_EUSAGE;
			}
			break;
		case 'n': ef = false; break;
		case 'H': shared = true; break;
		case 't': ok = bench_num("min-time", optarg, 0.001, 60, &min_s); break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: app_bad_option("gw-bench", "gw-bench codec", argv, ""); return BENCH_EUSAGE;
		}
		if (!ok)
			return BENCH_EUSAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "gw-bench: unexpected argument '%s'\n", argv[optind]);
		return BENCH_EUSAGE;
	}
	/* The range depends on --backend, which may come after --mtu. */
	if (!mtu)
		mtu = link->mtu_def;
	if (mtu < link->reserve + GW_BUDGET_MIN || mtu > GW_FRAME_MAX + link->reserve) {
		fprintf(stderr, "gw-bench: --mtu: %llu is not in %u..%u for %s\n",
			(unsigned long long)mtu, link->reserve + GW_BUDGET_MIN,
			GW_FRAME_MAX + link->reserve, link->name);
		return BENCH_EUSAGE;
	}
	if (!codec) {
		fprintf(stderr, "gw-bench: --codec: required\n");
		usage(stderr);
		return BENCH_EUSAGE;
	}
	/* A codec string "name:param=value,..." is the name plus one more
	 * --param list. */
	char cname[32];
	size_t cn = strcspn(codec, ":");
	snprintf(cname, sizeof(cname), "%.*s", (int)(cn < sizeof(cname) - 1 ? cn : sizeof(cname) - 1), codec);
	if (codec[cn] == ':') {
		if (np == 32 || !codec[cn + 1]) {
			fprintf(stderr, "gw-bench: --codec: '%s': no parameters after ':' (or too many --param)\n",
				codec);
			return BENCH_EUSAGE;
		}
		params[np++] = (char *)codec + cn + 1;
	}
	int id = strcmp(cname, "zstd") ? gw_codec_by_name(cname) : 0;
	if (id < 0) {
		fprintf(stderr, "gw-bench: --codec: unknown codec '%s'\n", cname);
		return BENCH_EUSAGE;
	}
	if (id == GW_CODEC_COUNTSKETCH) {
		/* Its frames decode into the sketch table, not the tensor: no
		 * round-trip error to measure here. */
		fprintf(stderr, "gw-bench: --codec: countsketch frames are sketch tables, "
			"not the tensor; bench/sketched.sh measures Sketched-SGD\n");
		return BENCH_EUSAGE;
	}
	int sources = !!input + !!(kf || vf) + have_syn;
	if (sources != 1 || (kf && !vf) || (vf && !kf)) {
		fprintf(stderr, "gw-bench: --input, --keys/--values, --synthetic: give exactly one input\n");
		return BENCH_EUSAGE;
	}
	if (dim && !kf) {
		fprintf(stderr, "gw-bench: --dim: only with --keys/--values\n");
		return BENCH_EUSAGE;
	}

	if (shared && (!id || id != GW_CODEC_HQ)) {
		fprintf(stderr, "gw-bench: --shared-scale: only for a summable codec (hq), not %s\n",
			codec);
		return BENCH_EUSAGE;
	}
	struct input in = {0};
	if (have_syn)
		synth(&in, synthetic, seed);
	else if (load(&in, input, kf, vf, dim) < 0) {
		free(in.values);   /* what load read before it refused it */
		free(in.keys);
		return 1;
	}
	densify(&in);

	struct result res = {.codec = codec, .link = link, .elements = in.nnz,
			     .sparse = in.keys != NULL};
	res.input_bytes = (double)in.nnz * (in.keys ? 8 : 4);
	res.memcpy_gbps = bench_memcpy_gbps((size_t)res.input_bytes, min_s);
	size_t budget = mtu - link->reserve;
	int rc = id ? run_codec(&in, id, params, np, budget, ef, shared, min_s, &res)
		    : run_zstd(&in, params, np, min_s, &res);
	/* A frame is a packet; zstd's one blob is cut into budget-sized
	 * pieces, none of which decodes alone. */
	res.packets = id ? res.frames : (res.bytes + budget - 1) / budget;
	if (rc == 0)
		print(&res, json);
	free(in.values);
	free(in.keys);
	free(in.dense);
	return rc ? 1 : 0;
}
