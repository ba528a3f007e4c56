/* The dense engine's shard: decode-accumulates workers' chunks in a pool
 * of slots and sends each finished chunk's result to every worker.
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
 * reliable mode promises a result bit-identical to a loss-free run. A
 * lossy downlink codec gets an error buffer here too (3LC does this at its
 * parameter server), so what the downlink drops reaches the workers in a
 * later round.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"

#define EMPTY UINT64_MAX

void dense_agg_fini(gw_agg *a)
{
	struct dense_agg *g = a->eng;
	if (!g)
		return;
	if (g->copies)
		for (uint32_t i = 0; i < 2 * g->nslots; i++)
			GW_FREE_ALL(g->copies[i].seen, g->copies[i].acked, g->copies[i].parts,
				    g->copies[i].res, g->copies[i].isum);
	gw_encoder_free(g->down);
	gw_encoder_free(g->raw);
	for (uint32_t i = 0; g->ef_views && i < g->local_chunks; i++)
		gw_ef_free(g->ef_views[i]);
	gw_ef_free(g->ef_down);
	GW_FREE_ALL(g->copies, g->ef_views, g->acc, g->mom, g->hq_next, g->hq_known, g);
	a->eng = NULL;
}

int dense_agg_init(gw_agg *a, const gw_agg_config *cfg)
{
	struct dense_agg *g = calloc(1, sizeof(*g));
	if (!g)
		return GW_ERR(GW_ENOMEM);
	a->eng = g;
	const gw_coll_job *j = &a->L.job;
	const char *why = NULL;
	g->nslots = j->window;
	g->local_chunks = coll_shard_chunks(&a->L, a->shard);
	g->copies = calloc(2u * g->nslots, sizeof(*g->copies));
	g->acc = malloc(j->chunk_elems * sizeof(float));
	g->down = coll_encoder(j->down_codec, cfg->job.down_params, j->chunk_elems, &why);
	if (a->L.dense.min_elems)
		g->raw = coll_encoder(GW_CODEC_RAW, NULL, j->chunk_elems, &why);
	/* State changes down (3LC's placement): the shard's momentum per
	 * chunk, kept across rounds, evictions and rejoins like its error
	 * buffer; lost with the shard. */
	if (a->L.dense.momentum > 0.0f)
		g->mom = calloc((size_t)g->local_chunks * j->chunk_elems + 1, sizeof(float));
	if (!g->copies || !g->acc || !g->down || (a->L.dense.min_elems && !g->raw) ||
	    (a->L.dense.momentum > 0.0f && !g->mom))
		return GW_ERR(GW_ENOMEM);
	int hq = j->up_codec == GW_CODEC_HQ;
	if (hq) {
		/* The job's bits and rotation, as the workers' encoders read
		 * them: a frame with others is refused. */
		int rc = coll_hq_params(cfg->job.up_params, &g->hq_bits, &g->hq_rotate);
		if (rc < 0)
			return rc;   /* the job's check took these params */
		g->hq_next = calloc(g->local_chunks + 1, sizeof(float));
		g->hq_known = calloc(g->local_chunks + 1, 1);
		if (!g->hq_next || !g->hq_known)
			return GW_ERR(GW_ENOMEM);
	}
	for (uint32_t i = 0; i < 2 * g->nslots; i++) {
		struct copy *cp = &g->copies[i];
		cp->pos = EMPTY;
		cp->seen = calloc(a->L.bitmap_len, 1);
		cp->acked = calloc(a->L.bitmap_len, 1);
		cp->parts = malloc((size_t)j->workers * j->chunk_elems * sizeof(float));
		cp->res = malloc(a->res_room);
		cp->isum = hq ? malloc((size_t)j->chunk_elems * sizeof(int32_t)) : NULL;
		if (!cp->seen || !cp->acked || !cp->parts || !cp->res || (hq && !cp->isum))
			return GW_ERR(GW_ENOMEM);
	}
	/* A view per local chunk of one buffer: the downlink encoder feeds
	 * back into it itself (fused where the codec fuses), in the pass that
	 * encodes the sum, instead of a decode and a subtraction after it. */
	if ((gw_codec_caps(j->down_codec) & GW_CODEC_LOSSY) && g->local_chunks && !hq) {
		g->ef_down = gw_ef_create((uint64_t)g->local_chunks * j->chunk_elems);
		g->ef_views = calloc(g->local_chunks, sizeof(*g->ef_views));
		if (!g->ef_down || !g->ef_views)
			return GW_ERR(GW_ENOMEM);
		for (uint32_t i = 0; i < g->local_chunks; i++) {
			uint32_t c = i * j->shards + a->shard;
			g->ef_views[i] = gw_ef_view(g->ef_down, (uint64_t)i * j->chunk_elems,
						    coll_chunk_len(&a->L, c));
			if (!g->ef_views[i])
				return GW_ERR(GW_ENOMEM);
		}
	}
	return GW_OK;
}

/* Queues a copy of cp's RESULT packet to worker w. */
static void send_result(gw_agg *a, const struct copy *cp, uint32_t w)
{
	coll_agg_send(a, w, cp->res, cp->res_len);
}

/* Encodes the sum of cp's parts (plus the downlink error) into frame, at
 * most room bytes: its length or GW_E*. */
static int encode_float_sum(gw_agg *a, struct copy *cp, uint8_t *frame, uint32_t room)
{
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	uint32_t len = coll_chunk_len(L, cp->chunk);
	uint64_t base = coll_chunk_off(L, cp->chunk);
	/* 0 + g0 + g1 + ... in rank order, as an in-process sum would; the
	 * first part seen is added to 0 as it is copied (0 + -0 is +0). The
	 * downlink error is added by the encoder: fl(sum + e) encoded, and e
	 * left as that minus what the frame decodes to, the bits of doing it
	 * here (test_error_feedback holds every codec to them). */
	float *sum = g->acc;
	int first = 1;
	for (uint32_t w = 0; w < L->job.workers; w++) {
		if (!(cp->seen[w / 8] >> (w % 8) & 1))
			continue;
		const float *part = cp->parts + (size_t)w * L->job.chunk_elems;
		if (first)
			for (uint32_t i = 0; i < len; i++)
				sum[i] = 0.0f + part[i];
		else
			for (uint32_t i = 0; i < len; i++)
				sum[i] += part[i];
		first = 0;
	}
	if (first)
		memset(sum, 0, len * sizeof(float));
	uint32_t lc = coll_local_of(L, cp->chunk);
	if (g->mom) {
		/* v <- mu v + sum, and v goes down (the workers' optimizers
		 * run with momentum 0). */
		float mu = L->dense.momentum, *v = g->mom + (size_t)lc * L->job.chunk_elems;
		for (uint32_t i = 0; i < len; i++)
			v[i] = mu * v[i] + sum[i];
		sum = v;
	}
	/* Dense frames count from the chunk's tensor's first element, sparse
	 * ones' keys from the chunk's (§5.7); each chunk's context is its own. */
	int raw = coll_chunk_raw(L, cp->chunk);
	gw_encoder *enc = raw ? g->raw : g->down;
	gw_tensor t = {.id = coll_tensor_index(L, cp->chunk), .dim = len, .values = sum,
		       .base = coll_chunk_sparse(L, 1, cp->chunk) ? 0 : base};
	int rc = g->ef_views && !raw ? gw_encoder_set_ef(enc, g->ef_views[lc]) : GW_OK;
	if (rc == GW_OK)
		rc = gw_encode_begin(enc, &t);
	int n = rc < 0 ? rc : gw_encode_next(enc, frame, room);
	uint8_t none[GW_BUDGET_MIN];
	if (n > 0 && gw_encode_next(enc, none, sizeof(none)) != 0)
		n = GW_ERR(GW_EBUDGET);   /* one frame per chunk, always */
	if (n <= 0) {
		gw_encode_abandon(enc);
		return n < 0 ? n : GW_ERR(GW_ESTATE);
	}
	return n;
}

/* An hq chunk's result: the exact integer sum of its contributors' codes
 * as one sum frame (no float, no second quantisation, no downlink error
 * buffer), naming the largest of their maxima as the next round's scale,
 * which this shard then holds the chunk's next frames to. */
static int encode_hq_sum(gw_agg *a, struct copy *cp, uint8_t *frame, uint32_t room)
{
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	uint32_t lc = coll_local_of(L, cp->chunk);
	gw_sum_info si = {.scale = isnan(cp->scale) ? 0.0f : cp->scale, .next = cp->next,
			  .seed = g->hq_rotate ? cp->seed : 0, .contributors = cp->nseen,
			  .bits = (uint8_t)g->hq_bits, .rotated = (uint8_t)g->hq_rotate,
			  .poisoned = cp->poisoned};
	int n = gw_sum_encode(frame, room, coll_tensor_index(L, cp->chunk),
			      coll_chunk_off(L, cp->chunk), cp->isum,
			      coll_chunk_len(L, cp->chunk), &si);
	if (n > 0) {
		g->hq_next[lc] = cp->next;
		g->hq_known[lc] = 1;
	}
	return n;
}

/* Encodes the chunk's result into the RESULT packet and sends it to every
 * worker whose address is known. */
static int finalize(gw_agg *a, struct copy *cp)
{
	const struct coll_layout *L = &a->L;
	uint8_t *frame = cp->res + GW_PKT_HDR_LEN + L->bitmap_len;
	uint32_t room = a->res_room - coll_overhead(L, 1);
	int n = coll_chunk_hq(L, cp->chunk) ? encode_hq_sum(a, cp, frame, room)
					    : encode_float_sum(a, cp, frame, room);
	if (n < 0)
		return n;
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

/* Every worker cp waits for is in bits (n of them set): all W, or in a
 * loss-tolerant job every worker not gone (a gone one's contribution is
 * kept when it came before it went; it acknowledges nothing), not back
 * from the dead at a later round than cp's (gw_comm_join: it sends and
 * acknowledges nothing of the rounds before; waiting for it held each of
 * their chunks to the deadline, the round it joined in seconds) and not
 * back but behind (an evicted process heard again, its UPs not yet at a
 * position this shard holds: waiting for its acks stalled every worker
 * for good, the results it would ack being gone). */
static int all_live_in(const gw_agg *a, const struct copy *cp, const uint8_t *bits,
		       uint32_t n)
{
	const struct coll_layout *L = &a->L;
	if (n == L->job.workers)
		return 1;
	if ((!a->live.ngone && !a->live.nback && !a->live.nbehind) ||
	    L->job.mode != GW_COLL_LOSS_TOLERANT)
		return 0;
	for (uint32_t w = 0; w < L->job.workers; w++)
		if (!a->live.gone[w] && !a->live.behind[w] && !(bits[w / 8] >> (w % 8) & 1) &&
		    cp->round + 1u >= a->live.joined[w])
			return 0;
	return 1;
}

/* Every worker cp waits for has contributed to it. */
static int all_live_seen(const gw_agg *a, const struct copy *cp)
{
	return all_live_in(a, cp, cp->seen, cp->nseen);
}

/* A gone worker acknowledges nothing: count it as having every result, so
 * slots are reused without it (loss-tolerant eviction). */
static void ack_gone(const gw_agg *a, struct copy *cp)
{
	for (uint32_t w = 0; a->live.ngone && w < a->L.job.workers; w++) {
		uint8_t bit = (uint8_t)(1u << (w % 8));
		if (a->live.gone[w] && !(cp->acked[w / 8] & bit)) {
			cp->acked[w / 8] |= bit;
			cp->nacked++;
		}
	}
}

/* Every worker cp waits for holds its result (slots are reused without
 * the others). */
static int all_acked(const gw_agg *a, const struct copy *cp)
{
	return all_live_in(a, cp, cp->acked, cp->nacked);
}

/* Reliable mode: the first gone worker cp still waits for, or -1. */
static int32_t waits_on_gone(const gw_agg *a, const struct copy *cp)
{
	for (uint32_t w = 0; a->live.ngone && w < a->L.job.workers; w++)
		if (a->live.gone[w] && !(cp->seen[w / 8] >> (w % 8) & 1))
			return (int32_t)w;
	return -1;
}

void dense_agg_gone(gw_agg *a, uint32_t w, uint64_t now)
{
	(void)now;
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	int tolerant = L->job.mode == GW_COLL_LOSS_TOLERANT;
	uint8_t *told = calloc(L->bitmap_len, 1);
	for (uint32_t i = 0; i < 2 * g->nslots; i++) {
		struct copy *cp = &g->copies[i];
		if (cp->pos == EMPTY)
			continue;
		if (tolerant) {
			/* Evicted: its slots stop waiting for its ack, and a
			 * chunk every live worker is in finishes now. */
			if (cp->done)
				ack_gone(a, cp);
			else if (cp->nseen && all_live_seen(a, cp)) {
				int rc = finalize(a, cp);
				if (rc < 0 && !a->live.rc) {   /* serving stops with it */
					a->live.rc = rc;
					snprintf(a->live.why, sizeof(a->live.why), "shard %u: "
						 "a chunk finished without worker %u would not "
						 "encode", a->shard, w);
				}
			}
			continue;
		}
		/* Reliable: the workers in a chunk that cannot finish now are
		 * waiting on w; tell each, once. */
		if (cp->done || (cp->seen[w / 8] >> (w % 8) & 1))
			continue;
		for (uint32_t v = 0; v < L->job.workers; v++) {
			uint8_t bit = (uint8_t)(1u << (v % 8));
			if ((cp->seen[v / 8] & bit) && !(told && (told[v / 8] & bit)) &&
			    a->wk[v].known) {
				agg_live_tell_dead(a, v, w);
				if (told)
					told[v / 8] |= bit;
			}
		}
	}
	free(told);
}

/* An hq chunk's first contribution of a round: the sum starts at 0, on
 * the scale this shard named for the round (NaN: none yet, as after a
 * restart; the first frame's is taken), with the round's seed. */
static void hq_start(gw_agg *a, struct copy *cp, uint32_t ch, uint32_t round)
{
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	uint32_t lc = coll_local_of(L, ch);
	memset(cp->isum, 0, coll_chunk_len(L, ch) * sizeof(int32_t));
	cp->scale = g->hq_known[lc] ? g->hq_next[lc] : NAN;
	cp->next = 0.0f;
	cp->poisoned = 0;
	cp->seed = coll_hq_seed(L, round, ch);
}

/* Adds worker w's hq frame of chunk ch into cp's integer sum, if it is on
 * the round's scale, seed, bits and rotation. A frame on another scale
 * cannot be summed (its codes stand for other values): it is refused and
 * counted as bad; in a reliable job its worker is told why (its call
 * fails, GW_ECONFIG, naming the chunk and both scales) — a loss-tolerant
 * worker that missed a result is left out of the chunk, gets the result
 * and with it the scale. A frame that fails its checksum is corrupt, not
 * another setting (an unkeyed UP's checksum leaves the frame to its own,
 * and params flipped in transit must not end a worker's call): counted
 * so, its re-send is taken. Returns 0 or GW_E*. */
static int hq_input(gw_agg *a, struct copy *cp, const uint8_t *frame, uint32_t flen,
		    uint32_t ch, uint32_t w)
{
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	gw_sum_info si;
	gw_frame_info fi;
	int rc = gw_sum_info_of(frame, flen, &si);
	if (rc < 0) {
		/* Params that do not read: corrupt if the checksum says so. */
		int v = gw_frame_verify(frame, flen, &fi);
		coll_agg_decode_failed(a, v < 0 ? v : rc);
		return rc;
	}
	/* Each text fits a CTRL's (COLL_CTRL_TEXT - 1 = 87 characters) at
	 * 10-digit chunks and rounds and 15-character scales. */
	char why[COLL_CTRL_TEXT];
	why[0] = '\0';
	if (si.contributors != 1)
		snprintf(why, sizeof(why), "chunk %u round %u: an hq sum of %u frames, not a "
			 "worker's", ch, cp->round, si.contributors);
	else if (si.bits != g->hq_bits || si.rotated != g->hq_rotate)
		snprintf(why, sizeof(why), "chunk %u round %u: hq bits %u, rotate %u; the job's "
			 "%u, %u", ch, cp->round, si.bits, si.rotated, g->hq_bits, g->hq_rotate);
	else if (si.rotated && si.seed != cp->seed)
		snprintf(why, sizeof(why), "chunk %u round %u: hq seed %#x, the round's %#x", ch,
			 cp->round, si.seed, cp->seed);
	else if (!isnan(cp->scale) && memcmp(&si.scale, &cp->scale, sizeof(float)))
		snprintf(why, sizeof(why), "chunk %u round %u: scale %a, the shard's %a", ch,
			 cp->round, (double)si.scale, (double)cp->scale);
	if (why[0]) {
		rc = gw_frame_verify(frame, flen, &fi);   /* only here: sums verify once */
		if (rc < 0) {
			coll_agg_decode_failed(a, rc);
			return rc;
		}
		a->st.bad++;
		if (L->job.mode == GW_COLL_RELIABLE && a->wk[w].known)
			agg_live_send(a, w, COLL_CTRL_MISMATCH, 0, 0, why);
		return GW_ERR(GW_ECORRUPT);
	}
	rc = gw_sum_add(frame, flen, cp->isum, coll_chunk_off(L, ch), coll_chunk_len(L, ch),
			NULL);
	if (rc < 0) {
		coll_agg_decode_failed(a, rc);
		return rc;
	}
	if (isnan(cp->scale))
		cp->scale = si.scale;
	cp->next = si.next > cp->next ? si.next : cp->next;
	cp->poisoned |= si.poisoned;
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

int dense_agg_input(gw_agg *a, const struct coll_up *up, uint64_t now)
{
	struct dense_agg *g = a->eng;
	const struct coll_layout *L = &a->L;
	gw_pkt_hdr h = up->h;
	const uint8_t *frame = up->frame;
	uint32_t flen = up->len, ch = h.chunk;
	if (ch >= L->chunks || coll_shard_of(L, ch) != a->shard ||
	    coll_frame_of_chunk(L, 0, &up->fi, ch) < 0) {
		a->st.bad++;
		return GW_OK;
	}
	if (h.tensor != 0) {
		a->st.stale++;
		return GW_OK;
	}
	uint64_t p = coll_pos(L, h.round, ch);
	struct copy *cp = &g->copies[2 * (p % g->nslots) + ((p / g->nslots) & 1)];
	if (cp->pos != EMPTY && cp->pos > p) {
		a->st.stale++;   /* an old round's: says nothing of where w is */
		/* ... unless w was evicted since: then it waits for a result
		 * that is gone, and only being told ends its call. */
		if (a->live.nbehind)
			agg_live_tell_behind(a, h.rank);
		return GW_OK;
	}
	/* Authenticated (if keyed) and well-formed: this is where w is now. */
	a->wk[h.rank] = (struct wk){.ep = up->peer, .dp = up->dp, .known = 1};
	agg_live_caught_up(a, h.rank);
	uint8_t bit = (uint8_t)(1u << (h.rank % 8));
	/* A worker sends p only holding the result of p - window, and so of
	 * every earlier chunk of this slot: both copies, when they hold an
	 * older chunk, are acknowledged by it. */
	ack(cp, p, h.rank);
	ack(&g->copies[2 * (p % g->nslots) + (((p / g->nslots) & 1) ^ 1)], p, h.rank);
	if (cp->pos == p) {
		/* Reliable: a chunk waiting on a gone worker never finishes;
		 * its sender (re-sending, so waiting) is told which. */
		int32_t dead = cp->done || L->job.mode != GW_COLL_RELIABLE ? -1
							  : waits_on_gone(a, cp);
		if (dead >= 0)
			agg_live_tell_dead(a, h.rank, (uint32_t)dead);
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
	} else {
		/* Positions are consecutive across rounds, so a copy's next
		 * one is always pos + 2 window: a worker further ahead (one
		 * that joined at a later round, gw_comm_join) would take the
		 * copy from under a position the others still need. */
		if (cp->pos != EMPTY && (!cp->done || !all_acked(a, cp) ||
					 p != cp->pos + 2ull * g->nslots)) {
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
		if (L->job.mode == GW_COLL_LOSS_TOLERANT)
			ack_gone(a, cp);
		cp->first_ns = 0;
		memset(cp->seen, 0, L->bitmap_len);
	}
	uint32_t len = coll_chunk_len(L, ch);
	if (coll_chunk_hq(L, ch)) {
		if (!cp->nseen)
			hq_start(a, cp, ch, h.round);
		if (hq_input(a, cp, frame, flen, ch, h.rank) < 0)
			return GW_OK;
	} else {
		float *part = cp->parts + (size_t)h.rank * L->job.chunk_elems;
		memset(part, 0, len * sizeof(float));
		int rc = coll_decode_chunk(L, 0, frame, flen, part, ch);
		if (rc < 0) {
			coll_agg_decode_failed(a, rc);
			return GW_OK;
		}
	}
	cp->seen[h.rank / 8] |= bit;
	if (!cp->nseen++)
		cp->first_ns = now;
	a->st.ups++;
	if (cp->nseen == L->job.workers ||
	    (L->job.mode == GW_COLL_LOSS_TOLERANT && all_live_seen(a, cp)))
		return finalize(a, cp);
	if (L->job.mode == GW_COLL_RELIABLE && a->live.ngone) {
		int32_t dead = waits_on_gone(a, cp);
		if (dead >= 0)
			agg_live_tell_dead(a, h.rank, (uint32_t)dead);
	}
	return GW_OK;
}

/* Loss-tolerant mode: chunks past their deadline finish short. */
int dense_agg_tick(gw_agg *a, uint64_t now)
{
	struct dense_agg *g = a->eng;
	uint64_t dl = 1000ull * a->L.job.deadline_us;
	for (uint32_t i = 0; i < 2 * g->nslots; i++) {
		struct copy *cp = &g->copies[i];
		if (cp->pos != EMPTY && !cp->done && cp->nseen && now - cp->first_ns >= dl) {
			int rc = finalize(a, cp);
			if (rc < 0)
				return rc;
		}
	}
	return GW_OK;
}
