/* The Sketched-SGD engine's worker (gw_allreduce_sketched).
 *
 * State kept across calls (Algorithm 3): momentum u and error accumulation
 * v. A call folds the gradient in (u <- rho u + g, v <- v + u), sends the
 * sketch of v as table slices (phase A), waits for the candidate key sets,
 * sends v at the candidates (phase B), waits for the update, and zeroes u
 * and v where the update was applied with this worker's values in it.
 *
 * A phase's frames are encoded once into a buffer and sent in bursts; the
 * shard acknowledges a phase only by its result, so a phase without one
 * after the RTO is sent again whole (doubling the RTO, as in the dense
 * allreduce) — the shard takes each chunk once and answers repeats of a
 * finished phase with its result. A phase's result waits for the slowest
 * worker, so the RTO follows the phases' measured latency (three times a
 * moving average of first send to result) rather than a fixed 5 ms that
 * every scheduling hiccup of two shared cores would overrun. */
#include <stdlib.h>
#include <string.h>

#include "sketched.h"

#define BURST 32u

struct sk_worker {
	float *u, *v, *vals;      /* dim, dim, m */
	uint64_t *cand, *keys;    /* m, k */
	float *upd;               /* k */
	uint8_t *frames;          /* max(chunks) x frame room: this phase's */
	uint32_t *flen;
	uint32_t room;
	uint8_t *got[2];          /* per RESULT piece: candidates, update */
	uint32_t ngot[2];
	uint8_t bitmap[2][GW_PKT_SACK_MAX];
	gw_encoder *enc[2];       /* countsketch slices, raw values */
	uint64_t lat_ns;          /* phase latency, moving average (0: none) */
	uint8_t receipt[2];       /* the shard holds all of this phase */
};

void sk_comm_fini(gw_comm *c)
{
	struct sk_worker *s = c->eng;
	if (!s)
		return;
	for (int p = 0; p < 2; p++)
		gw_encoder_free(s->enc[p]);
	GW_FREE_ALL(s->u, s->v, s->vals, s->cand, s->keys, s->upd, s->frames, s->flen,
		    s->got[0], s->got[1], s);
	c->eng = NULL;
}

int sk_comm_init(gw_comm *c, const gw_comm_config *cfg)
{
	const struct coll_layout *L = &c->L;
	const struct coll_sketch *k = &L->sk;
	struct sk_worker *s = calloc(1, sizeof(*s));
	if (!s)
		return GW_ERR(GW_ENOMEM);
	c->eng = s;
	const char *why = NULL;
	uint32_t nmax = GW_MAX(k->chunks[0], k->chunks[1]);
	s->room = coll_sketch_frame_max(L->job.chunk_elems);
	s->u = calloc(L->job.dim, sizeof(float));
	s->v = calloc(L->job.dim, sizeof(float));
	s->vals = malloc((size_t)k->m * sizeof(float));
	s->cand = malloc((size_t)k->m * sizeof(uint64_t));
	s->keys = malloc((size_t)k->k * sizeof(uint64_t));
	s->upd = malloc((size_t)k->k * sizeof(float));
	s->frames = malloc((size_t)nmax * s->room);
	s->flen = malloc(nmax * sizeof(uint32_t));
	s->got[0] = malloc(k->pieces[0]);
	s->got[1] = malloc(k->pieces[1]);
	s->enc[0] = coll_encoder(GW_CODEC_COUNTSKETCH, cfg->job.up_params, L->job.chunk_elems, &why);
	s->enc[1] = coll_encoder(GW_CODEC_RAW, NULL, L->job.chunk_elems, &why);
	if (!s->u || !s->v || !s->vals || !s->cand || !s->keys || !s->upd ||
	    !s->frames || !s->flen || !s->got[0] || !s->got[1] || !s->enc[0] ||
	    !s->enc[1] ||
	    gw_encoder_set_param(s->enc[0], GW_PARAM_ROWS, k->csk.rows) < 0 ||
	    gw_encoder_set_param(s->enc[0], GW_PARAM_COLS, k->csk.cols) < 0) {
		sk_comm_fini(c);
		return GW_ERR(GW_ENOMEM);
	}
	return GW_OK;
}

const float *sk_residual(const gw_comm *c)
{
	const struct sk_worker *s = c->eng;
	return s->v;
}

/* Encodes phase ph's frames of x (dim: the tensor's length) into s->frames;
 * each must be exactly its chunk. */
static int encode_phase(gw_comm *c, int ph, const float *x, uint64_t dim)
{
	struct sk_worker *s = c->eng;
	const struct coll_layout *L = &c->L;
	gw_tensor t = {.id = ph ? SK_T_VALUES : SK_T_SKETCH, .dim = dim, .values = x};
	int rc = gw_encode_begin(s->enc[ph], &t);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < L->sk.chunks[ph]; i++) {
		uint8_t *f = s->frames + (size_t)i * s->room;
		int n = gw_encode_next(s->enc[ph], f, s->room);
		gw_frame_info fi;
		if (n <= 0 || gw_frame_peek(f, (size_t)n, &fi) < 0 ||
		    coll_sketch_frame_ok(L, ph, f, &fi, i) < 0) {
			gw_encode_abandon(s->enc[ph]);
			return n < 0 ? n : GW_ERR(GW_ESTATE);
		}
		s->flen[i] = (uint32_t)n;
	}
	uint8_t none[GW_BUDGET_MIN];
	return gw_encode_next(s->enc[ph], none, sizeof(none)) == 0 ? GW_OK
								    : GW_ERR(GW_ESTATE);
}

/* Sends every frame of phase ph, in bursts — or, once the shard has sent
 * a receipt, only the last one, which asks for the result again. */
static int send_phase(gw_comm *c, int ph, int retx)
{
	struct sk_worker *s = c->eng;
	const struct coll_layout *L = &c->L;
	gw_pkt *b[BURST];
	uint32_t first = s->receipt[ph] ? L->sk.chunks[ph] - 1 : 0;
	/* A device that keeps refusing must not hold the call for ever. */
	uint64_t end = gw_now_ns() + c->timeout_ns;
	for (uint32_t i = first; i < L->sk.chunks[ph];) {
		uint32_t want = GW_MIN(BURST, L->sk.chunks[ph] - i);
		int got = gw_dp_alloc(c->dp, b, want);
		if (got <= 0)
			return GW_ERR(GW_ENOMEM);
		for (int j = 0; j < got; j++) {
			uint32_t ch = i + (uint32_t)j;
			memcpy(b[j]->data + GW_PKT_HDR_LEN, s->frames + (size_t)ch * s->room,
			       s->flen[ch]);
			gw_pkt_hdr h = {.type = GW_PKT_UP, .flags = retx ? GW_PKT_F_RETX : 0,
					.rank = c->rank, .job = L->job.job, .round = c->round,
					.tensor = ph ? SK_T_VALUES : SK_T_SKETCH, .chunk = ch,
					.seq = c->seq++};
			b[j]->len = coll_seal(L, b[j]->data, &h, s->flen[ch]);
			b[j]->peer = c->shards[0];
		}
		int sent = 0;
		while (sent < got) {
			int n = gw_dp_tx_burst(c->dp, b + sent, (unsigned)(got - sent));
			if (n < 0) {
				gw_dp_free(c->dp, b + sent, (unsigned)(got - sent));
				return n;
			}
			for (int j = sent; j < sent + n; j++) {
				c->bytes_up += b[j]->len;
				if (!retx)
					c->bytes_up_once += b[j]->len;
			}
			gw_dp_free(c->dp, b + sent, (unsigned)n);
			sent += n;
			if (sent < got && gw_now_ns() >= end) {
				gw_dp_free(c->dp, b + sent, (unsigned)(got - sent));
				return coll_timeout(c, 0, "packets the device would not send");
			}
			if (sent < got)
				gw_dp_wait(c->dp, 10);
		}
		i += (uint32_t)got;
		if (retx)
			c->st.retransmits += (uint32_t)got;
		else
			c->st.chunks_sent += (uint32_t)got;
	}
	return GW_OK;
}

static uint64_t phase_rto(const gw_comm *c)
{
	const struct sk_worker *s = c->eng;
	uint64_t r = 3 * s->lat_ns;
	return GW_MIN(GW_MAX(r, c->rto_min_ns), COLL_RTO_MAX_NS);
}

/* A phase re-sent is sampled from its first send, not skipped as Karn's
 * rule would: that over-estimates, which only lengthens the RTO. Skipping
 * left the RTO at its floor for good once every phase was re-sent — on a
 * 100 Mbit/s star a phase of three workers takes ~130 ms to reach the
 * shard, the floor is 5 ms, and each whole re-send made the next phase
 * slower still. */
static void lat_sample(gw_comm *c, uint64_t ns)
{
	struct sk_worker *s = c->eng;
	s->lat_ns = s->lat_ns ? (7 * s->lat_ns + ns) / 8 : ns;
}

/* A receipt: one key, the phase's chunk count, and this worker's bit. */
static void on_receipt(gw_comm *c, const gw_pkt_hdr *h, const uint8_t *body,
		       uint32_t blen)
{
	struct sk_worker *s = c->eng;
	const struct coll_layout *L = &c->L;
	int ph = (int)h->tensor - SK_T_RECEIPT;
	uint64_t key;
	uint8_t own[GW_PKT_SACK_MAX] = {0};
	own[c->rank / 8] = (uint8_t)(1u << (c->rank % 8));
	if (h->rank != 0 || h->chunk != 0 || h->sack_len != L->bitmap_len ||
	    memcmp(body, own, L->bitmap_len) ||
	    gw_keyset_decode(body + L->bitmap_len, blen - L->bitmap_len, UINT64_MAX,
			     &key, NULL, 1, NULL) != 1 ||
	    key != L->sk.chunks[ph]) {
		c->st.bad++;
		return;
	}
	s->receipt[ph] = 1;
}

/* A RESULT piece: validated completely before anything is kept. */
static void on_result(gw_comm *c, const gw_pkt *pkt)
{
	struct sk_worker *s = c->eng;
	const struct coll_layout *L = &c->L;
	gw_pkt_hdr h;
	const uint8_t *body;
	uint32_t blen;
	if (!coll_comm_accept(c, pkt, &h, &body, &blen))
		return;
	int ph = (int)h.tensor - SK_T_SKETCH;
	if (h.round != c->round) {
		c->st.stale++;
		return;
	}
	if (h.tensor == SK_T_RECEIPT || h.tensor == SK_T_RECEIPT + 1) {
		on_receipt(c, &h, body, blen);
		return;
	}
	if (ph != 0 && ph != 1) {
		c->st.bad++;
		return;
	}
	uint32_t i = h.chunk;
	if (h.rank != 0 || i >= L->sk.pieces[ph] || h.sack_len != L->bitmap_len) {
		c->st.bad++;
		return;
	}
	if (s->got[ph][i]) {
		c->st.duplicates++;
		return;
	}
	int nc = coll_contributors(L, body);
	if (nc < 0 || (L->job.mode == GW_COLL_RELIABLE && (uint32_t)nc != L->job.workers) ||
	    (s->ngot[ph] && memcmp(s->bitmap[ph], body, L->bitmap_len))) {
		c->st.bad++;   /* every piece of a set names the same workers */
		return;
	}
	const uint8_t *frame = body + L->bitmap_len;
	uint32_t flen = blen - L->bitmap_len;
	uint32_t want = coll_sketch_piece_len(L, ph, i);
	uint64_t *keys = (ph ? s->keys : s->cand) + (size_t)i * L->sk.per[ph];
	float *vals = ph ? s->upd + (size_t)i * L->sk.per[ph] : NULL;
	gw_frame_info fi;
	int hv = 0;
	if (gw_frame_peek(frame, flen, &fi) < 0 || fi.tensor != h.tensor ||
	    fi.count != want) {
		c->st.bad++;
		return;
	}
	int n = gw_keyset_decode(frame, flen, L->job.dim, keys, vals, want, &hv);
	if (n == GW_ECHECKSUM) {
		c->st.corrupt++;
		return;
	}
	if (n != (int)want || hv != ph) {
		c->st.bad++;
		return;
	}
	memcpy(s->bitmap[ph], body, L->bitmap_len);
	s->got[ph][i] = 1;
	s->ngot[ph]++;
	c->st.results++;
	c->bytes_down_once += pkt->len;
}

/* The pieces of a set together: keys strictly ascending across pieces (and
 * the update's keys among the candidates, when this worker sent values). */
static int set_ok(const uint64_t *keys, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++)
		if (keys[i] <= keys[i - 1])
			return 0;
	return 1;
}

static int mine(const gw_comm *c, int ph)
{
	const struct sk_worker *s = c->eng;
	return (s->bitmap[ph][c->rank / 8] >> (c->rank % 8)) & 1;
}

static void reset_set(gw_comm *c, int ph)
{
	struct sk_worker *s = c->eng;
	memset(s->got[ph], 0, c->L.sk.pieces[ph]);
	s->ngot[ph] = 0;
}

int sk_allreduce(gw_comm *c, const float *grad, gw_sparse_update *up,
		 gw_allreduce_info *info)
{
	struct sk_worker *s = c->eng;
	const struct coll_layout *L = &c->L;
	const struct coll_sketch *k = &L->sk;
	uint64_t d = L->job.dim;
	/* Momentum and error accumulation (Algorithm 3, lines 5-6), and the
	 * sketch: seconds of CPU for a large model, without the dataplane, so
	 * the heartbeats go on meanwhile. */
	coll_comm_offline(c);
	for (uint64_t i = 0; i < d; i++) {
		s->u[i] = k->momentum * s->u[i] + grad[i];
		s->v[i] += s->u[i];
	}
	for (int p = 0; p < 2; p++) {
		reset_set(c, p);
		s->receipt[p] = 0;
	}
	int ph = 0;
	int rc = encode_phase(c, 0, s->v, d);
	coll_comm_online(c);
	if (rc == GW_OK)
		rc = send_phase(c, 0, 0);
	uint64_t now = gw_now_ns(), end = now + c->timeout_ns;
	uint64_t rto = phase_rto(c), sent_ns = now, first_ns = now;
	while (rc == GW_OK && s->ngot[1] < k->pieces[1]) {
		int n = gw_dp_rx_burst(c->dp, c->rx, COLL_RX_BURST);
		if (n < 0) {
			rc = n;
			break;
		}
		for (int i = 0; i < n; i++) {
			c->bytes_down += c->rx[i]->len;
			if (coll_pkt_type(c->rx[i]) == GW_PKT_CTRL)
				comm_live_input(c, c->rx[i], gw_now_ns());
			else
				on_result(c, c->rx[i]);
		}
		if (n > 0)
			gw_dp_free(c->dp, c->rx, (unsigned)n);
		if (ph == 0 && s->ngot[0] == k->pieces[0])
			lat_sample(c, gw_now_ns() - first_ns);
		if (ph == 0 && s->ngot[0] == k->pieces[0] && s->ngot[1] < k->pieces[1]) {
			if (!set_ok(s->cand, k->m)) {
				c->st.bad++;
				reset_set(c, 0);
				continue;
			}
			/* Round two: v at the candidates, in their order. */
			for (uint32_t i = 0; i < k->m; i++)
				s->vals[i] = s->v[s->cand[i]];
			ph = 1;
			rc = encode_phase(c, 1, s->vals, k->m);
			if (rc == GW_OK)
				rc = send_phase(c, 1, 0);
			rto = phase_rto(c);
			sent_ns = first_ns = gw_now_ns();
			continue;
		}
		now = gw_now_ns();
		if ((rc = comm_live_poll(c, now, n == 0)) < 0)
			break;
		if (now >= end) {
			rc = coll_timeout(c, 0, "%s missing", ph ? "the update (round two)"
					  : "the candidates (round one)");
			break;
		}
		if (s->receipt[ph] && rto < COLL_RTO_MAX_NS)
			rto = COLL_RTO_MAX_NS;   /* all in: the others are slow, not lost */
		if (now - sent_ns >= rto) {
			rc = send_phase(c, ph, 1);
			sent_ns = now;
			rto = GW_MIN(2 * rto, COLL_RTO_MAX_NS);
			continue;
		}
		if (!n && gw_dp_wait(c->dp, (unsigned)GW_MIN((sent_ns + rto - now) / 1000u + 1,
							 (uint64_t)COLL_IDLE_WAIT_US)) < 0)
			rc = GW_ERR(GW_EIO);
	}
	if (rc == GW_OK && ph == 1)
		lat_sample(c, gw_now_ns() - first_ns);
	if (rc == GW_OK && !set_ok(s->keys, k->k))
		rc = GW_ERR(GW_ECORRUPT);
	uint32_t round = c->round++;
	if (rc < 0)
		return rc;   /* u and v keep everything: nothing was applied */
	/* Applied with our values in it: those coordinates start over
	 * (momentum correction and factor masking, line 13). A worker left
	 * out keeps its v there, so its mass goes out in a later round. */
	int applied = mine(c, 1) && ph == 1;
	uint32_t nc = 0, na = 0;
	for (uint32_t b = 0; b < L->bitmap_len; b++) {
		nc += (uint32_t)__builtin_popcount(s->bitmap[1][b]);
		na += (uint32_t)__builtin_popcount(s->bitmap[0][b]);
	}
	if (applied)
		for (uint32_t i = 0; i < k->k; i++)
			s->u[s->keys[i]] = s->v[s->keys[i]] = 0.0f;
	*up = (gw_sparse_update){.nnz = k->k, .keys = s->keys, .values = s->upd,
				 .applied = applied, .contributors = nc};
	if (!applied)
		c->st.left_out++;
	if (info)
		*info = (gw_allreduce_info){.round = round,
			.chunks = k->chunks[0] + k->chunks[1],
			/* phases finished without every worker (A's count is
			 * known only if its candidates came) */
			.short_chunks = (nc < L->job.workers) +
					(ph == 1 && na < L->job.workers),
			.left_out = !applied, .bytes_up = c->bytes_up,
			.bytes_down = c->bytes_down, .bytes_up_once = c->bytes_up_once,
			.bytes_down_once = c->bytes_down_once};
	return GW_OK;
}
