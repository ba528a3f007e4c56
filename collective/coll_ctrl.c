/* CTRL packets (wire-format §5.9): their body, the job digest they carry,
 * and how two digests differ. Liveness itself (who sends them when, and
 * what a silent or departed peer means) is the worker's (comm_live.c) and
 * the shard's (agg_live.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "coll_internal.h"

/* Body offsets (little-endian). */
enum {
	OFF_KIND = 0, OFF_ROLE = 1, OFF_SUBJECT = 4, OFF_SILENT = 8, OFF_INCARN = 12, OFF_DIM = 16,
	OFF_TENSORS = 24, OFF_LAYOUT = 28,
	OFF_KEYFP = 32, OFF_WORKERS = 40, OFF_SHARDS = 44, OFF_CHUNK = 48,
	OFF_PAYLOAD = 52, OFF_WINDOW = 56, OFF_ENGINE = 60, OFF_UP = 61, OFF_DOWN = 62,
	OFF_MODE = 63, OFF_KEYED = 64, OFF_TEXT = 72,
};

/* A whole number of ms from the environment's name, within [lo, hi] or 0,
 * or def. */
static uint32_t env_ms(const char *name, uint32_t lo, uint32_t hi, uint32_t def)
{
	const char *e = getenv(name);
	char *end;
	if (e && *e) {
		unsigned long v = strtoul(e, &end, 10);
		if (!*end && v <= hi && (v == 0 || v >= lo))
			return (uint32_t)v;
	}
	return def;
}

uint32_t coll_liveness_default(void)
{
	/* GW_LIVENESS_MS: an override for whole test suites (a slow emulated
	 * guest, a harness on virtual time that must not see a thread). */
	return env_ms("GW_LIVENESS_MS", 10, 3600000, COLL_LIVENESS_DEF_MS);
}

uint32_t coll_startup_default(void)
{
	return env_ms("GW_STARTUP_MS", 10, 86400000, COLL_STARTUP_DEF_MS);
}

uint32_t coll_incarnation(void)
{
	uint32_t x = 0;
	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x)) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		x = (uint32_t)t.tv_nsec ^ (uint32_t)t.tv_sec * 2654435761u ^ (uint32_t)getpid();
	}
	return x ? x : 1u;
}

void coll_digest_of(const struct coll_layout *L, struct coll_digest *d)
{
	*d = (struct coll_digest){.dim = L->job.dim,
		.key_fp = L->key_fp, .workers = L->job.workers, .shards = L->job.shards,
		.chunk_elems = L->job.chunk_elems, .payload = L->payload,
		.window = L->job.window, .engine = (uint8_t)L->job.engine,
		.up = (uint8_t)L->job.up_codec, .down = (uint8_t)L->job.down_codec,
		.mode = (uint8_t)L->job.mode, .keyed = (uint8_t)L->keyed};
	if (L->eng && L->eng->digest)
		L->eng->digest(L, d);
}

static const char *codec_or_id(int id, char *buf, size_t n)
{
	const char *s = gw_codec_name(id);
	if (s)
		return s;
	snprintf(buf, n, "codec %d", id);
	return buf;
}

static const char *engine_or_id(int id, char *buf, size_t n)
{
	const struct coll_engine *e = coll_engine_of((gw_coll_engine)id);
	if (e)
		return e->name;
	snprintf(buf, n, "engine %d", id);
	return buf;
}

int coll_digest_diff(const struct coll_digest *here, const struct coll_digest *there,
		     char *why, size_t n)
{
	char a[24], b[24];
	/* Causes first: a payload or key that differs is why much else does. */
	if (here->keyed != there->keyed)
		snprintf(why, n, "key: %s there, %s here", there->keyed ? "a key" : "none",
			 here->keyed ? "a key" : "none");
	else if (here->key_fp != there->key_fp)
		snprintf(why, n, "key: another key there (fingerprint %016llx, here %016llx)",
			 (unsigned long long)there->key_fp, (unsigned long long)here->key_fp);
	else if (here->engine != there->engine)
		snprintf(why, n, "engine: %s there, %s here", engine_or_id(there->engine, a,
			 sizeof(a)), engine_or_id(here->engine, b, sizeof(b)));
	else if (here->payload != there->payload)
		snprintf(why, n, "payload: %u there, %u here (a packet of the larger is "
			 "cut at the smaller)", there->payload, here->payload);
	else if (here->dim != there->dim)
		snprintf(why, n, "dim: %llu there, %llu here", (unsigned long long)there->dim,
			 (unsigned long long)here->dim);
	else if (here->workers != there->workers)
		snprintf(why, n, "workers: %u there, %u here", there->workers, here->workers);
	else if (here->shards != there->shards)
		snprintf(why, n, "shards: %u there, %u here", there->shards, here->shards);
	else if (here->up != there->up)
		snprintf(why, n, "up codec: %s there, %s here", codec_or_id(there->up, a, sizeof(a)),
			 codec_or_id(here->up, b, sizeof(b)));
	else if (here->down != there->down)
		snprintf(why, n, "down codec: %s there, %s here",
			 codec_or_id(there->down, a, sizeof(a)), codec_or_id(here->down, b, sizeof(b)));
	else if (here->mode != there->mode)
		snprintf(why, n, "mode: %s there, %s here",
			 there->mode == GW_COLL_LOSS_TOLERANT ? "loss-tolerant" : "reliable",
			 here->mode == GW_COLL_LOSS_TOLERANT ? "loss-tolerant" : "reliable");
	else if (here->window != there->window)
		snprintf(why, n, "window: %u there, %u here", there->window, here->window);
	else if (GW_MAX(here->tensors, 1u) != GW_MAX(there->tensors, 1u))
		snprintf(why, n, "layout: %u tensors there, %u here", there->tensors ? there->tensors : 1,
			 here->tensors ? here->tensors : 1);
	else if (here->layout != there->layout)
		snprintf(why, n, "layout: the tensors' sizes, min_elems or down_momentum differ "
			 "(layout hash %08x there, %08x here)", there->layout, here->layout);
	else if (here->chunk_elems != there->chunk_elems)
		snprintf(why, n, "chunk_elems: %u there, %u here", there->chunk_elems,
			 here->chunk_elems);
	else
		return 0;
	return 1;
}

/* The MAC of a CTRL packet at p: header (checksum field as zero) and
 * body. */
static void ctrl_mac(const struct coll_layout *L, const uint8_t *p, uint8_t *tag)
{
	uint8_t hdr[GW_PKT_HDR_LEN];
	memcpy(hdr, p, GW_PKT_HDR_LEN);
	memset(hdr + GW_PKT_OFF_CHECKSUM, 0, 4);
	crypto_generichash_state st;
	crypto_generichash_init(&st, L->key, GW_KEY_LEN, GW_PKT_MAC_LEN);
	crypto_generichash_update(&st, hdr, sizeof(hdr));
	crypto_generichash_update(&st, p + GW_PKT_HDR_LEN, COLL_CTRL_LEN);
	crypto_generichash_final(&st, tag, GW_PKT_MAC_LEN);
}

uint32_t coll_ctrl_write(const struct coll_layout *L, uint8_t *p, struct coll_ctrl *m)
{
	uint8_t *b = p + GW_PKT_HDR_LEN;
	coll_digest_of(L, &m->d);
	memset(b, 0, COLL_CTRL_LEN);
	b[OFF_KIND] = m->kind;
	b[OFF_ROLE] = m->role;
	gw_st32(b + OFF_SUBJECT, m->subject);
	gw_st32(b + OFF_SILENT, m->silent_ms);
	gw_st32(b + OFF_INCARN, m->incarnation);
	gw_st64(b + OFF_DIM, m->d.dim);
	gw_st32(b + OFF_TENSORS, m->d.tensors);
	gw_st32(b + OFF_LAYOUT, m->d.layout);
	gw_st64(b + OFF_KEYFP, m->d.key_fp);
	gw_st32(b + OFF_WORKERS, m->d.workers);
	gw_st32(b + OFF_SHARDS, m->d.shards);
	gw_st32(b + OFF_CHUNK, m->d.chunk_elems);
	gw_st32(b + OFF_PAYLOAD, m->d.payload);
	gw_st32(b + OFF_WINDOW, m->d.window);
	b[OFF_ENGINE] = m->d.engine;
	b[OFF_UP] = m->d.up;
	b[OFF_DOWN] = m->d.down;
	b[OFF_MODE] = m->d.mode;
	b[OFF_KEYED] = m->d.keyed;
	size_t tl = strnlen(m->text, COLL_CTRL_TEXT - 1);
	memcpy(b + OFF_TEXT, m->text, tl);
	gw_pkt_hdr h = {.type = GW_PKT_CTRL, .flags = L->keyed ? GW_PKT_F_MAC : 0,
			.rank = m->from, .job = L->job.job, .round = m->round};
	uint32_t payload = COLL_CTRL_LEN + (L->keyed ? GW_PKT_MAC_LEN : 0);
	if (L->keyed) {
		/* The checksum covers the whole payload, MAC included (CTRL is
		 * no frame), so the MAC covers the header with its checksum
		 * field zero, and the checksum is written last. */
		gw_pkt_write(p, &h, 0);
		ctrl_mac(L, p, b + COLL_CTRL_LEN);
	}
	gw_pkt_write(p, &h, gw_pkt_payload_seed(h.flags, 0, b, payload));
	return GW_PKT_HDR_LEN + payload;
}

enum coll_verdict coll_ctrl_read(const struct coll_layout *L, const gw_pkt *pkt,
				 struct coll_ctrl *m)
{
	gw_pkt_hdr h;
	int rc = gw_pkt_parse(pkt->data, pkt->len, &h);
	if (rc == GW_ECHECKSUM)
		return COLL_CORRUPT;
	if (rc < 0 || h.type != GW_PKT_CTRL)
		return COLL_BAD;
	if (h.job != L->job.job)
		return COLL_FOREIGN;
	const uint8_t *b = pkt->data + GW_PKT_HDR_LEN;
	*m = (struct coll_ctrl){.kind = b[OFF_KIND], .role = b[OFF_ROLE], .from = h.rank,
		.round = h.round, .subject = gw_ld32(b + OFF_SUBJECT),
		.silent_ms = gw_ld32(b + OFF_SILENT), .incarnation = gw_ld32(b + OFF_INCARN)};
	m->d = (struct coll_digest){.dim = gw_ld64(b + OFF_DIM),
		.key_fp = gw_ld64(b + OFF_KEYFP), .tensors = gw_ld32(b + OFF_TENSORS),
		.layout = gw_ld32(b + OFF_LAYOUT), .workers = gw_ld32(b + OFF_WORKERS),
		.shards = gw_ld32(b + OFF_SHARDS), .chunk_elems = gw_ld32(b + OFF_CHUNK),
		.payload = gw_ld32(b + OFF_PAYLOAD), .window = gw_ld32(b + OFF_WINDOW),
		.engine = b[OFF_ENGINE], .up = b[OFF_UP], .down = b[OFF_DOWN],
		.mode = b[OFF_MODE], .keyed = b[OFF_KEYED]};
	memcpy(m->text, b + OFF_TEXT, COLL_CTRL_TEXT - 1);
	m->text[COLL_CTRL_TEXT - 1] = '\0';
	if (m->role > COLL_ROLE_SHARD)
		return COLL_BAD;
	if (L->keyed) {
		if (!(h.flags & GW_PKT_F_MAC))
			return COLL_UNAUTH;
		uint8_t tag[GW_PKT_MAC_LEN];
		ctrl_mac(L, pkt->data, tag);
		if (sodium_memcmp(tag, b + COLL_CTRL_LEN, sizeof(tag)))
			return COLL_FORGED;
	} else if (h.flags & GW_PKT_F_MAC) {
		return COLL_UNAUTH;   /* a keyed process's: we cannot check it */
	}
	return COLL_OK;
}
