/* Job checking, chunk sizing, keys, and the UP/RESULT packet seal. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "coll_internal.h"


/* Applies "name=value,..." to enc (gw_encoder_set_params); the message
 * lives in a thread's buffer until its next call. */
static int apply_params(gw_encoder *enc, const char *params, const char **why)
{
	static _Thread_local char msg[300];
	if (!params || !*params)
		return GW_OK;
	/* The frame size is the layer's, set from chunk_elems. */
	if (!strncmp(params, "max_frame_elems=", 16) || strstr(params, ",max_frame_elems=")) {
		*why = "codec params: max_frame_elems is the layer's (chunk_elems)";
		return GW_ERR(GW_EPARAM);
	}
	char err[256];
	int rc = gw_encoder_set_params(enc, params, err, sizeof(err));
	if (rc == GW_OK)
		rc = gw_encoder_check_params(enc, err, sizeof(err));
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "codec params: %s", err);
		*why = msg;
	}
	return rc;
}

gw_encoder *coll_encoder(int codec, const char *params, uint32_t chunk_elems,
			 const char **why)
{
	gw_encoder *enc = gw_encoder_create(codec);
	if (!enc) {
		*why = "codec: unknown, or no memory";
		return NULL;
	}
	if (apply_params(enc, params, why) < 0 ||
	    gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, chunk_elems) < 0) {
		if (!*why)
			*why = "codec: chunk_elems refused";
		gw_encoder_free(enc);
		return NULL;
	}
	return enc;
}

static int job_defaults(gw_coll_job *j, const char **why)
{
	if (!j->window)
		j->window = COLL_WINDOW_DEF;
	if (!j->deadline_us)
		j->deadline_us = COLL_DEADLINE_DEF_US;
	if (!j->up_codec)
		j->up_codec = GW_CODEC_RAW;
	if (!j->down_codec)
		j->down_codec = GW_CODEC_RAW;
	const char *w = NULL;
	if (!j->dim)
		w = "dim: must be at least 1";
	else if (!j->workers || j->workers > GW_COLL_WORKERS_MAX)
		w = "workers: must be 1 .. 1024";
	else if (!j->shards || j->shards > GW_COLL_SHARDS_MAX)
		w = "shards: must be 1 .. 256";
	else if (j->window > GW_COLL_WINDOW_MAX)
		w = "window: at most 4096";
	else if (j->mode != GW_COLL_RELIABLE && j->mode != GW_COLL_LOSS_TOLERANT)
		w = "mode: reliable or loss-tolerant";
	else if (j->chunk_elems % COLL_CHUNK_ALIGN)
		w = "chunk_elems: must be a multiple of 40";
	else if (j->chunk_elems && (j->dim + j->chunk_elems - 1) / j->chunk_elems >=
				   GW_PKT_CHUNK_LIMIT)
		w = "chunk_elems: too many chunks for the 32-bit chunk field";
	else if (!(gw_codec_caps(j->up_codec) > 0 &&
		   (gw_codec_caps(j->up_codec) & GW_CODEC_DENSE)))
		w = "up_codec: not a codec of dense tensors";
	else if (!(gw_codec_caps(j->down_codec) > 0 &&
		   (gw_codec_caps(j->down_codec) & GW_CODEC_DENSE)))
		w = "down_codec: not a codec of dense tensors";
	if (w) {
		*why = w;
		return GW_ERR(GW_EINVAL);
	}
	return GW_OK;
}

/* One frame of the n values x, at most room bytes, holding all of them:
 * its length, or GW_EBUDGET. *sparse gets whether it is sparse. */
static int probe_one(gw_encoder *enc, const float *x, uint32_t n, uint32_t room,
		     uint8_t *buf, int *sparse)
{
	gw_tensor t = {.id = 0, .dim = n, .values = x};
	int rc = gw_encode_begin(enc, &t);
	int len = rc < 0 ? rc : gw_encode_next(enc, buf, room);
	rc = len == 0 ? GW_ERR(GW_EBUDGET) : len;
	if (len > 0) {
		gw_frame_info fi;
		rc = gw_frame_peek(buf, (size_t)len, &fi);
		*sparse = (fi.flags & GW_FF_SPARSE) != 0;
		/* Dense: all n elements; sparse: keys below n. And nothing left
		 * for a second frame: a chunk is one packet. */
		if (rc == 0 && (*sparse ? fi.start + fi.span > n : fi.count != n))
			rc = GW_ERR(GW_EBUDGET);
		if (rc == 0 && gw_encode_next(enc, buf, room) != 0)
			rc = GW_ERR(GW_EBUDGET);
	}
	gw_encode_abandon(enc);
	return rc < 0 ? rc : len;
}

/* Sparse frames spend more bytes on a key the farther it lies from the
 * previous one (varints, byte-count flags): the worst case then has its
 * largest values spread every `gap` elements, and the rest of what a
 * codec keeps packed at the front. */
static void spread_case(float *x, uint32_t n, uint32_t gap)
{
	for (uint32_t i = 0; i < n; i++) {
		float m = i % gap == gap / 2 ? 2.0f : 1.0f - 0.5f * (float)i / (float)n;
		x[i] = i & 1 ? -m : m;
	}
}

/* Encodes a worst case of n elements (no zeros, no runs, and for sparse
 * frames every key spacing that costs more bytes) with codec and checks
 * that one frame of at most room bytes holds it; *sparse (if not NULL)
 * says whether the codec's frames are sparse. */
static int probe(int codec, const char *params, uint32_t n, uint32_t room,
		 const float *x, int *sparse, const char **why)
{
	static const uint32_t gaps[] = {128, 256, 16384, 65536};
	gw_encoder *enc = coll_encoder(codec, params, n, why);
	if (!enc)
		return GW_ERR(GW_EINVAL);
	uint8_t *buf = malloc(GW_FRAME_MAX);
	int sp = 0;
	int rc = buf ? probe_one(enc, x, n, room, buf, &sp) : GW_ERR(GW_ENOMEM);
	float *y = rc >= 0 && sp ? malloc((size_t)n * sizeof(float)) : NULL;
	if (rc >= 0 && sp && !y)
		rc = GW_ERR(GW_ENOMEM);
	for (size_t g = 0; y && rc >= 0 && g < GW_ARRAY_SIZE(gaps) && gaps[g] < n; g++) {
		spread_case(y, n, gaps[g]);
		rc = probe_one(enc, y, n, room, buf, &sp);
	}
	if (sparse)
		*sparse = sp;
	free(y);
	gw_encoder_free(enc);
	free(buf);
	return rc < 0 ? rc : GW_OK;
}

int coll_frame_of_chunk(const struct coll_layout *L, int dir,
			const gw_frame_info *fi, uint32_t ch)
{
	uint32_t len = coll_chunk_len(L, ch);
	int codec = dir ? L->job.down_codec : L->job.up_codec;
	if (fi->codec != codec || fi->tensor != 0 ||
	    !(fi->flags & GW_FF_SPARSE) != !L->sparse[dir])
		return GW_ERR(GW_ECORRUPT);
	if (L->sparse[dir])
		return fi->start + fi->span <= len ? GW_OK : GW_ERR(GW_ERANGE);
	return fi->start == (uint64_t)ch * L->job.chunk_elems && fi->count == len
		       ? GW_OK : GW_ERR(GW_ERANGE);
}

static float *worst_case(uint32_t n);
static int fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
		const float *x, const char **why);

int coll_chunk_fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
		    const float *x, const char **why)
{
	if (j->up_codec == GW_CODEC_COUNTSKETCH) {
		uint32_t over = GW_PKT_HDR_LEN + (j->workers + 7u) / 8u +
				(j->key ? GW_PKT_MAC_LEN : 0);
		if ((uint64_t)over + coll_sketch_frame_max(n) <= payload_max)
			return GW_OK;
		*why = "chunk_elems: a sketch slice does not fit one packet";
		return GW_ERR(GW_EBUDGET);
	}
	float *own = NULL;
	if (!x) {
		x = own = worst_case(n);
		if (!x)
			return GW_ERR(GW_ENOMEM);
	}
	int rc = fits(j, n, payload_max, x, why);
	free(own);
	return rc;
}

static int fits(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
		const float *x, const char **why)
{
	uint32_t mac = j->key ? GW_PKT_MAC_LEN : 0;
	uint32_t bm = (j->workers + 7u) / 8u;
	if (payload_max < GW_PKT_HDR_LEN + bm + mac + GW_BUDGET_MIN)
		return GW_ERR(GW_EBUDGET);
	int rc = probe(j->up_codec, j->up_params, n,
		       payload_max - GW_PKT_HDR_LEN - mac, x, NULL, why);
	if (rc == 0)
		rc = probe(j->down_codec, j->down_params, n,
			   payload_max - GW_PKT_HDR_LEN - bm - mac, x, NULL, why);
	return rc;
}

static float *worst_case(uint32_t n)
{
	float *x = malloc((size_t)n * sizeof(float));
	for (uint32_t i = 0; x && i < n; i++)
		/* Magnitudes all near the maximum: 3lc quantizes none to zero,
		 * so there is no zero run to shorten its frame. */
		x[i] = (i & 1 ? -1.0f : 1.0f) * (1.0f - (float)(i % 97) * 1e-4f);
	return x;
}

int gw_coll_chunk_elems(const gw_coll_job *job, uint32_t payload_max)
{
	if (!job)
		return GW_ERR(GW_EINVAL);
	gw_coll_job j = *job;
	const char *why = NULL;
	int rc = job_defaults(&j, &why);
	if (rc < 0)
		return rc;
	payload_max = GW_MIN(payload_max, GW_PKT_HDR_LEN + GW_PKT_MAC_LEN + 128u +
				 GW_FRAME_MAX);
	if (j.up_codec == GW_CODEC_COUNTSKETCH) {
		/* Sketched-SGD: a table slice (the largest frame of the job)
		 * in a RESULT-sized packet. */
		uint32_t over = GW_PKT_HDR_LEN + (j.workers + 7u) / 8u +
				(j.key ? GW_PKT_MAC_LEN : 0) + coll_sketch_frame_max(0);
		uint32_t n = payload_max > over ? (payload_max - over) / 4 : 0;
		n -= n % COLL_CHUNK_ALIGN;
		return n ? (int)n : GW_ERR(GW_EBUDGET);
	}
	/* No dense codec spends less than a byte on 5 elements, so this bounds
	 * the search from above; a sparse codec (top-k keeps a fraction of a
	 * chunk) may cover far more, up to 2^20. */
	float *x = worst_case(1u << 20);
	if (!x)
		return GW_ERR(GW_ENOMEM);
	int up_sparse = 0, down_sparse = 0;
	if ((rc = probe(j.up_codec, j.up_params, 400, GW_FRAME_MAX, x, &up_sparse, &why)) < 0 ||
	    (rc = probe(j.down_codec, j.down_params, 400, GW_FRAME_MAX, x, &down_sparse, &why)) < 0) {
		free(x);
		return rc;
	}
	uint32_t hi = up_sparse && down_sparse ? 1u << 20
		: (uint32_t)GW_MIN((uint64_t)payload_max * 5u, 1u << 20);
	hi -= hi % COLL_CHUNK_ALIGN;
	/* Fits is monotone in n: binary search over multiples of 40. */
	uint32_t lo = 0;   /* lo fits (0 trivially), hi + ALIGN does not */
	while (lo < hi) {
		uint32_t mid = lo + ((hi - lo) / COLL_CHUNK_ALIGN + 1) / 2 * COLL_CHUNK_ALIGN;
		rc = fits(&j, mid, payload_max, x, &why);
		if (rc == GW_EUNSUPPORTED || rc == GW_EINVAL || rc == GW_ENOMEM ||
		    rc == GW_EPARAM || rc == GW_EBOUNDS) {
			free(x);
			return rc;
		}
		if (rc == 0)
			lo = mid;
		else
			hi = mid - COLL_CHUNK_ALIGN;
	}
	free(x);
	return lo ? (int)lo : GW_ERR(GW_EBUDGET);
}

int gw_coll_job_check(const gw_coll_job *job, const char **why)
{
	struct coll_layout L;
	const char *w = NULL;
	int rc = job ? coll_layout_init(&L, job, &w) : GW_ERR(GW_EINVAL);
	if (why)
		*why = w ? w : (rc < 0 ? "job: missing" : NULL);
	return rc;
}

static int coll_layout_key(struct coll_layout *L, const gw_coll_job *job,
			   const char **why);

int coll_layout_init(struct coll_layout *L, const gw_coll_job *job,
		     const char **why)
{
	memset(L, 0, sizeof(*L));
	L->job = *job;
	int rc = coll_wire_register();
	if (rc < 0) {
		*why = "packet types: UP or RESULT registered with other rules";
		return rc;
	}
	rc = job_defaults(&L->job, why);
	if (rc < 0)
		return rc;
	if (!L->job.chunk_elems) {
		*why = "chunk_elems: 0 (ask gw_coll_chunk_elems for one)";
		return GW_ERR(GW_EINVAL);
	}
	L->bitmap_len = (L->job.workers + 7u) / 8u;
	if (L->job.up_codec == GW_CODEC_COUNTSKETCH) {
		rc = coll_sketch_init(L, job, why);
		if (rc < 0)
			return rc;
		L->chunks = L->sk.chunks[0] + L->sk.chunks[1];
		return coll_layout_key(L, job, why);
	}
	/* The codecs must take their parameters; their frames may be dense or
	 * sparse (then chunk-relative). */
	uint32_t n = GW_MIN(L->job.chunk_elems, 400u);
	float *x = worst_case(n);
	if (!x)
		return GW_ERR(GW_ENOMEM);
	for (int dir = 0; dir < 2 && rc == 0; dir++) {
		int sp = 0;
		rc = probe(dir ? L->job.down_codec : L->job.up_codec,
			   dir ? L->job.down_params : L->job.up_params, n,
			   GW_FRAME_MAX, x, &sp, why);
		L->sparse[dir] = (uint8_t)sp;
		if (rc < 0 && !*why)
			*why = dir ? "down_params: refused" : "up_params: refused";
	}
	free(x);
	if (rc < 0)
		return rc;
	L->chunks = (uint32_t)((L->job.dim + L->job.chunk_elems - 1) / L->job.chunk_elems);
	return coll_layout_key(L, job, why);
}

/* The end of coll_layout_init: the key copy. */
static int coll_layout_key(struct coll_layout *L, const gw_coll_job *job,
			   const char **why)
{
	if (job->key) {
		if (sodium_init() < 0) {
			*why = "key: libsodium failed to initialise";
			return GW_ERR(GW_EIO);
		}
		memcpy(L->key, job->key, GW_KEY_LEN);
		L->keyed = 1;
	}
	L->job.key = NULL;      /* the copy above is what is used */
	L->job.up_params = L->job.down_params = NULL;   /* applied at create */
	return GW_OK;
}

int gw_coll_key_load(const char *path, uint8_t key[GW_KEY_LEN])
{
	if (!path || !key)
		return GW_ERR(GW_EINVAL);
	FILE *f = fopen(path, "r");
	if (!f)
		return GW_ERR(GW_EIO);
	char buf[160];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	buf[n] = '\0';
	char *s = buf;
	while (isspace((unsigned char)*s))
		s++;
	size_t len = 0;
	while (isxdigit((unsigned char)s[len]))
		len++;
	for (size_t i = len; s[i]; i++)
		if (!isspace((unsigned char)s[i]))
			return GW_ERR(GW_EINVAL);
	if (more || len != 2 * GW_KEY_LEN)
		return GW_ERR(GW_EINVAL);
	for (size_t i = 0; i < GW_KEY_LEN; i++) {
		char hex[3] = {s[2 * i], s[2 * i + 1], 0};
		key[i] = (uint8_t)strtoul(hex, NULL, 16);
	}
	return GW_OK;
}

uint32_t coll_seal(const struct coll_layout *L, uint8_t *p, gw_pkt_hdr *h,
		   uint32_t body_len)
{
	uint32_t payload = body_len + (L->keyed ? GW_PKT_MAC_LEN : 0);
	h->flags |= GW_PKT_F_FRAME | (L->keyed ? GW_PKT_F_MAC : 0);
	uint8_t *b = p + GW_PKT_HDR_LEN;
	gw_pkt_write(p, h, gw_pkt_payload_seed(h->flags, h->sack_len, b, payload));
	if (L->keyed)
		crypto_generichash(b + body_len, GW_PKT_MAC_LEN, p,
				   GW_PKT_HDR_LEN + body_len, L->key, GW_KEY_LEN);
	return GW_PKT_HDR_LEN + payload;
}

enum coll_verdict coll_accept(const struct coll_layout *L, const gw_pkt *pkt,
			      uint8_t want, gw_pkt_hdr *h, const uint8_t **body,
			      uint32_t *body_len)
{
	int rc = gw_pkt_parse(pkt->data, pkt->len, h);
	if (rc == GW_ECHECKSUM)
		return COLL_CORRUPT;
	if (rc < 0)
		return COLL_BAD;
	if (h->job != L->job.job)
		return COLL_FOREIGN;
	if (h->type != want)
		return COLL_BAD;
	uint32_t len = pkt->len - GW_PKT_HDR_LEN;
	if (L->keyed) {
		if (!(h->flags & GW_PKT_F_MAC))
			return COLL_UNAUTH;
		len -= GW_PKT_MAC_LEN;
		uint8_t tag[GW_PKT_MAC_LEN];
		crypto_generichash(tag, sizeof(tag), pkt->data, GW_PKT_HDR_LEN + len,
				   L->key, GW_KEY_LEN);
		if (sodium_memcmp(tag, pkt->data + GW_PKT_HDR_LEN + len, sizeof(tag)))
			return COLL_FORGED;
	} else if (h->flags & GW_PKT_F_MAC) {
		return COLL_BAD;   /* a keyed job's packet: we cannot check it */
	}
	*body = pkt->data + GW_PKT_HDR_LEN;
	*body_len = len;
	return COLL_OK;
}
