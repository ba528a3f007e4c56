/* The Sketched-SGD engine's shard (gw_allreduce_sketched).
 *
 * One round at a time, in three phases. A: every worker's table slices
 * are decoded into its own part of a W x (r x c) buffer (each chunk taken
 * once); when every worker's every slice is in — or, loss-tolerant, at
 * the deadline, with the workers that are complete — the parts are summed
 * in rank order, HEAVYMIX estimates all coordinates and selects the P k
 * largest, and the candidate key sets go to every worker. B: the workers'
 * exact values at the candidates, the same way, summed in rank order; the
 * k largest sums are the update, sent to every worker as key sets with
 * values. DONE: repeated UPs get the stored RESULT packets again (rate-
 * limited per worker: a worker re-sends a whole phase at once).
 *
 * Sums in rank order make the update independent of arrival order, so a
 * reliable run is bit-identical to the algorithm in one process. A round
 * r + 1 starts only once every worker has sent something of round r, which
 * proves it holds round r - 1's update: the update packets of r - 1 can go,
 * and r's stay to answer workers that missed them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sketched.h"

#define RESEND_GAP_NS 1000000ull   /* one answer per worker per phase re-send */
#define NO_ROUND UINT64_MAX

enum { PH_A = 0, PH_B = 1, PH_DONE = 2 };

struct sk_res {                  /* a set of RESULT packets */
	uint8_t *buf;                /* pieces x room */
	uint32_t *len;
	uint32_t n;
};

struct sk_agg {
	uint64_t round;              /* NO_ROUND before the first packet */
	int phase;
	uint64_t first_ns;           /* first UP of the phase */
	float *parts[2];             /* W x cells, W x m */
	uint8_t *seen[2];            /* W x chunks, per phase */
	uint32_t *nseen[2];          /* per worker */
	uint32_t complete[2];        /* workers with every chunk of the phase */
	uint8_t *bitmap[2];          /* contributors of the phase's sum */
	float *sum, *est;            /* max(cells, m); dim */
	uint64_t *cand, *sel, *keys; /* m, k, k */
	float *vals;                 /* k */
	struct sk_res res[2];        /* candidates, update of this round */
	struct sk_res prev;          /* the update of the round before */
	uint64_t prev_round;
	uint64_t *last_round;        /* per worker: latest round seen + 1 (0: none) */
	uint64_t *resent_ns;         /* per worker */
	uint64_t *pass;              /* per worker: last repeat's stage, chunk */
	uint32_t room;               /* RESULT packet bytes */
};

static void res_free(struct sk_res *r)
{
	GW_FREE_ALL(r->buf, r->len);
}

static int res_alloc(struct sk_res *r, uint32_t pieces, uint32_t room)
{
	r->buf = malloc((size_t)pieces * room);
	r->len = calloc(pieces, sizeof(*r->len));
	r->n = 0;
	return r->buf && r->len ? GW_OK : GW_ERR(GW_ENOMEM);
}

void sk_agg_fini(gw_agg *a)
{
	struct sk_agg *s = a->eng;
	if (!s)
		return;
	for (int p = 0; p < 2; p++) {
		GW_FREE_ALL(s->parts[p], s->seen[p], s->nseen[p], s->bitmap[p]);
		res_free(&s->res[p]);
	}
	res_free(&s->prev);
	GW_FREE_ALL(s->sum, s->est, s->cand, s->sel, s->keys, s->vals, s->last_round,
		    s->resent_ns, s->pass, s);
	a->eng = NULL;
}

int sk_agg_init(gw_agg *a, const gw_agg_config *cfg)
{
	(void)cfg;   /* the layout has all it needs */
	const struct coll_layout *L = &a->L;
	const struct coll_sketch *k = &L->sk;
	uint32_t W = L->job.workers;
	uint64_t cells = (uint64_t)k->csk.rows * k->csk.cols;
	struct sk_agg *s = calloc(1, sizeof(*s));
	if (!s)
		return GW_ERR(GW_ENOMEM);
	a->eng = s;
	s->round = NO_ROUND;
	s->prev_round = NO_ROUND;
	s->room = a->res_room;
	uint64_t n[2] = {cells, k->m};
	int ok = 1;
	for (int p = 0; p < 2; p++) {
		s->parts[p] = malloc((size_t)W * n[p] * sizeof(float));
		s->seen[p] = malloc((size_t)W * k->chunks[p]);
		s->nseen[p] = malloc(W * sizeof(uint32_t));
		s->bitmap[p] = malloc(L->bitmap_len);
		ok &= s->parts[p] && s->seen[p] && s->nseen[p] && s->bitmap[p] &&
		      res_alloc(&s->res[p], k->pieces[p], s->room) == GW_OK;
	}
	ok &= res_alloc(&s->prev, k->pieces[1], s->room) == GW_OK;
	s->sum = malloc(GW_MAX(cells, (uint64_t)k->m) * sizeof(float));
	s->est = malloc(L->job.dim * sizeof(float));
	s->cand = malloc((size_t)k->m * sizeof(uint64_t));
	s->sel = malloc((size_t)k->m * sizeof(uint64_t));
	s->keys = malloc((size_t)k->k * sizeof(uint64_t));
	s->vals = malloc((size_t)k->k * sizeof(float));
	s->last_round = calloc(W, sizeof(uint64_t));
	s->resent_ns = calloc(W, sizeof(uint64_t));
	s->pass = calloc(W, sizeof(uint64_t));
	if (!ok || !s->sum || !s->est || !s->cand || !s->sel || !s->keys || !s->vals ||
	    !s->last_round || !s->resent_ns || !s->pass) {
		sk_agg_fini(a);
		return GW_ERR(GW_ENOMEM);
	}
	return GW_OK;
}

static void start_round(gw_agg *a, uint64_t r)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	uint32_t W = L->job.workers;
	uint64_t cells = (uint64_t)L->sk.csk.rows * L->sk.csk.cols;
	uint64_t n[2] = {cells, L->sk.m};
	if (s->round != NO_ROUND && s->phase == PH_DONE) {
		/* This round's update answers laggards from now on. */
		struct sk_res t = s->prev;
		s->prev = s->res[1];
		s->res[1] = t;
		s->prev_round = s->round;
	}
	s->round = r;
	s->phase = PH_A;
	s->first_ns = 0;
	for (int p = 0; p < 2; p++) {
		memset(s->parts[p], 0, (size_t)W * n[p] * sizeof(float));
		memset(s->seen[p], 0, (size_t)W * L->sk.chunks[p]);
		memset(s->nseen[p], 0, W * sizeof(uint32_t));
		s->complete[p] = 0;
		s->res[p].n = 0;
	}
}

static void send_set(gw_agg *a, const struct sk_res *r, uint32_t w)
{
	const struct sk_agg *s = a->eng;
	for (uint32_t i = 0; i < r->n; i++)
		coll_agg_send(a, w, r->buf + (size_t)i * s->room, r->len[i]);
}

/* Answers a worker re-sending a phase whose result exists: once per pass
 * (coll_sketch_new_pass). A time gap alone is not enough: on a 100 Mbit/s
 * link a pass of a few hundred chunks lasts tens of milliseconds, and an
 * answer per millisecond multiplied the result set's bytes by that many. */
static void answer(gw_agg *a, const struct sk_res *r, uint32_t w, uint32_t round, int ph,
		   uint32_t chunk, uint64_t now)
{
	struct sk_agg *s = a->eng;
	a->st.duplicates++;
	if (!coll_sketch_new_pass(&s->pass[w], round, ph, chunk) ||
	    now - s->resent_ns[w] < RESEND_GAP_NS)
		return;
	s->resent_ns[w] = now;
	send_set(a, r, w);
	a->st.results_resent += r->n;
}

/* Sums the complete workers' parts of phase ph in rank order into s->sum
 * and records them in the phase's bitmap. */
static void sum_parts(gw_agg *a, int ph, uint64_t n)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	memset(s->sum, 0, n * sizeof(float));
	memset(s->bitmap[ph], 0, L->bitmap_len);
	for (uint32_t w = 0; w < L->job.workers; w++) {
		if (s->nseen[ph][w] != L->sk.chunks[ph])
			continue;
		s->bitmap[ph][w / 8] |= (uint8_t)(1u << (w % 8));
		const float *g = s->parts[ph] + (size_t)w * n;
		for (uint64_t i = 0; i < n; i++)
			s->sum[i] += g[i];
	}
	if (s->complete[ph] < L->job.workers)
		a->st.chunks_short++;
	a->st.chunks_done++;
}

/* Cuts keys[0..n) (and values) into RESULT pieces of kind ph. */
static int build_set(gw_agg *a, int ph, const uint64_t *keys, const float *vals)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	struct sk_res *r = &s->res[ph];
	uint32_t per = L->sk.per[ph];
	for (uint32_t i = 0; i < L->sk.pieces[ph]; i++) {
		uint8_t *p = r->buf + (size_t)i * s->room;
		uint32_t n = coll_sketch_piece_len(L, ph, i);
		uint32_t room = s->room - coll_overhead(L, 1);
		int len = gw_keyset_encode(ph ? SK_T_VALUES : SK_T_SKETCH, keys + (size_t)i * per,
					   vals ? vals + (size_t)i * per : NULL, n,
					   p + GW_PKT_HDR_LEN + L->bitmap_len, room);
		if (len < 0)
			return len;
		memcpy(p + GW_PKT_HDR_LEN, s->bitmap[ph], L->bitmap_len);
		gw_pkt_hdr h = {.type = GW_PKT_RESULT, .sack_len = (uint8_t)L->bitmap_len,
				.rank = 0, .job = L->job.job, .round = (uint32_t)s->round,
				.tensor = ph ? SK_T_VALUES : SK_T_SKETCH, .chunk = i,
				.seq = a->seq++};
		r->len[i] = coll_seal(L, p, &h, L->bitmap_len + (uint32_t)len);
	}
	r->n = L->sk.pieces[ph];
	for (uint32_t w = 0; w < L->job.workers; w++)
		if (a->wk[w].known)
			send_set(a, r, w);
	return GW_OK;
}

/* HEAVYMIX: the summed table's estimate of every coordinate, the P k
 * largest, to every worker. */
static int finish_a(gw_agg *a)
{
	struct sk_agg *s = a->eng;
	const struct coll_sketch *k = &a->L.sk;
	sum_parts(a, PH_A, (uint64_t)k->csk.rows * k->csk.cols);
	int rc = gw_csk_estimate(&k->csk, s->sum, a->L.job.dim, s->est);
	int64_t n = rc < 0 ? rc : gw_top_abs(s->est, a->L.job.dim, k->m, s->cand);
	if (n < 0)
		return (int)n;
	s->phase = PH_B;
	s->first_ns = 0;
	return build_set(a, PH_A, s->cand, NULL);
}

/* The k largest exact sums among the candidates: the update. */
static int finish_b(gw_agg *a)
{
	struct sk_agg *s = a->eng;
	const struct coll_sketch *k = &a->L.sk;
	sum_parts(a, PH_B, k->m);
	int64_t n = gw_top_abs(s->sum, k->m, k->k, s->sel);
	if (n < 0)
		return (int)n;
	for (uint32_t i = 0; i < k->k; i++) {
		s->keys[i] = s->cand[s->sel[i]];
		s->vals[i] = s->sum[s->sel[i]];
	}
	s->phase = PH_DONE;
	return build_set(a, PH_B, s->keys, s->vals);
}

/* Tells worker w that every chunk of its phase ph is in (rate-limited:
 * the worker may be re-sending the whole phase). */
static void receipt(gw_agg *a, int ph, uint32_t w, uint64_t now)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	if (s->resent_ns[w] && now - s->resent_ns[w] < RESEND_GAP_NS)
		return;
	s->resent_ns[w] = now;
	uint8_t p[GW_PKT_HDR_LEN + GW_PKT_SACK_MAX + 128 + GW_PKT_MAC_LEN];
	uint64_t key = L->sk.chunks[ph];
	int len = gw_keyset_encode(SK_T_RECEIPT + (uint32_t)ph, &key, NULL, 1,
				   p + GW_PKT_HDR_LEN + L->bitmap_len, 128);
	if (len < 0)
		return;
	memset(p + GW_PKT_HDR_LEN, 0, L->bitmap_len);
	p[GW_PKT_HDR_LEN + w / 8] = (uint8_t)(1u << (w % 8));
	gw_pkt_hdr h = {.type = GW_PKT_RESULT, .sack_len = (uint8_t)L->bitmap_len,
			.rank = 0, .job = L->job.job, .round = (uint32_t)s->round,
			.tensor = SK_T_RECEIPT + (uint32_t)ph, .chunk = 0, .seq = a->seq++};
	coll_agg_send(a, w, p, coll_seal(L, p, &h, L->bitmap_len + (uint32_t)len));
}

/* Decodes worker w's frame of phase ph, chunk c, into its part once. */
/* Every worker not gone has sent all of phase ph; a worker back from the
 * dead that joined at a later round (gw_comm_join) sends nothing of this
 * one and is not waited for. */
static int all_live_complete(const gw_agg *a, int ph)
{
	const struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	if (!a->live.ngone && !a->live.nback && !a->live.nbehind)
		return s->complete[ph] == L->job.workers;
	for (uint32_t w = 0; w < L->job.workers; w++)
		if (!a->live.gone[w] && !a->live.behind[w] && s->nseen[ph][w] < L->sk.chunks[ph] &&
		    s->round + 1u >= a->live.joined[w])
			return 0;
	return 1;
}

/* Reliable: the first gone worker the current phase still waits for, or
 * -1. */
static int32_t waits_on_gone(const gw_agg *a)
{
	const struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	if (!a->live.ngone || s->round == NO_ROUND || s->phase == PH_DONE)
		return -1;
	for (uint32_t w = 0; w < L->job.workers; w++)
		if (a->live.gone[w] && s->nseen[s->phase][w] < L->sk.chunks[s->phase])
			return (int32_t)w;
	return -1;
}

static int take(gw_agg *a, int ph, uint32_t w, uint32_t c, const uint8_t *frame,
		uint32_t flen, uint64_t now)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	uint8_t *seen = &s->seen[ph][(size_t)w * L->sk.chunks[ph] + c];
	if (*seen) {
		a->st.duplicates++;
		if (s->nseen[ph][w] == L->sk.chunks[ph])
			receipt(a, ph, w, now);   /* the first was lost */
		return GW_OK;
	}
	uint64_t n = ph ? L->sk.m : (uint64_t)L->sk.csk.rows * L->sk.csk.cols;
	int rc = gw_decode(frame, flen, s->parts[ph] + (size_t)w * n, n);
	if (rc < 0) {
		coll_agg_decode_failed(a, rc);
		return GW_OK;
	}
	*seen = 1;
	a->st.ups++;
	if (!s->first_ns)
		s->first_ns = now;
	if (++s->nseen[ph][w] < L->sk.chunks[ph])
		return GW_OK;
	if (++s->complete[ph] == L->job.workers ||
	    (L->job.mode == GW_COLL_LOSS_TOLERANT && all_live_complete(a, ph)))
		return ph ? finish_b(a) : finish_a(a);
	s->resent_ns[w] = 0;
	receipt(a, ph, w, now);
	return GW_OK;
}

/* Every worker (not gone) has sent something of the current round: each
 * holds the update of the round before it, which may now be dropped. */
static int all_in_round(const gw_agg *a, const struct sk_agg *s, uint32_t W)
{
	for (uint32_t w = 0; w < W; w++)
		if (s->last_round[w] < s->round + 1 && !a->live.gone[w])
			return 0;
	return 1;
}

void sk_agg_gone(gw_agg *a, uint32_t w, uint64_t now)
{
	(void)now;
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	if (s->round == NO_ROUND || s->phase == PH_DONE)
		return;
	int ph = s->phase;
	if (L->job.mode == GW_COLL_LOSS_TOLERANT) {
		/* Evicted: a phase every live worker has sent finishes now. */
		if (s->nseen[ph][w] < L->sk.chunks[ph] && all_live_complete(a, ph)) {
			int rc = ph ? finish_b(a) : finish_a(a);
			if (rc < 0 && !a->live.rc) {
				a->live.rc = rc;
				snprintf(a->live.why, sizeof(a->live.why), "shard %u: a phase "
					 "finished without worker %u failed", a->shard, w);
			}
		}
		return;
	}
	/* Reliable: the workers that sent the whole phase wait on w. */
	if (s->nseen[ph][w] >= L->sk.chunks[ph])
		return;
	for (uint32_t v = 0; v < L->job.workers; v++)
		if (v != w && a->wk[v].known && s->nseen[ph][v] == L->sk.chunks[ph])
			agg_live_tell_dead(a, v, w);
}

int sk_agg_input(gw_agg *a, const struct coll_up *up, uint64_t now)
{
	struct sk_agg *s = a->eng;
	const struct coll_layout *L = &a->L;
	gw_pkt_hdr h = up->h;
	const uint8_t *frame = up->frame;
	uint32_t flen = up->len;
	int ph = (int)h.tensor - SK_T_SKETCH;
	if ((ph != PH_A && ph != PH_B) ||
	    coll_sketch_frame_ok(L, ph, frame, &up->fi, h.chunk) < 0) {
		a->st.bad++;
		return GW_OK;
	}
	uint32_t w = h.rank;
	uint64_t r = h.round;
	a->wk[w] = (struct wk){.ep = up->peer, .dp = up->dp, .known = 1};
	/* A packet of round r says its sender holds the update of r - 1. In
	 * loss-tolerant mode that may be true of a worker none of whose
	 * packets of r - 1 ever arrived, so the next round too counts. */
	if (s->round != NO_ROUND && (r == s->round || r == s->round + 1))
		s->last_round[w] = GW_MAX(s->last_round[w], r + 1);
	if (s->round == NO_ROUND || (r == s->round + 1 && s->phase == PH_DONE &&
				     all_in_round(a, s, L->job.workers))) {
		start_round(a, r);
	} else if (r == s->round + 1) {
		a->st.early++;   /* its sender re-sends once the round may start */
		return GW_OK;
	}
	if (r == s->round) {
		agg_live_caught_up(a, w);   /* at the job's round: waited for */
		s->last_round[w] = GW_MAX(s->last_round[w], r + 1);   /* first round */
		if (ph == PH_A && s->phase != PH_A) {
			answer(a, &s->res[PH_A], w, h.round, ph, h.chunk, now);   /* it lacks candidates */
			return GW_OK;
		}
		if (ph == PH_B && s->phase == PH_A) {
			a->st.bad++;   /* values before candidates were sent */
			return GW_OK;
		}
		if (ph == PH_B && s->phase == PH_DONE) {
			answer(a, &s->res[PH_B], w, h.round, ph, h.chunk, now);
			return GW_OK;
		}
		if (L->job.mode == GW_COLL_RELIABLE) {
			/* A phase that waits on a gone worker never finishes:
			 * its sender (re-sending, so waiting) is told which. */
			int32_t dead = waits_on_gone(a);
			if (dead >= 0 && (uint32_t)dead != w)
				agg_live_tell_dead(a, w, (uint32_t)dead);
		}
		return take(a, ph, w, h.chunk, frame, flen, now);
	}
	if (r == s->prev_round) {
		/* Still missing that round's update (it may have been left
		 * out of both phases): the update is all it needs. */
		answer(a, &s->prev, w, h.round, ph, h.chunk, now);
		return GW_OK;
	}
	a->st.stale++;
	/* An evicted worker stuck in a round whose update is gone. */
	if (a->live.nbehind)
		agg_live_tell_behind(a, w);
	return GW_OK;
}

int sk_agg_tick(gw_agg *a, uint64_t now)
{
	struct sk_agg *s = a->eng;
	if (s->round == NO_ROUND || s->phase == PH_DONE || !s->first_ns ||
	    now - s->first_ns < 1000ull * a->L.job.deadline_us)
		return GW_OK;
	return s->phase == PH_A ? finish_a(a) : finish_b(a);
}
