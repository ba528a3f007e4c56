/* A worker's congestion window: how many chunks it keeps in flight (sent,
 * no result yet), tuned to the path by the protocol rather than picked
 * per link by hand. The job's `window` (slots per shard) stays what the
 * shards allocate and what makes slot reuse safe; this window lives
 * inside it, between `floor` (one chunk per shard, at least 4) and
 * shards x window.
 *
 * Delay-based, after Swift (Kumar et al., SIGCOMM 2020): a smoothed round
 * trip above a target delay shrinks the window in proportion to the
 * excess, at most once per smoothed RTT and by at most a quarter (one
 * sample late for a core is not a queue: on two shared cores the raw
 * samples and half-cuts cost 10% on memif, where no link queues); below it the
 * window grows by one chunk per result in slow start, then by one per
 * window's worth of results (one per RTT). The target is the smallest
 * round trip seen plus a queueing allowance, so the window settles where
 * the bottleneck queue holds a few milliseconds: enough to keep the link
 * busy, short enough that the RTO (which follows the RTT) never fires on
 * what is merely queued. A chunk overtaken by later results and timed
 * out (a real loss) halves the window, once per RTT. The round trip
 * includes a shard's wait for the slowest worker, so a worker ahead of
 * the others slows down, which is what the sum needs anyway.
 *
 * GW_COLL_WINDOW in the environment: "fixed" turns tuning off (the window
 * is then shards x window, as before), for benchmarks that compare
 * against hand-picked windows; "trace" prints the window after every
 * allreduce to stderr (as NCCL_DEBUG does its own state). */
#ifndef GW_COLL_WINDOW_H
#define GW_COLL_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

struct coll_window {
	double cwnd;             /* chunks in flight allowed */
	double floor, cap;
	uint64_t base_ns;        /* smallest round trip seen (0: none) */
	uint64_t srtt_ns;        /* smoothed round trip of the samples */
	uint64_t cut_ns;         /* last decrease */
	bool slow_start;
	bool fixed;              /* tuning off: cwnd == cap */
	bool trace;              /* print after every allreduce */
	uint64_t cuts, losses;   /* decreases for delay, for loss */
};

/* Queueing the target allows above the smallest round trip: the larger
 * of this and that round trip itself. 5 ms is 70 jumbo frames at 1 Gbit/s
 * and 7 at 100 Mbit/s, well above scheduling noise on shared cores and
 * well below the RTO's 200 ms cap; 2 ms drove the window to its floor at
 * 100 Mbit/s (the same speed there, but no slack for jitter). */
#define COLL_WINDOW_QDELAY_NS 5000000ull

void coll_window_init(struct coll_window *w, uint32_t shards, uint32_t slots_per_shard);
/* Whether one more chunk may go out with inflight already in flight. */
static inline bool coll_window_allows(const struct coll_window *w, uint32_t inflight)
{
	return (double)inflight < w->cwnd;
}
/* A result of a chunk sent once, after rtt_ns. The caller leaves out
 * chunks sent before the call's first result came back: their round trip
 * holds the workers' skew at the start of a call (a shard sums nothing
 * until the slowest worker starts), which is compute, not a queue; in
 * training, where every step is a small call, it drove the window to
 * its floor and serialised the chunks of a step. */
void coll_window_sample(struct coll_window *w, uint64_t rtt_ns, uint64_t now);
/* GW_COLL_WINDOW=trace: one line on stderr naming rank and round. */
void coll_window_trace(const struct coll_window *w, unsigned rank, uint32_t round);
/* A chunk sent at sent_ns was lost (later ones came back, it timed out). */
void coll_window_loss(struct coll_window *w, uint64_t sent_ns, uint64_t now);

#endif /* GW_COLL_WINDOW_H */
