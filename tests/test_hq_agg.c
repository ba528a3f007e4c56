/* The shard's hq path (collective/dense_agg.c, wire-format §4.11): a shard
 * of an hq job adds its workers' codes as integers and sends their exact
 * sum, holds a chunk's next round to the scale its result named, and
 * finishes a loss-tolerant chunk at its deadline with the codes of those
 * who came. The shard runs on a fake dataplane that keeps what it sends;
 * the workers' frames come from real encoders set up as a worker sets
 * them (gw_encoder_set_shared with the chunk's scale and the round's
 * seed). Each result is checked against sums and a decoder model written
 * here from the spec (§4.11.1's inverse rotation, §4.11.2's decoding),
 * not from the codec's code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gw_test.h"

#include "dense.h"
#include "codec/hq_model.h"
#include "dp_internal.h"

#define JOB_ID 0x68716167u
#define PAYLOAD 1400u
#define DIM 1001u           /* chunks of 360, 360, 281: blocks of 256 64 32 8 and 256 16 8 1 */
#define CHUNK 360u
#define NCH 3u
#define WMAX 8u
#define PKT_MAX 2048u

/* ---- a fake dataplane that keeps what it sends ------------------------- */

struct sent {
	uint8_t *data;
	uint32_t len;
	gw_endpoint peer;
};

struct fake {
	struct gw_dp dp;   /* first: the library sees a gw_dp */
	struct sent *out;
	unsigned n, cap;
	unsigned live;     /* packets lent */
};

static int fake_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fake *f = (struct fake *)dp;
	for (unsigned i = 0; i < n; i++) {
		gw_pkt *p = calloc(1, sizeof(*p));
		assert_non_null(p);
		p->data = malloc(dp->payload_max);
		assert_non_null(p->data);
		p->room = dp->payload_max;
		pkts[i] = p;
		f->live++;
	}
	return (int)n;
}

static void fake_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fake *f = (struct fake *)dp;
	for (unsigned i = 0; i < n; i++) {
		free(pkts[i]->data);
		free(pkts[i]);
		f->live--;
	}
}

static int fake_tx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fake *f = (struct fake *)dp;
	for (unsigned i = 0; i < n; i++) {
		if (f->n == f->cap) {
			f->cap = f->cap ? 2 * f->cap : 64;
			f->out = realloc(f->out, f->cap * sizeof(*f->out));
			assert_non_null(f->out);
		}
		struct sent *s = &f->out[f->n++];
		s->data = malloc(pkts[i]->len);
		assert_non_null(s->data);
		memcpy(s->data, pkts[i]->data, pkts[i]->len);
		s->len = pkts[i]->len;
		s->peer = pkts[i]->peer;
	}
	return (int)n;
}

static int fake_rx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	(void)dp;
	(void)pkts;
	(void)n;
	return 0;
}

static int fake_wait(gw_dp *dp, unsigned timeout_us)
{
	(void)dp;
	(void)timeout_us;
	return GW_OK;
}

static void fake_close(gw_dp *dp)
{
	(void)dp;
}

static const struct gw_dp_ops fake_ops = {
	.name = "test", .close = fake_close, .alloc = fake_alloc, .free = fake_free,
	.tx_burst = fake_tx, .rx_burst = fake_rx, .wait = fake_wait,
};

static void fake_clear(struct fake *f)
{
	for (unsigned i = 0; i < f->n; i++)
		free(f->out[i].data);
	f->n = 0;
}

/* ---- the model: §4.11.1 and §4.11.2, written from the spec -------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The rotation seed of chunk c in round r (docs: the low 32 bits of
 * mix64(mix64(job << 32 | r) ^ c)). */
static uint32_t seed_of(uint32_t round, uint32_t c)
{
	return (uint32_t)mix64(mix64((uint64_t)JOB_ID << 32 | round) ^ c);
}

/* The fewest bits in 2..32 whose two's complement range, less its most
 * negative value, holds m. */
static unsigned width_of(uint32_t m)
{
	unsigned w = 2;
	while (((1ull << (w - 1)) - 1) < m)
		w++;
	return w;
}

/* ---- a job: one shard, its workers' encoders ---------------------------- */

struct t {
	struct fake f;
	gw_dp *dp;
	gw_agg *a;
	const struct coll_layout *L;
	unsigned W, bits, rotate;
	gw_encoder *enc[WMAX + 1];
	float *g;                 /* DIM: a gradient */
	uint64_t now;
	char params[64];
};

static const uint8_t job_key[GW_KEY_LEN] = "gradwire test_hq_agg key 32 byte";

static void t_open(struct t *t, unsigned W, unsigned bits, unsigned rotate,
		   gw_coll_mode mode, int keyed)
{
	memset(t, 0, sizeof(*t));
	t->W = W;
	t->bits = bits;
	t->rotate = rotate;
	t->f.dp = (struct gw_dp){.ops = &fake_ops, .payload_max = PAYLOAD, .burst = 32,
				 .local = {.ip = 0x0a000001u, .port = 9000}};
	t->dp = &t->f.dp;
	snprintf(t->params, sizeof(t->params), "bits=%u,rotate=%u", bits, rotate);
	gw_agg_config ac = {.job = {.job = JOB_ID, .dim = DIM, .chunk_elems = CHUNK,
				    .workers = (uint16_t)W, .shards = 1, .window = 4,
				    .up_codec = GW_CODEC_HQ, .down_codec = GW_CODEC_HQ,
				    .up_params = t->params, .mode = mode,
				    .deadline_us = 5000, .key = keyed ? job_key : NULL}};
	t->a = gw_agg_create(&t->dp, 1, &ac);
	if (!t->a)
		fail_msg("gw_agg_create: %s", gw_error_detail());
	assert_int_equal(gw_agg_set_liveness(t->a, 0), GW_OK);
	t->L = &t->a->L;
	assert_int_equal(t->L->chunks, NCH);
	/* The seed both ends derive: the spec's, not only the library's. */
	assert_int_equal(coll_hq_seed(t->L, 7, 2), seed_of(7, 2));
	for (unsigned w = 0; w <= WMAX; w++) {
		t->enc[w] = gw_encoder_create(GW_CODEC_HQ);
		assert_non_null(t->enc[w]);
		assert_int_equal(gw_encoder_set_param(t->enc[w], GW_PARAM_BITS, bits), GW_OK);
		assert_int_equal(gw_encoder_set_param(t->enc[w], GW_PARAM_ROTATE, rotate), GW_OK);
		assert_int_equal(gw_encoder_set_param(t->enc[w], GW_PARAM_MAX_FRAME_ELEMS, CHUNK),
				 GW_OK);
	}
	t->g = malloc(DIM * sizeof(float));
	assert_non_null(t->g);
	t->now = 1000000000ull;
}

static void t_close(struct t *t)
{
	gw_agg_free(t->a);
	assert_int_equal(t->f.live, 0);
	fake_clear(&t->f);
	free(t->f.out);
	for (unsigned w = 0; w <= WMAX; w++)
		gw_encoder_free(t->enc[w]);
	free(t->g);
}

/* Worker w's gradient of round: each worker its own magnitude, a few
 * outliers (which the rotation spreads), zeros, and a round that grows,
 * so the scale named by the round before clips some values. */
static void gradient(struct t *t, unsigned w, uint32_t round)
{
	uint64_t s = mix64(0x67726164ull ^ (uint64_t)w << 40 ^ (uint64_t)round << 20 ^
			   t->bits << 8 ^ t->W);
	float mag = (0.25f + 0.7f * (float)w) * (1.0f + 0.5f * (float)(round % 4));
	for (uint32_t i = 0; i < DIM; i++) {
		s = mix64(s + 0x9e3779b97f4a7c15ull);
		float u = (float)(s >> 40) * 0x1p-24f * 2.0f - 1.0f;
		uint32_t kind = (uint32_t)(s & 63);
		t->g[i] = kind == 0 ? 0.0f : kind == 1 ? 40.0f * mag * u : mag * u;
	}
}

/* Worker w's frame of chunk ch in round, quantised on scale S with the
 * seed given, by an encoder of bits (the job's unless told); its length. */
static int frame_of(struct t *t, unsigned w, uint32_t round, uint32_t ch, float S,
		    uint32_t seed, gw_encoder *e, uint8_t *buf)
{
	gradient(t, w, round);
	uint64_t off = (uint64_t)ch * CHUNK;
	uint32_t len = coll_chunk_len(t->L, ch);
	gw_tensor tn = {.id = 0, .dim = len, .values = t->g + off, .base = off};
	assert_int_equal(gw_encoder_set_shared(e ? e : t->enc[w], S, seed), GW_OK);
	e = e ? e : t->enc[w];
	assert_int_equal(gw_encode_begin(e, &tn), GW_OK);
	int n = gw_encode_next(e, buf, PAYLOAD - GW_PKT_HDR_LEN - GW_PKT_MAC_LEN);
	assert_true(n > 0);
	uint8_t none[GW_BUDGET_MIN];
	assert_int_equal(gw_encode_next(e, none, sizeof(none)), 0);
	return n;
}

static gw_endpoint worker_ep(unsigned w)
{
	return (gw_endpoint){.ip = 0x0a000100u + w, .port = 7000};
}

/* Hands worker w's UP of (round, ch) holding frame[0..n) to the shard and
 * flushes what it answers. */
static void up(struct t *t, unsigned w, uint32_t round, uint32_t ch, const uint8_t *frame,
	       int n)
{
	uint8_t pkt[PKT_MAX];
	memcpy(pkt + GW_PKT_HDR_LEN, frame, (size_t)n);
	gw_pkt_hdr h = {.type = GW_PKT_UP, .rank = (uint16_t)w, .job = JOB_ID, .round = round,
			.chunk = ch};
	uint32_t len = coll_seal(t->L, pkt, &h, (uint32_t)n);
	gw_pkt p = {.data = pkt, .len = len, .room = sizeof(pkt), .peer = worker_ep(w)};
	t->now += 1000;
	assert_int_equal(coll_agg_input(t->a, 0, &p, t->now), GW_OK);
	coll_agg_flush(t->a);
}

/* The RESULT of (round, ch) among what was sent (every copy the same, one
 * per worker named), its frame and bitmap; NULL if none. */
static const uint8_t *result_of(struct t *t, uint32_t round, uint32_t ch, uint32_t *flen,
				const uint8_t **bitmap)
{
	const uint8_t *frame = NULL;
	for (unsigned i = 0; i < t->f.n; i++) {
		struct sent *s = &t->f.out[i];
		if (s->data[3] != GW_PKT_RESULT)
			continue;
		gw_pkt p = {.data = s->data, .len = s->len, .room = s->len, .peer = s->peer};
		gw_pkt_hdr h;
		const uint8_t *body;
		uint32_t blen;
		assert_int_equal(coll_accept(t->L, &p, GW_PKT_RESULT, &h, &body, &blen), COLL_OK);
		if (h.round != round || h.chunk != ch)
			continue;
		assert_int_equal(h.sack_len, t->L->bitmap_len);
		if (frame) {
			assert_int_equal(blen - t->L->bitmap_len, *flen);
			assert_memory_equal(frame, body + t->L->bitmap_len, *flen);
			continue;
		}
		*bitmap = body;
		frame = body + t->L->bitmap_len;
		*flen = blen - t->L->bitmap_len;
	}
	return frame;
}

/* The CTRL packets sent to worker w so far, the last one's fields. */
static unsigned ctrls_to(struct t *t, unsigned w, struct coll_ctrl *last)
{
	unsigned n = 0;
	gw_endpoint ep = worker_ep(w);
	for (unsigned i = 0; i < t->f.n; i++) {
		struct sent *s = &t->f.out[i];
		if (s->data[3] != GW_PKT_CTRL)
			continue;
		gw_pkt p = {.data = s->data, .len = s->len, .room = s->len, .peer = s->peer};
		struct coll_ctrl m;
		assert_int_equal(coll_ctrl_read(t->L, &p, &m), COLL_OK);
		if (memcmp(&s->peer, &ep, sizeof(ep)))
			continue;
		*last = m;
		n++;
	}
	return n;
}

/* What a chunk's RESULT must be: the sum of the codes of those who came
 * (sum, len codes), on scale S with seed (the round's), the largest of
 * their maxima as next. Checks the frame, its params, and that it decodes
 * bit for bit to the model. */
static void check_result(struct t *t, uint32_t round, uint32_t ch, const int32_t *sum,
			 unsigned contributors, uint32_t who, float S, uint32_t seed,
			 float next)
{
	uint32_t flen = 0, len = coll_chunk_len(t->L, ch);
	uint64_t off = (uint64_t)ch * CHUNK;
	const uint8_t *bm = NULL;
	const uint8_t *frame = result_of(t, round, ch, &flen, &bm);
	if (!frame)
		fail_msg("W %u bits %u rotate %u: no RESULT of round %u chunk %u", t->W,
			 t->bits, t->rotate, round, ch);
	/* The bitmap names exactly those who came. */
	for (unsigned w = 0; w < t->W; w++)
		assert_int_equal(bm[w / 8] >> (w % 8) & 1, who >> w & 1);
	assert_int_equal(coll_contributors(t->L, bm), contributors);
	/* Its codes are the integer sum, exactly. */
	int32_t got[CHUNK];
	memset(got, 0, sizeof(got));
	gw_sum_info si;
	assert_int_equal(gw_sum_add(frame, flen, got, off, len, &si), (int)len);
	assert_memory_equal(got, sum, len * sizeof(int32_t));
	uint32_t m = 0;
	for (uint32_t i = 0; i < len; i++)
		m = GW_MAX(m, (uint32_t)abs(sum[i]));
	gw_sum_info fi;
	assert_int_equal(gw_sum_info_of(frame, flen, &fi), GW_OK);
	assert_memory_equal(&fi, &si, sizeof(si));
	assert_int_equal(si.contributors, contributors);
	assert_int_equal(si.width, width_of(m));
	assert_int_equal(si.bits, t->bits);
	assert_int_equal(si.rotated, t->rotate);
	assert_int_equal(si.seed, t->rotate ? seed : 0);
	assert_int_equal(si.poisoned, 0);
	assert_memory_equal(&si.scale, &S, sizeof(float));
	assert_memory_equal(&si.next, &next, sizeof(float));
	/* gw_decode of it is the spec's float model, bit for bit. */
	static float out[DIM];
	float want[CHUNK];
	memset(out, 0, sizeof(out));
	assert_int_equal(gw_decode(frame, flen, out, DIM), (int)len);
	hq_model_decode(sum, len, S, t->bits, t->rotate, seed, want);
	for (uint32_t i = 0; i < len; i++)
		if (memcmp(&out[off + i], &want[i], sizeof(float)))
			fail_msg("W %u bits %u rotate %u round %u chunk %u: element %u "
				 "decodes to %a, the model says %a", t->W, t->bits, t->rotate,
				 round, ch, i, (double)out[off + i], (double)want[i]);
	for (uint64_t i = 0; i < DIM; i++)   /* nothing outside the chunk */
		if ((i < off || i >= off + len) && out[i] != 0.0f)
			fail_msg("chunk %u: element %llu of another chunk written", ch,
				 (unsigned long long)i);
}

/* A round of every chunk from the workers in who (in an order that
 * differs by chunk), each on scale[ch] with the round's seed; sum, next
 * and the scale the result names for the next round per chunk. */
static void round_of(struct t *t, uint32_t round, uint32_t who, float *scale, int check)
{
	for (uint32_t ch = 0; ch < NCH; ch++) {
		uint32_t len = coll_chunk_len(t->L, ch);
		uint64_t off = (uint64_t)ch * CHUNK;
		int32_t sum[CHUNK];
		memset(sum, 0, sizeof(sum));
		float next = 0.0f;
		unsigned k = 0;
		uint32_t seed = seed_of(round, ch);
		for (unsigned i = 0; i < t->W; i++) {
			unsigned w = (i + ch * 3 + round) % t->W;
			if (!(who >> w & 1))
				continue;
			uint8_t frame[PKT_MAX];
			int n = frame_of(t, w, round, ch, scale[ch], seed, NULL, frame);
			gw_sum_info wi;
			assert_int_equal(gw_sum_add(frame, (size_t)n, sum, off, len, &wi),
					 (int)len);
			assert_int_equal(wi.contributors, 1);
			next = wi.next > next ? wi.next : next;
			up(t, w, round, ch, frame, n);
			k++;
		}
		if (check)
			check_result(t, round, ch, sum, k, who, scale[ch], seed, next);
		scale[ch] = next;
	}
}

/* ---- behaviours --------------------------------------------------------- */

/* A reliable job's result is the exact integer sum of its workers' codes,
 * in the fewest bits, naming the largest maximum as the next scale; it
 * decodes to the spec's model bit for bit. Round 0 is on scale 0 (as a
 * worker's first), round 1 on the scale round 0's result named. */
static void test_result_is_exact_integer_sum(void **state)
{
	(void)state;
	for (unsigned rotate = 0; rotate < 2; rotate++)
		for (unsigned W = 2; W <= WMAX; W++)
			for (unsigned bits = 2; bits <= 8; bits++) {
				struct t t;
				t_open(&t, W, bits, rotate, GW_COLL_RELIABLE, W % 2);
				float scale[NCH] = {0};
				round_of(&t, 0, (1u << W) - 1, scale, 1);
				for (uint32_t ch = 0; ch < NCH; ch++)
					assert_true(scale[ch] > 0.0f);
				round_of(&t, 1, (1u << W) - 1, scale, 1);
				/* A third round, on a scale that clips the larger values. */
				round_of(&t, 2, (1u << W) - 1, scale, 1);
				gw_agg_stats st;
				gw_agg_stats_get(t.a, &st);
				assert_int_equal(st.chunks_done, 3 * NCH);
				assert_int_equal(st.ups, 3ull * NCH * W);
				assert_int_equal(st.bad + st.corrupt + st.chunks_short, 0);
				t_close(&t);
			}
}

/* Round 1 of chunk 1 with worker 1's frames wrong one way each: refused,
 * counted bad, not summed, and (reliable) told by a MISMATCH naming the
 * chunk and what differs; once it sends the right frame the result is the
 * sum of the right frames only. */
static void refused_frames(gw_coll_mode mode, uint32_t r0)
{
	const unsigned W = 4, bits = 4;
	struct t t;
	t_open(&t, W, bits, 1, mode, 1);
	float scale[NCH] = {0};
	uint32_t all = (1u << W) - 1;
	round_of(&t, r0, all, scale, 1);
	uint32_t r1 = r0 + 1, ch = 1;
	uint32_t len = coll_chunk_len(t.L, ch), seed = seed_of(r1, ch);
	uint64_t off = (uint64_t)ch * CHUNK;
	float S = scale[ch];
	assert_true(S > 0.0f);
	int32_t sum[CHUNK];
	memset(sum, 0, sizeof(sum));
	float next = 0.0f;
	uint8_t frame[PKT_MAX];
	gw_encoder *other = gw_encoder_create(GW_CODEC_HQ);
	assert_non_null(other);
	assert_int_equal(gw_encoder_set_param(other, GW_PARAM_BITS, bits + 1), GW_OK);
	assert_int_equal(gw_encoder_set_param(other, GW_PARAM_MAX_FRAME_ELEMS, CHUNK), GW_OK);
	gw_encoder *unrot = gw_encoder_create(GW_CODEC_HQ);
	assert_non_null(unrot);
	assert_int_equal(gw_encoder_set_param(unrot, GW_PARAM_BITS, bits), GW_OK);
	assert_int_equal(gw_encoder_set_param(unrot, GW_PARAM_ROTATE, 0), GW_OK);
	assert_int_equal(gw_encoder_set_param(unrot, GW_PARAM_MAX_FRAME_ELEMS, CHUNK), GW_OK);
	struct {
		float S;
		uint32_t seed;
		gw_encoder *e;
		const char *names;   /* what the text must name besides the chunk */
		int sum;             /* a sum frame of two, not a worker's */
	} bad[] = {
		{2.0f * S, seed, NULL, "scale"},         /* another scale */
		{0.0f, seed, NULL, "scale"},             /* a worker that missed the result */
		{S, seed_of(r1 + 1, ch), NULL, "seed"},  /* another round's rotation */
		{S, seed_of(r1, ch + 1), NULL, "seed"},  /* another chunk's */
		{S, seed, other, "bits"},                /* other bits */
		{S, 0, unrot, "rotate"},                 /* no rotation */
		{S, seed, NULL, "sum", 1},               /* a shard's frame */
	};
	for (unsigned b = 0; b < GW_ARRAY_SIZE(bad); b++) {
		/* Before and after another worker's right frame: the first
		 * frame of a round sets nothing a wrong one could take. */
		if (b == 2) {
			int n = frame_of(&t, 0, r1, ch, S, seed, NULL, frame);
			assert_int_equal(gw_sum_add(frame, (size_t)n, sum, off, len, NULL),
					 (int)len);
			gw_sum_info wi;
			assert_int_equal(gw_sum_info_of(frame, (size_t)n, &wi), GW_OK);
			next = GW_MAX(next, wi.next);
			up(&t, 0, r1, ch, frame, n);
		}
		gw_agg_stats b4, af;
		gw_agg_stats_get(t.a, &b4);
		struct coll_ctrl m0 = {0}, m1 = {0};
		unsigned c0 = ctrls_to(&t, 1, &m0);
		int n = frame_of(&t, 1, r1, ch, bad[b].S, bad[b].seed, bad[b].e, frame);
		if (bad[b].sum) {
			int32_t codes[CHUNK];
			memset(codes, 0, sizeof(codes));
			gw_sum_info si;
			assert_int_equal(gw_sum_add(frame, (size_t)n, codes, off, len, &si),
					 (int)len);
			si.contributors = 2;
			n = gw_sum_encode(frame, sizeof(frame), 0, off, codes, len, &si);
			assert_true(n > 0);
		}
		up(&t, 1, r1, ch, frame, n);
		gw_agg_stats_get(t.a, &af);
		assert_int_equal(af.bad, b4.bad + 1);
		assert_int_equal(af.ups, b4.ups);
		assert_int_equal(af.corrupt, b4.corrupt);
		unsigned c1 = ctrls_to(&t, 1, &m1);
		if (mode == GW_COLL_LOSS_TOLERANT) {
			assert_int_equal(c1, c0);   /* left out, learns from the result */
			continue;
		}
		assert_int_equal(c1, c0 + 1);
		/* Whole: a text cut at the CTRL's 88 bytes may lose what matters. */
		if (strlen(m1.text) >= COLL_CTRL_TEXT - 1)
			fail_msg("case %u: the MISMATCH's text was cut: \"%s\"", b, m1.text);
		assert_int_equal(m1.kind, COLL_CTRL_MISMATCH);
		assert_int_equal(m1.role, COLL_ROLE_SHARD);
		char want[64];
		snprintf(want, sizeof(want), "chunk %u ", ch);
		if (strncmp(m1.text, want, strlen(want)))
			fail_msg("case %u: the MISMATCH names no chunk: \"%s\"", b, m1.text);
		if (!strstr(m1.text, bad[b].names))
			fail_msg("case %u: the MISMATCH names no %s: \"%s\"", b, bad[b].names,
				 m1.text);
		if (!strcmp(bad[b].names, "scale")) {
			/* Both scales, whole: the worker's and the shard's. */
			char s[2][32];
			snprintf(s[0], sizeof(s[0]), "%a", (double)bad[b].S);
			snprintf(s[1], sizeof(s[1]), "%a", (double)S);
			for (int i = 0; i < 2; i++) {
				const char *at = strstr(m1.text, s[i]);
				if (!at || (at[strlen(s[i])] && strchr("0123456789abcdef",
									at[strlen(s[i])])))
					fail_msg("case %u: the MISMATCH does not name scale %s: "
						 "\"%s\"", b, s[i], m1.text);
			}
		}
		/* No chunk finished on it. */
		uint32_t fl;
		const uint8_t *bm;
		assert_null(result_of(&t, r1, ch, &fl, &bm));
	}
	gw_encoder_free(other);
	gw_encoder_free(unrot);
	/* The others, then worker 1 right: the sum of the right frames. */
	for (unsigned w = 1; w < W; w++) {
		unsigned v = w == 3 ? 1 : w + 1;   /* 2, 3, then 1 */
		int n = frame_of(&t, v, r1, ch, S, seed, NULL, frame);
		gw_sum_info wi;
		assert_int_equal(gw_sum_add(frame, (size_t)n, sum, off, len, &wi), (int)len);
		next = GW_MAX(next, wi.next);
		up(&t, v, r1, ch, frame, n);
	}
	check_result(&t, r1, ch, sum, W, all, S, seed, next);
	t_close(&t);
}

static void test_round_two_holds_workers_to_the_scale(void **state)
{
	(void)state;
	refused_frames(GW_COLL_RELIABLE, 0);
	/* Rounds of ten digits: the text still names both scales whole. */
	refused_frames(GW_COLL_RELIABLE, 0xfffffff0u);
	refused_frames(GW_COLL_LOSS_TOLERANT, 5);
}

/* A frame whose scale was flipped in transit (an unkeyed job: the UP's
 * checksum leaves the frame to its own) is corrupt, not another scale: it
 * is counted corrupt, nobody is told to stop, and its re-send counts. */
static void test_corrupt_scale_is_not_a_mismatch(void **state)
{
	(void)state;
	const unsigned W = 2;
	struct t t;
	t_open(&t, W, 5, 1, GW_COLL_RELIABLE, 0);
	float scale[NCH] = {0};
	round_of(&t, 0, 3, scale, 1);
	/* A bit of the scale (params read, and differ), then of the
	 * contributors (params that do not read). */
	static const unsigned at[] = {GW_FRAME_HDR_LEN + 13, GW_FRAME_HDR_LEN + 4};
	for (unsigned k = 0; k < GW_ARRAY_SIZE(at); k++) {
		uint8_t frame[PKT_MAX];
		int n = frame_of(&t, 1, 1, 0, scale[0], seed_of(1, 0), NULL, frame);
		frame[at[k]] ^= 0x40;
		gw_agg_stats b4, af;
		gw_agg_stats_get(t.a, &b4);
		struct coll_ctrl m;
		unsigned c0 = ctrls_to(&t, 1, &m);
		up(&t, 1, 1, 0, frame, n);
		gw_agg_stats_get(t.a, &af);
		assert_int_equal(af.corrupt, b4.corrupt + 1);
		assert_int_equal(af.bad, b4.bad);
		assert_int_equal(af.ups, b4.ups);
		assert_int_equal(ctrls_to(&t, 1, &m), c0);
	}
	/* The re-send, then the round completes. */
	round_of(&t, 1, 3, scale, 1);
	t_close(&t);
}

/* Loss-tolerant: a chunk that reaches its deadline with W - 1 workers
 * finishes with their sum, contributors W - 1 in the frame and the
 * bitmap; the late worker gets that result, and with its next scale
 * joins the round after. */
static void test_deadline_sums_those_who_came(void **state)
{
	(void)state;
	for (unsigned W = 2; W <= 5; W++) {
		struct t t;
		t_open(&t, W, 3 + W % 4, W % 2, GW_COLL_LOSS_TOLERANT, W == 3);
		float scale[NCH] = {0};
		uint32_t all = (1u << W) - 1;
		round_of(&t, 0, all, scale, 1);
		unsigned late = W / 2;
		uint32_t who = all & ~(1u << late);
		float s1[NCH];
		memcpy(s1, scale, sizeof(s1));
		uint64_t first = t.now + 1000;   /* the first UP of round 1 */
		/* round_of without the check: nothing finishes before the deadline. */
		float tmp[NCH];
		memcpy(tmp, scale, sizeof(tmp));
		round_of(&t, 1, who, tmp, 0);
		uint32_t fl;
		const uint8_t *bm;
		for (uint32_t ch = 0; ch < NCH; ch++)
			assert_null(result_of(&t, 1, ch, &fl, &bm));
		uint64_t dl = 1000ull * t.L->job.deadline_us;
		assert_int_equal(coll_agg_tick(t.a, first + dl - 1), GW_OK);
		coll_agg_flush(t.a);
		assert_null(result_of(&t, 1, 0, &fl, &bm));
		/* Every chunk's first UP came within W ms of the first: past
		 * all the deadlines. */
		assert_int_equal(coll_agg_tick(t.a, t.now + dl), GW_OK);
		coll_agg_flush(t.a);
		for (uint32_t ch = 0; ch < NCH; ch++) {
			uint32_t len = coll_chunk_len(t.L, ch);
			uint64_t off = (uint64_t)ch * CHUNK;
			uint32_t seed = seed_of(1, ch);
			int32_t sum[CHUNK];
			memset(sum, 0, sizeof(sum));
			float next = 0.0f;
			for (unsigned w = 0; w < W; w++) {
				if (!(who >> w & 1))
					continue;
				uint8_t frame[PKT_MAX];
				int n = frame_of(&t, w, 1, ch, s1[ch], seed, NULL, frame);
				gw_sum_info wi;
				assert_int_equal(gw_sum_add(frame, (size_t)n, sum, off, len, &wi),
						 (int)len);
				next = GW_MAX(next, wi.next);
			}
			check_result(&t, 1, ch, sum, W - 1, who, s1[ch], seed, next);
			assert_memory_equal(&tmp[ch], &next, sizeof(float));
		}
		gw_agg_stats st;
		gw_agg_stats_get(t.a, &st);
		assert_int_equal(st.chunks_short, NCH);
		/* The late worker's UPs are answered with those results. */
		unsigned before = t.f.n;
		for (uint32_t ch = 0; ch < NCH; ch++) {
			uint8_t frame[PKT_MAX];
			int n = frame_of(&t, late, 1, ch, s1[ch], seed_of(1, ch), NULL, frame);
			up(&t, late, 1, ch, frame, n);
		}
		assert_int_equal(t.f.n, before + NCH);
		gw_agg_stats_get(t.a, &st);
		assert_int_equal(st.late, NCH);
		/* Round 2, everyone on the scale the short results named. */
		round_of(&t, 2, all, tmp, 1);
		t_close(&t);
	}
}

GW_TEST_MAIN("hq_agg", 0,
	     cmocka_unit_test(test_result_is_exact_integer_sum),
	     cmocka_unit_test(test_round_two_holds_workers_to_the_scale),
	     cmocka_unit_test(test_corrupt_scale_is_not_a_mismatch),
	     cmocka_unit_test(test_deadline_sums_those_who_came))
