/* Job checking, chunk sizing, keys, and the UP/RESULT packet seal. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "coll_internal.h"
#include "coll_opts.h"


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
	int rc = gw_encoder_set_params(enc, params);
	if (rc == GW_OK)
		rc = gw_encoder_check_params(enc);
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "codec params: %s", gw_error_detail());
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

/* The dense engine last: it takes every codec no other claims. */
static const struct coll_engine *const engines[] = {
	&coll_sketched_engine,
	&coll_dense_engine,
};

const struct coll_engine *coll_engine_of(gw_coll_engine id)
{
	for (size_t i = 0; i < GW_ARRAY_SIZE(engines); i++)
		if (engines[i]->id == id)
			return engines[i];
	return NULL;
}

int coll_live_arg(const void *obj, const char *obj_name, const char *field, uint32_t ms)
{
	gw__detail_clear();
	if (!obj)
		return GW_ERRF(GW_EINVAL, "%s: missing", obj_name);
	/* Below 10 ms a beat is shorter than one scheduling slice of a
	 * starved peer's: it would be declared dead while alive. */
	if (ms && ms < 10)
		return GW_ERRF(GW_EINVAL, "%s: %u, below 10 (0 %s)", field, ms,
			       strcmp(field, "startup_ms") ? "turns it off" : "means no limit");
	return GW_OK;
}

const struct coll_engine *coll_engine_for(int up_codec)
{
	for (size_t i = 0; i + 1 < GW_ARRAY_SIZE(engines); i++)
		if (engines[i]->claims(up_codec))
			return engines[i];
	return engines[GW_ARRAY_SIZE(engines) - 1];
}

gw_coll_engine gw_coll_engine_for(int up_codec)
{
	return coll_engine_for(up_codec)->id;
}

void coll_group_by_peer(gw_pkt **p, uint32_t n, gw_pkt **tmp)
{
	uint32_t out = 0, from = 0;
	while (out < n) {
		/* The first packet not yet placed names the next peer. */
		while (!p[from])
			from++;
		gw_endpoint ep = p[from]->peer;
		for (uint32_t i = from; i < n; i++)
			if (p[i] && p[i]->peer.ip == ep.ip && p[i]->peer.port == ep.port) {
				tmp[out++] = p[i];
				p[i] = NULL;
			}
	}
	memcpy(p, tmp, n * sizeof(*p));
}

int coll_job_defaults(gw_coll_job *j, const char **why)
{
	const struct coll_engine *e = coll_engine_of(j->engine);
	if (!e) {
		*why = "engine: not an engine of this library (dense, sketched)";
		return GW_ERR(GW_EINVAL);
	}
	if (!j->window)
		j->window = COLL_WINDOW_DEF;
	if (!j->deadline_us)
		j->deadline_us = COLL_DEADLINE_DEF_US;
	if (!j->up_codec)
		j->up_codec = e->up_codec;
	if (!j->down_codec)
		j->down_codec = e == &coll_dense_engine ? coll_down_default(j->up_codec)
							: e->down_codec;
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

int gw_coll_chunk_elems(const gw_coll_job *job, uint32_t payload_max)
{
	gw__detail_clear();
	if (!job)
		return GW_ERRF(GW_EINVAL, "job: missing");
	gw_coll_job j = *job;
	const char *why = NULL;
	int rc = coll_job_defaults(&j, &why);
	if (rc >= 0) {
		payload_max = GW_MIN(payload_max, GW_PKT_HDR_LEN + GW_PKT_MAC_LEN + 128u +
					 GW_FRAME_MAX);
		rc = coll_engine_of(j.engine)->chunk_elems(&j, payload_max, &why);
	}
	if (rc < 0)
		gw__detail(rc, "%s", why ? why : "no chunk of one element fits the payload");
	return rc;
}

int gw_coll_job_check(const gw_coll_job *job)
{
	gw__detail_clear();
	struct coll_layout L;
	const char *why = NULL;
	int rc = job ? coll_layout_init(&L, job, &why) : GW_ERR(GW_EINVAL);
	if (rc < 0)
		gw__detail(rc, "%s", why ? why : "job: missing");
	if (job)
		coll_layout_fini(&L);
	return rc;
}

void coll_layout_fini(struct coll_layout *L)
{
	if (L->eng && L->eng->layout_fini)
		L->eng->layout_fini(L);
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
	rc = coll_job_defaults(&L->job, why);
	if (rc < 0)
		return rc;
	if (!L->job.chunk_elems) {
		*why = "chunk_elems: 0 (ask gw_coll_chunk_elems for one)";
		return GW_ERR(GW_EINVAL);
	}
	L->eng = coll_engine_of(L->job.engine);
	L->bitmap_len = (L->job.workers + 7u) / 8u;
	rc = L->eng->layout(L, job, why);
	return rc < 0 ? rc : coll_layout_key(L, job, why);
}

int coll_layout_open(struct coll_layout *L, const gw_coll_job *job, uint32_t payload_max)
{
	const char *why = NULL;
	int rc = coll_layout_init(L, job, &why);
	if (rc < 0)
		return gw__detail(rc, "%s", why);
	/* The layout's job with what it took out (applied at create): sizing
	 * needs the parameters and whether a MAC takes room. */
	gw_coll_job j = L->job;
	j.up_params = job->up_params;
	j.down_params = job->down_params;
	j.key = job->key;
	j.engine_params = job->engine_params;
	rc = L->eng->chunk_fits(&j, L->job.chunk_elems, payload_max, NULL, &why);
	if (rc < 0)
		return gw__detail(rc, "%s (payload %u bytes)",
				  why ? why : "chunk_elems: too large", payload_max);
	L->payload = payload_max;
	return GW_OK;
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
		/* A fingerprint two processes compare (CTRL's digest): a hash
		 * keyed by the key of a fixed text, so it says nothing of it. */
		uint8_t fp[8];
		crypto_generichash(fp, sizeof(fp), (const uint8_t *)"gradwire key fp", 15,
				   L->key, GW_KEY_LEN);
		L->key_fp = gw_ld64(fp);
	}

	L->job.key = NULL;      /* the copy above is what is used */
	L->job.up_params = L->job.down_params = NULL;   /* applied at create */
	L->job.engine_params = NULL;                    /* read by the engine */
	return GW_OK;
}

int coll_key_parse(const char *s, size_t len, uint8_t key[GW_KEY_LEN])
{
	if (len != 2 * GW_KEY_LEN)
		return GW_ERR(GW_EINVAL);
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return GW_ERR(GW_EINVAL);
	for (size_t i = 0; i < GW_KEY_LEN; i++) {
		char hex[3] = {s[2 * i], s[2 * i + 1], 0};
		key[i] = (uint8_t)strtoul(hex, NULL, 16);
	}
	return GW_OK;
}

int gw_coll_key_load(const char *path, uint8_t key[GW_KEY_LEN])
{
	gw__detail_clear();
	if (!path || !key)
		return GW_ERRF(GW_EINVAL, "%s: missing", path ? "key" : "path");
	FILE *f = fopen(path, "r");
	if (!f)
		return GW_ERRF(GW_EIO, "%s: cannot read", path);
	char buf[160];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	buf[n] = '\0';
	char *s = buf;
	while (isspace((unsigned char)*s))
		s++;
	size_t len = 0;
	while (s[len] && !isspace((unsigned char)s[len]))
		len++;
	for (size_t i = len; s[i]; i++)
		if (!isspace((unsigned char)s[i]))
			return GW_ERRF(GW_EINVAL, "%s: not 64 hex digits", path);
	if (more || coll_key_parse(s, len, key) < 0)
		return GW_ERRF(GW_EINVAL, "%s: not 64 hex digits", path);
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

int coll_timeout(const gw_comm *c, uint32_t shard, const char *fmt, ...)
{
	char ep[64], what[160];
	if (gw_endpoint_format(&c->shards[shard], ep, sizeof(ep)) < 0)
		snprintf(ep, sizeof(ep), "?");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* A shard that sends nothing is dead, or waits for a dead worker (a
	 * dead worker stalls every shard): the caller may know which. */
	return gw__detail(GW_ERR(GW_ETIMEDOUT), "round %u: %s after %llu ms, the first "
			  "from shard %u (%s)", c->round, what,
			  (unsigned long long)(c->timeout_ns / 1000000u), shard, ep);
}
