/* The wire does not change: every packet type the library sends — the
 * stream's DATA (frames and opaque payloads) and ACK (with and without a
 * selective bitmap), the dense allreduce's UP and RESULT (keyed and not,
 * one and two workers, a lossy codec with error feedback over two rounds)
 * and Sketched-SGD's UP and RESULT of both phases, receipts included — is
 * produced by the real code paths over an in-process loop dataplane and
 * compared with the length and XXH3-64 of the bytes the code of commit
 * 5dcec76 sent (golden_packets.h, written once by this program with
 * GW_GOLDEN_PRINT=FILE before the wire registry moved the header's types out
 * of the dataplane). Everything runs in one thread, each transmission
 * handed to its receiver at once, so no timer fires and no sequence number
 * depends on timing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include <gw/collective.h>
#include <gw/stream.h>

#include "../gw_test.h"
#include "coll_internal.h"
#include "dp_internal.h"

#define PAYLOAD 1472u
#define QMAX 4096u
#define NLOOPS 4u

/* ---- what was sent ----------------------------------------------------- */

struct sent {
	char label[48];
	uint32_t len;
	uint64_t hash;
	uint8_t head[48];
};

static struct sent *log_;
static size_t nlog, caplog;
static int recording;

static void record(const char *who, const uint8_t *p, uint32_t len)
{
	if (!recording)
		return;
	/* A retransmission's count depends on time; the first sends do not. */
	if (len >= GW_PKT_HDR_LEN && (p[GW_PKT_OFF_FLAGS] & GW_PKT_F_RETX))
		return;
	if (nlog == caplog) {
		caplog = caplog ? 2 * caplog : 64;
		log_ = realloc(log_, caplog * sizeof(*log_));
		GW_CHECK(log_, "out of memory");
	}
	struct sent *s = &log_[nlog++];
	memset(s, 0, sizeof(*s));
	snprintf(s->label, sizeof(s->label), "%s type %u tensor %u chunk %u", who,
		 len > GW_PKT_OFF_TYPE ? p[GW_PKT_OFF_TYPE] : 0u,
		 len >= GW_PKT_HDR_LEN ? gw_test_ld32(p + GW_PKT_OFF_TENSOR) : 0u,
		 len >= GW_PKT_HDR_LEN ? gw_test_ld32(p + GW_PKT_OFF_CHUNK) : 0u);
	s->len = len;
	s->hash = XXH3_64bits(p, len);
	memcpy(s->head, p, len < sizeof(s->head) ? len : sizeof(s->head));
}

/* ---- an in-process loop dataplane ------------------------------------------ */

struct loop {
	struct gw_dp dp;          /* first: the library sees a gw_dp */
	const char *who;
	gw_pkt *q[QMAX];          /* received, not yet handed up */
	unsigned head, n;
	unsigned rx_cap;          /* most packets one rx_burst hands up (0: all) */
	gw_agg *agg;              /* a shard's: serve it as packets arrive */
};

static struct loop *loops[NLOOPS];

static gw_pkt *pkt_new(uint32_t room)
{
	gw_pkt *p = calloc(1, sizeof(*p));
	GW_CHECK(p && (p->data = malloc(room)), "out of memory");
	p->room = room;
	return p;
}

static void pkt_del(gw_pkt *p)
{
	free(p->data);
	free(p);
}

static int loop_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		pkts[i] = pkt_new(dp->payload_max);
	return (int)n;
}

static void loop_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	(void)dp;
	for (unsigned i = 0; i < n; i++)
		pkt_del(pkts[i]);
}

static void serve(struct loop *l);

static int loop_tx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct loop *from = (struct loop *)dp;
	for (unsigned i = 0; i < n; i++) {
		record(from->who, pkts[i]->data, pkts[i]->len);
		struct loop *to = NULL;
		for (unsigned k = 0; k < NLOOPS; k++)
			if (loops[k] && loops[k]->dp.local.port == pkts[i]->peer.port)
				to = loops[k];
		if (!to || to->n == QMAX)
			continue;   /* nobody there: lost */
		gw_pkt *c = pkt_new(pkts[i]->len ? pkts[i]->len : 1);
		memcpy(c->data, pkts[i]->data, pkts[i]->len);
		c->len = pkts[i]->len;
		c->peer = dp->local;
		to->q[to->n++] = c;
		if (to->agg)
			serve(to);
	}
	return (int)n;
}

static int loop_rx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct loop *l = (struct loop *)dp;
	if (l->rx_cap && n > l->rx_cap)
		n = l->rx_cap;
	unsigned i = 0;
	for (; i < n && l->head < l->n; i++)
		pkts[i] = l->q[l->head++];
	if (l->head == l->n)
		l->head = l->n = 0;
	return (int)i;
}

static int loop_wait(gw_dp *dp, unsigned timeout_us)
{
	(void)dp;
	(void)timeout_us;
	return GW_OK;
}

static void loop_close(gw_dp *dp)
{
	(void)dp;
}

static const struct gw_dp_ops loop_ops = {
	.name = "loop", .close = loop_close, .alloc = loop_alloc, .free = loop_free,
	.tx_burst = loop_tx, .rx_burst = loop_rx, .wait = loop_wait,
};

static struct loop *loop_new(const char *who, uint16_t port)
{
	struct loop *l = calloc(1, sizeof(*l));
	GW_CHECK(l, "out of memory");
	l->dp.ops = &loop_ops;
	l->dp.local = (gw_endpoint){.ip = 0x0a000001u, .port = port};
	l->dp.payload_max = PAYLOAD;
	l->dp.burst = 32;
	l->who = who;
	for (unsigned k = 0; k < NLOOPS; k++)
		if (!loops[k]) {
			loops[k] = l;
			return l;
		}
	fail_msg("too many loop dataplanes");
	return NULL;
}

static void loop_del(struct loop *l)
{
	for (unsigned i = l->head; i < l->n; i++)
		pkt_del(l->q[i]);
	for (unsigned k = 0; k < NLOOPS; k++)
		if (loops[k] == l)
			loops[k] = NULL;
	free(l);
}

/* Hands a shard every packet that reached it, and sends what it answers. */
static void serve(struct loop *l)
{
	gw_pkt *p[32];
	int n;
	while ((n = loop_rx(&l->dp, p, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			GW_OK_CALL(coll_agg_input(l->agg, 0, p[i], 1));
			pkt_del(p[i]);
		}
		coll_agg_flush(l->agg);
	}
}

/* ---- deterministic inputs ---------------------------------------------- */

static void fill(float *x, uint64_t n, uint32_t salt)
{
	for (uint64_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)(i * 2654435761u) ^ (salt * 40503u);
		x[i] = (float)((int)(h % 2001u) - 1000) / 1000.0f;
	}
}

/* ---- the traffic --------------------------------------------------------- */

struct chunks {
	uint8_t f[8][PAYLOAD];
	uint32_t len[8];
	unsigned n;
};

static int fill_chunk(void *arg, uint32_t chunk, uint8_t *buf, size_t room)
{
	struct chunks *c = arg;
	if (chunk >= c->n)
		return 0;
	GW_CHECK(c->len[chunk] <= room, "chunk %u does not fit", chunk);
	memcpy(buf, c->f[chunk], c->len[chunk]);
	return (int)c->len[chunk];
}

static int sink(void *arg, uint32_t chunk, const uint8_t *frame, size_t len)
{
	(void)arg;
	(void)chunk;
	(void)frame;
	(void)len;
	return 0;
}

/* A stream's DATA (3 frames; then 2 opaque payloads to nobody) and the
 * receiver's ACKs of the first: one with a bitmap after chunks 2 and 1
 * (one burst: a gap), then the final one after chunk 0. */
static void stream_traffic(void)
{
	struct loop *tx = loop_new("stream-tx", 7001), *rx = loop_new("stream-rx", 7002);
	float x[600];
	fill(x, 600, 1);
	struct chunks c = {0};
	gw_encoder *e = gw_encoder_create(GW_CODEC_RAW);
	gw_tensor t = {.id = 3, .dim = 600, .values = x};
	GW_OK_CALL(gw_encode_begin(e, &t));
	int n;
	while ((n = gw_encode_next(e, c.f[c.n], 1000)) > 0)
		c.len[c.n++] = (uint32_t)n;
	GW_CHECK(n == 0 && c.n == 3, "expected 3 frames, got %u (%d)", c.n, n);
	gw_encoder_free(e);
	for (int frames = 1; frames >= 0; frames--) {
		gw_stream_config sc = {.job = 9, .rank = 2, .timeout_ms = 1,
				       .frames = (uint32_t)frames};
		gw_stream *s = gw_stream_create(&tx->dp, &sc);
		GW_CHECK(s, "gw_stream_create");
		gw_endpoint to = rx->dp.local;
		if (!frames) {
			c.n = 2;        /* opaque bytes, as a non-frame user sends */
			to.port = 7003; /* nobody */
		}
		/* The receiver does not answer yet: the send times out. */
		int rc = gw_stream_send(s, &to, 5, 3, fill_chunk, &c);
		GW_CHECK(rc == GW_ETIMEDOUT, "send without a receiver: %d", rc);
		gw_stream_free(s);
	}
	/* The first sends of chunks 0, 1, 2 (then re-sends, dropped here),
	 * replayed as 2, 1 | 0. */
	GW_CHECK(rx->n >= 3, "the receiver got %u packets", rx->n);
	for (unsigned i = 3; i < rx->n; i++)
		pkt_del(rx->q[i]);
	rx->n = 3;
	gw_pkt *first = rx->q[0];
	rx->q[0] = rx->q[2];
	rx->q[2] = first;
	rx->rx_cap = 2;
	gw_stream_config rcf = {.job = 9, .rank = 4, .timeout_ms = 2000, .frames = 1};
	gw_stream *r = gw_stream_create(&rx->dp, &rcf);
	GW_CHECK(r, "gw_stream_create");
	GW_EXPECT_RC(gw_stream_recv(r, 5, 3, sink, NULL), 3, "receive of 3 chunks");
	gw_stream_free(r);
	loop_del(tx);
	loop_del(rx);
}

/* Workers and a shard of one job; worker `solo` (when >= 0) runs first
 * alone, timing out, so that the other finds its contributions in the
 * shard: two workers in one thread. */
/* A job's shard (its chunk size found for PAYLOAD first) and its workers
 * 0 .. n-1; worker r > 0 gives up after 1 ms (see dense_job). */
struct job_run {
	gw_coll_job job;
	struct loop *shard, *wl[2];
	gw_comm *wc[2];
	uint16_t n;
};

static void job_start(struct job_run *j, uint16_t n)
{
	int ce = gw_coll_chunk_elems(&j->job, PAYLOAD);
	GW_CHECK(ce > 0, "chunk_elems: %d (%s)", ce, gw_error_detail());
	j->job.chunk_elems = (uint32_t)ce;
	j->shard = loop_new("shard", 7100);
	gw_dp *sdp = &j->shard->dp;
	gw_agg_config ac = {.job = j->job, .shard = 0};
	j->shard->agg = gw_agg_create(&sdp, 1, &ac);
	GW_CHECK(j->shard->agg, "gw_agg_create: %s", gw_error_detail());
	j->n = n;
	for (uint16_t r = 0; r < n; r++) {
		j->wl[r] = loop_new(r ? "worker1" : "worker0", (uint16_t)(7200 + r));
		gw_comm_config cc = {.job = j->job, .rank = r, .shards = &sdp->local,
				     .rto_us = 1000000, .timeout_ms = r ? 1 : 5000};
		j->wc[r] = gw_comm_create(&j->wl[r]->dp, &cc);
		GW_CHECK(j->wc[r], "gw_comm_create rank %u: %s", r, gw_error_detail());
	}
}

static void job_end(struct job_run *j)
{
	for (uint16_t r = 0; r < j->n; r++) {
		gw_comm_free(j->wc[r]);
		loop_del(j->wl[r]);
	}
	gw_agg_free(j->shard->agg);
	loop_del(j->shard);
}

static void dense_job(int up, int down, int keyed, uint16_t workers, int rounds)
{
	static const uint8_t key[GW_KEY_LEN] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	struct job_run j = {.job = {.job = 77, .dim = 1000, .workers = workers, .shards = 1,
				    .window = 8, .up_codec = up, .down_codec = down,
				    .key = keyed ? key : NULL}};
	job_start(&j, workers);
	float g[1000], out[1000];
	for (int round = 0; round < rounds; round++) {
		if (workers == 2) {
			fill(g, 1000, 10u + (uint32_t)round);
			/* Alone it cannot finish: its call times out, its first
			 * sends sit in the shard's slots. */
			GW_CHECK(gw_allreduce(j.wc[1], g, out, NULL) == GW_ETIMEDOUT,
				 "worker 1 alone must time out");
		}
		fill(g, 1000, 20u + (uint32_t)round);
		GW_OK_CALL(gw_allreduce(j.wc[0], g, out, NULL));
	}
	job_end(&j);
}

static void sketched_job(void)
{
	static const gw_sketched_job sk = {.topk = 20, .momentum = 0.5f};
	struct job_run j = {.job = {.job = 78, .dim = 5000, .workers = 1, .shards = 1,
				    .up_codec = GW_CODEC_COUNTSKETCH,
				    .engine = GW_COLL_SKETCHED, .engine_params = &sk}};
	job_start(&j, 1);
	float g[5000];
	for (uint32_t round = 0; round < 2; round++) {
		fill(g, 5000, 30u + round);
		gw_sparse_update up;
		GW_OK_CALL(gw_allreduce_sketched(j.wc[0], g, &up, NULL));
		GW_CHECK(up.nnz == 20, "update of %u entries", up.nnz);
	}
	job_end(&j);
}

#include "golden_packets.h"

static void test_golden(void **state)
{
	(void)state;
	/* CTRL (liveness, wire-format §5.10) came after these bytes were
	 * recorded and is timed by heartbeats: this test holds the types it
	 * recorded to their bytes, with liveness off. */
	setenv("GW_LIVENESS_MS", "0", 1);
	recording = 1;
	stream_traffic();
	dense_job(GW_CODEC_RAW, GW_CODEC_RAW, 1, 2, 1);
	dense_job(GW_CODEC_RAW, GW_CODEC_RAW, 0, 1, 1);
	dense_job(GW_CODEC_3LC, GW_CODEC_3LC, 0, 1, 2);
	dense_job(GW_CODEC_TOPK, GW_CODEC_INT8, 1, 1, 1);
	sketched_job();
	recording = 0;
	const char *print = getenv("GW_GOLDEN_PRINT");
	if (print) {
		FILE *f = fopen(print, "w");
		GW_CHECK(f, "cannot write %s", print);
		fprintf(f, "/* Written by tests/wire/test_wire_golden with GW_GOLDEN_PRINT=FILE\n"
		       " * from the code of commit 5dcec76: never regenerate it to make\n"
		       " * the test pass: a difference is a change on the wire. */\n"
		       "static const struct golden {\n\tconst char *label;\n"
		       "\tuint32_t len;\n\tuint64_t hash;\n} golden[] = {\n");
		for (size_t i = 0; i < nlog; i++)
			fprintf(f, "\t{\"%s\", %u, 0x%016llxull},\n", log_[i].label, log_[i].len,
			       (unsigned long long)log_[i].hash);
		fprintf(f, "};\n");
		fclose(f);
		free(log_);
		return;
	}
	size_t ng = sizeof(golden) / sizeof(golden[0]);
	for (size_t i = 0; i < nlog && i < ng; i++) {
		const struct sent *s = &log_[i];
		char head[2 * sizeof(s->head) + 1] = {0};
		for (size_t k = 0; k < sizeof(s->head) && k < s->len; k++)
			snprintf(head + 2 * k, 3, "%02x", s->head[k]);
		GW_CHECK(!strcmp(s->label, golden[i].label) && s->len == golden[i].len &&
			 s->hash == golden[i].hash,
			 "packet %zu: sent %s, %u bytes, XXH3 %016llx (starts %s); "
			 "golden %s, %u bytes, XXH3 %016llx",
			 i, s->label, s->len, (unsigned long long)s->hash, head,
			 golden[i].label, golden[i].len,
			 (unsigned long long)golden[i].hash);
	}
	GW_CHECK(nlog == ng, "%zu packets sent, %zu golden", nlog, ng);
	print_message("  %zu packets, byte for byte as golden\n", nlog);
	free(log_);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
