/* The shard's liveness (docs/collective.md, "Faults"): it heartbeats to
 * the workers it knows, judges each with its failure detector (coll_fd.h)
 * over the gaps between the worker's packets, and hands a worker that is
 * gone to its engine (reliable: the chunks that can no longer finish are
 * reported, by name, to the workers waiting on them; loss-tolerant: the
 * worker is evicted and the rest carry on); a worker heard again is back.
 * A suspected worker is probed. A loss-tolerant job evicts it at once (it
 * is back as soon as it is heard: eviction costs nothing that cannot come
 * back), a reliable one only when the suspicion is confirmed, a further
 * liveness interval of silence later (failing is for good). A worker not
 * heard at all is not yet up: once the first worker is heard, the others
 * are given the start-up time, then are gone, "never came up".
 *
 * Heartbeats leave on time whatever the backlog; silence is judged only
 * with nothing left to read, so a shard that was itself descheduled finds
 * its backlog first, not dead workers.
 *
 * A worker whose CTRL shows it was told otherwise (its digest) is answered
 * with MISMATCH, and the shard stops serving with GW_ECONFIG naming the
 * setting; an unauthenticated one only leaves a note (gw_agg_problem). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

int agg_live_init(gw_agg *a)
{
	struct agg_live *v = &a->live;
	uint32_t W = a->L.job.workers;
	v->gone = calloc(W, 1);
	v->silent_ms = calloc(W, sizeof(*v->silent_ms));
	v->heard = calloc(W, sizeof(*v->heard));
	v->joined = calloc(W, sizeof(*v->joined));
	v->behind = calloc(W, 1);
	v->fd = calloc(W, sizeof(*v->fd));
	if (!v->gone || !v->silent_ms || !v->heard || !v->joined || !v->behind || !v->fd ||
	    pthread_mutex_init(&v->mu, NULL))
		return GW_ERR(GW_ENOMEM);
	v->ready = 1;
	v->incarnation = coll_incarnation();
	agg_live_set(a, coll_liveness_default());
	v->startup_ns = 1000000ull * coll_startup_default();
	return GW_OK;
}

void agg_live_set(gw_agg *a, uint32_t ms)
{
	struct agg_live *v = &a->live;
	v->liveness_ns = 1000000ull * ms;
	v->fdc = coll_fd_config(v->liveness_ns);
	v->next_hb_ns = v->next_judge_ns = 0;
}

void agg_live_fini(gw_agg *a)
{
	struct agg_live *v = &a->live;
	if (!v->ready)
		return;
	pthread_mutex_destroy(&v->mu);
	free(v->gone);
	free(v->silent_ms);
	free(v->heard);
	free(v->joined);
	free(v->behind);
	free(v->fd);
	v->ready = 0;
}

/* A CTRL packet to an address on dataplane di (a worker's known one, or
 * the sender of what is answered). */
static void ctrl_to(gw_agg *a, unsigned di, const gw_endpoint *to, uint8_t kind,
		    uint32_t subject, uint32_t silent_ms, const char *text)
{
	uint8_t buf[GW_PKT_HDR_LEN + COLL_CTRL_LEN + GW_PKT_MAC_LEN];
	struct coll_ctrl m = {.kind = kind, .role = COLL_ROLE_SHARD, .from = a->shard,
			      .round = a->live.round, .subject = subject, .silent_ms = silent_ms,
			      .incarnation = a->live.incarnation};
	snprintf(m.text, sizeof(m.text), "%.*s", (int)sizeof(m.text) - 1, text ? text : "");
	uint32_t len = coll_ctrl_write(&a->L, buf, &m);
	coll_agg_send_to(a, di, to, buf, len);
	a->live.sent++;
}

void agg_live_send(gw_agg *a, uint32_t w, uint8_t kind, uint32_t subject, uint32_t silent_ms,
		   const char *text)
{
	/* A heartbeat names the process it is meant for (the worker's
	 * incarnation), so that one queued for a process that has since been
	 * replaced tells its successor nothing. */
	if (kind == COLL_CTRL_HEARTBEAT)
		subject = a->wk[w].incarnation;
	ctrl_to(a, a->wk[w].dp, &a->wk[w].ep, kind, subject, silent_ms, text);
}

void agg_live_reply(gw_agg *a, unsigned di, const gw_endpoint *to, uint8_t kind,
		    const char *text)
{
	ctrl_to(a, di, to, kind, 0, 0, text);
}

static void note(gw_agg *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(gw_agg *a, const char *fmt, ...)
{
	struct agg_live *v = &a->live;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&v->mu);
	vsnprintf(v->problem, sizeof(v->problem), fmt, ap);
	v->problems++;
	pthread_mutex_unlock(&v->mu);
	va_end(ap);
}

static void gone(gw_agg *a, uint32_t w, uint8_t why, uint32_t silent_ms, uint64_t now)
{
	struct agg_live *v = &a->live;
	if (v->gone[w])
		return;
	v->gone[w] = why;
	v->silent_ms[w] = silent_ms;
	v->ngone++;
	v->evicted++;
	if (a->L.job.mode == GW_COLL_LOSS_TOLERANT && !v->behind[w]) {
		v->behind[w] = 1;
		v->nbehind++;
	}
	if (a->L.eng->agg_gone)
		a->L.eng->agg_gone(a, w, now);
}

/* Any accepted packet of w: its detector learns the gap, a suspicion
 * is cleared. */
static void heard(gw_agg *a, uint32_t w, uint64_t now)
{
	struct agg_live *v = &a->live;
	v->heard[w] = now;
	if (!v->first_ns)
		v->first_ns = now;
	if (coll_fd_heard(&v->fd[w], &v->fdc, now, &v->gaps)) {
		v->ls.cleared++;
		v->ls.probes_answered += v->fd[w].probes != 0;
	}
}

void agg_live_seen(gw_agg *a, uint32_t w, uint64_t now)
{
	struct agg_live *v = &a->live;
	heard(a, w, now);
	if (!v->gone[w])
		return;
	v->gone[w] = 0;
	v->ngone--;
	v->rejoined++;
}

void agg_live_caught_up(gw_agg *a, uint32_t w)
{
	struct agg_live *v = &a->live;
	if (v->behind && v->behind[w]) {
		v->behind[w] = 0;
		v->nbehind--;
	}
}

void agg_live_tell_behind(gw_agg *a, uint32_t w)
{
	struct agg_live *v = &a->live;
	/* The worker words it: the job's round is in every CTRL. */
	if (v->behind[w] && !v->gone[w])
		agg_live_send(a, w, COLL_CTRL_DEAD, w, GW_MAX(v->silent_ms[w], 1u),
			      "left behind");
}

void agg_live_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now)
{
	struct agg_live *v = &a->live;
	struct coll_ctrl m;
	enum coll_verdict vd = coll_ctrl_read(&a->L, pkt, &m);
	char ep[48], why[160];
	if (gw_endpoint_format(&pkt->peer, ep, sizeof(ep)) < 0)
		snprintf(ep, sizeof(ep), "?");
	if ((vd == COLL_UNAUTH || vd == COLL_FORGED) && m.role == COLL_ROLE_WORKER) {
		struct coll_digest here;
		coll_digest_of(&a->L, &here);
		if (coll_digest_diff(&here, &m.d, why, sizeof(why)))
			note(a, "a CTRL packet from %s claiming worker %u failed the MAC; it "
			     "says %s", ep, m.from, why);
	}
	if (vd != COLL_OK) {
		coll_count(vd, &a->st.bad, &a->st.corrupt, &a->st.foreign,
			   &a->st.unauthenticated, &a->st.forged);
		return;
	}
	if (m.role != COLL_ROLE_WORKER || m.from >= a->L.job.workers) {
		a->st.bad++;
		return;
	}
	uint32_t w = m.from;
	v->received++;
	struct coll_digest here;
	coll_digest_of(&a->L, &here);
	if (coll_digest_diff(&here, &m.d, why, sizeof(why))) {
		agg_live_reply(a, di, &pkt->peer, COLL_CTRL_MISMATCH, why);
		note(a, "worker %u (%s) was told otherwise: %s", w, ep, why);
		if (!v->rc) {
			/* Serving stops a liveness interval later: every worker
			 * that says hello meanwhile is told what differs. */
			v->rc = GW_ECONFIG;
			v->rc_at = now + (v->liveness_ns ? v->liveness_ns : 1000000000ull);
			snprintf(v->why, sizeof(v->why), "shard %u: worker %u (%s) was told "
				 "otherwise: %s", a->shard, w, ep, why);
		}
		return;
	}
	/* Where w is comes from its gradients (UPs); a CTRL packet teaches it
	 * only while none came. Another process claiming w from elsewhere
	 * (a stale copy, a second start) neither keeps w alive nor says its
	 * goodbye: it is counted, and its packets ignored. */
	/* ... except a worker that is gone: a new process of that rank (a
	 * restart) takes its place. It goes on from the round it is told
	 * (gw_comm_join), never holding a result of the rounds before. The
	 * same process heard again after a silence is only back. */
	/* A replaced process never comes back: its packets still on the way
	 * (a duplicate, one held by reordering) must not evict its
	 * successor. */
	if (m.incarnation && m.incarnation == a->wk[w].replaced) {
		v->impostors++;
		return;
	}
	int moved = a->wk[w].known && memcmp(&a->wk[w].ep, &pkt->peer, sizeof(pkt->peer));
	/* A new process at w's own address (memif and netns links give a
	 * rank a fixed one): the old process is gone for certain, its
	 * address being taken, and is not waited for. */
	int reborn = a->wk[w].known && !moved && a->wk[w].incarnation && m.incarnation &&
		     m.incarnation != a->wk[w].incarnation;
	if (reborn && !v->gone[w])
		gone(a, w, COLL_GONE_REPLACED, 0, now);
	int fresh = !a->wk[w].known || v->gone[w];
	if (fresh) {
		if ((moved || reborn) && v->gone[w]) {
			v->joined[w] = v->round + 1u;
			v->nback++;
		}
		a->wk[w] = (struct wk){.ep = pkt->peer, .dp = di, .known = 1,
				       .incarnation = m.incarnation,
				       .replaced = (moved || reborn) &&
							   m.incarnation != a->wk[w].incarnation
						   ? a->wk[w].incarnation : a->wk[w].replaced};
	} else if (moved) {
		v->impostors++;
		return;
	} else if (!a->wk[w].incarnation) {
		a->wk[w].incarnation = m.incarnation;
	}
	heard(a, w, now);
	if (m.kind == COLL_CTRL_BYE) {
		gone(a, w, COLL_GONE_LEFT, 0, now);
	} else if (m.kind == COLL_CTRL_PROBE) {
		/* The worker suspects us: answer at once. */
		agg_live_seen(a, w, now);
		agg_live_send(a, w, COLL_CTRL_HEARTBEAT, 0, 0, NULL);
	} else if (m.kind == COLL_CTRL_HEARTBEAT) {
		agg_live_seen(a, w, now);
		/* A worker heard for the first time (or again) is answered at
		 * once: it learns the job's round (gw_comm_join) without
		 * waiting for the next heartbeat. */
		if (fresh)
			agg_live_send(a, w, COLL_CTRL_HEARTBEAT, 0, 0, NULL);
	}
}

/* Worker w at now (nothing left to read). */
static void judge(gw_agg *a, uint32_t w, uint64_t now)
{
	struct agg_live *v = &a->live;
	if (v->gone[w])
		return;
	if (!a->wk[w].known) {
		/* Not yet up: the job began when its first worker was heard. */
		if (v->first_ns && v->startup_ns && now - v->first_ns >= v->startup_ns) {
			v->ls.never_up++;
			gone(a, w, COLL_GONE_NEVER, 0, now);
		}
		return;
	}
	uint32_t silent_ms = (uint32_t)GW_MIN(coll_fd_silence(&v->fd[w], now) / 1000000u,
					      (uint64_t)UINT32_MAX);
	switch (coll_fd_judge(&v->fd[w], &v->fdc, now)) {
	case COLL_FD_SUSPECT:
		v->ls.suspected++;
		agg_live_send(a, w, COLL_CTRL_PROBE, 0, 0, NULL);
		v->ls.probes_sent++;
		/* Loss-tolerant: evicted at once, back as soon as heard. */
		if (a->L.job.mode == GW_COLL_LOSS_TOLERANT)
			gone(a, w, COLL_GONE_SILENT, GW_MAX(silent_ms, 1u), now);
		break;
	case COLL_FD_PROBE:
		agg_live_send(a, w, COLL_CTRL_PROBE, 0, 0, NULL);
		v->ls.probes_sent++;
		break;
	case COLL_FD_DEAD:
		gone(a, w, COLL_GONE_SILENT, GW_MAX(silent_ms, 1u), now);
		break;
	case COLL_FD_FINE:
		break;
	}
}

int agg_live_tick(gw_agg *a, uint64_t now, int drained)
{
	struct agg_live *v = &a->live;
	if (v->rc && now >= v->rc_at)
		return v->rc;
	if (!v->liveness_ns)
		return GW_OK;
	/* Heartbeats on time, backlog or not: a worker waiting on a slower
	 * one hears nothing else from us. */
	if (now >= v->next_hb_ns) {
		for (uint32_t w = 0; w < a->L.job.workers; w++)
			if (a->wk[w].known && !v->gone[w])
				agg_live_send(a, w, COLL_CTRL_HEARTBEAT, 0, 0, NULL);
		if (v->next_hb_ns)
			coll_hist_add(&v->late, (now - v->next_hb_ns) / 1000u);
		v->ls.hb_sent++;
		v->next_hb_ns = now + v->fdc.hb_ns;
	}
	if (!drained || now < v->next_judge_ns)
		return GW_OK;
	v->next_judge_ns = now + v->fdc.hb_ns / 4;
	for (uint32_t w = 0; w < a->L.job.workers; w++)
		judge(a, w, now);
	return GW_OK;
}

uint64_t agg_live_wait_ns(const gw_agg *a, uint64_t now)
{
	const struct agg_live *v = &a->live;
	if (!v->liveness_ns)
		return UINT64_MAX;
	return v->next_hb_ns > now ? v->next_hb_ns - now : 0;
}

void agg_live_stats(const gw_agg *a, gw_liveness_stats *s)
{
	const struct agg_live *v = &a->live;
	coll_liveness_stats(s, &v->ls, &v->late, &v->gaps);
}

void agg_live_bye_reason(gw_agg *a, const char *why)
{
	snprintf(a->live.bye, sizeof(a->live.bye), "%s", why ? why : "");
}

void agg_live_bye(gw_agg *a, const char *why)
{
	for (uint32_t w = 0; w < a->L.job.workers; w++)
		if (a->wk[w].known && !a->live.gone[w])
			agg_live_send(a, w, COLL_CTRL_BYE, 0, 0, why);
	coll_agg_flush(a);
}

void agg_live_tell_dead(gw_agg *a, uint32_t to, uint32_t w)
{
	const struct agg_live *v = &a->live;
	char never[48];
	const char *why = "silent";
	if (v->gone[w] == COLL_GONE_LEFT)
		why = "it said goodbye";
	else if (v->gone[w] == COLL_GONE_REPLACED)
		why = "a new process took its place";
	else if (v->gone[w] == COLL_GONE_NEVER) {
		/* The worker's message reads the text: "never came up ...". */
		uint64_t ms = v->startup_ns / 1000000u;
		if (ms % 1000u)
			snprintf(never, sizeof(never), "never came up in %llu ms",
				 (unsigned long long)ms);
		else
			snprintf(never, sizeof(never), "never came up in %llu s",
				 (unsigned long long)(ms / 1000u));
		why = never;
	}
	agg_live_send(a, to, COLL_CTRL_DEAD, w, v->silent_ms[w], why);
}
