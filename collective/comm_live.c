/* The worker's liveness (docs/collective.md, "Faults"): it tells its shards
 * it is alive, learns whether they are, and turns what CTRL packets say
 * into the call's error.
 *
 * Heartbeats go to every shard each liveness/8: from the call's own loop
 * while a call runs, and from a thread between calls, so a worker in a
 * ten-second backward pass is alive to its shards (gradient traffic alone
 * cannot say that). The thread takes the communicator's lock, which every
 * call holds, so it never touches the dataplane while a call does; it only
 * sends (a result that arrives between calls waits for the next one).
 *
 * During a call each shard is judged by its failure detector (coll_fd.h)
 * over the gaps between its packets, counted from the call's start (we do
 * not read between calls): a shard silent past the detector's threshold
 * is suspected and probed, and is dead only when nothing came from it for
 * a further liveness interval. A shard never heard is not
 * yet up, and is given the start-up time from the first call instead. A
 * shard that reports a worker dead (a chunk this worker waits for can
 * never finish) or a setting that differs ends the call at once. GW_EPEER
 * and GW_ECONFIG stay: a job that lost a peer or disagrees with itself
 * does not get better. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_internal.h"

static void live_send_to(gw_comm *c, uint32_t s, uint8_t kind, const char *text)
{
	struct comm_live *v = &c->live;
	gw_dp *dp = coll_dp_to(c, s);
	gw_pkt *p;
	if (gw_dp_alloc(dp, &p, 1) != 1)
		return;   /* the next heartbeat tries again */
	struct coll_ctrl m = {.kind = kind, .role = COLL_ROLE_WORKER, .from = c->rank,
			      .round = c->round, .incarnation = v->incarnation};
	snprintf(m.text, sizeof(m.text), "%.*s", (int)sizeof(m.text) - 1, text ? text : "");
	if (p->room < GW_PKT_HDR_LEN + COLL_CTRL_LEN + GW_PKT_MAC_LEN) {
		gw_dp_free(dp, &p, 1);
		return;
	}
	p->len = coll_ctrl_write(&c->L, p->data, &m);
	p->peer = c->shards[s];
	/* The caller keeps what it sends (gw_dp_tx_burst): freed either way.
	 * Kept after a send, every heartbeat leaked a packet, and a long job
	 * (four shards: 32 a second) ran out of packets for its gradient
	 * after two minutes, its shards then silent. */
	if (gw_dp_tx_burst(dp, &p, 1) == 1)
		v->sent++;
	gw_dp_free(dp, &p, 1);
}

static void live_send(gw_comm *c, uint8_t kind, const char *text)
{
	for (uint32_t s = 0; s < c->L.job.shards; s++)
		live_send_to(c, s, kind, text);
}

/* The heartbeat due at v->next_hb_ns, when it is due (its lateness
 * counted). The caller holds the communicator's lock: the call's loop, or
 * the thread between calls. */
static void beat(gw_comm *c, uint64_t now)
{
	struct comm_live *v = &c->live;
	if (now < v->next_hb_ns)
		return;
	live_send(c, COLL_CTRL_HEARTBEAT, NULL);
	coll_hist_add(&v->late, (now - v->next_hb_ns) / 1000u);
	v->ls.hb_sent++;
	v->next_hb_ns = now + v->fdc.hb_ns;
}

/* Between calls, and while a call works without the dataplane
 * (coll_comm_offline). One schedule with the call's loop: whoever holds
 * the lock when a beat is due sends it. */
static void *live_thread(void *arg)
{
	gw_comm *c = arg;
	struct comm_live *v = &c->live;
	pthread_mutex_lock(&v->mu);
	uint64_t wake = gw_now_ns() + v->fdc.hb_ns;
	while (!v->stop) {
		struct timespec t = {.tv_sec = (time_t)(wake / 1000000000u),
				     .tv_nsec = (long)(wake % 1000000000u)};
		pthread_cond_timedwait(&v->cv, &v->mu, &t);
		if (v->stop)
			break;
		uint64_t now = gw_now_ns();
		if (pthread_mutex_trylock(&c->call_mu) == 0) {
			beat(c, now);
			wake = v->next_hb_ns;
			pthread_mutex_unlock(&c->call_mu);
		} else {
			wake = now + v->fdc.hb_ns;   /* a call beats itself */
		}
	}
	pthread_mutex_unlock(&v->mu);
	return NULL;
}

int comm_live_init(gw_comm *c)
{
	struct comm_live *v = &c->live;
	uint32_t S = c->L.job.shards;
	v->shard_round = calloc(S, sizeof(*v->shard_round));
	v->shard_incarnation = calloc(S, sizeof(*v->shard_incarnation));
	v->fd = calloc(S, sizeof(*v->fd));
	v->incarnation = coll_incarnation();
	v->startup_ns = 1000000ull * coll_startup_default();
	if (!v->shard_round || !v->shard_incarnation || !v->fd)
		return GW_ERR(GW_ENOMEM);
	/* The thread's clock is gw_now_ns's: a wall clock set back would
	 * stop the heartbeats. */
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) ||
	    pthread_mutex_init(&v->mu, NULL) || pthread_cond_init(&v->cv, &ca))
		return GW_ERR(GW_ENOMEM);
	pthread_condattr_destroy(&ca);
	v->ready = 1;
	return comm_live_set(c, coll_liveness_default());
}

static void live_stop(gw_comm *c)
{
	struct comm_live *v = &c->live;
	if (!v->running)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = 1;
	pthread_cond_signal(&v->cv);
	pthread_mutex_unlock(&v->mu);
	pthread_join(v->thr, NULL);
	v->running = 0;
	v->stop = 0;
}

int comm_live_set(gw_comm *c, uint32_t ms)
{
	struct comm_live *v = &c->live;
	live_stop(c);
	v->liveness_ns = 1000000ull * ms;
	v->fdc = coll_fd_config(v->liveness_ns);
	if (!ms)
		return GW_OK;
	/* The first packet says who we are and what we were told: a shard
	 * that disagrees answers before any gradient moves. */
	live_send(c, COLL_CTRL_HEARTBEAT, NULL);
	v->next_hb_ns = gw_now_ns() + v->fdc.hb_ns;
	if (pthread_create(&v->thr, NULL, live_thread, c))
		return GW_ERRF(GW_ENOMEM, "liveness: no thread");
	v->running = 1;
	return GW_OK;
}

void comm_live_fini(gw_comm *c)
{
	struct comm_live *v = &c->live;
	if (!v->ready)
		return;
	live_stop(c);
	/* A clean exit tells the shards, so none waits for us. */
	if (v->liveness_ns && c->L.eng)
		live_send(c, COLL_CTRL_BYE, "the worker closed its communicator");
	pthread_cond_destroy(&v->cv);
	pthread_mutex_destroy(&v->mu);
	free(v->shard_round);
	free(v->shard_incarnation);
	free(v->fd);
	v->ready = 0;
}

void comm_live_begin(gw_comm *c, uint64_t now)
{
	struct comm_live *v = &c->live;
	v->begin_ns = now;
	v->hint[0] = '\0';
	if (!v->first_call_ns)
		v->first_call_ns = now;
	comm_live_rebase(c, now);
}

void comm_live_rebase(gw_comm *c, uint64_t now)
{
	struct comm_live *v = &c->live;
	/* Nothing was read since the last call, or while this one worked
	 * offline: silence counts from here, and a suspicion of the last
	 * call is for this one to find again. */
	for (uint32_t s = 0; s < c->L.job.shards; s++)
		coll_fd_rebase(&v->fd[s], now);
}

/* Sticky: the first peer failure stays the job's. */
static int live_fail(gw_comm *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int live_fail(gw_comm *c, int rc, const char *fmt, ...)
{
	struct comm_live *v = &c->live;
	if (v->rc)
		return v->rc;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
	v->rc = rc;
	return rc;
}

void comm_live_heard(gw_comm *c, uint32_t shard, uint64_t now)
{
	struct comm_live *v = &c->live;
	if (shard >= c->L.job.shards)
		return;
	if (coll_fd_heard(&v->fd[shard], &v->fdc, now, &v->gaps)) {
		v->ls.cleared++;
		v->ls.probes_answered += v->fd[shard].probes != 0;
	}
}

static void endpoint_of(const gw_comm *c, uint32_t s, char *ep, size_t n)
{
	if (gw_endpoint_format(&c->shards[s], ep, n) < 0)
		snprintf(ep, n, "?");
}

void comm_live_input(gw_comm *c, const gw_pkt *pkt, uint64_t now)
{
	struct comm_live *v = &c->live;
	struct coll_ctrl m;
	enum coll_verdict vd = coll_ctrl_read(&c->L, pkt, &m);
	char ep[48], why[160];
	if ((vd == COLL_UNAUTH || vd == COLL_FORGED) && m.role == COLL_ROLE_SHARD) {
		/* Unauthenticated: it may explain a silence, never decide. */
		struct coll_digest here;
		coll_digest_of(&c->L, &here);
		if (coll_digest_diff(&here, &m.d, why, sizeof(why)))
			snprintf(v->hint, sizeof(v->hint), "; a CTRL packet claiming shard %u "
				 "failed our MAC and says %s", m.from, why);
	}
	if (vd != COLL_OK) {
		coll_count(vd, &c->st.bad, &c->st.corrupt, &c->st.foreign,
			   &c->st.unauthenticated, &c->st.forged);
		return;
	}
	if (m.role != COLL_ROLE_SHARD || m.from >= c->L.job.shards) {
		c->st.bad++;
		return;
	}
	v->received++;
	comm_live_heard(c, m.from, now);
	/* The job's round, for gw_comm_join, only from a heartbeat the shard
	 * addressed to this process (its subject our incarnation): heartbeats
	 * it queued for the process before us, flushed once a memif link came
	 * back up, name a round the job has left behind. */
	if (m.kind == COLL_CTRL_HEARTBEAT && m.subject == v->incarnation)
		v->shard_round[m.from] = m.round + 1u;
	endpoint_of(c, m.from, ep, sizeof(ep));
	struct coll_digest here;
	coll_digest_of(&c->L, &here);
	if (coll_digest_diff(&here, &m.d, why, sizeof(why))) {
		live_fail(c, GW_ECONFIG, "shard %u (%s) was told otherwise: %s", m.from, ep, why);
		return;
	}
	/* Another process answering as shard s (restarted at its address)
	 * has none of the job's state: the chunks it held are lost. */
	uint32_t *inc = &v->shard_incarnation[m.from];
	if (m.incarnation && *inc && m.incarnation != *inc) {
		live_fail(c, GW_EPEER, "shard %u (%s) was restarted: a new process without "
			  "the job's state answers for it", m.from, ep);
		return;
	}
	if (m.incarnation)
		*inc = m.incarnation;
	switch (m.kind) {
	case COLL_CTRL_BYE:
		live_fail(c, GW_EPEER, "shard %u (%s) left the job: %s", m.from, ep, m.text);
		break;
	case COLL_CTRL_MISMATCH:
		live_fail(c, GW_ECONFIG, "shard %u (%s) refuses this worker: %s", m.from, ep,
			  m.text);
		break;
	case COLL_CTRL_PROBE:
		/* The shard suspects us: answer at once, not at the next beat. */
		if (v->liveness_ns)
			live_send_to(c, m.from, COLL_CTRL_HEARTBEAT, NULL);
		break;
	case COLL_CTRL_DEAD:
		if (m.subject >= c->L.job.workers) {
			c->st.bad++;
			break;
		}
		if (m.subject == c->rank) {
			/* Evicted (loss-tolerant) and left behind: the results
			 * this call waits for are gone. A notice of a round we
			 * have since left says nothing. */
			if (c->L.job.mode == GW_COLL_LOSS_TOLERANT && m.round > c->round + 1u)
				live_fail(c, GW_ESTATE, "rank %u was evicted by shard %u (%s) after "
					  "%u ms of silence and the job went on without it, to "
					  "round %u; the results this call (round %u) waits for "
					  "are gone: gw_comm_join rejoins at the job's round",
					  c->rank, m.from, ep, m.silent_ms, m.round - 1u, c->round);
			break;
		}
		if (m.silent_ms)
			live_fail(c, GW_EPEER, "worker %u is dead: silent for %u ms (shard %u, "
				  "%s)", m.subject, m.silent_ms, m.from, ep);
		else if (!strncmp(m.text, "never came up", 13))
			live_fail(c, GW_EPEER, "worker %u %s (shard %u, %s)", m.subject, m.text,
				  m.from, ep);
		else
			live_fail(c, GW_EPEER, "worker %u left the job (shard %u, %s): %s",
				  m.subject, m.from, ep, m.text);
		break;
	default:   /* a heartbeat: heard above */
		break;
	}
}

/* gw_comm_join: hellos until every shard has answered, CTRL packets
 * taken and everything else dropped (before this process's first call,
 * nothing else is its own). */
int comm_live_join(gw_comm *c, uint32_t timeout_ms, uint32_t *round)
{
	struct comm_live *v = &c->live;
	uint64_t now = gw_now_ns(), end = now + 1000000ull * timeout_ms, hello = now;
	uint32_t S = c->L.job.shards;
	memset(v->shard_round, 0, S * sizeof(*v->shard_round));
	for (;;) {
		uint32_t have = 0, best = 0;
		for (uint32_t s = 0; s < S; s++) {
			have += v->shard_round[s] != 0;
			best = GW_MAX(best, v->shard_round[s]);
		}
		if (have == S) {
			/* The job's highest round + 1 is where it goes on. */
			*round = best - 1u;
			return GW_OK;
		}
		if (v->rc)
			return gw__detail(v->rc, "%s", v->why);
		if (now >= end)
			return GW_ERRF(GW_ETIMEDOUT, "join: %u of %u shards answered in %u ms",
				       have, S, timeout_ms);
		if (now >= hello) {
			live_send(c, COLL_CTRL_HEARTBEAT, NULL);
			hello = now + 50000000ull;   /* until the old process is gone */
		}
		for (unsigned p = 0; p < c->ndp; p++) {
			int n = gw_dp_rx_burst(c->dps[p], c->rx, COLL_RX_BURST);
			for (int i = 0; i < n; i++)
				if (coll_pkt_type(c->rx[i]) == GW_PKT_CTRL)
					comm_live_input(c, c->rx[i], now);
			if (n > 0)
				gw_dp_free(c->dps[p], c->rx, (unsigned)n);
		}
		gw_dp_wait_any(c->dps, c->ndp, 2000);
		now = gw_now_ns();
	}
}

/* "30 s", or "1500 ms" where it is not whole seconds. */
static void span(char *buf, size_t n, uint64_t ns)
{
	uint64_t ms = ns / 1000000u;
	if (ms % 1000u)
		snprintf(buf, n, "%llu ms", (unsigned long long)ms);
	else
		snprintf(buf, n, "%llu s", (unsigned long long)(ms / 1000u));
}

/* Shard s at now: GW_OK, or the call's failure. */
static int judge(gw_comm *c, uint32_t s, uint64_t now)
{
	struct comm_live *v = &c->live;
	const struct coll_fd *f = &v->fd[s];
	char ep[48], t[32];
	if (!f->last_ns) {
		if (!v->startup_ns || now - v->first_call_ns < v->startup_ns)
			return GW_OK;   /* not yet up */
		endpoint_of(c, s, ep, sizeof(ep));
		span(t, sizeof(t), v->startup_ns);
		v->ls.never_up++;
		return live_fail(c, GW_EPEER, "shard %u (%s) never came up in %s%s", s, ep, t,
				 v->hint);
	}
	enum coll_fd_verdict vd = coll_fd_judge(&v->fd[s], &v->fdc, now);
	if (vd == COLL_FD_FINE)
		return GW_OK;
	if (vd != COLL_FD_DEAD) {
		/* Suspected now (probed at once), or a probe due again. */
		v->ls.suspected += vd == COLL_FD_SUSPECT;
		live_send_to(c, s, COLL_CTRL_PROBE, NULL);
		v->ls.probes_sent++;
		return GW_OK;
	}
	endpoint_of(c, s, ep, sizeof(ep));
	/* Loss-tolerant jobs stop too: only the dead shard knew which
	 * workers its last results reached (docs/collective.md, "A dead
	 * shard"). */
	return live_fail(c, GW_EPEER, "shard %u (%s) is dead: silent for %llu ms (suspected "
			 "after %llu ms, %u probes unanswered)%s%s", s, ep,
			 (unsigned long long)(coll_fd_silence(f, now) / 1000000u),
			 (unsigned long long)((f->suspect_ns - f->last_ns) / 1000000u),
			 f->probes, v->hint,
			 c->L.job.mode == GW_COLL_LOSS_TOLERANT
				 ? "; a loss-tolerant job stops too: no other shard knows "
				   "which workers its last results reached" : "");
}

int comm_live_poll(gw_comm *c, uint64_t now, int drained)
{
	struct comm_live *v = &c->live;
	if (v->report && now >= v->next_report_ns) {
		v->next_report_ns = now + v->report_ns;
		v->report(v->report_arg);
	}
	if (v->rc)
		return gw__detail(v->rc, "%s", v->why);
	if (!v->liveness_ns)
		return GW_OK;
	beat(c, now);
	/* A silent shard is judged with nothing left to read (our own
	 * descheduling is not its death). */
	for (uint32_t s = 0; drained && s < c->L.job.shards; s++)
		if (judge(c, s, now) < 0)
			return gw__detail(v->rc, "%s", v->why);
	return GW_OK;
}

void comm_live_stats(const gw_comm *c, gw_liveness_stats *s)
{
	const struct comm_live *v = &c->live;
	coll_liveness_stats(s, &v->ls, &v->late, &v->gaps);
}
