/* gw-bench shard: what a shard's CPU spends per element of the tensor to
 * turn W workers' frames of a chunk into the chunk's result, codec by
 * codec in one run: for decoding codecs, each worker's frame decoded into
 * its part, the parts summed in rank order and the sum encoded with the
 * downlink's error feedback (collective/dense_agg.c's float path); for
 * hq, the codes added as integers and the sum frame written (its integer
 * path). Chunks are what one packet of the MTU holds, as the allreduce
 * cuts them. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/codec.h>

#include "bench.h"
#include "gw_rand.h"
#include "gw_util.h"

#define MAX_CODECS 8

struct shard_run {
	const char *spec;      /* "int8", "hq:bits=4" */
	int id;
	unsigned W;
	uint64_t n;
	uint32_t chunk;        /* elements per chunk (one frame) */
	uint32_t chunks;
	uint8_t **frames;      /* [w * chunks + c] */
	uint32_t *len;
	float *parts, *sum;    /* W x chunk, chunk */
	int32_t *isum;
	gw_encoder *down;
	gw_ef *ef;
	uint8_t *res;
	size_t room;
	int err;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-bench shard [--codec SPEC]... [--workers W] [--synthetic N] [--seed S]\n"
"                      [--mtu BYTES] [--min-time SEC] [--json]\n\n"
"  --codec SPEC     a dense codec and its params (repeatable; default: hq,\n"
"                   int8, 3lc): hq is summed as integers, the others decoded,\n"
"                   summed and encoded again with error feedback\n"
"  --workers W      frames per chunk (default 4)\n"
"  --synthetic N    elements of each worker's tensor (default 4194304)\n"
"  --seed S         gradient seed (default 1)\n"
"  --dist D         laplace (default) or gauss: the gradients' shape\n"
"  --mtu BYTES      IP MTU (default 1500): a chunk is one packet's frame\n"
"  --min-time SEC   time per measurement (default 0.5)\n"
"  --json           one JSON object per codec, then a summary object\n");
}

/* Gradients, one stream per worker: Laplace (codec mode's shape: a few
 * large values, so 3LC quantises most to 0 and its zero runs decode
 * fast) or Gaussian (Box-Muller: few zeros, 3LC's frames dense). */
static float *gradient(uint64_t n, uint64_t seed, int gauss)
{
	float *g = malloc((n ? n : 1) * sizeof(float));
	for (uint64_t i = 0; g && i < n; i++) {
		uint64_t r = gw_splitmix64(&seed);
		double u = ((r >> 11) + 0.5) / 9007199254740992.0;
		if (gauss) {
			double v = ((gw_splitmix64(&seed) >> 11) + 0.5) / 9007199254740992.0;
			g[i] = (float)(1e-3 * sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
		} else {
			g[i] = (float)(((r & 4) ? 1e-3 : -1e-3) * -log(u));
		}
	}
	return g;
}

/* Worker w's frames of its tensor, one per chunk; hq frames on one scale
 * shared by all workers (the allreduce's steady state), the others each
 * on their own. */
static int make_frames(struct shard_run *r, float *const *g, size_t budget, float scale)
{
	for (unsigned w = 0; w < r->W; w++) {
		gw_encoder *enc = gw_encoder_from_string(r->spec);
		if (!enc || gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, r->chunk) < 0)
			return -1;
		gw_tensor t = {.id = 0, .dim = r->n, .values = g[w]};
		if (gw_encode_begin(enc, &t) < 0)
			return -1;
		for (uint32_t c = 0; c < r->chunks; c++) {
			uint8_t *f = malloc(budget);
			if (!f)
				return -1;
			if (r->id == GW_CODEC_HQ &&
			    gw_encoder_set_shared(enc, scale, (uint32_t)gw_mix64(c + 1)) < 0)
				return -1;
			int len = gw_encode_next(enc, f, budget);
			if (len <= 0)
				return -1;
			r->frames[(size_t)w * r->chunks + c] = f;
			r->len[(size_t)w * r->chunks + c] = (uint32_t)len;
		}
		gw_encoder_free(enc);
	}
	return 0;
}

/* One pass over every chunk, as the shard does it. */
static void shard_pass(void *arg)
{
	struct shard_run *r = arg;
	for (uint32_t c = 0; c < r->chunks && !r->err; c++) {
		uint64_t base = (uint64_t)c * r->chunk;
		uint32_t len = (uint32_t)GW_MIN((uint64_t)r->chunk, r->n - base);
		int n;
		if (r->id == GW_CODEC_HQ) {
			memset(r->isum, 0, len * sizeof(int32_t));
			gw_sum_info si = {0}, wi;
			for (unsigned w = 0; w < r->W; w++) {
				size_t k = (size_t)w * r->chunks + c;
				if (gw_sum_add(r->frames[k], r->len[k], r->isum, base, len, &wi) < 0)
					r->err = 1;
				si.next = wi.next > si.next ? wi.next : si.next;
				si.scale = wi.scale;
				si.seed = wi.seed;
				si.bits = wi.bits;
				si.rotated = wi.rotated;
			}
			si.contributors = r->W;
			n = gw_sum_encode(r->res, r->room, 0, base, r->isum, len, &si);
		} else {
			for (unsigned w = 0; w < r->W; w++) {
				size_t k = (size_t)w * r->chunks + c;
				float *part = r->parts + (size_t)w * r->chunk;
				memset(part, 0, len * sizeof(float));
				if (gw_decode_window(r->frames[k], r->len[k], part, base, len) < 0)
					r->err = 1;
			}
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] = 0.0f + r->parts[i];
			for (unsigned w = 1; w < r->W; w++)
				for (uint32_t i = 0; i < len; i++)
					r->sum[i] += r->parts[(size_t)w * r->chunk + i];
			gw_ef *v = gw_ef_view(r->ef, base, len);
			gw_tensor t = {.id = 0, .dim = len, .values = r->sum, .base = base};
			n = v && gw_encoder_set_ef(r->down, v) == 0 && gw_encode_begin(r->down, &t) == 0
				    ? gw_encode_next(r->down, r->res, r->room) : -1;
			uint8_t none[64];
			if (n > 0 && gw_encode_next(r->down, none, sizeof(none)) != 0)
				n = -1;
			gw_encoder_set_ef(r->down, NULL);
			gw_ef_free(v);
		}
		if (n <= 0)
			r->err = 1;
	}
}

/* Elements of one frame of spec at budget (as the allreduce sizes a chunk). */
static uint32_t chunk_of(const char *spec, int id, unsigned W, size_t budget)
{
	gw_encoder *enc = gw_encoder_from_string(spec);
	if (!enc)
		return 0;
	/* The allreduce sizes chunks on a worst case (collective/dense.c):
	 * magnitudes all near the maximum, so no codec finds zeros or runs. */
	enum { PROBE = 1u << 17 };
	float *x = malloc(PROBE * sizeof(float));
	for (uint32_t i = 0; x && i < PROBE; i++)
		x[i] = (i & 1 ? -1.0f : 1.0f) * (1.0f - (float)(i % 97) * 1e-4f);
	gw_tensor t = {.id = 0, .dim = PROBE, .values = x};
	uint8_t *f = malloc(budget);
	gw_frame_info fi = {0};
	int len = f && x && gw_encode_begin(enc, &t) == 0 ? gw_encode_next(enc, f, budget) : -1;
	uint32_t n = len > 0 && gw_frame_peek(f, (size_t)len, &fi) == 0 ? fi.count : 0;
	if (n && id == GW_CODEC_HQ) {
		/* the downlink's sum of W must fit the packet too */
		double bits = 4;
		gw_encoder_get_param(enc, GW_PARAM_BITS, &bits);
		while (n > 40 && gw_sum_frame_max((unsigned)bits, W, n) > (int)budget)
			n -= 40;
	}
	n -= n % 40;   /* the allreduce's chunk alignment */
	gw_encoder_free(enc);
	free(x);
	free(f);
	return n;
}

static void run_free(struct shard_run *r)
{
	for (size_t k = 0; r->frames && k < (size_t)r->W * r->chunks; k++)
		free(r->frames[k]);
	gw_encoder_free(r->down);
	gw_ef_free(r->ef);
	GW_FREE_ALL(r->frames, r->len, r->parts, r->sum, r->isum, r->res);
}

/* Measures one codec; seconds per pass into *s. */
static int run_one(struct shard_run *r, float *const *g, size_t budget, double min_s,
		   double *s)
{
	char name[32];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(r->spec, ":"), r->spec);
	r->id = gw_codec_by_name(name);
	if (r->id < 0 || !(gw_codec_caps(r->id) & GW_CODEC_DENSE) ||
	    (gw_codec_caps(r->id) & GW_CODEC_TABLE)) {
		fprintf(stderr, "gw-bench: --codec: '%s' is not a dense codec\n", r->spec);
		return -1;
	}
	r->chunk = chunk_of(r->spec, r->id, r->W, budget);
	if (!r->chunk) {
		fprintf(stderr, "gw-bench: --codec %s: refused or no chunk fits (%s)\n", r->spec,
			gw_error_detail());
		return -1;
	}
	r->chunks = (uint32_t)((r->n + r->chunk - 1) / r->chunk);
	r->frames = calloc((size_t)r->W * r->chunks, sizeof(*r->frames));
	r->len = calloc((size_t)r->W * r->chunks, sizeof(*r->len));
	r->parts = malloc((size_t)r->W * r->chunk * sizeof(float));
	r->sum = malloc((size_t)r->chunk * sizeof(float));
	r->isum = malloc((size_t)r->chunk * sizeof(int32_t));
	r->room = GW_FRAME_MAX;
	r->res = malloc(r->room);
	r->ef = gw_ef_create(r->n);
	r->down = gw_encoder_from_string(r->spec);
	if (!r->frames || !r->len || !r->parts || !r->sum || !r->isum || !r->res || !r->ef ||
	    !r->down || gw_encoder_set_param(r->down, GW_PARAM_MAX_FRAME_ELEMS, r->chunk) < 0) {
		fprintf(stderr, "gw-bench: out of memory\n");
		return -1;
	}
	float scale = 0;
	for (unsigned w = 0; w < r->W; w++)
		for (uint64_t i = 0; i < r->n; i++)
			scale = fmaxf(scale, fabsf(g[w][i]));
	if (make_frames(r, g, budget, scale) < 0) {
		fprintf(stderr, "gw-bench: --codec %s: encoding the workers' frames failed\n",
			r->spec);
		return -1;
	}
	*s = bench_time(shard_pass, r, min_s);
	if (r->err) {
		fprintf(stderr, "gw-bench: --codec %s: a shard pass failed\n", r->spec);
		return -1;
	}
	return 0;
}

int bench_shard_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"codec", required_argument, 0, 'c'}, {"workers", required_argument, 0, 'w'},
		{"synthetic", required_argument, 0, 'n'}, {"seed", required_argument, 0, 's'},
		{"mtu", required_argument, 0, 'm'}, {"min-time", required_argument, 0, 't'},
		{"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'},
		{"dist", required_argument, 0, 'd'}, {0, 0, 0, 0},
	};
	const char *specs[MAX_CODECS];
	unsigned nspec = 0;
	uint64_t W = 4, n = 4194304, seed = 1, mtu = 1500;
	double min_s = 0.5;
	bool json = false;
	int o, gauss = 0;
	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c':
			if (nspec == MAX_CODECS) {
				fprintf(stderr, "gw-bench: --codec: at most %d\n", MAX_CODECS);
				return BENCH_EUSAGE;
			}
			specs[nspec++] = optarg;
			break;
		case 'w':
			if (!bench_u64("workers", optarg, 1, 1024, &W))
				return BENCH_EUSAGE;
			break;
		case 'n':
			if (!bench_u64("synthetic", optarg, 1, 1ull << 28, &n))
				return BENCH_EUSAGE;
			break;
		case 's':
			if (!bench_u64("seed", optarg, 0, UINT64_MAX, &seed))
				return BENCH_EUSAGE;
			break;
		case 'm':
			if (!bench_u64("mtu", optarg, GW_PKT_RESERVE + GW_BUDGET_MIN, 65535 + 76, &mtu))
				return BENCH_EUSAGE;
			break;
		case 't':
			if (!bench_num("min-time", optarg, 0.001, 60, &min_s))
				return BENCH_EUSAGE;
			break;
		case 'j':
			json = true;
			break;
		case 'd':
			if (strcmp(optarg, "laplace") && strcmp(optarg, "gauss")) {
				fprintf(stderr, "gw-bench: --dist: '%s' is not laplace or gauss\n", optarg);
				return BENCH_EUSAGE;
			}
			gauss = !strcmp(optarg, "gauss");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			app_bad_option("gw-bench", "gw-bench shard", argv, "");
			return BENCH_EUSAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gw-bench: shard: unexpected argument '%s'\n", argv[optind]);
		return BENCH_EUSAGE;
	}
	if (!nspec) {
		specs[nspec++] = "hq";
		specs[nspec++] = "int8";
		specs[nspec++] = "3lc";
	}
	/* The RESULT's budget: the packet less its header and W bits. */
	size_t budget = GW_MIN((size_t)(mtu - GW_PKT_RESERVE - (W + 7) / 8), (size_t)GW_FRAME_MAX);
	float *g[1024] = {0};
	for (unsigned w = 0; w < W; w++)
		if (!(g[w] = gradient(n, seed * 1000003u + w, gauss))) {
			fprintf(stderr, "gw-bench: out of memory\n");
			return 1;
		}
	double ns[MAX_CODECS];
	int rc = 0;
	for (unsigned i = 0; i < nspec && !rc; i++) {
		struct shard_run r = {.spec = specs[i], .W = (unsigned)W, .n = n};
		double s;
		rc = run_one(&r, g, budget, min_s, &s);
		if (!rc) {
			ns[i] = s * 1e9 / (double)n;
			if (json) {
				const struct app_json_member m[] = {
					APP_JS("mode", "shard"), APP_JS("codec", specs[i]),
					APP_JU("workers", W), APP_JU("elements", n),
					APP_JU("chunk_elems", r.chunk), APP_JU("mtu", mtu),
					APP_JS("dist", gauss ? "gauss" : "laplace"),
					APP_JF("ns_per_element", 4, ns[i]),
					APP_JF("ns_per_element_per_worker", 4, ns[i] / (double)W),
					APP_JF("pass_ms", 3, s * 1e3),
				};
				struct app_json j;
				app_json_begin(&j, stdout, true);
				app_json_members(&j, m, APP_JSON_N(m));
				app_json_end(&j);
			} else {
				printf("%-24s W=%-3u chunk %6u: %8.3f ns/element (%.3f per worker's), "
				       "%8.3f ms per %llu elements\n", specs[i], (unsigned)W, r.chunk,
				       ns[i], ns[i] / (double)W, s * 1e3, (unsigned long long)n);
			}
		}
		run_free(&r);
	}
	if (!rc && nspec > 1) {
		/* The first codec against each other one, in this run. */
		for (unsigned i = 1; i < nspec; i++) {
			if (json) {
				const struct app_json_member m[] = {
					APP_JS("mode", "shard_ratio"), APP_JS("codec", specs[0]),
					APP_JS("vs", specs[i]), APP_JF("cpu_less_x", 3, ns[i] / ns[0]),
				};
				struct app_json j;
				app_json_begin(&j, stdout, true);
				app_json_members(&j, m, APP_JSON_N(m));
				app_json_end(&j);
			} else {
				printf("%s: %.2fx less shard CPU per element than %s\n", specs[0],
				       ns[i] / ns[0], specs[i]);
			}
		}
	}
	for (unsigned w = 0; w < W; w++)
		free(g[w]);
	return rc ? 1 : 0;
}
