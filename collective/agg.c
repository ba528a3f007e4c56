/* The shard's side of every engine: a shard's common part (its
 * dataplanes, layout, workers' addresses, transmit queues, counters), the
 * serve loop, and the public calls; what a packet means is its engine's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

void gw_agg_free(gw_agg *a)
{
	if (!a)
		return;
	if (a->live.ready && a->live.liveness_ns && a->txq && a->wk)
		agg_live_bye(a, a->live.bye[0] ? a->live.bye : "the shard closed");
	agg_live_fini(a);
	if (a->L.eng)
		a->L.eng->agg_fini(a);
	coll_layout_fini(&a->L);
	if (a->txq)
		for (unsigned d = 0; d < a->ndp; d++)
			gw_dp_free(a->dps[d], a->txq[d].p, a->txq[d].n);
	free(a->txq);
	free(a->wk);
	free(a->dps);
	free((void *)a->heard_ns);
	free(a);
}

gw_agg *gw_agg_create(gw_dp **dps, unsigned ndp, const gw_agg_config *cfg)
{
	gw__detail_clear();
	if (!dps || !ndp || !cfg) {
		gw__detail(GW_EINVAL, "%s: missing", !cfg ? "cfg" : "dps");
		return NULL;
	}
	gw_agg *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	const struct coll_layout *L = &a->L;
	uint32_t pmax = UINT32_MAX;
	for (unsigned d = 0; d < ndp; d++)
		pmax = GW_MIN(pmax, gw_dp_payload_max(dps[d]));
	if (coll_layout_open(&a->L, &cfg->job, pmax) < 0) {
		free(a);
		return NULL;
	}
	if (cfg->shard >= L->job.shards) {
		gw__detail(GW_EINVAL, "shard: %u, but the job has %u shards", cfg->shard,
			   L->job.shards);
		goto fail;
	}
	a->res_room = pmax;
	a->ndp = ndp;
	a->shard = cfg->shard;
	a->dps = malloc(ndp * sizeof(*a->dps));
	a->wk = calloc(L->job.workers, sizeof(*a->wk));
	a->txq = calloc(ndp, sizeof(*a->txq));
	a->heard_ns = calloc(L->job.workers, sizeof(*a->heard_ns));
	if (!a->dps || !a->wk || !a->txq || !a->heard_ns) {
		gw__detail(GW_ENOMEM, "out of memory");
		goto fail;
	}
	memcpy(a->dps, dps, ndp * sizeof(*dps));
	if (agg_live_init(a) < 0 || L->eng->agg_init(a, cfg) < 0) {
		gw__detail(GW_ENOMEM, "out of memory");
		goto fail;
	}
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

int gw_agg_set_liveness(gw_agg *a, uint32_t ms)
{
	int rc = coll_live_arg(a, "agg", "liveness_ms", ms);
	if (rc < 0)
		return rc;
	agg_live_set(a, ms);
	return GW_OK;
}

int gw_agg_set_startup(gw_agg *a, uint32_t ms)
{
	int rc = coll_live_arg(a, "agg", "startup_ms", ms);
	if (rc < 0)
		return rc;
	a->live.startup_ns = 1000000ull * ms;
	return GW_OK;
}

void gw_agg_liveness_get(const gw_agg *a, gw_liveness_stats *s)
{
	if (a && s)
		agg_live_stats(a, s);
}

int gw_agg_set_report(gw_agg *a, uint32_t ms, gw_report_fn fn, void *arg)
{
	gw__detail_clear();
	if (!a || (ms && !fn))
		return GW_ERRF(GW_EINVAL, "%s: missing", !a ? "agg" : "fn");
	a->live.report_ns = 1000000ull * ms;
	a->live.report = ms ? fn : NULL;
	a->live.report_arg = arg;
	a->live.next_report_ns = 0;
	return GW_OK;
}

void gw_agg_faults_get(const gw_agg *a, gw_agg_faults *f)
{
	if (!a || !f)
		return;
	const struct agg_live *v = &a->live;
	*f = (gw_agg_faults){.ctrl_sent = v->sent, .ctrl_received = v->received,
			     .gone = v->evicted, .back = v->rejoined, .gone_now = v->ngone,
			     .problems = v->problems, .impostors = v->impostors};
}

int gw_agg_problem(gw_agg *a, char *buf, size_t len)
{
	if (!a || !buf || !len)
		return GW_ERR(GW_EINVAL);
	pthread_mutex_lock(&a->live.mu);
	snprintf(buf, len, "%s", a->live.problem);
	pthread_mutex_unlock(&a->live.mu);
	return (int)strlen(buf);
}

uint32_t coll_agg_flush(gw_agg *a)
{
	uint32_t sent = 0;
	for (unsigned d = 0; d < a->ndp; d++) {
		struct txq *q = &a->txq[d];
		if (!q->n)
			continue;
		coll_group_by_peer(q->p, q->n, q->tmp);
		int n = gw_dp_tx_burst(a->dps[d], q->p, q->n);
		if (n <= 0)
			continue;
		sent += (uint32_t)n;
		gw_dp_free(a->dps[d], q->p, (unsigned)n);
		memmove(q->p, q->p + n, (q->n - (uint32_t)n) * sizeof(*q->p));
		q->n -= (uint32_t)n;
	}
	return sent;
}

uint32_t coll_agg_queued(const gw_agg *a, unsigned d)
{
	return a->txq[d].n;
}

static int agg_queue_to(gw_agg *a, unsigned di, const gw_endpoint *to, const uint8_t *pkt,
			uint32_t len)
{
	struct txq *q = &a->txq[di];
	gw_pkt *p;
	if (q->n == PENDING_MAX)
		coll_agg_flush(a);
	if (q->n == PENDING_MAX || gw_dp_alloc(a->dps[di], &p, 1) != 1) {
		a->st.tx_refused++;   /* the worker's retransmission asks again */
		return 0;
	}
	memcpy(p->data, pkt, len);
	p->len = len;
	p->peer = *to;
	q->p[q->n++] = p;
	return 1;
}

static int agg_queue(gw_agg *a, uint32_t w, const uint8_t *pkt, uint32_t len)
{
	return agg_queue_to(a, a->wk[w].dp, &a->wk[w].ep, pkt, len);
}

void coll_agg_send_to(gw_agg *a, unsigned di, const gw_endpoint *to, const uint8_t *pkt,
		      uint32_t len)
{
	agg_queue_to(a, di, to, pkt, len);
}

void coll_agg_send(gw_agg *a, uint32_t w, const uint8_t *pkt, uint32_t len)
{
	if (agg_queue(a, w, pkt, len)) {
		a->st.results_sent++;
		a->st.bytes_down += len;
	}
}


int coll_agg_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now)
{
	struct coll_up up = {.peer = pkt->peer, .dp = di};
	if (coll_pkt_type(pkt) == GW_PKT_CTRL) {
		agg_live_input(a, di, pkt, now);
		return GW_OK;
	}
	if (!coll_agg_accept(a, pkt, &up.h, &up.frame, &up.len))
		return GW_OK;
	if (up.h.rank >= a->L.job.workers || gw_frame_peek(up.frame, up.len, &up.fi) < 0) {
		a->st.bad++;
		return GW_OK;
	}
	atomic_store_explicit(&a->heard_ns[up.h.rank], now, memory_order_relaxed);
	agg_live_seen(a, up.h.rank, now);
	if (up.h.round + 1u > a->live.round && up.h.round != UINT32_MAX)
		a->live.round = up.h.round + 1u;
	return a->L.eng->agg_input(a, &up, now);
}

uint64_t coll_agg_heard(const gw_agg *a, uint32_t w)
{
	return atomic_load_explicit(&a->heard_ns[w], memory_order_relaxed);
}

int coll_agg_tick(gw_agg *a, uint64_t now)
{
	if (a->L.job.mode != GW_COLL_LOSS_TOLERANT)
		return GW_OK;
	return a->L.eng->agg_tick(a, now);
}

int gw_agg_serve(gw_agg *a, volatile sig_atomic_t *stop, uint32_t idle_exit_ms)
{
	if (!a)
		return GW_ERR(GW_EINVAL);
	int tolerant = a->L.job.mode == GW_COLL_LOSS_TOLERANT;
	uint64_t scan_every = 1000ull * a->L.job.deadline_us / 4 + 1;
	uint64_t last_pkt = 0;
	while (!stop || !*stop) {
		uint64_t now = gw_now_ns();
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
		if (a->live.report && now >= a->live.next_report_ns) {
			a->live.next_report_ns = now + a->live.report_ns;
			a->live.report(a->live.report_arg);
		}
		int lrc = agg_live_tick(a, now, got == 0);
		uint32_t moved = coll_agg_flush(a);
		if (lrc < 0)
			return gw__detail(lrc, "%s", a->live.why);
		if (tolerant && now >= a->scan_ns) {
			int rc = coll_agg_tick(a, now);
			if (rc < 0)
				return rc;
			moved += coll_agg_flush(a);
			a->scan_ns = now + scan_every;
		}
		if (got) {
			last_pkt = now;
			continue;
		}
		if (idle_exit_ms && last_pkt && now - last_pkt >= 1000000ull * idle_exit_ms)
			return GW_OK;
		/* A packet that could not leave (a peer's full ring: a memif
		 * client that does not read yet) is tried again after a short
		 * sleep, not in a spin that takes the core its peer needs. */
		int pending = 0;
		for (unsigned d = 0; d < a->ndp; d++)
			pending |= a->txq[d].n != 0;
		if (pending && moved)
			continue;   /* draining: go on at once */
		/* One wait over every port: a memif shard has one per worker. */
		uint64_t us = pending ? COLL_TX_RETRY_US : COLL_IDLE_WAIT_US;
		if (tolerant)
			us = GW_MIN(us, scan_every / 1000u + 1);
		us = GW_MIN(us, agg_live_wait_ns(a, now) / 1000u + 1);
		if (a->live.report)
			us = GW_MIN(us, a->live.report_ns / 1000u + 1);
		if (gw_dp_wait_any(a->dps, a->ndp, (unsigned)us) < 0)
			return GW_ERR(GW_EIO);
	}
	return GW_OK;
}
