/* Executors (gw/gpudirect.h): the registry, and the kernels' job structs
 * built the same way for every executor. A call launches, waits for its
 * launches, and reads the verdicts from mapped memory, so the collective
 * sees a synchronous call; one stream keeps the launches of a batch (and
 * the scratch they share) in order. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gw_util.h"
#include "gw_wire.h"   /* codec ids (wire-format §3): gpudirect sees common/ only */
#include "gpu_internal.h"

#define GPU_OPS_MAX 4

static const struct gw_gpu_ops *gpu_ops[GPU_OPS_MAX];
static unsigned gpu_nops;

void gw_gpu_ops_add(const struct gw_gpu_ops *ops)
{
	if (gpu_nops < GPU_OPS_MAX)
		gpu_ops[gpu_nops++] = ops;
}

/* name: "emu" or "cuda", with ":N" for device N (*dev -1: none given);
 * exec gets the executor's name. GW_EINVAL with a detail. */
static int parse_name(const char *name, char exec[16], int *dev)
{
	if (!name || !*name)
		return GW_ERRF(GW_EINVAL, "gpu: missing (emu or cuda, optionally :N for device N)");
	*dev = -1;
	const char *colon = strchr(name, ':');
	size_t n = colon ? (size_t)(colon - name) : strlen(name);
	if (colon) {
		char *end = NULL;
		long d = strtol(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || *end || d > 1023)
			return GW_ERRF(GW_EINVAL, "gpu: '%s': the device after ':' is not a "
				       "number from 0", name);
		*dev = (int)d;
	}
	if (n < 16) {
		memcpy(exec, name, n);
		exec[n] = 0;
	}
	if (n >= 16 || (strcmp(exec, "emu") && strcmp(exec, "cuda")))
		return GW_ERRF(GW_EINVAL, "gpu: '%s': unknown (emu or cuda, optionally :N)",
			       name);
	return GW_OK;
}

int gw_gpu_name_valid(const char *name)
{
	char exec[16];
	int dev = -1;
	return parse_name(name, exec, &dev);
}

gw_gpu *gw_gpu_open(const char *name)
{
	char exec[16];
	int dev = -1;
	if (parse_name(name, exec, &dev) < 0)
		return NULL;
	const struct gw_gpu_ops *ops = !strcmp(exec, "emu") ? &gw_gpu_emu_ops : NULL;
	for (unsigned i = 0; !ops && i < gpu_nops; i++)
		if (!strcmp(gpu_ops[i]->name, exec))
			ops = gpu_ops[i];
	if (!ops) {
		GW_ERRF(GW_EUNSUPPORTED, "gpu: cuda: this build has no CUDA kernels "
			"(nvcc or cudart was missing when it was configured)");
		return NULL;
	}
	gw_gpu *g = calloc(1, sizeof(*g));
	if (!g) {
		GW_ERRF(GW_ENOMEM, "gpu: no memory");
		return NULL;
	}
	g->ops = ops;
	if (ops->open(g, dev) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

/* After a launch failed or a job was refused midway, what was queued
 * before still writes into the caller's packets and scratch: the call
 * waits for it before it returns (rc, the first failure, stands). */
static int drained(gw_gpu *g, int rc)
{
	if (rc < 0)
		g->ops->sync(g);
	return rc;
}

static void topk_free(gw_gpu *g)
{
	struct gpu_topk *t = &g->tk;
	void *p[] = {t->rank, t->ties, t->pos, t->sel, t->cost, t->tiles, t->hist,
		     t->st, t->first, t->count, t->val, t->esave};
	for (size_t i = 0; i < GW_ARRAY_SIZE(p); i++)
		g->ops->free(g, p[i]);
	memset(t, 0, sizeof(*t));
}

/* words (the maximum among them) only with all: a batch that grows the
 * scratch keeps the tensor's maximum. */
static void tlc_free(gw_gpu *g, int all)
{
	struct gpu_tlc *t = &g->tl;
	void *p[] = {t->bytes, t->runs, t->tok, t->tok_byte, t->tiles};
	for (size_t i = 0; i < GW_ARRAY_SIZE(p); i++)
		g->ops->free(g, p[i]);
	uint32_t *words = t->words;
	memset(t, 0, sizeof(*t));
	if (all)
		g->ops->free(g, words);
	else
		t->words = words;
}

static void hq_free(gw_gpu *g)
{
	g->ops->free(g, g->hq.y);
	g->ops->free(g, g->hq.q);
	memset(&g->hq, 0, sizeof(g->hq));
}

void gw_gpu_close(gw_gpu *g)
{
	if (!g)
		return;
	topk_free(g);
	tlc_free(g, 1);
	hq_free(g);
	if (g->par.host)
		g->ops->free_mapped(g, g->par.host);
	for (unsigned i = 0; i < g->map.n; i++)
		g->ops->unreg(g, g->map.r[i].host);
	g->ops->close(g);
	free(g);
}

const char *gw_gpu_name(const gw_gpu *g)
{
	return g ? g->ops->name : NULL;
}

void *gw_gpu_alloc(gw_gpu *g, size_t len)
{
	return g && len ? g->ops->alloc(g, len) : NULL;
}

void gw_gpu_free(gw_gpu *g, void *p)
{
	if (g && p)
		g->ops->free(g, p);
}

int gw_gpu_copy(gw_gpu *g, void *dst, const void *src, size_t len)
{
	if (!g || ((!dst || !src) && len))
		return GW_ERR(GW_EINVAL);
	return len ? g->ops->copy(g, dst, src, len) : GW_OK;
}

int gw_gpu_zero(gw_gpu *g, float *out, uint64_t n)
{
	if (!g || (!out && n))
		return GW_ERR(GW_EINVAL);
	int rc = n ? g->ops->zero(g, out, n * sizeof(float)) : GW_OK;
	return rc < 0 ? drained(g, rc) : g->ops->sync(g);
}

int gw_gpu_dcopy(gw_gpu *g, float *dst, const float *src, uint64_t n)
{
	return gw_gpu_copy(g, dst, src, n * sizeof(float));
}

int gw_gpu_dmabuf(gw_gpu *g)
{
	if (!g)
		return GW_ERRF(GW_EINVAL, "gpu: missing");
	if (!g->ops->dmabuf) {
		gw__detail(GW_OK, "dma-buf: the %s executor's tensors are host memory",
			   g->ops->name);
		return 0;
	}
	return g->ops->dmabuf(g);
}

int gw_gpu_register(gw_gpu *g, void *host, size_t len)
{
	if (!g || !host || !len)
		return GW_ERR(GW_EINVAL);
	for (unsigned i = 0; i < g->map.n; i++)
		if (g->map.r[i].host == host && g->map.r[i].len == len)
			return GW_OK;   /* another port of the same pool */
	if (g->map.n == GW_GPU_MAP_MAX)
		return GW_ERRF(GW_ENOMEM, "gpu: more than %d packet memory regions",
			       GW_GPU_MAP_MAX);
	void *dev;
	int rc = g->ops->reg(g, host, len, &dev);
	if (rc < 0)
		return rc;
	rc = gw_gpu_map_add(&g->map, host, dev, len);
	if (rc < 0) {
		g->ops->unreg(g, host);
		return GW_ERRF(rc, "gpu: packet memory region overlaps another");
	}
	return GW_OK;
}

int gw_gpu_registered(const gw_gpu *g, const void *p, size_t len)
{
	return g && gw_gpu_map_dev(&g->map, p, len) != NULL;
}

/* Every executor runs gw_cuda.cu's kernels: the CPU's tells for all. */
int gw_gpu_takes(int codec)
{
	return gw_gpu_emu_ops.takes(codec);
}


/* Mapped parameters for n frames: pointers, lengths, verdicts, counts,
 * hq's shared scales and seeds. *h and *d: the host's and the kernels'
 * view of the same block. */
struct par_view {
	uint8_t **ptr;
	uint32_t *len;
	int32_t *rc;
	uint32_t *cnt;
	float *scale;
	uint32_t *seed;
};

static int params(gw_gpu *g, uint32_t n, struct par_view *h, struct par_view *d)
{
	size_t per = sizeof(void *) + 5 * sizeof(uint32_t);
	if (n > g->par.cap) {
		uint32_t cap = GW_MAX(n, 2 * g->par.cap);
		void *dev, *host = g->ops->alloc_mapped(g, (size_t)cap * per, &dev);
		if (!host)
			return GW_ERRF(GW_ENOMEM, "gpu: no mapped memory for %u frames", cap);
		if (g->par.host)
			g->ops->free_mapped(g, g->par.host);
		g->par = (struct gpu_params){.cap = cap, .host = host, .dev = dev};
	}
	uint8_t *b[2] = {g->par.host, g->par.dev};
	struct par_view *v[2] = {h, d};
	size_t cap = g->par.cap;
	for (int i = 0; i < 2; i++) {
		v[i]->ptr = (uint8_t **)(void *)b[i];
		v[i]->len = (uint32_t *)(void *)(b[i] + cap * sizeof(void *));
		v[i]->rc = (int32_t *)(void *)(b[i] + cap * (sizeof(void *) + 4));
		v[i]->cnt = (uint32_t *)(void *)(b[i] + cap * (sizeof(void *) + 8));
		v[i]->scale = (float *)(void *)(b[i] + cap * (sizeof(void *) + 12));
		v[i]->seed = (uint32_t *)(void *)(b[i] + cap * (sizeof(void *) + 16));
	}
	return GW_OK;
}

/* The kernels' addresses of n frames of room bytes each. */
static int frames_at(gw_gpu *g, const uint8_t *const *bufs, const uint32_t *room, uint32_t n,
		     uint8_t **dev)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!bufs[i] || !(dev[i] = gw_gpu_map_dev(&g->map, bufs[i], room[i])))
			return GW_ERRF(GW_EINVAL, "gpu: frame %u is not in registered "
				       "packet memory", i);
	}
	return GW_OK;
}

static uint32_t topk_k(double fraction, uint64_t n)
{
	double kd = ceil(fraction * (double)n);   /* codec/topk.c's rule */
	return kd < 1.0 ? 1 : kd >= (double)n ? (uint32_t)n : (uint32_t)kd;
}

static int topk_scratch(gw_gpu *g, uint64_t dim, uint32_t k)
{
	struct gpu_topk *t = &g->tk;
	if (t->rank && t->dim >= dim && t->k >= k)
		return GW_OK;
	topk_free(g);
	size_t n = (size_t)dim, tiles = (size_t)gw_ks_tiles(dim + 1) + 1;
	t->rank = g->ops->alloc(g, n * 4);
	t->ties = g->ops->alloc(g, n * 4);
	t->pos = g->ops->alloc(g, n * 4);
	t->sel = g->ops->alloc(g, (size_t)k * 4);
	t->val = g->ops->alloc(g, (size_t)k * 4);
	t->cost = g->ops->alloc(g, ((size_t)k + 1) * 4);
	t->tiles = g->ops->alloc(g, tiles * 4);
	t->hist = g->ops->alloc(g, 256 * 4);
	t->st = g->ops->alloc(g, GW_KK_ST * 4);
	t->first = g->ops->alloc(g, 4);
	t->count = g->ops->alloc(g, 4);
	if (!t->rank || !t->ties || !t->pos || !t->sel || !t->val || !t->cost ||
	    !t->tiles || !t->hist || !t->st || !t->first || !t->count) {
		topk_free(g);
		return GW_ERRF(GW_ENOMEM, "gpu: no memory for top-k of %llu elements",
			       (unsigned long long)dim);
	}
	t->dim = dim;
	t->k = k;
	return GW_OK;
}

/* Each chunk a tensor of its own, one frame each (codec/'s frames of the
 * chunk with max_frame_elems = chunk_elems): launched one after another
 * on the stream, which orders their use of the shared scratch. */
static int encode_topk(gw_gpu *g, const struct gw_gpu_chunks *j, struct par_view *h,
		       struct par_view *d)
{
	if (!(j->fraction > 0.0 && j->fraction <= 1.0))
		return GW_ERRF(GW_EPARAM, "gpu: top-k fraction %g outside (0, 1]", j->fraction);
	if (j->chunk_elems >= (1u << 28) || j->room < 40)
		return GW_ERRF(GW_EBUDGET, "gpu: top-k chunk too large or room too small");
	uint32_t kmax = topk_k(j->fraction, j->chunk_elems);
	int rc = topk_scratch(g, j->chunk_elems, kmax);
	if (rc < 0)
		return rc;
	struct gpu_topk *t = &g->tk;
	/* Each chunk's kernels leave e alone if it does not fit; a batch
	 * whose later chunk does not fit puts the earlier ones' e back. */
	uint64_t e0 = (uint64_t)j->first * j->chunk_elems;
	uint64_t en = GW_MIN((uint64_t)j->n * j->chunk_elems, j->dim - e0);
	if (j->e && j->n > 1) {
		if (t->esave_n < en) {
			g->ops->free(g, t->esave);
			t->esave_n = 0;
			if (!(t->esave = g->ops->alloc(g, en * sizeof(float))))
				return GW_ERRF(GW_ENOMEM, "gpu: no memory for top-k's error buffer");
			t->esave_n = en;
		}
		if ((rc = g->ops->copy(g, t->esave, j->e + e0, en * sizeof(float))) < 0)
			return rc;
	}
	for (uint32_t i = 0; i < j->n; i++) {
		uint64_t base = (uint64_t)(j->first + i) * j->chunk_elems;
		uint64_t len = GW_MIN((uint64_t)j->chunk_elems, j->dim - base);
		h->cnt[i] = 0;
		struct gw_kk_enc k = {.g = j->g + base, .e = j->e ? j->e + base : NULL,
			.dim = len, .tensor = j->tensor, .k = topk_k(j->fraction, len),
			.cap = GW_MIN(j->room, GW_WIRE_FRAME_MAX) - GW_WIRE_HDR_LEN, .lim = j->chunk_elems,
			.rank = t->rank, .ties = t->ties, .pos = t->pos, .sel = t->sel,
			.val = t->val, .cost = t->cost, .tiles = t->tiles, .hist = t->hist,
			.st = t->st, .first = t->first, .count = t->count,
			.nframes = d->cnt + i, .slots = d->ptr + i, .lens = d->len + i,
			.max_frames = 1};
		if ((rc = g->ops->encode(g, GW_WIRE_CODEC_TOPK, &k)) < 0)
			return drained(g, rc);
	}
	if ((rc = g->ops->sync(g)) < 0)
		return rc;
	for (uint32_t i = 0; i < j->n; i++)
		if (h->cnt[i] != 1) {
			if (j->e && j->n > 1 &&
			    (rc = g->ops->copy(g, j->e + e0, t->esave, en * sizeof(float))) < 0)
				return rc;
			return GW_ERRF(GW_EBUDGET, "gpu: top-k chunk %u needs %u frames "
				       "of %u bytes", j->first + i, h->cnt[i], j->room);
		}
	return GW_OK;
}

/* Scratch for batches of nb packed bytes. */
static int tlc_scratch(gw_gpu *g, uint64_t nb)
{
	struct gpu_tlc *t = &g->tl;
	if (!t->words && !(t->words = g->ops->alloc(g, 3 * 4)))
		return GW_ERRF(GW_ENOMEM, "gpu: no memory for 3lc");
	if (t->bytes && t->nb >= nb)
		return GW_OK;
	tlc_free(g, 0);
	size_t n = (size_t)nb;
	t->bytes = g->ops->alloc(g, n);
	t->runs = g->ops->alloc(g, n * 4);
	t->tok = g->ops->alloc(g, n * 4);
	t->tok_byte = g->ops->alloc(g, n * 4);
	t->tiles = g->ops->alloc(g, ((size_t)gw_ks_tiles(nb) + 1) * 4);
	if (!t->bytes || !t->runs || !t->tok || !t->tok_byte || !t->tiles) {
		tlc_free(g, 0);
		return GW_ERRF(GW_ENOMEM, "gpu: no memory for 3lc batches of %llu bytes",
			       (unsigned long long)nb);
	}
	t->nb = nb;
	return GW_OK;
}

/* A batch of 3lc segments (one per chunk, as codec/'s max_frame_elems =
 * chunk_elems cuts them, so runs restart at every chunk): the batch that
 * starts the tensor takes its maximum first, and every batch encodes
 * with the m it gives. */
static int encode_3lc(gw_gpu *g, const struct gw_gpu_chunks *j, struct par_view *d)
{
	if (j->chunk_elems % 5 || j->room < 64)
		return GW_ERRF(GW_EBUDGET, "gpu: 3lc chunks of %u elements (a multiple of 5 "
			       "is needed) or room %u", j->chunk_elems, j->room);
	uint64_t base = (uint64_t)j->first * j->chunk_elems;
	uint64_t dim = GW_MIN((uint64_t)j->n * j->chunk_elems, j->dim - base);
	int rc = tlc_scratch(g, (dim + 4) / 5);
	if (rc < 0)
		return rc;
	struct gpu_tlc *t = &g->tl;
	struct gw_kt_enc k = {.g = j->g + base, .e = j->e ? j->e + base : NULL, .dim = dim,
		.tensor = j->tensor, .sparsity = j->sparsity,
		.room = GW_MIN(j->room, GW_WIRE_FRAME_MAX) - GW_WIRE_HDR_LEN - 4, .nb = (dim + 4) / 5,
		.bytes = t->bytes, .runs = t->runs, .tok = t->tok, .tok_byte = t->tok_byte,
		.tiles = t->tiles, .mx = t->words, .ntok = t->words + 1, .err = t->words + 2,
		.slots = d->ptr, .lens = d->len, .max_frames = j->n, .base = base,
		.mx_given = 1};
	gw_kt_limit(&k, j->chunk_elems);
	if (j->first == 0) {
		/* The whole tensor's maximum, before any batch changes e. */
		struct gw_kt_enc all = k;
		all.g = j->g;
		all.e = j->e;
		all.dim = j->dim;
		if ((rc = g->ops->max_3lc(g, &all)) < 0)
			return drained(g, rc);
	}
	if ((rc = g->ops->encode(g, GW_WIRE_CODEC_3LC, &k)) < 0 || (rc = g->ops->sync(g)) < 0)
		return drained(g, rc);
	uint32_t w[3];
	if ((rc = g->ops->copy(g, w, t->words, sizeof(w))) < 0)
		return rc;
	uint32_t frames = (w[1] + k.room - 1) / k.room;
	if (k.seg)
		frames = gw_kt_segments(&k);
	if (w[2] || frames != j->n)
		return GW_ERRF(GW_EBUDGET, "gpu: 3lc chunks %u..%u: %u frames of %u bytes, not "
			       "one a chunk", j->first, j->first + j->n - 1, frames, j->room);
	return GW_OK;
}

/* A batch of hq chunks, one frame each (codec/'s hq encoder with
 * max_frame_elems = chunk_elems, on each chunk's shared scale and seed
 * when given): the rotated values and codes wait in scratch. */
static int encode_hq(gw_gpu *g, const struct gw_gpu_chunks *j, struct par_view *h,
		     struct par_view *d)
{
	uint32_t need = (uint32_t)GW_MIN((uint64_t)j->chunk_elems, j->dim);
	if (j->bits < 2 || j->bits > 8 || j->rotate > 1 || j->stochastic > 1)
		return GW_ERRF(GW_EPARAM, "gpu: hq bits %u, rotate %u, stochastic %u (bits "
			       "2-8, the others 0 or 1)", j->bits, j->rotate, j->stochastic);
	if (gw_kh_per_frame(j->bits, j->room, need) != need)
		return GW_ERRF(GW_EBUDGET, "gpu: a chunk of %u elements does not fit one hq "
			       "frame of %u bytes at %u bits", need, j->room, j->bits);
	uint64_t base = (uint64_t)j->first * j->chunk_elems;
	uint64_t dim = GW_MIN((uint64_t)j->n * j->chunk_elems, j->dim - base);
	if (g->hq.n < dim) {
		hq_free(g);
		g->hq.y = g->ops->alloc(g, (size_t)dim * sizeof(float));
		g->hq.q = g->ops->alloc(g, (size_t)dim);
		if (!g->hq.y || !g->hq.q) {
			hq_free(g);
			return GW_ERRF(GW_ENOMEM, "gpu: no memory for hq batches of %llu "
				       "elements", (unsigned long long)dim);
		}
		g->hq.n = dim;
	}
	for (uint32_t i = 0; j->scales && i < j->n; i++) {
		if (!(j->scales[i] >= 0.0f && j->scales[i] <= FLT_MAX))
			return GW_ERRF(GW_EINVAL, "gpu: hq chunk %u: shared scale %g is not a "
				       "finite value >= 0", j->first + i, (double)j->scales[i]);
		h->scale[i] = j->scales[i];
		h->seed[i] = j->seeds ? j->seeds[i] : 0;
	}
	struct gw_kh_enc k = {.g = j->g + base, .e = j->e ? j->e + base : NULL, .dim = dim,
		.tensor = j->tensor, .per_frame = j->chunk_elems, .frames = j->n,
		.slots = d->ptr, .lens = d->len, .base = base, .bits = j->bits,
		.rotate = j->rotate, .stochastic = j->stochastic, .seed = j->seed,
		.scales = j->scales ? d->scale : NULL, .seeds = j->scales ? d->seed : NULL,
		.count0 = j->count0, .y = g->hq.y, .q = g->hq.q};
	int rc = g->ops->encode(g, GW_WIRE_CODEC_HQ, &k);
	return rc == GW_OK ? g->ops->sync(g) : drained(g, rc);
}

int gw_gpu_encode_chunks(gw_gpu *g, const struct gw_gpu_chunks *j)
{
	if (!g || !j || !j->g || !j->bufs || !j->lens || !j->n || !j->chunk_elems)
		return GW_ERRF(GW_EINVAL, "gpu: encode: missing argument");
	uint64_t chunks = (j->dim + j->chunk_elems - 1) / j->chunk_elems;
	if ((uint64_t)j->first + j->n > chunks)
		return GW_ERRF(GW_EINVAL, "gpu: encode: chunks %u..%u past the tensor's %llu",
			       j->first, j->first + j->n - 1, (unsigned long long)chunks);
	if (!gw_gpu_takes(j->codec))
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no encode kernel for codec %d",
			       j->codec);
	struct par_view h, d;
	int rc = params(g, j->n, &h, &d);
	for (uint32_t i = 0; rc == GW_OK && i < j->n; i++)
		h.len[i] = j->room;
	if (rc == GW_OK)
		rc = frames_at(g, (const uint8_t *const *)j->bufs, h.len, j->n, h.ptr);
	if (rc < 0)
		return rc;
	if (j->codec == GW_WIRE_CODEC_TOPK) {
		rc = encode_topk(g, j, &h, &d);
	} else if (j->codec == GW_WIRE_CODEC_3LC) {
		rc = encode_3lc(g, j, &d);
	} else if (j->codec == GW_WIRE_CODEC_HQ) {
		rc = encode_hq(g, j, &h, &d);
	} else {
		/* §4.1's sizing: every chunk must be one frame of room bytes
		 * (a tensor shorter than a chunk is one chunk of its length:
		 * a layout's small tensors sent raw). */
		uint32_t need = (uint32_t)GW_MIN((uint64_t)j->chunk_elems, j->dim);
		if (gw_kd_per_frame(j->codec, j->room, need) != need)
			return GW_ERRF(GW_EBUDGET, "gpu: a chunk of %u elements does not fit "
				       "one frame of %u bytes", need, j->room);
		uint64_t base = (uint64_t)j->first * j->chunk_elems;
		struct gw_kd_enc k = {.codec = j->codec, .g = j->g + base,
			.e = j->e ? j->e + base : NULL,
			.dim = GW_MIN((uint64_t)j->n * j->chunk_elems, j->dim - base),
			.tensor = j->tensor, .per_frame = j->chunk_elems, .frames = j->n,
			.slots = d.ptr, .lens = d.len, .base = base};
		rc = g->ops->encode(g, j->codec, &k);
		rc = rc == GW_OK ? g->ops->sync(g) : drained(g, rc);
	}
	for (uint32_t i = 0; rc == GW_OK && i < j->n; i++)
		j->lens[i] = h.len[i];
	return rc;
}

int gw_gpu_decode(gw_gpu *g, int codec, const uint8_t *const *frames, const uint32_t *lens,
		  uint32_t n, float *out, uint64_t out_len, int32_t *rcs)
{
	if (!g || !frames || !lens || !n || !out || !rcs)
		return GW_ERRF(GW_EINVAL, "gpu: decode: missing argument");
	if (!g->ops->takes(codec))
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no decode kernel for codec %d", codec);
	struct par_view h, d;
	int rc = params(g, n, &h, &d);
	if (rc < 0)
		return rc;
	memcpy(h.len, lens, n * sizeof(*lens));
	if ((rc = frames_at(g, frames, lens, n, h.ptr)) < 0)
		return rc;
	struct gw_kf_dec k = {.frames = (const uint8_t *const *)d.ptr, .lens = d.len, .n = n,
			      .out = out, .out_len = out_len, .rcs = d.rc};
	if ((rc = g->ops->decode(g, codec, &k)) < 0 || (rc = g->ops->sync(g)) < 0)
		return drained(g, rc);
	memcpy(rcs, h.rc, n * sizeof(*rcs));
	return GW_OK;
}

int gw_gpu_finite(gw_gpu *g, float *p, uint64_t n)
{
	if (!g || (!p && n))
		return GW_ERR(GW_EINVAL);
	int rc = n ? g->ops->finite(g, p, n) : GW_OK;
	return rc < 0 ? drained(g, rc) : g->ops->sync(g);
}
