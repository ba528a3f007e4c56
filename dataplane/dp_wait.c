/* gw_dp_wait_any(): one idle wait over several dataplanes.
 *
 * A shard with a memif port per worker, or a worker with a port per
 * shard, that slept on one port at a time would leave a packet on another
 * waiting out the sleep. So: spin briefly over all of them while a link
 * is busy (a peer mid-transfer answers in microseconds, less than a sleep
 * costs; not where a dataplane's policy is GW_DP_WAIT_SLEEP, since with
 * more pollers than cores the spin takes the peer's core), then arm every port's wake-up and poll() them together; where a
 * device has no wake-up descriptor, sleep in growing steps and look at
 * every port in between, as a single dataplane's wait does. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "dp_internal.h"

#define SPIN_NS 20000ull            /* spin this long ... */
#define ACTIVE_NS 1000000ull        /* ... after a packet this recent */
#define STEP_MIN_US 8u              /* sleeping steps without descriptors */
#define STEP_ACTIVE_MAX_US 32u
#define STEP_MAX_US 256u
#define TURN_MAX_US 128u            /* per-port waits, taken in turn */

static bool any_ready(gw_dp *const *dps, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->ops->ready(dps[i]))
			return true;
	return false;
}

static void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000};
	nanosleep(&ts, NULL);
}

/* Backends without ready/arm, and impaired dataplanes (whose held packets
 * only their own wait knows about): each in turn, briefly. */
static int in_turn(gw_dp *const *dps, unsigned n, unsigned timeout_us)
{
	unsigned us = GW_MAX(GW_MIN(timeout_us, TURN_MAX_US) / n, 1u);
	for (unsigned i = 0; i < n; i++) {
		int rc = gw_dp_wait(dps[i], us);
		if (rc < 0)
			return rc;
	}
	return GW_OK;
}

/* Sleeps in growing steps until a packet is ready (true) or end
 * (gw_now_ns; false). */
static bool steps(gw_dp *const *dps, unsigned n, uint64_t end, bool active)
{
	unsigned step = 0, cap = active ? STEP_ACTIVE_MAX_US : STEP_MAX_US;
	for (uint64_t now = gw_now_ns(); now < end; now = gw_now_ns()) {
		step = step ? GW_MIN(2 * step, cap) : STEP_MIN_US;
		sleep_us((unsigned)GW_MAX(1u, GW_MIN((end - now) / 1000u, (uint64_t)step)));
		if (any_ready(dps, n))
			return true;
	}
	return false;
}

static void timed_out(gw_dp *const *dps, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		dps[i]->wait_any_timeouts++;
}

int gw_dp_wait_any(gw_dp *const *dps, unsigned n, unsigned timeout_us)
{
	if (!dps || !n || n > GW_DP_WAIT_ANY_MAX)
		return GW_ERRF(GW_EINVAL, !dps ? "gw_dp_wait_any: dps is NULL"
			       : "gw_dp_wait_any: n is %u, not 1 to %u", n, GW_DP_WAIT_ANY_MAX);
	for (unsigned i = 0; i < n; i++)
		if (!dps[i])
			return GW_ERRF(GW_EINVAL, "gw_dp_wait_any: dps[%u] is NULL", i);
	if (n == 1)
		return gw_dp_wait(dps[0], timeout_us);
	if (!timeout_us)
		return GW_OK;
	uint64_t last = 0;
	bool may_spin = true;
	for (unsigned i = 0; i < n; i++) {
		const struct gw_dp_ops *o = dps[i]->ops;
		if (dps[i]->impair || !o->ready || !o->arm || !o->disarm)
			return in_turn(dps, n, timeout_us);
		last = GW_MAX(last, dps[i]->last_rx_ns);
		may_spin &= !dps[i]->wait_sleep;
	}
	uint64_t now = gw_now_ns(), end = now + 1000ull * timeout_us;
	bool active = last && now - last <= ACTIVE_NS;
	if (active && may_spin) {
		uint64_t spin_end = GW_MIN(end, now + SPIN_NS);
		do {
			if (any_ready(dps, n))
				return GW_OK;
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} while (gw_now_ns() < spin_end);
	}
	struct pollfd pfd[GW_DP_WAIT_ANY_MAX];
	unsigned armed = 0;
	for (; armed < n; armed++) {
		int fd = dps[armed]->ops->arm(dps[armed]);
		if (fd < 0)
			break;
		pfd[armed] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	int r = 0;
	bool polled = false;
	/* A packet that came before its port was armed raised nothing. */
	if (armed == n && !any_ready(dps, n)) {
		polled = true;
		for (unsigned i = 0; i < n; i++)
			dps[i]->stats.idle_waits++;
		/* One reading of the clock: a second one past end would
		 * wrap end - now into a sleep of centuries. */
		uint64_t t = gw_now_ns(), left = t < end ? end - t : 0;
		struct timespec ts = {.tv_sec = (time_t)(left / 1000000000u),
				      .tv_nsec = (long)(left % 1000000000u)};
		r = ppoll(pfd, n, &ts, NULL);
	}
	for (unsigned i = 0; i < armed; i++)
		dps[i]->ops->disarm(dps[i]);
	if (r < 0 && errno != EINTR)
		return GW_ERRF(GW_EIO, "gw_dp_wait_any: poll: %s", strerror(errno));
	if (polled && r == 0)
		timed_out(dps, n);
	if (armed < n && !any_ready(dps, n)) {
		dps[0]->stats.idle_waits++;
		if (!steps(dps, n, end, active))
			timed_out(dps, n);
	}
	return GW_OK;
}
