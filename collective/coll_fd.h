/* The failure detector of one peer (docs/collective.md, "Faults"): an
 * accrual detector over the gaps between the peer's packets, as
 * Cassandra's and Akka's φ detectors are, with a floor and a ceiling.
 *
 * Any packet of the peer counts as a heartbeat. A gap is a sample when it
 * is at least a quarter of the heartbeat period: packets closer together
 * are one burst, and a mean of microseconds would make a 10 ms pause look
 * like a death. The last COLL_FD_SAMPLES samples give a mean μ and a
 * standard deviation σ (at least COLL_FD_SIGMA_DIV of the period); a
 * silence of t is suspicious when P(gap ≥ t) under N(μ, σ²) is below
 * 10^-φ. A peer whose packets come late under load (a descheduled
 * process, a host with more pollers than cores) widens its own σ, so its
 * silences must be longer to be suspected; one that keeps time is
 * suspected soon after the floor.
 *
 * A suspect is probed every heartbeat period, and is dead when nothing
 * came from it for one more floor after the suspicion (coll_fd_judge);
 * what a suspicion and a death mean is the owner's (comm_live.c,
 * agg_live.c: a loss-tolerant shard evicts a suspect at once). */
#ifndef GW_COLL_FD_H
#define GW_COLL_FD_H

#include <stdint.h>

#define COLL_FD_SAMPLES 64u
#define COLL_FD_SIGMA_DIV 4u     /* σ at least period / 4 */
#define COLL_FD_PHI 8.0          /* P(a gap this long) < 1e-8 */

struct coll_fd_cfg {
	uint64_t hb_ns;        /* the peer's heartbeat period */
	uint64_t floor_ns;     /* no suspicion before this silence */
	uint64_t ceiling_ns;   /* a suspicion at this silence, whatever came before */
	double phi;            /* the threshold, -log10 P */
};

struct coll_fd {
	uint64_t last_ns;               /* last packet (0: never heard) */
	uint32_t gap_us[COLL_FD_SAMPLES];
	uint32_t n, next;               /* samples held, where the next goes */
	double sum, sumsq;              /* of the samples held, in µs */
	uint64_t suspect_ns;            /* suspected since (0: not) */
	uint64_t probe_ns;              /* the next probe is due */
	uint32_t probes;                /* probes of the latest suspicion */
};

/* A histogram of durations in µs, four buckets to an octave (±19 %), for
 * the liveness counters: how late heartbeats left, how far apart they came. */
#define COLL_HIST_BUCKETS 136u
struct coll_hist {
	uint64_t n[COLL_HIST_BUCKETS];
	uint64_t count, max_us;
};
void coll_hist_add(struct coll_hist *h, uint64_t us);
/* The upper bound of the bucket holding quantile q (0..1) in µs, 0 when
 * empty; max_us for q = 1. */
uint64_t coll_hist_quantile(const struct coll_hist *h, double q);

/* *s: counters, with the quantiles of late (heartbeats' lateness) and
 * gaps (peers' gaps) filled in (gw_comm_liveness_get, gw_agg_liveness_get). */
struct gw_liveness_stats;
void coll_liveness_stats(struct gw_liveness_stats *s, const struct gw_liveness_stats *counters,
			 const struct coll_hist *late, const struct coll_hist *gaps);

/* The configuration of a liveness interval of ms: heartbeats every ms / 8,
 * floor ms, ceiling 5 ms. */
struct coll_fd_cfg coll_fd_config(uint64_t liveness_ns);

void coll_fd_reset(struct coll_fd *f);
/* A packet of the peer at now; the gap it ends, when it is a sample, goes
 * into gaps (may be NULL). 1 when it ends a suspicion (f->probes says
 * whether probes were out), else 0. */
int coll_fd_heard(struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now,
		  struct coll_hist *gaps);
/* Silence counts from now on without a sample, and a suspicion is
 * dropped: a worker that did not read between calls starts each call
 * this way. */
void coll_fd_rebase(struct coll_fd *f, uint64_t now);
/* φ of the silence at now (0 for a peer never heard). */
double coll_fd_phi(const struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now);
/* 1 when the silence at now is a suspicion: at least the floor and φ
 * above the threshold, or at least the ceiling. */
int coll_fd_suspect(const struct coll_fd *f, const struct coll_fd_cfg *c, uint64_t now);
/* What the owner does about the peer at now (nothing left to read):
 * SUSPECT, newly suspected, and PROBE, a probe due again, both mean
 * "send a probe" (counted in f->probes); DEAD, no packet for the floor
 * since the suspicion. A peer never heard is FINE: start-up is the
 * owner's. */
enum coll_fd_verdict { COLL_FD_FINE, COLL_FD_SUSPECT, COLL_FD_PROBE, COLL_FD_DEAD };
enum coll_fd_verdict coll_fd_judge(struct coll_fd *f, const struct coll_fd_cfg *c,
				   uint64_t now);
/* The silence at now (0 for a peer never heard). */
static inline uint64_t coll_fd_silence(const struct coll_fd *f, uint64_t now)
{
	return f->last_ns && now > f->last_ns ? now - f->last_ns : 0;
}

#endif
