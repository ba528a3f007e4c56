/* Aggregator shard: decode-accumulates workers' chunks in a pool of slots
 * and sends each finished chunk's result to every worker.
 *
 * A chunk's position p = round * (chunks of this shard) + local index runs
 * on across rounds. Position p lives in slot p % window, copy (p / window)
 * & 1. A worker sends p only once it holds the result of p - window, the
 * other copy's chunk; for that result every worker had to send p - window,
 * which each did only holding the result of p - 2 * window — the chunk
 * that still sits in p's copy. In reliable mode the first packet of p may
 * therefore reset the copy. In loss-tolerant mode p - window may have
 * finished without some workers, so the shard counts acknowledgements
 * instead: a worker's UP for p says it holds the result of p - window, and
 * a copy is reset only once every worker has said so (until then p is
 * held back and retransmitted by its sender). Until then the finished copy
 * is the shadow that answers retransmissions (a worker that missed its
 * result re-sends its UP and gets the stored RESULT packet back).
 *
 * Each worker's contribution is taken once (per-copy bitmap); duplicates
 * are answered, never summed. Contributions are decoded into per-worker
 * parts and summed in rank order when the chunk finishes: a float sum in
 * arrival order would differ in its last bits from run to run, and the
 * reliable mode promises a result bit-identical to a loss-free run. A lossy downlink codec gets an error buffer
 * here too (3LC does this at its parameter server), so what the downlink
 * drops reaches the workers in a later round.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

#define EMPTY UINT64_MAX
#define IDLE_WAIT_US 1000u

void gw_agg_free(gw_agg *a)
{
	if (!a)
		return;
	if (a->copies)
		for (uint32_t i = 0; i < 2 * a->nslots; i++) {
			free(a->copies[i].seen);
			free(a->copies[i].acked);
			free(a->copies[i].parts);
			free(a->copies[i].res);
		}
	if (a->txq)
		for (unsigned d = 0; d < a->ndp; d++)
			gw_dp_free(a->dps[d], a->txq[d].p, a->txq[d].n);
	free(a->copies);
	free(a->txq);
	free(a->wk);
	free(a->dps);
	free(a->ef_down);
	free(a->acc);
	free(a->tmp);
	sk_agg_free(a);
	gw_encoder_free(a->down);
	free(a);
}

gw_agg *gw_agg_create(gw_dp **dps, unsigned ndp, const gw_agg_config *cfg)
{
	if (!dps || !ndp || !cfg)
		return NULL;
	gw_agg *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	const char *why = NULL;
	if (coll_layout_init(&a->L, &cfg->job, &why) < 0 ||
	    cfg->shard >= a->L.job.shards)
		goto fail;
	const gw_coll_job *j = &a->L.job;
	uint32_t pmax = UINT32_MAX;
	for (unsigned d = 0; d < ndp; d++)
		pmax = GW_MIN(pmax, gw_dp_payload_max(dps[d]));
	if (coll_chunk_fits(&cfg->job, j->chunk_elems, pmax, NULL, &why) < 0)
		goto fail;
	a->res_room = pmax;
	a->ndp = ndp;
	a->shard = cfg->shard;
	a->nslots = j->window;
	a->local_chunks = coll_shard_chunks(&a->L, cfg->shard);
	a->dps = malloc(ndp * sizeof(*a->dps));
	a->copies = calloc(2u * a->nslots, sizeof(*a->copies));
	a->wk = calloc(j->workers, sizeof(*a->wk));
	a->txq = calloc(ndp, sizeof(*a->txq));
	a->tmp = malloc(j->chunk_elems * sizeof(float));
	a->acc = malloc(j->chunk_elems * sizeof(float));
	a->down = coll_encoder(j->down_codec, cfg->job.down_params, j->chunk_elems, &why);
	if (!a->dps || !a->copies || !a->wk || !a->txq || !a->tmp || !a->acc ||
	    !a->down)
		goto fail;
	memcpy(a->dps, dps, ndp * sizeof(*dps));
	for (uint32_t i = 0; i < 2 * a->nslots; i++) {
		struct copy *cp = &a->copies[i];
		cp->pos = EMPTY;
		cp->seen = calloc(a->L.bitmap_len, 1);
		cp->acked = calloc(a->L.bitmap_len, 1);
		cp->parts = malloc((size_t)j->workers * j->chunk_elems * sizeof(float));
		cp->res = malloc(pmax);
		if (!cp->seen || !cp->acked || !cp->parts || !cp->res)
			goto fail;
	}
	if (gw_codec_caps(j->down_codec) & GW_CODEC_LOSSY) {
		a->ef_down = calloc((size_t)a->local_chunks * j->chunk_elems, sizeof(float));
		if (!a->ef_down && a->local_chunks)
			goto fail;
	}
	if (a->L.sk.on && sk_agg_create(a) < 0)
		goto fail;
	return a;
fail:
	gw_agg_free(a);
	return NULL;
}

void gw_agg_stats_get(const gw_agg *a, gw_agg_stats *st)
{
	if (a && st)
		*st = a->st;
}

void coll_agg_flush(gw_agg *a)
{
	for (unsigned d = 0; d < a->ndp; d++) {
		struct txq *q = &a->txq[d];
		if (!q->n)
			continue;
		int n = gw_dp_tx_burst(a->dps[d], q->p, q->n);
		if (n <= 0)
			continue;
		gw_dp_free(a->dps[d], q->p, (unsigned)n);
		memmove(q->p, q->p + n, (q->n - (uint32_t)n) * sizeof(*q->p));
		q->n -= (uint32_t)n;
	}
}

void coll_agg_send(gw_agg *a, uint32_t w, const uint8_t *pkt, uint32_t len)
{
	const struct wk *k = &a->wk[w];
	struct txq *q = &a->txq[k->dp];
	gw_pkt *p;
	if (q->n == PENDING_MAX)
		coll_agg_flush(a);
	if (q->n == PENDING_MAX || gw_dp_alloc(a->dps[k->dp], &p, 1) != 1) {
		a->st.tx_refused++;   /* the worker's retransmission asks again */
		return;
	}
	memcpy(p->data, pkt, len);
	p->len = len;
	p->peer = k->ep;
	q->p[q->n++] = p;
	a->st.results_sent++;
	a->st.bytes_down += len;
}

/* Queues a copy of cp's RESULT packet to worker w. */
static void send_result(gw_agg *a, const struct copy *cp, uint32_t w)
{
	coll_agg_send(a, w, cp->res, cp->res_len);
}

/* Encodes the sum (plus the downlink error) into the RESULT packet and
 * sends it to every worker whose address is known. */
static int finalize(gw_agg *a, struct copy *cp)
{
	const struct coll_layout *L = &a->L;
	uint32_t len = coll_chunk_len(L, cp->chunk);
	uint64_t base = (uint64_t)cp->chunk * L->job.chunk_elems;
	float *e = a->ef_down ? a->ef_down + (size_t)coll_local_of(L, cp->chunk) *
				L->job.chunk_elems : NULL;
	/* 0 + g0 + g1 + ... in rank order, as an in-process sum would. */
	float *sum = a->acc;
	memset(sum, 0, len * sizeof(float));
	for (uint32_t w = 0; w < L->job.workers; w++) {
		if (!(cp->seen[w / 8] >> (w % 8) & 1))
			continue;
		const float *g = cp->parts + (size_t)w * L->job.chunk_elems;
		for (uint32_t i = 0; i < len; i++)
			sum[i] += g[i];
	}
	if (e)
		for (uint32_t i = 0; i < len; i++)
			sum[i] += e[i];
	uint8_t *frame = cp->res + GW_PKT_HDR_LEN + L->bitmap_len;
	uint32_t room = a->res_room - coll_overhead(L, 1);
	/* Sparse frames count keys from the chunk's start (§5.7). */
	gw_tensor t = {.id = 0, .dim = len, .values = sum,
		       .base = L->sparse[1] ? 0 : base};
	int rc = gw_encode_begin(a->down, &t);
	int n = rc < 0 ? rc : gw_encode_next(a->down, frame, room);
	uint8_t none[GW_BUDGET_MIN];
	if (n > 0 && gw_encode_next(a->down, none, sizeof(none)) != 0)
		n = GW_ERR(GW_EBUDGET);   /* one frame per chunk, always */
	if (n <= 0) {
		gw_encode_abandon(a->down);
		return n < 0 ? n : GW_ERR(GW_ESTATE);
	}
	if (e) {
		memset(a->tmp, 0, len * sizeof(float));
		rc = coll_decode_chunk(L, 1, frame, (uint32_t)n, a->tmp, cp->chunk);
		if (rc < 0)
			return rc;
		for (uint32_t i = 0; i < len; i++)
			e[i] = sum[i] - a->tmp[i];
	}
	memcpy(cp->res + GW_PKT_HDR_LEN, cp->seen, L->bitmap_len);
	gw_pkt_hdr h = {.type = GW_PKT_RESULT, .sack_len = (uint8_t)L->bitmap_len,
			.rank = a->shard, .job = L->job.job, .round = cp->round,
			.tensor = 0, .chunk = cp->chunk, .seq = a->seq++};
	cp->res_len = coll_seal(L, cp->res, &h, L->bitmap_len + (uint32_t)n);
	cp->done = 1;
	a->st.chunks_done++;
	if (cp->nseen < L->job.workers)
		a->st.chunks_short++;
	for (uint32_t w = 0; w < L->job.workers; w++)
		if (a->wk[w].known)
			send_result(a, cp, w);
	return GW_OK;
}

static void ack(struct copy *cp, uint64_t p, uint32_t w)
{
	uint8_t bit = (uint8_t)(1u << (w % 8));
	if (cp->pos != EMPTY && cp->pos < p && cp->done && !(cp->acked[w / 8] & bit)) {
		cp->acked[w / 8] |= bit;
		cp->nacked++;
	}
}

static int on_up(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now)
{
	const struct coll_layout *L = &a->L;
	gw_pkt_hdr h;
	const uint8_t *frame;
	uint32_t flen;
	if (!coll_agg_accept(a, pkt, &h, &frame, &flen))
		return GW_OK;
	uint32_t ch = h.chunk;
	gw_frame_info fi;
	if (h.rank >= L->job.workers || ch >= L->chunks ||
	    coll_shard_of(L, ch) != a->shard ||
	    gw_frame_peek(frame, flen, &fi) < 0 || coll_frame_of_chunk(L, 0, &fi, ch) < 0) {
		a->st.bad++;
		return GW_OK;
	}
	if (h.tensor != 0) {
		a->st.stale++;
		return GW_OK;
	}
	/* Authenticated (if keyed) and well-formed: this is where w is now. */
	a->wk[h.rank] = (struct wk){.ep = pkt->peer, .dp = di, .known = 1};
	uint64_t p = coll_pos(L, h.round, ch);
	struct copy *cp = &a->copies[2 * (p % a->nslots) + ((p / a->nslots) & 1)];
	uint8_t bit = (uint8_t)(1u << (h.rank % 8));
	/* A worker sends p only holding the result of p - window, and so of
	 * every earlier chunk of this slot: both copies, when they hold an
	 * older chunk, are acknowledged by it. */
	ack(cp, p, h.rank);
	ack(&a->copies[2 * (p % a->nslots) + (((p / a->nslots) & 1) ^ 1)], p, h.rank);
	if (cp->pos == p) {
		if (cp->seen[h.rank / 8] & bit)
			a->st.duplicates++;
		else if (cp->done)
			a->st.late++;     /* finished without it: tell the worker */
		if (cp->done) {
			send_result(a, cp, h.rank);
			a->st.results_resent++;
			return GW_OK;
		}
		if (cp->seen[h.rank / 8] & bit)
			return GW_OK;
	} else if (cp->pos != EMPTY && cp->pos > p) {
		a->st.stale++;
		return GW_OK;
	} else {
		if (cp->pos != EMPTY && (!cp->done || cp->nacked < L->job.workers)) {
			/* Some worker may still need the old result (in loss-
			 * tolerant mode a chunk finishes without the slow ones,
			 * so a fast worker can run ahead of them): hold p back;
			 * its sender retransmits. */
			a->st.early++;
			return GW_OK;
		}
		cp->pos = p;
		cp->chunk = ch;
		cp->round = h.round;
		cp->nseen = cp->nacked = 0;
		cp->done = 0;
		memset(cp->acked, 0, L->bitmap_len);
		cp->first_ns = 0;
		memset(cp->seen, 0, L->bitmap_len);
	}
	uint32_t len = coll_chunk_len(L, ch);
	float *part = cp->parts + (size_t)h.rank * L->job.chunk_elems;
	memset(part, 0, len * sizeof(float));
	int rc = coll_decode_chunk(L, 0, frame, flen, part, ch);
	if (rc < 0) {
		coll_agg_decode_failed(a, rc);
		return GW_OK;
	}
	cp->seen[h.rank / 8] |= bit;
	if (!cp->nseen++)
		cp->first_ns = now;
	a->st.ups++;
	if (cp->nseen == L->job.workers)
		return finalize(a, cp);
	return GW_OK;
}

/* Loss-tolerant mode: chunks past their deadline finish short. */
static int deadlines(gw_agg *a, uint64_t now)
{
	uint64_t dl = 1000ull * a->L.job.deadline_us;
	for (uint32_t i = 0; i < 2 * a->nslots; i++) {
		struct copy *cp = &a->copies[i];
		if (cp->pos != EMPTY && !cp->done && cp->nseen && now - cp->first_ns >= dl) {
			int rc = finalize(a, cp);
			if (rc < 0)
				return rc;
		}
	}
	return GW_OK;
}

int coll_agg_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now)
{
	return a->sk ? sk_agg_on_up(a, di, pkt, now) : on_up(a, di, pkt, now);
}

int coll_agg_tick(gw_agg *a, uint64_t now)
{
	if (a->L.job.mode != GW_COLL_LOSS_TOLERANT)
		return GW_OK;
	return a->sk ? sk_agg_deadlines(a, now) : deadlines(a, now);
}

int gw_agg_serve(gw_agg *a, volatile sig_atomic_t *stop, uint32_t idle_exit_ms)
{
	if (!a)
		return GW_ERR(GW_EINVAL);
	int tolerant = a->L.job.mode == GW_COLL_LOSS_TOLERANT;
	uint64_t scan_every = 1000ull * a->L.job.deadline_us / 4 + 1;
	uint64_t last_pkt = 0;
	while (!stop || !*stop) {
		uint64_t now = coll_now_ns();
		int got = 0;
		for (unsigned d = 0; d < a->ndp; d++) {
			int n = gw_dp_rx_burst(a->dps[d], a->rx, COLL_RX_BURST);
			if (n < 0)
				return n;
			int rc = GW_OK;
			for (int i = 0; i < n && rc >= 0; i++)
				rc = coll_agg_input(a, d, a->rx[i], now);
			if (n > 0)
				gw_dp_free(a->dps[d], a->rx, (unsigned)n);
			if (rc < 0)
				return rc;
			got += n;
		}
		coll_agg_flush(a);
		if (tolerant && now >= a->scan_ns) {
			int rc = coll_agg_tick(a, now);
			if (rc < 0)
				return rc;
			coll_agg_flush(a);
			a->scan_ns = now + scan_every;
		}
		if (got) {
			last_pkt = now;
			continue;
		}
		if (idle_exit_ms && last_pkt && now - last_pkt >= 1000000ull * idle_exit_ms)
			return GW_OK;
		int pending = 0;
		for (unsigned d = 0; d < a->ndp; d++)
			pending |= a->txq[d].n != 0;
		if (pending)
			continue;
		/* With several ports a sleep on one delays the others: keep it
		 * short then. */
		unsigned us = a->ndp > 1 ? IDLE_WAIT_US / 8 : IDLE_WAIT_US;
		if (tolerant)
			us = (unsigned)GW_MIN((uint64_t)us, scan_every / 1000u + 1);
		if (gw_dp_wait(a->dps[0], us) < 0)
			return GW_ERR(GW_EIO);
	}
	return GW_OK;
}
