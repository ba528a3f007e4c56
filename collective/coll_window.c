/* The worker's self-tuned window (coll_window.h). */
#include "coll_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BETA 0.8            /* Swift's multiplicative decrease factor */
#define MAX_CUT 0.5         /* a loss halves the window */
#define MAX_DELAY_CUT 0.25  /* delay takes a quarter at most per RTT */

void coll_window_init(struct coll_window *w, uint32_t shards, uint32_t slots_per_shard)
{
	memset(w, 0, sizeof(*w));
	w->cap = (double)shards * slots_per_shard;
	w->floor = shards > 4 ? shards : 4;
	if (w->floor > w->cap)
		w->floor = w->cap;
	const char *env = getenv("GW_COLL_WINDOW");
	w->fixed = env && !strcmp(env, "fixed");
	w->trace = env && !strcmp(env, "trace");
	/* Slow start from twice the floor: a few round trips reach any
	 * window the slots allow. */
	w->cwnd = w->fixed ? w->cap : 2 * w->floor < w->cap ? 2 * w->floor : w->cap;
	w->slow_start = true;
}

static void clamp(struct coll_window *w)
{
	if (w->cwnd < w->floor)
		w->cwnd = w->floor;
	if (w->cwnd > w->cap)
		w->cwnd = w->cap;
}

void coll_window_sample(struct coll_window *w, uint64_t rtt_ns, uint64_t now)
{
	if (w->fixed || !rtt_ns)
		return;
	if (!w->base_ns || rtt_ns < w->base_ns)
		w->base_ns = rtt_ns;
	/* Its own smoothed RTT (RFC 6298's 1/8), of the samples it is given:
	 * a queue that builds up raises it for good, while one sample
	 * delayed by a process waiting for a core (2 cores, W + 1 processes)
	 * does not. */
	w->srtt_ns = w->srtt_ns ? (7 * w->srtt_ns + rtt_ns) / 8 : rtt_ns;
	uint64_t allow = w->base_ns > COLL_WINDOW_QDELAY_NS ? w->base_ns : COLL_WINDOW_QDELAY_NS;
	uint64_t target = w->base_ns + allow, d = w->srtt_ns;
	if (d <= target) {
		w->cwnd += w->slow_start ? 1.0 : 1.0 / w->cwnd;
	} else if (now - w->cut_ns >= d) {
		double f = 1.0 - BETA * (double)(d - target) / (double)d;
		w->cwnd *= f < 1.0 - MAX_DELAY_CUT ? 1.0 - MAX_DELAY_CUT : f;
		w->cut_ns = now;
		w->slow_start = false;
		w->cuts++;
	}
	clamp(w);
}

void coll_window_loss(struct coll_window *w, uint64_t sent_ns, uint64_t now)
{
	if (w->fixed)
		return;
	/* Once per window of losses: chunks sent before the last cut were
	 * sent with the window that cut already answered. */
	if (sent_ns < w->cut_ns)
		return;
	w->cwnd *= 1.0 - MAX_CUT;
	w->cut_ns = now;
	w->slow_start = false;
	w->losses++;
	clamp(w);
}

void coll_window_trace(const struct coll_window *w, unsigned rank, uint32_t round)
{
	if (!w->trace)
		return;
	fprintf(stderr, "gradwire: rank %u round %u: window %.1f chunks (%.0f .. %.0f), "
		"base rtt %.3f ms, %s, %llu delay cuts, %llu loss cuts\n", rank, round, w->cwnd,
		w->floor, w->cap, (double)w->base_ns / 1e6, w->slow_start ? "slow start" : "steady",
		(unsigned long long)w->cuts, (unsigned long long)w->losses);
}
