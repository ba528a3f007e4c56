/* Fuzzes the aggregator shard's receive path (collective/aggregator.c,
 * sketched_agg.c) through coll_agg_input() and coll_agg_tick(), the calls
 * gw_agg_serve() makes, on a shard whose dataplanes are fakes
 * (coll_fake.c): packets come from the input, and everything the shard
 * sends is checked on its way out.
 *
 * Input (fuzz_coll.h): a job configuration, then records. Most records
 * are UP packets: genuine ones (a chunk of the harness's deterministic
 * gradient of that rank and round, encoded with the job's uplink codec as
 * a worker does, so decode-accumulate and finalize run for real), mutated
 * ones, ones crafted field by field around fuzz bytes, and raw bytes; each
 * sealed with the job's key (checksums and MAC valid, so the fuzzer gets
 * past them), with another key, without a MAC, or not at all. A tick
 * record advances the clock and runs the loss-tolerant deadline scan.
 *
 * Checks, aborting on a violation:
 *  - coll_agg_input() and coll_agg_tick() return GW_OK, or GW_ENOMEM (the
 *    only failure a shard may stop serving on: no memory);
 *  - every packet the shard sends is a RESULT it would itself accept
 *    (coll_accept() with the job's key: parse, checksum, MAC) from this
 *    shard, of at most payload_max bytes, with a contributor bitmap naming
 *    only existing workers, all of them in reliable mode, and a frame that
 *    verifies: the chunk's downlink frame, which decodes into the chunk
 *    (dense jobs), or a key set of the piece's size below dim, a receipt
 *    naming one worker and its phase's chunk count (Sketched-SGD); or, in
 *    a reliable hq job only, a CTRL MISMATCH from this shard to a worker
 *    whose text names the chunk and is whole (a frame on another scale,
 *    seed or bits refused);
 *  - an hq RESULT is a sum frame of the job's bits and rotation, with the
 *    round's seed and as many contributors as its bitmap names;
 *  - while every UP the shard took was genuine, a dense job with a raw
 *    downlink sends exactly 0 + the contributors' decoded frames, summed
 *    in rank order (the reliable mode's bit-identical promise), as the
 *    oracle's shard sums them (tests/oracle/: oracle_chunk_add); an hq
 *    job exactly the integer sum of the contributors' codes on the
 *    result's scale (gw_sum_add), in the fewest bits, naming the largest
 *    of their maxima as the next scale;
 *  - the job's layout is the oracle's: sparse frames for the same codecs,
 *    and Sketched-SGD's k, candidates and sketch (oracle_sk_sizes), which
 *    the harness's own encoders then use;
 *  - the statistics never decrease; chunks_short <= chunks_done <= ups;
 *    results_sent = RESULTs transmitted + RESULTs still queued.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"   /* gw_frame_seal */
#include "dense.h"
#include "sketched.h"
#include "dp_internal.h"
#include "fuzz_coll.h"
#include "fuzz_common.h"
#include "oracle.h"

#define JOB_ID 0x6a6f62u
#define SK_CACHE 4u

static const int up_codecs[FC_NCODECS] = {GW_CODEC_RAW, GW_CODEC_INT8, GW_CODEC_3LC,
					  GW_CODEC_TOPK, GW_CODEC_COUNTSKETCH, GW_CODEC_HQ};
#define HQ_ROUNDS 256u        /* a round byte's range */

/* Phase-A frames of one (rank, round): a sketch is encoded whole. */
struct sk_frames {
	int valid;
	uint32_t rank, round;
	uint8_t *buf;     /* chunks[0] x room */
	uint32_t *len;
};

struct run {
	gw_agg *a;
	const struct coll_layout *L;
	gw_dp *dp[2];
	unsigned ndp;
	uint32_t W;
	uint8_t seed;
	uint32_t round0;          /* what a round byte counts from */
	uint64_t now;
	gw_encoder *enc;          /* the uplink codec, as a worker sets it up */
	int sparse[2];            /* the codecs' frames are sparse (oracle) */
	gw_encoder *vals;         /* Sketched-SGD phase B: raw */
	float *x;                 /* dim: a gradient, or decoded chunks */
	float *want, *got;        /* chunk_elems */
	uint8_t *frame;           /* payload_max */
	uint8_t *pkt;             /* payload_max + MAC: the packet being built */
	uint32_t pkt_len;
	unsigned pkt_dp;
	gw_endpoint pkt_peer;
	int pkt_genuine;
	int oracle;               /* every UP taken so far was genuine */
	gw_agg_stats st;
	struct sk_frames sk[SK_CACHE];
	unsigned sk_next;
	uint64_t *keys;           /* Sketched-SGD: a piece's keys */
	float *kvals;
	/* hq: the job's bits and rotation; per chunk and round byte, the
	 * next scale the shard's RESULT named (seen: 1), and the latest;
	 * sums of codes (chunk_elems). */
	int hq;
	unsigned hq_bits, hq_rotate;
	float *hq_next, *hq_last;
	uint8_t *hq_seen, *hq_any;
	int32_t *isum, *iwant;
	uint64_t ctrl_tx;         /* CTRL packets the shard sent */
};

/* The harness's gradient: element i of rank's in round, never -0 or
 * non-finite, so sums are exact to compare. */
static float grad_at(const struct run *r, uint32_t rank, uint32_t round, uint64_t i)
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)rank << 48 ^
		     (uint64_t)round << 32 ^ r->seed;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (float)(h >> 41) * 0x1p-22f - 1.0f;
}

static gw_endpoint worker_ep(uint32_t rank, int moved)
{
	return (gw_endpoint){.ip = 0x0a000100u + rank, .port = (uint16_t)(7000 + moved)};
}

/* ---- genuine frames ---------------------------------------------------- */

/* hq: the scale a worker quantises chunk ch of round on: what the shard's
 * result of the round before named, else (a worker that joined or missed
 * it, or input out of order) the latest result's, else 0 (its first
 * round). */
static float hq_scale(const struct run *r, uint32_t round, uint32_t ch)
{
	uint32_t b = round - r->round0;
	size_t at = (size_t)ch * HQ_ROUNDS + b - 1;
	if (b && b < HQ_ROUNDS && r->hq_seen[at])
		return r->hq_next[at];
	return r->hq_any[ch] ? r->hq_last[ch] : 0.0f;
}

/* Dense job: rank's frame of chunk ch in round; hq on scale (NULL: the
 * scale a worker would have) with the round's seed. */
static int dense_frame(struct run *r, uint32_t rank, uint32_t round, uint32_t ch,
		       uint8_t *buf, uint32_t room, const float *scale)
{
	const struct coll_layout *L = r->L;
	uint32_t len = coll_chunk_len(L, ch);
	uint64_t base = (uint64_t)ch * L->job.chunk_elems;
	for (uint32_t i = 0; i < len; i++)
		r->x[i] = grad_at(r, rank, round, base + i);
	if (r->hq)
		GW_FUZZ_CHECK(gw_encoder_set_shared(r->enc, scale ? *scale
								  : hq_scale(r, round, ch),
						    coll_hq_seed(L, round, ch)) == GW_OK);
	/* Sparse frames count keys from the chunk's start (§5.7); one
	 * frame of exactly the chunk, as the worker's encode_chunk() makes
	 * it. */
	gw_tensor t = {.id = 0, .dim = len, .values = r->x,
		       .base = r->sparse[0] ? 0 : base};
	int n = oracle_encode_one(r->enc, &t, buf, room);
	gw_frame_info fi;
	GW_FUZZ_CHECKF(n > 0 && gw_frame_peek(buf, (size_t)n, &fi) == 0 &&
		       coll_frame_of_chunk(L, 0, &fi, ch) == 0,
		       "chunk %u of a job the shard accepted does not encode to one "
		       "frame of its packet: %d", ch, n);
	return n;
}

/* Sketched-SGD: rank's phase-A frames of round, encoded once. */
static const struct sk_frames *sketch_frames(struct run *r, uint32_t rank, uint32_t round)
{
	const struct coll_layout *L = r->L;
	for (unsigned i = 0; i < SK_CACHE; i++)
		if (r->sk[i].valid && r->sk[i].rank == rank && r->sk[i].round == round)
			return &r->sk[i];
	struct sk_frames *f = &r->sk[r->sk_next++ % SK_CACHE];
	uint32_t room = coll_sketch_frame_max(L->job.chunk_elems);
	for (uint64_t i = 0; i < L->job.dim; i++)
		r->x[i] = grad_at(r, rank, round, i);
	gw_tensor t = {.id = SK_T_SKETCH, .dim = L->job.dim, .values = r->x};
	GW_FUZZ_CHECK(gw_encode_begin(r->enc, &t) == GW_OK);
	for (uint32_t c = 0; c < L->sk.chunks[0]; c++) {
		uint8_t *b = f->buf + (size_t)c * room;
		int n = gw_encode_next(r->enc, b, room);
		gw_frame_info fi;
		GW_FUZZ_CHECKF(n > 0 && gw_frame_peek(b, (size_t)n, &fi) == 0 &&
			       coll_sketch_frame_ok(L, 0, b, &fi, c) == 0,
			       "sketch slice %u: %d", c, n);
		f->len[c] = (uint32_t)n;
	}
	uint8_t none[GW_BUDGET_MIN];
	GW_FUZZ_CHECK(gw_encode_next(r->enc, none, sizeof(none)) == 0);
	f->valid = 1;
	f->rank = rank;
	f->round = round;
	return f;
}

/* Sketched-SGD: rank's frame of phase ph, chunk c, in round. */
static int sketch_frame(struct run *r, uint32_t rank, uint32_t round, int ph, uint32_t c,
			uint8_t *buf, uint32_t room)
{
	const struct coll_layout *L = r->L;
	if (!ph) {
		const struct sk_frames *f = sketch_frames(r, rank, round);
		uint32_t fr = coll_sketch_frame_max(L->job.chunk_elems);
		GW_FUZZ_CHECK(f->len[c] <= room);
		memcpy(buf, f->buf + (size_t)c * fr, f->len[c]);
		return (int)f->len[c];
	}
	/* Phase B: any values at the candidates will do. */
	uint32_t len = coll_sketch_chunk_len(L, 1, c);
	uint64_t base = (uint64_t)c * L->job.chunk_elems;
	for (uint32_t i = 0; i < len; i++)
		r->x[i] = grad_at(r, rank, ~round, base + i);
	gw_tensor t = {.id = SK_T_VALUES, .dim = len, .values = r->x, .base = base};
	int n = oracle_encode_one(r->vals, &t, buf, room);
	gw_frame_info fi;
	GW_FUZZ_CHECKF(n > 0 && gw_frame_peek(buf, (size_t)n, &fi) == 0 &&
		       coll_sketch_frame_ok(L, 1, buf, &fi, c) == 0,
		       "candidate values %u: %d", c, n);
	return n;
}

/* ---- what the shard sends ---------------------------------------------- */

static uint32_t up_room(const struct run *r)
{
	return FC_PAYLOAD_MAX - coll_overhead(r->L, 0);
}

/* A dense RESULT's frame against the oracle's sum of the genuine
 * contributions: 0 + each decoded frame, in rank order (raw downlink,
 * genuine UPs only). */
static void check_sum(struct run *r, const gw_pkt_hdr *h, const uint8_t *bitmap,
		      const uint8_t *frame, uint32_t flen)
{
	const struct coll_layout *L = r->L;
	uint32_t len = coll_chunk_len(L, h->chunk);
	uint64_t base = (uint64_t)h->chunk * L->job.chunk_elems;
	memset(r->want, 0, len * sizeof(float));
	for (uint32_t w = 0; w < r->W; w++) {
		if (!(bitmap[w / 8] >> (w % 8) & 1))
			continue;
		int n = dense_frame(r, w, h->round, h->chunk, r->frame, up_room(r), NULL);
		GW_FUZZ_CHECK(oracle_chunk_add(r->sparse[0], r->frame, (size_t)n, base, len,
					       r->got, r->want) == 0);
	}
	memset(r->got, 0, len * sizeof(float));
	GW_FUZZ_CHECK(oracle_decode_chunk(r->sparse[1], frame, flen, r->got, base, len) == 0);
	GW_FUZZ_CHECKF(!memcmp(r->got, r->want, len * sizeof(float)),
		       "round %u chunk %u: the result is not the sum of the genuine "
		       "contributions", h->round, h->chunk);
}

/* An hq RESULT: a sum frame of the job's params and the round's seed,
 * with ncontrib contributors, whose next scale the harness's workers take
 * up; while every UP taken was genuine, exactly the contributors' codes
 * summed (their frames made again on the result's scale). */
static void check_hq(struct run *r, const gw_pkt_hdr *h, const uint8_t *bitmap,
		     uint32_t ncontrib, const uint8_t *frame, uint32_t flen)
{
	const struct coll_layout *L = r->L;
	uint32_t ch = h->chunk, len = coll_chunk_len(L, ch);
	uint64_t base = (uint64_t)ch * L->job.chunk_elems;
	gw_sum_info si;
	GW_FUZZ_CHECK(gw_sum_info_of(frame, flen, &si) == GW_OK);
	GW_FUZZ_CHECKF(si.contributors == ncontrib && si.bits == r->hq_bits &&
		       si.rotated == r->hq_rotate &&
		       si.seed == (r->hq_rotate ? coll_hq_seed(L, h->round, ch) : 0),
		       "round %u chunk %u: a sum of %u contributors (bitmap %u), bits %u "
		       "rotate %u seed %#x", h->round, ch, si.contributors, ncontrib, si.bits,
		       si.rotated, si.seed);
	uint32_t b = h->round - r->round0;
	if (b < HQ_ROUNDS) {
		r->hq_next[(size_t)ch * HQ_ROUNDS + b] = si.next;
		r->hq_seen[(size_t)ch * HQ_ROUNDS + b] = 1;
	}
	r->hq_last[ch] = si.next;
	r->hq_any[ch] = 1;
	if (!r->oracle)
		return;
	memset(r->iwant, 0, len * sizeof(int32_t));
	memset(r->isum, 0, len * sizeof(int32_t));
	float next = 0.0f;
	for (uint32_t w = 0; w < r->W; w++) {
		if (!(bitmap[w / 8] >> (w % 8) & 1))
			continue;
		int n = dense_frame(r, w, h->round, ch, r->frame, up_room(r), &si.scale);
		gw_sum_info wi;
		GW_FUZZ_CHECK(gw_sum_add(r->frame, (size_t)n, r->iwant, base, len, &wi) ==
			      (int)len);
		next = wi.next > next ? wi.next : next;
	}
	GW_FUZZ_CHECK(gw_sum_add(frame, flen, r->isum, base, len, NULL) == (int)len);
	GW_FUZZ_CHECKF(!memcmp(r->isum, r->iwant, len * sizeof(int32_t)),
		       "round %u chunk %u: the codes are not the sum of the genuine "
		       "contributions'", h->round, ch);
	uint32_t m = 0;
	for (uint32_t i = 0; i < len; i++) {
		uint32_t v = r->isum[i] < 0 ? 0u - (uint32_t)r->isum[i] : (uint32_t)r->isum[i];
		m = v > m ? v : m;
	}
	unsigned width = 2;
	while ((1ull << (width - 1)) - 1 < m)
		width++;
	GW_FUZZ_CHECKF(si.width == width && !si.poisoned &&
		       !memcmp(&si.next, &next, sizeof(float)),
		       "round %u chunk %u: width %u (%u holds the sum), next %a (the "
		       "contributors' largest: %a), poisoned %u", h->round, ch, si.width, width,
		       (double)si.next, (double)next, si.poisoned);
}

/* A CTRL from the shard: only a MISMATCH, in a reliable hq job, to a
 * worker whose frame it refused. */
static void check_ctrl(struct run *r, const gw_pkt *p)
{
	const struct coll_layout *L = r->L;
	struct coll_ctrl m;
	enum coll_verdict v = coll_ctrl_read(L, p, &m);
	GW_FUZZ_CHECKF(v == COLL_OK, "the shard sent a CTRL it would reject: %d", (int)v);
	GW_FUZZ_CHECKF(r->hq && L->job.mode == GW_COLL_RELIABLE &&
		       m.kind == COLL_CTRL_MISMATCH && m.role == COLL_ROLE_SHARD &&
		       m.from == r->a->shard, "CTRL kind %u role %u from %u in a job of "
		       "codec %d, mode %d", m.kind, m.role, m.from, L->job.up_codec,
		       (int)L->job.mode);
	GW_FUZZ_CHECKF(p->peer.ip - 0x0a000100u < r->W, "a MISMATCH to no worker");
	GW_FUZZ_CHECKF(!strncmp(m.text, "chunk ", 6) && strlen(m.text) < COLL_CTRL_TEXT - 1,
		       "MISMATCH text \"%s\"", m.text);
	r->ctrl_tx++;
}

/* A Sketched-SGD RESULT: a piece of the candidates or of the update, or a
 * receipt. */
static void check_sketched(struct run *r, const gw_pkt_hdr *h, uint32_t ncontrib,
			   const uint8_t *frame, uint32_t flen)
{
	const struct coll_layout *L = r->L;
	int hv = -1;
	if (h->tensor == SK_T_RECEIPT || h->tensor == SK_T_RECEIPT + 1) {
		int ph = (int)h->tensor - SK_T_RECEIPT;
		GW_FUZZ_CHECK(ncontrib == 1 && h->chunk == 0);
		GW_FUZZ_CHECK(gw_keyset_decode(frame, flen, UINT64_MAX, r->keys, NULL, 1,
					       &hv) == 1 && !hv);
		GW_FUZZ_CHECK(r->keys[0] == L->sk.chunks[ph]);
		return;
	}
	GW_FUZZ_CHECKF(h->tensor == SK_T_SKETCH || h->tensor == SK_T_VALUES,
		       "RESULT of tensor %u", h->tensor);
	int ph = h->tensor == SK_T_VALUES;
	/* Loss-tolerant: a phase may finish at its deadline with any number
	 * of complete workers, none included. */
	GW_FUZZ_CHECKF(L->job.mode == GW_COLL_LOSS_TOLERANT || ncontrib == r->W,
		       "reliable mode: a result of %u of %u workers", ncontrib, r->W);
	GW_FUZZ_CHECK(h->chunk < L->sk.pieces[ph]);
	uint32_t want = coll_sketch_piece_len(L, ph, h->chunk);
	int n = gw_keyset_decode(frame, flen, L->job.dim, r->keys, r->kvals, want, &hv);
	GW_FUZZ_CHECKF(n == (int)want && hv == ph, "piece %u of kind %d: %d keys, "
		       "values %d", h->chunk, ph, n, hv);
}

static void agg_on_tx(gw_dp *dp, gw_pkt *p)
{
	struct run *r = fc_dp_arg(dp);
	const struct coll_layout *L = r->L;
	if (coll_pkt_type(p) == GW_PKT_CTRL) {
		check_ctrl(r, p);
		return;
	}
	gw_pkt_hdr h;
	const uint8_t *body;
	uint32_t blen;
	enum coll_verdict v = coll_accept(L, p, GW_PKT_RESULT, &h, &body, &blen);
	GW_FUZZ_CHECKF(v == COLL_OK, "the shard sent a packet it would reject: "
		       "verdict %d, parse %d", (int)v, gw_pkt_parse(p->data, p->len, &h));
	GW_FUZZ_CHECK(h.rank == r->a->shard && h.sack_len == L->bitmap_len &&
		      blen > L->bitmap_len);
	uint32_t nc = 0, tail = r->W % 8;
	for (uint32_t i = 0; i < L->bitmap_len; i++)
		nc += (uint32_t)__builtin_popcount(body[i]);
	GW_FUZZ_CHECKF(!(tail && body[L->bitmap_len - 1] >> tail),
		       "contributor bitmap names workers that do not exist");
	const uint8_t *frame = body + L->bitmap_len;
	uint32_t flen = blen - L->bitmap_len;
	gw_frame_info fi;
	GW_FUZZ_CHECK(gw_frame_verify(frame, flen, &fi) == 0 && fi.frame_len == flen);
	if (r->a->L.eng == &coll_sketched_engine) {
		check_sketched(r, &h, nc, frame, flen);
		return;
	}
	GW_FUZZ_CHECKF(nc && (L->job.mode == GW_COLL_LOSS_TOLERANT || nc == r->W),
		       "reliable mode: a result of %u of %u workers", nc, r->W);
	GW_FUZZ_CHECK(h.tensor == 0 && h.chunk < L->chunks &&
		      coll_shard_of(L, h.chunk) == r->a->shard &&
		      coll_frame_of_chunk(L, 1, &fi, h.chunk) == 0);
	if (r->hq)
		check_hq(r, &h, body, nc, frame, flen);
	if (r->oracle && !r->hq) {
		check_sum(r, &h, body, frame, flen);
	} else {
		uint32_t len = coll_chunk_len(L, h.chunk);
		memset(r->got, 0, len * sizeof(float));
		GW_FUZZ_CHECK(oracle_decode_chunk(r->sparse[1], frame, flen, r->got,
						  (uint64_t)h.chunk * L->job.chunk_elems,
						  len) == 0);
	}
}

/* The statistics never go back; results queued are sent or still queued. */
static void check_stats(struct run *r)
{
	gw_agg_stats st;
	gw_agg_stats_get(r->a, &st);
	uint64_t now[sizeof(st) / 8], was[sizeof(st) / 8];
	memcpy(now, &st, sizeof(now));
	memcpy(was, &r->st, sizeof(was));
	for (size_t i = 0; i < sizeof(now) / 8; i++)
		GW_FUZZ_CHECKF(now[i] >= was[i], "statistic %zu went from %llu to %llu", i,
			       (unsigned long long)was[i], (unsigned long long)now[i]);
	GW_FUZZ_CHECK(st.chunks_short <= st.chunks_done && st.chunks_done <= st.ups);
	uint64_t out = 0;
	for (unsigned d = 0; d < r->ndp; d++) {
		const struct txq *q = &r->a->txq[d];
		GW_FUZZ_CHECK(q->n == coll_agg_queued(r->a, d));
		for (uint32_t i = 0; i < q->n; i++)
			out += coll_pkt_type(q->p[i]) == GW_PKT_RESULT;
		out += fc_dp_sent(r->dp[d]);
	}
	out -= r->ctrl_tx;   /* MISMATCHes: no results */
	GW_FUZZ_CHECKF(st.results_sent == out, "%llu results sent, %llu went out or wait",
		       (unsigned long long)st.results_sent, (unsigned long long)out);
	r->st = st;
}

static void check_rc(int rc, const char *what)
{
	GW_FUZZ_CHECKF(rc == GW_OK || rc == GW_ENOMEM, "%s returned %s", what,
		       gw_error_name(rc));
}

/* ---- records ----------------------------------------------------------- */

/* FA_UP: a genuine frame, maybe mutated, in a packet sealed as mode says. */
static void rec_up(struct run *r, struct fc_in *in)
{
	const struct coll_layout *L = r->L;
	uint8_t rb = fc_u8(in);
	uint16_t cb = fc_u16(in);
	uint32_t round = r->round0 + fc_u8(in);
	uint8_t mode = fc_u8(in);
	uint16_t off = 0;
	uint8_t x = 0;
	if (mode & FM_MUTATE) {
		off = fc_u16(in);
		x = fc_u8(in);
	}
	uint32_t rank = rb < 0x80 ? rb % r->W : rb;
	uint32_t fr = rank < r->W ? rank : rank % r->W;   /* whose frame */
	gw_pkt_hdr h = {.type = GW_PKT_UP, .flags = mode & FM_RETX ? GW_PKT_F_RETX : 0,
			.rank = (uint16_t)rank, .job = L->job.job, .round = round};
	uint8_t *body = r->pkt + GW_PKT_HDR_LEN;
	int n;
	if (r->a->L.eng == &coll_sketched_engine) {
		uint32_t c = cb % L->chunks;
		int ph = c >= L->sk.chunks[0];
		c -= ph ? L->sk.chunks[0] : 0;
		h.tensor = ph ? SK_T_VALUES : SK_T_SKETCH;
		h.chunk = c;
		n = sketch_frame(r, fr, round, ph, c, body, up_room(r));
	} else {
		uint32_t local = coll_shard_chunks(L, r->a->shard);
		uint32_t c = (mode & FM_ANY_CHUNK) || !local ? cb % L->chunks
			   : (cb % local) * L->job.shards + r->a->shard;
		h.chunk = c;
		n = dense_frame(r, fr, round, c, body, up_room(r), NULL);
	}
	if (mode & FM_MUTATE) {
		body[off % (uint32_t)n] ^= x;
		if (mode & FM_FRAME_SEAL)
			gw_frame_seal(body, (size_t)n);
	}
	r->pkt_len = fc_seal(L, mode, r->pkt, &h, (uint32_t)n);
	r->pkt_genuine = !(mode & FM_MUTATE);
	r->pkt_dp = mode & FM_DP1 ? 1 : 0;
	r->pkt_peer = worker_ep(rank, !!(mode & FM_MOVED));
}

/* FA_CRAFT: header fields and a body from the input. */
static void rec_craft(struct run *r, struct fc_in *in)
{
	const struct coll_layout *L = r->L;
	gw_pkt_hdr h = {0};
	uint8_t type = fc_u8(in);
	h.type = type ? type : GW_PKT_UP;
	h.flags = fc_u8(in);
	h.sack_len = fc_u8(in);
	h.rank = fc_u16(in);
	uint8_t job = fc_u8(in);
	h.job = job ? job : L->job.job;
	h.round = r->round0 + fc_u8(in);
	h.tensor = fc_u8(in);
	h.chunk = fc_u32(in);
	uint8_t mode = fc_u8(in);
	uint32_t len = fc_u16(in) % (up_room(r) + 1);
	fc_bytes(in, r->pkt + GW_PKT_HDR_LEN, len);
	r->pkt_len = fc_seal(L, mode, r->pkt, &h, len);
	r->pkt_genuine = 0;
	r->pkt_dp = mode & FM_DP1 ? 1 : 0;
	r->pkt_peer = worker_ep(h.rank, !!(mode & FM_MOVED));
}

/* FA_RAW: the bytes as they are. */
static void rec_raw(struct run *r, struct fc_in *in)
{
	uint32_t len = fc_u16(in) % (FC_PAYLOAD_MAX + 1);
	fc_bytes(in, r->pkt, len);
	r->pkt_len = len;
	r->pkt_genuine = 0;
	r->pkt_dp = len & 1;
	r->pkt_peer = worker_ep(len % 5, 1);
}

/* Hands the packet being built to the shard, in a block of exactly its
 * length, and flushes what it answers. */
static void deliver(struct run *r)
{
	gw_pkt *p = fc_pkt_new(r->pkt_len);
	GW_FUZZ_CHECK(p);
	memcpy(p->data, r->pkt, r->pkt_len);
	p->len = r->pkt_len;
	p->peer = r->pkt_peer;
	int rc = coll_agg_input(r->a, r->pkt_dp % r->ndp, p, r->now);
	fc_pkt_free(p);
	check_rc(rc, "coll_agg_input");
	/* The sum is known only while every contribution taken is ours; the
	 * result a foreign one completed may already wait in the queue. */
	gw_agg_stats st;
	gw_agg_stats_get(r->a, &st);
	if (st.ups != r->st.ups && !r->pkt_genuine)
		r->oracle = 0;
	coll_agg_flush(r->a);
	check_stats(r);
}

static void records(struct run *r, struct fc_in *in)
{
	while (in->n) {
		uint8_t op = fc_u8(in) % FA_NOPS;
		r->now += 1000;
		switch (op) {
		case FA_TICK:
			r->now += (fc_u16(in) + 1ull) * 16000u;
			check_rc(coll_agg_tick(r->a, r->now), "coll_agg_tick");
			coll_agg_flush(r->a);
			check_stats(r);
			continue;
		case FA_UP:
			rec_up(r, in);
			break;
		case FA_CRAFT:
			rec_craft(r, in);
			break;
		case FA_RAW:
			rec_raw(r, in);
			break;
		default:   /* FA_AGAIN */
			break;
		}
		if (in->over)
			return;   /* a record cut short: the fuzzer's noise */
		deliver(r);
	}
}

/* ---- set-up ------------------------------------------------------------ */

static const uint8_t job_key[GW_KEY_LEN] = "gradwire fuzz_agg_rx job key 32b";

static void run_free(struct run *r)
{
	gw_agg_free(r->a);
	for (unsigned d = 0; d < 2; d++)
		fc_dp_delete(r->dp[d]);
	gw_encoder_free(r->enc);
	gw_encoder_free(r->vals);
	for (unsigned i = 0; i < SK_CACHE; i++) {
		free(r->sk[i].buf);
		free(r->sk[i].len);
	}
	free(r->x);
	free(r->want);
	free(r->got);
	free(r->frame);
	free(r->pkt);
	free(r->keys);
	free(r->kvals);
	GW_FREE_ALL(r->hq_next, r->hq_last, r->hq_seen, r->hq_any, r->isum, r->iwant);
}

/* The job of the configuration bytes, and the shard of it; 0 or -1 when
 * the job is one the shard refuses (then there is nothing to fuzz). */
static int setup(struct run *r, const uint8_t *cfg)
{
	uint8_t f = cfg[0];
	int sketched = (cfg[1] & 15) % FC_NCODECS == FC_SKETCHED;
	int hq = (cfg[1] & 15) % FC_NCODECS == FC_HQ;
	gw_coll_job job = {
		.job = JOB_ID,
		.dim = 1 + (cfg[2] | cfg[3] << 8) % FC_DIM_MAX,
		.chunk_elems = 40u * (1u + cfg[4] % 24u),
		.workers = (uint16_t)(1 + (f & FC_AGG_WORKERS) +
				      (cfg[7] & FC_AGG_W8 ? 8 : 0)),
		.shards = (f & FC_AGG_SHARDS2) && !sketched ? 2 : 1,
		.window = 1u + (cfg[5] & 7u),
		.up_codec = up_codecs[(cfg[1] & 15) % FC_NCODECS],
		.down_codec = sketched ? GW_CODEC_RAW
			    : hq       ? GW_CODEC_HQ   /* the shard's sums of its codes */
				       : up_codecs[(cfg[1] >> 4) % FC_SKETCHED],
		.mode = f & FC_AGG_TOLERANT ? GW_COLL_LOSS_TOLERANT : GW_COLL_RELIABLE,
		.deadline_us = 1000u * (1u + (cfg[5] >> 3)),
		.key = f & FC_AGG_KEYED ? job_key : NULL,
	};
	fc_sketch_sizes(&job, cfg[7]);
	r->W = job.workers;
	r->seed = cfg[6];
	r->round0 = cfg[7] & FC_ROUND_HIGH ? 0xffffff00u : 0;
	r->now = 1000000000ull;
	r->ndp = f & FC_AGG_TWO_DP ? 2 : 1;
	struct fc_hooks hk = {.on_tx = agg_on_tx, .arg = r,
			      .pool = f & FC_AGG_POOL2 ? 2 : 0,
			      .tx_max = cfg[7] & FC_TX1_SHARD ? 1 : 0};
	for (unsigned d = 0; d < r->ndp; d++) {
		gw_endpoint ep = {.ip = 0x0a000001u, .port = (uint16_t)(9000 + d)};
		r->dp[d] = fc_dp_new(&ep, FC_PAYLOAD_MAX, &hk);
		if (!r->dp[d])
			return -1;
	}
	gw_agg_config ac = {.job = job,
			    .shard = job.shards > 1 && (f & FC_AGG_SHARD1) ? 1 : 0};
	if (!(r->a = gw_agg_create(r->dp, r->ndp, &ac)))
		return -1;
	r->L = &r->a->L;
	uint32_t ce = job.chunk_elems;
	for (int d = 0; d < 2; d++) {
		r->sparse[d] = oracle_frames_sparse(d ? job.down_codec : job.up_codec, NULL);
		GW_FUZZ_CHECKF(sketched || r->sparse[d] == r->L->dense.sparse[d],
			       "direction %d: frames sparse "
			       "%d, the oracle says %d", d, r->L->dense.sparse[d], r->sparse[d]);
	}
	r->enc = oracle_encoder(job.up_codec, NULL, ce);
	GW_FUZZ_CHECKF(r->enc, "uplink encoder of codec %d", job.up_codec);
	if (sketched) {
		/* The job's table, whatever the codec's defaults are: the
		 * oracle's sizes, which must be the shard's. */
		struct oracle_sk_sizes sz;
		const struct coll_sketch *sk = &r->L->sk;
		GW_FUZZ_CHECK(oracle_sk_sizes(&job, &sz) == 0);
		GW_FUZZ_CHECKF(sz.k == sk->k && sz.m == sk->m && sz.csk.rows == sk->csk.rows &&
			       sz.csk.cols == sk->csk.cols && sz.csk.seed == sk->csk.seed,
			       "sizes k %u m %u %ux%u, the oracle says k %u m %u %ux%u", sk->k,
			       sk->m, sk->csk.rows, sk->csk.cols, sz.k, sz.m, sz.csk.rows,
			       sz.csk.cols);
		GW_FUZZ_CHECK(gw_encoder_set_param(r->enc, GW_PARAM_ROWS, sz.csk.rows) == GW_OK &&
			      gw_encoder_set_param(r->enc, GW_PARAM_COLS, sz.csk.cols) == GW_OK);
		r->vals = oracle_encoder(GW_CODEC_RAW, NULL, ce);
		GW_FUZZ_CHECK(r->vals);
		uint32_t room = coll_sketch_frame_max(ce);
		for (unsigned i = 0; i < SK_CACHE; i++) {
			r->sk[i].buf = malloc((size_t)r->L->sk.chunks[0] * room);
			r->sk[i].len = malloc(r->L->sk.chunks[0] * sizeof(uint32_t));
			GW_FUZZ_CHECK(r->sk[i].buf && r->sk[i].len);
		}
		uint32_t most = GW_MAX(r->L->sk.per[0], r->L->sk.per[1]);
		r->keys = malloc(most * sizeof(uint64_t));
		r->kvals = malloc(most * sizeof(float));
		GW_FUZZ_CHECK(r->keys && r->kvals);
	}
	r->x = malloc(job.dim * sizeof(float));
	r->want = malloc(ce * sizeof(float));
	r->got = malloc(ce * sizeof(float));
	r->frame = malloc(FC_PAYLOAD_MAX);
	r->pkt = malloc(FC_PAYLOAD_MAX + GW_PKT_MAC_LEN);
	GW_FUZZ_CHECK(r->x && r->want && r->got && r->frame && r->pkt);
	r->oracle = !sketched && (job.down_codec == GW_CODEC_RAW || hq);
	if (hq) {
		/* The job's params, as the shard reads them from the uplink's. */
		double bits = 0, rot = 0;
		GW_FUZZ_CHECK(gw_encoder_get_param(r->enc, GW_PARAM_BITS, &bits) == GW_OK &&
			      gw_encoder_get_param(r->enc, GW_PARAM_ROTATE, &rot) == GW_OK);
		r->hq = 1;
		r->hq_bits = (unsigned)bits;
		r->hq_rotate = rot != 0;
		uint32_t nc = r->L->chunks + 1;
		r->hq_next = calloc((size_t)nc * HQ_ROUNDS, sizeof(float));
		r->hq_seen = calloc((size_t)nc * HQ_ROUNDS, 1);
		r->hq_last = calloc(nc, sizeof(float));
		r->hq_any = calloc(nc, 1);
		r->isum = malloc(ce * sizeof(int32_t));
		r->iwant = malloc(ce * sizeof(int32_t));
		GW_FUZZ_CHECK(r->hq_next && r->hq_seen && r->hq_last && r->hq_any && r->isum &&
			      r->iwant);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < FC_CFG_LEN)
		return 0;
	struct run r = {0};
	if (setup(&r, data) == 0) {
		struct fc_in in = {.p = data + FC_CFG_LEN, .n = size - FC_CFG_LEN};
		records(&r, &in);
		gw_fuzz_last_rc = GW_OK;   /* ran to the end, every check held */
		if (getenv("GW_FUZZ_VERBOSE"))   /* do seeds reach finalize? */
			fprintf(stderr, "agg_rx: %u chunks, ups %llu done %llu short %llu "
				"sent %llu bad %llu mismatches %llu oracle %d\n", r.L->chunks,
				(unsigned long long)r.st.ups, (unsigned long long)r.st.chunks_done,
				(unsigned long long)r.st.chunks_short,
				(unsigned long long)r.st.results_sent,
				(unsigned long long)r.st.bad, (unsigned long long)r.ctrl_tx,
				r.oracle);
	} else if (getenv("GW_FUZZ_VERBOSE")) {
		fprintf(stderr, "agg_rx: the shard refused the job\n");
	}
	run_free(&r);
	return 0;
}
